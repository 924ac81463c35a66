// SPDX-License-Identifier: GPL-2.0
/*
 * The DWARF writer: writer.c's interface (kimport.h: attach, publish,
 * publish_tz, publish_aux, timens_setup, fields) for an import whose own
 * kernel/time/vsyscall.c the shim cannot build, from the layout its kbuild
 * image's DWARF states (include/generated/kimport_dwarf.h, written by
 * scripts/vdsobench_cli/kimport/dwarf_layout.py, checked there: every
 * offset and size against its struct and the page) instead of the tree's
 * types. Nothing of the tree is compiled here.
 *
 * It is not the kernel's code: it writes what update_vsyscall(),
 * update_vsyscall_tz(), vdso_time_update_aux() (kernel/time/vsyscall.c)
 * and timens_setup_vdso_data() (kernel/time/namespace.c) of v6.1..v7.3
 * write on x86-64, value for value and in their order, the sequence count
 * odd while writing; kernel_import's dwarf agree test holds it to the
 * trees' own writers byte for byte (Debian's 6.1, 6.12 and 7.3). A later
 * tree whose update path writes something else is not followed: only its
 * layout is read. The constants the DWARF has no room for are the kernel's
 * ABI: the clock ids (uapi/linux/time.h), TIMEKEEPER_AUX_FIRST 1.
 */
#include <stdint.h>
#include <string.h>

/* the variant's prefix, as the shim's kimport/prefix.h makes it (no shim here) */
#ifndef KIMPORT_SYM
#define KDW_PASTE_1(a, b) a##__##b
#define KDW_PASTE(a, b) KDW_PASTE_1(a, b)
#define KIMPORT_SYM(name) KDW_PASTE(VDSO_PREFIX, name)
#endif

#include "kernel_import/glue/kimport.h"

#define NSEC_PER_SEC 1000000000ULL
/* include/uapi/linux/time.h */
enum { KDW_REALTIME = 0, KDW_MONOTONIC = 1, KDW_MONOTONIC_RAW = 4,
       KDW_REALTIME_COARSE = 5, KDW_MONOTONIC_COARSE = 6, KDW_BOOTTIME = 7,
       KDW_BOOTTIME_ALARM = 9, KDW_TAI = 11 };
#define KDW_HRES 0 /* CS_HRES_COARSE */
#define KDW_RAW 1  /* CS_RAW */

_Static_assert(KDW_DATA_SIZE > 0 && KDW_DATA_SIZE <= KIMPORT_PAGE_SIZE, "the data fits a page");
_Static_assert(KDW_CLOCKS >= 2 && KDW_BASES > KDW_TAI, "CS_BASES clocks, VDSO_BASES bases");
_Static_assert(KDW_CLOCK_AT + KDW_CLOCKS * KDW_CLOCK_SIZE <= KDW_DATA_SIZE &&
		       KDW_AUX_AT + KDW_AUX_CLOCKS * KDW_CLOCK_SIZE <= KDW_DATA_SIZE &&
		       KDW_BASETIME + KDW_BASES * 16 <= KDW_CLOCK_SIZE,
	       "the clocks fit the data");
#ifdef KIMPORT_DATA_SIZE
/* the probe's measure of the tree's own struct (kimport_desc.h), where it ran */
_Static_assert(KDW_DATA_SIZE == KIMPORT_DATA_SIZE && KDW_NR_FIELDS == KIMPORT_NR_FIELDS,
	       "the DWARF's data is the probe's");
#endif

/* impls/common/variant.h's struct vdso_field, as kernel_import/glue/tree.h has it */
struct vdso_field {
	const char *name;
	uint32_t offset;
	uint32_t size;
};

/* the kernel's mapping of the data ([0]) and of the namespace page ([1]) */
static unsigned char *kdw_k;

/* x86's smp_wmb(): the kernel's barrier() */
#define kdw_wmb() __asm__ __volatile__("" ::: "memory")

static void put32(unsigned char *at, long off, uint32_t v)
{
	memcpy(at + off, &v, sizeof(v));
}

static void put64(unsigned char *at, long off, uint64_t v)
{
	memcpy(at + off, &v, sizeof(v));
}

static unsigned char *clock_at(unsigned char *data, int cs)
{
	return data + KDW_CLOCK_AT + (long)cs * KDW_CLOCK_SIZE;
}

/* vdso_write_seq_begin()/_end(): WRITE_ONCE(vc->seq, vc->seq + 1) */
static void seq_bump(unsigned char *vc)
{
	volatile uint32_t *seq = (volatile uint32_t *)(vc + KDW_SEQ);

	*seq = *seq + 1;
}

static void put_ts(unsigned char *vc, int clk, uint64_t sec, uint64_t nsec)
{
	put64(vc, KDW_BASETIME + 16L * clk + KDW_TS_SEC, sec);
	put64(vc, KDW_BASETIME + 16L * clk + KDW_TS_NSEC, nsec);
}

/* fill_clock_configuration() (v6.15; update_vdso_data()'s lines before it) */
static void put_config(unsigned char *vc, const struct kimport_tkr *tkr, uint64_t max_cycles)
{
	put64(vc, KDW_CYCLE_LAST, tkr->cycle_last);
#if KDW_MAX_CYCLES >= 0
	put64(vc, KDW_MAX_CYCLES, max_cycles);
#else
	(void)max_cycles;
#endif
	put64(vc, KDW_MASK, tkr->mask);
	put32(vc, KDW_MULT, tkr->mult);
	put32(vc, KDW_SHIFT, tkr->shift);
}

/* the clocksource's vdso_clock_mode, as writer.c's kimport_fill() sets it */
static int32_t clock_mode(const struct kimport_tk *s)
{
	int32_t mode = !s->vdso_capable ? KDW_MODE_NONE :
		       s->paravirt == 2 ? KDW_MODE_PVCLOCK :
		       s->paravirt == 3 ? KDW_MODE_HVCLOCK : KDW_MODE_TSC;

	/* an enum without the paravirtual modes: the kernel has no such clock */
	return mode < 0 ? KDW_MODE_NONE : mode;
}

void KIMPORT_SYM(attach)(void *k_pages)
{
	kdw_k = k_pages;
}

/* update_vdso_data() / update_vdso_time_data() */
static void update_hres(unsigned char *data, const struct kimport_tk *s)
{
	unsigned char *hres = clock_at(data, KDW_HRES), *raw = clock_at(data, KDW_RAW);
	unsigned int shift = s->tkr_mono.shift;
	uint64_t sec, nsec;

	put_config(hres, &s->tkr_mono, s->max_cycles);
	put_config(raw, &s->tkr_raw, s->max_cycles);

	sec = s->xtime_sec + (uint64_t)s->wall_to_monotonic_sec;
	nsec = s->tkr_mono.xtime_nsec + ((uint64_t)s->wall_to_monotonic_nsec << shift);
	while (nsec >= (NSEC_PER_SEC << shift)) {
		nsec -= NSEC_PER_SEC << shift;
		sec++;
	}
	put_ts(hres, KDW_MONOTONIC, sec, nsec);

	sec += (uint64_t)s->monotonic_to_boot_sec;
	nsec += (uint64_t)s->monotonic_to_boot_nsec << shift;
	while (nsec >= (NSEC_PER_SEC << shift)) {
		nsec -= NSEC_PER_SEC << shift;
		sec++;
	}
	put_ts(hres, KDW_BOOTTIME, sec, nsec);

	put_ts(raw, KDW_MONOTONIC_RAW, s->raw_sec, s->tkr_raw.xtime_nsec);
	put_ts(hres, KDW_TAI, s->xtime_sec + (int64_t)s->tai_offset, s->tkr_mono.xtime_nsec);
}

void KIMPORT_SYM(publish)(const struct kimport_tk *s)
{
	unsigned char *data = kdw_k, *hres;
	int32_t mode = clock_mode(s);
	/* v6.15's tk->coarse_nsec, which writer.c fills with this value */
	uint64_t coarse = s->tkr_mono.xtime_nsec >> s->tkr_mono.shift, nsec;

	if (!data)
		return; /* not attached yet: nothing is published */
	hres = clock_at(data, KDW_HRES);
	seq_bump(hres);
	seq_bump(clock_at(data, KDW_RAW));
	kdw_wmb();
	put32(hres, KDW_CLOCK_MODE, (uint32_t)mode);
	put32(clock_at(data, KDW_RAW), KDW_CLOCK_MODE, (uint32_t)mode);
	put_ts(hres, KDW_REALTIME, s->xtime_sec, s->tkr_mono.xtime_nsec);
	put_ts(hres, KDW_REALTIME_COARSE, s->xtime_sec, coarse);
	nsec = coarse + (uint64_t)s->wall_to_monotonic_nsec;
	put_ts(hres, KDW_MONOTONIC_COARSE,
	       s->xtime_sec + (uint64_t)s->wall_to_monotonic_sec + nsec / NSEC_PER_SEC,
	       nsec % NSEC_PER_SEC);
	put32(data, KDW_HRTIMER_RES, s->hrtimer_res);
	if (mode != KDW_MODE_NONE)
		update_hres(data, s);
	kdw_wmb();
	seq_bump(hres);
	seq_bump(clock_at(data, KDW_RAW));
}

void KIMPORT_SYM(publish_tz)(int minuteswest, int dsttime)
{
	if (!kdw_k)
		return;
	put32(kdw_k, KDW_TZ_MINUTESWEST, (uint32_t)minuteswest);
	put32(kdw_k, KDW_TZ_DSTTIME, (uint32_t)dsttime);
}

#ifdef CONFIG_POSIX_AUX_CLOCKS
/* vdso_time_update_aux() (v6.17) */
void KIMPORT_SYM(publish_aux)(const struct kimport_tk *s)
{
	int n = s->id - 1; /* TIMEKEEPER_AUX_FIRST */
	unsigned char *vc;
	int32_t mode = s->clock_valid ? clock_mode(s) : KDW_MODE_NONE;
	uint64_t sec, nsec;

	if (!kdw_k || n < 0 || n >= KDW_AUX_CLOCKS)
		return;
	vc = kdw_k + KDW_AUX_AT + (long)n * KDW_CLOCK_SIZE;
	seq_bump(vc);
	kdw_wmb();
	put32(vc, KDW_CLOCK_MODE, (uint32_t)mode);
	if (mode != KDW_MODE_NONE) {
		put_config(vc, &s->tkr_mono, s->max_cycles);
		sec = s->xtime_sec + (uint64_t)s->monotonic_to_aux_sec;
		nsec = (s->tkr_mono.xtime_nsec >> s->tkr_mono.shift) +
		       (uint64_t)s->monotonic_to_aux_nsec;
		sec += nsec / NSEC_PER_SEC;
		nsec %= NSEC_PER_SEC;
		put_ts(vc, 0 /* VDSO_BASE_AUX */, sec, nsec << s->tkr_mono.shift);
	}
	kdw_wmb();
	seq_bump(vc);
}
#endif

/* timens_setup_vdso_data() on one clock of the namespace page */
static void timens_one(unsigned char *vc, const struct kimport_timens *o)
{
	static const int mono[] = { KDW_MONOTONIC, KDW_MONOTONIC_RAW, KDW_MONOTONIC_COARSE };
	static const int boot[] = { KDW_BOOTTIME, KDW_BOOTTIME_ALARM };

	put32(vc, KDW_SEQ, 1);
	put32(vc, KDW_CLOCK_MODE, (uint32_t)KDW_MODE_TIMENS);
	for (unsigned int i = 0; i < sizeof(mono) / sizeof(mono[0]); i++) {
		put64(vc, KDW_BASETIME + 16L * mono[i] + KDW_NS_SEC, (uint64_t)o->monotonic_sec);
		put64(vc, KDW_BASETIME + 16L * mono[i] + KDW_NS_NSEC, (uint64_t)o->monotonic_nsec);
	}
	for (unsigned int i = 0; i < sizeof(boot) / sizeof(boot[0]); i++) {
		put64(vc, KDW_BASETIME + 16L * boot[i] + KDW_NS_SEC, (uint64_t)o->boottime_sec);
		put64(vc, KDW_BASETIME + 16L * boot[i] + KDW_NS_NSEC, (uint64_t)o->boottime_nsec);
	}
}

void KIMPORT_SYM(timens_setup)(void *ns_page, const struct kimport_timens *o)
{
	unsigned char *data = ns_page;

	/* the data, not the page: a fresh page is zeros, as namespace.c allocates it */
	memset(data, 0, KDW_DATA_SIZE);
	for (int i = 0; i < KDW_CLOCKS; i++)
		timens_one(clock_at(data, i), o);
#ifdef CONFIG_POSIX_AUX_CLOCKS
	for (int i = 0; i < KDW_AUX_CLOCKS; i++)
		timens_one(data + KDW_AUX_AT + (long)i * KDW_CLOCK_SIZE, o);
#endif
}

const struct vdso_field KIMPORT_SYM(fields)[] = { KDW_FIELDS };
_Static_assert(sizeof(KIMPORT_SYM(fields)) / sizeof(struct vdso_field) == KDW_NR_FIELDS,
	       "kimport_dwarf.h's field count");

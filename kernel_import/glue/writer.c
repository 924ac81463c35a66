// SPDX-License-Identifier: GPL-2.0
/*
 * The update side of an imported tree: its kernel/time/vsyscall.c,
 * unmodified (update_vsyscall(), update_vsyscall_tz() and the rest),
 * compiled against the shim with the tree's include/vdso, asm/vdso and
 * include/linux/timekeeper_internal.h, fed by the simulated timekeeper
 * through a struct timekeeper of the tree's own definition.
 *
 * Also here, because they need the tree's types: the variant's vvar area
 * (reader.c reads it), the kernel's view of it, the time namespace page
 * as kernel/time/namespace.c's timens_setup_vdso_data() writes it, and
 * the offsetof() table of the tree's data (fields.h).
 */
#include "kernel_import/glue/kimport.h"

#include <linux/stringify.h>

#if defined(CONFIG_ARM64) && !defined(KIMPORT_TIME_DATA)
/*
 * arm64 up to v6.14: arch/arm64/kernel/vdso.c's vdso_data, the kernel's
 * mapping of the data page, which its asm/vdso/vsyscall.h declares extern
 * and __arch_get_k_vdso_data() returns. Internal here, declared before
 * that header (its extern then names this one): every variant of every
 * import has its own in one program.
 */
struct vdso_data;
static struct vdso_data *vdso_data;
#endif

#include "kernel/time/vsyscall.c"

#include "kernel_import/glue/tree.h"
#include "kernel_import/glue/fields.h"

#include <generated/kimport_desc.h>

/* kernel/time/hrtimer.c, time.c, timekeeping.c: the globals it reads */
unsigned int hrtimer_resolution;
struct timezone sys_tz;
#ifdef KIMPORT_TK_LOCK_FUNCS
/* v6.15: timekeeper_lock_irqsave() replaced the lock itself */
static raw_spinlock_t kimport_tk_lock;

unsigned long timekeeper_lock_irqsave(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&kimport_tk_lock, flags);
	return flags;
}

void timekeeper_unlock_irqrestore(unsigned long flags)
{
	raw_spin_unlock_irqrestore(&kimport_tk_lock, flags);
}
#else
raw_spinlock_t timekeeper_lock;
#endif

/* the vvar area, which the reader maps from one memfd (variant.c) */
struct kimport_vvar KIMPORT_SYM(vvar_area) __aligned(KIMPORT_PAGE_SIZE);
_Static_assert(sizeof(struct kimport_vvar) == KIMPORT_VVAR_PAGES * KIMPORT_PAGE_SIZE,
	       "the vvar area is two whole pages");

#ifdef KIMPORT_TIME_DATA
/* v6.15+: lib/vdso/datastore.c's vdso_k_time_data, the kernel's pointer */
struct vdso_time_data *vdso_k_time_data;
/* and the readers' vdso_u_time_data: the first page of the vvar area */
extern struct vdso_time_data vdso_u_time_data
	__attribute__((alias(__stringify(KIMPORT_SYM(vvar_area)))));
typedef struct vdso_time_data kimport_data_t;
#elif defined(CONFIG_ARM64)
/*
 * arm64 up to v6.14: the readers' _vdso_data and _timens_data (shim
 * kimport/prefix.h), the vvar area's two pages, as vdso.lds.S places them
 */
__asm__(".globl " __stringify(_vdso_data) "\n"
	".hidden " __stringify(_vdso_data) "\n"
	".set " __stringify(_vdso_data) ", " __stringify(KIMPORT_SYM(vvar_area)) "\n"
	".globl " __stringify(_timens_data) "\n"
	".hidden " __stringify(_timens_data) "\n"
	".set " __stringify(_timens_data) ", " __stringify(KIMPORT_SYM(vvar_area)) " + "
	__stringify(KIMPORT_PAGE_SIZE) "\n");
typedef struct vdso_data kimport_data_t[CS_BASES];
#else
/* up to v6.14: x86's _vdso_data[CS_BASES], the kernel's mapping of it */
struct vdso_data (*KIMPORT_SYM(k_vdso_data))[CS_BASES];
typedef struct vdso_data kimport_data_t[CS_BASES];
#endif

_Static_assert(sizeof(kimport_data_t) == KIMPORT_DATA_SIZE,
	       "kimport/desc.h has this tree's data size");
_Static_assert(sizeof(kimport_data_t) <= KIMPORT_PAGE_SIZE,
	       "the data must fit its vvar page");

void KIMPORT_SYM(attach)(void *k_pages)
{
#ifdef KIMPORT_TIME_DATA
	vdso_k_time_data = k_pages;
#elif defined(CONFIG_ARM64)
	vdso_data = k_pages;
#else
	KIMPORT_SYM(k_vdso_data) = k_pages;
#endif
}

/*
 * the vDSO clock mode of the simulated clocksource: x86's TSC, arm64's
 * arch timer (drivers/clocksource/arm_arch_timer.c, without an erratum)
 */
#ifdef CONFIG_ARM64
#define KIMPORT_CLOCKMODE VDSO_CLOCKMODE_ARCHTIMER
#else
#define KIMPORT_CLOCKMODE VDSO_CLOCKMODE_TSC
#endif

/* the simulated clocksources behind tk->tkr_mono.clock and tkr_raw.clock */
static struct clocksource kimport_cs;
static struct timekeeper kimport_tk;

static void kimport_tkr(struct tk_read_base *tkr, const struct kimport_tkr *s,
			ktime_t base)
{
	tkr->clock = &kimport_cs;
	tkr->cycle_last = s->cycle_last;
	tkr->mask = s->mask;
	tkr->mult = s->mult;
	tkr->shift = s->shift;
	tkr->xtime_nsec = s->xtime_nsec;
	tkr->base = base;
}

/*
 * timekeeping.c keeps these from the same state (tk_update_ktime_data(),
 * tk_set_wall_to_mono(), tk_update_leap_state()); the vDSO update path
 * reads the first group, the rest are filled so that a tree reading them
 * reads what the kernel would have there.
 */
static void kimport_fill(struct timekeeper *tk, const struct kimport_tk *s)
{
	s64 mono_sec = (s64)s->xtime_sec + s->wall_to_monotonic_sec;
	s64 wtm_ns = s->wall_to_monotonic_sec * NSEC_PER_SEC + s->wall_to_monotonic_nsec;
	ktime_t mono_base = mono_sec * NSEC_PER_SEC + s->wall_to_monotonic_nsec;
	ktime_t raw_base = (s64)s->raw_sec * NSEC_PER_SEC;

	kimport_cs.mask = s->tkr_mono.mask;
	kimport_cs.max_cycles = s->max_cycles;
	kimport_cs.mult = s->tkr_mono.mult;
	kimport_cs.shift = s->tkr_mono.shift;
	kimport_cs.name = "vdsobench";
	kimport_cs.vdso_clock_mode = !s->vdso_capable ? VDSO_CLOCKMODE_NONE :
#ifdef CONFIG_X86
		/* the tree's VDSO_ARCH_CLOCKMODES: TSC, PVCLOCK, HVCLOCK */
		s->paravirt == 2 ? VDSO_CLOCKMODE_PVCLOCK :
		s->paravirt == 3 ? VDSO_CLOCKMODE_HVCLOCK :
#endif
				     KIMPORT_CLOCKMODE;
	hrtimer_resolution = s->hrtimer_res;

	kimport_tkr(&tk->tkr_mono, &s->tkr_mono, mono_base);
	kimport_tkr(&tk->tkr_raw, &s->tkr_raw, raw_base);
	tk->xtime_sec = s->xtime_sec;
	tk->ktime_sec = (unsigned long)mono_sec;
	tk->wall_to_monotonic.tv_sec = s->wall_to_monotonic_sec;
	tk->wall_to_monotonic.tv_nsec = s->wall_to_monotonic_nsec;
	tk->offs_real = -wtm_ns;
	tk->offs_boot = s->offs_boot;
	tk->offs_tai = -wtm_ns + (s64)s->tai_offset * NSEC_PER_SEC;
	tk->tai_offset = s->tai_offset;
	tk->raw_sec = s->raw_sec;
	tk->monotonic_to_boot.tv_sec = s->monotonic_to_boot_sec;
	tk->monotonic_to_boot.tv_nsec = s->monotonic_to_boot_nsec;
#ifdef KIMPORT_TK_COARSE_NSEC
	/* v6.15: the coarse clocks' nanoseconds, as of this tick */
	tk->coarse_nsec = s->tkr_mono.xtime_nsec >> s->tkr_mono.shift;
#endif
	tk->tkr_mono.base_real = mono_base + tk->offs_real;
#ifdef KIMPORT_AUX_CLOCK_DATA
	/* v6.17: which timekeeper this is (the core one here) */
	tk->id = s->id;
	tk->clock_valid = s->clock_valid;
	tk->monotonic_to_aux.tv_sec = s->monotonic_to_aux_sec;
	tk->monotonic_to_aux.tv_nsec = s->monotonic_to_aux_nsec;
#endif
}

void KIMPORT_SYM(publish)(const struct kimport_tk *s)
{
	kimport_fill(&kimport_tk, s);
	update_vsyscall(&kimport_tk);
}

#ifdef CONFIG_POSIX_AUX_CLOCKS
/* v6.17: one auxiliary timekeeper, its own struct timekeeper as upstream */
static struct timekeeper kimport_aux_tk;

void KIMPORT_SYM(publish_aux)(const struct kimport_tk *s)
{
	kimport_fill(&kimport_aux_tk, s);
	vdso_time_update_aux(&kimport_aux_tk);
}
#endif

void KIMPORT_SYM(publish_tz)(int minuteswest, int dsttime)
{
	sys_tz.tz_minuteswest = minuteswest;
	sys_tz.tz_dsttime = dsttime;
	update_vsyscall_tz();
}

/*
 * kernel/time/namespace.c timens_setup_vdso_data() (v5.6..v6.14; from
 * v6.15 the same on each struct vdso_clock of the page), for every
 * element, as timens_set_vvar_page() calls it: the namespace page has
 * seq 1, clock mode VDSO_CLOCKMODE_TIMENS and the offsets.
 */
#ifdef KIMPORT_TIME_DATA
typedef struct vdso_clock kimport_clock_t;
#define KIMPORT_CLOCKS(page) (((struct vdso_time_data *)(page))->clock_data)
#else
typedef struct vdso_data kimport_clock_t;
#define KIMPORT_CLOCKS(page) ((struct vdso_data *)(page))
#endif

static void kimport_timens_setup_one(kimport_clock_t *vc,
				     const struct kimport_timens *o)
{
	struct timens_offset *offset = vc->offset;
	struct timens_offset monotonic = { o->monotonic_sec, (u64)o->monotonic_nsec };
	struct timens_offset boottime = { o->boottime_sec, (u64)o->boottime_nsec };

	vc->seq = 1;
	vc->clock_mode = VDSO_CLOCKMODE_TIMENS;
	offset[CLOCK_MONOTONIC] = monotonic;
	offset[CLOCK_MONOTONIC_RAW] = monotonic;
	offset[CLOCK_MONOTONIC_COARSE] = monotonic;
	offset[CLOCK_BOOTTIME] = boottime;
	offset[CLOCK_BOOTTIME_ALARM] = boottime;
}


void KIMPORT_SYM(timens_setup)(void *ns_page, const struct kimport_timens *o)
{
	kimport_clock_t *vc = KIMPORT_CLOCKS(ns_page);

	/*
	 * the data, not the page: an image's data sits at offset 128 of it
	 * (the rest of a fresh page is zeros, as namespace.c allocates it)
	 */
	__builtin_memset(ns_page, 0, sizeof(kimport_data_t));
	for (int i = 0; i < CS_BASES; i++)
		kimport_timens_setup_one(&vc[i], o);
#if defined(KIMPORT_AUX_CLOCK_DATA) && defined(CONFIG_POSIX_AUX_CLOCKS)
	/* v6.17: the auxiliary clocks' too, which readers find in the real page */
	for (int i = 0; i < MAX_AUX_CLOCKS; i++)
		kimport_timens_setup_one(&((struct vdso_time_data *)ns_page)->aux_clock_data[i], o);
#endif
}

const struct vdso_field KIMPORT_SYM(fields)[] = { KIMPORT_FIELDS };
_Static_assert(sizeof(KIMPORT_SYM(fields)) / sizeof(struct vdso_field) ==
		       KIMPORT_NR_FIELDS,
	       "kimport/desc.h has this tree's field count");

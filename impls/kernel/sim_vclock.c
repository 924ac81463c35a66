// SPDX-License-Identifier: GPL-2.0
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create() */
#endif
#include "impls/kernel/sim_vclock.h"
#include "impls/kernel/wide.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert(sizeof(struct sim_pvclock) == 32 &&
		       offsetof(struct sim_pvclock, tsc_timestamp) == 8 &&
		       offsetof(struct sim_pvclock, system_time) == 16 &&
		       offsetof(struct sim_pvclock, tsc_to_system_mul) == 24 &&
		       offsetof(struct sim_pvclock, tsc_shift) == 28 &&
		       offsetof(struct sim_pvclock, flags) == 29,
	       "struct pvclock_vcpu_time_info's layout");

union sim_pvclock_area sim_pvclock_page __attribute__((aligned(4096)));

static enum sim_vclock mode;

/* anchor 0; anchor 1 is ANCHOR_TSC + step() on the same line */
#define ANCHOR_TSC 1000003ULL
/*
 * system_time at anchor 0: 5 s before the clocksource's zero, so that
 * every value the checks use (from 0) is reached after both anchors
 * (anchor 1 is scale(2^32), under 4.3 s, later)
 */
#define ANCHOR_SYSTEM_TIME (0 - 5000000000ULL)

static int8_t tsc_shift;
static u32 tsc_mul;

/*
 * arch/x86/kvm/x86.c kvm_get_time_scale(): scaled_hz = base_hz * mul / 2^32
 * after shifting base by shift
 */
static void kvm_get_time_scale(u64 scaled_hz, u64 base_hz, int8_t *pshift,
			       u32 *pmultiplier)
{
	u64 scaled64 = scaled_hz, tps64 = base_hz;
	s32 shift = 0;
	u32 tps32;

	while (tps64 > scaled64 * 2 || tps64 & 0xffffffff00000000ULL) {
		tps64 >>= 1;
		shift--;
	}
	tps32 = (u32)tps64;
	while (tps32 <= scaled64 || scaled64 & 0xffffffff00000000ULL) {
		if (scaled64 & 0xffffffff00000000ULL || tps32 & 0x80000000)
			scaled64 >>= 1;
		else
			tps32 <<= 1;
		shift++;
	}
	*pshift = (int8_t)shift;
	*pmultiplier = (u32)((scaled64 << 32) / tps32); /* div_frac() */
}

/* pvclock_scale_delta(), in 128 bits (32-bit x86: the kernel's 32-bit helper) */
static u64 scale(u64 delta)
{
	if (tsc_shift < 0)
		delta >>= -tsc_shift;
	else
		delta <<= tsc_shift;
	return mul_u64_u32_shr(delta, tsc_mul, 32);
}

/* TSC cycles between the anchors: their scaled values differ exactly */
static u64 step(void)
{
	return 1ULL << (32 + (tsc_shift < 0 ? -tsc_shift : 0));
}

static const char *const names[] = { "tsc", "pvclock", "hvclock" };

int sim_vclock_parse(const char *name)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(names); m++)
		if (!strcmp(name, names[m]))
			return (int)m;
	return -1;
}

const char *sim_vclock_name(enum sim_vclock m)
{
	return (unsigned int)m < ARRAY_SIZE(names) ? names[m] : "tsc";
}

static void host_write(u64 tsc_timestamp, u64 system_time, u8 flags)
{
	struct sim_pvclock *p = &sim_pvclock_page.pvti;
	u32 version = READ_ONCE(p->version);

	/* kvm_setup_guest_pvclock(): odd while the fields change */
	WRITE_ONCE(p->version, version | 1);
	smp_wmb();
	WRITE_ONCE(p->tsc_timestamp, tsc_timestamp);
	WRITE_ONCE(p->system_time, system_time);
	WRITE_ONCE(p->tsc_to_system_mul, tsc_mul);
	WRITE_ONCE(p->tsc_shift, tsc_shift);
	WRITE_ONCE(p->flags, flags);
	smp_wmb();
	WRITE_ONCE(p->version, (version | 1) + 1);
}

void sim_vclock_select(enum sim_vclock m)
{
	mode = m;
	kvm_get_time_scale(1000000000ULL, SIM_VCLOCK_TSC_HZ, &tsc_shift,
			   &tsc_mul);
	memset(&sim_pvclock_page, 0, sizeof(sim_pvclock_page));
	host_write(ANCHOR_TSC, ANCHOR_SYSTEM_TIME, SIM_PVCLOCK_TSC_STABLE_BIT);
	sim_hvclock_reset();
}

enum sim_vclock sim_vclock_mode(void)
{
	return mode;
}

s32 sim_vclock_clock_mode(void)
{
	return mode == SIM_VCLOCK_PVCLOCK ? SIM_CLOCKMODE_PVCLOCK :
	       mode == SIM_VCLOCK_HVCLOCK ? SIM_CLOCKMODE_HVCLOCK :
					    SIM_CLOCKMODE_TSC;
}

u64 sim_vclock_cycles(u64 tsc)
{
	if (mode == SIM_VCLOCK_TSC)
		return tsc;
	if (mode == SIM_VCLOCK_HVCLOCK)
		return sim_hvclock_cycles(tsc);
	/* kvm_clock_read() -> __pvclock_read_cycles(), from anchor 0 */
	return ANCHOR_SYSTEM_TIME + scale(tsc - ANCHOR_TSC);
}

bool sim_vclock_tsc_for(u64 cycles, u64 *tsc)
{
	u64 d;

	if (mode == SIM_VCLOCK_TSC) {
		*tsc = cycles;
		return true;
	}
	if (mode == SIM_VCLOCK_HVCLOCK)
		return sim_hvclock_tsc_for(cycles, tsc);
	if (cycles >> 63)
		return false;
	/*
	 * the smallest delta whose scaled value reaches cycles: ceil(want /
	 * mul), then shifted back (rounded up again: the two ceilings are
	 * one, over mul << shift)
	 */
	if (tsc_shift < 0) {
		if (!shl_div_ceil(cycles - ANCHOR_SYSTEM_TIME, 32, tsc_mul, &d) ||
		    d > (~0ULL - ANCHOR_TSC) >> -tsc_shift)
			return false;
		d <<= -tsc_shift;
	} else if (!shl_div_ceil(cycles - ANCHOR_SYSTEM_TIME, 32,
				 (u64)tsc_mul << tsc_shift, &d)) {
		return false;
	}
	if (d < step() || d > ~0ULL - ANCHOR_TSC)
		return false;
	*tsc = ANCHOR_TSC + (u64)d;
	return sim_vclock_cycles(*tsc) == cycles;
}

void sim_pvclock_reanchor(unsigned int anchor)
{
	const struct sim_pvclock *p = &sim_pvclock_page.pvti;
	u64 d = anchor ? step() : 0;

	host_write(ANCHOR_TSC + d, ANCHOR_SYSTEM_TIME + scale(d),
		   READ_ONCE(p->flags));
}

void sim_vclock_reanchor(unsigned int anchor, u64 cycles)
{
	u64 tsc;

	if (mode == SIM_VCLOCK_PVCLOCK)
		sim_pvclock_reanchor(anchor);
	else if (mode == SIM_VCLOCK_HVCLOCK && sim_hvclock_tsc_for(cycles, &tsc))
		sim_hvclock_reanchor(anchor, tsc);
}

void sim_vclock_set_valid(bool valid)
{
	if (mode == SIM_VCLOCK_PVCLOCK)
		sim_pvclock_set_stable(valid);
	else if (mode == SIM_VCLOCK_HVCLOCK)
		sim_hvclock_set_valid(valid);
}

bool sim_vclock_anchors_agree_everywhere(void)
{
	return mode != SIM_VCLOCK_HVCLOCK;
}

int sim_vclock_page_fd(void *page, const char *name, int *fd)
{
	u8 copy[4096];

	if (*fd >= 0)
		return *fd;
	*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0)
		return -1;
	memcpy(copy, page, sizeof(copy));
	/* the object is one whole page: nothing else lives in the one replaced */
	if (ftruncate(*fd, sizeof(copy)) ||
	    mmap(page, sizeof(copy), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, *fd,
		 0) == MAP_FAILED) {
		close(*fd);
		*fd = -1;
		return -1;
	}
	memcpy(page, copy, sizeof(copy));
	return *fd;
}

int sim_pvclock_fd(void)
{
	static int fd = -1;

	return sim_vclock_page_fd(&sim_pvclock_page, "vdsobench-pvclock", &fd);
}

void sim_pvclock_set_stable(bool stable)
{
	const struct sim_pvclock *p = &sim_pvclock_page.pvti;

	host_write(READ_ONCE(p->tsc_timestamp), READ_ONCE(p->system_time),
		   stable ? SIM_PVCLOCK_TSC_STABLE_BIT : 0);
}

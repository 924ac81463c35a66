// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated Hyper-V host's reference TSC page (sim_vclock.h): the
 * guest's hyperv_clocksource_tsc_page counts 100 ns units,
 * (TSC * tsc_scale >> 64) + tsc_offset, while tsc_sequence is not 0.
 *
 * The host's write: tsc_sequence 0 first (a reader that sees it reads the
 * reference counter MSR instead: the vDSO falls back to the syscall), the
 * scale and offset, then a new sequence, never 0. A reader that saw the
 * old sequence sees another one after its loads and retries.
 */
#include "impls/kernel/sim_vclock.h"
#include "impls/kernel/wide.h"

#include <string.h>

union sim_hvclock_area sim_hvclock_page __attribute__((aligned(4096)));

/* anchor 0: reference time 0 at this TSC value */
#define ANCHOR_TSC 1000003ULL
#define HV_CLOCK_HZ 10000000ULL /* drivers/clocksource/hyperv_timer.c: 100 ns */

static u64 scale_a, offset_a;
static u32 next_sequence;

static u64 mul_u64_u64_shr64(u64 a, u64 b)
{
	return mul_u64_u64_shr(a, b, 64);
}

static void host_write(u32 sequence, u64 scale, u64 offset)
{
	struct sim_hvclock *p = &sim_hvclock_page.tsc_pg;

	WRITE_ONCE(p->tsc_sequence, 0);
	smp_wmb();
	WRITE_ONCE(p->tsc_scale, scale);
	WRITE_ONCE(p->tsc_offset, (s64)offset);
	smp_wmb();
	WRITE_ONCE(p->tsc_sequence, sequence);
}

static u32 new_sequence(void)
{
	if (++next_sequence == 0)
		next_sequence = 1;
	return next_sequence;
}

void sim_hvclock_reset(void)
{
	u64 rem;

	/* Hyper-V's scale: 2^64 * (10 MHz / the TSC's frequency) */
	scale_a = div_u128_u64(HV_CLOCK_HZ, 0, SIM_VCLOCK_TSC_HZ, &rem);
	offset_a = 0 - mul_u64_u64_shr64(ANCHOR_TSC, scale_a);
	next_sequence = 0;
	memset(&sim_hvclock_page, 0, sizeof(sim_hvclock_page));
	host_write(new_sequence(), scale_a, offset_a);
}

u64 sim_hvclock_cycles(u64 tsc)
{
	/* read_hv_clock_tsc(): the page, or the MSR giving the same time */
	return mul_u64_u64_shr64(tsc, scale_a) + offset_a;
}

bool sim_hvclock_tsc_for(u64 cycles, u64 *tsc)
{
	if (cycles >> 63)
		return false;
	/* ceil(((cycles - offset) << 64) / scale), where it fits */
	if (!shl_div_ceil(cycles - offset_a, 64, scale_a, tsc))
		return false;
	return sim_hvclock_cycles(*tsc) == cycles;
}

void sim_hvclock_reanchor(unsigned int anchor, u64 at_tsc)
{
	/* anchor 1: three quarters the scale, the offset that meets at at_tsc */
	u64 scale = anchor ? scale_a - scale_a / 4 : scale_a;
	u64 offset = anchor ? sim_hvclock_cycles(at_tsc) - mul_u64_u64_shr64(at_tsc, scale) :
			      offset_a;

	host_write(new_sequence(), scale, offset);
}

void sim_hvclock_set_valid(bool valid)
{
	const struct sim_hvclock *p = &sim_hvclock_page.tsc_pg;

	host_write(valid ? new_sequence() : 0, READ_ONCE(p->tsc_scale),
		   (u64)READ_ONCE(p->tsc_offset));
}

int sim_hvclock_fd(void)
{
	static int fd = -1;

	return sim_vclock_page_fd(&sim_hvclock_page, "vdsobench-hvclock", &fd);
}

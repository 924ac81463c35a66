// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated host's pvclock page: KVM's scale for the host's TSC, the
 * clocksource read against the ABI's formula computed here from the page,
 * the TSC value for a clocksource value (the smallest, every value below
 * 2^63, none at or above), both anchors giving the same time, and the
 * version protocol. Then Hyper-V's TSC page the same way, its second
 * anchor meeting the first at one TSC value, and its sequence.
 */
#include <string.h>

#include "impls/kernel/sim_vclock.h"
#include "impls/kernel/wide.h"
#include "testing/tap.h"

/* __pvclock_read_cycles() from the page as it stands, in 128 bits */
static u64 page_read(u64 tsc)
{
	const struct sim_pvclock *p = &sim_pvclock_page.pvti;
	u64 delta = tsc - p->tsc_timestamp, hi, lo;

	if (p->tsc_shift < 0)
		delta >>= -p->tsc_shift;
	else
		delta <<= p->tsc_shift;
	mul_u64_u32_wide(delta, p->tsc_to_system_mul, &hi, &lo);
	return p->system_time + ((hi << 32) | (lo >> 32));
}

/* Hyper-V's reference time from the page as it stands, in 128 bits */
static u64 hv_page_read(u64 tsc)
{
	const struct sim_hvclock *h = &sim_hvclock_page.tsc_pg;
	u64 hi, lo;

	mul_u64_u64_wide(tsc, h->tsc_scale, &hi, &lo);
	return hi + (u64)h->tsc_offset;
}

static void test_hvclock(void)
{
	static const u64 values[] = { 0, 1, 999, 1000000, 1ULL << 40, 1ULL << 55 };
	const struct sim_hvclock *h = &sim_hvclock_page.tsc_pg;
	u64 tsc = 0, at, other, second, rem;
	u32 sequence;
	bool all = true;

	sim_vclock_select(SIM_VCLOCK_HVCLOCK);
	tap_ok(sim_vclock_clock_mode() == SIM_CLOCKMODE_HVCLOCK && h->tsc_sequence != 0 &&
	       h->tsc_scale == div_u128_u64(10000000, 0, SIM_VCLOCK_TSC_HZ, &rem),
	       "hvclock: VDSO_CLOCKMODE_HVCLOCK, the page valid, Hyper-V's scale "
	       "2^64 x 10 MHz / the TSC's");
	sim_vclock_tsc_for(0, &tsc);
	second = sim_vclock_cycles(tsc + SIM_VCLOCK_TSC_HZ) - sim_vclock_cycles(tsc);
	tap_ok(second >= 9999999 && second <= 10000000,
	       "a second of TSC is 10^7 units of 100 ns (%llu)", (unsigned long long)second);
	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++)
		all &= sim_vclock_tsc_for(values[i], &tsc) && hv_page_read(tsc) == values[i] &&
		       hv_page_read(tsc - 1) != values[i];
	tap_ok(all, "each value has a smallest TSC value, which the page reads back");

	sim_vclock_tsc_for(123456789, &at);
	sequence = h->tsc_sequence;
	sim_vclock_reanchor(1, 123456789);
	other = at + 1000000;
	tap_ok(h->tsc_sequence != sequence && h->tsc_sequence != 0 &&
	       hv_page_read(at) == 123456789 && hv_page_read(other) != sim_vclock_cycles(other),
	       "anchor 1 gives its TSC value the same time, and others another: a new "
	       "sequence");
	sim_vclock_set_valid(false);
	tap_ok(h->tsc_sequence == 0, "the host makes the page invalid: sequence 0");
	sim_vclock_set_valid(true);
	tap_ok(h->tsc_sequence != 0, "and valid again");
	sim_vclock_select(SIM_VCLOCK_TSC);
}

int main(void)
{
	static const u64 values[] = { 0, 1, 999, 1000000, 1ULL << 40,
				      123456789012345ULL, 1ULL << 62,
				      (1ULL << 63) - 1 };
	const struct sim_pvclock *p = &sim_pvclock_page.pvti;
	u64 tsc = 0, t0, second;
	u32 version;
	bool all = true;

	tap_ok(sim_vclock_parse("tsc") == SIM_VCLOCK_TSC &&
	       sim_vclock_parse("pvclock") == SIM_VCLOCK_PVCLOCK &&
	       sim_vclock_parse("hvclock") == SIM_VCLOCK_HVCLOCK &&
	       sim_vclock_parse("hpet") == -1, "the clock modes by name");

	sim_vclock_select(SIM_VCLOCK_TSC);
	tap_ok(sim_vclock_cycles(12345) == 12345 && sim_vclock_tsc_for(1ULL << 63, &tsc) &&
	       tsc == 1ULL << 63 && sim_vclock_clock_mode() == SIM_CLOCKMODE_TSC,
	       "tsc: the clocksource is the counter");

	sim_vclock_select(SIM_VCLOCK_PVCLOCK);
	tap_ok(sim_vclock_clock_mode() == SIM_CLOCKMODE_PVCLOCK &&
	       (p->flags & SIM_PVCLOCK_TSC_STABLE_BIT) && !(p->version & 1),
	       "pvclock: VDSO_CLOCKMODE_PVCLOCK, the page stable and whole "
	       "(version %u)", p->version);
	/* kvm_get_time_scale(NSEC_PER_SEC, 1876543219): no shift, 1e9/f */
	tap_ok(p->tsc_shift == 0 &&
	       p->tsc_to_system_mul == (u32)((1000000000ULL << 32) / SIM_VCLOCK_TSC_HZ),
	       "KVM's scale for a %llu Hz TSC: shift %d, mul %u",
	       (unsigned long long)SIM_VCLOCK_TSC_HZ, p->tsc_shift,
	       p->tsc_to_system_mul);
	sim_vclock_tsc_for(0, &tsc);
	second = sim_vclock_cycles(tsc + SIM_VCLOCK_TSC_HZ) - sim_vclock_cycles(tsc);
	tap_ok(second >= 999999999 && second <= 1000000000,
	       "a second of TSC is a second of kvm-clock (%llu ns)",
	       (unsigned long long)second);

	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++) {
		u64 c = values[i];
		bool ok = sim_vclock_tsc_for(c, &tsc) && sim_vclock_cycles(tsc) == c &&
			  page_read(tsc) == c && sim_vclock_cycles(tsc - 1) != c;

		if (!ok)
			tap_ok(false, "the TSC for kvm-clock %llu", (unsigned long long)c);
		all &= ok;
	}
	tap_ok(all, "every clocksource value below 2^63 has a smallest TSC "
	       "value, which the page's formula reads back");
	tap_ok(!sim_vclock_tsc_for(1ULL << 63, &tsc) && !sim_vclock_tsc_for(~0ULL, &tsc),
	       "none at or above 2^63 (the vDSO's invalid marker)");

	version = p->version;
	t0 = p->tsc_timestamp;
	sim_pvclock_reanchor(1);
	all = p->version == version + 2 && p->tsc_timestamp != t0;
	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++) {
		sim_vclock_tsc_for(values[i], &tsc);
		all &= page_read(tsc) == values[i] && tsc >= p->tsc_timestamp;
	}
	tap_ok(all, "anchor 1 (tsc_timestamp %llu) gives every value anchor 0 gave; "
	       "the version moved on by one update",
	       (unsigned long long)p->tsc_timestamp);

	version = p->version;
	sim_pvclock_set_stable(false);
	tap_ok(!(p->flags & SIM_PVCLOCK_TSC_STABLE_BIT) && p->version == version + 2,
	       "the host clears PVCLOCK_TSC_STABLE_BIT in one update");
	sim_vclock_select(SIM_VCLOCK_PVCLOCK);
	tap_ok((p->flags & SIM_PVCLOCK_TSC_STABLE_BIT) != 0,
	       "a new selection starts stable again");
	test_hvclock();
	return tap_done();
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated hypervisor's clock page and the guest's clocksource mode.
 *
 * Under KVM a guest's clocksource is kvm-clock: the host publishes a
 * struct pvclock_vcpu_time_info per vCPU (arch/x86/include/asm/
 * pvclock-abi.h), and the guest turns a TSC value into nanoseconds of
 * system time with it (__pvclock_read_cycles()); the vDSO reads vCPU 0's
 * page (VDSO_CLOCKMODE_PVCLOCK, vread_pvclock()) while the host sets
 * PVCLOCK_TSC_STABLE_BIT. The host writes the page with a version count:
 * odd while it writes (kvm_setup_guest_pvclock()).
 *
 * One page for the process, as every guest mapping reads the same host
 * page; the mode is chosen once (verify --clock-mode) before any check:
 *
 *	SIM_VCLOCK_TSC		the clocksource is the TSC (every mode so far)
 *	SIM_VCLOCK_PVCLOCK	kvm-clock: the clocksource's cycles are the
 *				page's nanoseconds for the TSC value read
 *	SIM_VCLOCK_HVCLOCK	Hyper-V's TSC page (sim_hvclock.c): the
 *				cycles are its 100 ns reference time,
 *				(TSC * tsc_scale >> 64) + tsc_offset, valid
 *				while tsc_sequence is not 0
 *
 * The checks choose clocksource values as before; sim_vclock_tsc_for()
 * gives the TSC value a reader must see to get that value through the
 * page, and sim_vclock_cycles() is the kernel's own clocksource read, used
 * by the simulated syscalls and the oracle's real-counter brackets. The
 * host may re-anchor the page (a new tsc_timestamp and system_time on the
 * same line, as KVM's master clock updates do): every anchor gives every
 * TSC value after both the same cycles, so a consistent read is exact and
 * a read mixing two anchors is seconds off. Hyper-V's page has no such
 * freedom: its second anchor is another scale and offset that agree at
 * one TSC value only, which the readers then read.
 */
#ifndef VDSOBENCH_SIM_VCLOCK_H
#define VDSOBENCH_SIM_VCLOCK_H

#include "impls/common/compiler.h"

enum sim_vclock { SIM_VCLOCK_TSC, SIM_VCLOCK_PVCLOCK, SIM_VCLOCK_HVCLOCK };

/* arch/x86/include/asm/vdso/clocksource.h: VDSO_ARCH_CLOCKMODES */
#define SIM_CLOCKMODE_TSC 1
#define SIM_CLOCKMODE_PVCLOCK 2
#define SIM_CLOCKMODE_HVCLOCK 3

/* arch/x86/include/asm/pvclock-abi.h */
#define SIM_PVCLOCK_TSC_STABLE_BIT (1 << 0)

/* struct pvclock_vcpu_time_info, field for field (packed there, no holes) */
struct sim_pvclock {
	u32 version;
	u32 pad0;
	u64 tsc_timestamp;
	u64 system_time;
	u32 tsc_to_system_mul;
	int8_t tsc_shift;
	u8 flags;
	u8 pad[2];
};

/*
 * The host's page (vvar's pvclock_page, one page, its first struct vCPU
 * 0's): what the layouts' vread_pvclock() reads. The object has the name
 * vdso-layout.lds.S gives it, the symbol an imported tree's vDSO declares
 * extern (asm/vdso/gettimeofday.h) and reads; here it is sim_pvclock_page.
 * (An alias would do, but AddressSanitizer pads and moves aliased globals.)
 */
extern union sim_pvclock_area {
	struct sim_pvclock pvti;
	u8 page[4096];
} pvclock_page __attribute__((aligned(4096)));
#define sim_pvclock_page pvclock_page

/* include/hyperv/hvgdk.h struct ms_hyperv_tsc_page, its first fields */
struct sim_hvclock {
	u32 tsc_sequence; /* 0: not valid, read the reference counter MSR */
	u32 reserved1;
	u64 tsc_scale;
	s64 tsc_offset;
};

/* the host's TSC page, named as vvar's hvclock_page, the same way */
extern union sim_hvclock_area {
	struct sim_hvclock tsc_pg;
	u8 page[4096];
} hvclock_page __attribute__((aligned(4096)));
#define sim_hvclock_page hvclock_page

/* the TSC frequency the host scales (an odd one: mul and shift not round) */
#define SIM_VCLOCK_TSC_HZ 1876543219ULL

/* "tsc", "pvclock" or "hvclock"; -1 for another name */
int sim_vclock_parse(const char *name);
const char *sim_vclock_name(enum sim_vclock m);

/* choose the mode and reset the host page to anchor 0, stable */
void sim_vclock_select(enum sim_vclock m);
enum sim_vclock sim_vclock_mode(void);

/* the clock mode a vDSO-capable clocksource of this mode publishes */
s32 sim_vclock_clock_mode(void);

/* the kernel's clocksource read for this TSC value (identity for tsc) */
u64 sim_vclock_cycles(u64 tsc);

/*
 * The smallest TSC value (at or after both anchors) whose clocksource value
 * is cycles: true, or false where none is (pvclock: cycles at or above
 * 2^63, the sign bit the vDSO treats as invalid).
 */
bool sim_vclock_tsc_for(u64 cycles, u64 *tsc);

/*
 * The host's write (KVM's protocol: version odd, the fields, version
 * even): anchor 0 or 1, both on the same line. Safe against concurrent
 * readers, not against another writer.
 */
void sim_pvclock_reanchor(unsigned int anchor);
/* the host sets or clears PVCLOCK_TSC_STABLE_BIT, under the same protocol */
void sim_pvclock_set_stable(bool stable);

/*
 * The same for the mode's page: pvclock as above (cycles unused); hvclock
 * (Hyper-V's protocol: tsc_sequence 0 while it writes, then a new one)
 * to anchor 0, or anchor 1, another mapping that gives cycles' TSC value
 * (sim_vclock_tsc_for()) the same cycles, and no other TSC value.
 */
void sim_vclock_reanchor(unsigned int anchor, u64 cycles);
/* the page valid (pvclock: PVCLOCK_TSC_STABLE_BIT; hvclock: a sequence) or not */
void sim_vclock_set_valid(bool valid);
/* whether any two anchors give every TSC value the same cycles (pvclock) */
bool sim_vclock_anchors_agree_everywhere(void);

/* sim_hvclock.c, the Hyper-V host: sim_vclock.c's dispatch calls these */
void sim_hvclock_reset(void);
u64 sim_hvclock_cycles(u64 tsc);
bool sim_hvclock_tsc_for(u64 cycles, u64 *tsc);
void sim_hvclock_reanchor(unsigned int anchor, u64 at_tsc);
void sim_hvclock_set_valid(bool valid);

/* a memfd holding page (one whole page, its mapping replaced, contents kept) */
int sim_vclock_page_fd(void *page, const char *name, int *fd);

/*
 * A memfd holding the host's page, for a kernel image whose vvar area has a
 * pvclock page of its own to map (impls/image/loader.h): made once, the
 * page's mapping replaced by the memfd's with its contents kept. The fd,
 * or -1 with errno.
 */
int sim_pvclock_fd(void);
/* the same for the Hyper-V TSC page */
int sim_hvclock_fd(void);

#endif /* VDSOBENCH_SIM_VCLOCK_H */

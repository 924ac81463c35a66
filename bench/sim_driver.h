/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sim driver's two ways of running share (bench/sim_driver.c:
 * one subject x clock x mode, for cachegrind; bench/sim_trace.c: many
 * clocks and modes of one variant in one run, for lackey): the fake
 * kernel started with a variant attached and its counter 1 ms past
 * cycle_last, the loop run with its stack moved, the time namespace the
 * timens mode enters.
 */
#ifndef VDSOBENCH_SIM_DRIVER_H
#define VDSOBENCH_SIM_DRIVER_H

#include "bench/loops.h"
#include "impls/registry.h"

#define PROG "vdsobench_sim_driver"

extern const struct timens_offsets sim_timens_offs;

/* the variant's fake-counter twin, and its index in the registry, or NULL */
const struct vdso_variant *sim_fake_twin(const struct vdso_variant *v,
					 unsigned int *index);
/* the loop's environment */
struct bench_env *sim_env(void);
/* the fake kernel reset, v attached (NULL: none), the counter set: 0 or -1, said */
int sim_start(const struct vdso_variant *v);
/* n calls of fn, its stack at a fixed offset of its page */
void sim_run(bench_loop_fn fn, u64 n);
/* VARIANT --trace PATHS COUNTS: bench/sim_trace.c; the exit status */
int sim_trace(const char *variant, const char *paths, const char *counts);

#endif /* VDSOBENCH_SIM_DRIVER_H */

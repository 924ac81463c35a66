/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generated registry: every variant built for this architecture, in
 * the order of impls/variants.bzl.
 */
#ifndef VDSOBENCH_REGISTRY_H
#define VDSOBENCH_REGISTRY_H

#include "impls/common/time64.h"
#include "impls/common/variant.h"

extern const struct vdso_variant *const vdso_variants[];
extern const unsigned int vdso_variants_nr;

/* by exact name ("generic_5_3+rdtscp+always"); NULL if unknown */
const struct vdso_variant *vdso_variant_find(const char *name);

/* the clock names the suite uses ("monotonic", ...); NULL past the end */
const char *vdso_clock_name(clockid_t clk);
/* -1 if unknown */
clockid_t vdso_clock_by_name(const char *name);

#endif /* VDSOBENCH_REGISTRY_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled, never run, by `vdsobench import` (like reader.c and writer.c:
 * the shim, the tree, its configuration), to assembly only (gcc -S): what
 * variant.c must know as constants about this tree's data (its size, the
 * field table, the clocks each path serves) for
 * include/generated/kimport_desc.h, as the kernel's own asm-offsets.c
 * gets struct offsets (include/linux/kbuild.h, v6.12): each value is an
 * "i" operand of an asm statement that writes a "->NAME VALUE" line into
 * the assembly, which import reads. Nothing of the tree is linked or
 * executed at import time (a constructor in a tree header stays inert).
 * writer.c checks the size and the count again at build time, so the
 * header cannot go stale.
 */
#ifdef __i386__
/* as reader.c: x86's vdso32 (arch/x86/entry/vdso/vdso32/vclock_gettime.c) */
#define BUILD_VDSO32
#include "arch/x86/entry/vdso/vdso32/fake_32bit_build.h"
#endif

#include "kernel_import/glue/kimport.h"

/* what reader.c includes before the tree's read path */
#include <generated/kimport_includes.h>
#include <asm/vdso/gettimeofday.h>

#include "kernel_import/glue/tree.h"

/* "->NAME VALUE": include/linux/kbuild.h's DEFINE(), the value printed bare (%c) */
#define KIMPORT_DEFINE(sym, val) \
	asm volatile("\n.ascii \"->" #sym " %c0\"\n" : : "i"(val))

/* a field of the table: "->FIELD OFFSET SIZE LABEL" (the labels are fields.h's) */
#define KIMPORT_FIELD_AT(type, base, member, label)                          \
	({                                                                  \
		asm volatile("\n.ascii \"->FIELD %c0 %c1 " label "\"\n"     \
			     : : "i"((u32)((base) + __builtin_offsetof(type, member))), \
			       "i"((u32)sizeof(((type *)0)->member)));      \
	})

#include "kernel_import/glue/fields.h"

#ifdef KIMPORT_TIME_DATA
#define KIMPORT_DATA_BYTES sizeof(struct vdso_time_data)
#else
#define KIMPORT_DATA_BYTES (sizeof(struct vdso_data) * CS_BASES)
#endif

void kimport_probe_values(void);

void kimport_probe_values(void)
{
	KIMPORT_DEFINE(data_size, KIMPORT_DATA_BYTES);
	KIMPORT_DEFINE(hres_clocks, VDSO_HRES);
	KIMPORT_DEFINE(coarse_clocks, VDSO_COARSE);
	KIMPORT_DEFINE(raw_clocks, VDSO_RAW);
#if defined(VDSO_AUX) && defined(CONFIG_POSIX_AUX_CLOCKS)
	KIMPORT_DEFINE(aux_clocks, VDSO_AUX);
#else
	KIMPORT_DEFINE(aux_clocks, 0);
#endif
#ifdef VDSO_HAS_CLOCK_GETRES
	KIMPORT_DEFINE(has_getres, 1);
#else
	KIMPORT_DEFINE(has_getres, 0);
#endif
#ifdef VDSO_HAS_TIME
	KIMPORT_DEFINE(has_time, 1);
#else
	KIMPORT_DEFINE(has_time, 0);
#endif
	KIMPORT_FIELDS;
}

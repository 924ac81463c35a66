// SPDX-License-Identifier: GPL-2.0
/*
 * Run once by `vdsobench import`, compiled like reader.c and writer.c
 * (the shim, the tree, its configuration): prints, as JSON, what
 * variant.c must know as constants about this tree's data (its size, the
 * field table, the clocks each path serves) for
 * include/generated/kimport_desc.h. writer.c checks the size and the
 * count again at build time, so the header cannot go stale.
 */
#include "kernel_import/glue/kimport.h"

/* what reader.c includes before the tree's read path */
#include <generated/kimport_includes.h>
#include <asm/vdso/gettimeofday.h>

#include "kernel_import/glue/tree.h"
#include "kernel_import/glue/fields.h"

#ifdef KIMPORT_TIME_DATA
#define KIMPORT_DATA_BYTES sizeof(struct vdso_time_data)
#else
#define KIMPORT_DATA_BYTES (sizeof(struct vdso_data) * CS_BASES)
#endif

static const struct vdso_field fields[] = { KIMPORT_FIELDS };

int main(void)
{
	unsigned long n = sizeof(fields) / sizeof(fields[0]);

	__builtin_printf("{\"data_size\": %lu, \"hres_clocks\": %lu, "
			 "\"coarse_clocks\": %lu, \"raw_clocks\": %lu, "
			 "\"aux_clocks\": %lu, \"has_getres\": %d, \"has_time\": %d, "
			 "\"fields\": [",
			 (unsigned long)KIMPORT_DATA_BYTES, (unsigned long)(VDSO_HRES),
			 (unsigned long)(VDSO_COARSE), (unsigned long)(VDSO_RAW),
#if defined(VDSO_AUX) && defined(CONFIG_POSIX_AUX_CLOCKS)
			 (unsigned long)(VDSO_AUX),
#else
			 0UL,
#endif
#ifdef VDSO_HAS_CLOCK_GETRES
			 1,
#else
			 0,
#endif
#ifdef VDSO_HAS_TIME
			 1
#else
			 0
#endif
			 );
	for (unsigned long i = 0; i < n; i++)
		__builtin_printf("%s{\"name\": \"%s\", \"offset\": %u, \"size\": %u}",
				 i ? ", " : "", fields[i].name, fields[i].offset,
				 fields[i].size);
	__builtin_printf("]}\n");
	return 0;
}

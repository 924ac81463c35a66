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

/* the project's JSON writer, whole: it needs no C library header */
#define JSON_FREESTANDING
#include "common/json_writer.c"

#ifdef KIMPORT_TIME_DATA
#define KIMPORT_DATA_BYTES sizeof(struct vdso_time_data)
#else
#define KIMPORT_DATA_BYTES (sizeof(struct vdso_data) * CS_BASES)
#endif

static const struct vdso_field fields[] = { KIMPORT_FIELDS };

/* the C library's printf, which the compiler knows without <stdio.h> */
static void put_stdout(void *ctx, const char *s, unsigned long n)
{
	__builtin_printf("%.*s", (int)n, s);
}

int main(void)
{
	unsigned long n = sizeof(fields) / sizeof(fields[0]);
	struct json_writer w;

	json_init(&w, put_stdout, 0);
	json_begin_object(&w);
	json_kv_uint(&w, "data_size", KIMPORT_DATA_BYTES);
	json_kv_uint(&w, "hres_clocks", VDSO_HRES);
	json_kv_uint(&w, "coarse_clocks", VDSO_COARSE);
	json_kv_uint(&w, "raw_clocks", VDSO_RAW);
#if defined(VDSO_AUX) && defined(CONFIG_POSIX_AUX_CLOCKS)
	json_kv_uint(&w, "aux_clocks", VDSO_AUX);
#else
	json_kv_uint(&w, "aux_clocks", 0);
#endif
#ifdef VDSO_HAS_CLOCK_GETRES
	json_kv_int(&w, "has_getres", 1);
#else
	json_kv_int(&w, "has_getres", 0);
#endif
#ifdef VDSO_HAS_TIME
	json_kv_int(&w, "has_time", 1);
#else
	json_kv_int(&w, "has_time", 0);
#endif
	json_key(&w, "fields");
	json_begin_array(&w);
	for (unsigned long i = 0; i < n; i++) {
		json_begin_object(&w);
		json_kv_string(&w, "name", fields[i].name);
		json_kv_uint(&w, "offset", fields[i].offset);
		json_kv_uint(&w, "size", fields[i].size);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return json_end_line(&w) ? 1 : 0;
}

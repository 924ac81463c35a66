// SPDX-License-Identifier: GPL-2.0
/* bench/vdso_gate.h */
#include "bench/vdso_gate.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "impls/image/check.h"

const char *vdso_gate_of_process(void)
{
#ifdef __i386__
	const uint8_t *own = (const uint8_t *)getauxval(AT_SYSINFO);

	if (!own)
		return "none: this process has no AT_SYSINFO";
	return vdso_image_gate_names[vdso_image_gate_at(own)];
#else
	return NULL;
#endif
}

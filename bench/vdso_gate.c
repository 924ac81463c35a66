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
	/* the gate is its vDSO's first routine: 32 bytes of the text page */
	return vdso_image_gate_names[vdso_image_gate_of(own, 32)];
#else
	return NULL;
#endif
}

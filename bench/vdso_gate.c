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
	size_t to_end = VDSO_IMAGE_PAGE - ((uintptr_t)own & (VDSO_IMAGE_PAGE - 1));

	if (!own)
		return "none: this process has no AT_SYSINFO";
	/*
	 * its first 32 bytes (the fast entry is within its first 10), never past
	 * the end of its page, which is mapped wherever the gate lies
	 */
	return vdso_image_gate_names[vdso_image_gate_of(own, to_end < 32 ? to_end : 32)];
#else
	return NULL;
#endif
}

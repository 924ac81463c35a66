// SPDX-License-Identifier: GPL-2.0
/*
 * hwloc.h's bitmaps: a fixed set of HWLOC_SYSFS_MAX_CPUS bits, where hwloc's
 * grow; a CPU past the end is not set (-1) and never set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwloc.h"

#define BITS (8 * sizeof(unsigned long))

hwloc_bitmap_t hwloc_bitmap_alloc(void)
{
	return calloc(1, sizeof(struct hwloc_bitmap_s));
}

void hwloc_bitmap_free(hwloc_bitmap_t set)
{
	free(set);
}

int hwloc_bitmap_set(hwloc_bitmap_t set, unsigned int cpu)
{
	if (cpu >= HWLOC_SYSFS_MAX_CPUS)
		return -1;
	set->bits[cpu / BITS] |= 1UL << (cpu % BITS);
	return 0;
}

int hwloc_bitmap_only(hwloc_bitmap_t set, unsigned int cpu)
{
	memset(set, 0, sizeof(*set));
	return hwloc_bitmap_set(set, cpu);
}

int hwloc_bitmap_isset(hwloc_const_bitmap_t set, unsigned int cpu)
{
	return cpu < HWLOC_SYSFS_MAX_CPUS &&
	       (set->bits[cpu / BITS] >> (cpu % BITS) & 1);
}

int hwloc_bitmap_and(hwloc_bitmap_t res, hwloc_const_bitmap_t a,
		     hwloc_const_bitmap_t b)
{
	for (size_t i = 0; i < HWLOC_SYSFS_MAX_CPUS / BITS; i++)
		res->bits[i] = a->bits[i] & b->bits[i];
	return 0;
}

int hwloc_bitmap_weight(hwloc_const_bitmap_t set)
{
	int n = 0;

	for (size_t i = 0; i < HWLOC_SYSFS_MAX_CPUS / BITS; i++)
		n += __builtin_popcountl(set->bits[i]);
	return n;
}

int hwloc_bitmap_next(hwloc_const_bitmap_t set, int prev)
{
	for (int cpu = prev + 1; cpu < HWLOC_SYSFS_MAX_CPUS; cpu++)
		if (hwloc_bitmap_isset(set, (unsigned int)cpu))
			return cpu;
	return -1;
}

int hwloc_bitmap_first(hwloc_const_bitmap_t set)
{
	return hwloc_bitmap_next(set, -1);
}

int hwloc_bitmap_last(hwloc_const_bitmap_t set)
{
	for (int cpu = HWLOC_SYSFS_MAX_CPUS - 1; cpu >= 0; cpu--)
		if (hwloc_bitmap_isset(set, (unsigned int)cpu))
			return cpu;
	return -1;
}

/* "0,2-3", as hwloc writes it; the length snprintf would have written */
int hwloc_bitmap_list_snprintf(char *buf, size_t len, hwloc_const_bitmap_t set)
{
	int total = 0, lo = hwloc_bitmap_first(set);

	if (len)
		buf[0] = '\0';
	while (lo >= 0) {
		int hi = lo, next;
		size_t at = (size_t)total < len ? (size_t)total : len;

		while ((next = hwloc_bitmap_next(set, hi)) == hi + 1)
			hi = next;
		total += hi == lo ? snprintf(buf + at, len - at, "%s%d",
					     total ? "," : "", lo)
				  : snprintf(buf + at, len - at, "%s%d-%d",
					     total ? "," : "", lo, hi);
		lo = next;
	}
	return total;
}

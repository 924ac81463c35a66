// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_image_check [--counter NAME]... [FILE|-]: vdso_image_check()
 * (check.h, the loader's own rules) on a vDSO image, for each counter
 * (by default the four an import's +image variants load it with), and
 * what it found as one JSON object on stdout, which
 * scripts/vdsobench_cli/kimport/vdso_image.py reads:
 *
 *   {"class": 64|32, "span": N, "vvar_start": N, "vvar_pages": N, "data_page": N,
 *    "timens_page": N, "data_offset": N, "pvclock_page": N, "hvclock_page": N,
 *    "syms": {NAME: N, ...},
 *    "alternatives": N, "entry_size": 14|12|0,
 *    "slots": [{"at": N, "len": N, "replacement": "lfence_rdtsc"|"rdtscp",
 *               "feature": N}, ...],
 *    "syscalls": [{"at": N, "target": N, "feature": N}, ...],
 *    "int80_left": N,
 *    "gates": [{"at": N, "replacement": "skip"|"sysenter"|"syscall",
 *               "feature": N}, ...],
 *    "counters": {NAME: slots patched, ...}}
 *
 * syscalls: v7.x vdso32's system call alternatives, which the loader applies
 * (a call to __kernel_vsyscall, the target); int80_left: the ds;ds;ds;int
 * $0x80 that are left in place once every alternative is applied. gates:
 * vdso32's __kernel_vsyscall alternatives, which the loader applies as the
 * running kernel's own gate enters (gate32.c; "skip": v7.x's int $0x80;
 * ret, replaced by nothing).
 *
 * Exit 0; 1 with the reason, one line on stderr, when the image is
 * refused; 2 for bad usage or an unreadable file. Nothing is mapped or run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impls/image/check.h"

#define MAX_IMAGE (64u << 20)

static const char usage[] =
	"usage: vdsobench_image_check [--counter NAME]... [FILE|-]\n"
	"Check a vDSO image (vdso64.so, or an i386 vdso32.so) as impls/image/loader.c\n"
	"would map it, for each\n"
	"counter (default: rdtsc, lfence_rdtsc, rdtscp, fake; valid: rdtsc, lfence_rdtsc,\n"
	"rdtscp, fake, keep), and print what it holds as JSON. FILE - or none: stdin.\n"
	"Exit 0, 1 when the image is refused (the reason on stderr), 2 for bad usage.\n";

static int counter_of(const char *name)
{
	for (int c = 0; c < VDSO_IMAGE_NR_COUNTERS; c++)
		if (!strcmp(name, vdso_image_counter_names[c]))
			return c;
	return -1;
}

/* the whole file, at most MAX_IMAGE bytes; NULL with errno (EFBIG: larger) */
static unsigned char *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap), *more;

	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap) {
			if (ferror(f))
				break;
			*len = n;
			return buf;
		}
		if (cap >= MAX_IMAGE) {
			errno = EFBIG;
			break;
		}
		more = realloc(buf, cap * 2);
		if (!more)
			break;
		buf = more;
		cap *= 2;
	}
	free(buf);
	return NULL;
}

/* the ds;ds;ds;int $0x80 left in place once the alternatives are applied; -1: no memory */
static int int80_left(const struct vdso_image_info *info)
{
	uint8_t *copy = malloc(info->span);
	int left;

	if (!copy)
		return -1;
	memcpy(copy, info->elf, info->span);
	vdso_image_patch(info, copy, VDSO_IMAGE_RDTSC, 0);
	left = vdso_image_count_int80(copy, info->span);
	free(copy);
	return left;
}

static void print_syscalls(const struct vdso_image_info *info, int left)
{
	const char *sep = "";

	printf("], \"syscalls\": [");
	for (int k = 0; k < info->alts; k++) {
		struct vdso_image_alt a;

		vdso_image_alt(info, k, &a);
		if (a.kind != VDSO_IMAGE_ALT_SYSCALL)
			continue;
		printf("%s{\"at\": %llu, \"target\": %lld, \"feature\": %u}", sep,
		       (unsigned long long)a.instr,
		       (long long)info->sym[VDSO_IMAGE_KERNEL_VSYSCALL], a.feature);
		sep = ", ";
	}
	printf("], \"int80_left\": %d", left);
}

/* __kernel_vsyscall's alternatives (gate32.c), applied as the running kernel's gate */
static void print_gates(const struct vdso_image_info *info)
{
	static const char *const kinds[] = { "skip", "sysenter", "syscall" };
	const char *sep = "";

	printf(", \"gates\": [");
	for (int k = 0; k < info->alts; k++) {
		struct vdso_image_alt a;

		vdso_image_alt(info, k, &a);
		if (a.kind < VDSO_IMAGE_ALT_GATE_SKIP)
			continue;
		printf("%s{\"at\": %llu, \"replacement\": \"%s\", \"feature\": %u}", sep,
		       (unsigned long long)a.instr, kinds[a.kind - VDSO_IMAGE_ALT_GATE_SKIP],
		       a.feature);
		sep = ", ";
	}
	printf("]");
}

static void print_info(const struct vdso_image_info *info, unsigned int counters, int left)
{
	const char *sep = "";

	printf("{\"class\": %d, \"span\": %zu, \"vvar_start\": %ld, \"vvar_pages\": %d, "
	       "\"data_page\": %d, \"timens_page\": %d, \"data_offset\": %d, \"pvclock_page\": %d, "
	       "\"hvclock_page\": %d, \"syms\": {",
	       info->elf_class, info->span, info->vvar_start, info->vvar_pages, info->data_page,
	       info->timens_page, info->data_offset, info->pvclock_page, info->hvclock_page);
	for (int i = 0; i < VDSO_IMAGE_NR_SYMS; i++) {
		if (info->sym[i] < 0)
			continue;
		printf("%s\"%s\": %lld", sep, vdso_image_sym_names[i], (long long)info->sym[i]);
		sep = ", ";
	}
	printf("}, \"alternatives\": %d, \"entry_size\": %u, \"slots\": [", info->alts,
	       info->alt_entry);
	sep = "";
	for (int k = 0; k < info->alts; k++) {
		struct vdso_image_alt a;

		vdso_image_alt(info, k, &a);
		if (a.kind != VDSO_IMAGE_ALT_LFENCE_RDTSC && a.kind != VDSO_IMAGE_ALT_RDTSCP)
			continue;
		printf("%s{\"at\": %llu, \"len\": %u, \"replacement\": \"%s\", \"feature\": %u}", sep,
		       (unsigned long long)a.instr, a.instrlen,
		       a.kind == VDSO_IMAGE_ALT_RDTSCP ? "rdtscp" : "lfence_rdtsc", a.feature);
		sep = ", ";
	}
	print_syscalls(info, left);
	print_gates(info);
	printf(", \"counters\": {");
	sep = "";
	for (int c = 0; c < VDSO_IMAGE_NR_COUNTERS; c++) {
		if (!(counters & (1u << c)))
			continue;
		printf("%s\"%s\": %d", sep, vdso_image_counter_names[c],
		       vdso_image_slots(info, (enum vdso_image_counter)c));
		sep = ", ";
	}
	printf("}}\n");
}

int main(int argc, char **argv)
{
	const char *path = "-";
	unsigned int counters = 0;
	struct vdso_image_info info;
	unsigned char *data;
	char why[256];
	size_t len;
	int left;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--counter") && i + 1 < argc) {
			int c = counter_of(argv[++i]);

			if (c < 0) {
				fprintf(stderr, "vdsobench_image_check: --counter %s: no such counter "
					"(valid: rdtsc, lfence_rdtsc, rdtscp, fake, keep)\n", argv[i]);
				return 2;
			}
			counters |= 1u << c;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "vdsobench_image_check: %s: unknown option (valid: "
				"--counter NAME, --help)\n", argv[i]);
			return 2;
		} else if (i + 1 == argc) {
			path = argv[i];
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	counters = counters ? counters : VDSO_IMAGE_IMPORT_COUNTERS;
	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	data = f ? slurp(f, &len) : NULL;
	if (!data) {
		fprintf(stderr, "vdsobench_image_check: %s: %s\n", path,
			errno == EFBIG ? "larger than 64 MiB" : strerror(errno));
		return 2;
	}
	if (vdso_image_check_each(&info, data, len, counters, why, sizeof(why))) {
		fprintf(stderr, "%s\n", why);
		free(data);
		return 1;
	}
	left = int80_left(&info);
	if (left < 0) {
		fprintf(stderr, "vdsobench_image_check: out of memory\n");
		free(data);
		return 2;
	}
	print_info(&info, counters, left);
	free(data);
	return fflush(stdout) ? 1 : 0;
}

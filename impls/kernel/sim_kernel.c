// SPDX-License-Identifier: GPL-2.0
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#if defined(__i386__)
#include <sys/auxv.h>
#endif

#include "common/clocks.h"
#include "impls/common/variant.h"
#include "impls/table_sizes.h"

/* every variant the table builds can be attached at once (verify does) */
#define SIM_MAX_ATTACHED VDSO_TABLE_VARIANTS_MAX

static struct {
	u32 seq; /* tk_core.seq */
	struct timekeeper tk;
	struct timezone sys_tz;
	bool timens_active;
	struct timens_offsets timens;
	/* v6.17: timekeeper_data[TIMEKEEPER_AUX_FIRST..], and the enabled set */
	struct timekeeper aux[MAX_AUX_CLOCKS];
	u32 aux_timekeepers;
} tk_core;

/*
 * What the syscalls read: a latched copy of tk_core (the kernel's
 * tk_fast_mono pattern, update_fast_timekeeper()). Readers never wait
 * for a writer, which matters when the concurrency checker publishes
 * back to back: a seqcount reader would starve and the fallback clocks
 * would go unchecked.
 */
struct tk_state {
	struct timekeeper tk;
	bool timens_active;
	struct timens_offsets timens;
};

static struct {
	u32 seq;
	struct tk_state base[2];
} tk_fast;

/* the aux timekeepers' own latch: a core update doesn't copy them */
static struct {
	u32 seq;
	struct timekeeper base[2][MAX_AUX_CLOCKS];
} aux_fast;

static pthread_mutex_t tk_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct vdso_variant *attached[SIM_MAX_ATTACHED];
static u64 nr_syscalls;

#if defined(__i386__)
/*
 * vdso32's fallbacks call __kernel_vsyscall (7.x: once the kernel has
 * applied X86_FEATURE_SYSFAST32), whose sysenter or syscall the kernel
 * chose at boot. Its address is AT_SYSINFO; a process with none (under
 * qemu-i386, which maps no vDSO) has int $0x80. The gate, not int $0x80:
 * in a KVM guest int $0x80 cost 7.2 us a call against the gate's 134 ns.
 */
static unsigned long vsyscall_gate(void)
{
	static unsigned long gate = 1; /* 1: not looked up yet */
	unsigned long g = __atomic_load_n(&gate, __ATOMIC_RELAXED);

	if (g == 1) {
		g = getauxval(AT_SYSINFO);
		__atomic_store_n(&gate, g, __ATOMIC_RELAXED);
	}
	return g;
}
#endif

/* the vDSO's own fallback is a system call of its own, not libc's syscall() */
static inline long raw_syscall2(long nr, long a, long b)
{
	long ret;

#if defined(__x86_64__)
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "0"(nr), "D"(a), "S"(b)
			     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;

	__asm__ __volatile__("svc #0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
	ret = x0;
#elif defined(__i386__)
	/* the 32-bit syscalls: time_t and struct timespec are 32-bit here */
	unsigned long gate = vsyscall_gate();

	if (gate)
		__asm__ __volatile__("call *%[gate]"
				     : "=a"(ret)
				     : "0"(nr), "b"(a), "c"(b), [gate] "r"(gate)
				     : "memory");
	else
		__asm__ __volatile__("int $0x80"
				     : "=a"(ret)
				     : "0"(nr), "b"(a), "c"(b)
				     : "memory");
#elif defined(__arm__)
	/* EABI: the number in r7; 32-bit time_t, as i386's */
	register long r7 __asm__("r7") = nr;
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;

	__asm__ __volatile__("swi #0" : "+r"(r0) : "r"(r7), "r"(r1) : "memory");
	ret = r0;
#endif
	return ret;
}

u64 sim_read_tsc_ordered(void)
{
#if defined(__x86_64__) || defined(__i386__)
	u32 low, high;

	__asm__ __volatile__("lfence; rdtsc; lfence"
			     : "=a"(low), "=d"(high)
			     :
			     : "memory");
	return ((u64)high << 32) | low;
#elif defined(__aarch64__)
	u64 res;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0; isb"
			     : "=r"(res)
			     :
			     : "memory");
	return res;
#elif defined(__arm__)
	u64 res;

	__asm__ __volatile__("isb; mrrc p15, 1, %Q0, %R0, c14; isb"
			     : "=r"(res)
			     :
			     : "memory");
	return res;
#endif
}

u64 sim_read_clocksource(void)
{
	return sim_vclock_cycles(sim_read_tsc_ordered());
}

/*
 * a word-by-word volatile copy: the latch makes a torn copy harmless
 * (machine words: 32-bit x86 aligns a u64 field to 4 bytes only)
 */
static void copy_racy(void *dst, const void *src, size_t len)
{
	const volatile unsigned long *s = src;
	unsigned long *d = dst;

	_Static_assert(sizeof(struct tk_state) % sizeof(long) == 0 &&
			       sizeof(struct timekeeper) % sizeof(long) == 0,
		       "tk_state and timekeeper are copied in words");
	for (len /= sizeof(long); len; len--)
		*d++ = *s++;
}

/* raw_write_seqcount_latch() around each copy; tk_lock held */
static void tk_fast_update(void)
{
	struct tk_state st = { tk_core.tk, tk_core.timens_active,
			       tk_core.timens };

	__atomic_store_n(&tk_fast.seq, tk_fast.seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	tk_fast.base[0] = st;
	__atomic_store_n(&tk_fast.seq, tk_fast.seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	tk_fast.base[1] = st;
}

static void tk_fast_read(struct tk_state *st)
{
	u32 seq;

	do {
		seq = __atomic_load_n(&tk_fast.seq, __ATOMIC_ACQUIRE);
		copy_racy(st, &tk_fast.base[seq & 1], sizeof(*st));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&tk_fast.seq, __ATOMIC_RELAXED) != seq);
}

void sim_tk_snapshot(struct timekeeper *tk)
{
	struct tk_state st;

	tk_fast_read(&st);
	*tk = st.tk;
}

/* the same latch for the aux timekeepers; tk_lock held */
static void aux_fast_update(void)
{
	__atomic_store_n(&aux_fast.seq, aux_fast.seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(aux_fast.base[0], tk_core.aux, sizeof(tk_core.aux));
	__atomic_store_n(&aux_fast.seq, aux_fast.seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(aux_fast.base[1], tk_core.aux, sizeof(tk_core.aux));
}

static void aux_fast_read(unsigned int n, struct timekeeper *tk)
{
	u32 seq;

	do {
		seq = __atomic_load_n(&aux_fast.seq, __ATOMIC_ACQUIRE);
		copy_racy(tk, &aux_fast.base[seq & 1][n], sizeof(*tk));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&aux_fast.seq, __ATOMIC_RELAXED) != seq);
}

void sim_aux_snapshot(unsigned int n, struct timekeeper *tk)
{
	aux_fast_read(n, tk);
}

static void timekeeping_update(void)
{
	for (int i = 0; i < SIM_MAX_ATTACHED; i++)
		if (attached[i])
			attached[i]->update_vsyscall(&tk_core.tk);
}

/* timekeeping_update_from_shadow() of aux timekeeper n: vdso_time_update_aux() */
static void timekeeping_update_aux(unsigned int n)
{
	for (int i = 0; i < SIM_MAX_ATTACHED; i++)
		if (attached[i] && attached[i]->update_vsyscall_aux)
			attached[i]->update_vsyscall_aux(&tk_core.aux[n]);
}

static void tk_write_seq_begin(void)
{
	__atomic_store_n(&tk_core.seq, tk_core.seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void tk_write_seq_end(void)
{
	__atomic_store_n(&tk_core.seq, tk_core.seq + 1, __ATOMIC_RELEASE);
}

struct timekeeper *sim_tk_write_begin(void)
{
	pthread_mutex_lock(&tk_lock);
	tk_write_seq_begin();
	return &tk_core.tk;
}

void sim_tk_write_end(void)
{
	timekeeping_update();
	tk_fast_update();
	tk_write_seq_end();
	pthread_mutex_unlock(&tk_lock);
}

void sim_kernel_reset(const struct tk_clocksource *cs, u64 now,
		      const struct timespec64 *wall,
		      const struct timespec64 *mono)
{
	struct timekeeper *tk = sim_tk_write_begin();

	tk_setup(tk, cs, now, wall, mono);
	sim_tk_write_end();

	pthread_mutex_lock(&tk_lock);
	tk_core.aux_timekeepers = 0;
	for (unsigned int n = 0; n < MAX_AUX_CLOCKS; n++) {
		memset(&tk_core.aux[n], 0, sizeof(tk_core.aux[n]));
		tk_core.aux[n].id = (u8)(TIMEKEEPER_AUX_FIRST + n);
		timekeeping_update_aux(n);
	}
	aux_fast_update();
	pthread_mutex_unlock(&tk_lock);
}

/* the aux id of clk, or -1 */
static int aux_index(clockid_t clk)
{
	return clk >= CLOCK_AUX && clk <= CLOCK_AUX_LAST ? clk - CLOCK_AUX : -1;
}

struct timekeeper *sim_aux_write_begin(unsigned int n)
{
	pthread_mutex_lock(&tk_lock);
	return &tk_core.aux[n];
}

void sim_aux_write_end(unsigned int n)
{
	timekeeping_update_aux(n);
	aux_fast_update();
	pthread_mutex_unlock(&tk_lock);
}

int sim_aux_clock_enable(unsigned int n, bool enable, u64 now)
{
	struct timekeeper *aux;

	if (n >= MAX_AUX_CLOCKS)
		return -EINVAL;
	aux = sim_aux_write_begin(n);
	if (enable != !!(tk_core.aux_timekeepers & BIT(n))) {
		if (enable) {
			tk_aux_enable(aux, TIMEKEEPER_AUX_FIRST + n, &tk_core.tk,
				      now);
			tk_core.aux_timekeepers |= (u32)BIT(n);
		} else {
			tk_aux_disable(aux);
			tk_core.aux_timekeepers &= ~(u32)BIT(n);
		}
	}
	sim_aux_write_end(n);
	return 0;
}

int sim_aux_clock_settime(clockid_t clk, u64 now, const struct timespec64 *ts)
{
	int n = aux_index(clk), ret;

	if (n < 0)
		return -EINVAL;
	ret = tk_aux_settime(sim_aux_write_begin((unsigned int)n), now, ts);
	sim_aux_write_end((unsigned int)n);
	return ret;
}

int sim_aux_clock_adjtime(clockid_t clk, u64 now, s32 mult_adj)
{
	int n = aux_index(clk), ret;

	if (n < 0)
		return -EINVAL;
	ret = tk_aux_adjust_mult(sim_aux_write_begin((unsigned int)n), now,
				 mult_adj);
	sim_aux_write_end((unsigned int)n);
	return ret;
}

void sim_aux_advance(u64 now)
{
	u32 active = __atomic_load_n(&tk_core.aux_timekeepers, __ATOMIC_RELAXED);

	for (unsigned int n = 0; n < MAX_AUX_CLOCKS; n++) {
		if (!(active & BIT(n)))
			continue;
		tk_forward(sim_aux_write_begin(n), now);
		sim_aux_write_end(n);
	}
}

void sim_set_sys_tz(const struct timezone *tz)
{
	pthread_mutex_lock(&tk_lock);
	tk_core.sys_tz = *tz;
	for (int i = 0; i < SIM_MAX_ATTACHED; i++)
		if (attached[i])
			attached[i]->update_vsyscall_tz(&tk_core.sys_tz);
	pthread_mutex_unlock(&tk_lock);
}

int sim_kernel_attach(const struct vdso_variant *v)
{
	int slot = -1;

	if (v->init && v->init())
		return -1;

	pthread_mutex_lock(&tk_lock);
	for (int i = 0; i < SIM_MAX_ATTACHED; i++) {
		if (attached[i] == v) {
			pthread_mutex_unlock(&tk_lock);
			return 0;
		}
		if (!attached[i] && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		pthread_mutex_unlock(&tk_lock);
		errno = ENOSPC;
		return -1;
	}
	attached[slot] = v;
	tk_write_seq_begin();
	v->update_vsyscall(&tk_core.tk);
	v->update_vsyscall_tz(&tk_core.sys_tz);
	for (unsigned int n = 0; v->update_vsyscall_aux && n < MAX_AUX_CLOCKS; n++)
		v->update_vsyscall_aux(&tk_core.aux[n]);
	tk_write_seq_end();
	pthread_mutex_unlock(&tk_lock);
	return 0;
}

void sim_kernel_detach(const struct vdso_variant *v)
{
	pthread_mutex_lock(&tk_lock);
	for (int i = 0; i < SIM_MAX_ATTACHED; i++)
		if (attached[i] == v)
			attached[i] = NULL;
	pthread_mutex_unlock(&tk_lock);
}

void sim_kernel_detach_all(void)
{
	pthread_mutex_lock(&tk_lock);
	memset(attached, 0, sizeof(attached));
	pthread_mutex_unlock(&tk_lock);
}

int sim_timens_enter(const struct vdso_variant *v,
		     const struct timens_offsets *offs)
{
	int ret;

	if (!v->timens_enter) {
		errno = EOPNOTSUPP;
		return -1;
	}
	pthread_mutex_lock(&tk_lock);
	ret = v->timens_enter(offs);
	if (!ret) {
		tk_write_seq_begin();
		tk_core.timens = *offs;
		tk_core.timens_active = true;
		tk_fast_update();
		tk_write_seq_end();
	}
	pthread_mutex_unlock(&tk_lock);
	return ret;
}

int sim_timens_leave(const struct vdso_variant *v)
{
	int ret;

	if (!v->timens_leave) {
		errno = EOPNOTSUPP;
		return -1;
	}
	pthread_mutex_lock(&tk_lock);
	ret = v->timens_leave();
	if (!ret) {
		tk_write_seq_begin();
		memset(&tk_core.timens, 0, sizeof(tk_core.timens));
		tk_core.timens_active = false;
		tk_fast_update();
		tk_write_seq_end();
	}
	pthread_mutex_unlock(&tk_lock);
	return ret;
}

int sim_clock_ns(const struct timekeeper *tk, clockid_t clk, u64 now,
		 wide_ns *ns)
{
	struct tk_state st;
	int ret = tk_clock_ns(tk, clk, now, ns);

	if (ret)
		return ret;
	tk_fast_read(&st);
	if (st.timens_active)
		*ns += timens_offset_ns(&st.timens, clk);
	return 0;
}

static bool sim_is_cputime(clockid_t clk)
{
	return clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID;
}

u64 sim_syscall_count(void)
{
	return __atomic_load_n(&nr_syscalls, __ATOMIC_RELAXED);
}

/*
 * clock_aux (kernel/time/timekeeping.c, v6.17): aux_get_timespec() and
 * aux_get_res(), -ENODEV for a disabled clock; aux clocks are not
 * namespaced. Out of line, so the other clocks' path stays as it was.
 */
static noinline long sys_aux_clock_gettime(clockid_t clk, struct timespec *ts,
					   u64 now)
{
	struct timekeeper aux;
	wide_ns ns;
	int ret;

	aux_fast_read((unsigned int)aux_index(clk), &aux);
	ret = tk_aux_clock_ns(&aux, now, &ns);
	if (!ret)
		ns_to_timespec(ns, ts);
	return ret;
}

static noinline long sys_aux_clock_getres(clockid_t clk, struct timespec *res)
{
	struct timekeeper aux;

	aux_fast_read((unsigned int)aux_index(clk), &aux);
	if (!aux.clock_valid)
		return -ENODEV;
	if (res) {
		/* aux_clock_resolution_ns() */
		res->tv_sec = 0;
		res->tv_nsec = 1;
	}
	return 0;
}

long sim_sys_clock_gettime(clockid_t clk, struct timespec *ts, u64 now,
			   bool aux_clocks)
{
	struct tk_state st;
	struct timespec kts;
	wide_ns ns;
	long ret;

	__atomic_fetch_add(&nr_syscalls, 1, __ATOMIC_RELAXED);

	/* CPU-time clocks are the host kernel's accounting, not timekeeping */
	if (sim_is_cputime(clk))
		return raw_syscall2(SYS_clock_gettime, clk, (long)ts);
	/* the clocksource's read of the counter: kvm_clock_read() under pvclock */
	now = sim_vclock_cycles(now);

	ret = raw_syscall2(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&kts);
	if (ret)
		return ret;
	if (unlikely(aux_clocks) && aux_index(clk) >= 0)
		return sys_aux_clock_gettime(clk, ts, now);

	tk_fast_read(&st);
	ret = tk_clock_ns(&st.tk, clk, now, &ns);
	if (ret)
		return ret; /* negative, >= MAX_CLOCKS, or unused ids: -EINVAL */
	if (st.timens_active)
		ns += timens_offset_ns(&st.timens, clk);
	ns_to_timespec(ns, ts);
	return 0;
}

long sim_sys_clock_getres(clockid_t clk, struct timespec *res,
			  bool aux_clocks)
{
	struct timekeeper tk;
	struct timespec kres;
	wide_ns unused;
	long ret;

	__atomic_fetch_add(&nr_syscalls, 1, __ATOMIC_RELAXED);

	if (sim_is_cputime(clk))
		return raw_syscall2(SYS_clock_getres, clk, (long)res);

	ret = raw_syscall2(SYS_clock_getres, CLOCK_MONOTONIC, (long)&kres);
	if (ret)
		return ret;

	if (aux_clocks && aux_index(clk) >= 0)
		return sys_aux_clock_getres(clk, res);

	sim_tk_snapshot(&tk);
	if (tk_clock_ns(&tk, clk, 0, &unused))
		return -EINVAL;
	if (!res)
		return 0;
	res->tv_sec = 0;
	/* posix_get_coarse_res() vs posix_get_hrtimer_res() */
	if (suite_clock_is(clk, SUITE_COARSE))
		res->tv_nsec = LOW_RES_NSEC;
	else
		res->tv_nsec = tk.hrtimer_res;
	return 0;
}

long sim_sys_gettimeofday(struct timeval *tv, struct timezone *tz, u64 now)
{
	struct timeval ktv;
	long ret;

	__atomic_fetch_add(&nr_syscalls, 1, __ATOMIC_RELAXED);

	ret = raw_syscall2(SYS_gettimeofday, (long)&ktv, 0);
	if (ret)
		return ret;

	if (tv) {
		struct timekeeper tk;
		wide_ns ns;

		sim_tk_snapshot(&tk);
		tk_clock_ns(&tk, CLOCK_REALTIME, sim_vclock_cycles(now), &ns);
		tv->tv_sec = (time_t)(ns / NSEC_PER_SEC);
		tv->tv_usec = (suseconds_t)(ns % NSEC_PER_SEC / NSEC_PER_USEC);
	}
	if (tz) {
		pthread_mutex_lock(&tk_lock);
		*tz = tk_core.sys_tz;
		pthread_mutex_unlock(&tk_lock);
	}
	return 0;
}

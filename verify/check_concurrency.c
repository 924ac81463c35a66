// SPDX-License-Identifier: GPL-2.0
/*
 * The concurrency checker: one writer publishing update_vsyscall() as
 * fast as it can, readers on the other CPUs checking every result.
 *
 * The writer keeps every timekeeper it publishes in a ring, numbered by
 * generation, and bumps hist_gen *before* publishing. A reader that saw
 * hist_gen == G before its call and H after it can only have read data
 * from generations G-1..H (G-1 was fully published before G was
 * numbered). A correct variant returns what one of those timekeepers
 * gives for the counter value the reader used: exactly, with the fake
 * counter; between the values at the two ordered counter reads that
 * bracket the call, with a real one.
 *
 * Phase A makes mixing visible: every generation changes mono's mult by
 * +-50% and cycle_last stays far behind the readers' counter, so old mult
 * with a new base is tens of milliseconds off; wall and boot offsets
 * jump by whole seconds. Phase B is a kernel that only ticks and sleeps,
 * where every clock must also be monotonic per reader. Phase C (layouts
 * with v6.17 aux clocks) does phase A's to one aux clock, which has a
 * seqcount of its own. Phase H (verify --clock-mode pvclock|hvclock) keeps
 * the timekeeper still while the host rewrites its page as fast as it can,
 * between two anchors that give the readers' TSC the same time
 * (impls/kernel/sim_vclock.h): a read that mixes them is seconds off.
 * Hyper-V's anchors agree at one TSC value, which every reader reads: with
 * the fake counter only.
 *
 * A real counter is bracketed, not trapped: the race wants the real
 * instruction's timing and ordering, which a fault per read (the trap
 * serialises) would hide. Only where the CPU lacks the instruction
 * (RDTSCP) do the readers trap it and emulate it (verify/tsc_trap.h), with
 * exact values as the fake counter's, so the variant is checked at all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np() */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clocks.h"
#include "impls/counters/available.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"
#include "verify/check.h"
#include "verify/tsc_trap.h"

#define RING 4096
#define LAST 1000000ULL
#define STEP (1ULL << 16) /* fake counter cycles per generation */
#define MIN_CHECKED 1000 /* fewer reads and the check did not run */
#define TRAPPED_SLOWER 8
#define AHEAD 1024 /* generations the fake readers' counter runs ahead */
#define REAL_LAG (1ULL << 28) /* real counter: cycle_last this far behind */
/* phase B, fake counter: the writer ticks this far behind the readers' */
#define TICK_LAG (1ULL << 20)
#define MAX_READERS 16

/*
 * Phase C, for layouts with the v6.17 auxiliary clocks: the writer steers
 * and sets aux clock AUX_N alone, under its own seqcount, as phase A
 * steers the core, and the readers read that clock.
 */
enum phase { PHASE_TORN, PHASE_MONOTONIC, PHASE_AUX, PHASE_HOST };
#define AUX_N 2

struct cpu_plan;

struct shared {
	const struct vdso_variant *v;
	const struct cpu_plan *cpus;
	bool trapped; /* the readers trap their counter (see the top) */
	bool exact; /* the readers choose their counter values */
	int pin_errno; /* the first refused pinning, 0 if none */
	enum phase phase;
	unsigned int duration_ms;
	int stop;
	u64 hist_gen;
	u64 fake_now; /* phase B's shared fake clock */
	u64 host_cycles; /* phase H: where the anchors agree, if not everywhere */
	struct timekeeper hist[RING];
	u32 base_mult;
	/* the namespace the phase runs in, fixed while it runs */
	bool timens_active;
	struct timens_offsets timens;
	pthread_mutex_t fail_lock;
	struct check_report *r;
};

struct reader_stats {
	u64 checked;
	u64 inconclusive;
	u64 trapped_reads;
};

static const clockid_t reader_clocks[] = { SUITE_CLOCKS(SUITE_CLOCK_ID) };

/* pseudo-clocks for the other two readers */
#define READ_GETTIMEOFDAY (-100)
#define READ_TIME (-101)

static u64 xorshift64(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/*
 * A torn read needs the writer to finish an update while a reader is
 * inside its few-nanosecond window: both must really run at once. The
 * writer takes the first CPU of this process's affinity mask and the
 * readers the others, so the scheduler can't stack them on one and a
 * restricted cpuset (taskset, a container) is respected. With one CPU, or
 * where the kernel refuses, they run unpinned, and the report says so.
 */
struct cpu_plan {
	int cpu[MAX_READERS + 1]; /* [0] the writer's, then the readers' */
	int nr_cpus; /* in the affinity mask; < 2: nobody is pinned */
};

/* the n-th CPU (from 0) of mask, or -1 */
static int nth_cpu(const cpu_set_t *mask, int n)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, mask) && n-- == 0)
			return c;
	return -1;
}

static void plan_cpus(struct cpu_plan *p)
{
	cpu_set_t mask;

	memset(p, 0, sizeof(*p));
	if (sched_getaffinity(0, sizeof(mask), &mask))
		return;
	p->nr_cpus = CPU_COUNT(&mask);
	if (p->nr_cpus < 2)
		return;
	/* the writer alone on its CPU; readers share the rest round robin */
	p->cpu[0] = nth_cpu(&mask, 0);
	for (int i = 1; i <= MAX_READERS; i++)
		p->cpu[i] = nth_cpu(&mask, 1 + (i - 1) % (p->nr_cpus - 1));
}

/* 0, or the errno of a refused pinning (which leaves the thread unpinned) */
static int pin_self(const struct cpu_plan *p, int who)
{
	cpu_set_t set;

	if (p->nr_cpus < 2 || p->cpu[who] < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(p->cpu[who], &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void note_pinning(struct shared *sh, int err)
{
	int none = 0;

	if (err)
		__atomic_compare_exchange_n(&sh->pin_errno, &none, err, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* phase C's generation g: aux clock AUX_N's mult swings and offset jumps */
static void aux_write(struct shared *sh, u64 g, bool fake)
{
	struct timekeeper *tk = sim_aux_write_begin(AUX_N);
	u64 now = fake ? LAST + g * STEP : sim_read_clocksource() - REAL_LAG;

	tk_adjust_mult(tk, now, (g & 1) ? (s32)(sh->base_mult / 2) :
					  -(s32)(sh->base_mult / 2));
	if (g % 3 == 0) {
		struct timespec64 ts = { 1700000000 + (s64)(g % 2) * 1000, 0 };

		tk_aux_settime(tk, now, &ts);
	}
	sh->hist[g % RING] = *tk;
	__atomic_store_n(&sh->hist_gen, g, __ATOMIC_RELEASE);
	sim_aux_write_end(AUX_N);
}

static void *writer_main(void *arg)
{
	struct shared *sh = arg;
	const bool fake = sh->exact;
	u64 g = __atomic_load_n(&sh->hist_gen, __ATOMIC_RELAXED);
	u64 host_writes = 0;
	s64 wall_jump = 1000;

	note_pinning(sh, pin_self(sh->cpus, 0));
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		struct timekeeper *tk;
		u64 now;

		if (sh->phase == PHASE_AUX) {
			aux_write(sh, ++g, fake);
			continue;
		}
		if (sh->phase == PHASE_HOST) {
			/* the timekeeper's generation stays: only the host writes */
			sim_vclock_reanchor((unsigned int)(++host_writes & 1),
					    sh->host_cycles);
			continue;
		}
		tk = sim_tk_write_begin();
		g++;
		if (sh->phase == PHASE_TORN) {
			now = fake ? LAST + g * STEP :
				     sim_read_clocksource() - REAL_LAG;
			tk_adjust_mult(tk, now,
				       (g & 1) ? (s32)(sh->base_mult / 2) :
						 -(s32)(sh->base_mult / 2));
			if (g % 3 == 0) {
				struct timespec64 ts = {
					(s64)tk->xtime_sec + wall_jump, 0
				};

				tk_settime(tk, now, &ts);
				wall_jump = -wall_jump;
			}
			if (g % 5 == 0)
				tk_inject_sleep(tk, now,
						&(struct timespec64){ 1, 0 });
		} else {
			/*
			 * The fake counter's readers took their values
			 * before their calls; a tick at the latest value
			 * would publish a cycle_last ahead of a reader still
			 * in its call, which a real counter, read after the
			 * seqcount, never is: arm64's vDSO (no clamp) would
			 * read that as a huge delta. So the writer ticks
			 * TICK_LAG behind them (a tick behind cycle_last
			 * changes nothing).
			 */
			now = fake ? __atomic_load_n(&sh->fake_now,
						     __ATOMIC_ACQUIRE) - TICK_LAG :
				     sim_read_clocksource();
			tk_forward(tk, now);
			if (g % 7 == 0)
				tk_inject_sleep(tk, now,
						&(struct timespec64){ 0, 10000000 });
		}
		sh->hist[g % RING] = *tk;
		__atomic_store_n(&sh->hist_gen, g, __ATOMIC_RELEASE);
		sim_tk_write_end();
	}
	return NULL;
}

/*
 * The oracle for one reading under timekeeper tk, in the reading's unit.
 * It must not touch the simulated kernel's seqcount: the writer holds
 * it odd most of the time, and a reader spinning on it would be
 * throttled to the writer's pace and miss the races it hunts.
 */
static wide_ns expected(const struct shared *sh, const struct timekeeper *tk,
			 clockid_t what, u64 c)
{
	clockid_t clk = what == READ_GETTIMEOFDAY ? CLOCK_REALTIME : what;
	wide_ns ns;

	if (what == READ_TIME)
		return (wide_ns)tk->xtime_sec;
	if (check_is_aux(what)) /* tk is the aux clock's, in phase C */
		return tk_aux_clock_ns(tk, c, &ns) ? -1 : ns;
	tk_clock_ns(tk, clk, c, &ns);
	if (sh->timens_active)
		ns += timens_offset_ns(&sh->timens, clk);
	return what == READ_GETTIMEOFDAY ? ns / NSEC_PER_USEC : ns;
}

static const char *what_name(clockid_t what)
{
	if (what == READ_TIME)
		return "time()";
	if (what == READ_GETTIMEOFDAY)
		return "gettimeofday()";
	return check_clock_name(what);
}

/*
 * Is got what some generation in [lo_gen, hi_gen] gives for a counter in
 * [c_lo, c_hi]? 1 yes, 0 no, -1 the ring was overwritten meanwhile.
 */
static int consistent(struct shared *sh, clockid_t what, wide_ns got,
		      u64 lo_gen, u64 hi_gen, u64 c_lo, u64 c_hi,
		      wide_ns *nearest)
{
	struct timekeeper tk;
	wide_ns best = 0;
	bool have = false;

	if (hi_gen - lo_gen >= RING / 2)
		return -1;
	for (u64 g = lo_gen; g <= hi_gen; g++) {
		wide_ns lo, hi;

		tk = sh->hist[g % RING];
		if (__atomic_load_n(&sh->hist_gen, __ATOMIC_ACQUIRE) >=
		    g + RING - 1)
			return -1;
		/*
		 * A fake counter chosen before the call can fall behind the
		 * cycle_last of a generation published during it (a reader
		 * preempted for more than AHEAD generations). x86's vDSO
		 * clamps that to a zero delta, which the oracle does too;
		 * arm64's reads it as a huge one, rightly: its real counter,
		 * read after the seqcount, is never behind. Not checkable.
		 */
		if (IS_ENABLED(VDSO_ARCH_TIMER) && c_lo < tk.tkr_mono.cycle_last)
			return -1;
		lo = expected(sh, &tk, what, c_lo) -
		     (check_is_aux(what) ? CHECK_AUX_VDSO_SLACK_NS : 0);
		hi = expected(sh, &tk, what, c_hi);
		if (got >= lo && got <= hi)
			return 1;
		if (!have || (got - lo < 0 ? lo - got : got - lo) <
				     (got - best < 0 ? best - got : got - best)) {
			best = lo;
			have = true;
		}
	}
	*nearest = best;
	return 0;
}

static void fail(struct shared *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct shared *sh, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&sh->fail_lock);
	check_fail(sh->r, "%s", buf);
	pthread_mutex_unlock(&sh->fail_lock);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
}

static wide_ns do_read(const struct vdso_variant *v, clockid_t what, int *ret)
{
	if (what == READ_TIME) {
		*ret = 0;
		return (wide_ns)v->time(NULL);
	}
	if (what == READ_GETTIMEOFDAY) {
		struct timeval tv;

		*ret = v->gettimeofday(&tv, NULL);
		return (wide_ns)tv.tv_sec * USEC_PER_SEC + tv.tv_usec;
	}
	{
		struct timespec ts;

		*ret = v->clock_gettime(what, &ts);
		if (!*ret && (ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC))
			*ret = -ERANGE;
		return timespec_to_ns(&ts);
	}
}

struct reader_arg {
	struct shared *sh;
	struct reader_stats stats;
	u64 seed;
	int who; /* 1..: its CPU is sh->cpus->cpu[who] */
};

static void *reader_main(void *arg)
{
	struct reader_arg *ra = arg;
	struct shared *sh = ra->sh;
	const struct vdso_variant *v = sh->v;
	const unsigned int nclocks = ARRAY_SIZE(reader_clocks) + 2;
	wide_ns last[ARRAY_SIZE(reader_clocks) + 2];
	bool have_last[ARRAY_SIZE(reader_clocks) + 2] = { false };
	u64 rng = ra->seed, reads = tsc_trap_reads();
	char why[160];

	note_pinning(sh, pin_self(sh->cpus, ra->who));
	if (sh->trapped && tsc_trap_on(why, sizeof(why))) {
		fail(sh, "a reader cannot trap its counter: %s", why);
		return NULL;
	}
	for (u64 i = 0; !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED); i++) {
		unsigned int k = (unsigned int)(i % nclocks);
		clockid_t what = sh->phase == PHASE_AUX ? CLOCK_AUX + AUX_N :
				 k < ARRAY_SIZE(reader_clocks) ?
					 reader_clocks[k] :
					 (k == nclocks - 2 ? READ_GETTIMEOFDAY :
							     READ_TIME);
		u64 g0, g1, c_lo, c_hi;
		wide_ns got, nearest = 0;
		int ret, ok;

		g0 = __atomic_load_n(&sh->hist_gen, __ATOMIC_ACQUIRE);
		if (!sh->exact) {
			c_lo = sim_read_clocksource();
			got = do_read(v, what, &ret);
			c_hi = sim_read_clocksource();
		} else {
			if (sh->phase == PHASE_HOST && sh->host_cycles)
				c_lo = sh->host_cycles;
			else if (sh->phase != PHASE_MONOTONIC)
				c_lo = LAST + (g0 + AHEAD) * STEP +
				       xorshift64(&rng) % STEP;
			else
				c_lo = __atomic_fetch_add(&sh->fake_now,
							  1 + xorshift64(&rng) % 997,
							  __ATOMIC_ACQ_REL);
			c_hi = c_lo;
			check_set_cycles(c_lo);
			got = do_read(v, what, &ret);
		}
		g1 = __atomic_load_n(&sh->hist_gen, __ATOMIC_ACQUIRE);

		if (ret) {
			fail(sh, "%s returned %d under a concurrent writer",
			     what_name(what), ret);
			break;
		}
		ok = consistent(sh, what, got, g0 ? g0 - 1 : 0, g1, c_lo, c_hi,
				&nearest);
		if (ok < 0) {
			ra->stats.inconclusive++;
			continue;
		}
		ra->stats.checked++;
		if (!ok) {
			const char *unit = what == READ_TIME	     ? " s" :
					   what == READ_GETTIMEOFDAY ? " us" :
								       " ns";

			fail(sh,
			     "torn read: %s = %lld%s matches no snapshot of "
			     "generations %llu..%llu (nearest is %lld%s off) "
			     "after %llu good reads",
			     what_name(what), (long long)got, unit,
			     (unsigned long long)(g0 ? g0 - 1 : 0),
			     (unsigned long long)g1, (long long)(got - nearest),
			     unit,
			     (unsigned long long)ra->stats.checked);
			break;
		}
		if (sh->phase == PHASE_MONOTONIC) {
			if (have_last[k] && got < last[k]) {
				fail(sh, "%s went backwards by %lld under a "
					 "ticking writer",
				     what_name(what), (long long)(last[k] - got));
				break;
			}
			last[k] = got;
			have_last[k] = true;
		}
	}
	ra->stats.trapped_reads = tsc_trap_reads() - reads;
	tsc_trap_off();
	return NULL;
}

static int run_phase(struct shared *sh, enum phase phase, int nreaders,
		     struct reader_stats *total)
{
	struct reader_arg ra[MAX_READERS];
	pthread_t writer, readers[MAX_READERS];
	u64 start;

	sh->phase = phase;
	__atomic_store_n(&sh->stop, 0, __ATOMIC_RELAXED);
	if (phase == PHASE_AUX)
		sim_aux_snapshot(AUX_N, &sh->hist[sh->hist_gen % RING]);
	else
		sim_tk_snapshot(&sh->hist[sh->hist_gen % RING]);
	/* phase B's readers start TICK_LAG ahead, so the writer ticks at once */
	sh->fake_now = sh->hist[sh->hist_gen % RING].tkr_mono.cycle_last +
		       (phase == PHASE_MONOTONIC ? TICK_LAG : 0);

	if (pthread_create(&writer, NULL, writer_main, sh))
		return -1;
	for (int i = 0; i < nreaders; i++) {
		ra[i] = (struct reader_arg){ .sh = sh,
					     .seed = 0x9e3779b97f4a7c15ULL *
						     (u64)(i + 1 + phase * 31),
					     .who = i + 1 };
		if (pthread_create(&readers[i], NULL, reader_main, &ra[i])) {
			nreaders = i;
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	start = check_now_ms();
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) &&
	       check_now_ms() - start < sh->duration_ms)
		usleep(2000);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nreaders; i++) {
		pthread_join(readers[i], NULL);
		total->checked += ra[i].stats.checked;
		total->inconclusive += ra[i].stats.inconclusive;
		total->trapped_reads += ra[i].stats.trapped_reads;
	}
	pthread_join(writer, NULL);
	return 0;
}

/* where the writer and readers ran, for the report */
static void describe_cpus(const struct cpu_plan *p, int nreaders, int pin_errno,
			  char *buf, size_t len)
{
	size_t used;

	if (p->nr_cpus < 2) {
		snprintf(buf, len,
			 p->nr_cpus ? "writer and reader share the one CPU "
				      "this process may use, so they cannot "
				      "run at once and a torn read is unlikely "
				      "to be seen here"
				    : "writer and reader unpinned: the "
				      "process's CPUs are unknown");
		return;
	}
	if (pin_errno) {
		snprintf(buf, len,
			 "pinning refused (%s): writer and readers ran "
			 "unpinned",
			 strerror(pin_errno));
		return;
	}
	used = (size_t)snprintf(buf, len, "writer on CPU %d, reader%s on %d",
				p->cpu[0], nreaders > 1 ? "s" : "", p->cpu[1]);
	/* the readers' CPUs: cpu[1..] repeats after nr_cpus - 1 of them */
	for (int i = 2; i <= nreaders && i < p->nr_cpus && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, ",%d",
					 p->cpu[i]);
}

int check_concurrency(const struct vdso_variant *v, unsigned int duration_ms,
		      struct check_report *r)
{
	static struct shared sh; /* the ring is too big for a stack */
	struct reader_stats total = { 0, 0, 0 };
	struct tk_clocksource cs;
	struct cpu_plan cpus;
	int nreaders;
	bool real;
	char where[160];
	u64 gens;

	plan_cpus(&cpus);
	nreaders = cpus.nr_cpus > 1 ? cpus.nr_cpus - 1 : 1;
	if (nreaders > MAX_READERS)
		nreaders = MAX_READERS;
	r->name = "concurrency";
	r->ok = true;

	memset(&sh, 0, sizeof(sh));
	sh.v = v;
	sh.cpus = &cpus;
	sh.r = r;
	sh.trapped = check_read_needs_trap(v);
	/*
	 * An emulated read is a fault and a signal handler, microseconds
	 * under a hypervisor, far more under qemu's TCG: its readers get
	 * TRAPPED_SLOWER times as long to reach the reads the check needs.
	 */
	sh.duration_ms = sh.trapped ? duration_ms * TRAPPED_SLOWER : duration_ms;
	/* a fake-counter variant that reads the counter itself races as a real one */
	real = check_real_read(v);
	sh.exact = !real || sh.trapped;
	r->counter = !real ? "fake" : sh.trapped ? "trapped" : "real";
	pthread_mutex_init(&sh.fail_lock, NULL);

	check_reset_fake_kernel(&cs,
				!sh.exact ?
					sim_read_clocksource() - REAL_LAG :
					LAST);
	sh.base_mult = cs.mult;
	if (check_attach(v))
		return check_fail(r, "attach: %m"), -1;

	if (run_phase(&sh, PHASE_TORN, nreaders, &total))
		check_fail(r, "could not start the writer thread");
	/* Hyper-V's anchors agree at one TSC value: fake readers read it */
	if (r->ok && sim_vclock_mode() != SIM_VCLOCK_TSC &&
	    (sh.exact || sim_vclock_anchors_agree_everywhere())) {
		sh.host_cycles = sim_vclock_anchors_agree_everywhere() ? 0 :
				 LAST + (sh.hist_gen + AHEAD) * STEP;
		run_phase(&sh, PHASE_HOST, nreaders, &total);
		sim_vclock_reanchor(0, sh.host_cycles);
	}
	if (r->ok && v->has_timens) {
		sh.timens = (struct timens_offsets){ { 3600, 1 }, { 7200, 2 } };
		if (sim_timens_enter(v, &sh.timens))
			check_fail(r, "time namespace: %s", strerror(errno));
		sh.timens_active = true;
	}
	if (r->ok) {
		/* phase B restarts from the writer's latest timekeeper */
		struct timekeeper *tk = sim_tk_write_begin();
		u64 now = !sh.exact ? sim_read_clocksource() :
				      tk->tkr_mono.cycle_last;

		/* in s64: phase A leaves mult up to 1.5 x a 32-bit one */
		tk_adjust_mult(tk, now, (s32)((s64)cs.mult - (s64)tk->tkr_mono.mult));
		sim_tk_write_end();
		run_phase(&sh, PHASE_MONOTONIC, nreaders, &total);
	}
	if (r->ok && (v->aux_clocks & BIT(CLOCK_AUX + AUX_N))) {
		u64 g = __atomic_load_n(&sh.hist_gen, __ATOMIC_RELAXED) + 1;
		u64 now = !sh.exact ? sim_read_clocksource() - REAL_LAG :
				      LAST + g * STEP;

		sim_aux_clock_enable(AUX_N, true, now);
		sim_aux_clock_settime(CLOCK_AUX + AUX_N, now,
				      &(struct timespec64){ 1700000000, 0 });
		run_phase(&sh, PHASE_AUX, nreaders, &total);
		sim_aux_clock_enable(AUX_N, false, now);
	}
	if (v->has_timens)
		sim_timens_leave(v);
	sim_kernel_detach(v);
	gens = __atomic_load_n(&sh.hist_gen, __ATOMIC_RELAXED);
	r->calls = total.checked;
	pthread_mutex_destroy(&sh.fail_lock);

	if (r->ok && sh.trapped && !total.trapped_reads)
		check_fail(r, "the trap saw no counter read: the variant "
			      "did not read its counter");
	if (r->ok && check_known_bad(v) && sim_vclock_mode() != SIM_VCLOCK_TSC &&
	    !sh.exact && !sim_vclock_anchors_agree_everywhere()) {
		/* this mode's negative control races the host in phase H alone */
		r->skipped = true;
		check_note(r, "did not run phase H, the one this control needs: "
			      "Hyper-V's anchors agree at one TSC value, which "
			      "only the fake counter holds (see %s+fake+%s)",
			   v->layout, v->inline_mode);
		return 0;
	}
	if (r->ok && total.checked < MIN_CHECKED && sh.trapped) {
		/* today's SKIP of a counter this CPU lacks, not a catch */
		r->skipped = true;
		check_note(r, "did not run: only %llu reads checked (%llu "
			      "inconclusive) through the emulated counter",
			   (unsigned long long)total.checked,
			   (unsigned long long)total.inconclusive);
		return 0;
	}
	r->starved = r->ok && total.checked < MIN_CHECKED;
	if (r->starved)
		check_fail(r, "only %llu reads could be checked (%llu "
			      "inconclusive): the checker did not run",
			   (unsigned long long)total.checked,
			   (unsigned long long)total.inconclusive);
	describe_cpus(&cpus, nreaders, sh.pin_errno, where, sizeof(where));
	if (r->ok)
		check_note(r, "%llu reads by %d reader%s checked against %llu "
			      "published generations (%llu inconclusive)%s%s%s; %s",
			   (unsigned long long)total.checked, nreaders,
			   nreaders > 1 ? "s" : "", (unsigned long long)gens,
			   (unsigned long long)total.inconclusive,
			   v->has_timens ? "; phase B in a time namespace" :
			   v->aux_clocks ? "; phase C on an aux clock" : "",
			   sim_vclock_mode() == SIM_VCLOCK_TSC ? "" :
			   sh.exact || sim_vclock_anchors_agree_everywhere() ?
				   "; phase H: the host rewriting its page" :
				   "; no phase H (Hyper-V's anchors agree at one "
				   "TSC value: the fake counter's)",
			   sh.trapped ? "; the readers' counter trapped and "
					"emulated (this CPU lacks it)" : "",
			   where);
	return r->ok ? 0 : -1;
}

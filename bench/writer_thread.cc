// SPDX-License-Identifier: GPL-2.0
#include "bench/writer_thread.h"

#include <sched.h>
#include <time.h>

#include "bench/harness.h"

extern "C" {
#include "impls/kernel/sim_system.h"
}

bool writer_thread::start()
{
	thread_ = std::thread([this] { run(); });
	while (!ready_.load())
		sched_yield();
	return bind_ok_;
}

void writer_thread::stop()
{
	stop_.store(true);
	thread_.join();
}

void writer_thread::run()
{
	unsigned int hz = harness().hz;
	struct timespec next, t0, t1;

	bind_ok_ = harness_bind(cpu_) == 0;
	ready_.store(true);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	while (!stop_.load(std::memory_order_relaxed)) {
		sim_kernel_tick();
		updates_++;
		if (!hz)
			continue;
		next.tv_nsec += 1000000000L / hz;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	seconds_ = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

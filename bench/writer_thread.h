// SPDX-License-Identifier: GPL-2.0
//
// The writer mode's kernel: update_vsyscall() (a simulated kernel tick) at
// harness().hz on another CPU, while the benchmark's thread reads.
#ifndef VDSOBENCH_BENCH_WRITER_THREAD_H
#define VDSOBENCH_BENCH_WRITER_THREAD_H

#include <atomic>
#include <thread>

class writer_thread
{
      public:
	explicit writer_thread(int cpu) : cpu_(cpu)
	{
	}
	// false if it could not bind to its CPU (stop() it all the same)
	bool start();
	void stop();
	// updates per second over the run
	double rate() const
	{
		return seconds_ > 0 ? updates_ / seconds_ : 0;
	}

      private:
	void run();

	int cpu_;
	std::thread thread_;
	std::atomic<bool> ready_{false}, stop_{false};
	bool bind_ok_ = false;
	double updates_ = 0, seconds_ = 0;
};

#endif // VDSOBENCH_BENCH_WRITER_THREAD_H

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel/time/vsyscall.c's arithmetic, the same from v5.3 to v6.17: the
 * struct vdso_timestamp bases update_vsyscall() stores, whichever struct
 * holds them (vdso_data[] up to v6.14, vdso_clock from v6.15). The data
 * page header that includes this has defined struct vdso_timestamp and
 * VDSO_BASES. Called with the page's seqcount odd.
 */
#ifndef VDSOBENCH_VSYSCALL_BASES_H
#define VDSOBENCH_VSYSCALL_BASES_H

/*
 * update_vsyscall(): CLOCK_REALTIME (also required for time()) and the
 * coarse clocks, stored whatever the clocksource. The coarse ones take
 * tk->coarse_nsec from v6.15-rc upstream, which the simulated timekeeper
 * does not keep: it is xtime_nsec >> shift at every update here, since an
 * NTP adjustment forwards the timekeeper first (tk_adjust_mult()).
 */
static inline void vsyscall_update_coarse(struct vdso_timestamp *basetime,
					  const struct timekeeper *tk)
{
	struct vdso_timestamp *vdso_ts;
	u64 nsec;

	/* CLOCK_REALTIME also required for time() */
	vdso_ts = &basetime[CLOCK_REALTIME];
	vdso_ts->sec = tk->xtime_sec;
	vdso_ts->nsec = tk->tkr_mono.xtime_nsec;

	/* CLOCK_REALTIME_COARSE */
	vdso_ts = &basetime[CLOCK_REALTIME_COARSE];
	vdso_ts->sec = tk->xtime_sec;
	vdso_ts->nsec = tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift;

	/* CLOCK_MONOTONIC_COARSE */
	vdso_ts = &basetime[CLOCK_MONOTONIC_COARSE];
	vdso_ts->sec = tk->xtime_sec + tk->wall_to_monotonic.tv_sec;
	nsec = tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift;
	nsec = nsec + tk->wall_to_monotonic.tv_nsec;
	vdso_ts->sec += __iter_div_u64_rem(nsec, NSEC_PER_SEC, &vdso_ts->nsec);
}

/*
 * update_vdso_data() / update_vdso_time_data(): the high-resolution bases,
 * stored only while the clocksource is vDSO capable; hres is the
 * CS_HRES_COARSE base array, raw the CS_RAW one.
 */
static inline void vsyscall_update_hres(struct vdso_timestamp *hres,
					struct vdso_timestamp *raw,
					const struct timekeeper *tk)
{
	struct vdso_timestamp *vdso_ts;
	u64 nsec, sec;

	/* CLOCK_MONOTONIC */
	vdso_ts = &hres[CLOCK_MONOTONIC];
	vdso_ts->sec = tk->xtime_sec + tk->wall_to_monotonic.tv_sec;

	nsec = tk->tkr_mono.xtime_nsec;
	nsec += ((u64)tk->wall_to_monotonic.tv_nsec << tk->tkr_mono.shift);
	while (nsec >= (((u64)NSEC_PER_SEC) << tk->tkr_mono.shift)) {
		nsec -= (((u64)NSEC_PER_SEC) << tk->tkr_mono.shift);
		vdso_ts->sec++;
	}
	vdso_ts->nsec = nsec;

	/* Copy MONOTONIC time for BOOTTIME */
	sec = vdso_ts->sec;
	/* Add the boot offset */
	sec += tk->monotonic_to_boot.tv_sec;
	nsec += (u64)tk->monotonic_to_boot.tv_nsec << tk->tkr_mono.shift;

	/* CLOCK_BOOTTIME */
	vdso_ts = &hres[CLOCK_BOOTTIME];
	vdso_ts->sec = sec;

	while (nsec >= (((u64)NSEC_PER_SEC) << tk->tkr_mono.shift)) {
		nsec -= (((u64)NSEC_PER_SEC) << tk->tkr_mono.shift);
		vdso_ts->sec++;
	}
	vdso_ts->nsec = nsec;

	/* CLOCK_MONOTONIC_RAW */
	vdso_ts = &raw[CLOCK_MONOTONIC_RAW];
	vdso_ts->sec = tk->raw_sec;
	vdso_ts->nsec = tk->tkr_raw.xtime_nsec;

	/* CLOCK_TAI */
	vdso_ts = &hres[CLOCK_TAI];
	vdso_ts->sec = tk->xtime_sec + (s64)tk->tai_offset;
	vdso_ts->nsec = tk->tkr_mono.xtime_nsec;
}

#endif /* VDSOBENCH_VSYSCALL_BASES_H */

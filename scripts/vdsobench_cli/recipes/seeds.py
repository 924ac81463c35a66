"""The seeds' own tables, quoted from the mails (tabs expanded), which the
recipes print beside today's numbers in the same shape."""

SEED_000_V1 = """\
Clock                   Before          After           Diff
-----                   ------          -----           ----
CLOCK_MONOTONIC         355531720       338039373       -5%
CLOCK_MONOTONIC_RAW     44831738        336064912       +650%
CLOCK_REALTIME          347665133       338102907       -3%"""

SEED_000_V2 = """\
Clock                   Before  After   Diff
-----                   ------  -----   ----
CLOCK_MONOTONIC         355.5M  355.5M
CLOCK_MONOTONIC_RAW      44.9M  371.2M  +726%
CLOCK_REALTIME          355.5M  355.5M"""

SEED_000_V3 = """\
Clock                   Before  After   Diff
-----                   ------  -----   ----
CLOCK_MONOTONIC         355.5M  359.6M  +1%
CLOCK_REALTIME          355.5M  359.6M  +1%"""

SEED_000_GENERIC = """\
Number of clock_gettime() calls in 10 seconds:
                Before          After           Diff
MONOTONIC       152404300       200825950       +32%
MONOTONIC_RAW   38804788        198765053       +412%
REALTIME        151672619       201371468       +33%"""

SEED_001 = """\
Performance Numbers: Linux 5.2.0-rc2 - Xeon Gold 5120T (Unified vDSO)
clock-gettime-monotonic: syscall: 342 nsec/call libc: 25 vdso: 24
clock-getres-monotonic: syscall: 296 nsec/call libc: 296 vdso: 3
clock-gettime-monotonic-coarse: syscall: 294 libc: 5 vdso: 5
clock-gettime-monotonic-raw: syscall: 343 libc: 25 vdso: 23
clock-gettime-realtime: syscall: 337 libc: 24 vdso: 23
(Stock kernel: monotonic-raw libc 340, vdso 346; getres vdso: not found)"""

SEED_002 = """\
Hikey960, 4.9 kernel, GCC 4.9 -O2, 16 runs of 50M iterations each:
vdso64  realtime: -4.8% (worse)  monotonic: +1.9% (better)  boottime: +3.2%
vdso32  realtime: +4.7% (better) monotonic: +3.2%           boottime: +3.7%
"The maximum deviation on the sample runs was in the order of +/-1%."
"it is better to trust the C compiler ... and drop this patch\""""

SEED_003 = """\
$ ./timer -r 100      (CLOCK_MONOTONIC_RAW, rdtscp)
Average Latency: 0.000000028S N zero deltas: 0 N inconsistent deltas: 0
$ ./timer -m -r 100   (CLOCK_MONOTONIC, rdtsc_ordered)
Average Latency: 0.000000052S N zero deltas: 0 N inconsistent deltas: 0"""

SEED_004 = """\
             Base (upstream)  + VDSO patch  + timens page
MONO         30ns             30ns          32ns
REAL         30ns             30ns          32ns
BOOT         30ns             30ns          32ns
MONOCOARSE    7ns              8ns          10ns
REALCOARSE    7ns              8ns          10ns
TAI          30ns             30ns          32ns
MONORAW      30ns             30ns          32ns
"The switch case is slower." (array vs switch, tglx)"""

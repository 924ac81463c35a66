// SPDX-License-Identifier: GPL-2.0
//
// The records' numbers read as printf's text of them reads (the type
// too: a whole %g is an integer), their strings escaped and read back by
// the library's strict parser, and the context record of a made-up run
// to the byte: its keys, their order, null where a size is unknown.
#include <stdlib.h>
#include <string.h>

#include <string>

#include "bench/harness.h"
#include "bench/left_out.h"
#include "bench/prepared_run.h"
#include "bench/records.h"

extern "C" {
#include "testing/tap.h"
}

namespace
{

void test_fixed()
{
	static const double values[] = {0,     1.5,	2,
					-0.25, 1.0 / 3, 12345.6789,
					1e-9,  1e20,	123456789.987654321};
	bool same = true;

	for (double v : values) {
		for (int places : {3, 4, 6}) {
			char text[400];

			snprintf(text, sizeof(text), "%.*f", places, v);
			std::string got = record_text(json_fixed(v, places));
			if (strtod(got.c_str(), nullptr) !=
				    strtod(text, nullptr) ||
			    !json_fixed(v, places).is_number_float()) {
				tap_diag("%.17g %%.%df: %s, not %s", v, places,
					 got.c_str(), text);
				same = false;
			}
		}
	}
	tap_ok(same, "json_fixed() reads as printf's %%.Nf, always a float");
	tap_ok(record_text(json_fixed(2, 6)) == "2.0",
	       "a whole %%.6f is still a float (2.0)");
}

void test_general()
{
	tap_ok(record_text(json_general(1234, 6)) == "1234" &&
		       json_general(1234, 6).is_number_integer(),
	       "a whole %%g is an integer");
	tap_ok(record_text(json_general(-3, 6)) == "-3", "negative too");
	tap_ok(record_text(json_general(0.5, 6)) == "0.5", "0.5 as it is");
	tap_ok(record_text(json_general(1.0 / 3, 6)) == "0.333333",
	       "six significant digits");
	tap_ok(json_general(1234567, 6).is_number_float() &&
		       json_general(1234567, 6).get<double>() == 1234570,
	       "%%g's exponent form is a float, rounded as %%g rounds");
}

void test_strings()
{
	const std::string hostile = "q\"b\\c\x01\x1f\n</script>\x80\xc3\xa9";
	json record = {{hostile, hostile}};
	std::string text = record_text(record);
	json back = json::parse(text);
	const std::string want =
		"q\"b\\c\x01\x1f\n</script>\xef\xbf\xbd\xc3\xa9";

	tap_ok(text.find('\x01') == std::string::npos &&
		       text.find('\n') == std::string::npos,
	       "control characters escaped: %s", text.c_str());
	tap_ok(back.begin().key() == want && back[want] == want,
	       "a hostile key and value read back, the stray byte as U+FFFD");
}

void test_context()
{
	harness_context &ctx = harness();
	std::string want = std::string("{\"compiler\":\"") + __VERSION__ +
			   "\",\"optimized\":"
#ifdef __OPTIMIZE__
			   "true"
#else
			   "false"
#endif
			   ",\"counter_hz\":2400000000,\"pinning\":{\"pinned\":"
			   "true,\"cpus\":[3],\"where\":{\"3\":\"package 0 "
			   "core 1 pu 3\"},\"l1d_bytes\":{\"3\":32768},"
			   "\"cpu_kinds\":{\"3\":null},\"pressure_bytes\":{"
			   "\"3\":65536},\"pressure_span\":1024,\"cold\":{"
			   "\"loads_per_way\":2,\"l2_margin\":4,\"span\":1024,"
			   "\"stack_offset\":4032,\"outlier_factor\":4,"
			   "\"dither\":8192,\"bracket\":"
#if defined(__x86_64__) || defined(__i386__)
			   "\"lfence; rdtsc; lfence\""
#else
			   "\"dsb ish; isb; mrs cntvct_el0; isb\""
#endif
			   ",\"cpus\":{\"3\":{\"l1d_ways\":8,\"l2_bytes\":null,"
			   "\"l2_ways\":null,\"cold_pages\":16,"
			   "\"cold_l2_pages\":null}}},\"writer_cpu\":1},"
			   "\"writer_hz\":\"max\",\"compute_steps\":20,"
			   "\"timens_offset_s\":864000,\"counters\":{"
			   "\"available\":false,\"reason\":\"not requested "
			   "(--events none)\",\"mode\":null,\"mode_reason\":"
			   "null,\"requested\":[],\"events\":[],\"dropped\":[]"
			   "},\"vdso\":{\"available\":true,\"reason\":null,"
			   "\"symbols\":{\"__vdso_time\":true},\"time\":"
			   "\"__vdso_time\",\"checked\":{"
			   "\"__vdso_clock_gettime\":\"agrees\"},\"gate\":"
			   "\"sysenter\"},\"skipped\":["
			   "\"sys/vdso: gone\"],\"planned\":0,\"cpu_lock\":{"
			   "\"policy\":\"wait\",\"dir\":\"/run/lock/x\","
			   "\"error\":null,\"cpus\":[],\"waited\":[]}";
	// the i386 build's ABI and what it leaves out (left_out.h)
	if (!harness_has_gbench)
		want += std::string(",\"abi\":{\"name\":\"i386\",\"bits\":32,"
				    "\"left_out\":[{\"what\":\"Google "
				    "Benchmark\",\"why\":\"") +
			harness_gbench_left_out +
			"\"},{\"what\":\"libpfm4\",\"why\":\"" +
			harness_libpfm_left_out +
			"\"},{\"what\":\"hwloc\",\"why\":\"" +
			harness_hwloc_left_out + "\"}]}";
	want += "}";
	std::string got;

	ctx.cpus = {3};
	ctx.cpu_desc = {"package 0 core 1 pu 3"};
	ctx.l1d = {32768};
	ctx.l1d_ways = {8};
	ctx.l2 = {0};
	ctx.l2_ways = {0};
	ctx.writer_cpu = 1;
	ctx.hz = 0;
	ctx.tsc_hz = 2400000000ULL;
	ctx.counters_reason = "not requested (--events none)";
	ctx.vdso_symbols = {{"__vdso_time", true}};
	ctx.vdso_time = "__vdso_time";
	ctx.vdso_checked = {{"__vdso_clock_gettime", "agrees"}};
	ctx.vdso_gate = "sysenter";
	ctx.skipped = {"sys/vdso: gone"};
	ctx.cpu_lock_policy = "wait";
	ctx.cpu_lock_dir = "/run/lock/x";
	got = record_text(harness_context_record());
	if (!tap_ok(got == want, "the context record, to the byte"))
		tap_diag("got  %s\n# want %s", got.c_str(), want.c_str());

	ctx.hz = 1000;
	ctx.vdso_symbols.clear();
	ctx.vdso_checked.clear();
	ctx.vdso_reason = "no vDSO";
	ctx.vdso_gate.clear();
	json j = json::parse(record_text(harness_context_record()));
	tap_ok(j["writer_hz"] == 1000 && j["vdso"]["symbols"].is_object() &&
		       j["vdso"]["symbols"].empty() &&
		       j["vdso"]["checked"].is_object() &&
		       j["vdso"]["reason"] == "no vDSO",
	       "writer_hz a number; no symbols an empty object, not null");
	tap_ok(!j["vdso"].contains("gate"), "no gate (a 64-bit vDSO): no gate key");
}

} // namespace

// a footprint batch's object, from made-up figures, to the byte
void test_footprint()
{
	footprint_result r;

	r.probe = "fault";
	r.lines = {0, 64};
	r.sets = {0, 1};
	r.l1d_sets = 64;
	r.l1d_ways = 12;
	r.chain_lines = 24;
	r.f.action_ns[0] = 20.5;
	r.f.walk_ns[0] = 48;
	for (unsigned int k = 1; k < FOOTPRINT_KINDS; k++)
		r.f.walk_ns[k] = 40 + 4 * (k - 1);
	r.f.walk_alone = 40;
	r.f.walk_net = 8;
	r.f.line_ns = 4;
	r.f.displaced = 2;
	r.f.net_ns = 18.25;
	r.f.kept = 3200;
	r.f.dropped = 3;
	std::string got = record_text(footprint_record(r));
	const char *want =
		"{\"probe\":\"fault\",\"data_lines\":[0,64],\"sets\":[0,1],"
		"\"l1d_sets\":64,\"l1d_ways\":12,\"chain_lines\":24,"
		"\"net_ns\":18.25,\"action_ns\":20.5,\"walk_ns\":48.0,"
		"\"walk_alone_ns\":40.0,\"walk_net_ns\":8.0,\"line_ns\":4.0,"
		"\"lines_displaced\":2.0,"
		"\"controls_walk_ns\":[40.0,44.0,48.0,52.0],\"kept\":3200,"
		"\"dropped\":3}";

	if (!tap_ok(got == want, "the footprint object, keys in order"))
		tap_diag("%s", got.c_str());
}

int main()
{
	test_fixed();
	test_general();
	test_strings();
	test_context();
	test_footprint();
	return tap_done();
}

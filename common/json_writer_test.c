// SPDX-License-Identifier: GPL-2.0
/*
 * The writer's bytes for each kind of value, its refusal of every misuse,
 * and hostile strings (quotes, backslashes, every control character, text
 * that closes the record and opens another, bytes that are not UTF-8) as
 * values and as keys, read back by Python's json module, which must give
 * each string back as it was (invalid bytes as U+FFFD).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json_writer.h"
#include "testing/tap.h"

struct buffer {
	char text[8192];
	unsigned long len;
};

static void put_buffer(void *ctx, const char *s, unsigned long n)
{
	struct buffer *b = ctx;

	if (b->len + n < sizeof(b->text)) {
		memcpy(b->text + b->len, s, n);
		b->len += n;
	}
	b->text[b->len] = 0;
}

static struct json_writer w;
static struct buffer out;

static void start(void)
{
	out.len = 0;
	out.text[0] = 0;
	json_init(&w, put_buffer, &out);
}

static bool wrote(const char *want, const char *what)
{
	int status = json_end_line(&w);

	if (tap_ok(!status && !strcmp(out.text, want), "%s", what))
		return true;
	tap_diag("wrote (status %d): %s", status, out.text);
	return false;
}

static void refused(const char *what)
{
	tap_ok(json_end_line(&w) == -1, "misuse refused: %s", what);
}

static void test_values(void)
{
	start();
	json_begin_object(&w);
	json_kv_string(&w, "s", "text");
	json_kv_bool(&w, "t", 1);
	json_kv_bool(&w, "f", 0);
	json_key(&w, "n");
	json_null(&w);
	json_key(&w, "null_string");
	json_string(&w, NULL);
	json_kv_int(&w, "min", -9223372036854775807LL - 1);
	json_kv_uint(&w, "max", 18446744073709551615ULL);
	json_key(&w, "a");
	json_begin_array(&w);
	json_int(&w, 0);
	json_begin_object(&w);
	json_end_object(&w);
	json_begin_array(&w);
	json_end_array(&w);
	json_end_array(&w);
	json_end_object(&w);
	wrote("{\"s\":\"text\",\"t\":true,\"f\":false,\"n\":null,"
	      "\"null_string\":null,\"min\":-9223372036854775808,"
	      "\"max\":18446744073709551615,\"a\":[0,{},[]]}\n",
	      "every kind of value, compact");

	start();
	json_begin_array(&w);
	json_decimal(&w, 1234, 3);
	json_decimal(&w, 5, 3);
	json_decimal(&w, -5, 3);
	json_decimal(&w, 7, 0);
	json_decimal(&w, 0, 6);
	json_end_array(&w);
	wrote("[1.234,0.005,-0.005,7,0.000000]\n", "decimals as %.Nf");

	start();
	json_begin_array(&w);
	json_newline(&w);
	json_uint(&w, 1);
	json_newline(&w);
	json_uint(&w, 2);
	json_end_array(&w);
	wrote("[\n1,\n2]\n", "json_newline() starts the next item's line");

	start();
	json_string(&w, "\"\\\x01\x1f\x7f/");
	wrote("\"\\\"\\\\\\u0001\\u001f\x7f/\"\n",
	      "quote, backslash, controls escaped; DEL and / as they are");

	start();
	json_string(&w, "a\x80"
			"b\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"
			"\xe2\x82\xac\xe2\x82");
	wrote("\"a\xef\xbf\xbd"
	      "b\xef\xbf\xbd\xef\xbf\xbd"
	      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	      "\xe2\x82\xac\xef\xbf\xbd\xef\xbf\xbd\"\n",
	      "each byte outside valid UTF-8 is U+FFFD, the euro sign kept");
}

static void test_misuse(void)
{
	start();
	json_begin_object(&w);
	json_uint(&w, 1);
	json_end_object(&w);
	refused("a value where a key belongs");

	start();
	json_begin_array(&w);
	json_key(&w, "k");
	json_end_array(&w);
	refused("a key in an array");

	start();
	json_begin_object(&w);
	json_key(&w, "k");
	json_key(&w, "k2");
	json_uint(&w, 1);
	json_end_object(&w);
	refused("two keys in a row");

	start();
	json_begin_object(&w);
	json_key(&w, "k");
	json_end_object(&w);
	refused("a key without its value");

	start();
	json_begin_object(&w);
	json_end_array(&w);
	refused("an object closed as an array");

	start();
	json_begin_array(&w);
	refused("an array left open");

	start();
	json_end_array(&w);
	refused("a close with nothing open");

	start();
	json_uint(&w, 1);
	json_uint(&w, 2);
	refused("two documents on one line");

	start();
	refused("an empty line");

	start();
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		json_begin_array(&w);
	refused("nesting past JSON_MAX_DEPTH");

	start();
	json_decimal(&w, 1, 19);
	refused("more than 18 decimal places");

	start();
	json_uint(&w, 1);
	json_end_line(&w);
	json_uint(&w, 2);
	wrote("1\n2\n", "json_end_line() readies the writer for the next line");
}

/* each hostile string, and the bytes a reader must give back */
static const struct {
	const char *in, *back;
} hostile[] = {
	{"", ""},
	{"\"", "\""},
	{"\\", "\\"},
	{"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
	 "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f",
	 "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
	 "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"
	 "\x7f"},
	{"\"},{\"injected\":true,\"x\":\"", "\"},{\"injected\":true,\"x\":\""},
	{"\\u0000 \\\" \\n", "\\u0000 \\\" \\n"},
	{"line\nbreak\r\n\ttab", "line\nbreak\r\n\ttab"},
	{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xa8",
	 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xa8"},
	{"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
	{"a\x80"
	 "b",
	 "a\xef\xbf\xbd"
	 "b"},
	{"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
	{"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
	{"\xf4\x90\x80\x80",
	 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
	{"\xf5\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
	{"end\xe2\x82", "end\xef\xbf\xbd\xef\xbf\xbd"},
};
#define NR_HOSTILE (sizeof(hostile) / sizeof(hostile[0]))

/* Python reads the file: each string (values, then keys) as hex, a line each */
static const char reader[] =
	"import json, sys\n"
	"for line in open(sys.argv[1], encoding='utf-8'):\n"
	"    doc = json.loads(line, object_pairs_hook=list)\n"
	"    for s in doc if isinstance(doc[0], str) else (k for k, _ in "
	"doc):\n"
	"        print(s.encode('utf-8').hex())\n";

static void hex_of(const char *s, char *hex, size_t len)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++)
		n += (size_t)snprintf(hex + n, len - n, "%02x",
				      (unsigned char)*s);
	hex[n] = 0;
}

static void test_python_reads_back(void)
{
	char path[4000], script[4096], cmd[8400], line[512], want[512];
	FILE *f, *py;
	unsigned int i = 0, good = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/hostile-XXXXXX", tap_tmpdir());
	fd = mkstemp(path);
	snprintf(script, sizeof(script), "%s.py", path);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!tap_ok(f != NULL, "a file for the hostile documents"))
		return;
	json_init_file(&w, f);
	json_begin_array(&w);
	for (i = 0; i < NR_HOSTILE; i++)
		json_string(&w, hostile[i].in);
	json_end_array(&w);
	tap_ok(!json_end_line(&w), "the hostile strings as values");
	json_begin_object(&w);
	for (i = 0; i < NR_HOSTILE; i++)
		json_kv_uint(&w, hostile[i].in, i);
	json_end_object(&w);
	tap_ok(!json_end_line(&w), "the hostile strings as keys");
	fclose(f);
	f = fopen(script, "w");
	if (!tap_ok(f && fputs(reader, f) >= 0 && !fclose(f),
		    "the reader script"))
		return;

	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", script, path);
	py = popen(cmd, "r");
	if (!tap_ok(py != NULL, "python3 runs"))
		return;
	for (i = 0; fgets(line, sizeof(line), py); i++) {
		line[strcspn(line, "\n")] = 0;
		hex_of(hostile[i % NR_HOSTILE].back, want, sizeof(want));
		if (i < 2 * NR_HOSTILE && !strcmp(line, want))
			good++;
		else
			tap_diag("string %u read back as %s, not %s", i, line,
				 want);
	}
	tap_ok(!pclose(py) && i == 2 * NR_HOSTILE && good == i,
	       "Python's json reads back all %zu strings, as values and as "
	       "keys (%u of %u)",
	       NR_HOSTILE, good, i);
	unlink(path);
	unlink(script);
}

int main(void)
{
	test_values();
	test_misuse();
	test_python_reads_back();
	return tap_done();
}

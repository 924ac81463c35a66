// SPDX-License-Identifier: GPL-2.0
/* No C library header here: see json_writer.h (the import's probe). */
#include "common/json_writer.h"

#define DEPTH_BIT(d) (1U << (d))

static const char hex_digits[] = "0123456789abcdef";

static void put(struct json_writer *w, const char *s, unsigned long n)
{
	if (n)
		w->put(w->ctx, s, n);
}

void json_init(struct json_writer *w, json_put_fn *put_fn, void *ctx)
{
	*w = (struct json_writer){.put = put_fn, .ctx = ctx};
}

#ifndef JSON_FREESTANDING
static void put_file(void *ctx, const char *s, unsigned long n)
{
	fwrite(s, 1, n, ctx);
}

void json_init_file(struct json_writer *w, FILE *f)
{
	json_init(w, put_file, f);
}
#endif

static int in_object(const struct json_writer *w)
{
	return w->depth && (w->is_object & DEPTH_BIT(w->depth));
}

/* the comma before an item of the open container, and json_newline()'s */
static void separate(struct json_writer *w)
{
	if (w->has_item & DEPTH_BIT(w->depth))
		put(w, ",", 1);
	if (w->newline)
		put(w, "\n", 1);
	w->newline = 0;
	w->has_item |= DEPTH_BIT(w->depth);
}

/* before a value: a key must stand before it in an object, and a line
 * holds one document */
static void begin_value(struct json_writer *w)
{
	if (in_object(w) != w->after_key)
		w->error = 1;
	if (!w->depth && (w->has_item & 1))
		w->error = 1;
	if (!w->after_key)
		separate(w);
	w->after_key = 0;
}

/*
 * The length of the UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0 if it is not one. Stops at the
 * first byte that does not fit, so never reads past the terminating NUL.
 */
static unsigned int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	unsigned int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2)
		return 0;
	if (s[0] < 0xe0) {
		n = 2;
	} else if (s[0] < 0xf0) {
		n = 3;
		lo = s[0] == 0xe0 ? 0xa0 : lo;
		hi = s[0] == 0xed ? 0x9f : hi;
	} else if (s[0] < 0xf5) {
		n = 4;
		lo = s[0] == 0xf0 ? 0x90 : lo;
		hi = s[0] == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (unsigned int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void put_escaped(struct json_writer *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str, *run = s;

	put(w, "\"", 1);
	while (*s) {
		unsigned int n = utf8_len(s);
		char esc[6] = {'\\', 'u', '0', '0'};

		if (n && *s >= 0x20 && *s != '"' && *s != '\\') {
			s += n;
			continue;
		}
		put(w, (const char *)run, (unsigned long)(s - run));
		if (!n) {
			put(w, "\xef\xbf\xbd", 3); /* U+FFFD for the byte */
		} else if (*s < 0x20) {
			esc[4] = hex_digits[*s >> 4];
			esc[5] = hex_digits[*s & 15];
			put(w, esc, 6);
		} else {
			esc[1] = (char)*s;
			put(w, esc, 2);
		}
		run = ++s;
	}
	put(w, (const char *)run, (unsigned long)(s - run));
	put(w, "\"", 1);
}

/* v in decimal, zero-padded to at least min_digits */
static void put_digits(struct json_writer *w, unsigned long long v,
		       unsigned int min_digits)
{
	char buf[24];
	unsigned int i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v || sizeof(buf) - i < min_digits);
	put(w, buf + i, sizeof(buf) - i);
}

static void begin_container(struct json_writer *w, int object)
{
	begin_value(w);
	if (w->depth + 1 > JSON_MAX_DEPTH) {
		w->error = 1;
		return;
	}
	w->depth++;
	w->has_item &= ~DEPTH_BIT(w->depth);
	if (object)
		w->is_object |= DEPTH_BIT(w->depth);
	else
		w->is_object &= ~DEPTH_BIT(w->depth);
	put(w, object ? "{" : "[", 1);
}

static void end_container(struct json_writer *w, int object)
{
	if (!w->depth || w->after_key || in_object(w) != object) {
		w->error = 1;
		return;
	}
	w->depth--;
	w->newline = 0;
	put(w, object ? "}" : "]", 1);
}

void json_begin_object(struct json_writer *w)
{
	begin_container(w, 1);
}

void json_end_object(struct json_writer *w)
{
	end_container(w, 1);
}

void json_begin_array(struct json_writer *w)
{
	begin_container(w, 0);
}

void json_end_array(struct json_writer *w)
{
	end_container(w, 0);
}

void json_key(struct json_writer *w, const char *key)
{
	if (!in_object(w) || w->after_key || !key) {
		w->error = 1;
		return;
	}
	separate(w);
	put_escaped(w, key);
	put(w, ":", 1);
	w->after_key = 1;
}

void json_null(struct json_writer *w)
{
	begin_value(w);
	put(w, "null", 4);
}

void json_string(struct json_writer *w, const char *s)
{
	if (!s) {
		json_null(w);
		return;
	}
	begin_value(w);
	put_escaped(w, s);
}

void json_bool(struct json_writer *w, int v)
{
	begin_value(w);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void json_uint(struct json_writer *w, unsigned long long v)
{
	begin_value(w);
	put_digits(w, v, 1);
}

void json_int(struct json_writer *w, long long v)
{
	begin_value(w);
	if (v < 0)
		put(w, "-", 1);
	put_digits(w, v < 0 ? -(unsigned long long)v : (unsigned long long)v,
		   1);
}

void json_decimal(struct json_writer *w, long long units, unsigned int places)
{
	unsigned long long u = units < 0 ? -(unsigned long long)units
					 : (unsigned long long)units;
	unsigned long long scale = 1;

	if (places > 18) {
		w->error = 1;
		return;
	}
	for (unsigned int i = 0; i < places; i++)
		scale *= 10;
	begin_value(w);
	if (units < 0)
		put(w, "-", 1);
	put_digits(w, u / scale, 1);
	if (places) {
		put(w, ".", 1);
		put_digits(w, u % scale, places);
	}
}

void json_kv_string(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_string(w, s);
}

void json_kv_bool(struct json_writer *w, const char *key, int v)
{
	json_key(w, key);
	json_bool(w, v);
}

void json_kv_int(struct json_writer *w, const char *key, long long v)
{
	json_key(w, key);
	json_int(w, v);
}

void json_kv_uint(struct json_writer *w, const char *key, unsigned long long v)
{
	json_key(w, key);
	json_uint(w, v);
}

void json_newline(struct json_writer *w)
{
	w->newline = 1;
}

int json_end_line(struct json_writer *w)
{
	int ok = !w->error && !w->depth && !w->after_key && (w->has_item & 1);

	put(w, "\n", 1);
	json_init(w, w->put, w->ctx);
	return ok ? 0 : -1;
}

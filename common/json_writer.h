/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C programs' one JSON writer (the sim driver, verify, counters, the
 * live vvar reader, the import's probe): a document, or JSON lines, written
 * token by token onto a sink, so that no record is assembled by hand and
 * every string is escaped as RFC 8259 asks: the quote, the backslash and
 * every control character; a byte that is not part of valid UTF-8 becomes
 * U+FFFD, so the output is always text a JSON reader accepts.
 *
 * json_writer.c includes no C library header: the import's probe, compiled
 * against a kernel tree's headers, includes it whole with JSON_FREESTANDING
 * defined. Without it, json_init_file() writes to a FILE.
 */
#ifndef VDSOBENCH_COMMON_JSON_WRITER_H
#define VDSOBENCH_COMMON_JSON_WRITER_H

#ifndef JSON_FREESTANDING
#include <stdio.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* nesting deeper than this is a misuse (json_end_line() says so) */
#define JSON_MAX_DEPTH 31

typedef void json_put_fn(void *ctx, const char *s, unsigned long n);

struct json_writer {
	json_put_fn *put;
	void *ctx;
	unsigned int depth;
	unsigned int has_item;	/* bit d: the container at depth d has one */
	unsigned int is_object; /* bit d: the container at depth d is one */
	int after_key;
	int newline; /* the next item starts a line (json_newline()) */
	int error;   /* a misuse, which json_end_line() reports */
};

void json_init(struct json_writer *w, json_put_fn *put, void *ctx);
#ifndef JSON_FREESTANDING
void json_init_file(struct json_writer *w, FILE *f);
#endif

void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);

/* a string, escaped; NULL writes null */
void json_string(struct json_writer *w, const char *s);
void json_null(struct json_writer *w);
void json_bool(struct json_writer *w, int v);
void json_int(struct json_writer *w, long long v);
void json_uint(struct json_writer *w, unsigned long long v);
/* units / 10^places with all its places, as printf's "%.<places>f" */
void json_decimal(struct json_writer *w, long long units, unsigned int places);

/* a key and its value */
void json_kv_string(struct json_writer *w, const char *key, const char *s);
void json_kv_bool(struct json_writer *w, const char *key, int v);
void json_kv_int(struct json_writer *w, const char *key, long long v);
void json_kv_uint(struct json_writer *w, const char *key, unsigned long long v);

/* the next item of the open container starts a new line, for a reader */
void json_newline(struct json_writer *w);
/*
 * The end of one document: a newline, and the writer ready for the next
 * (JSON lines). 0, or -1 if the document was not one complete value or
 * the writer was misused on the way (the output is then not JSON).
 */
int json_end_line(struct json_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_COMMON_JSON_WRITER_H */

/*
 * jsonread.h - a fast reader of the protocol's JSON text into jansson values.
 *
 * json_loadb spends most of a large reply's decoding in its character-at-a-
 * time lexer (squeue over 10,000 jobs: 2.3 MB, half its CPU in jansson).
 * loom_json_read scans the text in place and builds the same values with
 * jansson's constructors.
 *
 * Entry points: loom_json_read; loom_json_loadb (with jansson behind it).
 *
 * Invariant: when it returns a value, json_loadb(text, len,
 * JSON_REJECT_DUPLICATES) would have returned an equal value (json_equal,
 * same integer/real kinds); the fuzz target fuzz_jsonread checks exactly
 * this. It returns NULL for anything it does not decode itself: malformed
 * text, but also valid text it leaves to jansson (non-ASCII strings,
 * \u escapes beyond ASCII, integers of 19 digits or more, nesting deeper
 * than jansson allows). The caller then calls json_loadb, for the value or
 * for its error message.
 */
#ifndef LOOM_JSONREAD_H
#define LOOM_JSONREAD_H

#include <jansson.h>
#include <stddef.h>

/* The object or array in text[0..len), or NULL (see above). */
json_t *loom_json_read(const char *text, size_t len);
/* json_loadb(text, len, JSON_REJECT_DUPLICATES, err), loom_json_read first. */
json_t *loom_json_loadb(const char *text, size_t len, json_error_t *err);

#endif

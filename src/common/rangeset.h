/*
 * rangeset.h - sorted sets of non-negative integers kept as ranges: job array
 * indexes (CLI_SPEC §1 -a/--array, §0.5 "123_[1-3,7]", squeue's "[5-9%2]").
 *
 * Entry points: loom_rangeset_parse() for "1,3,5-9" and "0-15:4",
 * loom_rangeset_parse_array() for the --array form with an optional "%N"
 * throttle, then count/contains/first/last/next to query, and
 * loom_rangeset_format() ("1-3,5,7-9") or loom_rangeset_format_bracket()
 * ("[5-9%2]") to print.
 *
 * Invariants: r[0..n) are sorted, disjoint and not adjacent (lo <= hi, and
 * r[i].hi + 1 < r[i+1].lo), so the compressed form is unique and every query
 * costs O(log ranges) or O(ranges), never O(indexes): "0-99999" is one range.
 * A step ("0-15:4") adds one singleton per index it names.
 *
 * Grammar: items separated by ','; an item is N, N-M or N-M:S (1 <= S <=
 * max); numbers are decimal digits only, each index <= max. Empty items are
 * skipped as sbatch does ("1,,3", "1,2,"), but some index must be named. No
 * whitespace or signs, no reversed ranges. Duplicates and overlaps are
 * merged. On error the output set is untouched and err names the bad item.
 * (Checked against sbatch 22.05, whose strtol-based parser also takes " 1",
 * "+1", "0-9%" and "0-9%2%3", runs "," as a job without an array and "%2"
 * as index 0; Loom refuses those.)
 *
 * A loom_rangeset_t is a value: zero-initialise (LOOM_RANGESET_INIT) or call
 * loom_rangeset_init(); loom_rangeset_free() releases it (accepts NULL).
 */
#ifndef LOOM_RANGESET_H
#define LOOM_RANGESET_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct loom_range {
    uint32_t lo;
    uint32_t hi; /* inclusive */
} loom_range_t;

typedef struct loom_rangeset {
    loom_range_t *r; /* owned; NULL when empty */
    size_t n;
    size_t cap;
} loom_rangeset_t;

#define LOOM_RANGESET_INIT                                                                         \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void loom_rangeset_init(loom_rangeset_t *rs);
void loom_rangeset_free(loom_rangeset_t *rs);
/* Make dst a copy of src (dst's old contents are freed). */
void loom_rangeset_copy(loom_rangeset_t *dst, const loom_rangeset_t *src);

/* Parse "1,3,5-9", "0-15:4" into *out (replacing what it held); every index
 * must be <= max. Returns the number of ranges; -LOOM_EPARSE or -LOOM_ERANGE. */
int loom_rangeset_parse(const char *spec, uint32_t max, loom_rangeset_t *out, loom_err_t *err);
/* The --array form: as above plus an optional "%N" throttle at the end
 * (*throttle gets N, or 0 when absent; "%0" also means no limit). Pass
 * max = MaxArraySize - 1. Every error is -LOOM_EINVAL_ARRAY. */
int loom_rangeset_parse_array(const char *spec, uint32_t max, loom_rangeset_t *out,
                              uint32_t *throttle, loom_err_t *err);

/* Add [lo, hi] (lo <= hi), merging as needed. O(ranges). */
void loom_rangeset_add(loom_rangeset_t *rs, uint32_t lo, uint32_t hi);

/* How many indexes (up to 2^32, hence 64 bits). */
uint64_t loom_rangeset_count(const loom_rangeset_t *rs);
bool loom_rangeset_empty(const loom_rangeset_t *rs);
bool loom_rangeset_contains(const loom_rangeset_t *rs, uint32_t i);
bool loom_rangeset_equal(const loom_rangeset_t *a, const loom_rangeset_t *b);
/* Smallest / largest index: 0, or -ENOENT when the set is empty. */
int loom_rangeset_first(const loom_rangeset_t *rs, uint32_t *out);
int loom_rangeset_last(const loom_rangeset_t *rs, uint32_t *out);
/* Smallest index > after: 0, or -ENOENT when there is none. Iterate with
 *     for (int rc = loom_rangeset_first(rs, &i); rc == 0; rc = loom_rangeset_next(rs, i, &i))
 */
int loom_rangeset_next(const loom_rangeset_t *rs, uint32_t after, uint32_t *out);

/* Append "1-3,5,7-9" ("" for the empty set) to out. */
void loom_rangeset_format(const loom_rangeset_t *rs, loom_sbuf_t *out);
/* Append squeue's bracket form "[1-3,5]" with "%throttle" when throttle > 0:
 * "[5-9%2]". */
void loom_rangeset_format_bracket(const loom_rangeset_t *rs, uint32_t throttle, loom_sbuf_t *out);

#endif

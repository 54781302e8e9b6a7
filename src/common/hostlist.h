/*
 * hostlist.h - hostlist expressions (CLI_SPEC §0.4).
 *
 * "a,b,node[001-016,020]", "rack[1-2]-n[01-04]": names and bracketed ranges,
 * separated by commas or whitespace; several bracket groups in one name form a
 * cartesian product; leading zeros fix the width. Expansion is bounded by
 * LOOM_HOSTLIST_MAX names. Compression merges consecutive names sharing prefix,
 * suffix and width: "n[1-3,5]".
 *
 * A loom_hostlist_t is an ordered list of owned names (duplicates allowed until
 * loom_hostlist_uniq). Create/destroy; destroy accepts NULL.
 */
#ifndef LOOM_HOSTLIST_H
#define LOOM_HOSTLIST_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stddef.h>

#define LOOM_HOSTLIST_MAX (256 * 1024)

typedef struct loom_hostlist loom_hostlist_t;

loom_hostlist_t *loom_hostlist_create(void);
void loom_hostlist_destroy(loom_hostlist_t *hl);

/* Parse an expression into a new list (caller destroys). On error *out is untouched. */
int loom_hostlist_parse(const char *expr, loom_hostlist_t **out, loom_err_t *err);
/* Append the names of expr to hl; on error hl is unchanged. */
int loom_hostlist_push_expr(loom_hostlist_t *hl, const char *expr, loom_err_t *err);
/* Append one literal name (no bracket expansion). */
void loom_hostlist_push(loom_hostlist_t *hl, const char *name);

size_t loom_hostlist_count(const loom_hostlist_t *hl);
/* The i-th name; NULL when i is out of range. Owned by the list. */
const char *loom_hostlist_nth(const loom_hostlist_t *hl, size_t i);
/* Index of name, or -1. */
long loom_hostlist_find(const loom_hostlist_t *hl, const char *name);

/* Sort numerically (n2 before n10) and drop duplicates. */
void loom_hostlist_sort(loom_hostlist_t *hl);
void loom_hostlist_uniq(loom_hostlist_t *hl);

/* Compressed form keeping the list order ("scontrol show hostlist"), appended to out. */
void loom_hostlist_ranged(const loom_hostlist_t *hl, loom_sbuf_t *out);
/* Convenience: sort+uniq a copy and compress; returns a malloc'd string. */
char *loom_hostlist_compress_sorted(const loom_hostlist_t *hl);

#endif

/*
 * hostlist.h - hostlist expressions (CLI_SPEC §0.4).
 *
 * "a,b,node[001-016,020]", "rack[1-2]-n[01-04]": names and bracketed ranges,
 * separated by commas or whitespace (empty pieces between separators are
 * skipped, as Slurm does); several bracket groups in one name form a
 * cartesian product, in Slurm's order (the last group varies fastest, then
 * the first, the second, ...); the width of a range is
 * the length of its lower bound as written ("n[01-3]" -> n01 n02 n03). Text
 * after the last group ("n[1-2]-ib") is accepted (Slurm 22.05 rejects it).
 * Names are made of letters, digits and "-_.:@+"; a bracket holds "lo" or
 * "lo-hi" items (numbers < 2^64) separated by commas. Errors: unbalanced or
 * nested brackets, empty items, reversed ranges, bad characters (-LOOM_EPARSE
 * or -LOOM_ERANGE), more than LOOM_HOSTLIST_MAX names in the list
 * (-LOOM_ETOOBIG; counted before anything is expanded).
 *
 * Compression matches scontrol 22.05: only a name's trailing digits are the
 * range part ("rack1-n[01-02],rack2-n01"; "n1x,n2x" stays as it is), except
 * that a name made from a pattern ending in a bracket keeps that bracket as
 * its range part ("n1[3-4]" prints back as "n1[3-4]", "n13,n14" as
 * "n[13-14]"); names of one prefix that follow each other share a bracket,
 * and n, n+1 merge when one zero-padding width prints both as written
 * ("n[9-10]", "n[09-10]", "n[01-02,3]").
 *
 * Known difference: Slurm's hostlistsorted sorts its internal ranges, not
 * names, so for bracketed input with duplicates or a range that crosses a
 * digit count ("n[5-96]") its output can differ from Loom's name sort (and
 * Slurm sometimes prints names that expand differently there).
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

/* Parse an expression into a new list (caller destroys); returns the name
 * count. "" gives an empty list. On error *out is untouched. */
int loom_hostlist_parse(const char *expr, loom_hostlist_t **out, loom_err_t *err);
/* Append the names of expr to hl; returns how many were added. On error hl is
 * unchanged. The list as a whole is held to LOOM_HOSTLIST_MAX names. */
int loom_hostlist_push_expr(loom_hostlist_t *hl, const char *expr, loom_err_t *err);
/* Append one literal name (no bracket expansion). */
void loom_hostlist_push(loom_hostlist_t *hl, const char *name);

size_t loom_hostlist_count(const loom_hostlist_t *hl);
/* The i-th name; NULL when i is out of range. Owned by the list. */
const char *loom_hostlist_nth(const loom_hostlist_t *hl, size_t i);
/* Index of name, or -1. */
long loom_hostlist_find(const loom_hostlist_t *hl, const char *name);

/* Sort numerically (n2 before n10), keeping duplicates: prefixes in natural
 * order, then names without a number, then by digits written and value
 * (n3 < n01 < n02, as Slurm). O(n log n).
 * "scontrol show hostlistsorted" is loom_hostlist_sort + loom_hostlist_ranged. */
void loom_hostlist_sort(loom_hostlist_t *hl);
/* Sort (as above) and drop duplicates, like Slurm's hostlist_uniq. */
void loom_hostlist_uniq(loom_hostlist_t *hl);

/* Compressed form keeping the list order ("scontrol show hostlist"), appended
 * to out; only runs that are consecutive in the list merge ("n[3,1-2]").
 * Expanding the result gives the list back, name for name. */
void loom_hostlist_ranged(const loom_hostlist_t *hl, loom_sbuf_t *out);
/* Convenience: sort+uniq a copy and compress; returns a malloc'd string. */
char *loom_hostlist_compress_sorted(const loom_hostlist_t *hl);

#endif

/*
 * sinfo_fields.h - sinfo's rows and format letters (CLI_SPEC §7.1, §7.2).
 *
 * sinfo prints one row per group of nodes: nodes of one partition whose
 * displayed attributes match (state, features, reason, ...). A row therefore
 * holds a partition (NULL when no partition field is shown, e.g. sinfo -R)
 * and its nodes; per-node columns read the first node, count columns (%D,
 * %C, %F, %A) and node lists (%N, %n, %o) cover them all, and the sizes
 * (%c, %m, %d, %z ...) print the minimum with a '+' when they differ, as
 * Slurm does without -e.
 *
 * Node and partition attributes come from the controller's records
 * (docs/proto/messages.md §1.1, §1.2) and fall back to slurm.conf.
 */
#ifndef LOOM_SINFO_FIELDS_H
#define LOOM_SINFO_FIELDS_H

#include "cli/cli_format.h"
#include "common/conf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct loom_sinfo_node {
    const char *name;
    const json_t *rec;           /* node.info record; NULL when the controller sent none */
    const loom_conf_node_t *cfg; /* slurm.conf line; NULL for a node it does not know */
    uint32_t state;              /* nodestate.h word */
    size_t rank;                 /* position in the name-sorted node list */
} loom_sinfo_node_t;

typedef struct loom_sinfo_part {
    const char *name;
    const json_t *rec;
    const loom_conf_part_t *cfg;
    size_t order; /* slurm.conf order: sinfo's "#P" sort */
} loom_sinfo_part_t;

typedef struct loom_sinfo_row {
    const loom_sinfo_part_t *part; /* NULL: grouped across partitions */
    loom_sinfo_node_t **nodes;
    size_t n, cap;
} loom_sinfo_row_t;

/* Getters' context. */
typedef struct loom_sinfo_view {
    bool node_mode; /* -N: the partition column is right-justified */
} loom_sinfo_view_t;

extern const loom_fmt_col_t loom_sinfo_cols[];
extern const size_t loom_sinfo_ncols;

/* Column kinds that drive grouping (see the file comment). */
bool loom_sinfo_col_is_partition(const loom_fmt_col_t *col);
bool loom_sinfo_col_is_aggregate(const loom_fmt_col_t *col, bool exact);
/* The getter of %P and of %N (for '#' widths). */
loom_fmt_get_f *loom_sinfo_get_partition(void);
loom_fmt_get_f *loom_sinfo_get_nodelist(void);

/* Node attribute with the slurm.conf fallback. */
int64_t loom_sinfo_node_int(const loom_sinfo_node_t *n, const char *key);
/* Slurm's numeric node state (for the -t sort order). */
uint32_t loom_sinfo_slurm_state(uint32_t loom_state);
/* Partition display name: "debug*" for the default one. */
void loom_sinfo_part_name(const loom_sinfo_part_t *p, bool star, loom_sbuf_t *out);

#endif

/*
 * store_acct.h - the accounting entities of loomdbd's store: clusters,
 * accounts, users, QOS and associations (schema migration 2, store.c).
 *
 * A thin, generic layer: every entity is one table described by a column
 * table in store_acct.c, and records travel as JSON objects whose keys are
 * the column names (docs/proto/messages.md §6). Integer columns are JSON
 * integers, text columns strings; SQL NULL ("not set") is an absent key. The
 * Slurm rules (parents, cascades, inheritance, += and -=) live above this, in
 * acct.c.
 *
 * Where clauses are JSON objects {column: value | [values]}: a list matches
 * any of its values, several columns must all match; an empty or NULL where
 * matches every row.
 *
 * Entry points: loom_store_acct_list, loom_store_acct_insert,
 * loom_store_acct_update, loom_store_acct_delete, loom_acct_ent_name,
 * loom_acct_ent_find, loom_acct_col_is_int.
 */
#ifndef LOOM_DBD_STORE_ACCT_H
#define LOOM_DBD_STORE_ACCT_H

#include "common/err.h"
#include "dbd/store.h"

#include <jansson.h>
#include <stdbool.h>

typedef enum loom_acct_ent {
    LOOM_ACCT_CLUSTER = 0,
    LOOM_ACCT_ACCOUNT,
    LOOM_ACCT_USER,
    LOOM_ACCT_QOS,
    LOOM_ACCT_ASSOC,
    LOOM_ACCT_NENTS,
} loom_acct_ent_t;

/* "cluster", "account", "user", "qos", "assoc". */
const char *loom_acct_ent_name(loom_acct_ent_t ent);
/* The entity of a name above, or -1. */
int loom_acct_ent_find(const char *name);
/* Is col a column of ent, and is it an integer one? */
bool loom_acct_col_known(loom_acct_ent_t ent, const char *col);
bool loom_acct_col_is_int(loom_acct_ent_t ent, const char *col);

/* Rows matching where, as a new JSON array of records in key order (caller decrefs). */
int loom_store_acct_list(loom_store_t *st, loom_acct_ent_t ent, const json_t *where, json_t **out,
                         loom_err_t *err);
/* Insert one record; -EEXIST when its key is taken. Unknown keys are errors. */
int loom_store_acct_insert(loom_store_t *st, loom_acct_ent_t ent, const json_t *rec,
                           loom_err_t *err);
/* Set columns (a JSON null clears one) on the rows matching where; returns
 * the number of rows changed. */
int loom_store_acct_update(loom_store_t *st, loom_acct_ent_t ent, const json_t *where,
                           const json_t *set, loom_err_t *err);
/* Delete the rows matching where; returns the number deleted. */
int loom_store_acct_delete(loom_store_t *st, loom_acct_ent_t ent, const json_t *where,
                           loom_err_t *err);

#endif

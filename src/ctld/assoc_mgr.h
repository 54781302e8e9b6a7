/*
 * assoc_mgr.h - the controller's copy of the accounting tree: the cluster's
 * associations (parent links, shares, limits), users (default account,
 * admin level) and QOS (priority, limits, flags), as loomdbd lists them
 * (docs/proto/messages.md §6.2).
 *
 * Loading. With AccountingStorageType=accounting_storage/slurmdbd the
 * controller reads the three lists at start and again every
 * CTLD_ASSOC_POLL_MS on libuv's thread pool (one blocking connection per
 * poll, found as the commands find loomdbd: the socket in
 * StateSaveLocation, else beside slurmdbd.conf's SQLite StorageLoc, else
 * TCP AccountingStorageHost:AccountingStoragePort signed with the cluster
 * key). Between polls one dbd.assoc.wait is kept open on another
 * connection (1 s each, signed with the key): when loomdbd says the
 * generation changed the lists are read again at once (loomdbd holds
 * sacctmgr's reply until then), so changes take effect without waiting for
 * the poll, which stays as the fallback.
 * A reply that differs from the tree in use replaces it, bumps the
 * generation and is written to <StateSaveLocation>/assoc_cache.json
 * (write, fsync, rename); at start the cache is read first, so limits keep
 * being enforced while loomdbd is down or before it answers (Slurm's
 * behaviour with its assoc_mgr state files).
 *
 * The tree is immutable once built: a new load builds a new tree and swaps
 * it in on the loop thread. Pointers into a tree stay valid until the next
 * swap; keep ids or names across event-loop turns, or compare generations.
 *
 * Lookups follow Slurm's fallbacks: (account, user, partition), then
 * (account, user) without a partition; no account: the user's default
 * account. Limits are -1 when not set ("INFINITE"); TRES limits are parsed
 * into name/count pairs (memory in MiB).
 *
 * Entry points: ctld_assoc_start, ctld_assoc_stop, ctld_assoc_free,
 * ctld_assoc_tree, ctld_assoc_generation, ctld_assoc_refresh,
 * ctld_assoc_tree_build, ctld_assoc_tree_free, ctld_assoc_find,
 * ctld_assoc_find_account, ctld_assoc_user, ctld_assoc_qos,
 * ctld_assoc_qos_allowed, ctld_tres_parse, ctld_tres_get, ctld_tres_add.
 */
#ifndef LOOM_CTLD_ASSOC_MGR_H
#define LOOM_CTLD_ASSOC_MGR_H

#include "common/err.h"
#include "common/strv.h"
#include "ctld/ctld.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define CTLD_ASSOC_POLL_MS 3000
#define CTLD_TRES_MAX      16
#define CTLD_TRES_NAME_MAX 48

/* TRES counts by name ("cpu", "mem" in MiB, "node", "gres/gpu", "gres/gpu:h100"). */
typedef struct ctld_tres {
    size_t n;
    struct ctld_tres_item {
        char name[CTLD_TRES_NAME_MAX];
        int64_t v;
    } it[CTLD_TRES_MAX];
} ctld_tres_t;

typedef struct ctld_assoc ctld_assoc_t;
struct ctld_assoc {
    uint32_t idx;                     /* in ctld_assoc_tree_t.assocs */
    uint32_t id;                      /* loomdbd's association id */
    char *account, *user, *partition; /* user, partition "" for an account's own association */
    char *parent_account;
    ctld_assoc_t *parent; /* NULL for root */
    ctld_assoc_t **children;
    size_t nchildren;
    int64_t shares;   /* Fairshare (1 when not set) */
    int64_t priority; /* -1: not set */
    int64_t grp_jobs, grp_submit_jobs, grp_wall, max_jobs, max_submit_jobs, max_wall;
    ctld_tres_t grp_tres, max_tres, max_tres_per_node;
    ctld_tres_t grp_tres_mins, grp_tres_run_mins, max_tres_mins; /* TRES-minutes */
    loom_strv_t qos; /* the QOS it may use (inherited) */
    char *default_qos;
};

typedef struct ctld_assoc_user {
    char *name, *default_account;
    int admin_level; /* 0 None, 1 Operator, 2 Administrator */
} ctld_assoc_user_t;

enum {
    CTLD_QOS_DENY_ON_LIMIT = 1u << 0,
    CTLD_QOS_NO_RESERVE = 1u << 1,
    CTLD_QOS_PART_MIN_NODE = 1u << 2,
    CTLD_QOS_PART_MAX_NODE = 1u << 3,
    CTLD_QOS_PART_TIME_LIMIT = 1u << 4,
    CTLD_QOS_OVER_PART_QOS = 1u << 5,
};

typedef struct ctld_qos {
    uint32_t idx, id;
    char *name;
    int64_t priority; /* 0 when not set */
    unsigned flags;   /* CTLD_QOS_* */
    double usage_factor;
    int64_t grp_jobs, grp_submit_jobs, grp_wall, max_wall;
    int64_t max_jobs_pu, max_submit_pu, max_jobs_pa, max_submit_pa;
    ctld_tres_t grp_tres, max_tres, max_tres_per_node, max_tres_pu, max_tres_pa, min_tres;
    ctld_tres_t grp_tres_mins, grp_tres_run_mins, max_tres_mins; /* TRES-minutes */
    loom_strv_t preempt;
} ctld_qos_t;

typedef struct ctld_assoc_mgr ctld_assoc_mgr_t;

typedef struct ctld_assoc_tree {
    ctld_assoc_t **assocs; /* loomdbd's order (by id) */
    size_t nassocs;
    ctld_assoc_user_t *users;
    size_t nusers;
    ctld_qos_t *qos;
    size_t nqos;
    int64_t max_qos_priority;
    ctld_assoc_t *root; /* the cluster's root association, NULL when absent */
    json_t *index;      /* "account\037user\037partition" -> idx */
    bool submit_limits; /* some MaxSubmit/GrpSubmit limit is set */
    bool run_limits;    /* some limit on running jobs (jobs, TRES, wall) is set */
    bool usage_limits;  /* some GrpTRESMins / GrpWall is set (needs the decayed usage) */
} ctld_assoc_tree_t;

/* ---- the manager (loomctld) ---- */

/* Create c->assoc, read the cache, start polling loomdbd when accounting is
 * on. Does nothing with AccountingStorageType other than slurmdbd. */
void ctld_assoc_start(ctld_t *c);
/* Stop the poll timer (shutdown); a poll in flight is dropped when it ends. */
void ctld_assoc_stop(ctld_t *c);
/* Free c->assoc (after the loop ended). */
void ctld_assoc_free(ctld_t *c);
/* The tree in use, or NULL (accounting off, or nothing loaded yet). */
const ctld_assoc_tree_t *ctld_assoc_tree(const ctld_t *c);
/* Bumped each time a different tree is installed (0: none yet). */
uint64_t ctld_assoc_generation(const ctld_t *c);
/* Is accounting storage (loomdbd) configured? */
bool ctld_assoc_enabled(const ctld_t *c);
/* Poll now (unless a poll is in flight). */
void ctld_assoc_refresh(ctld_t *c);

/* ---- trees (pure) ---- */

/* Build a tree from {"assocs": [...], "users": [...], "qos": [...]} (the
 * list replies' records); cluster NULL takes every association. */
int ctld_assoc_tree_build(const json_t *lists, const char *cluster, ctld_assoc_tree_t **out,
                          loom_err_t *err);
void ctld_assoc_tree_free(ctld_assoc_tree_t *t);

/* The association a job of user uses: account NULL or "" means the user's
 * default account; a partition-specific one first, then the account-wide
 * one. NULL when none. */
const ctld_assoc_t *ctld_assoc_find(const ctld_assoc_tree_t *t, const char *user,
                                    const char *account, const char *partition);
/* An account's own association (user ""), NULL when none. */
const ctld_assoc_t *ctld_assoc_find_account(const ctld_assoc_tree_t *t, const char *account);
const ctld_assoc_user_t *ctld_assoc_user(const ctld_assoc_tree_t *t, const char *name);
const ctld_qos_t *ctld_assoc_qos(const ctld_assoc_tree_t *t, const char *name);
/* May an association use a QOS (its list, inherited)? */
bool ctld_assoc_qos_allowed(const ctld_assoc_t *a, const char *qos);

/* "cpu=4,mem=4G,gres/gpu=2" -> items (mem in MiB); -LOOM_EPARSE on a bad item. */
int ctld_tres_parse(const char *s, ctld_tres_t *out, loom_err_t *err);
/* The count of name, -1 when absent. */
int64_t ctld_tres_get(const ctld_tres_t *t, const char *name);
/* Add n to name's count (created when absent; ignored when full). */
void ctld_tres_add(ctld_tres_t *t, const char *name, int64_t n);

#endif

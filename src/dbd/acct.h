/*
 * acct.h - Slurm's accounting rules over the store (CLI_SPEC §10;
 * docs/proto/messages.md §6): what `sacctmgr add|modify|delete|show` does to
 * clusters, accounts, users, QOS and associations.
 *
 * The association tree: every cluster has a root association (account
 * "root", no user); an account's own association (user "") hangs under its
 * parent account's; a user association (cluster, account, user, partition)
 * hangs under its account's. Inheritable fields (qos, default_qos, max_*)
 * that an association does not set come from its parent when listed
 * ("effective" values); the stored record keeps only what was set.
 *
 * Requests and replies are the JSON bodies of the dbd.<entity>.<op>
 * messages; each function fills the reply payload object `out` (which the
 * caller owns and sends) and runs inside one transaction: a failure changes
 * nothing.
 *
 * Changes in `set`: a JSON null or -1 clears a limit; TRES fields are merged
 * (tres.h); list fields (qos, preempt) take a list (replace) or
 * {"op":"+"|"-","items":[...]}.
 *
 * Entry points: loom_acct_init, loom_acct_add, loom_acct_modify,
 * loom_acct_delete, loom_acct_list, loom_acct_register, loom_acct_user_level.
 */
#ifndef LOOM_DBD_ACCT_H
#define LOOM_DBD_ACCT_H

#include "common/err.h"
#include "common/strv.h"
#include "dbd/store.h"
#include "dbd/store_acct.h"

#include <jansson.h>
#include <stdint.h>

typedef struct loom_acct_ctx {
    loom_store_t *st;
    const loom_strv_t *tres_known; /* gres/... names accepted in TRES limits; NULL: any */
    int64_t now;                   /* creation time stamps */
} loom_acct_ctx_t;

/* Create what a fresh database holds (root account, root user as
 * Administrator, the "normal" QOS) and, when cluster is not NULL, that
 * cluster with its root associations. Idempotent. */
int loom_acct_init(const loom_acct_ctx_t *a, const char *cluster, loom_err_t *err);

int loom_acct_add(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                  loom_err_t *err);
int loom_acct_modify(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                     loom_err_t *err);
int loom_acct_delete(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                     loom_err_t *err);
int loom_acct_list(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                   loom_err_t *err);

/* A controller's registration (dbd.register): req has cluster,
 * control_host, control_port, rpc. A cluster not in the database is added
 * with its root associations (out "added": [name]); then its row records
 * where the controller listens. */
int loom_acct_register(const loom_acct_ctx_t *a, const json_t *req, json_t *out, loom_err_t *err);

/* The admin level of a user name: 0 None, 1 Operator, 2 Administrator. */
int loom_acct_user_level(const loom_acct_ctx_t *a, const char *user);

#endif

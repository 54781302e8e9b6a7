/*
 * loomdbd_report.c - the report requests (loomdbd_report.h): decode the
 * window and filters, run store_report.c's query, copy its result into the
 * reply. Security: any user may read reports (Slurm's default without
 * PrivateData=usage).
 */
#include "dbd/loomdbd_report.h"
#include "dbd/store_report.h"

#include "common/sbuf.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A filter given as a comma string or a list of strings, or NULL. */
static char *report_filter(const json_t *req, const char *key)
{
    const json_t *v = json_object_get(req, key);
    if (json_is_string(v))
        return loom_xstrdup(json_string_value(v));
    if (!json_is_array(v))
        return NULL;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (json_is_string(item))
            loom_sbuf_addf(&sb, "%s%s", i ? "," : "", json_string_value(item));
    }
    return loom_sbuf_detach(&sb);
}

typedef int report_fn(loom_store_t *st, const loom_store_repq_t *q, json_t **out, loom_err_t *err);

static int report_run(dbd_t *d, const json_t *req, json_t *out, report_fn *fn, loom_err_t *err)
{
    const json_t *s = json_object_get(req, "start"), *e = json_object_get(req, "end");
    if (!json_is_integer(s) || !json_is_integer(e) ||
        json_integer_value(s) >= json_integer_value(e) || json_integer_value(s) < 0)
        return loom_errf(err, -LOOM_EPROTO, "a report needs start < end (epoch seconds)");
    const char *cluster = json_string_value(json_object_get(req, "cluster"));
    char *users = report_filter(req, "users"), *accounts = report_filter(req, "accounts");
    loom_store_repq_t q = {
        .cluster = cluster ? cluster : d->cluster,
        .users = users,
        .accounts = accounts,
        .start = json_integer_value(s),
        .end = json_integer_value(e),
        .now = time(NULL),
    };
    if (json_is_true(json_object_get(req, "all_clusters")))
        q.cluster = NULL;
    json_t *res = NULL;
    int rc = fn(d->st, &q, &res, err);
    free(users);
    free(accounts);
    if (rc < 0)
        return rc;
    json_object_update(out, res);
    json_decref(res);
    return 0;
}

int dbd_report_cluster(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                       loom_err_t *err)
{
    (void)peer;
    return report_run(d, req, out, loom_store_report_cluster, err);
}

int dbd_report_users(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                     loom_err_t *err)
{
    (void)peer;
    return report_run(d, req, out, loom_store_report_users, err);
}

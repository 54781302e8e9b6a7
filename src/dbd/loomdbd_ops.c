/*
 * loomdbd_ops.c - loomdbd's request handlers (docs/proto/messages.md §6).
 * They run on the worker thread with the store; see loomdbd.h. Each has the
 * one shape of rpc.md §7: decode, validate, authorize (Security:), act.
 */
#include "dbd/acct.h"
#include "dbd/loomdbd.h"
#include "dbd/loomdbd_report.h"
#include "dbd/store_report.h"

#include "common/log.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Records per dbd.job request: a controller batches its spool in pieces. */
#define DBD_JOB_BATCH_MAX 10000

int dbd_store_ensure(dbd_t *d, loom_err_t *err)
{
    if (!d->st) {
        int rc = loom_store_open(d->store_type, d->store_loc, &d->st, err);
        if (rc < 0)
            return rc;
        d->store_inited = false;
        loom_info("accounting store open (%s)", d->store_type);
    }
    if (!d->store_inited) {
        loom_acct_ctx_t a = {.st = d->st, .tres_known = &d->tres_known, .now = time(NULL)};
        int rc = loom_acct_init(&a, d->cluster, err);
        if (rc < 0)
            return rc;
        d->store_inited = true;
    }
    return 0;
}

void dbd_store_check(dbd_t *d, int rc)
{
    if (rc == -LOOM_ECONNECT && d->st) {
        loom_store_close(d->st);
        d->st = NULL;
    }
}

static loom_acct_ctx_t dbd_acct_ctx(dbd_t *d)
{
    return (loom_acct_ctx_t){.st = d->st, .tres_known = &d->tres_known, .now = time(NULL)};
}

/* ---- dbd.job: job and step records from loomctld ---------------------------- */

static int dbd_put_record(dbd_t *d, const char *cluster, const json_t *rec, int64_t *seq,
                          loom_err_t *err)
{
    const json_t *s = json_object_get(rec, "seq");
    const json_t *job = json_object_get(rec, "job"), *step = json_object_get(rec, "step"),
                 *cap = json_object_get(rec, "cluster_tres");
    if (!json_is_integer(s) || (!!job + !!step + !!cap) != 1)
        return loom_errf(err, -LOOM_EPROTO,
                         "dbd.job record needs seq and one of job, step, cluster_tres");
    int rc = job    ? loom_store_job_put(d->st, cluster, job, err)
             : step ? loom_store_step_put(d->st, cluster, step, err)
                    : loom_store_ctres_put(d->st, cluster, cap, err);
    if (rc == 0 && json_integer_value(s) > *seq)
        *seq = json_integer_value(s);
    return rc;
}

/* dbd.job: store a batch in one transaction; ack the highest sequence.
 * Security: node role (the registry): only the controller holds the key. */
static int dbd_job(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                   loom_err_t *err)
{
    const json_t *recs = json_object_get(req, "records");
    const char *cluster = json_string_value(json_object_get(req, "cluster"));
    if (!json_is_array(recs))
        return loom_errf(err, -LOOM_EPROTO, "dbd.job needs records");
    if (json_array_size(recs) > DBD_JOB_BATCH_MAX)
        return loom_errf(err, -LOOM_ETOOBIG, "dbd.job: %zu records, at most %d per request",
                         json_array_size(recs), DBD_JOB_BATCH_MAX);
    int64_t seq = -1;
    int rc = loom_store_begin(d->st, err);
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r)
    {
        if (rc < 0)
            break;
        rc = dbd_put_record(d, cluster ? cluster : d->cluster, r, &seq, err);
    }
    if (rc >= 0)
        rc = loom_store_commit(d->st, err);
    if (rc < 0) {
        loom_store_rollback(d->st);
        return rc;
    }
    json_object_set_new(out, "acked", json_integer(seq));
    json_object_set_new(out, "stored", json_integer((json_int_t)json_array_size(recs)));
    return 0;
}

/* ---- dbd.register: a controller comes up --------------------------------------- */

/* The controller's address as slurmdbd shows it: the TCP peer's IP, else
 * (the Unix socket) the host it names, resolved to an IPv4 address. */
static void dbd_control_host(const dbd_peer_t *peer, const char *named, char *out, size_t len)
{
    snprintf(out, len, "%s", peer->addr[0] ? peer->addr : named ? named : "");
    if (peer->addr[0] || !named || !*named)
        return;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(named, NULL, &hints, &res) == 0 && res)
        inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, out, (socklen_t)len);
    if (res)
        freeaddrinfo(res);
}

/* dbd.register: record the cluster's controller (added when new).
 * Security: node role (the registry): only the controller holds the key. */
static int dbd_register(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                        loom_err_t *err)
{
    const json_t *port = json_object_get(req, "control_port");
    const json_t *rpc = json_object_get(req, "rpc");
    if (!json_is_integer(port) || !json_is_integer(rpc) || json_integer_value(port) < 0 ||
        json_integer_value(port) > 65535)
        return loom_errf(err, -LOOM_EPROTO, "dbd.register needs control_port and rpc");
    char host[256];
    dbd_control_host(peer, json_string_value(json_object_get(req, "control_host")), host,
                     sizeof(host));
    json_t *r = json_deep_copy(req);
    json_object_set_new(r, "control_host", json_string(host));
    loom_acct_ctx_t a = dbd_acct_ctx(d);
    int rc = loom_acct_register(&a, r, out, err);
    json_decref(r);
    if (rc >= 0)
        json_object_set_new(out, "control_host", json_string(host));
    if (rc >= 0) {
        d->acct_gen++; /* a new cluster's associations, a new address */
        loom_info("cluster %s registered: controller at %s:%lld",
                  json_string_value(json_object_get(req, "cluster")), host,
                  (long long)json_integer_value(port));
    }
    return rc;
}

/* The registering connection closed (the controller stopped or died): clear
 * the address it registered, if it is still the one recorded, as slurmdbd
 * does when a registered slurmctld's connection ends. Internal: loomdbd
 * queues it itself (loomdbd_server.c), no message type reaches it. */
static int dbd_unregister(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                          loom_err_t *err)
{
    json_t *where = json_pack("{s:O, s:O, s:O}", "name", json_object_get(req, "cluster"),
                              "control_host", json_object_get(req, "control_host"), "control_port",
                              json_object_get(req, "control_port"));
    json_t *set = json_pack("{s:s, s:i}", "control_host", "", "control_port", 0);
    int rc = where ? loom_store_acct_update(d->st, LOOM_ACCT_CLUSTER, where, set, err)
                   : loom_errf(err, -LOOM_EPROTO, "bad registration");
    json_decref(where);
    json_decref(set);
    return rc < 0 ? rc : 0;
}

static const dbd_handler_t dbd_unregister_handler = {"dbd.unregister", dbd_unregister, -1, 0};

const dbd_handler_t *dbd_handler_unregister(void)
{
    return &dbd_unregister_handler;
}

/* ---- dbd.jobs.query: sacct ------------------------------------------------------ */

/* A filter member as a comma list (a string or a list of strings), or NULL. */
static char *dbd_filter(const json_t *req, const char *key)
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
            loom_sbuf_addf(&sb, "%s%s", sb.len ? "," : "", json_string_value(item));
        else if (json_is_integer(item))
            loom_sbuf_addf(&sb, "%s%" JSON_INTEGER_FORMAT, sb.len ? "," : "",
                           json_integer_value(item));
    }
    return loom_sbuf_detach(&sb);
}

static bool dbd_sees_all(dbd_t *d, const dbd_peer_t *peer)
{
    if (peer->role >= LOOM_ROLE_ADMIN)
        return true;
    loom_acct_ctx_t a = dbd_acct_ctx(d);
    return loom_acct_user_level(&a, peer->user) >= 1;
}

/* ---- sacct's AssocID: the association of each job's (cluster, account,
 * user, partition), else its user's association without partition -------- */

static void dbd_assoc_key(loom_sbuf_t *k, const char *cluster, const char *account,
                          const char *user, const char *part)
{
    loom_sbuf_reset(k);
    loom_sbuf_addf(k, "%s\x1f%s\x1f%s\x1f%s", cluster ? cluster : "", account ? account : "",
                   user ? user : "", part ? part : "");
}

static int dbd_assoc_row(void *arg, int ncols, const char *const *vals)
{
    if (ncols < 5 || !vals[4])
        return 0;
    loom_sbuf_t k = LOOM_SBUF_INIT;
    dbd_assoc_key(&k, vals[0], vals[1], vals[2], vals[3]);
    json_object_set_new(arg, loom_sbuf_str(&k), json_integer(strtoll(vals[4], NULL, 10)));
    loom_sbuf_free(&k);
    return 0;
}

static void dbd_jobs_assoc_ids(dbd_t *d, const char *cluster, json_t *jobs)
{
    json_t *map = json_object(), *job;
    size_t i;
    loom_sbuf_t k = LOOM_SBUF_INIT;
    if (json_array_size(jobs) &&
        loom_store_exec(d->st, "SELECT cluster, account, user_name, partition, id FROM assocs", 0,
                        NULL, dbd_assoc_row, map, NULL) >= 0) {
        json_array_foreach(jobs, i, job)
        {
            if (json_object_get(job, "assoc_id"))
                continue;
            const char *c = json_string_value(json_object_get(job, "cluster"));
            c = c ? c : cluster;
            const char *a = json_string_value(json_object_get(job, "account")),
                       *u = json_string_value(json_object_get(job, "user_name"));
            dbd_assoc_key(&k, c, a, u, json_string_value(json_object_get(job, "partition")));
            json_t *id = json_object_get(map, loom_sbuf_str(&k));
            dbd_assoc_key(&k, c, a, u, "");
            id = id ? id : json_object_get(map, loom_sbuf_str(&k));
            if (id)
                json_object_set(job, "assoc_id", id);
        }
    }
    loom_sbuf_free(&k);
    json_decref(map);
}

static int dbd_jobs_query(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                          loom_err_t *err)
{
    static const char *const keys[] = {"users", "accounts", "partitions",
                                       "names", "states",   "job_ids"};
    char *f[6];
    for (int i = 0; i < 6; i++)
        f[i] = dbd_filter(req, keys[i]);
    /* Security: a user who is neither admin nor operator sees only their own jobs. */
    if (!dbd_sees_all(d, peer)) {
        free(f[0]);
        f[0] = loom_xstrdup(peer->user);
    }
    const char *cluster = json_string_value(json_object_get(req, "cluster"));
    loom_store_jobq_t q = {
        .cluster = cluster ? cluster : d->cluster,
        .user = f[0],
        .account = f[1],
        .partition = f[2],
        .name = f[3],
        .state = f[4],
        .job_ids = f[5],
        .start = json_integer_value(json_object_get(req, "start")),
        .end = json_integer_value(json_object_get(req, "end")),
        .limit = json_integer_value(json_object_get(req, "limit")),
        .steps = json_is_true(json_object_get(req, "steps")),
    };
    if (json_is_true(json_object_get(req, "all_clusters")))
        q.cluster = NULL;
    json_t *jobs = NULL;
    int rc = loom_store_job_query(d->st, &q, &jobs, err);
    for (int i = 0; i < 6; i++)
        free(f[i]);
    if (rc < 0)
        return rc;
    dbd_jobs_assoc_ids(d, cluster ? cluster : d->cluster, jobs);
    json_object_set_new(out, "jobs", jobs);
    return 0;
}

/* ---- entities: dbd.<entity>.<op> ------------------------------------------------ */

/* A list: "gen" names the state it shows; with "if_gen" equal to it, only
 * "unchanged": true (loomctld polls this way, messages.md §6.2). */
static int dbd_entity_list(dbd_t *d, const dbd_handler_t *h, const json_t *req, json_t *out,
                           loom_err_t *err)
{
    if (!d->acct_epoch) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        d->acct_epoch = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }
    char gen[48];
    snprintf(gen, sizeof(gen), "%lld.%llu", (long long)d->acct_epoch,
             (unsigned long long)d->acct_gen);
    json_object_set_new(out, "gen", json_string(gen));
    const char *if_gen = json_string_value(json_object_get(req, "if_gen"));
    if (if_gen && strcmp(if_gen, gen) == 0) {
        json_object_set_new(out, "unchanged", json_true());
        return 0;
    }
    loom_acct_ctx_t a = dbd_acct_ctx(d);
    return loom_acct_list(&a, h->ent, req, out, err);
}

/* Security: changes need an admin peer, or an Operator/Administrator user. */
static int dbd_entity(dbd_t *d, const dbd_peer_t *peer, const dbd_handler_t *h, const json_t *req,
                      json_t *out, loom_err_t *err)
{
    if (h->op == 'l')
        return dbd_entity_list(d, h, req, out, err);
    if (!dbd_sees_all(d, peer))
        return loom_errf(err, -LOOM_EACCESS, "Access/permission denied");
    loom_acct_ctx_t a = dbd_acct_ctx(d);
    int rc = h->op == 'a'   ? loom_acct_add(&a, h->ent, req, out, err)
             : h->op == 'm' ? loom_acct_modify(&a, h->ent, req, out, err)
                            : loom_acct_delete(&a, h->ent, req, out, err);
    if (rc >= 0)
        d->acct_gen++; /* a dry run too: harmless, lists are read again */
    return rc;
}

#define DBD_ENTITY_FN(fn, type)                                                                    \
    static int fn(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,                \
                  loom_err_t *err)                                                                 \
    {                                                                                              \
        return dbd_entity(d, peer, dbd_handler_find(type), req, out, err);                         \
    }

DBD_ENTITY_FN(dbd_cluster_add, "dbd.cluster.add")
DBD_ENTITY_FN(dbd_cluster_modify, "dbd.cluster.modify")
DBD_ENTITY_FN(dbd_cluster_delete, "dbd.cluster.delete")
DBD_ENTITY_FN(dbd_cluster_list, "dbd.cluster.list")
DBD_ENTITY_FN(dbd_account_add, "dbd.account.add")
DBD_ENTITY_FN(dbd_account_modify, "dbd.account.modify")
DBD_ENTITY_FN(dbd_account_delete, "dbd.account.delete")
DBD_ENTITY_FN(dbd_account_list, "dbd.account.list")
DBD_ENTITY_FN(dbd_user_add, "dbd.user.add")
DBD_ENTITY_FN(dbd_user_modify, "dbd.user.modify")
DBD_ENTITY_FN(dbd_user_delete, "dbd.user.delete")
DBD_ENTITY_FN(dbd_user_list, "dbd.user.list")
DBD_ENTITY_FN(dbd_qos_add, "dbd.qos.add")
DBD_ENTITY_FN(dbd_qos_modify, "dbd.qos.modify")
DBD_ENTITY_FN(dbd_qos_delete, "dbd.qos.delete")
DBD_ENTITY_FN(dbd_qos_list, "dbd.qos.list")
DBD_ENTITY_FN(dbd_assoc_modify, "dbd.assoc.modify")
DBD_ENTITY_FN(dbd_assoc_list, "dbd.assoc.list")

static const dbd_handler_t dbd_handlers[] = {
    {"dbd.job", dbd_job, -1, 0},
    {"dbd.jobs.query", dbd_jobs_query, -1, 0},
    {"dbd.register", dbd_register, -1, 0},
    {"dbd.report.cluster", dbd_report_cluster, -1, 0},
    {"dbd.report.users", dbd_report_users, -1, 0},
    {"dbd.cluster.add", dbd_cluster_add, LOOM_ACCT_CLUSTER, 'a'},
    {"dbd.cluster.modify", dbd_cluster_modify, LOOM_ACCT_CLUSTER, 'm'},
    {"dbd.cluster.delete", dbd_cluster_delete, LOOM_ACCT_CLUSTER, 'd'},
    {"dbd.cluster.list", dbd_cluster_list, LOOM_ACCT_CLUSTER, 'l'},
    {"dbd.account.add", dbd_account_add, LOOM_ACCT_ACCOUNT, 'a'},
    {"dbd.account.modify", dbd_account_modify, LOOM_ACCT_ACCOUNT, 'm'},
    {"dbd.account.delete", dbd_account_delete, LOOM_ACCT_ACCOUNT, 'd'},
    {"dbd.account.list", dbd_account_list, LOOM_ACCT_ACCOUNT, 'l'},
    {"dbd.user.add", dbd_user_add, LOOM_ACCT_USER, 'a'},
    {"dbd.user.modify", dbd_user_modify, LOOM_ACCT_USER, 'm'},
    {"dbd.user.delete", dbd_user_delete, LOOM_ACCT_USER, 'd'},
    {"dbd.user.list", dbd_user_list, LOOM_ACCT_USER, 'l'},
    {"dbd.qos.add", dbd_qos_add, LOOM_ACCT_QOS, 'a'},
    {"dbd.qos.modify", dbd_qos_modify, LOOM_ACCT_QOS, 'm'},
    {"dbd.qos.delete", dbd_qos_delete, LOOM_ACCT_QOS, 'd'},
    {"dbd.qos.list", dbd_qos_list, LOOM_ACCT_QOS, 'l'},
    {"dbd.assoc.modify", dbd_assoc_modify, LOOM_ACCT_ASSOC, 'm'},
    {"dbd.assoc.list", dbd_assoc_list, LOOM_ACCT_ASSOC, 'l'},
};

const dbd_handler_t *dbd_handler_find(const char *type)
{
    for (size_t i = 0; i < sizeof(dbd_handlers) / sizeof(dbd_handlers[0]); i++)
        if (strcmp(dbd_handlers[i].name, type) == 0)
            return &dbd_handlers[i];
    return NULL;
}

/* acct_link.c - delivering the accounting spool to loomdbd. See acct_link.h. */
#include "ctld/acct_link.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/rpcclient.h"
#include "common/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define LINK_TIMEOUT_MS   30000
#define LINK_BACKOFF_MIN  1000
#define LINK_BACKOFF_MAX  10000
#define LINK_LINGER_MS    200  /* after a send, while fewer than ... */
#define LINK_LINGER_BELOW 1000 /* ... records wait */

struct ctld_acct_link {
    uv_loop_t *loop;
    ctld_acct_spool_t *sp;
    const loom_key_t *key;
    char *sock_path; /* <StateSaveLocation>/loomdbd.sock */
    char *tcp_addr;  /* host:port */
    char *cluster;
    char *ctl_host; /* where this controller listens (dbd.register) */
    int64_t ctl_port;
    uv_timer_t timer; /* backoff */
    uv_work_t work;
    bool busy, waiting, stopping, timer_closed;
    bool up, down_logged, backlog_logged, tres_refused_logged;
    uint64_t backoff_ms;
    int64_t down_since;
    json_t *tres; /* capacity records waiting (array) */
    /* The worker's side: touched only while busy. */
    loom_rpc_t *rpc;
    char addr[4200];
    ctld_acct_read_t rd;
    json_t *sent_tres;
    bool tres_refused;
    uint64_t last, acked;
    int count, status;
    char errmsg[512];
};

static void link_maybe_free(ctld_acct_link_t *l)
{
    if (!l->stopping || l->busy || !l->timer_closed)
        return;
    loom_rpc_close(l->rpc);
    json_decref(l->tres);
    free(l->sock_path);
    free(l->tcp_addr);
    free(l->cluster);
    free(l->ctl_host);
    free(l);
}

/* ---- the thread pool side ----------------------------------------------------------- */

static int link_register(ctld_acct_link_t *l, loom_err_t *err);

static int link_connect(ctld_acct_link_t *l, loom_err_t *err)
{
    if (l->rpc)
        return 0;
    struct stat st;
    if (stat(l->sock_path, &st) == 0 && S_ISSOCK(st.st_mode))
        snprintf(l->addr, sizeof(l->addr), "unix:%s", l->sock_path);
    else
        snprintf(l->addr, sizeof(l->addr), "%s", l->tcp_addr);
    l->rpc = loom_rpc_connect(l->addr, l->key, LINK_TIMEOUT_MS, err);
    if (!l->rpc)
        return err->code ? err->code : -LOOM_ECONNECT;
    loom_rpc_set_sender(l->rpc, "ctld");
    return link_register(l, err);
}

/* dbd.register on each new connection: the cluster, where this controller
 * listens, Slurm 22.05's RPC version. A refusal is logged, records still go. */
static int link_register(ctld_acct_link_t *l, loom_err_t *err)
{
    json_t *req = loom_msg_new("dbd.register", 0);
    json_object_set_new(req, "cluster", json_string(l->cluster));
    json_object_set_new(req, "control_host", json_string(l->ctl_host));
    json_object_set_new(req, "control_port", json_integer(l->ctl_port));
    json_object_set_new(req, "rpc", json_integer(CTLD_ACCT_RPC_VERSION));
    json_t *rep = NULL;
    int rc = loom_rpc_call(l->rpc, req, &rep, err);
    json_decref(req);
    if (rc < 0) {
        loom_rpc_close(l->rpc);
        l->rpc = NULL;
        return rc;
    }
    const char *msg = NULL;
    int reply_rc = loom_msg_rc(rep, &msg);
    if (reply_rc < 0 && reply_rc != -LOOM_EMSG_TYPE)
        loom_error("accounting: loomdbd refused the registration of cluster %s: %s", l->cluster,
                   msg ? msg : "error");
    json_decref(rep);
    return 0;
}

/* One dbd.job; records is borrowed. *reply_rc gets loomdbd's answer. */
static int link_send(ctld_acct_link_t *l, json_t *records, int *reply_rc, uint64_t *acked,
                     loom_err_t *err)
{
    json_t *req = loom_msg_new("dbd.job", 0);
    json_object_set_new(req, "cluster", json_string(l->cluster));
    json_object_set(req, "records", records);
    json_t *rep = NULL;
    int rc = loom_rpc_call(l->rpc, req, &rep, err);
    json_decref(req);
    if (rc < 0) {
        loom_rpc_close(l->rpc); /* the transport is gone: reconnect next time */
        l->rpc = NULL;
        return rc;
    }
    const char *msg = NULL;
    *reply_rc = loom_msg_rc(rep, &msg);
    if (*reply_rc < 0)
        loom_errf(err, *reply_rc, "loomdbd: %s", msg ? msg : "error");
    json_int_t a = json_integer_value(json_object_get(rep, "acked"));
    *acked = a > 0 ? (uint64_t)a : 0;
    json_decref(rep);
    return 0;
}

static int link_round(ctld_acct_link_t *l, loom_err_t *err)
{
    int rc = link_connect(l, err);
    int reply_rc = 0;
    uint64_t acked = 0;
    if (rc == 0 && l->sent_tres) {
        rc = link_send(l, l->sent_tres, &reply_rc, &acked, err);
        if (rc == 0 && reply_rc < 0)
            l->tres_refused = true;
    }
    if (rc < 0)
        return rc;
    json_t *records = json_array();
    rc = ctld_acct_spool_read(&l->rd, records, &l->last, err);
    l->count = rc > 0 ? rc : 0;
    if (rc > 0) {
        rc = link_send(l, records, &reply_rc, &acked, err);
        if (rc == 0 && reply_rc < 0)
            rc = reply_rc;
        l->acked = acked;
    }
    json_decref(records);
    return rc < 0 ? rc : 0;
}

static void link_work(uv_work_t *w)
{
    ctld_acct_link_t *l = w->data;
    loom_err_t err = {0};
    l->status = link_round(l, &err);
    snprintf(l->errmsg, sizeof(l->errmsg), "%s", l->status < 0 ? err.msg : "");
}

/* ---- the loop side --------------------------------------------------------------------- */

static void link_start(ctld_acct_link_t *l);

static void link_timer_cb(uv_timer_t *t)
{
    ctld_acct_link_t *l = t->data;
    l->waiting = false;
    link_start(l);
}

static uint64_t link_backlog(const ctld_acct_link_t *l)
{
    return ctld_acct_spool_durable(l->sp) - ctld_acct_spool_acked_seq(l->sp);
}

static void link_log_backlog(ctld_acct_link_t *l)
{
    uint64_t n = link_backlog(l);
    if (!l->backlog_logged && n >= CTLD_ACCT_BACKLOG_LOG) {
        l->backlog_logged = true;
        loom_info("accounting: %" PRIu64 " records spooled for loomdbd", n);
    } else if (l->backlog_logged && n == 0) {
        l->backlog_logged = false;
        loom_info("accounting: spool drained");
    }
}

static void link_failed(ctld_acct_link_t *l)
{
    if (l->up || !l->down_logged) {
        loom_error("accounting: loomdbd (%s) unavailable: %s; spooling records in the state "
                   "directory and retrying",
                   l->addr, l->errmsg);
        l->down_logged = true;
        l->down_since = (int64_t)time(NULL);
    }
    l->up = false;
    l->backoff_ms = l->backoff_ms ? l->backoff_ms * 2 : LINK_BACKOFF_MIN;
    if (l->backoff_ms > LINK_BACKOFF_MAX)
        l->backoff_ms = LINK_BACKOFF_MAX;
    l->waiting = true;
    uv_timer_start(&l->timer, link_timer_cb, l->backoff_ms, 0);
}

static void link_done(ctld_acct_link_t *l)
{
    if (!l->up) {
        loom_info("accounting: connected to loomdbd (%s)", l->addr);
        l->up = true;
        l->down_logged = false;
    }
    l->backoff_ms = 0;
    if (l->sent_tres && l->tres_refused && !l->tres_refused_logged) {
        loom_info("accounting: loomdbd does not store cluster_tres records; not sent");
        l->tres_refused_logged = true;
    }
    if (l->count > 0) {
        bool all = l->acked >= l->last;
        ctld_acct_spool_acked(l->sp, all ? l->last : l->acked, all ? &l->rd.pos : NULL);
    }
}

static void link_after(uv_work_t *w, int status)
{
    ctld_acct_link_t *l = w->data;
    l->busy = false;
    if (status < 0 && l->status == 0) {
        l->status = status;
        snprintf(l->errmsg, sizeof(l->errmsg), "%s", uv_strerror(status));
    }
    if (l->status == 0)
        link_done(l);
    else if (l->sent_tres) /* not stored: send them again first */
        json_array_extend(l->tres, l->sent_tres);
    json_decref(l->sent_tres);
    l->sent_tres = NULL;
    ctld_acct_spool_read_args_free(&l->rd);
    link_log_backlog(l);
    if (l->stopping) {
        link_maybe_free(l);
        return;
    }
    if (l->status < 0) {
        link_failed(l);
    } else if (l->count > 0 && link_backlog(l) < LINK_LINGER_BELOW) {
        /* A trickle: let records gather for a moment (fewer, larger transactions). */
        l->waiting = true;
        uv_timer_start(&l->timer, link_timer_cb, LINK_LINGER_MS, 0);
    } else {
        link_start(l);
    }
}

static void link_start(ctld_acct_link_t *l)
{
    if (l->busy || l->waiting || l->stopping)
        return;
    bool tres = json_array_size(l->tres) > 0;
    if (!tres && ctld_acct_spool_durable(l->sp) <= ctld_acct_spool_acked_seq(l->sp))
        return;
    l->sent_tres = NULL;
    if (tres) {
        l->sent_tres = l->tres;
        l->tres = json_array();
    }
    l->tres_refused = false;
    l->count = 0;
    l->last = l->acked = 0;
    ctld_acct_spool_read_args(l->sp, &l->rd);
    l->work.data = l;
    l->busy = true;
    if (uv_queue_work(l->loop, &l->work, link_work, link_after) < 0) {
        l->busy = false;
        ctld_acct_spool_read_args_free(&l->rd);
        if (l->sent_tres)
            json_array_extend(l->tres, l->sent_tres);
        json_decref(l->sent_tres);
        l->sent_tres = NULL;
    }
}

static void link_timer_closed(uv_handle_t *h)
{
    ctld_acct_link_t *l = h->data;
    l->timer_closed = true;
    link_maybe_free(l);
}

ctld_acct_link_t *ctld_acct_link_new(uv_loop_t *loop, ctld_acct_spool_t *sp,
                                     const loom_conf_t *conf, const loom_key_t *key)
{
    ctld_acct_link_t *l = loom_xcalloc(1, sizeof(*l));
    l->loop = loop;
    l->sp = sp;
    l->key = key;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s/loomdbd.sock", conf->state_save_location);
    l->sock_path = loom_sbuf_detach(&sb);
    const char *host = conf->accounting_storage_host ? conf->accounting_storage_host : "localhost";
    int64_t port = conf->accounting_storage_port > 0 ? conf->accounting_storage_port : 6819;
    loom_sbuf_addf(&sb, strchr(host, ':') ? "[%s]:%lld" : "%s:%lld", host, (long long)port);
    l->tcp_addr = loom_sbuf_detach(&sb);
    snprintf(l->addr, sizeof(l->addr), "%s", l->tcp_addr);
    l->cluster = loom_xstrdup(conf->cluster_name ? conf->cluster_name : "cluster");
    const loom_conf_host_t *ch = conf->n_ctld_hosts ? &conf->ctld_hosts[0] : NULL;
    l->ctl_host = loom_xstrdup(ch && ch->addr ? ch->addr : ch ? ch->name : "localhost");
    l->ctl_port = conf->slurmctld_port > 0 ? conf->slurmctld_port : 6817;
    l->tres = json_array();
    l->down_logged = false;
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    return l;
}

void ctld_acct_link_kick(ctld_acct_link_t *l)
{
    if (l)
        link_start(l);
}

void ctld_acct_link_tres(ctld_acct_link_t *l, json_t *rec)
{
    if (!l) { /* stopped */
        json_decref(rec);
        return;
    }
    if (json_array_size(l->tres) >= CTLD_ACCT_TRES_KEEP)
        json_array_remove(l->tres, 0);
    json_array_append_new(l->tres, json_pack("{s:i, s:o}", "seq", 0, "cluster_tres", rec));
    link_start(l);
}

void ctld_acct_link_stop(ctld_acct_link_t *l)
{
    if (!l || l->stopping)
        return;
    l->stopping = true;
    uv_close((uv_handle_t *)&l->timer, link_timer_closed);
}

void ctld_acct_link_describe(const ctld_acct_link_t *l, loom_sbuf_t *out)
{
    if (!l) {
        loom_sbuf_add(out, "stopped");
        return;
    }
    if (l->up)
        loom_sbuf_addf(out, "connected to %s", l->addr);
    else
        loom_sbuf_addf(out, "not connected (%s)", l->addr);
    loom_sbuf_addf(out, ", %" PRIu64 " records waiting", link_backlog(l));
}

/* dispatch.c - header/type/role checks from the registry, then the handler. See dispatch.h. */
#include "ctld/dispatch.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/server.h"
#include "ctld/sched_prio.h"

#include <stdlib.h>
#include <string.h>

struct ctld_dispatch {
    ctld_handler_f **fns; /* indexed like the registry */
};

/* A reply held until the journal entries of its request are durable. */
typedef struct {
    ctld_conn_t *conn;
    json_t *reply;
    char *raw;
    size_t rawlen;
} held_reply_t;

bool ctld_may_touch(const ctld_t *c, const ctld_peer_t *peer, const ctld_job_t *job)
{
    return peer->role >= LOOM_ROLE_ADMIN || peer->uid == job->uid;
}

static int dispatch_add(ctld_dispatch_t *d, const ctld_handler_t *tab, loom_err_t *err)
{
    for (size_t i = 0; tab[i].type; i++) {
        const loom_msg_type_t *t = loom_proto_lookup(tab[i].type);
        if (!t)
            return loom_errf(err, -LOOM_EINTERNAL, "handler for unregistered type '%s'",
                             tab[i].type);
        d->fns[loom_proto_index(t)] = tab[i].fn;
    }
    return 0;
}

int ctld_dispatch_init(ctld_t *c, loom_err_t *err)
{
    ctld_dispatch_t *d = loom_xcalloc(1, sizeof(*d));
    d->fns = loom_xcalloc(loom_proto_count() + 1, sizeof(*d->fns));
    int rc = dispatch_add(d, ctld_job_handlers, err);
    if (rc == 0)
        rc = dispatch_add(d, ctld_misc_handlers, err);
    if (rc == 0)
        rc = dispatch_add(d, ctld_sched_prio_handlers, err); /* job.prio (sched_prio.h) */
    c->dispatch = d;
    return rc;
}

void ctld_dispatch_fini(ctld_t *c)
{
    if (!c->dispatch)
        return;
    free(c->dispatch->fns);
    free(c->dispatch);
    c->dispatch = NULL;
}

static void dispatch_send(ctld_conn_t *conn, json_t *reply, const char *raw, size_t rawlen)
{
    if (raw && rawlen)
        ctld_server_send_text(conn, raw, rawlen);
    else if (reply)
        ctld_server_send(conn, reply);
}

static void dispatch_held_done(void *arg, int status)
{
    held_reply_t *h = arg;
    if (status == 0) {
        dispatch_send(h->conn, h->reply, h->raw, h->rawlen);
    } else {
        /* Not durable: the promise cannot be kept, so no success goes out. */
        loom_error("journal write failed (%s): dropping a reply", loom_strerror(status));
        ctld_server_close(h->conn);
    }
    ctld_conn_unref(h->conn);
    json_decref(h->reply);
    free(h->raw);
    free(h);
}

/* Send now, or once the request's journal entries are on disk. */
static void dispatch_reply(ctld_t *c, ctld_conn_t *conn, json_t *reply, loom_sbuf_t *raw)
{
    held_reply_t *h = loom_xcalloc(1, sizeof(*h));
    h->conn = conn;
    h->reply = reply;
    h->rawlen = raw->len;
    h->raw = raw->len ? loom_sbuf_detach(raw) : NULL;
    ctld_conn_ref(conn);
    int st = c->req_seq && c->journal
                 ? loom_journal_wait(c->journal, c->req_seq, dispatch_held_done, h)
                 : 1;
    if (st != 0)
        dispatch_held_done(h, st > 0 ? 0 : st);
}

/* The registry's checks, in rpc.md §6's order. */
static int dispatch_check(ctld_t *c, const ctld_peer_t *peer, const json_t *msg,
                          ctld_handler_f **fn, loom_err_t *err)
{
    const loom_msg_type_t *t = NULL;
    int rc = loom_msg_check(msg, &t, NULL, err);
    if (rc < 0)
        return rc;
    *fn = c->dispatch->fns[loom_proto_index(t)];
    if (!*fn)
        return loom_errf(err, -LOOM_EMSG_TYPE, "loomctld does not handle '%s'", t->name);
    /* Security: the role the registry requires, granted by transport identity or MAC. */
    if (!loom_role_permits(t->role, (loom_role_t)peer->role))
        return loom_errf(err, -LOOM_EPERM, "'%s' needs the %s role", t->name,
                         loom_role_name(t->role));
    return 0;
}

void ctld_dispatch(ctld_t *c, ctld_conn_t *conn, const ctld_peer_t *peer, json_t *msg)
{
    loom_err_t err = {0};
    ctld_handler_f *fn = NULL;
    json_t *reply = NULL;
    loom_sbuf_t raw = LOOM_SBUF_INIT;
    int rc = dispatch_check(c, peer, msg, &fn, &err);
    if (rc < 0) {
        reply = loom_msg_reply(msg, rc, "%s", err.msg);
        if (!reply) { /* no id to answer to (rpc.md §6) */
            ctld_server_close(conn);
            return;
        }
        ctld_server_send(conn, reply);
        json_decref(reply);
        return;
    }
    c->req_seq = 0;
    if (fn(c, peer, msg, &reply, &raw) == CTLD_REPLY_LATER) {
        c->req_seq = 0;
        loom_sbuf_free(&raw);
        return; /* the handler answers when it can */
    }
    if (!reply && !raw.len)
        reply = loom_msg_reply(msg, -LOOM_EINTERNAL, "no reply");
    dispatch_reply(c, conn, reply, &raw);
    c->req_seq = 0;
    loom_sbuf_free(&raw);
}

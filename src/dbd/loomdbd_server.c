/*
 * loomdbd_server.c - loomdbd's listeners, connections and the queue of
 * database work (docs/proto/frame.md, rpc.md §6, §7). See loomdbd.h.
 *
 * A frame is decoded on the loop; header, registry role and the handler's
 * existence are checked there (rpc.md §6), then the request joins a FIFO
 * that feeds one uv_work at a time. The reply is sent from the after-work
 * callback, signed when the request was. A connection that closes while its
 * requests are queued is kept (reference count) until they are done.
 */
#include "dbd/loomdbd.h"

#include "common/frame.h"
#include "common/log.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct dbd_conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } h;
    dbd_t *d;
    dbd_conn_t *next;
    loom_frame_reader_t *reader;
    dbd_peer_t peer;
    bool is_tcp, closing;
    json_t *reg;    /* what its dbd.register recorded (cluster, control_host, _port) */
    bool waiter;    /* a controller: it has sent dbd.assoc.wait */
    uint64_t acked; /* the generation it last waited on, as current */
    int refs;
};

/* A controller parked in dbd.assoc.wait until the generation changes. */
struct dbd_wait {
    dbd_conn_t *conn; /* a reference */
    json_t *req;
    bool signed_req;
    uint64_t deadline; /* uv_now() ms */
    dbd_wait_t *next;
};

/* A change's reply, sent once the controllers have the change. */
struct dbd_held {
    dbd_conn_t *conn; /* a reference */
    json_t *reply;
    bool signed_req;
    uint64_t gen, deadline;
    dbd_held_t *next;
};

struct dbd_job {
    uv_work_t work;
    dbd_t *d;
    dbd_conn_t *conn;
    json_t *req, *reply;
    const dbd_handler_t *h;
    dbd_peer_t peer;
    bool signed_req;
    dbd_job_t *next;
};

static void server_start_next(dbd_t *d);
static void server_send(dbd_conn_t *c, const json_t *msg, bool sign);
static void server_release_held(dbd_t *d, bool all);
static void server_enqueue(dbd_conn_t *c, json_t *msg, const dbd_handler_t *h, bool authed);

static void server_conn_unref(dbd_conn_t *c)
{
    if (--c->refs > 0)
        return;
    loom_frame_reader_destroy(c->reader);
    json_decref(c->reg);
    free(c);
}

static void server_on_closed(uv_handle_t *h)
{
    server_conn_unref(h->data);
}

static void server_close(dbd_conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    for (dbd_conn_t **p = &c->d->conns; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    uv_close(&c->h.handle, server_on_closed);
    if (c->waiter && c->d->held)
        server_release_held(c->d, false);
    if (c->reg && !c->d->stopping) { /* the controller is gone: clear its address */
        json_t *msg = json_pack("{s:i, s:s, s:i}", "v", 1, "type", "dbd.unregister", "id", 0);
        json_object_update(msg, c->reg);
        server_enqueue(c, msg, dbd_handler_unregister(), true);
        json_decref(msg);
    }
}

typedef struct {
    uv_write_t req;
    char *buf;
} server_write_t;

static void server_on_written(uv_write_t *w, int status)
{
    server_write_t *sw = (server_write_t *)w;
    free(sw->buf);
    free(sw);
}

static void server_send(dbd_conn_t *c, const json_t *msg, bool sign)
{
    if (c->closing || !msg)
        return;
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_frame_auth_t auth = {
        .key = c->d->key, .sender = "loomdbd", .ts = time(NULL), .nonce = ++c->d->nonce};
    loom_err_t err = {0};
    if (loom_frame_encode(msg, sign && c->d->key ? &auth : NULL, &out, &err) < 0) {
        loom_error("cannot encode a reply: %s", err.msg);
        loom_sbuf_free(&out);
        return;
    }
    server_write_t *sw = loom_xcalloc(1, sizeof(*sw));
    size_t len = out.len;
    sw->buf = loom_sbuf_detach(&out);
    uv_buf_t b = uv_buf_init(sw->buf, (unsigned)len);
    if (uv_write(&sw->req, &c->h.stream, &b, 1, server_on_written) < 0) {
        free(sw->buf);
        free(sw);
        server_close(c);
    }
}

/* ---- dbd.assoc.wait: controllers told at once of changes (messages.md §6.2) ---- */

#define WAIT_DEFAULT_MS 1000
#define WAIT_MAX_MS     30000
#define HELD_MAX_MS     3000 /* a change's reply waits at most this for the controllers */
#define WAIT_TICK_MS    100

static void server_gen_str(dbd_t *d)
{
    snprintf(d->loop_gen_str, sizeof(d->loop_gen_str), "%lld.%llu", (long long)d->acct_epoch,
             (unsigned long long)d->loop_gen);
}

static void server_wait_reply(dbd_t *d, dbd_wait_t *w, bool changed)
{
    json_t *reply = loom_msg_reply(w->req, 0, NULL);
    if (reply) {
        json_object_set_new(reply, "gen", json_string(d->loop_gen_str));
        json_object_set_new(reply, "changed", json_boolean(changed));
    }
    server_send(w->conn, reply, w->signed_req);
    json_decref(reply);
    json_decref(w->req);
    server_conn_unref(w->conn);
    free(w);
}

/* Has every open controller connection waited on generation gen or later? */
static bool server_all_acked(const dbd_t *d, uint64_t gen)
{
    for (const dbd_conn_t *c = d->conns; c; c = c->next)
        if (c->waiter && !c->closing && c->acked < gen)
            return false;
    return true;
}

/* Send the held replies the controllers have caught up with (all: every one). */
static void server_release_held(dbd_t *d, bool all)
{
    uint64_t now = uv_now(d->loop);
    for (dbd_held_t **p = &d->held; *p;) {
        dbd_held_t *h = *p;
        if (!all && now < h->deadline && !server_all_acked(d, h->gen)) {
            p = &h->next;
            continue;
        }
        *p = h->next;
        server_send(h->conn, h->reply, h->signed_req);
        json_decref(h->reply);
        server_conn_unref(h->conn);
        free(h);
    }
}

static void server_wait_tick(uv_timer_t *t)
{
    dbd_t *d = t->data;
    uint64_t now = uv_now(d->loop);
    for (dbd_wait_t **p = &d->waits; *p;) {
        dbd_wait_t *w = *p;
        if (now < w->deadline && !w->conn->closing) {
            p = &w->next;
            continue;
        }
        *p = w->next;
        server_wait_reply(d, w, false);
    }
    server_release_held(d, false);
    if (!d->waits && !d->held) {
        uv_timer_stop(&d->wait_timer);
    }
}

static void server_wait_timer_on(dbd_t *d)
{
    if (!d->wait_timer_on) {
        uv_timer_init(d->loop, &d->wait_timer);
        d->wait_timer.data = d;
        d->wait_timer_on = true;
    }
    if (!uv_is_active((uv_handle_t *)&d->wait_timer))
        uv_timer_start(&d->wait_timer, server_wait_tick, WAIT_TICK_MS, WAIT_TICK_MS);
}

/* dbd.assoc.wait: answer at once when if_gen is not the current generation,
 * else park until it changes or timeout_ms passes. Waiting on the current
 * generation also says this controller has every change up to it.
 * Security: node role (the registry): controllers only. */
static void server_assoc_wait(dbd_conn_t *c, const json_t *msg, bool authed)
{
    dbd_t *d = c->d;
    const char *if_gen = json_string_value(json_object_get(msg, "if_gen"));
    json_int_t ms = json_integer_value(json_object_get(msg, "timeout_ms"));
    dbd_wait_t *w = loom_xcalloc(1, sizeof(*w));
    w->conn = c;
    c->refs++;
    if (!c->waiter)
        loom_info("a controller (%s) waits for accounting changes",
                  c->peer.addr[0] ? c->peer.addr : "Unix socket");
    c->waiter = true;
    w->req = json_incref((json_t *)msg);
    w->signed_req = authed;
    if (!if_gen || strcmp(if_gen, d->loop_gen_str) != 0) {
        server_wait_reply(d, w, true);
        return;
    }
    c->acked = d->loop_gen;
    server_release_held(d, false);
    w->deadline = uv_now(d->loop) + (uint64_t)(ms > 0 && ms <= WAIT_MAX_MS ? ms : WAIT_DEFAULT_MS);
    w->next = d->waits;
    d->waits = w;
    server_wait_timer_on(d);
}

/* A request changed the generation: wake the parked controllers, and hold a
 * change's reply until they have read the change (at most HELD_MAX_MS), so
 * that what the caller does next already meets the new limits. */
static void server_gen_changed(dbd_t *d, dbd_job_t *j)
{
    d->loop_gen = d->acct_gen;
    server_gen_str(d);
    while (d->waits) {
        dbd_wait_t *w = d->waits;
        d->waits = w->next;
        server_wait_reply(d, w, true);
    }
    bool change = j->h->op == 'a' || j->h->op == 'm' || j->h->op == 'd';
    if (!change || !j->reply || server_all_acked(d, d->loop_gen)) {
        server_send(j->conn, j->reply, j->signed_req);
        return;
    }
    dbd_held_t *h = loom_xcalloc(1, sizeof(*h));
    h->conn = j->conn;
    j->conn->refs++;
    h->reply = json_incref(j->reply);
    h->signed_req = j->signed_req;
    h->gen = d->loop_gen;
    h->deadline = uv_now(d->loop) + HELD_MAX_MS;
    h->next = d->held;
    d->held = h;
    server_wait_timer_on(d);
}

/* ---- the work queue ----------------------------------------------------------- */

static void server_work(uv_work_t *w)
{
    dbd_job_t *j = w->data;
    loom_err_t err = {0};
    json_t *out = json_object();
    int rc = dbd_store_ensure(j->d, &err);
    if (rc == 0)
        rc = j->h->fn(j->d, &j->peer, j->req, out, &err);
    dbd_store_check(j->d, rc);
    if (rc < 0 && rc != -LOOM_EACCESS && rc != -EEXIST)
        loom_log_sub(LOOM_LOGF_DB, "%s: %s", j->h->name, err.msg);
    j->reply = loom_msg_reply(j->req, rc < 0 ? rc : 0, "%s", rc < 0 ? err.msg : "");
    if (j->reply)
        json_object_update_missing(j->reply, out);
    json_decref(out);
}

/* A registration stored: remember it on its connection, for its end. */
static void server_registered(dbd_job_t *j)
{
    if (strcmp(j->h->name, "dbd.register") != 0 || loom_msg_rc(j->reply, NULL) != 0 ||
        j->conn->closing)
        return;
    json_decref(j->conn->reg);
    j->conn->reg = json_pack("{s:O?, s:O?, s:O?}", "cluster", json_object_get(j->req, "cluster"),
                             "control_host", json_object_get(j->reply, "control_host"),
                             "control_port", json_object_get(j->req, "control_port"));
}

static void server_after_work(uv_work_t *w, int status)
{
    dbd_job_t *j = w->data;
    dbd_t *d = j->d;
    if (j->reply)
        server_registered(j);
    if (d->acct_gen != d->loop_gen)
        server_gen_changed(d, j);
    else
        server_send(j->conn, j->reply, j->signed_req);
    server_conn_unref(j->conn);
    json_decref(j->req);
    json_decref(j->reply);
    free(j);
    d->busy = false;
    server_start_next(d);
}

/* Is the registration req names held by an open connection (the controller
 * reconnected before its old connection's end came up in the queue)? */
static bool server_reg_live(const dbd_t *d, const json_t *req)
{
    for (const dbd_conn_t *c = d->conns; c; c = c->next)
        if (c->reg && !c->closing &&
            json_equal(json_object_get(c->reg, "cluster"), json_object_get(req, "cluster")) &&
            json_equal(json_object_get(c->reg, "control_host"),
                       json_object_get(req, "control_host")) &&
            json_equal(json_object_get(c->reg, "control_port"),
                       json_object_get(req, "control_port")))
            return true;
    return false;
}

static void server_start_next(dbd_t *d)
{
    if (d->busy || !d->q_head)
        return;
    dbd_job_t *j = d->q_head;
    d->q_head = j->next;
    if (!d->q_head)
        d->q_tail = NULL;
    if (j->h == dbd_handler_unregister() && server_reg_live(d, j->req)) {
        server_conn_unref(j->conn);
        json_decref(j->req);
        free(j);
        server_start_next(d);
        return;
    }
    d->busy = true;
    j->work.data = j;
    uv_queue_work(d->loop, &j->work, server_work, server_after_work);
}

static void server_enqueue(dbd_conn_t *c, json_t *msg, const dbd_handler_t *h, bool authed)
{
    dbd_job_t *j = loom_xcalloc(1, sizeof(*j));
    j->d = c->d;
    j->conn = c;
    c->refs++;
    j->req = json_incref(msg);
    j->h = h;
    j->peer = c->peer;
    if (authed)
        j->peer.role = LOOM_ROLE_NODE;
    j->signed_req = authed;
    if (c->d->q_tail)
        c->d->q_tail->next = j;
    else
        c->d->q_head = j;
    c->d->q_tail = j;
    server_start_next(c->d);
}

/* ---- dispatch (rpc.md §6) ------------------------------------------------------- */

static void server_reply_now(dbd_conn_t *c, const json_t *msg, int rc, const char *text,
                             bool authed)
{
    json_t *reply = loom_msg_reply(msg, rc, "%s", text);
    if (!reply) {
        server_close(c);
        return;
    }
    if (rc == 0 && strcmp(json_string_value(json_object_get(msg, "type")), "ping") == 0)
        json_object_set_new(reply, "version", json_string(LOOM_SLURM_VERSION));
    server_send(c, reply, authed);
    json_decref(reply);
}

static void server_dispatch(dbd_conn_t *c, json_t *msg, bool authed)
{
    loom_err_t err = {0};
    const loom_msg_type_t *t = NULL;
    loom_role_t role = authed ? LOOM_ROLE_NODE : c->peer.role;
    int rc = loom_msg_check(msg, &t, NULL, &err);
    const dbd_handler_t *h = rc == 0 ? dbd_handler_find(t->name) : NULL;
    bool inline_type = t && (!strcmp(t->name, "ping") || !strcmp(t->name, "shutdown") ||
                             !strcmp(t->name, "dbd.assoc.wait"));
    if (rc == 0 && !h && !inline_type)
        rc = loom_errf(&err, -LOOM_EMSG_TYPE, "loomdbd does not handle '%s'", t->name);
    if (rc == 0 && !loom_role_permits(t->role, role))
        rc = loom_errf(&err, -LOOM_EPERM, "'%s' needs the %s role", t->name,
                       loom_role_name(t->role));
    if (rc == 0 && strcmp(t->name, "dbd.assoc.wait") == 0) {
        server_assoc_wait(c, msg, authed);
        return;
    }
    if (rc < 0 || inline_type) {
        server_reply_now(c, msg, rc, err.msg, authed);
        if (rc == 0 && strcmp(t->name, "shutdown") == 0) {
            loom_info("shutdown requested by uid %u", (unsigned)c->peer.uid);
            dbd_server_stop(c->d);
        }
        return;
    }
    server_enqueue(c, msg, h, authed);
}

static void server_on_frame(dbd_conn_t *c, const char *body, size_t len)
{
    json_t *msg = NULL;
    loom_err_t err = {0};
    int authed = loom_frame_decode_body(body, len, c->d->key, c->is_tcp, time(NULL), &msg, &err);
    if (authed < 0) {
        loom_error("dropping a connection (uid %u): %s", (unsigned)c->peer.uid, err.msg);
        server_close(c);
        return;
    }
    server_dispatch(c, msg, authed == 1);
    json_decref(msg);
}

static void server_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    buf->base = loom_xmalloc(65536);
    buf->len = 65536;
}

static void server_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    dbd_conn_t *c = s->data;
    loom_err_t err = {0};
    int rc = n > 0 ? loom_frame_reader_feed(c->reader, buf->base, (size_t)n, &err) : 0;
    free(buf->base);
    const char *body;
    size_t len;
    while (rc == 0 && n > 0 && !c->closing &&
           (rc = loom_frame_reader_next(c->reader, &body, &len, &err)) == 1) {
        server_on_frame(c, body, len);
        rc = 0;
    }
    if (rc < 0)
        loom_error("closing a connection: %s", err.msg);
    if (rc < 0 || n < 0)
        server_close(c);
}

/* ---- listeners ------------------------------------------------------------------ */

static void server_peer_unix(dbd_conn_t *c)
{
    struct ucred cred = {0};
    socklen_t len = sizeof(cred);
    uv_os_fd_t fd;
    c->peer.uid = (uid_t)-1;
    if (uv_fileno(&c->h.handle, &fd) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
        c->peer.uid = cred.uid;
    c->peer.role = c->peer.uid == 0 || c->peer.uid == c->d->slurm_uid || c->peer.uid == getuid()
                       ? LOOM_ROLE_ADMIN
                       : LOOM_ROLE_USER;
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(c->peer.uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        snprintf(c->peer.user, sizeof(c->peer.user), "%s", res->pw_name);
    else
        snprintf(c->peer.user, sizeof(c->peer.user), "%u", (unsigned)c->peer.uid);
}

static void server_peer_tcp(dbd_conn_t *c)
{
    struct sockaddr_storage sa;
    int len = sizeof(sa);
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&sa, &len) < 0)
        return;
    if (sa.ss_family == AF_INET)
        uv_ip4_name((struct sockaddr_in *)&sa, c->peer.addr, sizeof(c->peer.addr));
    else if (sa.ss_family == AF_INET6)
        uv_ip6_name((struct sockaddr_in6 *)&sa, c->peer.addr, sizeof(c->peer.addr));
}

static void server_on_conn(uv_stream_t *srv, int status)
{
    dbd_t *d = srv->data;
    if (status < 0 || d->stopping)
        return;
    dbd_conn_t *c = loom_xcalloc(1, sizeof(*c));
    c->d = d;
    c->refs = 1;
    c->is_tcp = srv == (uv_stream_t *)&d->tcp_srv;
    if (c->is_tcp)
        uv_tcp_init(d->loop, &c->h.tcp);
    else
        uv_pipe_init(d->loop, &c->h.pipe, 0);
    c->h.handle.data = c;
    if (uv_accept(srv, &c->h.stream) < 0) {
        uv_close(&c->h.handle, server_on_closed);
        return;
    }
    if (c->is_tcp) {
        uv_tcp_nodelay(&c->h.tcp, 1);
        server_peer_tcp(c);
        c->peer.role = LOOM_ROLE_USER; /* frames must be signed: decode refuses others */
    } else {
        server_peer_unix(c);
    }
    c->reader = loom_frame_reader_create(0);
    c->next = d->conns;
    d->conns = c;
    uv_read_start(&c->h.stream, server_alloc, server_on_read);
}

static int server_listen_unix(dbd_t *d, loom_err_t *err)
{
    unlink(d->sock_path);
    uv_pipe_init(d->loop, &d->unix_srv, 0);
    d->unix_srv.data = d;
    int rc = uv_pipe_bind(&d->unix_srv, d->sock_path);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&d->unix_srv, 128, server_on_conn);
    if (rc < 0)
        return loom_errf(err, rc, "cannot listen on %s: %s", d->sock_path, uv_strerror(rc));
    chmod(d->sock_path, 0666);
    return 0;
}

static int server_listen_tcp(dbd_t *d, loom_err_t *err)
{
    struct sockaddr_storage sa;
    int rc = uv_ip4_addr(d->tcp_host, d->tcp_port, (struct sockaddr_in *)&sa);
    if (rc < 0)
        rc = uv_ip6_addr(d->tcp_host, d->tcp_port, (struct sockaddr_in6 *)&sa);
    if (rc < 0)
        return loom_errf(err, rc, "bad DbdAddr '%s'", d->tcp_host);
    uv_tcp_init(d->loop, &d->tcp_srv);
    d->tcp_srv.data = d;
    d->tcp_on = true;
    rc = uv_tcp_bind(&d->tcp_srv, (struct sockaddr *)&sa, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&d->tcp_srv, 128, server_on_conn);
    if (rc < 0)
        return loom_errf(err, rc, "cannot listen on %s:%d: %s", d->tcp_host, d->tcp_port,
                         uv_strerror(rc));
    return 0;
}

int dbd_server_start(dbd_t *d, loom_err_t *err)
{
    if (!d->acct_epoch) { /* before any request: the worker reads it too */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        d->acct_epoch = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }
    d->loop_gen = d->acct_gen;
    server_gen_str(d);
    int rc = server_listen_unix(d, err);
    if (rc == 0 && d->tcp_port > 0)
        rc = server_listen_tcp(d, err);
    if (rc == 0) {
        loom_info("listening on %s and %s:%d", d->sock_path, d->tcp_host, d->tcp_port);
        return 0;
    }
    /* Close what was opened (the bound pipe holds its path) before exit. */
    uv_close((uv_handle_t *)&d->unix_srv, NULL);
    if (d->tcp_on)
        uv_close((uv_handle_t *)&d->tcp_srv, NULL);
    d->tcp_on = false;
    uv_run(d->loop, UV_RUN_NOWAIT);
    return rc;
}

void dbd_server_stop(dbd_t *d)
{
    if (d->stopping)
        return;
    d->stopping = true;
    uv_close((uv_handle_t *)&d->unix_srv, NULL);
    if (d->tcp_on)
        uv_close((uv_handle_t *)&d->tcp_srv, NULL);
    unlink(d->sock_path);
    server_release_held(d, true);
    while (d->waits) {
        dbd_wait_t *w = d->waits;
        d->waits = w->next;
        json_decref(w->req);
        server_conn_unref(w->conn);
        free(w);
    }
    if (d->wait_timer_on)
        uv_close((uv_handle_t *)&d->wait_timer, NULL);
    while (d->conns)
        server_close(d->conns);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
}

/*
 * conn.c - framed JSON message connections on libuv streams. See conn.h.
 */
#include "noded/conn.h"

#include "common/frame.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define CONN_READ_BUF (64 * 1024)

typedef struct conn_pending {
    uint64_t id;
    loom_conn_reply_f *cb;
    void *arg;
    struct conn_pending *next;
} conn_pending_t;

struct loom_conn {
    uv_stream_t *stream;
    loom_frame_reader_t *reader;
    loom_conn_opts_t opts;
    char *sender;
    conn_pending_t *pending;
    uint64_t next_id;
    uint64_t nonce;
    bool closing;
    void *data;
    char buf[CONN_READ_BUF];
};

typedef struct conn_write {
    uv_write_t req;
    char *bytes;
} conn_write_t;

static void conn_closed(uv_handle_t *h)
{
    loom_conn_t *c = h->data;
    loom_frame_reader_destroy(c->reader);
    free(c->sender);
    free(c->stream);
    free(c);
}

/* End the connection once: fail the pending requests, tell the owner, close. */
static void conn_end(loom_conn_t *c, int status)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_read_stop(c->stream);
    while (c->pending) {
        conn_pending_t *p = c->pending;
        c->pending = p->next;
        p->cb(p->arg, NULL);
        free(p);
    }
    if (c->opts.on_close)
        c->opts.on_close(c, status, c->opts.arg);
    loom_uv_close_once((uv_handle_t *)c->stream, conn_closed); /* a cancelled write lands here */
}

void loom_uv_close_once(uv_handle_t *h, uv_close_cb cb)
{
    if (!uv_is_closing(h))
        uv_close(h, cb);
}

void loom_conn_close(loom_conn_t *c)
{
    if (c)
        conn_end(c, 0);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    loom_conn_t *c = h->data;
    buf->base = c->buf;
    buf->len = sizeof(c->buf);
}

/* A reply: hand it to the request that waits for its id. */
static void conn_reply(loom_conn_t *c, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    for (conn_pending_t **pp = &c->pending; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == (uint64_t)id) {
            conn_pending_t *p = *pp;
            *pp = p->next;
            p->cb(p->arg, msg);
            free(p);
            return;
        }
    }
    loom_debug("conn: dropping a reply to unknown request %lld", (long long)id);
}

/* Decode and deliver every complete frame; stops when the connection ends. */
static int conn_drain(loom_conn_t *c)
{
    const char *body;
    size_t len;
    loom_err_t err = {0};
    int rc;
    while (!c->closing && (rc = loom_frame_reader_next(c->reader, &body, &len, &err)) == 1) {
        json_t *msg = NULL;
        int authed = loom_frame_decode_body(body, len, c->opts.key, c->opts.require_auth,
                                            (int64_t)time(NULL), &msg, &err);
        if (authed < 0) {
            loom_error("conn: dropping a connection: %s", err.msg);
            return authed;
        }
        const char *type = json_string_value(json_object_get(msg, "type"));
        if (type && strcmp(type, "reply") == 0)
            conn_reply(c, msg);
        else if (c->opts.on_msg)
            c->opts.on_msg(c, msg, authed == 1, c->opts.arg);
        json_decref(msg);
    }
    if (rc < 0 && !c->closing)
        loom_error("conn: dropping a connection: %s", err.msg);
    return rc < 0 ? rc : 0;
}

static void conn_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    loom_conn_t *c = s->data;
    loom_err_t err = {0};
    if (n == UV_EOF) {
        conn_end(c, loom_frame_reader_eof(c->reader, &err));
        return;
    }
    if (n < 0) {
        conn_end(c, -LOOM_ECONNECT);
        return;
    }
    int rc = loom_frame_reader_feed(c->reader, buf->base, (size_t)n, &err);
    if (rc == 0)
        rc = conn_drain(c);
    else
        loom_error("conn: dropping a connection: %s", err.msg);
    if (rc < 0)
        conn_end(c, rc);
}

loom_conn_t *loom_conn_create(uv_stream_t *stream, const loom_conn_opts_t *opts)
{
    loom_conn_t *c = loom_xcalloc(1, sizeof(*c));
    c->stream = stream;
    c->opts = *opts;
    c->sender = loom_xstrdup(opts->sender ? opts->sender : "loomd");
    c->opts.sender = c->sender;
    c->reader = loom_frame_reader_create(0);
    c->next_id = 1;
    while (getrandom(&c->nonce, sizeof(c->nonce), 0) < 0 && errno == EINTR)
        ;
    c->nonce &= (uint64_t)INT64_MAX >> 1; /* room to count up without wrapping */
    stream->data = c;
    int rc = uv_read_start(stream, conn_alloc, conn_read);
    if (rc < 0) {
        c->closing = true;
        uv_close((uv_handle_t *)stream, conn_closed);
        return NULL;
    }
    return c;
}

static void conn_written(uv_write_t *req, int status)
{
    conn_write_t *w = (conn_write_t *)req;
    loom_conn_t *c = req->handle->data;
    free(w->bytes);
    free(w);
    if (status < 0 && !c->closing)
        conn_end(c, -LOOM_ECONNECT);
}

int loom_conn_send(loom_conn_t *c, json_t *msg)
{
    if (c->closing)
        return -LOOM_ECONNECT;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_err_t err = {0};
    loom_frame_auth_t auth = {
        .key = c->opts.key, .sender = c->sender, .ts = (int64_t)time(NULL), .nonce = c->nonce++};
    int rc = loom_frame_encode(msg, c->opts.key ? &auth : NULL, &sb, &err);
    if (rc < 0) {
        loom_error("conn: cannot encode a message: %s", err.msg);
        loom_sbuf_free(&sb);
        return rc;
    }
    conn_write_t *w = loom_xcalloc(1, sizeof(*w));
    size_t len = sb.len;
    w->bytes = loom_sbuf_detach(&sb);
    uv_buf_t buf = uv_buf_init(w->bytes, (unsigned)len);
    rc = uv_write(&w->req, c->stream, &buf, 1, conn_written);
    if (rc < 0) {
        free(w->bytes);
        free(w);
        return -LOOM_ECONNECT;
    }
    return 0;
}

int loom_conn_request(loom_conn_t *c, json_t *req, loom_conn_reply_f *cb, void *arg)
{
    if (c->closing)
        return -LOOM_ECONNECT;
    uint64_t id = c->next_id++;
    json_object_set_new(req, "id", json_integer((json_int_t)id));
    int rc = loom_conn_send(c, req);
    if (rc < 0)
        return rc;
    conn_pending_t *p = loom_xcalloc(1, sizeof(*p));
    p->id = id;
    p->cb = cb;
    p->arg = arg;
    p->next = c->pending;
    c->pending = p;
    return 0;
}

void loom_conn_set_data(loom_conn_t *c, void *data)
{
    c->data = data;
}

void *loom_conn_data(const loom_conn_t *c)
{
    return c->data;
}

/* ---------------------------------------------------------------- connect */

typedef struct conn_connect {
    uv_connect_t req;
    loom_conn_opts_t opts;
    loom_conn_connect_f *cb;
    void *arg;
} conn_connect_t;

static void conn_free_handle(uv_handle_t *h)
{
    free(h);
}

static void conn_connected(uv_connect_t *req, int status)
{
    conn_connect_t *cc = (conn_connect_t *)req;
    loom_conn_t *c = NULL;
    if (status == 0) {
        c = loom_conn_create(req->handle, &cc->opts);
        if (!c)
            status = -LOOM_ECONNECT;
    } else {
        loom_uv_close_once((uv_handle_t *)req->handle, conn_free_handle);
    }
    cc->cb(cc->arg, c, status < 0 ? status : 0);
    free(cc);
}

static conn_connect_t *conn_connect_new(const loom_conn_opts_t *opts, loom_conn_connect_f *cb,
                                        void *arg)
{
    conn_connect_t *cc = loom_xcalloc(1, sizeof(*cc));
    cc->opts = *opts;
    cc->cb = cb;
    cc->arg = arg;
    return cc;
}

int loom_conn_tcp_connect(uv_loop_t *loop, const char *host, int port, const loom_conn_opts_t *opts,
                          loom_conn_connect_f *cb, void *arg)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char service[16];
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &res) != 0 || !res)
        return -LOOM_ECONNECT;
    uv_tcp_t *tcp = loom_xcalloc(1, sizeof(*tcp));
    uv_tcp_init(loop, tcp);
    uv_tcp_nodelay(tcp, 1);
    conn_connect_t *cc = conn_connect_new(opts, cb, arg);
    int rc = uv_tcp_connect(&cc->req, tcp, res->ai_addr, conn_connected);
    freeaddrinfo(res);
    if (rc < 0) {
        free(cc);
        uv_close((uv_handle_t *)tcp, conn_free_handle);
        return -LOOM_ECONNECT;
    }
    return 0;
}

int loom_conn_pipe_connect(uv_loop_t *loop, const char *path, const loom_conn_opts_t *opts,
                           loom_conn_connect_f *cb, void *arg)
{
    uv_pipe_t *pipe = loom_xcalloc(1, sizeof(*pipe));
    uv_pipe_init(loop, pipe, 0);
    conn_connect_t *cc = conn_connect_new(opts, cb, arg);
    uv_pipe_connect(&cc->req, pipe, path, conn_connected);
    return 0;
}

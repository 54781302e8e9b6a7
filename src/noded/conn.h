/*
 * conn.h - a framed JSON message connection on a libuv stream, for loomd and
 * loomstepd (docs/proto/frame.md, rpc.md).
 *
 * Both ends of a connection may send requests: loom_conn_request() assigns
 * the next id and remembers a callback that gets the matching reply;
 * any other message goes to the connection's message callback, which answers
 * with loom_conn_send(loom_msg_reply(...)). With a key every frame sent is
 * signed (sender name required) and, when require_auth, every frame received
 * must be.
 *
 * Lifetime: the connection owns its stream handle. It ends exactly once —
 * peer EOF, a read/write/frame error, or loom_conn_close() — and then: every
 * outstanding request callback runs with reply == NULL, the close callback
 * runs, and the memory is released after libuv closes the handle. No
 * callback runs after the close callback; the owner must drop its pointer
 * there.
 *
 * Entry points: loom_conn_create, loom_conn_send, loom_conn_request,
 * loom_conn_close, loom_conn_tcp_connect / loom_conn_pipe_connect (async
 * connect helpers), loom_conn_set_data / loom_conn_data.
 */
#ifndef LOOM_NODED_CONN_H
#define LOOM_NODED_CONN_H

#include "common/auth.h"
#include "common/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

typedef struct loom_conn loom_conn_t;

/* A request or unsolicited message (borrowed; authed: it carried a valid MAC). */
typedef void loom_conn_msg_f(loom_conn_t *c, json_t *msg, bool authed, void *arg);
/* The connection ended; status 0 for a clean EOF, else a negative code. */
typedef void loom_conn_close_f(loom_conn_t *c, int status, void *arg);
/* The reply to a request (borrowed), or NULL when the connection ended first. */
typedef void loom_conn_reply_f(void *arg, json_t *reply);

typedef struct loom_conn_opts {
    const loom_key_t *key; /* sign frames (and verify MACs); NULL: plain frames */
    const char *sender;    /* auth.sender of signed frames */
    bool require_auth;     /* refuse unsigned frames */
    loom_conn_msg_f *on_msg;
    loom_conn_close_f *on_close;
    void *arg;
} loom_conn_opts_t;

/* Wrap an initialised, connected stream (uv_tcp_t or uv_pipe_t allocated
 * with malloc; the connection frees it) and start reading. */
loom_conn_t *loom_conn_create(uv_stream_t *stream, const loom_conn_opts_t *opts);

/* Send one message (not consumed: the caller keeps its reference). */
int loom_conn_send(loom_conn_t *c, json_t *msg);
/* Send a request with the next id; cb gets the reply. */
int loom_conn_request(loom_conn_t *c, json_t *req, loom_conn_reply_f *cb, void *arg);
/* End the connection (see Lifetime). Safe to call more than once. */
void loom_conn_close(loom_conn_t *c);

/* uv_close(h, cb) unless h is closing already: a supervisor's last uv_walk
 * closes every handle, and the write, shutdown and connect callbacks it
 * cancels then run; closing a handle twice aborts in libuv. */
void loom_uv_close_once(uv_handle_t *h, uv_close_cb cb);

void loom_conn_set_data(loom_conn_t *c, void *data);
void *loom_conn_data(const loom_conn_t *c);

/* Called with a new connection (status 0) or a failure (conn NULL, status < 0). */
typedef void loom_conn_connect_f(void *arg, loom_conn_t *conn, int status);

/* Connect to host:port (host a name or numeric address; resolved with a
 * blocking getaddrinfo, which is fine for the controller address) or to a
 * Unix socket path; cb runs once. */
int loom_conn_tcp_connect(uv_loop_t *loop, const char *host, int port, const loom_conn_opts_t *opts,
                          loom_conn_connect_f *cb, void *arg);
int loom_conn_pipe_connect(uv_loop_t *loop, const char *path, const loom_conn_opts_t *opts,
                           loom_conn_connect_f *cb, void *arg);

#endif

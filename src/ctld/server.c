/* server.c - listeners, connections, frames and peer identity. See server.h. */
#include "ctld/server.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/munge.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/node_mgr.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SERVER_RBUF      (64 * 1024)
#define SERVER_WQ_MAX    ((size_t)256 << 20) /* a peer that stops reading is dropped */
#define SERVER_BACKLOG   1024
#define SERVER_SOCK_NAME "loomctld.sock"

typedef struct pending_req {
    struct pending_req *next;
    uint64_t id;
    ctld_reply_f *cb;
    void *arg;
} pending_req_t;

struct ctld_conn {
    ctld_t *c;
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    bool is_unix;
    bool closing;
    bool is_signed;
    bool is_munge; /* the peer authenticates with munge: uid/gid are its credential's */
    uint32_t uid, gid;
    pid_t pid;
    loom_frame_reader_t *reader;
    ctld_node_t *node;
    int refs;
    uint64_t next_id;
    pending_req_t *pending;
    ctld_conn_t *prev, *next;
    char rbuf[SERVER_RBUF];
};

struct ctld_server {
    ctld_msg_f *on_msg;
    uv_pipe_t unix_srv;
    uv_tcp_t tcp_srv;
    bool unix_open, tcp_open;
    char *sock_path;
    ctld_conn_t *conns;
    size_t nconns;
    size_t frame_max;
    loom_munge_t *munge; /* for commands without the cluster key (NULL: no libmunge) */
};

typedef struct {
    uv_write_t req;
    char *data;
} write_req_t;

void ctld_conn_ref(ctld_conn_t *conn)
{
    conn->refs++;
}

static void server_conn_free(ctld_conn_t *conn)
{
    loom_frame_reader_destroy(conn->reader);
    free(conn);
}

void ctld_conn_unref(ctld_conn_t *conn)
{
    if (--conn->refs == 0)
        server_conn_free(conn);
}

bool ctld_conn_open(const ctld_conn_t *conn)
{
    return conn && !conn->closing;
}

bool ctld_conn_signed(const ctld_conn_t *conn)
{
    return conn->is_signed;
}

void ctld_conn_set_node(ctld_conn_t *conn, ctld_node_t *node)
{
    conn->node = node;
}

ctld_node_t *ctld_conn_node(const ctld_conn_t *conn)
{
    return conn->node;
}

size_t ctld_server_nconns(const ctld_t *c)
{
    return c->server ? c->server->nconns : 0;
}

static void server_handle_closed(uv_handle_t *h)
{
    ctld_conn_t *conn = h->data;
    ctld_conn_unref(conn);
}

/* Tell every requester that no reply will come. */
static void server_fail_pending(ctld_conn_t *conn)
{
    while (conn->pending) {
        pending_req_t *p = conn->pending;
        conn->pending = p->next;
        if (p->cb)
            p->cb(conn->c, p->arg, NULL);
        free(p);
    }
}

void ctld_server_close(ctld_conn_t *conn)
{
    if (!conn || conn->closing)
        return;
    conn->closing = true;
    ctld_server_t *srv = conn->c->server;
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        srv->conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    srv->nconns--;
    if (conn->node)
        ctld_node_mgr_link_lost(conn->c, conn->node, conn);
    conn->node = NULL;
    server_fail_pending(conn);
    uv_close(&conn->h.handle, server_handle_closed);
}

static void server_write_done(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    ctld_conn_t *conn = req->data;
    free(w->data);
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        ctld_server_close(conn);
    ctld_conn_unref(conn);
}

/* Queue bytes (taken over) for writing. */
static void server_write(ctld_conn_t *conn, char *data, size_t len)
{
    if (conn->closing || uv_stream_get_write_queue_size(&conn->h.stream) > SERVER_WQ_MAX) {
        free(data);
        if (!conn->closing)
            loom_error("dropping a connection that does not read its replies");
        ctld_server_close(conn);
        return;
    }
    write_req_t *w = loom_xcalloc(1, sizeof(*w));
    w->data = data;
    w->req.data = conn;
    uv_buf_t buf = uv_buf_init(data, (unsigned)len);
    ctld_conn_ref(conn);
    int rc = uv_write(&w->req, &conn->h.stream, &buf, 1, server_write_done);
    if (rc < 0) {
        free(data);
        free(w);
        ctld_conn_unref(conn);
        ctld_server_close(conn);
    }
}

void ctld_server_send(ctld_conn_t *conn, const json_t *msg)
{
    if (!ctld_conn_open(conn))
        return;
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_err_t err = {0};
    loom_frame_auth_t auth = {
        .key = conn->c->key, .sender = "ctld", .ts = ctld_now(), .nonce = ++conn->c->nonce};
    int rc = loom_frame_encode(msg, conn->is_signed ? &auth : NULL, &out, &err);
    if (rc < 0) {
        loom_error("cannot encode a message: %s", err.msg);
        loom_sbuf_free(&out);
        return;
    }
    if (conn->is_munge) { /* the answer proves itself the same way */
        loom_sbuf_reset(&out);
        if (loom_munge_frame_encode(conn->c->server->munge, msg, &out, &err) < 0) {
            loom_error("cannot sign a reply with munge: %s", err.msg);
            loom_sbuf_free(&out);
            ctld_server_close(conn);
            return;
        }
    }
    size_t len = out.len;
    server_write(conn, loom_sbuf_detach(&out), len);
}

void ctld_server_send_text(ctld_conn_t *conn, const char *text, size_t len)
{
    if (!ctld_conn_open(conn))
        return;
    if (conn->is_signed || conn->is_munge) {
        /* Signed peers need the auth member inside the text: go through jansson. */
        json_t *msg = json_loadb(text, len, 0, NULL);
        if (msg)
            ctld_server_send(conn, msg);
        json_decref(msg);
        return;
    }
    char *data = loom_xmalloc(len + LOOM_FRAME_HDR);
    data[0] = (char)((len >> 24) & 0xff);
    data[1] = (char)((len >> 16) & 0xff);
    data[2] = (char)((len >> 8) & 0xff);
    data[3] = (char)(len & 0xff);
    memcpy(data + LOOM_FRAME_HDR, text, len);
    server_write(conn, data, len + LOOM_FRAME_HDR);
}

int ctld_server_request(ctld_conn_t *conn, const json_t *req, ctld_reply_f *cb, void *arg)
{
    if (!ctld_conn_open(conn))
        return -LOOM_ECONNECT;
    json_t *copy = json_copy((json_t *)req);
    uint64_t id = ++conn->next_id;
    json_object_set_new(copy, "id", json_integer((json_int_t)id));
    pending_req_t *p = loom_xcalloc(1, sizeof(*p));
    *p = (pending_req_t){.next = conn->pending, .id = id, .cb = cb, .arg = arg};
    conn->pending = p;
    ctld_server_send(conn, copy);
    json_decref(copy);
    return 0;
}

/* A reply to one of our requests: hand it to its requester. */
static void server_on_reply(ctld_conn_t *conn, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "id"));
    for (pending_req_t **pp = &conn->pending; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == (uint64_t)id) {
            pending_req_t *p = *pp;
            *pp = p->next;
            if (p->cb)
                p->cb(conn->c, p->arg, msg);
            free(p);
            return;
        }
    }
    loom_log_sub(LOOM_LOGF_PROTO, "dropping an unmatched reply (id %lld)", (long long)id);
}

static void server_peer(const ctld_conn_t *conn, bool authed, ctld_peer_t *peer)
{
    const ctld_t *c = conn->c;
    *peer = (ctld_peer_t){
        .uid = conn->uid, .gid = conn->gid, .pid = conn->pid, .conn = (ctld_conn_t *)conn};
    peer->authed = authed;
    if (authed)
        peer->role = LOOM_ROLE_NODE;
    else if (ctld_is_admin(c, conn->uid))
        peer->role = LOOM_ROLE_ADMIN;
    else
        peer->role = LOOM_ROLE_USER;
}

static const char *server_peer_name(const ctld_conn_t *conn, char *buf, size_t size)
{
    if (conn->is_unix)
        snprintf(buf, size, "local uid %u pid %d", conn->uid, (int)conn->pid);
    else
        snprintf(buf, size, "%s", conn->node ? conn->node->cfg->name : "a TCP peer");
    return buf;
}

/* An unsigned frame on the TCP port: say why it is refused, then close. */
static void server_refuse_unsigned(ctld_conn_t *conn, const char *body, size_t len)
{
    json_t *msg = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *reply = msg ? loom_msg_reply(msg, -LOOM_EAUTH,
                                         "the controller's TCP port takes only frames signed "
                                         "with the cluster key; local commands use %s",
                                         conn->c->server->sock_path)
                        : NULL;
    if (reply)
        ctld_server_send(conn, reply);
    json_decref(reply);
    json_decref(msg);
    ctld_server_close(conn);
}

/* A frame with a munge credential (a command on a host without the key): the
 * credential's uid and gid identify the peer, as SO_PEERCRED does locally. */
static int server_munge_frame(ctld_conn_t *conn, const char *body, size_t len, json_t **msg,
                              loom_err_t *err)
{
    uint32_t uid, gid;
    if (!conn->c->server->munge)
        return loom_errf(err, -LOOM_EAUTH, "munge frames need libmunge");
    int rc = loom_munge_frame_decode(conn->c->server->munge, body, len, msg, &uid, &gid, err);
    if (rc < 0 || (conn->is_munge && uid != conn->uid))
        return rc < 0 ? rc : loom_errf(err, -LOOM_EAUTH, "munge: another uid on one connection");
    conn->is_munge = true;
    conn->uid = uid;
    conn->gid = gid;
    return 0;
}

/* One frame body from the reader. */
static void server_on_frame(ctld_conn_t *conn, const char *body, size_t len)
{
    ctld_t *c = conn->c;
    json_t *msg = NULL;
    loom_err_t err = {0};
    char who[96];
    int rc =
        !conn->is_signed && loom_munge_frame_is(body, len)
            ? server_munge_frame(conn, body, len, &msg, &err)
            : loom_frame_decode_body(body, len, c->key, !conn->is_unix, ctld_now(), &msg, &err);
    if (rc == -LOOM_EAUTH && !conn->is_unix && !memchr(body, 0, len)) {
        loom_info("refusing an unsigned frame on the TCP port");
        server_refuse_unsigned(conn, body, len);
        return;
    }
    if (rc < 0) {
        loom_error("dropping a frame from %s: %s", server_peer_name(conn, who, sizeof(who)),
                   err.msg);
        ctld_server_close(conn);
        return;
    }
    if (rc == 1)
        conn->is_signed = true;
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (type && strcmp(type, "reply") == 0) {
        server_on_reply(conn, msg);
    } else {
        ctld_peer_t peer;
        server_peer(conn, rc == 1, &peer);
        c->server->on_msg(c, conn, &peer, msg);
    }
    json_decref(msg);
}

static void server_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    ctld_conn_t *conn = h->data;
    *buf = uv_buf_init(conn->rbuf, sizeof(conn->rbuf));
}

static void server_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    ctld_conn_t *conn = s->data;
    loom_err_t err = {0};
    char who[96];
    if (nread < 0) {
        if (nread == UV_EOF && loom_frame_reader_eof(conn->reader, &err) < 0)
            loom_verbose("%s: %s", server_peer_name(conn, who, sizeof(who)), err.msg);
        ctld_server_close(conn);
        return;
    }
    if (loom_frame_reader_feed(conn->reader, buf->base, (size_t)nread, &err) < 0) {
        loom_error("closing the connection of %s: %s", server_peer_name(conn, who, sizeof(who)),
                   err.msg);
        ctld_server_close(conn);
        return;
    }
    /* Hold a reference: a handler may close the connection. */
    ctld_conn_ref(conn);
    const char *body;
    size_t len;
    while (!conn->closing) {
        int rc = loom_frame_reader_next(conn->reader, &body, &len, &err);
        if (rc <= 0) {
            if (rc < 0)
                ctld_server_close(conn);
            break;
        }
        server_on_frame(conn, body, len);
    }
    ctld_conn_unref(conn);
}

static ctld_conn_t *server_conn_new(ctld_t *c, bool is_unix)
{
    ctld_conn_t *conn = loom_xcalloc(1, sizeof(*conn));
    conn->c = c;
    conn->is_unix = is_unix;
    conn->refs = 1; /* held by the open handle */
    conn->reader = loom_frame_reader_create(c->server->frame_max);
    conn->h.handle.data = conn;
    return conn;
}

static void server_link(ctld_server_t *srv, ctld_conn_t *conn)
{
    conn->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = conn;
    srv->conns = conn;
    srv->nconns++;
}

static void server_peercred(ctld_conn_t *conn)
{
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    conn->uid = conn->gid = (uint32_t)-1;
    if (uv_fileno(&conn->h.handle, &fd) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        conn->uid = cred.uid;
        conn->gid = cred.gid;
        conn->pid = cred.pid;
    }
}

static void server_on_connection(uv_stream_t *server, int status)
{
    ctld_t *c = server->data;
    if (status < 0) {
        loom_error("accept: %s", uv_strerror(status));
        return;
    }
    bool is_unix = server == (uv_stream_t *)&c->server->unix_srv;
    ctld_conn_t *conn = server_conn_new(c, is_unix);
    if (is_unix)
        uv_pipe_init(c->loop, &conn->h.pipe, 0);
    else
        uv_tcp_init(c->loop, &conn->h.tcp);
    conn->h.handle.data = conn;
    if (uv_accept(server, &conn->h.stream) < 0) {
        uv_close(&conn->h.handle, server_handle_closed);
        return;
    }
    if (is_unix) {
        server_peercred(conn);
    } else {
        uv_tcp_nodelay(&conn->h.tcp, 1);
        conn->uid = conn->gid = 0; /* a signed peer holds the key: root-equivalent */
    }
    server_link(c->server, conn);
    if (uv_read_start(&conn->h.stream, server_alloc, server_on_read) < 0)
        ctld_server_close(conn);
}

static int server_listen_unix(ctld_t *c, loom_err_t *err)
{
    ctld_server_t *srv = c->server;
    loom_sbuf_t p = LOOM_SBUF_INIT;
    loom_sbuf_addf(&p, "%s/%s", c->conf->state_save_location, SERVER_SOCK_NAME);
    srv->sock_path = loom_sbuf_detach(&p);
    if (strlen(srv->sock_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return loom_errf(err, -ENAMETOOLONG, "socket path %s is too long for a Unix socket",
                         srv->sock_path);
    unlink(srv->sock_path); /* a stale socket of an earlier run; the pid lock guards a live one */
    uv_pipe_init(c->loop, &srv->unix_srv, 0);
    srv->unix_srv.data = c;
    srv->unix_open = true;
    int rc = uv_pipe_bind(&srv->unix_srv, srv->sock_path);
    if (rc == 0)
        rc = chmod(srv->sock_path, 0666) < 0 ? uv_translate_sys_error(errno) : 0;
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&srv->unix_srv, SERVER_BACKLOG, server_on_connection);
    if (rc < 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot listen on %s: %s", srv->sock_path,
                         uv_strerror(rc));
    return 0;
}

static int server_listen_tcp(ctld_t *c, loom_err_t *err)
{
    ctld_server_t *srv = c->server;
    struct sockaddr_in a4;
    int port = (int)c->conf->slurmctld_port;
    uv_tcp_init(c->loop, &srv->tcp_srv);
    srv->tcp_srv.data = c;
    srv->tcp_open = true;
    /* Like slurmctld: every address, so nodes reach it by any of the host's names. */
    uv_ip4_addr("0.0.0.0", port, &a4);
    int rc = uv_tcp_bind(&srv->tcp_srv, (const struct sockaddr *)&a4, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&srv->tcp_srv, SERVER_BACKLOG, server_on_connection);
    if (rc < 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot listen on TCP port %d: %s", port,
                         uv_strerror(rc));
    return 0;
}

int ctld_server_start(ctld_t *c, ctld_msg_f *on_msg, loom_err_t *err)
{
    c->server = loom_xcalloc(1, sizeof(*c->server));
    c->server->on_msg = on_msg;
    c->server->frame_max = LOOM_FRAME_MAX_DEFAULT;
    const char *auth = loom_conf_get(c->conf, "AuthType");
    if (loom_munge_available() && auth && strcmp(auth, "auth/munge") == 0) {
        char *sock = loom_munge_socket(loom_conf_get(c->conf, "AuthInfo"));
        if (loom_munge_open(sock, &c->server->munge, NULL) < 0)
            loom_info("munge frames will be refused: no munge context");
        free(sock);
    }
    int rc = server_listen_unix(c, err);
    if (rc == 0)
        rc = server_listen_tcp(c, err);
    return rc;
}

static void server_free_cb(uv_handle_t *h)
{
}

void ctld_server_stop(ctld_t *c)
{
    ctld_server_t *srv = c->server;
    if (!srv)
        return;
    while (srv->conns)
        ctld_server_close(srv->conns);
    if (srv->unix_open)
        uv_close((uv_handle_t *)&srv->unix_srv, server_free_cb);
    if (srv->tcp_open)
        uv_close((uv_handle_t *)&srv->tcp_srv, server_free_cb);
    srv->unix_open = srv->tcp_open = false;
    if (srv->sock_path)
        unlink(srv->sock_path);
}

void ctld_server_destroy(ctld_t *c)
{
    if (!c->server)
        return;
    free(c->server->sock_path);
    loom_munge_close(c->server->munge);
    free(c->server);
    c->server = NULL;
}

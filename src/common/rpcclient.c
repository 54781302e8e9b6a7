/*
 * rpcclient.c - blocking RPC client for the commands. See rpcclient.h and
 * docs/proto/rpc.md.
 */
#include "common/rpcclient.h"
#include "common/frame.h"
#include "common/munge.h"
#include "common/proto.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct loom_rpc {
    int fd;
    char *addr; /* as given, for messages */
    const loom_key_t *key;
    int timeout_ms; /* < 0: none */
    char *sender;
    uint64_t next_id;
    loom_frame_reader_t *reader;
    bool dead;
    loom_munge_t *munge; /* borrowed; NULL: key or plain frames */
    uint32_t daemon_uid;
};

static int64_t rpc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left before deadline (-1: no deadline), never negative. */
static int rpc_left(int64_t deadline)
{
    if (deadline < 0)
        return -1;
    int64_t left = deadline - rpc_now_ms();
    return left < 0 ? 0 : (int)left;
}

/* Wait for events on fd until deadline: 1 ready, 0 timed out, -errno. */
static int rpc_poll(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, rpc_left(deadline));
        if (n > 0)
            return 1;
        if (n == 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

/* ---- connecting ---- */

/* Connect a non-blocking socket: 0, -ETIMEDOUT or -errno. */
static int rpc_connect_addr(int family, const struct sockaddr *sa, socklen_t salen,
                            int64_t deadline, int *fdp)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc;
    /* EAGAIN: a Unix listener's backlog is full and nothing is in progress;
     * try again shortly rather than wait for an event that will not come. */
    while ((rc = connect(fd, sa, salen) == 0 ? 0 : -errno) == -EAGAIN && rpc_left(deadline) != 0)
        poll(NULL, 0, 10);
    if (rc == -EAGAIN)
        rc = -ETIMEDOUT;
    if (rc == -EINPROGRESS || rc == -EINTR) {
        rc = rpc_poll(fd, POLLOUT, deadline);
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (rc == 0)
            rc = -ETIMEDOUT;
        else if (rc > 0)
            rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 ? -errno : -soerr;
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (family != AF_UNIX) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    *fdp = fd;
    return 0;
}

static int rpc_connect_unix(const char *path, int64_t deadline, int *fdp)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(sun.sun_path))
        return -ENAMETOOLONG;
    memcpy(sun.sun_path, path, n + 1);
    return rpc_connect_addr(AF_UNIX, (const struct sockaddr *)&sun, sizeof(sun), deadline, fdp);
}

/* Split "host:port" / "[v6]:port" into owned host and a pointer to port. */
static int rpc_split_hostport(const char *addr, char **host, const char **port)
{
    const char *colon;
    const char *h = addr;
    size_t hlen;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':')
            return -EINVAL;
        h = addr + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon)
            return -EINVAL;
        hlen = (size_t)(colon - addr);
    }
    if (hlen == 0 || colon[1] == '\0')
        return -EINVAL;
    *host = loom_xstrndup(h, hlen);
    *port = colon + 1;
    return 0;
}

static int rpc_connect_tcp(const char *addr, int64_t deadline, int *fdp, loom_err_t *err)
{
    char *host;
    const char *port;
    if (rpc_split_hostport(addr, &host, &port) < 0)
        return loom_errf(err, -LOOM_ECONNECT,
                         "bad address '%s': expected unix:/path, host:port or [v6addr]:port", addr);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    free(host);
    if (gai != 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot resolve %s: %s", addr, gai_strerror(gai));
    int rc = -ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        rc = rpc_connect_addr(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline, fdp);
        if (rc == 0 || rc == -ETIMEDOUT)
            break;
    }
    freeaddrinfo(res);
    return rc;
}

static char *rpc_default_sender(void)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
        return loom_xstrdup("client");
    host[strcspn(host, ".")] = '\0';
    return loom_xstrdup(host[0] ? host : "client");
}

loom_rpc_t *loom_rpc_connect(const char *addr, const loom_key_t *key, int timeout_ms,
                             loom_err_t *err)
{
    if (timeout_ms == 0)
        timeout_ms = LOOM_RPC_TIMEOUT_DEFAULT;
    int64_t deadline = timeout_ms < 0 ? -1 : rpc_now_ms() + timeout_ms;
    int fd = -1;
    int rc;
    if (strncmp(addr, "unix:", 5) == 0)
        rc = rpc_connect_unix(addr + 5, deadline, &fd);
    else
        rc = rpc_connect_tcp(addr, deadline, &fd, err);
    if (rc <= -LOOM_EBASE)
        return NULL; /* bad address or resolver error, already described */
    if (rc == -ETIMEDOUT) {
        loom_errf(err, -LOOM_ETIMEDOUT, "connect to %s timed out after %d ms", addr, timeout_ms);
        return NULL;
    }
    if (rc < 0) {
        loom_errf(err, -LOOM_ECONNECT, "cannot connect to %s: %s", addr, strerror(-rc));
        return NULL;
    }
    loom_rpc_t *c = loom_xcalloc(1, sizeof(*c));
    c->fd = fd;
    c->addr = loom_xstrdup(addr);
    c->key = key;
    c->timeout_ms = timeout_ms;
    c->sender = rpc_default_sender();
    c->reader = loom_frame_reader_create(0);
    return c;
}

void loom_rpc_set_sender(loom_rpc_t *c, const char *sender)
{
    free(c->sender);
    c->sender = loom_xstrdup(sender);
}

void loom_rpc_set_frame_max(loom_rpc_t *c, size_t max)
{
    loom_frame_reader_destroy(c->reader);
    c->reader = loom_frame_reader_create(max);
}

void loom_rpc_close(loom_rpc_t *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    loom_frame_reader_destroy(c->reader);
    free(c->sender);
    free(c->addr);
    free(c);
}

/* ---- calling ---- */

/* Mark the connection dead and fill err with a transport error. */
static int rpc_broken(loom_rpc_t *c, int code, loom_err_t *err, const char *what)
{
    c->dead = true;
    if (code == -LOOM_ETIMEDOUT)
        return loom_errf(err, code, "no reply from %s within %d ms", c->addr, c->timeout_ms);
    return loom_errf(err, code, "%s %s", what, c->addr);
}

static int rpc_send_all(loom_rpc_t *c, const char *buf, size_t len, int64_t deadline,
                        loom_err_t *err)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(c->fd, buf + off, len - off, MSG_NOSIGNAL);
        if (n >= 0) {
            off += (size_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            loom_errf(err, -LOOM_ECONNECT, "lost connection to %s: %s", c->addr, strerror(errno));
            c->dead = true;
            return -LOOM_ECONNECT;
        }
        int rc = rpc_poll(c->fd, POLLOUT, deadline);
        if (rc <= 0)
            return rpc_broken(c, rc == 0 ? -LOOM_ETIMEDOUT : -LOOM_ECONNECT, err, "cannot send to");
    }
    return 0;
}

void loom_rpc_set_munge(loom_rpc_t *c, loom_munge_t *m, uint32_t daemon_uid)
{
    c->munge = m;
    c->daemon_uid = daemon_uid;
}

static int rpc_encode(loom_rpc_t *c, const json_t *req, loom_sbuf_t *out, loom_err_t *err)
{
    if (c->munge)
        return loom_munge_frame_encode(c->munge, req, out, err);
    if (!c->key)
        return loom_frame_encode(req, NULL, out, err);
    uint64_t nonce = 0;
    while (getrandom(&nonce, sizeof(nonce), 0) < 0 && errno == EINTR)
        ;
    loom_frame_auth_t auth = {.key = c->key,
                              .sender = c->sender,
                              .ts = (int64_t)time(NULL),
                              .nonce = nonce & (uint64_t)INT64_MAX};
    return loom_frame_encode(req, &auth, out, err);
}

/* Read until the reader holds a frame: 0, or a (fatal) error. */
static int rpc_fill(loom_rpc_t *c, int64_t deadline, loom_err_t *err)
{
    char buf[64 * 1024];
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
        int rc = 0;
        if (n > 0 && (rc = loom_frame_reader_feed(c->reader, buf, (size_t)n, err)) < 0)
            loom_err_prefix(err, "reply from %s", c->addr);
        if (n > 0)
            return rc;
        if (n == 0 && (rc = loom_frame_reader_eof(c->reader, err)) < 0)
            return loom_err_prefix(err, "reply from %s", c->addr);
        if (n == 0)
            return loom_errf(err, -LOOM_ECONNECT, "connection to %s closed before the reply",
                             c->addr);
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return loom_errf(err, -LOOM_ECONNECT, "lost connection to %s: %s", c->addr,
                             strerror(errno));
        rc = rpc_poll(c->fd, POLLIN, deadline);
        if (rc <= 0)
            return rpc_broken(c, rc == 0 ? -LOOM_ETIMEDOUT : -LOOM_ECONNECT, err,
                              "cannot receive from");
    }
}

/* Decode one frame; 1 when it is the reply to id (stored in *reply), 0 when
 * it is something else (ignored), or an error. */
static int rpc_take(loom_rpc_t *c, const char *body, size_t len, uint64_t id, json_t **reply,
                    loom_err_t *err)
{
    json_t *msg = NULL;
    int rc;
    if (c->munge) { /* the controller answers with a credential of its own */
        uint32_t uid = UINT32_MAX, gid;
        rc = loom_munge_frame_decode(c->munge, body, len, &msg, &uid, &gid, err);
        if (rc == 0 && uid != 0 && uid != c->daemon_uid) {
            json_decref(msg);
            rc = loom_errf(err, -LOOM_EAUTH,
                           "the reply's munge credential is uid %u's, not the "
                           "controller's",
                           (unsigned)uid);
        }
    } else {
        rc = loom_frame_decode_body(body, len, c->key, c->key != NULL, (int64_t)time(NULL), &msg,
                                    err);
    }
    if (rc < 0)
        return loom_err_prefix(err, "reply from %s", c->addr);
    const loom_msg_type_t *t;
    uint64_t rid;
    rc = loom_msg_check(msg, &t, &rid, err);
    if (rc < 0) {
        json_decref(msg);
        return loom_err_prefix(err, "reply from %s", c->addr);
    }
    if (strcmp(t->name, "reply") != 0 || rid != id) {
        json_decref(msg); /* not ours: a notice or a stale reply */
        return 0;
    }
    *reply = msg;
    return 1;
}

static int rpc_wait_reply(loom_rpc_t *c, uint64_t id, int64_t deadline, json_t **reply,
                          loom_err_t *err)
{
    for (;;) {
        const char *body;
        size_t len;
        int rc = loom_frame_reader_next(c->reader, &body, &len, err);
        if (rc == 1)
            rc = rpc_take(c, body, len, id, reply, err);
        else if (rc == 0)
            rc = rpc_fill(c, deadline, err);
        if (rc < 0) {
            c->dead = true;
            return rc;
        }
        if (rc == 1)
            return 0;
    }
}

int loom_rpc_call(loom_rpc_t *c, json_t *req, json_t **reply, loom_err_t *err)
{
    if (c->dead)
        return loom_errf(err, -LOOM_ECONNECT, "connection to %s is closed", c->addr);
    int64_t deadline = c->timeout_ms < 0 ? -1 : rpc_now_ms() + c->timeout_ms;
    uint64_t id = ++c->next_id;
    if (!json_is_object(req))
        return loom_errf(err, -LOOM_EPROTO, "a request is a JSON object");
    json_object_set_new(req, "id", json_integer((json_int_t)id));
    loom_sbuf_t out = LOOM_SBUF_INIT;
    int rc = rpc_encode(c, req, &out, err);
    if (rc == 0)
        rc = rpc_send_all(c, out.buf, out.len, deadline, err);
    loom_sbuf_free(&out);
    if (rc == 0)
        rc = rpc_wait_reply(c, id, deadline, reply, err);
    return rc;
}

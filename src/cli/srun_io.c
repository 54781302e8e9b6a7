/*
 * srun_io.c - srun's I/O server (docs/proto/messages.md §7): the step's
 * supervisors connect to it, prove with the step's io_key that they belong
 * to this step (HELLO), then send task output, exits, notes and PMI-2 fence
 * contributions; srun sends them stdin, signals, KILL and window sizes.
 *
 * Output is written to srun's stdout/stderr as it comes, one whole line at
 * a time per task and stream (so lines of different tasks never mix),
 * prefixed "<rank>: " with -l/--label; -u/--unbuffered and --pty pass
 * chunks on as they arrive. Task ends are reported the way srun 22.05 does,
 * tasks of a node with the same status on one line ("srun: error: n1: tasks
 * 0-3: Exited with exit code 2"), once the node is done or 200 ms after the
 * first of them, so that tasks ending together share a line.
 *
 * One poll() loop; every socket is non-blocking and every write is queued.
 */
#include "cli/srun.h"

#include "common/log.h"
#include "common/stepio.h"
#include "common/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define IO_REPORT_DELAY_MS 200
#define IO_STDIN_HIGH      (16u * 1024 * 1024)

int64_t srun_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------- listening */

/* The address of this host that the controller's network reaches: the
 * source address of a (never sent) UDP "connection" towards it. */
static void io_local_address(srun_t *s)
{
    snprintf(s->io_host, sizeof(s->io_host), "127.0.0.1");
    const loom_conf_t *conf = loom_cli_conf(&s->cli, NULL);
    const char *host = conf && conf->n_ctld_hosts ? conf->ctld_hosts[0].addr : NULL;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (!host || getaddrinfo(host, "9", &hints, &res) != 0 || !res)
        return;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me;
    socklen_t len = sizeof(me);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &len) == 0)
        inet_ntop(AF_INET, &me.sin_addr, s->io_host, sizeof(s->io_host));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
}

int srun_io_listen(srun_t *s)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(a);
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(s->listen_fd, 1024) < 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&a, &len) < 0) {
        loom_cli_error(&s->cli, "cannot listen for the step's I/O: %s", strerror(errno));
        return -errno;
    }
    s->io_port = ntohs(a.sin_port);
    io_local_address(s);
    return 0;
}

/* ------------------------------------------------------------------ send */

void srun_io_send(srun_t *s, int node, int type, uint32_t rank, const void *data, size_t len)
{
    for (uint32_t i = 0; i < s->nnodes; i++) {
        srun_node_t *n = &s->nodes[i];
        if ((node >= 0 && (uint32_t)node != i) || n->fd < 0 || n->lost)
            continue;
        loom_stepio_encode(&n->out, type, rank, data, len);
    }
}

void srun_io_send_json(srun_t *s, int node, int type, uint32_t rank, const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    srun_io_send(s, node, type, rank, text, text ? strlen(text) : 0);
    free(text);
}

/* --------------------------------------------------------------- output */

static void io_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            poll(&pf, 1, 100);
            continue;
        }
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void io_emit(srun_t *s, srun_task_t *t, int k, const char *line, size_t n)
{
    if (!s->jo.label || s->pty) {
        io_write_all(k ? 2 : 1, line, n);
        return;
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%*u: ", s->label_width, (unsigned)t->rank);
    loom_sbuf_addn(&sb, line, n);
    io_write_all(k ? 2 : 1, sb.buf, sb.len);
    loom_sbuf_free(&sb);
}

/* -u: chunks as they come, a label at the start of each line. */
static void io_output_raw(srun_t *s, srun_task_t *t, int k, const char *data, size_t len)
{
    if (!s->jo.label || s->pty) {
        io_write_all(k ? 2 : 1, data, len);
        return;
    }
    size_t off = 0;
    while (off < len) {
        const char *nl = memchr(data + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - data) + 1 : len;
        if (t->mid[k])
            io_write_all(k ? 2 : 1, data + off, end - off);
        else
            io_emit(s, t, k, data + off, end - off);
        t->mid[k] = !nl;
        off = end;
    }
}

static void io_output(srun_t *s, uint32_t rank, int k, const char *data, size_t len)
{
    if (rank >= s->ntasks)
        return;
    srun_task_t *t = &s->tasks[rank];
    if (s->jo.unbuffered || s->pty) {
        io_output_raw(s, t, k, data, len);
        return;
    }
    loom_sbuf_t *part = &t->part[k];
    loom_sbuf_addn(part, data, len);
    char *nl = memrchr(part->buf, '\n', part->len);
    if (!nl)
        return;
    size_t whole = (size_t)(nl - part->buf) + 1;
    for (size_t off = 0; off < whole;) {
        char *e = s->jo.label ? memchr(part->buf + off, '\n', whole - off) : nl;
        size_t n = (size_t)(e - (part->buf + off)) + 1;
        io_emit(s, t, k, part->buf + off, n);
        off += n;
    }
    memmove(part->buf, part->buf + whole, part->len - whole);
    loom_sbuf_truncate(part, part->len - whole);
}

/* A node is done: what its tasks left without a newline goes out as it is. */
static void io_flush_node(srun_t *s, uint32_t node)
{
    for (uint32_t r = 0; r < s->ntasks; r++) {
        srun_task_t *t = &s->tasks[r];
        for (int k = 0; t->node == node && k < 2; k++)
            if (t->part[k].len) {
                io_emit(s, t, k, t->part[k].buf, t->part[k].len);
                loom_sbuf_reset(&t->part[k]);
            }
    }
}

/* ---------------------------------------------------------------- reports */

static void io_status_text(int status, loom_sbuf_t *out)
{
    if (WIFEXITED(status) && WEXITSTATUS(status))
        loom_sbuf_addf(out, "Exited with exit code %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        loom_sbuf_addf(out, "%s%s", strsignal(WTERMSIG(status)),
                       WCOREDUMP(status) ? " (core dumped)" : "");
}

/* One line for the unreported tasks of node with this status. */
static void io_report_group(srun_t *s, uint32_t node, int status, bool oom)
{
    loom_sbuf_t ranks = LOOM_SBUF_INIT, text = LOOM_SBUF_INIT;
    size_t n = 0;
    for (uint32_t r = 0; r < s->ntasks; r++) {
        srun_task_t *t = &s->tasks[r];
        if (t->node != node || !t->exited || t->reported || t->status != status || t->oom != oom)
            continue;
        uint32_t end = r;
        while (end + 1 < s->ntasks && s->tasks[end + 1].node == node && s->tasks[end + 1].exited &&
               !s->tasks[end + 1].reported && s->tasks[end + 1].status == status &&
               s->tasks[end + 1].oom == oom)
            end++;
        loom_sbuf_addf(&ranks, "%s%u", n ? "," : "", (unsigned)r);
        if (end > r)
            loom_sbuf_addf(&ranks, "-%u", (unsigned)end);
        for (uint32_t k = r; k <= end; k++)
            s->tasks[k].reported = true;
        n += end - r + 1;
        r = end;
    }
    if (oom) /* as srun says it of a task its supervisor saw OOM-killed */
        loom_sbuf_add(&text, "Out Of Memory");
    else
        io_status_text(status, &text);
    if (text.len)
        loom_cli_error(&s->cli, "%s: task%s %s: %s", s->nodes[node].name, n > 1 ? "s" : "",
                       loom_sbuf_str(&ranks), loom_sbuf_str(&text));
    loom_sbuf_free(&ranks);
    loom_sbuf_free(&text);
}

void srun_io_report(srun_t *s, bool all)
{
    int64_t now = srun_now_ms();
    for (uint32_t node = 0; node < s->nnodes; node++) {
        bool due = all || s->nodes[node].done;
        for (uint32_t r = 0; !due && r < s->ntasks; r++) {
            const srun_task_t *t = &s->tasks[r];
            due = t->node == node && t->exited && !t->reported &&
                  now - t->exit_ms >= IO_REPORT_DELAY_MS;
        }
        for (uint32_t r = 0; due && r < s->ntasks; r++) {
            const srun_task_t *t = &s->tasks[r];
            if (t->node == node && t->exited && !t->reported)
                io_report_group(s, node, t->status, t->oom);
        }
    }
}

/* ------------------------------------------------------------------- PMI */

/* A fence contribution: merge, and answer everyone once every node sent one. */
static void io_pmi(srun_t *s, const json_t *m)
{
    char key[24];
    snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(m, "fence")));
    if (!s->pmi)
        s->pmi = json_object();
    json_t *f = json_object_get(s->pmi, key);
    if (!f) {
        f = json_pack("{s:i, s:{}}", "n", 0, "kvs");
        json_object_set_new(s->pmi, key, f);
    }
    json_object_update(json_object_get(f, "kvs"), json_object_get(m, "kvs"));
    json_int_t n = json_integer_value(json_object_get(f, "n")) + 1;
    json_object_set_new(f, "n", json_integer(n));
    if ((uint32_t)n < s->nnodes)
        return;
    json_t *out = json_pack("{s:O, s:O}", "fence", json_object_get(m, "fence"), "kvs",
                            json_object_get(f, "kvs"));
    srun_io_send_json(s, -1, LOOM_STEPIO_PMI, LOOM_STEPIO_ALL, out);
    json_decref(out);
    json_object_del(s->pmi, key);
}

/* -------------------------------------------------------------- messages */

static void io_node_msg(srun_t *s, uint32_t node, const loom_stepio_msg_t *m)
{
    json_t *j = NULL;
    switch (m->type) {
    case LOOM_STEPIO_STDOUT:
    case LOOM_STEPIO_STDERR:
        io_output(s, m->rank, m->type == LOOM_STEPIO_STDERR, m->data, m->len);
        break;
    case LOOM_STEPIO_EXIT:
        j = loom_stepio_json(m);
        if (m->rank < s->ntasks && !s->tasks[m->rank].exited) {
            srun_task_t *t = &s->tasks[m->rank];
            t->exited = true;
            t->status = (int)json_integer_value(json_object_get(j, "status"));
            t->oom = json_is_true(json_object_get(j, "oom"));
            t->exit_ms = srun_now_ms();
            srun_ctl_task_exit(s, t);
        }
        break;
    case LOOM_STEPIO_NOTE:
        j = loom_stepio_json(m);
        if (json_is_true(json_object_get(j, "error")))
            loom_cli_error(&s->cli, "%s: %s", s->nodes[node].name,
                           json_string_value(json_object_get(j, "msg")));
        else
            loom_cli_info(&s->cli, "%s", json_string_value(json_object_get(j, "msg")));
        break;
    case LOOM_STEPIO_DONE:
        s->nodes[node].done = true;
        io_flush_node(s, node);
        break;
    case LOOM_STEPIO_PMI:
        j = loom_stepio_json(m);
        if (j)
            io_pmi(s, j);
        break;
    default:
        break;
    }
    json_decref(j);
}

/* Parse what buf holds; returns false when the stream is broken. */
static bool io_parse(srun_t *s, uint32_t node, loom_sbuf_t *buf)
{
    size_t off = 0;
    bool ok = true;
    for (;;) {
        loom_stepio_msg_t m;
        ssize_t used = loom_stepio_parse(buf->buf + off, buf->len - off, &m, NULL);
        if (used <= 0) {
            ok = used == 0;
            break;
        }
        io_node_msg(s, node, &m);
        off += (size_t)used;
    }
    memmove(buf->buf, buf->buf + off, buf->len - off);
    loom_sbuf_truncate(buf, buf->len - off);
    return ok;
}

/* Read what is there; -1 at EOF or on an error. */
static int io_read(int fd, loom_sbuf_t *buf)
{
    char chunk[65536];
    for (int i = 0; i < 16; i++) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n > 0) {
            loom_sbuf_addn(buf, chunk, (size_t)n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        return -1;
    }
    return 0;
}

static void io_node_closed(srun_t *s, uint32_t node)
{
    srun_node_t *n = &s->nodes[node];
    close(n->fd);
    n->fd = -1;
    if (!n->done) {
        n->lost = true;
        srun_ctl_node_lost(s, node);
    }
}

static void io_node_readable(srun_t *s, uint32_t node)
{
    srun_node_t *n = &s->nodes[node];
    int rc = io_read(n->fd, &n->in);
    if (!io_parse(s, node, &n->in)) {
        loom_cli_error(&s->cli, "%s: malformed I/O from the step's supervisor", n->name);
        rc = -1;
    }
    if (rc < 0)
        io_node_closed(s, node);
}

static void io_node_writable(srun_t *s, uint32_t node)
{
    srun_node_t *n = &s->nodes[node];
    ssize_t w = write(n->fd, n->out.buf, n->out.len);
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
        loom_sbuf_reset(&n->out);
        return;
    }
    if (w > 0) {
        memmove(n->out.buf, n->out.buf + w, n->out.len - (size_t)w);
        loom_sbuf_truncate(&n->out, n->out.len - (size_t)w);
    }
}

/* ------------------------------------------------------ new connections */

static void io_accept(srun_t *s)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        size_t i = 0;
        while (i < SRUN_MAX_PENDING && s->pending[i].fd >= 0)
            i++;
        if (i == SRUN_MAX_PENDING) {
            close(fd);
            continue;
        }
        s->pending[i].fd = fd;
        loom_sbuf_reset(&s->pending[i].in);
    }
}

/* HELLO with this step's ids and key makes a pending connection a node's. */
static int io_hello(srun_t *s, const loom_stepio_msg_t *m)
{
    json_t *j = m->type == LOOM_STEPIO_HELLO ? loom_stepio_json(m) : NULL;
    const char *key = json_string_value(json_object_get(j, "io_key"));
    json_int_t node = json_integer_value(json_object_get(j, "node_id"));
    bool ok = j && key && s->io_key && strcmp(key, s->io_key) == 0 &&
              json_integer_value(json_object_get(j, "job_id")) == (json_int_t)s->job_id &&
              json_integer_value(json_object_get(j, "step_id")) == (json_int_t)s->step_id &&
              node >= 0 && (uint32_t)node < s->nnodes && !s->nodes[node].hello;
    json_decref(j);
    return ok ? (int)node : -1;
}

static void io_pending_readable(srun_t *s, srun_pending_t *p)
{
    int rc = io_read(p->fd, &p->in);
    loom_stepio_msg_t m;
    ssize_t used = loom_stepio_parse(p->in.buf, p->in.len, &m, NULL);
    if (used == 0 && rc == 0)
        return;
    int node = used > 0 ? io_hello(s, &m) : -1;
    if (node < 0) {
        loom_debug("dropping an I/O connection without this step's HELLO");
        close(p->fd);
        p->fd = -1;
        return;
    }
    srun_node_t *n = &s->nodes[node];
    n->fd = p->fd;
    n->hello = true;
    p->fd = -1;
    loom_sbuf_addn(&n->in, p->in.buf + used, p->in.len - (size_t)used);
    loom_sbuf_reset(&p->in);
    if (s->pty && node == 0)
        srun_ctl_pty_start(s);
    if (s->kill_msg) /* the step was ended before this supervisor came */
        srun_io_send_json(s, node, LOOM_STEPIO_KILL, LOOM_STEPIO_ALL, s->kill_msg);
    if (!io_parse(s, (uint32_t)node, &n->in) || rc < 0)
        io_node_closed(s, (uint32_t)node);
}

/* ------------------------------------------------------------------ stdin */

static bool io_all_hello(const srun_t *s)
{
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (!s->nodes[i].hello && !s->nodes[i].lost)
            return false;
    return true;
}

static size_t io_queued(const srun_t *s)
{
    size_t q = 0;
    for (uint32_t i = 0; i < s->nnodes; i++)
        q += s->nodes[i].out.len;
    return q;
}

static void io_stdin(srun_t *s)
{
    char buf[65536];
    ssize_t n = read(s->stdin_fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    int node = s->stdin_rank == LOOM_STEPIO_ALL || s->stdin_rank >= s->ntasks
                   ? -1
                   : (int)s->tasks[s->stdin_rank].node;
    if (n > 0) {
        srun_io_send(s, node, LOOM_STEPIO_STDIN, s->stdin_rank, buf, (size_t)n);
        return;
    }
    srun_io_send(s, node, LOOM_STEPIO_STDIN_EOF, LOOM_STEPIO_ALL, NULL, 0);
    s->stdin_fd = -1;
}

/* ------------------------------------------------------------------- loop */

static bool io_over(const srun_t *s)
{
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const srun_node_t *n = &s->nodes[i];
        if (!n->done && !n->lost)
            return false;
        if (n->fd >= 0 && n->out.len)
            return false; /* let what is queued go out */
    }
    return true;
}

typedef enum { IO_SIG, IO_LISTEN, IO_STDIN, IO_PENDING, IO_NODE } io_kind_t;

void srun_io_run(srun_t *s)
{
    size_t max = 3 + SRUN_MAX_PENDING + s->nnodes;
    struct pollfd *p = loom_xcalloc(max, sizeof(*p));
    io_kind_t *kind = loom_xcalloc(max, sizeof(*kind));
    uint32_t *idx = loom_xcalloc(max, sizeof(*idx));
    while (!io_over(s)) {
        size_t n = 0;
        p[n] = (struct pollfd){.fd = s->sigfd, .events = POLLIN};
        kind[n++] = IO_SIG;
        p[n] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
        kind[n++] = IO_LISTEN;
        if (s->stdin_fd >= 0 && io_all_hello(s) && io_queued(s) < IO_STDIN_HIGH) {
            p[n] = (struct pollfd){.fd = s->stdin_fd, .events = POLLIN};
            kind[n++] = IO_STDIN;
        }
        for (uint32_t i = 0; i < SRUN_MAX_PENDING; i++)
            if (s->pending[i].fd >= 0) {
                p[n] = (struct pollfd){.fd = s->pending[i].fd, .events = POLLIN};
                kind[n] = IO_PENDING;
                idx[n++] = i;
            }
        for (uint32_t i = 0; i < s->nnodes; i++)
            if (s->nodes[i].fd >= 0) {
                short ev = POLLIN | (s->nodes[i].out.len ? POLLOUT : 0);
                p[n] = (struct pollfd){.fd = s->nodes[i].fd, .events = ev};
                kind[n] = IO_NODE;
                idx[n++] = i;
            }
        int ready = poll(p, n, 100);
        for (size_t k = 0; ready > 0 && k < n; k++) {
            if (!p[k].revents)
                continue;
            if (kind[k] == IO_SIG) {
                struct signalfd_siginfo si;
                while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                    srun_ctl_signal(s, (int)si.ssi_signo);
            } else if (kind[k] == IO_LISTEN) {
                io_accept(s);
            } else if (kind[k] == IO_STDIN) {
                io_stdin(s);
            } else if (kind[k] == IO_PENDING && s->pending[idx[k]].fd >= 0) {
                io_pending_readable(s, &s->pending[idx[k]]);
            } else if (kind[k] == IO_NODE && s->nodes[idx[k]].fd >= 0) {
                if (p[k].revents & POLLOUT)
                    io_node_writable(s, idx[k]);
                if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
                    io_node_readable(s, idx[k]);
            }
        }
        srun_io_report(s, false);
        srun_ctl_tick(s);
    }
    srun_io_report(s, true);
    free(p);
    free(kind);
    free(idx);
}

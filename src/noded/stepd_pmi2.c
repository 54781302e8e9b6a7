/*
 * stepd_pmi2.c - a PMI-2 server in the step supervisor (srun --mpi=pmi2;
 * docs/proto/messages.md §7.2).
 *
 * Each task gets one end of a socket pair as PMI_FD (with PMI_RANK,
 * PMI_SIZE, PMI_JOBID). The wire protocol is MPICH's "simple" PMI-2: the
 * client opens with a PMI-1 style line "cmd=init pmi_version=2
 * pmi_subversion=0\n" (answered "cmd=response_to_init ... rc=0\n"); every
 * later message is a 6-character decimal length followed by
 * "cmd=<name>;key=value;...;" (a ';' inside a value is written ";;").
 *
 * MPICH's default client speaks PMI-1 over the same PMI_FD ("cmd=init
 * pmi_version=1", then newline-terminated "cmd=get_maxes", "put", "get",
 * "barrier_in", ...): it is served too, on the same table and fences.
 *
 * Served: fullinit, job-getid, info-putnodeattr / info-getnodeattr (node-
 * local, wait=TRUE blocks until some task puts the key), info-getjobattr
 * (PMI_process_mapping, universeSize), kvs-put, kvs-get, kvs-fence,
 * finalize, abort. A fence completes when every task of this node has
 * entered it: the node's puts since the last fence go to srun in one PMI
 * message, srun merges the contributions of all nodes and sends the merged
 * table back, and every local task is answered. name-* and spawn are
 * refused (rc=-1).
 */
#include "noded/stepd_step.h"

#include "common/jobenv.h"
#include "common/log.h"
#include "common/stepio.h"
#include "common/xalloc.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PMI2_MAX_MSG (1024 * 1024)

typedef struct pmi2_client {
    loom_pmi2_t *p;
    loom_step_task_t *t;
    uv_pipe_t h;
    bool open;
    loom_sbuf_t in;
    bool in_fence;
    bool v1;        /* a PMI-1 client (MPICH's default simple PMI) */
    char *wait_key; /* info-getnodeattr wait=TRUE on this key */
} pmi2_client_t;

struct loom_pmi2 {
    loom_step_t *s;
    pmi2_client_t *cl; /* one per local task */
    uint32_t ncl;
    json_t *kvs;     /* the step's table after the last fence */
    json_t *pending; /* this node's puts since then */
    json_t *attrs;   /* node attributes */
    uint32_t in_fence;
    uint32_t fence_seq;
    bool fence_sent;
};

/* ------------------------------------------------------------ messages */

typedef struct pmi2_kv {
    loom_strv_t keys, vals;
} pmi2_kv_t;

static const char *pmi2_get(const pmi2_kv_t *kv, const char *key)
{
    long i = loom_strv_find(&kv->keys, key);
    return i < 0 ? NULL : kv->vals.v[i];
}

/* "cmd=x;a=b;c=d;;e;" -> pairs (";;" is a literal ';'). */
static void pmi2_parse_v2(const char *body, size_t len, pmi2_kv_t *kv)
{
    size_t i = 0;
    while (i < len) {
        size_t k = i;
        while (k < len && body[k] != '=' && body[k] != ';')
            k++;
        loom_sbuf_t key = LOOM_SBUF_INIT, val = LOOM_SBUF_INIT;
        loom_sbuf_addn(&key, body + i, k - i);
        i = k;
        if (i < len && body[i] == '=') {
            for (i++; i < len; i++) {
                if (body[i] == ';' && i + 1 < len && body[i + 1] == ';') {
                    loom_sbuf_addc(&val, ';');
                    i++;
                } else if (body[i] == ';') {
                    break;
                } else {
                    loom_sbuf_addc(&val, body[i]);
                }
            }
        }
        i++; /* the ';' */
        if (key.len) {
            loom_strv_take(&kv->keys, loom_sbuf_detach(&key));
            loom_strv_take(&kv->vals, loom_sbuf_detach(&val));
        }
        loom_sbuf_free(&key);
        loom_sbuf_free(&val);
    }
}

static void pmi2_kv_free(pmi2_kv_t *kv)
{
    loom_strv_free(&kv->keys);
    loom_strv_free(&kv->vals);
}

typedef struct pmi2_write {
    uv_write_t req;
    char bytes[];
} pmi2_write_t;

static void pmi2_written(uv_write_t *req, int status)
{
    free(req);
}

static void pmi2_send_raw(pmi2_client_t *c, const char *text, size_t len)
{
    if (!c->open)
        return;
    pmi2_write_t *w = loom_xmalloc(sizeof(*w) + len);
    memcpy(w->bytes, text, len);
    uv_buf_t buf = uv_buf_init(w->bytes, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->h, &buf, 1, pmi2_written) < 0)
        free(w);
}

/* Append ";key=value" escaping ';'. */
static void pmi2_add(loom_sbuf_t *sb, const char *key, const char *val)
{
    loom_sbuf_addf(sb, "%s=", key);
    for (const char *p = val; *p; p++) {
        if (*p == ';')
            loom_sbuf_addc(sb, ';');
        loom_sbuf_addc(sb, *p);
    }
    loom_sbuf_addc(sb, ';');
}

/* Send "cmd=<cmd>;rc=<rc>;" plus pairs (NULL-terminated key, value list). */
static void pmi2_reply(pmi2_client_t *c, const char *cmd, int rc, ...)
{
    loom_sbuf_t body = LOOM_SBUF_INIT, msg = LOOM_SBUF_INIT;
    loom_sbuf_addf(&body, "cmd=%s;rc=%d;", cmd, rc);
    va_list ap;
    va_start(ap, rc);
    const char *k;
    while ((k = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        pmi2_add(&body, k, v ? v : "");
    }
    va_end(ap);
    loom_sbuf_addf(&msg, "%6u", (unsigned)body.len);
    loom_sbuf_addn(&msg, body.buf, body.len);
    pmi2_send_raw(c, msg.buf, msg.len);
    loom_sbuf_free(&body);
    loom_sbuf_free(&msg);
}

/* ---------------------------------------------------------------- fence */

static void pmi2_fence_send(loom_pmi2_t *p)
{
    json_t *m = json_pack("{s:I, s:O}", "fence", (json_int_t)p->fence_seq, "kvs", p->pending);
    loom_step_send_json(p->s, LOOM_STEPIO_PMI, LOOM_STEPIO_ALL, m);
    json_decref(m);
    json_object_clear(p->pending);
    p->fence_sent = true;
}

void loom_pmi2_from_srun(loom_pmi2_t *p, const json_t *msg)
{
    if (!p->fence_sent ||
        (uint32_t)json_integer_value(json_object_get(msg, "fence")) != p->fence_seq)
        return;
    json_object_update(p->kvs, json_object_get(msg, "kvs"));
    p->fence_sent = false;
    p->fence_seq++;
    p->in_fence = 0;
    for (uint32_t i = 0; i < p->ncl; i++) {
        if (!p->cl[i].in_fence)
            continue;
        p->cl[i].in_fence = false;
        if (p->cl[i].v1)
            pmi2_send_raw(&p->cl[i], "cmd=barrier_out rc=0\n", 21);
        else
            pmi2_reply(&p->cl[i], "kvs-fence-response", 0, NULL);
    }
}

/* ------------------------------------------------------------- commands */

static void pmi2_wake(loom_pmi2_t *p, const char *key, const char *val)
{
    for (uint32_t i = 0; i < p->ncl; i++) {
        pmi2_client_t *c = &p->cl[i];
        if (c->wait_key && strcmp(c->wait_key, key) == 0) {
            free(c->wait_key);
            c->wait_key = NULL;
            pmi2_reply(c, "info-getnodeattr-response", 0, "found", "TRUE", "value", val, NULL);
        }
    }
}

static void pmi2_jobattr(pmi2_client_t *c, const char *key)
{
    loom_pmi2_t *p = c->p;
    char size[16];
    snprintf(size, sizeof(size), "%u", (unsigned)p->s->step_ntasks);
    if (key && strcmp(key, "PMI_process_mapping") == 0) {
        char *map = loom_pmi2_mapping(p->s->body);
        pmi2_reply(c, "info-getjobattr-response", 0, "found", "TRUE", "value", map, NULL);
        free(map);
    } else if (key && strcmp(key, "universeSize") == 0) {
        pmi2_reply(c, "info-getjobattr-response", 0, "found", "TRUE", "value", size, NULL);
    } else {
        pmi2_reply(c, "info-getjobattr-response", 0, "found", "FALSE", NULL);
    }
}

static void pmi2_kvs_get(pmi2_client_t *c, const char *key)
{
    loom_pmi2_t *p = c->p;
    const char *v = key ? json_string_value(json_object_get(p->kvs, key)) : NULL;
    if (!v && key)
        v = json_string_value(json_object_get(p->pending, key));
    if (v)
        pmi2_reply(c, "kvs-get-response", 0, "found", "TRUE", "value", v, NULL);
    else
        pmi2_reply(c, "kvs-get-response", 0, "found", "FALSE", NULL);
}

static void pmi2_fence(pmi2_client_t *c)
{
    loom_pmi2_t *p = c->p;
    if (c->in_fence)
        return;
    c->in_fence = true;
    if (++p->in_fence == p->ncl)
        pmi2_fence_send(p);
}

static void pmi2_fullinit(pmi2_client_t *c)
{
    loom_step_t *s = c->p->s;
    char rank[16], size[16], jobid[32];
    snprintf(rank, sizeof(rank), "%u", (unsigned)c->t->rank);
    snprintf(size, sizeof(size), "%u", (unsigned)s->step_ntasks);
    snprintf(jobid, sizeof(jobid), "%u.%u", (unsigned)s->job_id, (unsigned)s->step_id);
    pmi2_reply(c, "fullinit-response", 0, "pmi-version", "2", "pmi-subversion", "0", "rank", rank,
               "size", size, "appnum", "0", "debugged", "FALSE", "pmiverbose", "FALSE", NULL);
}

static void pmi2_command(pmi2_client_t *c, const pmi2_kv_t *kv)
{
    loom_pmi2_t *p = c->p;
    const char *cmd = pmi2_get(kv, "cmd"), *key = pmi2_get(kv, "key");
    const char *val = pmi2_get(kv, "value");
    char jobid[32];
    snprintf(jobid, sizeof(jobid), "%u.%u", (unsigned)p->s->job_id, (unsigned)p->s->step_id);
    if (!cmd) {
        return;
    } else if (strcmp(cmd, "fullinit") == 0) {
        pmi2_fullinit(c);
    } else if (strcmp(cmd, "job-getid") == 0) {
        pmi2_reply(c, "job-getid-response", 0, "jobid", jobid, NULL);
    } else if (strcmp(cmd, "info-putnodeattr") == 0 && key) {
        json_object_set_new(p->attrs, key, json_string(val ? val : ""));
        pmi2_reply(c, "info-putnodeattr-response", 0, NULL);
        pmi2_wake(p, key, val ? val : "");
    } else if (strcmp(cmd, "info-getnodeattr") == 0 && key) {
        const char *v = json_string_value(json_object_get(p->attrs, key));
        const char *wait = pmi2_get(kv, "wait");
        if (v) {
            pmi2_reply(c, "info-getnodeattr-response", 0, "found", "TRUE", "value", v, NULL);
        } else if (wait && strcmp(wait, "TRUE") == 0) {
            free(c->wait_key);
            c->wait_key = loom_xstrdup(key);
        } else {
            pmi2_reply(c, "info-getnodeattr-response", 0, "found", "FALSE", NULL);
        }
    } else if (strcmp(cmd, "info-getjobattr") == 0) {
        pmi2_jobattr(c, key);
    } else if (strcmp(cmd, "kvs-put") == 0 && key) {
        json_object_set_new(p->pending, key, json_string(val ? val : ""));
        pmi2_reply(c, "kvs-put-response", 0, NULL);
    } else if (strcmp(cmd, "kvs-get") == 0) {
        pmi2_kvs_get(c, key);
    } else if (strcmp(cmd, "kvs-fence") == 0) {
        pmi2_fence(c);
    } else if (strcmp(cmd, "finalize") == 0) {
        pmi2_reply(c, "finalize-response", 0, NULL);
    } else if (strcmp(cmd, "abort") == 0) {
        const char *why = pmi2_get(kv, "message");
        loom_error("step %u.%u: task %u called PMI2_Abort: %s", p->s->job_id, p->s->step_id,
                   (unsigned)c->t->rank, why ? why : "");
        loom_step_terminate(p->s, "", 0, SIGKILL);
    } else {
        loom_sbuf_t name = LOOM_SBUF_INIT;
        loom_sbuf_addf(&name, "%s-response", cmd);
        pmi2_reply(c, loom_sbuf_str(&name), -1, "errmsg", "not supported by loomstepd", NULL);
        loom_sbuf_free(&name);
    }
}

/* ---------------------------------------------------------------- PMI-1 */

/* "cmd=put kvsname=k key=a value=b" -> pairs (a '\' escapes the next byte). */
static void pmi1_parse(const char *line, size_t len, pmi2_kv_t *kv)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && line[i] == ' ')
            i++;
        loom_sbuf_t key = LOOM_SBUF_INIT, val = LOOM_SBUF_INIT;
        while (i < len && line[i] != '=' && line[i] != ' ')
            loom_sbuf_addc(&key, line[i++]);
        if (i < len && line[i] == '=')
            for (i++; i < len && line[i] != ' '; i++) {
                if (line[i] == '\\' && i + 1 < len)
                    i++;
                loom_sbuf_addc(&val, line[i]);
            }
        if (key.len) {
            loom_strv_take(&kv->keys, loom_sbuf_detach(&key));
            loom_strv_take(&kv->vals, loom_sbuf_detach(&val));
        }
        loom_sbuf_free(&key);
        loom_sbuf_free(&val);
    }
}

static void pmi1_send(pmi2_client_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void pmi1_send(pmi2_client_t *c, const char *fmt, ...)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    loom_sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    loom_sbuf_addc(&sb, '\n');
    pmi2_send_raw(c, sb.buf, sb.len);
    loom_sbuf_free(&sb);
}

/* A value, with the job attributes PMI-1 reads as keys (PMI_process_mapping). */
static char *pmi1_lookup(loom_pmi2_t *p, const char *key)
{
    if (key && strcmp(key, "PMI_process_mapping") == 0)
        return loom_pmi2_mapping(p->s->body);
    const char *v = key ? json_string_value(json_object_get(p->kvs, key)) : NULL;
    if (!v && key)
        v = json_string_value(json_object_get(p->pending, key));
    return v ? loom_xstrdup(v) : NULL;
}

/* MPICH's simple PMI-1: the same table and fences, another wire format. */
static void pmi1_line(pmi2_client_t *c, const char *line, size_t len)
{
    loom_pmi2_t *p = c->p;
    pmi2_kv_t kv = {LOOM_STRV_INIT, LOOM_STRV_INIT};
    pmi1_parse(line, len, &kv);
    const char *cmd = pmi2_get(&kv, "cmd"), *key = pmi2_get(&kv, "key");
    const char *ver = pmi2_get(&kv, "pmi_version");
    unsigned size = (unsigned)p->s->step_ntasks;
    if (!cmd) {
    } else if (strcmp(cmd, "init") == 0) {
        c->v1 = !ver || strcmp(ver, "2") != 0; /* PMI-2 clients say hello this way too */
        pmi1_send(c, "cmd=response_to_init pmi_version=%s pmi_subversion=%s rc=0",
                  c->v1 ? "1" : "2", c->v1 ? "1" : "0");
    } else if (strcmp(cmd, "get_maxes") == 0) {
        pmi1_send(c, "cmd=maxes kvsname_max=256 keylen_max=256 vallen_max=1024 rc=0");
    } else if (strcmp(cmd, "get_appnum") == 0) {
        pmi1_send(c, "cmd=appnum appnum=0 rc=0");
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        pmi1_send(c, "cmd=universe_size size=%u rc=0", size);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        pmi1_send(c, "cmd=my_kvsname kvsname=%u.%u rc=0", (unsigned)p->s->job_id,
                  (unsigned)p->s->step_id);
    } else if (strcmp(cmd, "put") == 0 && key) {
        const char *val = pmi2_get(&kv, "value");
        json_object_set_new(p->pending, key, json_string(val ? val : ""));
        pmi1_send(c, "cmd=put_result rc=0 msg=success");
    } else if (strcmp(cmd, "get") == 0) {
        char *v = pmi1_lookup(p, key);
        if (v)
            pmi1_send(c, "cmd=get_result rc=0 msg=success value=%s", v);
        else
            pmi1_send(c, "cmd=get_result rc=-1 msg=key_%s_not_found", key ? key : "");
        free(v);
    } else if (strcmp(cmd, "barrier_in") == 0) {
        pmi2_fence(c);
    } else if (strcmp(cmd, "finalize") == 0) {
        pmi1_send(c, "cmd=finalize_ack rc=0");
    } else if (strcmp(cmd, "abort") == 0) {
        loom_error("step %u.%u: task %u called PMI_Abort", p->s->job_id, p->s->step_id,
                   (unsigned)c->t->rank);
        loom_step_terminate(p->s, "", 0, SIGKILL);
    } else {
        pmi1_send(c, "cmd=%s_result rc=-1 msg=not_supported", cmd);
    }
    pmi2_kv_free(&kv);
}

/* ----------------------------------------------------------------- input */

/* One complete message at the start of c->in: its length, 0 if incomplete, -1 bad. */
static long pmi2_next(pmi2_client_t *c, pmi2_kv_t *kv)
{
    const char *b = c->in.buf;
    size_t len = c->in.len;
    if (len >= 4 && strncmp(b, "cmd=", 4) == 0) { /* a PMI-1 wire line */
        const char *nl = memchr(b, '\n', len);
        if (!nl)
            return len > PMI2_MAX_MSG ? -1 : 0;
        pmi1_line(c, b, (size_t)(nl - b));
        return nl - b + 1;
    }
    if (len < 6)
        return 0;
    char head[7];
    memcpy(head, b, 6);
    head[6] = '\0';
    char *end;
    long n = strtol(head, &end, 10);
    if (n <= 0 || n > PMI2_MAX_MSG)
        return -1;
    if (len < 6 + (size_t)n)
        return 0;
    pmi2_parse_v2(b + 6, (size_t)n, kv);
    return 6 + n;
}

static void pmi2_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char scratch[65536]; /* single-threaded: copied out at once */
    buf->base = scratch;
    buf->len = sizeof(scratch);
}

static void pmi2_closed(uv_handle_t *h)
{
}

static void pmi2_close(pmi2_client_t *c)
{
    if (!c->open)
        return;
    c->open = false;
    loom_uv_close_once((uv_handle_t *)&c->h, pmi2_closed);
}

static void pmi2_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    pmi2_client_t *c = st->data;
    if (n < 0) {
        pmi2_close(c);
        return;
    }
    loom_sbuf_addn(&c->in, buf->base, (size_t)n);
    for (;;) {
        pmi2_kv_t kv = {LOOM_STRV_INIT, LOOM_STRV_INIT};
        long used = pmi2_next(c, &kv);
        if (used > 0 && kv.keys.n)
            pmi2_command(c, &kv);
        pmi2_kv_free(&kv);
        if (used < 0) {
            loom_error("step %u.%u: task %u sent a malformed PMI message", c->p->s->job_id,
                       c->p->s->step_id, (unsigned)c->t->rank);
            pmi2_close(c);
            return;
        }
        if (used == 0)
            break;
        memmove(c->in.buf, c->in.buf + used, c->in.len - (size_t)used);
        loom_sbuf_truncate(&c->in, c->in.len - (size_t)used);
    }
}

/* ------------------------------------------------------------ life cycle */

loom_pmi2_t *loom_pmi2_create(loom_step_t *s)
{
    const char *mpi = json_string_value(json_object_get(s->body, "mpi"));
    if (!mpi || (strcmp(mpi, "pmi2") != 0 && strcmp(mpi, "pmi") != 0 && strcmp(mpi, "pmi1") != 0))
        return NULL;
    loom_pmi2_t *p = loom_xcalloc(1, sizeof(*p));
    p->s = s;
    p->ncl = s->ntasks;
    p->cl = loom_xcalloc(p->ncl ? p->ncl : 1, sizeof(*p->cl));
    p->kvs = json_object();
    p->pending = json_object();
    p->attrs = json_object();
    return p;
}

int loom_pmi2_add_task(loom_pmi2_t *p, loom_step_task_t *t, int fd)
{
    pmi2_client_t *c = &p->cl[t->local];
    c->p = p;
    c->t = t;
    uv_pipe_init(p->s->loop, &c->h, 0);
    c->h.data = c;
    if (uv_pipe_open(&c->h, fd) < 0) {
        close(fd);
        uv_close((uv_handle_t *)&c->h, pmi2_closed);
        return -EIO;
    }
    c->open = true;
    uv_read_start((uv_stream_t *)&c->h, pmi2_alloc, pmi2_read);
    return 0;
}

void loom_pmi2_destroy(loom_pmi2_t *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->ncl; i++) {
        loom_sbuf_free(&p->cl[i].in);
        free(p->cl[i].wait_key);
    }
    free(p->cl);
    json_decref(p->kvs);
    json_decref(p->pending);
    json_decref(p->attrs);
    free(p);
}

/* "(vector,(0,2,4))": blocks of (first node, node count, ranks per node). */
char *loom_pmi2_mapping(const json_t *body)
{
    const json_t *tpn = json_object_get(body, "tasks_per_node");
    size_t n = json_array_size(tpn), total = 0;
    uint32_t *tasks = loom_xcalloc(n ? n : 1, sizeof(uint32_t));
    for (size_t i = 0; i < n; i++)
        total += tasks[i] = (uint32_t)json_integer_value(json_array_get(tpn, i));
    const char *dist = json_string_value(json_object_get(body, "distribution"));
    uint32_t *node_of = loom_xcalloc(total ? total : 1, sizeof(uint32_t));
    loom_jobenv_rank_nodes(tasks, n, dist && strncmp(dist, "cyclic", 6) == 0, node_of);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, "(vector");
    /* Runs of consecutive ranks on one node, then runs of such runs on
     * consecutive nodes with the same length. */
    for (size_t r = 0; r < total;) {
        uint32_t node = node_of[r];
        size_t len = 0;
        while (r + len < total && node_of[r + len] == node)
            len++;
        size_t count = 1, next = r + len;
        while (next + len <= total && node_of[next] == node + count) {
            size_t k = 0;
            while (k < len && node_of[next + k] == node + count)
                k++;
            if (k != len || (next + len < total && node_of[next + len] == node + count))
                break;
            count++;
            next += len;
        }
        loom_sbuf_addf(&sb, ",(%u,%zu,%zu)", (unsigned)node, count, len);
        r = next;
    }
    loom_sbuf_addc(&sb, ')');
    free(tasks);
    free(node_of);
    return loom_sbuf_detach(&sb);
}

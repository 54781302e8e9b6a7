/* trace.c - SWF and CSV traces, and the synthetic generator. See trace.h. */
#include "sim/trace.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TRACE_MAX_LINE  4096
#define TRACE_MAX_VALUE 1e12 /* seconds, KB, ids: larger is not a trace but noise */
#define TRACE_MAX_UNITS 1e7  /* processors, CPUs, GPUs of one job */

uint32_t loom_sim_rand(loom_sim_rng_t *r, uint32_t n)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return n ? (uint32_t)((r->s >> 33) % n) : 0;
}

double loom_sim_rand01(loom_sim_rng_t *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->s >> 11) / (double)(1ull << 53);
}

static void trace_push(loom_sim_trace_t *t, const loom_sim_job_t *j)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = loom_xreallocarray(t->v, t->cap, sizeof(*t->v));
    }
    t->v[t->n++] = *j;
}

void loom_sim_trace_free(loom_sim_trace_t *t)
{
    free(t->v);
    memset(t, 0, sizeof(*t));
}

static int trace_submit_cmp(const void *a, const void *b)
{
    const loom_sim_job_t *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The next line of text into buf (without the newline); NULL at the end. */
static const char *trace_line(const char *p, char *buf, size_t len, size_t *lineno)
{
    if (!*p)
        return NULL;
    size_t n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    (*lineno)++;
    return p + n + (p[n] == '\n');
}

/* ---- SWF ----------------------------------------------------------------------- */

static void swf_header(const char *line, loom_sim_trace_t *t)
{
    const char *v;
    if ((v = strstr(line, "MaxProcs:")))
        t->max_procs = (uint32_t)strtoul(v + 9, NULL, 10);
    else if ((v = strstr(line, "MaxNodes:")))
        t->max_nodes = (uint32_t)strtoul(v + 9, NULL, 10);
}

static int swf_job(const char *line, size_t lineno, loom_sim_trace_t *t, loom_err_t *err)
{
    double f[18];
    int n = 0;
    const char *p = line;
    while (n < 18) {
        char *end;
        f[n] = strtod(p, &end);
        if (end == p)
            break;
        n++;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    if (n == 0 && !*p)
        return 0; /* blank */
    if (n < 12 || *p)
        return loom_errf(err, -EINVAL, "SWF line %zu: expected 18 numeric fields: '%.60s'", lineno,
                         line);
    for (int i = 0; i < n; i++)
        if (!isfinite(f[i]) || f[i] > TRACE_MAX_VALUE || f[i] < -1 ||
            ((i == 4 || i == 7) && f[i] > TRACE_MAX_UNITS) ||
            ((i == 0 || i == 11) && f[i] > UINT32_MAX))
            return loom_errf(err, -EINVAL, "SWF line %zu: field %d out of range: '%.60s'", lineno,
                             i + 1, line);
    int64_t procs = f[7] > 0 ? (int64_t)f[7] : (int64_t)f[4];
    if (procs <= 0 || f[3] < 0)
        return 0; /* never ran */
    loom_sim_job_t j = {.id = f[0] > 0 ? (uint32_t)f[0] : 0,
                        .submit = (int64_t)f[1],
                        .runtime = (int64_t)f[3] > 0 ? (int64_t)f[3] : 1,
                        .cpus = (uint32_t)procs,
                        .user = f[11] > 0 ? (uint32_t)f[11] : 0};
    j.limit = f[8] > 0 ? (int64_t)f[8] : j.runtime;
    if (j.limit < j.runtime)
        j.limit = j.runtime;
    if (f[9] > 0)
        j.mem = (uint64_t)(f[9] * (double)procs / 1024.0);
    trace_push(t, &j);
    return 0;
}

int loom_sim_swf_parse(const char *text, loom_sim_trace_t *out, loom_err_t *err)
{
    loom_sim_trace_t t = {0};
    char line[TRACE_MAX_LINE];
    size_t lineno = 0;
    for (const char *p = text; (p = trace_line(p, line, sizeof(line), &lineno));) {
        char *semi = strchr(line, ';');
        if (semi) {
            swf_header(semi, &t);
            *semi = '\0';
        }
        int rc = swf_job(line, lineno, &t, err);
        if (rc < 0) {
            loom_sim_trace_free(&t);
            return rc;
        }
    }
    if (t.n)
        qsort(t.v, t.n, sizeof(*t.v), trace_submit_cmp);
    loom_sim_trace_free(out);
    *out = t;
    return 0;
}

/* ---- CSV ----------------------------------------------------------------------- */

enum { COL_SUBMIT, COL_DURATION, COL_GPUS, COL_CPUS, COL_MEM, COL_USER, COL_LIMIT, COL_ID, NCOL };
static const char *const csv_cols[NCOL] = {"submit", "duration", "gpus",  "cpus",
                                           "mem",    "user",     "limit", "id"};

static int csv_header(const char *line, int *map, size_t *nfields, loom_err_t *err)
{
    char buf[TRACE_MAX_LINE];
    snprintf(buf, sizeof(buf), "%s", line);
    size_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",\r", &save); tok; tok = strtok_r(NULL, ",\r", &save), k++) {
        while (*tok == ' ')
            tok++;
        map[k] = -1;
        for (int c = 0; c < NCOL && k < 32; c++)
            if (strcasecmp(tok, csv_cols[c]) == 0)
                map[k] = c;
        if (k >= 31)
            return loom_errf(err, -EINVAL, "CSV header: too many columns");
    }
    *nfields = k;
    int seen[NCOL] = {0};
    for (size_t i = 0; i < k; i++)
        if (map[i] >= 0)
            seen[map[i]] = 1;
    for (int c = 0; c < COL_LIMIT; c++)
        if (!seen[c])
            return loom_errf(err, -EINVAL, "CSV header lacks the column '%s'", csv_cols[c]);
    return 0;
}

static int csv_row(const char *line, size_t lineno, const int *map, size_t nf, loom_sim_trace_t *t,
                   loom_err_t *err)
{
    double v[NCOL] = {0};
    v[COL_LIMIT] = -1;
    v[COL_ID] = (double)(t->n + 1);
    const char *p = line;
    for (size_t i = 0; i < nf; i++) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !isfinite(x) || x < 0 || x > TRACE_MAX_VALUE ||
            (*end && *end != ',' && *end != '\r'))
            return loom_errf(err, -EINVAL, "CSV line %zu: field %zu is not a number: '%.60s'",
                             lineno, i + 1, line);
        if (map[i] >= 0)
            v[map[i]] = x;
        p = *end == ',' ? end + 1 : end;
    }
    if (v[COL_GPUS] > TRACE_MAX_UNITS || v[COL_CPUS] > TRACE_MAX_UNITS || v[COL_ID] > UINT32_MAX ||
        v[COL_USER] > UINT32_MAX)
        return loom_errf(err, -EINVAL, "CSV line %zu: a count is out of range: '%.60s'", lineno,
                         line);
    loom_sim_job_t j = {.id = (uint32_t)v[COL_ID],
                        .submit = (int64_t)v[COL_SUBMIT],
                        .runtime = v[COL_DURATION] >= 1 ? (int64_t)v[COL_DURATION] : 1,
                        .gpus = (uint32_t)v[COL_GPUS],
                        .cpus = v[COL_CPUS] >= 1 ? (uint32_t)v[COL_CPUS] : 1,
                        .mem = (uint64_t)v[COL_MEM],
                        .user = (uint32_t)v[COL_USER]};
    j.limit = v[COL_LIMIT] > 0 ? (int64_t)v[COL_LIMIT] : j.runtime;
    if (j.limit < j.runtime)
        j.limit = j.runtime;
    trace_push(t, &j);
    return 0;
}

int loom_sim_csv_parse(const char *text, loom_sim_trace_t *out, loom_err_t *err)
{
    loom_sim_trace_t t = {0};
    char line[TRACE_MAX_LINE];
    size_t lineno = 0, nf = 0;
    int map[32];
    bool have_header = false;
    int rc = 0;
    for (const char *p = text; rc == 0 && (p = trace_line(p, line, sizeof(line), &lineno));) {
        if (!line[strspn(line, " \r")] || line[0] == '#')
            continue;
        if (!have_header) {
            rc = csv_header(line, map, &nf, err);
            have_header = true;
        } else {
            rc = csv_row(line, lineno, map, nf, &t, err);
        }
    }
    if (rc == 0 && !have_header)
        rc = loom_errf(err, -EINVAL, "CSV: no header line");
    if (rc < 0) {
        loom_sim_trace_free(&t);
        return rc;
    }
    if (t.n)
        qsort(t.v, t.n, sizeof(*t.v), trace_submit_cmp);
    loom_sim_trace_free(out);
    *out = t;
    return 0;
}

void loom_sim_csv_write(const loom_sim_trace_t *t, loom_sbuf_t *out)
{
    loom_sbuf_add(out, "id,submit,duration,limit,gpus,cpus,mem,user\n");
    for (size_t i = 0; i < t->n; i++) {
        const loom_sim_job_t *j = &t->v[i];
        loom_sbuf_addf(out, "%u,%lld,%lld,%lld,%u,%u,%llu,%u\n", j->id, (long long)j->submit,
                       (long long)j->runtime, (long long)j->limit, j->gpus, j->cpus,
                       (unsigned long long)j->mem, j->user);
    }
}

/* ---- the generator ------------------------------------------------------------------ */

static uint32_t gen_gpus(loom_sim_rng_t *r)
{
    uint32_t x = loom_sim_rand(r, 100);
    if (x < 5)
        return 0;
    if (x < 50)
        return 1;
    if (x < 65)
        return 2;
    if (x < 80)
        return 4;
    if (x < 95)
        return 8;
    return 16;
}

void loom_sim_generate(const loom_sim_gen_opts_t *o, loom_sim_trace_t *t)
{
    loom_sim_rng_t r = {o->seed * 2654435761u + 1};
    loom_sim_trace_free(t);
    /* Mean GPU-seconds per job: E[gpus] * E[duration] (log-uniform 60 s..12 h). */
    double mean_gpus = 0.45 * 1 + 0.15 * 2 + 0.15 * 4 + 0.15 * 8 + 0.05 * 16;
    double lo = log(60.0), hi = log(12 * 3600.0);
    double mean_dur = (exp(hi) - exp(lo)) / (hi - lo);
    double total = (double)(o->nodes ? o->nodes : 1) * (o->gpus_per_node ? o->gpus_per_node : 1);
    double load = o->load > 0 ? o->load : 0.9;
    double rate = load * total / (mean_gpus * mean_dur); /* jobs per second */
    double now = 0;
    for (size_t i = 0; i < o->jobs; i++) {
        now += -log(1.0 - loom_sim_rand01(&r)) / rate;
        loom_sim_job_t j = {.id = (uint32_t)i + 1, .submit = (int64_t)now};
        j.gpus = gen_gpus(&r);
        j.cpus = j.gpus ? j.gpus * 8 : 1 + loom_sim_rand(&r, 16);
        j.mem = (uint64_t)(j.gpus ? j.gpus : 1) * 32768;
        j.runtime = (int64_t)exp(lo + (hi - lo) * loom_sim_rand01(&r));
        double factor = 1.0 + 2.0 * loom_sim_rand01(&r);
        j.limit = ((int64_t)((double)j.runtime * factor) + 59) / 60 * 60;
        j.user = 1 + loom_sim_rand(&r, 20);
        trace_push(t, &j);
    }
}

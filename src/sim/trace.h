/*
 * trace.h - workload traces for loom-sim: the Standard Workload Format of the
 * Parallel Workloads Archive (SWF), a simple CSV of GPU jobs, and a seeded
 * generator of synthetic GPU traces (so that tests need no download).
 *
 * SWF: one job per line, 18 whitespace-separated fields; ';' starts a
 * comment (the header's "; MaxProcs: N" and "; MaxNodes: N" are read). Used:
 * 1 job number, 2 submit time, 4 run time, 5 allocated processors,
 * 8 requested processors (else 5), 9 requested time (else the run time),
 * 10 requested memory (KB per processor, -1 unknown), 12 user id. Jobs with
 * no processors or a negative run time (cancelled before start) are skipped.
 *
 * CSV: a header line naming the columns, then one job per line. Columns
 * (any order): submit (s), duration (s), gpus, cpus, mem (MiB), user, and
 * optionally limit (s, the requested time; default the duration) and id.
 *
 * Generator: Poisson arrivals sized to an offered load of the cluster's GPUs,
 * GPU counts 1 (45%), 2 (15%), 4 (15%), 8 (15%), 16 (5%), CPU-only (5%);
 * durations log-uniform between 1 minute and 12 hours; limits the duration
 * times 1 to 3, rounded up to a minute; 8 CPUs and 32 GiB per GPU.
 *
 * Entry points: loom_sim_swf_parse, loom_sim_csv_parse, loom_sim_generate,
 * loom_sim_csv_write, loom_sim_trace_free. Parsers take text in memory.
 */
#ifndef LOOM_SIM_TRACE_H
#define LOOM_SIM_TRACE_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct loom_sim_job {
    uint32_t id;
    int64_t submit;  /* s */
    int64_t runtime; /* s, what it really runs */
    int64_t limit;   /* s, its time limit (>= runtime) */
    uint32_t cpus;   /* in all */
    uint32_t gpus;   /* in all */
    uint64_t mem;    /* MiB in all; 0 unknown */
    uint32_t user;
} loom_sim_job_t;

typedef struct loom_sim_trace {
    loom_sim_job_t *v;
    size_t n, cap;
    uint32_t max_procs, max_nodes; /* SWF header; 0 when not given */
} loom_sim_trace_t;

typedef struct loom_sim_gen_opts {
    size_t jobs;
    uint64_t seed;
    uint32_t nodes, gpus_per_node;
    double load; /* offered GPU load, e.g. 0.9 */
} loom_sim_gen_opts_t;

int loom_sim_swf_parse(const char *text, loom_sim_trace_t *t, loom_err_t *err);
int loom_sim_csv_parse(const char *text, loom_sim_trace_t *t, loom_err_t *err);
void loom_sim_generate(const loom_sim_gen_opts_t *o, loom_sim_trace_t *t);
void loom_sim_csv_write(const loom_sim_trace_t *t, loom_sbuf_t *out);
void loom_sim_trace_free(loom_sim_trace_t *t);

/* A small seeded generator (PCG-style LCG step), shared by the generator and the bench. */
typedef struct loom_sim_rng {
    uint64_t s;
} loom_sim_rng_t;
uint32_t loom_sim_rand(loom_sim_rng_t *r, uint32_t n); /* [0, n) */
double loom_sim_rand01(loom_sim_rng_t *r);             /* [0, 1) */

#endif

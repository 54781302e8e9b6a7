/*
 * main.c - loom-sim: replay a workload through src/sched in virtual time.
 *
 *   loom-sim [run] (--swf FILE | --csv FILE | --generate N) [cluster] [policy]
 *   loom-sim gen --jobs N [--seed S] [--load L] [cluster]      CSV on stdout
 *   loom-sim bench [--nodes N] [--jobs N[,N...]] [--bf-max-job-test N] [--node-range]
 *
 * bench --node-range: pending multi-node jobs ask -N k-(k+1) (the backfill's
 * exact multi-node planner) instead of -N k.
 * Cluster: --nodes N --cpus-per-node C --gpus-per-node G --mem-per-node MiB
 * (an SWF trace without --nodes uses its MaxProcs / MaxNodes header).
 * Policy: --policy fifo|priority|backfill|all (default all), --bf-window
 * MINUTES, --bf-resolution SECONDS, --bf-max-job-test N (Slurm's
 * SchedulerParameters names and units). Exit status 0, 1 on a usage or
 * input error (the message names the bad value).
 */
#include "common/sbuf.h"
#include "common/xalloc.h"
#include "sim/bench.h"
#include "sim/sim.h"
#include "sim/trace.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *swf, *csv;
    size_t generate;
    loom_sim_opts_t sim;
    int policy; /* -1: all */
    uint64_t seed;
    double load;
    char *bench_jobs;
    bool nodes_set, load_set, node_range;
} main_opts_t;

enum {
    OPT_SWF = 256,
    OPT_CSV,
    OPT_GEN,
    OPT_NODES,
    OPT_CPUS,
    OPT_GPUS,
    OPT_MEM,
    OPT_POLICY,
    OPT_SEED,
    OPT_LOAD,
    OPT_JOBS,
    OPT_BF_WINDOW,
    OPT_BF_RES,
    OPT_BF_TEST,
    OPT_NODE_RANGE,
    OPT_HELP,
};

static const struct option main_long[] = {
    {"swf", required_argument, NULL, OPT_SWF},
    {"csv", required_argument, NULL, OPT_CSV},
    {"generate", required_argument, NULL, OPT_GEN},
    {"nodes", required_argument, NULL, OPT_NODES},
    {"cpus-per-node", required_argument, NULL, OPT_CPUS},
    {"gpus-per-node", required_argument, NULL, OPT_GPUS},
    {"mem-per-node", required_argument, NULL, OPT_MEM},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"seed", required_argument, NULL, OPT_SEED},
    {"load", required_argument, NULL, OPT_LOAD},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"bf-window", required_argument, NULL, OPT_BF_WINDOW},
    {"bf-resolution", required_argument, NULL, OPT_BF_RES},
    {"bf-max-job-test", required_argument, NULL, OPT_BF_TEST},
    {"node-range", no_argument, NULL, OPT_NODE_RANGE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void main_usage(FILE *f)
{
    fprintf(f,
            "Usage: loom-sim [run] (--swf FILE | --csv FILE | --generate N) [--nodes N]\n"
            "         [--cpus-per-node C] [--gpus-per-node G] [--mem-per-node MiB]\n"
            "         [--policy fifo|priority|backfill|all] [--bf-window MIN]\n"
            "         [--bf-resolution SEC] [--bf-max-job-test N] [--seed S] [--load L]\n"
            "       loom-sim gen --jobs N [--seed S] [--load L] [--nodes N] [--gpus-per-node G]\n"
            "       loom-sim bench [--nodes N] [--jobs N[,N...]] [--bf-max-job-test N]"
            " [--node-range]\n");
}

static int main_num(const char *what, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || v > max || s[0] == '-') {
        fprintf(stderr, "loom-sim: invalid %s '%s'\n", what, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int main_opt(main_opts_t *m, int c, const char *arg)
{
    uint64_t v = 0;
    int rc = 0;
    switch (c) {
    case OPT_SWF:
        m->swf = arg;
        break;
    case OPT_CSV:
        m->csv = arg;
        break;
    case OPT_GEN:
        rc = main_num("--generate", arg, 100000000, &v);
        m->generate = v;
        break;
    case OPT_NODES:
        rc = main_num("--nodes", arg, 1000000, &v);
        m->sim.nodes = (uint32_t)v;
        m->nodes_set = true;
        break;
    case OPT_CPUS:
        rc = main_num("--cpus-per-node", arg, 4096, &v);
        m->sim.cpus = (uint32_t)v;
        break;
    case OPT_GPUS:
        rc = main_num("--gpus-per-node", arg, 1024, &v);
        m->sim.gpus = (uint32_t)v;
        break;
    case OPT_MEM:
        rc = main_num("--mem-per-node", arg, UINT32_MAX, &v);
        m->sim.mem = v;
        break;
    case OPT_POLICY:
        m->policy = strcmp(arg, "all") == 0 ? -1 : loom_sim_policy_parse(arg);
        if (strcmp(arg, "all") != 0 && m->policy < 0) {
            fprintf(stderr, "loom-sim: invalid --policy '%s'\n", arg);
            rc = -1;
        }
        break;
    case OPT_SEED:
        rc = main_num("--seed", arg, UINT64_MAX, &m->seed);
        break;
    case OPT_LOAD:
        m->load = strtod(arg, NULL);
        m->load_set = true;
        if (m->load <= 0 || m->load > 10) {
            fprintf(stderr, "loom-sim: invalid --load '%s'\n", arg);
            rc = -1;
        }
        break;
    case OPT_JOBS: {
        char first[32];
        snprintf(first, sizeof(first), "%.*s", (int)strcspn(arg, ","), arg);
        free(m->bench_jobs);
        m->bench_jobs = loom_xstrdup(arg);
        rc = main_num("--jobs", first, 100000000, &v);
        m->generate = v;
        break;
    }
    case OPT_BF_WINDOW:
        rc = main_num("--bf-window", arg, 43200, &v);
        m->sim.bf_window = (int64_t)v * 60;
        break;
    case OPT_BF_RES:
        rc = main_num("--bf-resolution", arg, 3600, &v);
        m->sim.bf_resolution = (int64_t)v;
        break;
    case OPT_BF_TEST:
        rc = main_num("--bf-max-job-test", arg, 1000000, &v);
        m->sim.bf_max_job_test = (uint32_t)v;
        break;
    case OPT_NODE_RANGE:
        m->node_range = true;
        break;
    default:
        rc = -1;
    }
    return rc;
}

static char *main_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "loom-sim: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        loom_sbuf_addn(&sb, buf, n);
    fclose(f);
    return loom_sbuf_detach(&sb);
}

static int main_trace(main_opts_t *m, loom_sim_trace_t *t)
{
    loom_err_t err = {0};
    if (m->generate && !m->swf && !m->csv) {
        loom_sim_gen_opts_t g = {m->generate, m->seed, m->sim.nodes, m->sim.gpus, m->load};
        loom_sim_generate(&g, t);
        return 0;
    }
    const char *path = m->swf ? m->swf : m->csv;
    if (!path) {
        main_usage(stderr);
        return -1;
    }
    char *text = main_read_file(path);
    if (!text)
        return -1;
    int rc = m->swf ? loom_sim_swf_parse(text, t, &err) : loom_sim_csv_parse(text, t, &err);
    free(text);
    if (rc < 0)
        fprintf(stderr, "loom-sim: %s: %s\n", path, err.msg);
    return rc;
}

/* An SWF trace without --nodes: its header's processors, one node per MaxNodes. */
static void main_swf_cluster(main_opts_t *m, const loom_sim_trace_t *t)
{
    if (m->nodes_set || !m->swf)
        return;
    uint32_t procs = t->max_procs;
    for (size_t i = 0; !procs && i < t->n; i++)
        procs = t->v[i].cpus > procs ? t->v[i].cpus : procs;
    uint32_t nodes = t->max_nodes ? t->max_nodes : procs;
    m->sim.nodes = nodes ? nodes : 1;
    m->sim.cpus = procs && nodes ? (procs + nodes - 1) / nodes : 1;
    m->sim.gpus = 0;
}

static void main_print(loom_sim_policy_t p, const loom_sim_result_t *r)
{
    printf("%-9s %7zu %7zu %11.0f %11.0f %9.2f %8.1f%% %8.1f%% %10lld %8.1f%% %7llu\n",
           loom_sim_policy_name(p), r->jobs, r->skipped, r->mean_wait, r->p95_wait, r->mean_bsld,
           r->util_cpu * 100, r->util_gpu * 100, (long long)r->makespan, r->gpu_frag * 100,
           (unsigned long long)r->backfill_starts);
}

static int main_run(main_opts_t *m)
{
    loom_sim_trace_t t = {0};
    if (main_trace(m, &t) < 0)
        return 1;
    main_swf_cluster(m, &t);
    printf("trace: %zu jobs; cluster: %u nodes x %u CPUs, %u GPUs, %llu MiB\n", t.n, m->sim.nodes,
           m->sim.cpus, m->sim.gpus, (unsigned long long)m->sim.mem);
    printf("%-9s %7s %7s %11s %11s %9s %9s %9s %10s %9s %7s\n", "policy", "jobs", "skipped",
           "mean_wait_s", "p95_wait_s", "bsld", "util_cpu", "util_gpu", "makespan_s", "gpu_frag",
           "bf_starts");
    int rc = 0;
    for (int p = 0; p < LOOM_SIM_NPOLICY && rc == 0; p++) {
        if (m->policy >= 0 && p != m->policy)
            continue;
        loom_sim_opts_t o = m->sim;
        o.policy = (loom_sim_policy_t)p;
        loom_sim_result_t r;
        rc = loom_sim_run(&t, &o, &r);
        if (rc == 0)
            main_print(o.policy, &r);
    }
    loom_sim_trace_free(&t);
    return rc ? 1 : 0;
}

static int main_gen(main_opts_t *m)
{
    loom_sim_trace_t t = {0};
    loom_sim_gen_opts_t g = {m->generate, m->seed, m->sim.nodes, m->sim.gpus, m->load};
    loom_sim_generate(&g, &t);
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_sim_csv_write(&t, &out);
    fwrite(out.buf, 1, out.len, stdout);
    loom_sbuf_free(&out);
    loom_sim_trace_free(&t);
    return 0;
}

static int main_bench(main_opts_t *m)
{
    size_t jobs[16], n = 0;
    char *list = loom_xstrdup(m->bench_jobs ? m->bench_jobs : "1000,10000,100000"), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (main_num("--jobs", tok, 10000000, &v) < 0) {
            free(list);
            return 1;
        }
        jobs[n++] = (size_t)v;
    }
    free(list);
    loom_sim_bench_opts_t o = {.nodes = m->nodes_set ? m->sim.nodes : 10000,
                               .jobs = jobs,
                               .njobs = n,
                               .bf_max_job_test = m->sim.bf_max_job_test,
                               .seed = m->seed,
                               .busy = m->load_set && m->load <= 1 ? m->load : 0.95,
                               .node_range = m->node_range};
    return loom_sim_bench(&o) ? 1 : 0;
}

int main(int argc, char **argv)
{
    main_opts_t m = {.policy = -1, .seed = 1, .load = 0.9};
    m.sim = (loom_sim_opts_t){.nodes = 16, .cpus = 64, .gpus = 8, .mem = 1024 * 1024};
    const char *cmd = argc > 1 && argv[1][0] != '-' ? argv[1] : "run";
    int first = argc > 1 && argv[1][0] != '-' ? 1 : 0;
    int c;
    optind = first + 1;
    while ((c = getopt_long(argc, argv, "", main_long, NULL)) != -1) {
        if (c == OPT_HELP) {
            main_usage(stdout);
            return 0;
        }
        if (c == '?' || main_opt(&m, c, optarg) < 0) {
            main_usage(stderr);
            return 1;
        }
    }
    int rc;
    if (strcmp(cmd, "run") == 0)
        rc = main_run(&m);
    else if (strcmp(cmd, "gen") == 0)
        rc = main_gen(&m);
    else if (strcmp(cmd, "bench") == 0)
        rc = main_bench(&m);
    else {
        fprintf(stderr, "loom-sim: unknown command '%s'\n", cmd);
        main_usage(stderr);
        rc = 1;
    }
    free(m.bench_jobs);
    return rc;
}

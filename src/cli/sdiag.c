/*
 * sdiag.c - the controller's statistics in Slurm 22.05's sdiag layout, so
 * that tools which scrape it (prometheus slurm_exporter's scheduler
 * collector runs it every scrape and exits when it cannot) keep working.
 *
 * Loom keeps no RPC or scheduling-cycle counters: those sections print with
 * zero cycles (and so without their means, as sdiag does before the first
 * cycle) and no RPC lines. "Data since" is the controller's start
 * (BOOT_TIME of config.info); the job counters are counted from the jobs the
 * controller still holds (job.info): submitted = all, started = those with a
 * start time, completed/canceled/failed by state; pending and running now.
 * Options as sdiag 22.05.8: -a, -i, -t, -T (accepted: there is nothing to
 * sort), -r (says "Reset scheduling statistics"; nothing to reset), -M, -V,
 * --help, --usage; a bad option gives getopt's message, the hint, exit 1.
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Job counters over the controller's job records. */
typedef struct sdiag_jobs {
    long submitted, started, completed, canceled, failed, pending, running;
} sdiag_jobs_t;

static const char *sdiag_state(const json_t *job)
{
    const json_t *st = json_object_get(job, "state");
    if (json_is_array(st))
        st = json_array_get(st, 0);
    return json_string_value(st) ? json_string_value(st) : "";
}

static void sdiag_count(const json_t *jobs, sdiag_jobs_t *n)
{
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j)
    {
        const char *s = sdiag_state(j);
        n->submitted++;
        n->started += loom_ji(j, "start_time", 0) > 0;
        n->completed += strcmp(s, "COMPLETED") == 0;
        n->canceled += strcmp(s, "CANCELLED") == 0;
        n->failed += strcmp(s, "FAILED") == 0 || strcmp(s, "NODE_FAIL") == 0 ||
                     strcmp(s, "BOOT_FAIL") == 0 || strcmp(s, "OUT_OF_MEMORY") == 0;
        n->pending += strcmp(s, "PENDING") == 0;
        n->running += strcmp(s, "RUNNING") == 0;
    }
}

/* "Sat Nov 21 22:36:07 2026 (1795300567)" */
static void sdiag_when(loom_sbuf_t *out, time_t t)
{
    char buf[64];
    struct tm tm;
    strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", localtime_r(&t, &tm));
    loom_sbuf_addf(out, "%s (%lld)\n", buf, (long long)t);
}

/* The controller's start, from config.info's BOOT_TIME ("2026-11-21T22:36:07"). */
static time_t sdiag_boot(loom_cli_t *cli, time_t now)
{
    json_t *reply = NULL;
    time_t t = now;
    if (loom_cli_call(cli, "config.info", NULL, &reply, NULL) == 0) {
        size_t i;
        const json_t *kv;
        json_array_foreach(json_object_get(reply, "config"), i, kv)
        {
            const char *k = json_string_value(json_array_get(kv, 0));
            const char *v = json_string_value(json_array_get(kv, 1));
            struct tm tm = {0};
            if (k && v && strcmp(k, "BOOT_TIME") == 0 && strptime(v, "%Y-%m-%dT%H:%M:%S", &tm)) {
                tm.tm_isdst = -1;
                t = mktime(&tm);
            }
        }
    }
    json_decref(reply);
    return t;
}

static void sdiag_print(loom_sbuf_t *out, time_t now, time_t since, const sdiag_jobs_t *n)
{
    static const char stars[] = "*******************************************************\n";
    loom_sbuf_add(out, stars);
    loom_sbuf_add(out, "sdiag output at ");
    sdiag_when(out, now);
    loom_sbuf_add(out, "Data since      ");
    sdiag_when(out, since);
    loom_sbuf_add(out, stars);
    loom_sbuf_add(out, "Server thread count:  1\nAgent queue size:     0\nAgent count:          0\n"
                       "Agent thread count:   0\nDBD Agent queue size: 0\n\n");
    loom_sbuf_addf(out,
                   "Jobs submitted: %ld\nJobs started:   %ld\nJobs completed: %ld\n"
                   "Jobs canceled:  %ld\nJobs failed:    %ld\n\nJob states ts:  ",
                   n->submitted, n->started, n->completed, n->canceled, n->failed);
    sdiag_when(out, now);
    loom_sbuf_addf(out, "Jobs pending:   %ld\nJobs running:   %ld\n\n", n->pending, n->running);
    loom_sbuf_addf(
        out,
        "Main schedule statistics (microseconds):\n\tLast cycle:   0\n\tMax cycle:    0\n"
        "\tTotal cycles: 0\n\tLast queue length: %ld\n\n",
        n->pending);
    loom_sbuf_add(out, "Backfilling stats\n\tTotal backfilled jobs (since last slurm start): 0\n"
                       "\tTotal backfilled jobs (since last stats cycle start): 0\n"
                       "\tTotal backfilled heterogeneous job components: 0\n\tTotal cycles: 0\n"
                       "\tLast cycle when: ");
    sdiag_when(out, 0);
    loom_sbuf_add(out, "\tLast cycle: 0\n\tMax cycle:  0\n\tLast depth cycle: 0\n"
                       "\tLast depth cycle (try sched): 0\n\tLast queue length: 0\n"
                       "\tLast table size: 0\n\n");
    loom_sbuf_add(out, "Latency for 1000 calls to gettimeofday(): 0 microseconds\n\n"
                       "Remote Procedure Call statistics by message type\n\n"
                       "Remote Procedure Call statistics by user\n\n"
                       "Pending RPC statistics\n\tNo pending RPCs\n");
}

static int sdiag_run(loom_cli_t *cli)
{
    time_t now = time(NULL);
    json_t *reply = NULL;
    loom_err_t err = {0};
    if (loom_cli_call(cli, "job.info", NULL, &reply, &err) < 0) {
        loom_cli_error(cli, "slurm_get_statistics: %s", err.msg);
        json_decref(reply);
        return cli->exit_error;
    }
    sdiag_jobs_t n = {0};
    sdiag_count(json_object_get(reply, "jobs"), &n);
    json_decref(reply);
    loom_sbuf_t out = LOOM_SBUF_INIT;
    sdiag_print(&out, now, sdiag_boot(cli, now), &n);
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    return 0;
}

static void sdiag_help(void)
{
    printf("Usage: sdiag [OPTIONS]\n"
           "  -a, --all           all statistics\n"
           "  -r, --reset         reset statistics\n"
           "  -M, --cluster       direct the request to a specific cluster\n"
           "  -i, --sort-by-id    sort RPCs by id\n"
           "  -t, --sort-by-time  sort RPCs by total run time\n"
           "  -T, --sort-by-time2 sort RPCs by average run time\n"
           "  -V, --version       display current version number\n"
           "\nHelp options:\n"
           "  --help          show this help message\n"
           "  --usage         display brief usage message\n");
}

enum { OPT_HELP = 0x100, OPT_USAGE };

static const struct option sdiag_longopts[] = {
    {"all", no_argument, NULL, 'a'},
    {"reset", no_argument, NULL, 'r'},
    {"cluster", required_argument, NULL, 'M'},
    {"clusters", required_argument, NULL, 'M'},
    {"sort-by-id", no_argument, NULL, 'i'},
    {"sort-by-time", no_argument, NULL, 't'},
    {"sort-by-time2", no_argument, NULL, 'T'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, OPT_HELP},
    {"usage", no_argument, NULL, OPT_USAGE},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    loom_cli_t cli;
    loom_cli_init(&cli, "sdiag");
    argv[0] = "sdiag"; /* getopt's messages say "sdiag: ", as Slurm's */
    bool reset = false;
    int c, status = -1;
    while (status < 0 && (c = getopt_long(argc, argv, "aM:irtTV", sdiag_longopts, NULL)) != -1) {
        if (c == 'r') {
            reset = true;
        } else if (c == 'V') {
            loom_cli_version();
            status = 0;
        } else if (c == OPT_HELP) {
            sdiag_help();
            status = 0;
        } else if (c == OPT_USAGE) {
            printf("Usage: sdiag [-M cluster] [-aritT]\n");
            status = 0;
        } else if (c == '?') {
            fprintf(stderr, "Try \"sdiag --help\" for more information\n");
            status = 1;
        }
    }
    if (status < 0 && reset) {
        printf("Reset scheduling statistics\n");
        status = 0;
    }
    if (status < 0)
        status = sdiag_run(&cli);
    loom_cli_fini(&cli);
    return status;
}

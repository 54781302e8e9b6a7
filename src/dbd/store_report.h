/*
 * store_report.h - what sreport reads from loomdbd's store: the cluster's
 * capacity records and the usage of jobs over a time window
 * (docs/proto/messages.md §6.1, §6.3; Slurm 22.05's sreport).
 *
 * Capacity records (table cluster_tres, schema migration 3): the cluster's
 * configured TRES and the part of them on DOWN/DRAINED nodes, each holding
 * from its time until the next record of its cluster. Upserted on (cluster,
 * time): a record delivered twice is stored once.
 *
 * Reports are computed from the job rows directly (no rollup tables). The
 * scan is bounded by indexes (migrations 3 and 4), so its cost follows the
 * jobs near the window, not the size of the table: ended jobs that started
 * between (start - the longest run) and (end + the longest eligible wait),
 * jobs that never started and ended after the window's start or not at all,
 * and running jobs; the longest run and wait are one probe each of an
 * expression index. Times are TRES-seconds over [start, end):
 * Allocated = the jobs' TRES × run time inside the window (a running job up
 * to `now`); Reported and Down = the capacity records integrated over the
 * window; Planned = the CPUs × eligible-wait time of jobs inside the window;
 * PlannedDown is 0 (no maintenance reservations yet); Idle = Reported − the
 * others. As slurmdbd's hourly rollup does, the sums are kept per hour and
 * split hour by hour: Allocated at most what was up, Planned at most what
 * was idle in that hour (the rest is OverCommitted).
 *
 * Entry points: loom_store_ctres_put, loom_store_report_cluster,
 * loom_store_report_users; pure parts (unit-tested): loom_report_tres_parse,
 * loom_report_overlap, loom_report_finish.
 */
#ifndef LOOM_DBD_STORE_REPORT_H
#define LOOM_DBD_STORE_REPORT_H

#include "common/err.h"
#include "dbd/store.h"

#include <jansson.h>
#include <stdint.h>

/* Store one capacity record ({time, tres, down_tres}) for cluster. */
int loom_store_ctres_put(loom_store_t *st, const char *cluster, const json_t *rec, loom_err_t *err);

typedef struct loom_store_repq {
    const char *cluster;  /* NULL: every cluster */
    const char *users;    /* comma list, NULL: all */
    const char *accounts; /* comma list, NULL: all */
    int64_t start, end;   /* the window [start, end), epoch seconds */
    int64_t now;          /* running jobs count up to now */
} loom_store_repq_t;

/* Cluster utilization: {"clusters": [{"name", "tres": [{"name", "count",
 * "alloc", "down", "pdown", "idle", "planned", "over", "reported"}]}]}, one
 * entry per cluster with capacity inside the window, TRES by name. */
int loom_store_report_cluster(loom_store_t *st, const loom_store_repq_t *q, json_t **out,
                              loom_err_t *err);

/* Usage by user and account: {"usage": [{"cluster", "user", "account",
 * "tres": {name: seconds}}]} over the jobs that ran inside the window. */
int loom_store_report_users(loom_store_t *st, const loom_store_repq_t *q, json_t **out,
                            loom_err_t *err);

/* ---- pure parts ---- */

/* Seconds of [a0, a1) inside [s, e) (0 when disjoint or a1 <= a0). */
int64_t loom_report_overlap(int64_t a0, int64_t a1, int64_t s, int64_t e);

/* Parse "cpu=2,mem=4G,node=1,gres/gpu=1" into obj {name: count} (memory in
 * MiB; K, M, G, T suffixes), adding each count × mult to what obj holds.
 * Items without '=' or with a bad number are skipped. */
void loom_report_tres_parse(const char *text, int64_t mult, json_t *obj);

/* The utilization of one TRES from its raw sums: clamps Allocated to
 * Reported − Down − PlannedDown, caps Planned at what is left idle (the rest
 * is OverCommitted) and sets Idle. */
typedef struct loom_report_util {
    int64_t reported, alloc, down, pdown, planned, over, idle;
} loom_report_util_t;
void loom_report_finish(loom_report_util_t *u);

#endif

/*
 * stepd_usage.h - usage gathering in loomstepd: the figures of one step on
 * this node (the batch script's, or an srun step's tasks), as Slurm's
 * jobacct_gather plugins measure them (docs/proto/messages.md §4 step.done,
 * §5 stepd.usage / stepd.done, §6.1; common/usage.h for the semantics).
 *
 * Sources, best first:
 *  - the kernel's rusage of every child the supervisor reaps (wait4): exact
 *    user and system CPU of a task and of all the descendants it waited
 *    for, and the largest RSS any of them reached;
 *  - samples every JobAcctGatherFrequency seconds (task=N; 0: no periodic
 *    samples), and on demand for sstat: /proc/PID/stat, status (VmRSS,
 *    VmHWM) and io (rchar, wchar) of each process the owner callback gives
 *    to a task; a task's RSS and VMSize are the sums over its processes;
 *  - with JobAcctGatherType=jobacct_gather/cgroup and a cgroup directory
 *    (cgroup.h), that cgroup's memory peak, CPU and I/O counters (v2:
 *    memory.peak, cpu.stat, io.stat; v1: memory.max_usage_in_bytes,
 *    cpuacct.usage_user/usage_sys, blkio.throttle.io_service_bytes) for a
 *    single-task step, where they exceed the /proc figures;
 *  - GPUs: gpu_time = GPUs × elapsed seconds; utilisation through NVML
 *    (libnvidia-ml.so.1 by dlopen, when present) averaged over samples.
 * With jobacct_gather/none there are no periodic samples; rusage and sstat's
 * samples still feed the figures.
 *
 * Configuration: spec.node.acct_gather = {"type": JobAcctGatherType,
 * "freq": seconds} (written by loomd).
 *
 * Life: create (after the tasks start: loom_gather_start), sample on its
 * timer, loom_gather_reaped for every reaped child, loom_gather_summary at
 * any time (final: stops sampling), loom_gather_destroy before the loop's
 * handles are closed (it closes its own timer and frees itself then).
 */
#ifndef LOOM_NODED_STEPD_USAGE_H
#define LOOM_NODED_STEPD_USAGE_H

#include "common/procstat.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <uv.h>

typedef struct loom_gather loom_gather_t;

/* The task (index) a process belongs to, or -1. */
typedef int loom_gather_owner_f(void *arg, const loom_procstat_t *p);

typedef struct loom_gather_opts {
    const json_t *node; /* spec.node: acct_gather */
    const char *node_name;
    uint32_t ntasks;
    const uint32_t *ranks; /* global ranks (NULL: 0..ntasks-1) */
    const uint32_t *gpus;  /* device indexes */
    uint32_t ngpus;
    const char *cgroup_dir; /* NULL: none */
    loom_gather_owner_f *owner;
    void *arg;
} loom_gather_opts_t;

loom_gather_t *loom_gather_create(uv_loop_t *loop, const loom_gather_opts_t *o);
/* Start the clock (elapsed GPU time) and the sampling timer. */
void loom_gather_start(loom_gather_t *g);
/* Take one sample now. */
void loom_gather_sample(loom_gather_t *g);
/* A reaped child's rusage: task index, or -1 (an orphan: counted in task 0). */
void loom_gather_reaped(loom_gather_t *g, int task, const struct rusage *ru);
/* The node's figures (common/usage.h's node summary); final stops sampling
 * and fixes the end time. */
json_t *loom_gather_summary(loom_gather_t *g, bool final);
/* Accepts NULL. */
void loom_gather_destroy(loom_gather_t *g);

/* Read and parse /proc/<pid>/stat (for owner callbacks that walk parents). */
int loom_gather_proc(int pid, loom_procstat_t *out);

#endif

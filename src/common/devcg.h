/*
 * devcg.h - confining a job step to its GPUs: the cgroup v1 devices
 * controller, or an eBPF device filter on cgroup v2 (issue 5: per-step GPU
 * confinement; Slurm's ConstrainDevices).
 *
 * Two parts:
 *  - the rules (pure): loom_devcg_rules() turns the node's GPUs (index, the
 *    kind and numbers of its device file) and the step's GPU indexes into
 *    the "c MAJ:MIN rwm" lines to write to devices.deny: every GPU device of
 *    the node the step does not have, once each, never one that an allowed
 *    GPU uses too; GPUs whose file is not a device (emulated GPUs are plain
 *    files) give no rule. loom_devcg_stat() fills a GPU's kind and numbers.
 *  - the enforcement, as root: loom_devcg_confine() makes the step's cgroup,
 *    denies it the rules' devices and moves a process into it (the step's
 *    supervisor, before it forks the tasks, so they inherit it). What root
 *    is decides how:
 *      v1, root/devices.deny writable (root: /sys/fs/cgroup/devices):
 *        root/loom/<node>/step_<job>.<step>, the rules written to its
 *        devices.deny;
 *      v2, root/cgroup.controllers exists (root: the job's own cgroup):
 *        root/step_<job>.<step>, with an eBPF program denying the rules'
 *        devices attached to it (devcg_bpf.h);
 *    loom_devcg_release() moves the caller back (v1: to the hierarchy's
 *    root; v2: to the job's cgroup) and removes the step's cgroup.
 *    -ENOTSUP when not root or root is neither; the caller then runs the
 *    step unconfined.
 * Entry points: loom_devcg_stat, loom_devcg_rules, loom_devcg_confine,
 * loom_devcg_release.
 */
#ifndef LOOM_COMMON_DEVCG_H
#define LOOM_COMMON_DEVCG_H

#include "common/err.h"
#include "common/strv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One GPU of the node. */
typedef struct loom_devcg_gpu {
    uint32_t index; /* the GPU's device index (gres.conf order) */
    char kind;      /* 'c' or 'b' for a device file, 0 for anything else */
    unsigned major, minor;
} loom_devcg_gpu_t;

/* Fill g's kind and numbers from its device file (kind 0 when the file is
 * not a device or cannot be read). */
void loom_devcg_stat(const char *file, loom_devcg_gpu_t *g);

/* Append to deny the rules that leave the step only the GPUs in allowed;
 * returns how many were added. */
size_t loom_devcg_rules(const loom_devcg_gpu_t *gpus, size_t n, const uint32_t *allowed,
                        size_t nallowed, loom_strv_t *deny);

typedef struct loom_devcg loom_devcg_t;

/* Create the step's cgroup under root (NULL: /sys/fs/cgroup/devices; a
 * cgroup v2 directory: the job's cgroup), deny the rules and move pid into
 * it (pid 0: nobody; each task then joins with loom_devcg_attach). On
 * failure nothing is left behind. */
int loom_devcg_confine(const char *root, const char *node, uint32_t job_id, uint32_t step_id,
                       const loom_strv_t *deny, pid_t pid, loom_devcg_t **out, loom_err_t *err);
/* Move pid into the step's cgroup (a task, between fork and exec). */
int loom_devcg_attach(const loom_devcg_t *cg, pid_t pid);
/* A cgroup v2 step cgroup (a child of the job's), not a v1 devices one? */
bool loom_devcg_is_v2(const loom_devcg_t *cg);
/* Move the calling process back to the root (v2: the job's cgroup) when
 * loom_devcg_confine moved it in, and remove the step's cgroup (kept when
 * processes are still in it). Accepts NULL. */
void loom_devcg_release(loom_devcg_t *cg);

#endif

/*
 * cgroup.h - one cgroup per job: tracking (kill every process of the job)
 * and, with TaskPlugin=task/cgroup and cgroup.conf's Constrain* keys, its
 * CPUs and memory (DESIGN.md §Job execution; cgconf.h).
 *
 * cgroup v2 (the root, CgroupMountpoint, is a cgroup2 mount):
 *   <root>/loom.slice/<node>/job_<id> (<node>: the node's name, "_" and a
 *   hash of its spool dir, as loom_cgroup_for_job names it); the cpuset and memory controllers are
 *   enabled on the way down when the kernel offers them (a controller that
 *   cannot be enabled is skipped, not fatal). The job's steps run in child
 *   cgroups (step_<job>.<step>, devcg.h) without controllers of their own,
 *   so the job's limits hold for them too.
 * cgroup v1 (what the host has instead, e.g. a hybrid or legacy layout):
 *   <root>/memory/loom/<node>/job_<id> tracks the job (and holds
 *   memory.limit_in_bytes, memory.memsw.limit_in_bytes when swap is
 *   constrained); <root>/cpuset/loom/<node>/job_<id> holds the cpuset, made
 *   only when cores are constrained (each level copies its parent's cpus and
 *   mems first, as v1 requires).
 * CgroupPlugin=cgroup/v1 or cgroup/v2 insists on that version; autodetect
 * takes v2 when the root is a cgroup2 mount, else v1.
 *
 * loom_cgroup_create() fails with -ENOTSUP when the host has no usable
 * hierarchy (not root, no cgroups, read-only): the caller logs it and runs
 * the job unconfined. It is idempotent: a step's supervisor calls it with no
 * limits to join the cgroup its job's supervisor made (or to make it first).
 * With JobAcctGatherType=jobacct_gather/cgroup the job's usage is also read
 * from the cgroup's accounting files (stepd_usage.c).
 */
#ifndef LOOM_NODED_CGROUP_H
#define LOOM_NODED_CGROUP_H

#include "common/devcg.h"
#include "common/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct loom_cgroup loom_cgroup_t;

typedef struct loom_cgroup_spec {
    const char *root;   /* CgroupMountpoint; NULL: /sys/fs/cgroup */
    const char *plugin; /* "cgroup/v1", "cgroup/v2", or NULL/"autodetect" */
    const char *node;
    uint32_t job_id;
    const char *cpus; /* the cpuset ("0-3,8") when cores are constrained, else NULL */
    uint64_t mem_mib; /* the memory limit, 0: none */
    bool limit_swap;  /* ConstrainSwapSpace: memory+swap at most mem_mib + swap_mib */
    uint64_t swap_mib;
} loom_cgroup_spec_t;

int loom_cgroup_create(const loom_cgroup_spec_t *spec, loom_cgroup_t **out, loom_err_t *err);
/* The job's cgroup as the node section of a supervisor's spec asks (its
 * "cgroup": cgconf.h, "real_memory", "name"): cpus and alloc_mib are the
 * job's on this node (NULL, 0 for a step joining its job's cgroup).
 * -ENOTSUP also when the configuration wants no cgroup (ProctrackType). */
int loom_cgroup_for_job(const json_t *node, uint32_t job_id, const char *cpus, uint64_t alloc_mib,
                        loom_cgroup_t **out, loom_err_t *err);
/* With TaskPlugin=task/cgroup and ConstrainDevices=yes, as root: the
 * devices cgroup (devcg.h) that leaves only the GPUs allowed (device
 * indexes) of the node's "gpu_files": under v1 in the devices hierarchy
 * (<root>/devices/loom/<node level>/step_<job>.<step>), under v2 a child of
 * job_cg with an eBPF device filter. Nobody is moved in: each process joins
 * with loom_devcg_attach. -ENOTSUP when not configured or not possible. */
int loom_cgroup_confine_gpus(const json_t *node, const loom_cgroup_t *job_cg, uint32_t job_id,
                             uint32_t step_id, const uint32_t *allowed, size_t nallowed,
                             loom_devcg_t **out, loom_err_t *err);
/* The node's level in the paths: its name, "_" and a hash of its spool. */
void loom_cgroup_node_level(const json_t *node, char *buf, size_t size);
/* Move pid into the job's cgroup(s). */
int loom_cgroup_attach(loom_cgroup_t *cg, pid_t pid);
/* SIGKILL every process in the cgroup (cgroup.kill, or one by one). */
void loom_cgroup_kill(loom_cgroup_t *cg);
/* How many times the kernel's OOM killer acted in this cgroup. */
int loom_cgroup_oom_kills(const loom_cgroup_t *cg);
/* The cgroup's directory (v1: the memory one): usage gathering reads it. */
const char *loom_cgroup_path(const loom_cgroup_t *cg);
/* 2 or 1. */
int loom_cgroup_version(const loom_cgroup_t *cg);
/* Free without removing anything (a step leaves its job's cgroup). Accepts NULL. */
void loom_cgroup_forget(loom_cgroup_t *cg);
/* Remove the cgroup (waiting briefly for it to empty) and free. Accepts NULL. */
void loom_cgroup_destroy(loom_cgroup_t *cg);

#endif

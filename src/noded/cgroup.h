/*
 * cgroup.h - one cgroup v2 per job: CPUs, memory, and killing every process
 * of the job (DESIGN.md §Job execution).
 *
 * Layout: <root>/loom.slice/<node>/job_<id>, where root is /sys/fs/cgroup
 * when that is a writable cgroup2 mount (the node level keeps several
 * emulated nodes of one host apart). The cpuset and memory controllers are
 * enabled on the way down when the kernel offers them; a controller that
 * cannot be enabled is skipped, not fatal.
 *
 * loom_cgroup_create() fails with -ENOTSUP when the host has no usable
 * cgroup2 (not root, cgroup v1, read-only mount): the caller logs a warning
 * and runs the job unconfined. Device confinement under cgroup2 needs an
 * eBPF program and is not done yet. With JobAcctGatherType=
 * jobacct_gather/cgroup the job's usage is also read from the cgroup's
 * memory.peak, cpu.stat and io.stat (stepd_usage.c; procstat.h parses them).
 */
#ifndef LOOM_NODED_CGROUP_H
#define LOOM_NODED_CGROUP_H

#include "common/err.h"

#include <stdint.h>
#include <sys/types.h>

typedef struct loom_cgroup loom_cgroup_t;

/* cpus: a cpuset list ("0-3,8") or NULL; mem_mib 0: no memory limit. */
int loom_cgroup_create(const char *node, uint32_t job_id, const char *cpus, uint64_t mem_mib,
                       loom_cgroup_t **out, loom_err_t *err);
/* Move pid into the job's cgroup. */
int loom_cgroup_attach(loom_cgroup_t *cg, pid_t pid);
/* SIGKILL every process in the cgroup (cgroup.kill, or one by one). */
void loom_cgroup_kill(loom_cgroup_t *cg);
/* Did the kernel's OOM killer act in this cgroup? */
int loom_cgroup_oom_kills(const loom_cgroup_t *cg);
/* The cgroup's directory (usage gathering reads its accounting files). */
const char *loom_cgroup_path(const loom_cgroup_t *cg);
/* Remove the cgroup (waiting briefly for it to empty) and free. Accepts NULL. */
void loom_cgroup_destroy(loom_cgroup_t *cg);

#endif

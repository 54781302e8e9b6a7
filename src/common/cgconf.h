/*
 * cgconf.h - cgroup.conf: how job cgroups confine CPUs, memory and devices
 * (CLI_SPEC §13: "task/cgroup (cgroup.conf: ConstrainCores/RAMSpace/Devices)").
 *
 * As in Slurm 22.05 the file sits beside slurm.conf and is optional (no file:
 * the defaults). Syntax: the slurm.conf lexer (conflex.h). Keys (any case):
 *   CgroupMountpoint   the cgroup file system's root (default /sys/fs/cgroup)
 *   CgroupPlugin       autodetect (default), cgroup/v1, cgroup/v2
 *   ConstrainCores     yes/no (default no): the job's cpuset is its CPUs
 *   ConstrainRAMSpace  yes/no (default no): a memory limit (see below)
 *   ConstrainSwapSpace yes/no (default no): a memory+swap limit
 *   ConstrainDevices   yes/no (default no): only the job's/step's GPUs
 *   AllowedRAMSpace    percent of the allocated memory (default 100)
 *   AllowedSwapSpace   percent of the allocated memory, on top (default 0)
 *   MaxRAMPercent      percent of the node's RealMemory, a cap (default 100)
 *   MinRAMSpace        MiB, a floor (default 30)
 * Also accepted and ignored (Slurm has them, some deprecated): CgroupAutomount,
 * CgroupReleaseAgentDir, ConstrainKmemSpace, AllowedKmemSpace, MaxKmemPercent,
 * MinKmemSpace, MaxSwapPercent, MemorySwappiness, TaskAffinity,
 * IgnoreSystemd, IgnoreSystemdOnFailure, EnableControllers.
 * Errors are "file:line: message"; an unknown key or a bad value is an error.
 *
 * Confinement happens only when slurm.conf's TaskPlugin includes task/cgroup
 * (loom_cgconf_task_cgroup), as in Slurm; the job's processes are tracked in
 * a cgroup in any case where the host has one (ProctrackType=proctrack/cgroup).
 *
 * Entry points: loom_cgconf_init, loom_cgconf_load, loom_cgconf_parse,
 * loom_cgconf_free, loom_cgconf_to_json / loom_cgconf_from_json (the node
 * daemon hands it to each job supervisor), loom_cgconf_ram_limit,
 * loom_cgconf_task_cgroup.
 */
#ifndef LOOM_COMMON_CGCONF_H
#define LOOM_COMMON_CGCONF_H

#include "common/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct loom_cgconf {
    char *mountpoint;
    char *plugin;     /* "autodetect", "cgroup/v1" or "cgroup/v2" */
    bool task_cgroup; /* TaskPlugin has task/cgroup: the Constrain* keys apply */
    bool track;       /* ProctrackType=proctrack/cgroup: each job in a cgroup */
    bool constrain_cores, constrain_ram, constrain_swap, constrain_devices;
    double allowed_ram, allowed_swap, max_ram_percent; /* percents */
    uint64_t min_ram_mib;
} loom_cgconf_t;

void loom_cgconf_init(loom_cgconf_t *c);
void loom_cgconf_free(loom_cgconf_t *c);

/* Parse text (name for messages) into c (initialised by the caller). */
int loom_cgconf_parse(const char *name, const char *text, size_t len, loom_cgconf_t *c,
                      loom_err_t *err);

/* Load path into c (initialised): a missing file leaves the defaults (0). */
int loom_cgconf_load(const char *path, loom_cgconf_t *c, loom_err_t *err);

/* Does a TaskPlugin value ("task/affinity,task/cgroup") include task/cgroup? */
bool loom_cgconf_task_cgroup(const char *task_plugin);

json_t *loom_cgconf_to_json(const loom_cgconf_t *c);
/* Fill c (initialised) from j; members missing from j keep their defaults. */
void loom_cgconf_from_json(const json_t *j, loom_cgconf_t *c);

/* The memory limit in MiB for alloc_mib allocated on a node of real_mib
 * (0 when RAM is not constrained or nothing was allocated). */
uint64_t loom_cgconf_ram_limit(const loom_cgconf_t *c, uint64_t alloc_mib, uint64_t real_mib);

#endif

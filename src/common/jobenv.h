/*
 * jobenv.h - the environment given to jobs and steps (CLI_SPEC §12).
 *
 * Entry points:
 *  - loom_jobenv_export(): the --export rules (ALL, NONE, NIL, [ALL,]VAR[=val],...)
 *    applied to a submit-time environment; SLURM_* always pass. "NONE,VAR=x"
 *    is accepted as Slurm 22.05 does (Slurm then also loads the user's login
 *    environment, --get-user-env; Loom does not). loom_jobenv_export_split()
 *    splits such a list at commas outside quotes (sbatch uses it too).
 *  - loom_jobenv_batch(): every batch variable (column B of §12) for a job on
 *    one node, written over an environment (usually the exported one).
 *  - loom_jobenv_step(): the task variables (column T) of one srun task.
 *  - loom_jobenv_alloc(): the allocation variables (column A) of salloc and
 *    of srun outside an allocation.
 *  - loom_jobenv_job_from_json(): fills loom_jobenv_job_t from a job record
 *    (docs/proto/messages.md §1, with `desc` and `env`).
 *  - loom_jobenv_counts() / loom_jobenv_layout(): Slurm's "4(x2),2" lists and
 *    the task-per-node layout behind SLURM_TASKS_PER_NODE.
 *  - loom_jobenv_get/set/setf/unset(): "NAME=value" vectors (loom_strv_t).
 *
 * Presence rules follow Slurm: SLURM_NTASKS only when -n was given or implied
 * (--ntasks-per-node), SLURM_CPUS_PER_TASK/NTASKS_PER_NODE/MEM_* only when
 * requested, array variables only for array tasks, SLURM_RESTART_COUNT only
 * after a requeue, GPU variables only when the node has GPUs for the job.
 * Pure functions: no I/O, no clock, no process state.
 */
#ifndef LOOM_JOBENV_H
#define LOOM_JOBENV_H

#include "common/err.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which vendor variables carry the GPU indexes (gres.conf Flags=*_gpu_env). */
enum {
    LOOM_JOBENV_GPU_CUDA = 1u << 0,   /* CUDA_VISIBLE_DEVICES (nvidia_gpu_env) */
    LOOM_JOBENV_GPU_ROCR = 1u << 1,   /* ROCR_VISIBLE_DEVICES (amd_gpu_env) */
    LOOM_JOBENV_GPU_OPENCL = 1u << 2, /* GPU_DEVICE_ORDINAL (opencl_env) */
    LOOM_JOBENV_GPU_ZE = 1u << 3,     /* ZE_AFFINITY_MASK (intel_gpu_env) */
    LOOM_JOBENV_GPU_NONE = 1u << 4,   /* no_gpu_env: none of them */
};
/* Slurm 22.05.8's default when gres.conf names no env flag: all four. */
#define LOOM_JOBENV_GPU_DEFAULT                                                                    \
    (LOOM_JOBENV_GPU_CUDA | LOOM_JOBENV_GPU_ROCR | LOOM_JOBENV_GPU_OPENCL | LOOM_JOBENV_GPU_ZE)

/* A job as the environment sees it. Strings are borrowed (NULL or "" = unset). */
typedef struct loom_jobenv_job {
    uint32_t job_id;
    uint32_t array_job_id;  /* 0: not an array task */
    uint32_t array_task_id; /* the following four only when array_job_id != 0 */
    uint32_t array_task_count, array_task_min, array_task_max, array_task_step;
    const char *name, *partition, *account, *qos, *reservation, *dependency;
    const char *nodelist;      /* compressed hostlist */
    uint32_t num_nodes;        /* entries of node_cpus */
    const uint32_t *node_cpus; /* CPUs allocated on each node, in nodelist order */
    uint32_t ntasks;           /* 0: neither given nor implied */
    uint32_t ntasks_per_node;  /* 0: not requested */
    uint32_t cpus_per_task;    /* 0: not requested */
    uint64_t mem_per_node;     /* MiB; 0: not set */
    uint64_t mem_per_cpu;      /* MiB; 0: not set */
    uint64_t mem_per_gpu;      /* MiB; 0: not requested */
    const char *gpus;          /* echo of -G/--gpus */
    const char *gpus_per_node; /* echo of --gpus-per-node */
    const char *gpus_per_task; /* echo of --gpus-per-task */
    uint32_t cpus_per_gpu;     /* 0: not requested */
    const char *submit_dir, *submit_host;
    uint32_t uid, gid;
    const char *user, *group;
    int64_t start_time, end_time; /* epoch; 0: unknown */
    uint32_t restart_cnt;
    const char *export_env; /* the --export value, NULL when not given */
    char echo[3][24];       /* storage for numeric echoes (from_json) */
} loom_jobenv_job_t;

/* The node the batch script runs on, and what it knows locally. */
typedef struct loom_jobenv_node {
    const char *name;     /* SLURMD_NODENAME, SLURM_TOPOLOGY_ADDR */
    uint32_t index;       /* index of this node in the job's nodelist */
    const char *hostname; /* HOSTNAME */
    const char *cluster;  /* SLURM_CLUSTER_NAME */
    const char *conf;     /* SLURM_CONF */
    const uint32_t *gpus; /* the job's GPU device indexes on this node */
    size_t ngpus;         /* 0: no GPU variables */
    unsigned gpu_env;     /* LOOM_JOBENV_GPU_*; 0 means the default */
    long task_pid;        /* SLURM_TASK_PID; <= 0 leaves it out */
} loom_jobenv_node_t;

/* A step (srun) and one of its tasks on this node. */
typedef struct loom_jobenv_step {
    uint32_t step_id;
    const char *nodelist; /* step nodes, compressed */
    uint32_t num_nodes;   /* entries of tasks_per_node */
    const uint32_t *tasks_per_node;
    uint32_t ntasks;
    uint32_t cpus_per_task;   /* 0: not requested */
    const uint32_t *gpus;     /* the step's GPU indexes on this node */
    size_t ngpus;             /* 0: leave the inherited GPU variables alone */
    unsigned gpu_env;         /* as in loom_jobenv_node_t */
    const char *comm_host;    /* SLURM_SRUN_COMM_HOST, SLURM_LAUNCH_NODE_IPADDR */
    int comm_port;            /* SLURM_SRUN_COMM_PORT, SLURM_STEP_LAUNCHER_PORT */
    const char *node_name;    /* SLURMD_NODENAME, SLURM_TOPOLOGY_ADDR */
    uint32_t node_id;         /* index of this node in the step */
    uint32_t first_task;      /* global rank of this node's first task */
    const uint32_t *gtids;    /* ranks of this node's tasks (cyclic); NULL: first_task.. */
    const char *distribution; /* SLURM_DISTRIBUTION; NULL: cyclic if ntasks <= nodes, else block */
    bool no_dist_default;     /* NULL distribution: no SLURM_DISTRIBUTION at all (srun's own
                                 allocation, as 22.05.8) */
    uint32_t cpus_on_node;    /* SLURM_CPUS_ON_NODE of the step; 0: leave it */
} loom_jobenv_step_t;

/* --- NAME=value vectors --- */
/* The value of name in env, or NULL. */
const char *loom_jobenv_get(const loom_strv_t *env, const char *name);
/* Set (replacing in place, or appending) name=value. */
void loom_jobenv_set(loom_strv_t *env, const char *name, const char *value);
void loom_jobenv_setf(loom_strv_t *env, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void loom_jobenv_unset(loom_strv_t *env, const char *name);

/* --- building blocks --- */
/* "4(x2),2" for {4,4,2}; appended to out. Nothing for n == 0. */
void loom_jobenv_counts(const uint32_t *v, size_t n, loom_sbuf_t *out);
/* Spread ntasks over n nodes (Slurm's block layout): round after round each
 * node takes one more task while it has CPUs left (cpus[i] / cpus_per_task,
 * at least 1), then round-robin past that. tasks[] gets n counts. */
void loom_jobenv_layout(const uint32_t *cpus, size_t n, uint32_t cpus_per_task, uint32_t ntasks,
                        uint32_t *tasks);
/* Which node each rank of a step runs on: node_of[r] for r < sum(tasks).
 * Block puts consecutive ranks on a node; cyclic deals ranks out one per
 * node per round (a node that has its count is skipped). */
void loom_jobenv_rank_nodes(const uint32_t *tasks, size_t n, bool cyclic, uint32_t *node_of);

/* The task count of a job that did not give -n: one per cpus_per_task CPUs. */
uint32_t loom_jobenv_default_ntasks(const uint32_t *cpus, size_t n, uint32_t cpus_per_task);

/* Split an --export list on commas outside quotes into out (empty items
 * dropped). Quotes stay in the items: X="a,b" is exported with its quotes,
 * as Slurm 22.05 does. */
void loom_jobenv_export_split(const char *spec, loom_strv_t *out);

/* Apply an --export value (NULL or "" = ALL) to src ("NAME=value" strings,
 * NULL-terminated; may be NULL) into out. On error out is untouched. */
int loom_jobenv_export(const char *spec, char *const *src, loom_strv_t *out, loom_err_t *err);

/* The batch variables, written over env. */
void loom_jobenv_batch(const loom_jobenv_job_t *job, const loom_jobenv_node_t *node,
                       loom_strv_t *env);
/* The task variables of the task with node-local rank local_id, written over
 * env (which holds the batch environment srun inherited). */
void loom_jobenv_step(const loom_jobenv_step_t *step, uint32_t local_id, long task_pid,
                      loom_strv_t *env);

/* The allocation variables of salloc's shell (column A of §12) and of the
 * environment srun passes to its tasks after creating an allocation: job
 * ids, name, nodes, CPUs and tasks per node, requested sizes, submit dir and
 * host, cluster, SLURM_CONF; written over env. */
void loom_jobenv_alloc(const loom_jobenv_job_t *job, const char *cluster, const char *conf,
                       loom_strv_t *env);
/* CUDA_VISIBLE_DEVICES and its vendor siblings (flags LOOM_JOBENV_GPU_*; 0:
 * the default) set to the n device indexes. */
void loom_jobenv_gpu_vars(loom_strv_t *env, const uint32_t *gpus, size_t n, unsigned flags);

/* Fill job from a job record (messages.md §1). Strings point into rec, which
 * must outlive job; node_cpus is allocated: release with loom_jobenv_job_free().
 * node is this node's name (its index in the allocation is stored in *index
 * when index is not NULL). */
int loom_jobenv_job_from_json(const json_t *rec, const char *node, loom_jobenv_job_t *job,
                              uint32_t *index, loom_err_t *err);
void loom_jobenv_job_free(loom_jobenv_job_t *job);

#endif

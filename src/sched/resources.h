/*
 * resources.h - the scheduling core's resource model and node selection.
 *
 * A pure library (no I/O, no clock, no globals): the caller describes the
 * nodes (CPUs by id, memory, GRES units, whether a node takes new work) and a
 * request (nodes, tasks, CPUs per task, memory, GRES per node, GPUs per job,
 * exclusivity, which nodes are allowed or required), and
 * loom_sched_try_place() picks nodes and the exact CPU ids, memory and GRES
 * device indices for each. Applying an allocation marks those resources used;
 * releasing it frees them. The node model never goes over its totals: apply
 * refuses an allocation that does not fit.
 *
 * Selection (consumable TRES, simplified; DESIGN.md §Scheduling):
 *  - best fit: among nodes that can host the request, the ones with the fewest
 *    free CPUs come first (then lower Weight, then lower index);
 *  - required nodes (--nodelist) are always part of the allocation;
 *  - CPUs are taken lowest id first; GRES devices lowest free index of the
 *    wanted type, so concurrent jobs on a node never share a GPU;
 *  - tasks are spread cyclically over the chosen nodes (2 nodes, 4 tasks: 2+2).
 *
 * Entry points: loom_sched_node_init/_fini, loom_sched_node_add_gres,
 * loom_sched_try_place, loom_sched_alloc_apply/_release/_fini.
 * Ownership: nodes own their CPU bitmap and GRES array; an alloc owns its
 * per-node arrays (loom_sched_alloc_fini frees them). Strings in requests and
 * nodes are borrowed from the caller and must outlive the call.
 */
#ifndef LOOM_SCHED_RESOURCES_H
#define LOOM_SCHED_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_SCHED_MAX_CPUS 4096 /* CPUs per node the bitmap can hold */

/* One GRES line of a node: a device (count 1, index >= 0) or a counted pool
 * (index -1, e.g. shards or licences). */
typedef struct loom_sched_gres {
    const char *name; /* "gpu" (borrowed) */
    const char *type; /* "a100" or NULL (borrowed) */
    int index;        /* device index, -1 for a counted pool */
    uint64_t count;   /* 1 for a device */
    uint64_t used;
} loom_sched_gres_t;

typedef struct loom_sched_node {
    const char *name; /* borrowed */
    uint32_t cpus;    /* total usable CPUs */
    uint32_t cpus_used;
    uint64_t *cpu_bits; /* bit i set: CPU i allocated; (cpus+63)/64 words */
    uint64_t mem_total; /* MiB */
    uint64_t mem_used;
    loom_sched_gres_t *gres;
    size_t ngres;
    uint32_t weight;
    uint32_t njobs; /* allocations on the node */
    bool exclusive; /* an exclusive allocation holds the node */
    bool usable;    /* state lets new work start (not DOWN/DRAIN/unregistered) */
} loom_sched_node_t;

/* GRES wanted on each allocated node ("--gres=gpu:a100:2"). */
typedef struct loom_sched_gres_req {
    const char *name;
    const char *type; /* NULL = any type */
    uint64_t count;
} loom_sched_gres_req_t;

typedef struct loom_sched_req {
    uint32_t min_nodes;                /* >= 1 */
    uint32_t max_nodes;                /* 0 = min_nodes */
    uint32_t ntasks;                   /* 0 = one per node (or ntasks_per_node * nodes) */
    uint32_t ntasks_per_node;          /* 0 = unset */
    uint32_t cpus_per_task;            /* 0 = 1 */
    uint32_t min_cpus;                 /* total CPUs wanted at least (0 = from tasks) */
    uint64_t mem_per_node;             /* MiB, 0 = unset */
    uint64_t mem_per_cpu;              /* MiB, 0 = unset */
    bool mem_whole_node;               /* --mem=0 or no memory default: all of each node */
    const loom_sched_gres_req_t *gres; /* per node */
    size_t ngres;
    const char *gpus_type; /* --gpus=[type:]N: per job */
    uint32_t gpus_per_job;
    bool exclusive;
    const bool *allowed;       /* per node index: partition, exclude, features; NULL = all */
    const uint32_t *req_nodes; /* node indices that must be used */
    size_t nreq_nodes;
} loom_sched_req_t;

/* What one node gives to an allocation. */
typedef struct loom_sched_gres_use {
    uint32_t gres; /* index into the node's gres array */
    uint64_t count;
} loom_sched_gres_use_t;

typedef struct loom_sched_node_alloc {
    uint32_t node; /* index into the node array */
    uint32_t ntasks;
    uint32_t ncpus;
    uint32_t *cpu_ids; /* ncpus ids, ascending */
    uint64_t mem;      /* MiB */
    loom_sched_gres_use_t *gres;
    size_t ngres;
} loom_sched_node_alloc_t;

typedef struct loom_sched_alloc {
    loom_sched_node_alloc_t *nodes; /* ascending node index */
    size_t nnodes;
    uint32_t ncpus;  /* sum over nodes */
    uint32_t ntasks; /* sum over nodes */
    bool exclusive;
} loom_sched_alloc_t;

/* try_place flags */
enum {
    /* Place as if every node were idle and usable: "could this ever run?"
     * (submit-time check; Slurm's "Requested node configuration is not available"). */
    LOOM_SCHED_IGNORE_USED = 1u << 0,
    /* Place as if nothing were allocated, on the nodes that take work now:
     * "could it run here once running jobs end?" */
    LOOM_SCHED_IGNORE_ALLOC = 1u << 1,
};

/* Set up a node with cpus CPUs and mem_total MiB, usable, nothing allocated. */
void loom_sched_node_init(loom_sched_node_t *n, const char *name, uint32_t cpus,
                          uint64_t mem_total);
/* Free what the node owns. Accepts NULL. */
void loom_sched_node_fini(loom_sched_node_t *n);
/* Append a GRES line (device when index >= 0, then count must be 1). */
void loom_sched_node_add_gres(loom_sched_node_t *n, const char *name, const char *type, int index,
                              uint64_t count);
/* True when CPU id is allocated. */
bool loom_sched_node_cpu_used(const loom_sched_node_t *n, uint32_t id);

/* Choose nodes and resources for req. 0 and *out filled (caller finis it), or
 * -ENOSPC when it does not fit now, -EINVAL for a request that makes no sense
 * (no nodes, max < min). *out untouched on failure. Does not modify nodes. */
int loom_sched_try_place(const loom_sched_node_t *nodes, size_t nnodes, const loom_sched_req_t *req,
                         unsigned flags, loom_sched_alloc_t *out);

/* Mark an allocation's resources used. -ENOSPC (and nothing changed) when any
 * part is already taken or over a total. */
int loom_sched_alloc_apply(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a);
/* Give an applied allocation's resources back. */
void loom_sched_alloc_release(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a);
/* Free the arrays of an allocation (not the struct itself). Accepts NULL. */
void loom_sched_alloc_fini(loom_sched_alloc_t *a);
/* Deep copy. */
void loom_sched_alloc_copy(loom_sched_alloc_t *dst, const loom_sched_alloc_t *src);

#endif

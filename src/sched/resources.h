/*
 * resources.h - the scheduling core's resource model and node selection
 * (Slurm's select/cons_tres semantics; DESIGN.md §Scheduling; CLI_SPEC §1, §13).
 *
 * A pure library (no I/O, no clock, no globals): the caller describes the
 * nodes (topology, CPUs by id, memory, features, GRES units with device
 * indices and the CPUs local to each device, whether a node takes new work)
 * and a request, and loom_sched_try_place() picks nodes and the exact CPU
 * ids, memory and GRES device indices for each. Applying an allocation marks
 * those resources used; releasing it frees them. The node model never goes
 * over its totals: apply refuses an allocation that does not fit.
 *
 * Requests (sbatch/srun options): -N min[-max], -n, --ntasks-per-node, -c,
 * --mem / --mem-per-cpu / --mem-per-gpu (0: whole node), --gres (per node),
 * --gpus (per job), --gpus-per-node (a per-node GRES), --gpus-per-task,
 * --cpus-per-gpu, -C with counts and brackets, --nodelist (required nodes),
 * --exclude and partition membership (the allowed mask), --exclusive,
 * --contiguous, and OverSubscribe (CPUs shared by up to share_max jobs).
 *
 * Selection:
 *  - best fit: among nodes that can host the request, lowest Weight first,
 *    then the fewest free GPUs, then the fewest free CPUs, then the lowest
 *    index, so that whole nodes and whole GPU sets stay free for large jobs
 *    (a CPU-only job goes to a node without free GPUs when it can);
 *  - required nodes (--nodelist) are always part of the allocation;
 *  - -C "[a|b]" (matching OR) places every node on the same one feature (the
 *    first alternative that fits); "[a*2&b*4]" and "a*2" pick that many
 *    nodes with each counted term first;
 *  - --contiguous: consecutive node indices (slurm.conf order), the
 *    shortest run that fits;
 *  - CPUs: the lowest free ids, preferring those local to the GPUs taken;
 *    with whole_cores (CR_Core and ThreadsPerCore > 1) every core is taken
 *    whole, so CPU counts round up to a multiple of the threads per core;
 *    with whole sockets (CR_Socket) every socket is, so they round up to a
 *    multiple of cores x threads per socket (a -n1 job holds a socket);
 *  - GPUs: a request of k devices prefers one affinity set (devices with the
 *    same Cores=) that holds at least k free ones, the fullest such set first
 *    (best fit again); devices are otherwise taken lowest index first, so
 *    concurrent jobs on a node never share a device;
 *  - tasks fill the chosen nodes in order, each as full as it can be while
 *    every later node keeps one (2 four-CPU nodes, 4 tasks: 3+1), as
 *    cons_tres allocates CPUs; an exclusive job's go round the nodes (2+2).
 *
 * Options for planners (loom_sched_place_opts_t): a subset of nodes to look
 * at (the pass passes the nodes with free CPUs), and a per-node limit
 * callback (backfill: what may be used without touching a reservation).
 *
 * Entry points: loom_sched_node_init/_fini, loom_sched_node_add_gres,
 * loom_sched_node_set_gres_cpus, loom_sched_node_set_topology,
 * loom_sched_node_set_whole_sockets,
 * loom_sched_try_place, loom_sched_try_place_ex, loom_sched_alloc_apply,
 * _release, _fini, _copy, loom_sched_node_gpus_free.
 * Ownership: nodes own their CPU bitmaps and GRES array; an alloc owns its
 * per-node arrays (loom_sched_alloc_fini frees them). Strings (names, types,
 * features) and the constraint in requests and nodes are borrowed from the
 * caller and must outlive the call.
 */
#ifndef LOOM_SCHED_RESOURCES_H
#define LOOM_SCHED_RESOURCES_H

#include "common/constraint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_SCHED_MAX_CPUS 4096 /* CPUs per node the bitmap can hold */
#define LOOM_SCHED_MAX_GROUPS                                                                      \
    16 /* distinct GRES name:type pairs per node (more share the last)                             \
        */

/* One GRES line of a node: a device (count 1, index >= 0) or a counted pool
 * (index -1, e.g. shards or licences). */
typedef struct loom_sched_gres {
    const char *name; /* "gpu" (borrowed) */
    const char *type; /* "a100" or NULL (borrowed) */
    int index;        /* device index, -1 for a counted pool */
    uint64_t count;   /* 1 for a device */
    uint64_t used;
    uint32_t group;     /* lines with the same name:type share a group */
    uint64_t *cpu_mask; /* CPUs local to the device (gres.conf Cores=); NULL = any */
} loom_sched_gres_t;

typedef struct loom_sched_node {
    const char *name; /* borrowed */
    uint32_t cpus;    /* total usable CPUs */
    uint32_t cpus_used;
    uint64_t *cpu_bits; /* bit i set: CPU i held by an unshared allocation */
    uint8_t *cpu_share; /* per CPU: shared (OverSubscribe) allocations on it */
    uint64_t mem_total; /* MiB */
    uint64_t mem_used;
    loom_sched_gres_t *gres;
    size_t ngres;
    uint32_t ngroups;
    uint64_t group_count[LOOM_SCHED_MAX_GROUPS]; /* units per group, and in use */
    uint64_t group_used[LOOM_SCHED_MAX_GROUPS];
    uint32_t gpus, gpus_used;         /* units of GRES "gpu", all types */
    uint16_t sockets, cores, threads; /* cores per socket, threads per core */
    bool whole_cores;                 /* allocate CPUs by whole cores */
    uint32_t unit;                    /* CPUs per allocation unit: 1, a core (whole_cores) or
                                       * a socket (CR_Socket); ids unit-aligned */
    const char *const *features;      /* borrowed */
    size_t nfeatures;
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
    uint64_t mem_per_gpu;              /* MiB per allocated GPU, 0 = unset */
    bool mem_whole_node;               /* --mem=0 or no memory default: all of each node */
    const loom_sched_gres_req_t *gres; /* per node */
    size_t ngres;
    const char *gpus_type;  /* type for gpus_per_job / gpus_per_task; NULL = any */
    uint32_t gpus_per_job;  /* --gpus=[type:]N */
    uint32_t gpus_per_task; /* --gpus-per-task=[type:]N */
    uint32_t cpus_per_gpu;  /* --cpus-per-gpu (or DefCpuPerGPU) */
    bool exclusive;
    bool contiguous;
    uint32_t share_max;                  /* > 1: CPUs may be shared by this many jobs */
    const loom_constraint_t *constraint; /* counts and brackets; per-node match is in allowed */
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
    uint32_t share_max; /* > 1: its CPUs are shared with up to this many allocations */
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

/* The most a new allocation may take of one node (backfill reservations). */
typedef struct loom_sched_limit {
    uint32_t cpus;
    uint64_t mem;
    uint64_t gres[LOOM_SCHED_MAX_GROUPS]; /* units per GRES group */
    bool whole_node_ok;                   /* nothing reserved: an exclusive job may take it */
} loom_sched_limit_t;

/* Fill *out for node idx; false when the node has no limit. */
typedef bool loom_sched_limit_f(void *arg, uint32_t idx, loom_sched_limit_t *out);

typedef struct loom_sched_place_opts {
    unsigned flags;
    const uint32_t *subset; /* look only at these nodes (ascending); NULL = all */
    size_t nsubset;
    loom_sched_limit_f *limit; /* NULL = none */
    void *limit_arg;
} loom_sched_place_opts_t;

/* Set up a node with cpus CPUs and mem_total MiB, usable, nothing allocated,
 * one socket of cpus cores with one thread each. */
void loom_sched_node_init(loom_sched_node_t *n, const char *name, uint32_t cpus,
                          uint64_t mem_total);
/* Free what the node owns. Accepts NULL. */
void loom_sched_node_fini(loom_sched_node_t *n);
/* Sockets, cores per socket, threads per core (0 keeps the current value);
 * whole_cores: allocate by whole cores (CR_Core with threads > 1). */
void loom_sched_node_set_topology(loom_sched_node_t *n, uint16_t sockets, uint16_t cores,
                                  uint16_t threads, bool whole_cores);
/* SelectTypeParameters=CR_Socket: allocate CPUs by whole sockets (when the
 * CPUs are exactly sockets x cores x threads and a socket has more than one
 * CPU; else as set_topology left it). Call after set_topology. */
void loom_sched_node_set_whole_sockets(loom_sched_node_t *n, bool whole_sockets);
/* Append a GRES line (device when index >= 0, then count must be 1). */
void loom_sched_node_add_gres(loom_sched_node_t *n, const char *name, const char *type, int index,
                              uint64_t count);
/* The CPUs local to GRES line g (gres.conf Cores=, already turned into CPU ids). */
void loom_sched_node_set_gres_cpus(loom_sched_node_t *n, size_t g, const uint32_t *cpu_ids,
                                   size_t ncpus);
/* True when CPU id is held (by any allocation). */
bool loom_sched_node_cpu_used(const loom_sched_node_t *n, uint32_t id);
/* Free GPUs of the node (all types). */
uint32_t loom_sched_node_gpus_free(const loom_sched_node_t *n);

/* Choose nodes and resources for req. 0 and *out filled (caller finis it), or
 * -ENOSPC when it does not fit now, -EINVAL for a request that makes no sense
 * (no nodes, max < min). *out untouched on failure. Does not modify nodes. */
int loom_sched_try_place(const loom_sched_node_t *nodes, size_t nnodes, const loom_sched_req_t *req,
                         unsigned flags, loom_sched_alloc_t *out);
/* The same with a node subset and per-node limits. */
int loom_sched_try_place_ex(const loom_sched_node_t *nodes, size_t nnodes,
                            const loom_sched_req_t *req, const loom_sched_place_opts_t *opts,
                            loom_sched_alloc_t *out);

/* Mark an allocation's resources used. -ENOSPC (and nothing changed) when any
 * part is already taken or over a total. */
int loom_sched_alloc_apply(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a);
/* Give an applied allocation's resources back. */
void loom_sched_alloc_release(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a);
/* Free the arrays of an allocation (not the struct itself). Accepts NULL. */
void loom_sched_alloc_fini(loom_sched_alloc_t *a);
/* Deep copy. */
void loom_sched_alloc_copy(loom_sched_alloc_t *dst, const loom_sched_alloc_t *src);
/* GPUs of an allocation on one of its nodes (GRES "gpu" units). */
uint64_t loom_sched_alloc_node_gpus(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na);

#endif

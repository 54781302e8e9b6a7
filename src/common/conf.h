/*
 * conf.h - slurm.conf: loading, the typed configuration, printing (CLI_SPEC §13).
 *
 * Entry points: loom_conf_load() (a file, with its Include files) and
 * loom_conf_load_buffer() (text in memory; Include is refused), which give a
 * loom_conf_t that loom_conf_destroy() frees. Every key is described once, in
 * the key table of conf_keys.c (type, default, bounds, reloadable); parsing,
 * defaults, loom_conf_get() and loom_conf_print() are all driven by it.
 *
 * Syntax (conflex.h): case-insensitive keys, '#' comments, Key=Value pairs
 * (several per line), quoted values, '\' continuation, "Include <file>"
 * (relative to the including file's directory, "%c" is the cluster name,
 * glob patterns allowed, nested at most LOOM_CONF_MAX_INCLUDE_DEPTH deep).
 * Record lines start with NodeName=, PartitionName=, DownNodes=, NodeSet= or
 * FrontendName=; NodeName=DEFAULT and PartitionName=DEFAULT set defaults for
 * the records that follow (each DEFAULT line adds to the earlier ones).
 *
 * Rules: unknown keys and bad values are errors "<file>:<line>: ..." naming the
 * key and the value (with a "did you mean" when a key is close to a known one).
 * Required: ClusterName (at most 40 characters; folded to lower case as Slurm
 * does, with a warning) and SlurmctldHost (or the legacy ControlMachine).
 * Checked: partition Nodes name defined nodes (or ALL, or NodeSet names);
 * node names are unique; GresTypes lists every GRES name of every node; at
 * most one Default=YES partition. Node CPUs/Sockets follow Slurm's derivation
 * (see conf_nodes.c); where Slurm resets an inconsistent value with an error
 * log, Loom does the same and records a warning.
 *
 * Invariants of a loaded loom_conf_t: nodes[] is in slurm.conf order and every
 * name is unique; each partition's node_idx[] is sorted and indexes nodes[];
 * every numeric field is set (defaults applied). Numeric fields are int64_t:
 * LOOM_CONF_UNLIMITED (-1) means unlimited/infinite, LOOM_CONF_NOT_SET (-2)
 * means not given where "unset" differs from any value. Times are seconds;
 * memory sizes MiB. The structure is read-only for its users.
 */
#ifndef LOOM_CONF_H
#define LOOM_CONF_H

#include "common/err.h"
#include "common/gres.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_CONF_UNLIMITED         ((int64_t)-1) /* same value as LOOM_TIME_INFINITE */
#define LOOM_CONF_NOT_SET           ((int64_t)-2) /* same value as LOOM_TIME_NOT_SET */
#define LOOM_CONF_MAX_INCLUDE_DEPTH 16
#define LOOM_CONF_MAX_FILE_BYTES    (64u << 20)
#define LOOM_CONF_CLUSTER_NAME_MAX  40
#define LOOM_CONF_MAX_NODES         100000     /* nodes in all */
#define LOOM_CONF_MAX_MEMBERS       (8u << 20) /* partition node memberships in all */

/* Node states slurm.conf may give (NodeName State=, DownNodes State=). */
typedef enum {
    LOOM_CONF_NODE_UNKNOWN = 0,
    LOOM_CONF_NODE_CLOUD,
    LOOM_CONF_NODE_DOWN,
    LOOM_CONF_NODE_DRAIN,
    LOOM_CONF_NODE_FAIL,
    LOOM_CONF_NODE_FAILING,
    LOOM_CONF_NODE_FUTURE,
} loom_conf_node_state_t;

typedef enum {
    LOOM_CONF_PART_UP = 0,
    LOOM_CONF_PART_DOWN,
    LOOM_CONF_PART_DRAIN,
    LOOM_CONF_PART_INACTIVE,
} loom_conf_part_state_t;

typedef enum {
    LOOM_CONF_OVERSUB_NO = 0,
    LOOM_CONF_OVERSUB_EXCLUSIVE,
    LOOM_CONF_OVERSUB_YES,
    LOOM_CONF_OVERSUB_FORCE,
} loom_conf_oversub_t;

/* PreemptMode (global and per partition) bits; OFF is 0. */
enum {
    LOOM_PREEMPT_OFF = 0,
    LOOM_PREEMPT_CANCEL = 1u << 0,
    LOOM_PREEMPT_REQUEUE = 1u << 1,
    LOOM_PREEMPT_SUSPEND = 1u << 2,
    LOOM_PREEMPT_GANG = 1u << 3,
    LOOM_PREEMPT_WITHIN = 1u << 4,
};

/* SelectTypeParameters bits (CR_Core_Memory = LOOM_CR_CORE | LOOM_CR_MEMORY). */
enum {
    LOOM_CR_CPU = 1u << 0,
    LOOM_CR_CORE = 1u << 1,
    LOOM_CR_SOCKET = 1u << 2,
    LOOM_CR_MEMORY = 1u << 3,
    LOOM_CR_ONE_TASK_PER_CORE = 1u << 4,
    LOOM_CR_CORE_DEFAULT_DIST_BLOCK = 1u << 5,
    LOOM_CR_LLN = 1u << 6,
    LOOM_CR_PACK_NODES = 1u << 7,
    LOOM_CR_OTHER_CONS_RES = 1u << 8,
    LOOM_CR_OTHER_CONS_TRES = 1u << 9,
    LOOM_CR_NHC_NO = 1u << 10,
    LOOM_CR_NHC_NO_STEPS = 1u << 11,
    LOOM_CR_LL_SHARED_GRES = 1u << 12,
    LOOM_CR_MULTIPLE_SHARING_GRES_PJ = 1u << 13,
    LOOM_CR_ENFORCE_BINDING_GRES = 1u << 14,
    LOOM_CR_ONE_TASK_PER_SHARING_GRES = 1u << 15,
};

/* AccountingStorageEnforce bits ("limits" implies associations, ...). */
enum {
    LOOM_ENFORCE_ASSOCS = 1u << 0,
    LOOM_ENFORCE_LIMITS = 1u << 1,
    LOOM_ENFORCE_QOS = 1u << 2,
    LOOM_ENFORCE_SAFE = 1u << 3,
    LOOM_ENFORCE_WCKEYS = 1u << 4,
    LOOM_ENFORCE_NOJOBS = 1u << 5,
    LOOM_ENFORCE_NOSTEPS = 1u << 6,
};

typedef enum {
    LOOM_PART_LIMITS_NO = 0,
    LOOM_PART_LIMITS_ANY,
    LOOM_PART_LIMITS_ALL,
} loom_part_limits_t;

/* Where a value came from: the file (owned by loom_conf_t.files) and line. */
typedef struct loom_conf_src {
    const char *file;
    int lineno;
} loom_conf_src_t;

/* One SlurmctldHost: "name" or "name(addr)"; addr is name when not given. */
typedef struct loom_conf_host {
    char *name;
    char *addr;
} loom_conf_host_t;

/* One NodeName line after the NodeName=DEFAULT values were merged in. */
typedef struct loom_conf_nodecfg {
    loom_conf_src_t src;
    char *names;     /* NodeName= as written */
    char *hostnames; /* NodeHostname= expression, NULL: the node names */
    char *addrs;     /* NodeAddr= expression, NULL: the host names */
    char *bcast_addrs;
    char *ports; /* Port= as written ("6818" or "[7001-7032]"), NULL: SlurmdPort */
    int64_t cpus, boards, sockets_per_board, sockets, cores_per_socket, threads_per_core;
    int64_t real_memory, tmp_disk, mem_spec_limit; /* MiB */
    int64_t core_spec_count, weight, restricted_cores_per_gpu;
    char *cpu_spec_list, *cpu_bind;
    char *gres_text;       /* Gres= as written, NULL when none */
    loom_gres_list_t gres; /* parsed Gres= */
    loom_strv_t features;  /* Features= (or Feature=) */
    int state;             /* loom_conf_node_state_t */
    char *reason;
    size_t first_node, n_nodes; /* its nodes: nodes[first_node .. +n_nodes) */
} loom_conf_nodecfg_t;

typedef struct loom_conf_node {
    char *name;
    char *hostname;
    char *addr;
    int64_t port;
    int state;          /* from the NodeName line, or a DownNodes line */
    const char *reason; /* NULL when none */
    const loom_conf_nodecfg_t *cfg;
} loom_conf_node_t;

typedef struct loom_conf_part {
    loom_conf_src_t src;
    char *name;
    char *nodes;      /* Nodes= as written ("ALL" kept), NULL when none */
    size_t *node_idx; /* into loom_conf_t.nodes, sorted ascending, unique */
    size_t n_nodes;
    bool is_default, hidden, root_only, exclusive_user, lln, req_resv, disable_root_jobs;
    int state;                                       /* loom_conf_part_state_t */
    int64_t max_time, default_time;                  /* seconds; UNLIMITED / NOT_SET */
    int64_t max_nodes, min_nodes, max_cpus_per_node; /* max: UNLIMITED */
    int64_t priority_tier, priority_job_factor;
    int64_t grace_time, over_time_limit; /* seconds, minutes (UNLIMITED) */
    int64_t def_mem_per_cpu, def_mem_per_node, max_mem_per_cpu, max_mem_per_node; /* 0: unset */
    int64_t def_mem_per_gpu, def_cpu_per_gpu;
    int64_t suspend_time, suspend_timeout, resume_timeout; /* NOT_SET: the global value */
    int oversubscribe;                                     /* loom_conf_oversub_t */
    int64_t oversubscribe_n; /* the ":n" job count (default 4 for YES/FORCE) */
    unsigned preempt_mode;   /* LOOM_PREEMPT_*; 0 when not set */
    bool preempt_mode_set;
    loom_strv_t allow_accounts, allow_groups, allow_qos, deny_accounts, deny_qos, alloc_nodes;
    char *qos, *alternate, *tres_billing_weights, *select_type_parameters, *cpu_bind;
} loom_conf_part_t;

/* DownNodes=<hostlist> State= Reason= */
typedef struct loom_conf_down {
    loom_conf_src_t src;
    char *names;
    int state;
    char *reason;
} loom_conf_down_t;

/* NodeSet=<name> Nodes=<hostlist> Feature=<feature> */
typedef struct loom_conf_nodeset {
    loom_conf_src_t src;
    char *name;
    char *nodes;
    char *feature;
} loom_conf_nodeset_t;

/* The raw text of one global key (indexes follow the key table). */
typedef struct loom_conf_val {
    char *text; /* as written; NULL when not given */
    loom_conf_src_t src;
} loom_conf_val_t;

typedef struct loom_conf {
    char *path;            /* the main file (or the buffer's name) */
    loom_strv_t files;     /* every file read, main file first */
    loom_strv_t warnings;  /* "<file>:<line>: message" for what Slurm logs and accepts */
    loom_conf_val_t *vals; /* one per key of the table (loom_conf_key_count()) */

    /* Typed fields of the common global keys (defaults applied). */
    char *cluster_name;
    loom_conf_host_t *ctld_hosts; /* primary first, then backups */
    size_t n_ctld_hosts;
    int64_t slurmctld_port, slurmctld_port_count; /* "6817-6818": 6817, 2 */
    int64_t slurmd_port;
    char *slurm_user, *slurmd_user;
    char *state_save_location, *slurmd_spool_dir;
    char *slurmctld_log_file, *slurmd_log_file, *slurmctld_pid_file, *slurmd_pid_file;
    char *slurmctld_debug, *slurmd_debug, *debug_flags;
    char *auth_type, *auth_alt_types, *auth_alt_parameters, *cred_type;
    int64_t slurmctld_timeout, slurmd_timeout, message_timeout, tcp_timeout;
    int64_t kill_wait, over_time_limit, inactive_limit, min_job_age, complete_wait;
    int64_t max_job_count, max_array_size, first_job_id, max_job_id, max_step_count;
    int64_t max_tasks_per_node, return_to_service, batch_start_timeout, tree_width;
    int64_t prolog_epilog_timeout, unkillable_step_timeout, kill_on_bad_exit, job_requeue;
    int64_t health_check_interval;
    char *health_check_program, *health_check_node_state;
    char *select_type;
    unsigned select_type_parameters; /* LOOM_CR_* */
    char *scheduler_type, *scheduler_parameters;
    int64_t scheduler_time_slice;
    char *priority_type, *priority_flags, *priority_weight_tres;
    char *propagate_rlimits, *propagate_rlimits_except; /* rlimits.h */
    int64_t priority_weight_age, priority_weight_assoc, priority_weight_fairshare;
    int64_t priority_weight_job_size, priority_weight_partition, priority_weight_qos;
    int64_t priority_decay_half_life, priority_max_age, priority_calc_period; /* seconds */
    char *priority_usage_reset_period;
    bool priority_favor_small;
    char *preempt_type;
    unsigned preempt_mode; /* LOOM_PREEMPT_* */
    int64_t preempt_exempt_time;
    int64_t def_mem_per_cpu, def_mem_per_node, max_mem_per_cpu, max_mem_per_node; /* 0: unset */
    int64_t def_mem_per_gpu, def_cpu_per_gpu;
    int enforce_part_limits; /* loom_part_limits_t */
    char *accounting_storage_type, *accounting_storage_host, *accounting_storage_backup_host;
    char *accounting_storage_user, *accounting_storage_pass, *accounting_storage_tres;
    int64_t accounting_storage_port;
    unsigned accounting_storage_enforce; /* LOOM_ENFORCE_* */
    char *job_acct_gather_type, *job_acct_gather_frequency, *job_comp_type, *job_comp_loc;
    char *proctrack_type, *task_plugin, *task_plugin_param, *mpi_default;
    char *prolog, *epilog, *prolog_slurmctld, *epilog_slurmctld, *prolog_flags;
    char *task_prolog, *task_epilog, *srun_prolog, *srun_epilog;
    char *resume_program, *suspend_program, *suspend_exc_nodes, *suspend_exc_parts;
    int64_t suspend_time, suspend_timeout, resume_timeout, resume_rate, suspend_rate;
    loom_strv_t gres_types;
    char *licenses, *mail_prog, *mail_domain, *tmp_fs, *dependency_parameters;
    char *slurmctld_parameters, *slurmd_parameters, *launch_parameters;
    char *topology_plugin, *job_submit_plugins, *plugin_dir;
    bool disable_root_jobs, track_wckey, use_pam;

    /* Records, in file order. */
    loom_conf_nodecfg_t **nodecfgs;
    size_t n_nodecfgs;
    loom_conf_node_t *nodes;
    size_t n_nodes;
    size_t *node_by_name; /* indexes of nodes[] sorted by name (loom_conf_find_node) */
    loom_conf_part_t *parts;
    size_t n_parts;
    loom_conf_down_t *downs;
    size_t n_downs;
    loom_conf_nodeset_t *nodesets;
    size_t n_nodesets;
    loom_strv_t frontends; /* FrontendName lines, as written (accepted, not used) */
} loom_conf_t;

/* Load path (and its Include files). On error *out is untouched. */
int loom_conf_load(const char *path, loom_conf_t **out, loom_err_t *err);
/* Load text[0..len); name is used in messages. An Include line is an error. */
int loom_conf_load_buffer(const char *name, const char *text, size_t len, loom_conf_t **out,
                          loom_err_t *err);
void loom_conf_destroy(loom_conf_t *conf);

/* The text of a global key (any case, aliases too) as written, else its default
 * text; NULL when unset without a default, or the key is unknown. */
const char *loom_conf_get(const loom_conf_t *conf, const char *key);
/* Whether the key was given in the file. */
bool loom_conf_is_set(const loom_conf_t *conf, const char *key);

const loom_conf_node_t *loom_conf_find_node(const loom_conf_t *conf, const char *name);
/* Index into conf->nodes, or -1. */
long loom_conf_node_index(const loom_conf_t *conf, const char *name);
const loom_conf_part_t *loom_conf_find_part(const loom_conf_t *conf, const char *name);
/* The Default=YES partition, or NULL. */
const loom_conf_part_t *loom_conf_default_part(const loom_conf_t *conf);

/* The global keys as `scontrol show config` prints them: "%-23s = %s" lines,
 * in Slurm's order, values normalised (units, "(null)" when unset). Only
 * configuration keys: the run-time lines (BOOT_TIME, NEXT_JOB_ID, ...) are
 * the caller's. */
void loom_conf_print(const loom_conf_t *conf, loom_sbuf_t *out);

#endif

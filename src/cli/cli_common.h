/*
 * cli_common.h - what sbatch, squeue, scancel, sinfo and scontrol share:
 * configuration discovery, the controller connection, messages and exit codes
 * (CLI_SPEC §0.9, §0.10; docs/proto/rpc.md §9).
 *
 * Configuration: `-f FILE`, else $SLURM_CONF, else /etc/slurm/slurm.conf,
 * loaded on first need (loom_cli_conf). The controller is reached through the
 * Unix socket <StateSaveLocation>/loomctld.sock when it exists, else over TCP
 * at SlurmctldHost:SlurmctldPort, signing frames with the cluster key
 * (slurm.key beside slurm.conf) when it can be read, else with munge
 * credentials (AuthType=auth/munge, munged's socket from AuthInfo).
 *
 * Messages go to stderr as Slurm's clients print them: "<prog>: error: ..."
 * (loom_cli_error) and "<prog>: ..." (loom_cli_info, shown unless -Q).
 * Failure exit status: $SLURM_EXIT_ERROR when set to a number, else 1.
 *
 * Entry points: loom_cli_init/_fini, loom_cli_conf, loom_cli_call,
 * loom_cli_error, loom_cli_info, loom_cli_version, loom_cli_flush.
 */
#ifndef LOOM_CLI_COMMON_H
#define LOOM_CLI_COMMON_H

#include "common/auth.h"
#include "common/conf.h"
#include "common/err.h"
#include "common/jobid.h"
#include "common/rangeset.h"
#include "common/rpcclient.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_CLI_DEFAULT_CONF "/etc/slurm/slurm.conf"

typedef struct loom_cli {
    const char *prog;    /* "squeue" */
    char *conf_path;     /* chosen slurm.conf path (owned) */
    loom_conf_t *conf;   /* loaded lazily; NULL until loom_cli_conf() */
    loom_key_t *key;     /* cluster key, when readable (TCP only) */
    loom_rpc_t *rpc;     /* the controller connection, opened by the first call */
    loom_munge_t *munge; /* TCP without the key: munge (AuthType=auth/munge) */
    int verbose;         /* -v count */
    bool quiet;          /* -Q */
    int exit_error;      /* status for failures */
    int timeout_ms;      /* per call; 0: the rpcclient default */
} loom_cli_t;

/* Set defaults from the environment (SLURM_CONF, SLURM_EXIT_ERROR) and
 * configure logging for a command. */
void loom_cli_init(loom_cli_t *cli, const char *prog);
/* Close the connection, free the configuration. */
void loom_cli_fini(loom_cli_t *cli);
/* Use this slurm.conf (-f) instead of the environment's. */
void loom_cli_set_conf_path(loom_cli_t *cli, const char *path);
/* Apply -v/-Q to the log level. */
void loom_cli_set_verbosity(loom_cli_t *cli, int verbose, bool quiet);

/* The configuration, loaded on first call; NULL with err filled on failure. */
const loom_conf_t *loom_cli_conf(loom_cli_t *cli, loom_err_t *err);

/* Send a request of `type` with the members of body (may be NULL; stays the
 * caller's) and wait for the reply. Returns the reply's rc (0 or a negative
 * code); *reply (may be NULL) gets the reply when one came, else NULL. On a
 * failure err holds the text to show: the reply's message, or the transport
 * error. */
int loom_cli_call(loom_cli_t *cli, const char *type, json_t *body, json_t **reply, loom_err_t *err);

void loom_cli_error(const loom_cli_t *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void loom_cli_info(const loom_cli_t *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "<prog>: ..." only with -v. */
void loom_cli_verbose(const loom_cli_t *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Each line as "<prog>: Warning: line" on stderr; with -Q only when
 * even_quiet (srun and salloc print their option warnings under -Q, sbatch does not). */
void loom_cli_warnings(const loom_cli_t *cli, const loom_strv_t *lines, bool even_quiet);
/* --test-only (sbatch, srun): job.submit with body plus "test_only", then
 * "<prog>: Job N to start at T using C processors on nodes L in partition P",
 * or the controller's explanation and "allocation failure: <text>", on
 * stderr. Returns 0 or the error. */
int loom_cli_test_only(loom_cli_t *cli, json_t *body);
/* SLURM_WORKING_CLUSTER=<cluster>:<controller address>:<port>:<protocol>:<select
 * plugin id>, which sbatch and salloc 22.05 give their jobs; nothing without
 * a configuration. */
void loom_cli_working_cluster(loom_cli_t *cli, loom_strv_t *env);
/* SLURM_RLIMIT_* into env for the limits --propagate (NULL: not given) or
 * else PropagateResourceLimits(Except) names (common/rlimits.h); on a bad
 * name Slurm's two error lines, and -1. */
int loom_cli_rlimits(loom_cli_t *cli, const char *propagate, loom_strv_t *env);
/* A partition's slurm.conf record as the controller runs it: with the
 * "changes" of its part.info record (scontrol update PartitionName=) applied
 * to a copy in *scratch; conf itself when there are none (NULL stays NULL). */
const loom_conf_part_t *loom_cli_part_live(const loom_conf_part_t *conf, const json_t *rec,
                                           loom_conf_part_t *scratch);
/* Print "slurm 22.05.8" to stdout. */
void loom_cli_version(void);
/* Write out to stdout and empty it. */
void loom_cli_flush(loom_sbuf_t *out);
/* Drop a reference to a large reply a command keeps until it exits: freed
 * only in sanitizer builds (leak checks stay exact); otherwise the exit
 * frees it (10,000 job records one by one cost squeue 20 ms). */
void loom_cli_exit_decref(json_t *big);

/* ---- job ids (CLI_SPEC §0.5; parsing is jobid.h's) ----------------------- */
/* Does the job record (one job, one array task, or a pending array remainder)
 * fall under the id? A remainder matches a task or task set that it holds. */
bool loom_cli_jobid_match(const loom_jobid_t *id, const json_t *job);
/* Split a list of job ids at the separators in seps ("," or ", ") that are
 * not inside brackets: "12_[1-3,5],14" gives "12_[1-3,5]" and "14". */
void loom_cli_split_ids(const char *list, const char *seps, loom_strv_t *out);
/* The indexes of a pending array remainder ("0-15%2"); -LOOM_EINVAL_ARRAY
 * when it does not parse. */
int loom_cli_array_tasks(const char *rest, loom_rangeset_t *out);

/* The wait status text Slurm prints for ExitCode=: "code:signal". */
void loom_cli_exit_code(int64_t status, loom_sbuf_t *out);

#endif

/*
 * cli_common.h - what sbatch, squeue, scancel, sinfo and scontrol share:
 * configuration discovery, the controller connection, messages and exit codes
 * (CLI_SPEC §0.9, §0.10; docs/proto/rpc.md §9).
 *
 * Configuration: `-f FILE`, else $SLURM_CONF, else /etc/slurm/slurm.conf,
 * loaded on first need (loom_cli_conf). The controller is reached through the
 * Unix socket <StateSaveLocation>/loomctld.sock when it exists, else over TCP
 * at SlurmctldHost:SlurmctldPort, signing frames with the cluster key
 * (slurm.key beside slurm.conf) when it can be read.
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
#include "common/rpcclient.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_CLI_DEFAULT_CONF "/etc/slurm/slurm.conf"

typedef struct loom_cli {
    const char *prog;  /* "squeue" */
    char *conf_path;   /* chosen slurm.conf path (owned) */
    loom_conf_t *conf; /* loaded lazily; NULL until loom_cli_conf() */
    loom_key_t *key;   /* cluster key, when readable (TCP only) */
    loom_rpc_t *rpc;   /* the controller connection, opened by the first call */
    int verbose;       /* -v count */
    bool quiet;        /* -Q */
    int exit_error;    /* status for failures */
    int timeout_ms;    /* per call; 0: the rpcclient default */
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
/* Print "slurm 22.05.8" to stdout. */
void loom_cli_version(void);
/* Write out to stdout and empty it. */
void loom_cli_flush(loom_sbuf_t *out);

/* ---- job ids (CLI_SPEC §0.5) --------------------------------------------- */
typedef struct loom_cli_jobid {
    int64_t job_id; /* the number before '_' or '.' */
    int64_t task;   /* "123_4": 4; -1 when no single index was given */
    char *tasks;    /* "123_[1-3,7]": "1-3,7"; "123_*": "*"; else NULL (owned) */
    char *step;     /* "123.0": "0", "123.batch": "batch"; else NULL (owned) */
} loom_cli_jobid_t;

/* Parse "123", "123_4", "123_[1-3,7]", "123_*", "123.0", "123_4.batch".
 * -LOOM_EPARSE when it is none of those. */
int loom_cli_jobid_parse(const char *s, loom_cli_jobid_t *out);
void loom_cli_jobid_free(loom_cli_jobid_t *id);
/* Does the job record (one job or one array task) fall under the id? */
bool loom_cli_jobid_match(const loom_cli_jobid_t *id, const json_t *job);
/* Expand an index set "0-15", "1,3,5-9", "0-15:4", "0-99%8" (the throttle is
 * ignored) into a malloc'd array of at most max values. -LOOM_EPARSE on bad
 * syntax, -LOOM_ETOOBIG past max. */
int loom_cli_ranges(const char *set, int64_t max, int64_t **vals, size_t *n);
bool loom_cli_ranges_has(const char *set, int64_t v);

/* The wait status text Slurm prints for ExitCode=: "code:signal". */
void loom_cli_exit_code(int64_t status, loom_sbuf_t *out);

#endif

/*
 * cli_json.h - the --json output of squeue and scontrol show job/node
 * (CLI_SPEC §11).
 *
 * The envelope follows Slurm's data_parser: {"<things>": [...], "meta": {...},
 * "errors": [], "warnings": []}. Records are converted from the wire records
 * (docs/proto/messages.md §1, §1.1) to Slurm's key names. Conventions: numbers
 * that can be unset or infinite are {"set","infinite","number"}; states are
 * lists (["RUNNING","COMPLETING"]); times are epoch seconds, wrapped the same
 * way; exit codes are {"status": [...], "return_code": {...}, "signal": {...}}.
 *
 * Entry points: loom_cli_json_job, loom_cli_json_node, loom_cli_json_print.
 */
#ifndef LOOM_CLI_JSON_H
#define LOOM_CLI_JSON_H

#include "common/conf.h"
#include "common/sbuf.h"

#include <jansson.h>
#include <time.h>

/* Slurm's JSON for one job record; new reference. */
json_t *loom_cli_json_job(const json_t *job, time_t now);
/* Slurm's JSON for one node record (cfg: its slurm.conf line, may be NULL). */
json_t *loom_cli_json_node(const json_t *node, const loom_conf_node_t *cfg);
/* {"set":true,"infinite":false,"number":n} and friends. */
json_t *loom_cli_json_num(int64_t n);
json_t *loom_cli_json_unset(void);
json_t *loom_cli_json_infinite(void);

/* Wrap items (a JSON array, stolen) under key with meta/errors/warnings and
 * append the pretty-printed document (and a newline) to out. */
void loom_cli_json_print(const char *key, json_t *items, const loom_conf_t *conf, int argc,
                         char **argv, loom_sbuf_t *out);
/* squeue --json / scontrol --json show job: jobs[] from job records. */
void loom_cli_json_jobs(const loom_conf_t *conf, time_t now, const json_t *jobs, int argc,
                        char **argv, loom_sbuf_t *out);

#endif

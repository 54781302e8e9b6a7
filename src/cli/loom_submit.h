/*
 * loom_submit.h - what `loom sweep` and `loom pipeline` share: submitting
 * through the real sbatch (so that options, #SBATCH directives, --export and
 * the submit environment behave exactly as they do for sbatch), the
 * per-user state directory where they keep what they submitted, shell
 * quoting, and telling sbatch options from other words.
 *
 * sbatch is found beside the running `loom` binary (same build or install),
 * else on PATH. State: $LOOM_STATE_DIR, else $HOME/.loom, with one folder per
 * tool ("sweeps", "pipelines") holding one JSON file per submission.
 *
 * Entry points: loom_submit_sbatch, loom_submit_state_path,
 * loom_submit_save, loom_submit_load, loom_submit_shquote,
 * loom_submit_opt_value, loom_submit_records, loom_submit_cancel.
 */
#ifndef LOOM_CLI_LOOM_SUBMIT_H
#define LOOM_CLI_LOOM_SUBMIT_H

#include "cli/cli_common.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Run `sbatch --parsable ARGS` with script on stdin (NULL: none, e.g. for
 * --wrap). sbatch's stderr passes through. Returns 0 and the job id, or the
 * exit status of sbatch (> 0) / -errno when it could not run. */
int loom_submit_sbatch(const loom_strv_t *args, const char *script, uint32_t *job_id);

/* "<state dir>/<tool>/<name>" (the folder is created); malloc'd, NULL when
 * no state directory can be made. */
char *loom_submit_state_path(const char *tool, const char *name);
/* Write / read a JSON file (atomically: tmp + rename). */
int loom_submit_save(const char *path, const json_t *doc);
json_t *loom_submit_load(const char *path);

/* Append s as one single-quoted word for sh. */
void loom_submit_shquote(const char *s, loom_sbuf_t *out);

/* For an sbatch option word ("-p", "--partition", "--partition=x", "-pgpu"):
 * 1 when the next word is its value, 0 when not, -1 when it is not an
 * sbatch option. */
int loom_submit_opt_value(const char *word);

/* The controller's records of these job ids (arrays: every record);
 * NULL with err filled when the controller cannot be asked. */
json_t *loom_submit_records(loom_cli_t *cli, const uint32_t *ids, size_t n, loom_err_t *err);

/* Cancel each job id (scancel's job.signal); returns how many failed. */
int loom_submit_cancel(loom_cli_t *cli, const uint32_t *ids, size_t n);

#endif

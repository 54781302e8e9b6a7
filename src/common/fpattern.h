/*
 * fpattern.h - output/error/input file-name patterns (CLI_SPEC §1.1).
 *
 * loom_fpattern_expand() turns a pattern such as "logs/%x-%4j.out" into a
 * path: %% %j %A %a %x %u %N %n %t %s %J %b %r, with an optional zero-padding
 * width between '%' and the letter (at most 10; "%4j" gives "0128"). A
 * backslash anywhere in the pattern turns substitution off for the whole name
 * and the backslashes are removed ("\\" keeps one). An unknown letter is kept
 * as written. Relative names are resolved against the job's working
 * directory; "none" (any case) means /dev/null.
 *
 * loom_fpattern_stdio() applies sbatch's defaults: "slurm-%j.out" (arrays:
 * "slurm-%A_%a.out") for stdout, and stderr into the same file unless an
 * error pattern was given.
 *
 * Values that Slurm prints for fields that do not apply are kept: %a of a job
 * that is not an array task is 4294967294 (Slurm's NO_VAL), %A is the job id.
 * Pure functions; no I/O.
 */
#ifndef LOOM_FPATTERN_H
#define LOOM_FPATTERN_H

#include "common/sbuf.h"

#include <stdbool.h>
#include <stdint.h>

#define LOOM_FPATTERN_NO_VAL     4294967294u /* Slurm's NO_VAL: "not an array task" */
#define LOOM_FPATTERN_BATCH_STEP 4294967291u /* the batch step: %s prints "batch" */
#define LOOM_FPATTERN_MAX_WIDTH  10

typedef struct loom_fpattern_ctx {
    uint32_t job_id;        /* %j: the job's own raw id */
    uint32_t array_job_id;  /* %A: 0 when not an array task (then %A is job_id) */
    uint32_t array_task_id; /* %a: LOOM_FPATTERN_NO_VAL when not an array task */
    uint32_t step_id;       /* %s: LOOM_FPATTERN_BATCH_STEP for the batch script */
    uint32_t node_id;       /* %n: node index in the job/step */
    uint32_t task_id;       /* %t: task rank */
    uint32_t restart_cnt;   /* %r */
    const char *job_name;   /* %x (NULL prints nothing) */
    const char *user;       /* %u */
    const char *node_name;  /* %N */
    const char *work_dir;   /* base of relative names; NULL leaves them relative */
} loom_fpattern_ctx_t;

/* A context with every numeric field at its "not set" value and no strings. */
void loom_fpattern_ctx_init(loom_fpattern_ctx_t *ctx);

/* Append the expanded path of pattern to out. */
void loom_fpattern_expand(const char *pattern, const loom_fpattern_ctx_t *ctx, loom_sbuf_t *out);

/* The batch defaults: *out_path and *err_path (malloc'd, caller frees) from the
 * --output and --error patterns (either may be NULL or ""). *err_path is NULL
 * when stderr shares stdout's file (same pattern, or no --error). */
void loom_fpattern_stdio(const char *out_pat, const char *err_pat, bool is_array,
                         const loom_fpattern_ctx_t *ctx, char **out_path, char **err_path);

#endif

/*
 * squeue_fields.h - squeue's format letters and -O names (CLI_SPEC §4.2).
 *
 * Two tables of loom_fmt_col_t: jobs (records of job.info, docs/proto/
 * messages.md §1) and steps (squeue -s). Getters take a loom_squeue_view_t
 * as their context and a `const json_t *` record. Values follow Slurm
 * 22.05: "(null)" for unset strings, "N/A" for unset dates, "NONE" for the
 * end of a job without a limit, priorities as integers (%Q) or normalised to
 * [0,1] with 14 decimals (%p).
 */
#ifndef LOOM_SQUEUE_FIELDS_H
#define LOOM_SQUEUE_FIELDS_H

#include "cli/cli_format.h"

#include <stddef.h>
#include <time.h>

typedef struct loom_squeue_view {
    time_t now;          /* the reply's "now": elapsed times are computed from it */
    const char *cluster; /* ClusterName, for -O Cluster */
} loom_squeue_view_t;

extern const loom_fmt_col_t loom_squeue_job_cols[];
extern const size_t loom_squeue_job_ncols;
extern const loom_fmt_col_t loom_squeue_step_cols[];
extern const size_t loom_squeue_step_ncols;

/* The %R text: "(Reason)" for pending and failed jobs, else the node list. */
void loom_squeue_reason_list(const loom_squeue_view_t *v, const json_t *job, loom_sbuf_t *out);

#endif

/*
 * jobid.h - job and step identifiers as users type them (CLI_SPEC §0.5).
 *
 *     123            a job (for an array: the whole array)
 *     123_4          array task 4           123_[1-3,7]   several tasks
 *     123_*          all tasks of the array
 *     123.0  123.batch  123.extern  123.interactive        steps
 *     123_4.1        a step of an array task
 *     123+1          heterogeneous-job component (also 123+1.0)
 *
 * Entry points: loom_jobid_parse() and loom_jobid_format(), which round-trip
 * (format prints the canonical form: "0123" parses and prints as "123").
 *
 * Rules: the job id is 1..LOOM_JOBID_MAX; a task index 0..LOOM_ARRAY_INDEX_MAX
 * (Slurm's largest MaxArraySize is 4000001); a numeric step 0..LOOM_STEP_ID_MAX
 * (the ids above are Slurm's special steps); a het offset 0..LOOM_HET_OFFSET_MAX
 * (Slurm allows 128 components). A step may follow a job, one task or a het
 * component, not a task set or "_*"; an array part and a het offset exclude
 * each other. No whitespace, signs or trailing text. Every error is
 * -LOOM_EINVAL_JOBID, with the bad part quoted in err; on error *out is
 * untouched.
 *
 * A loom_jobid_t owns its task set: loom_jobid_free() releases it.
 */
#ifndef LOOM_JOBID_H
#define LOOM_JOBID_H

#include "common/err.h"
#include "common/rangeset.h"
#include "common/sbuf.h"

#include <stdbool.h>
#include <stdint.h>

#define LOOM_JOBID_MAX       4294967294u /* 0xfffffffe: NO_VAL and above are not ids */
#define LOOM_ARRAY_INDEX_MAX 4000000u
#define LOOM_STEP_ID_MAX     4294967280ll /* 0xfffffff0, Slurm's largest normal step id */
#define LOOM_HET_OFFSET_MAX  127

/* Step values: >= 0 is a numeric step; the named steps are negative. */
#define LOOM_STEP_NONE        (-1)
#define LOOM_STEP_BATCH       (-2)
#define LOOM_STEP_EXTERN      (-3)
#define LOOM_STEP_INTERACTIVE (-4)

#define LOOM_HET_NONE (-1)

typedef enum {
    LOOM_JOBID_ARRAY_NONE = 0, /* 123 */
    LOOM_JOBID_ARRAY_ONE,      /* 123_4: task */
    LOOM_JOBID_ARRAY_SET,      /* 123_[1-3,7]: tasks */
    LOOM_JOBID_ARRAY_ALL,      /* 123_* */
} loom_jobid_array_t;

typedef struct loom_jobid {
    uint32_t job_id;
    loom_jobid_array_t array;
    uint32_t task;         /* LOOM_JOBID_ARRAY_ONE */
    loom_rangeset_t tasks; /* LOOM_JOBID_ARRAY_SET; owned, empty otherwise */
    int64_t step;          /* LOOM_STEP_* or 0..LOOM_STEP_ID_MAX */
    int32_t het_offset;    /* LOOM_HET_NONE or 0..LOOM_HET_OFFSET_MAX */
} loom_jobid_t;

/* A plain job: no array part, no step, no het offset. */
void loom_jobid_init(loom_jobid_t *id, uint32_t job_id);
/* Release the task set; the id stays valid (its set empty). Accepts NULL. */
void loom_jobid_free(loom_jobid_t *id);

/* Parse s into *out (which is overwritten: free it first if it held a set).
 * Returns 0 or -LOOM_EINVAL_JOBID. */
int loom_jobid_parse(const char *s, loom_jobid_t *out, loom_err_t *err);
/* Append the canonical text of id to out. */
void loom_jobid_format(const loom_jobid_t *id, loom_sbuf_t *out);
/* Equal in every field (task sets compared as sets). */
bool loom_jobid_equal(const loom_jobid_t *a, const loom_jobid_t *b);
/* "batch", "extern", "interactive" for the named steps; NULL otherwise. */
const char *loom_jobid_step_name(int64_t step);

#endif

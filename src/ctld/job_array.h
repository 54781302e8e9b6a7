/*
 * job_array.h - job arrays in the controller (CLI_SPEC §0.5, §1 --array,
 * §4 "123_[5-9%2]"; docs/proto/messages.md §1, the array_* keys).
 *
 * An array is ONE record until its tasks start: the meta record (job id ==
 * array_job_id) keeps the indexes not yet split off as a range set, so that
 * submitting --array=0-99999 costs one record and one journal entry. When the
 * scheduler starts a task, or a command acts on one pending task (hold,
 * update), the task is split off (journal event array.split): a copy of the
 * meta record with a new job id and its array_task_id. The meta record keeps
 * the master id and the rest; when one index is left it becomes that task
 * itself, so the master id ends with the last task started, as in Slurm
 * 22.05 (checked: --array=0-5%2 runs 1_0 as job 2, ..., 1_5 as job 1).
 *
 * Each array has shared bookkeeping (ctld_array_t, found by array_job_id):
 * the meta record, the split tasks by index, and how many of its records are
 * pending, running (holding resources, COMPLETING included) and finished well
 * or not, for the %N throttle (JobArrayTaskLimit) and for dependencies on the
 * whole array. It is derived from the records (job_mgr.c's hooks keep it),
 * never journaled.
 *
 * Invariants: array_pending is non-NULL only on a meta record and then holds
 * at least two indexes (array_task_id is CTLD_NO_TASK); every other record
 * of an array has its array_task_id and is in its array's task map.
 *
 * Entry points: ctld_arrays_init/_fini; ctld_array_find, ctld_array_task,
 * ctld_array_records; the job_mgr.c hooks ctld_array_attach, _detach,
 * _recount; ctld_array_from_desc (submission); ctld_array_split,
 * ctld_array_take_task, ctld_array_startable (the scheduler);
 * ctld_array_resolve, ctld_array_drop_tasks, ctld_array_note_missing (commands);
 * ctld_array_apply_split (journal);
 * ctld_array_set_pending, ctld_array_set_throttle (job.update keys);
 * ctld_array_pending_text.
 */
#ifndef LOOM_CTLD_JOB_ARRAY_H
#define LOOM_CTLD_JOB_ARRAY_H

#include "common/rangeset.h"
#include "ctld/ctld.h"

#define CTLD_NO_TASK 0xfffffffeu /* Slurm's NO_VAL: the record is not one task */
/* At most this many tasks of one meta record are offered to one pass. */
#define CTLD_ARRAY_MAX_OFFER 1024u

/* A map from 32-bit keys to pointers (linear probing). */
typedef struct ctld_u32map {
    uint32_t *keys;
    void **vals; /* NULL = empty slot */
    size_t cap, n;
} ctld_u32map_t;

typedef struct ctld_array {
    uint32_t id;      /* array_job_id */
    ctld_job_t *meta; /* the record whose id is the array's; NULL once purged */
    uint32_t nrec;    /* records of the array in the job table */
    uint32_t n_pending, n_running, n_ok, n_bad; /* records by where they are */
    ctld_u32map_t tasks;                        /* array_task_id -> record */
} ctld_array_t;

void ctld_arrays_init(ctld_t *c);
void ctld_arrays_fini(ctld_t *c);

ctld_array_t *ctld_array_find(const ctld_t *c, uint32_t array_job_id);
/* The record of task `task` once split off (or the meta when it is that
 * task), else NULL. */
ctld_job_t *ctld_array_task(const ctld_array_t *a, uint32_t task);
/* Is task still pending inside the meta record? */
bool ctld_array_in_meta(const ctld_array_t *a, uint32_t task);
/* Push every record of the array to out: the meta record first while it
 * holds pending tasks, then the tasks by index. */
void ctld_array_records(const ctld_array_t *a, ctld_vec_t *out);

/* job_mgr.c: a record joined / leaves the table; moved between its lists
 * (old_list is a CTLD_LIST_* value, old_state the state it had there). */
void ctld_array_attach(ctld_t *c, ctld_job_t *job);
void ctld_array_detach(ctld_t *c, ctld_job_t *job);
void ctld_array_recount(ctld_job_t *job, int old_list, uint32_t old_state);

/* A submission's --array (description key "array"): indexes up to
 * MaxArraySize - 1 (LOOM_EINVAL_ARRAY otherwise), the throttle. The record
 * gets its array_job_id when it gets its id (h_jobs.c). */
int ctld_array_from_desc(const ctld_t *c, const json_t *desc, ctld_job_t *job, loom_err_t *err);
/* Is the (not yet numbered) job an array? */
bool ctld_array_is(const ctld_job_t *job);

/* Split task off the meta record (journaled); returns the task's record,
 * which is the meta itself when it already is that task. NULL with err when
 * the task is not pending there or no job id is free. */
ctld_job_t *ctld_array_split(ctld_t *c, ctld_job_t *meta, uint32_t task, loom_err_t *err);
/* The record the scheduler should start for job: job itself, or its lowest
 * pending task split off. NULL when job is no longer pending or no id is free. */
ctld_job_t *ctld_array_take_task(ctld_t *c, ctld_job_t *job);
/* How many tasks of this record may start now: 1 for a plain job or one
 * task, up to CTLD_ARRAY_MAX_OFFER for a meta record; less under the %N
 * throttle; 0 means reason JobArrayTaskLimit. */
uint32_t ctld_array_startable(const ctld_t *c, const ctld_job_t *job);

/* Remove tasks from the meta record's pending set (scancel 123_[1-3]),
 * journaled; when none would be left the meta record itself is cancelled
 * (by uid: the requester, sacct's "CANCELLED by <uid>").
 * Returns how many pending tasks were dropped. */
int ctld_array_drop_tasks(ctld_t *c, ctld_job_t *meta, const loom_rangeset_t *tasks, uint32_t uid,
                          loom_err_t *err);

/* The records an id names (CLI_SPEC §0.5), pushed to out: without tasks,
 * the job, or every record of the array whose master id it is; with tasks
 * ("1-3,9"), the records of those tasks. Tasks still pending in the meta
 * record are split off into out when split is set, else copied to in_meta
 * (may be NULL). LOOM_EINVAL_JOBID when it names nothing. */
int ctld_array_resolve(ctld_t *c, uint32_t id, const char *tasks, bool split, ctld_vec_t *out,
                       loom_rangeset_t *in_meta, loom_err_t *err);

/* After a command acted on the tasks `tasks` ("1-3,9") of array id: when
 * some of them exist and others do not (never there, or dropped), put
 * "tasks_done" and "tasks_missing" (range texts) into r and return
 * -LOOM_EINVAL_JOBID, for scontrol to report both parts as slurmctld 22.05
 * does ("12_1-3: No error", "12_9: Invalid job id specified"); else 0. */
int ctld_array_note_missing(const ctld_t *c, uint32_t id, const char *tasks, json_t *r);

/* Split off every task of set (all pending in meta), pushing their records to out. */
int ctld_array_split_set(ctld_t *c, ctld_job_t *meta, const loom_rangeset_t *set, ctld_vec_t *out,
                         loom_err_t *err);

/* Journal event {"ev":"array.split","job_id":M,"task":T,"new_id":N}. */
int ctld_array_apply_split(ctld_t *c, const json_t *ev, loom_err_t *err);
/* Record keys: "array_task_str" ("0-9%2": the pending set; one index makes
 * the record that task) and "array_max_tasks" (the throttle of the whole
 * array). job need not be in the table. */
int ctld_array_set_pending(ctld_t *c, ctld_job_t *job, const char *text, loom_err_t *err);
void ctld_array_set_throttle(ctld_job_t *job, uint32_t throttle);

/* "0,4-9%2" (with_throttle) or "0,4-9": the meta record's pending set. */
void ctld_array_pending_text(const ctld_job_t *job, bool with_throttle, loom_sbuf_t *out);

#endif

/*
 * job_rec.h - job records: the JSON form of a job (docs/proto/messages.md §1).
 *
 * One writer and one reader, so that what the journal and the snapshot store
 * is exactly what the controller rebuilds on restart:
 *  - ctld_job_record(): the record. CTLD_REC_FULL adds what only the
 *    controller and the node need (script, env, desc, the raw request fields);
 *    CTLD_REC_STEPS adds the running steps (squeue -s);
 *  - ctld_job_from_record(): a job from a FULL record (journal replay,
 *    snapshot), with its scheduling request rebuilt;
 *  - ctld_job_rec_write(): the job.info record as compact JSON text. All but
 *    the fields that change often (state, reason, eligible_time) is cached in
 *    the job until it changes (ctld_job_touch), so that listing 10,000 jobs
 *    is a concatenation, not 10,000 serialisations; a scheduling pass that
 *    only changes reasons invalidates nothing. Zero-valued optional integers
 *    (nice, restart_cnt, ...) are left out of job.info records: 0 is what
 *    readers assume for an absent key.
 * Allocations travel as messages.md's per-node list:
 *   {"node":"n1","cpus":[0,1],"mem":4096,"tasks":2,"gres":[{"name":"gpu","type":"h100","index":[0]}]}
 */
#ifndef LOOM_CTLD_JOB_REC_H
#define LOOM_CTLD_JOB_REC_H

#include "ctld/ctld.h"

enum {
    CTLD_REC_FULL = 1u << 0,
    CTLD_REC_STEPS = 1u << 1,
};

json_t *ctld_job_record(const ctld_t *c, const ctld_job_t *job, unsigned flags);
int ctld_job_from_record(ctld_t *c, const json_t *rec, ctld_job_t **out, loom_err_t *err);
/* Build the cached part of the job.info text now (done at submission, so
 * that the first squeue after a burst of submissions does not pay for it). */
void ctld_job_rec_cache(const ctld_t *c, ctld_job_t *job);
/* The members of a job.info record written around the cached text, because
 * they change often (ctld_job_rec_head). */
enum {
    CTLD_HEAD_JOB_ID = 1u << 0,
    CTLD_HEAD_STATE = 1u << 1,
    CTLD_HEAD_REASON = 1u << 2,
    CTLD_HEAD_ELIGIBLE = 1u << 3,
    CTLD_HEAD_ALL = 15u,
};
/* Append those of them in `which` as "key":value members joined by ','
 * (no braces); returns whether it wrote any. */
bool ctld_job_rec_head(ctld_job_t *job, unsigned which, loom_sbuf_t *out);
/* Append the job.info record (no steps) as JSON text. */
void ctld_job_rec_write(const ctld_t *c, ctld_job_t *job, loom_sbuf_t *out);

/* Set fields named by record keys (a job.update event's "set"), then rebuild
 * the scheduling request. */
int ctld_job_apply_changes(ctld_t *c, ctld_job_t *job, const json_t *set, loom_err_t *err);

/* A copy of src for a new array task: every record field, the description
 * and environment shared; no id, allocation or steps. */
int ctld_job_clone(ctld_t *c, const ctld_job_t *src, ctld_job_t **out, loom_err_t *err);

json_t *ctld_alloc_to_json(const ctld_t *c, const loom_sched_alloc_t *a);
/* Node names and GRES indices back to the node model's indexes. */
int ctld_alloc_from_json(const ctld_t *c, const json_t *arr, bool exclusive,
                         loom_sched_alloc_t *out, loom_err_t *err);
/* Compressed node list of an allocation (malloc'd). */
char *ctld_alloc_nodelist(const ctld_t *c, const loom_sched_alloc_t *a);

#endif

/*
 * job_depend.h - job dependencies and the eligibility of pending jobs
 * (CLI_SPEC §1 -d/--dependency and --kill-on-invalid-dep, §4.3 reasons;
 * checked against slurmctld 22.05).
 *
 * Forms: after, afterany, afterok, afternotok, aftercorr, afterburstbuffer
 * (treated as afterany), each ":id[:id...]" where an id is N, N_T (one array
 * task) or N_* (a whole array) with an optional "+minutes" delay that also
 * applies to the ids after it; singleton. Terms are joined by ',' (all must
 * be met) or '?' (any one; one '?' makes the whole list "any"). A malformed
 * text, an unknown type, id 0, or a job naming itself is LOOM_EINVAL_DEPEND
 * ("Job dependency problem").
 *
 * The stored form (job->dependency, what squeue %E and scontrol show print)
 * is Slurm's: one id per term with its state, "afterok:16(unfulfilled),
 * afterok:21_*(failed)". An id that is an array's master id names the whole
 * array ("_*"). Met terms are dropped from an all-of list; a met any-of list
 * and a list with nothing left become NULL. A job that is not (or no longer)
 * in the table counts as met, as in Slurm. Each change of the stored form is
 * journaled (job.update), so a term found failed stays failed after a
 * restart even when the job it named has been purged since.
 *
 * Semantics, for one job J (a task, or a plain job):
 *   after      J started (or was cancelled) at least +minutes ago
 *   afterany   J ended (+minutes)        afterok / afternotok  J ended well / not
 *   aftercorr  the dependent array task T waits for task T of the named array
 * For a whole array: after = no task pending; afterany = every task ended;
 * afterok = every task ended and all well (failed when one did not);
 * afternotok the reverse. singleton: no other job of the same user and name
 * is running, or pending with a lower job id.
 *
 * A pending array that waits on aftercorr is split into its tasks (each then
 * waits for its own counterpart), as slurmctld 22.05 does. A job whose
 * dependency can never be met pends with DependencyNeverSatisfied, or is
 * cancelled when it asked --kill-on-invalid-dep=yes (or DependencyParameters
 * has kill_invalid_depend).
 *
 * Entry points: ctld_depend_normalize (submission, scontrol update),
 * ctld_depend_state, ctld_depend_check, ctld_job_ineligible (the
 * scheduler), ctld_depend_tick.
 */
#ifndef LOOM_CTLD_JOB_DEPEND_H
#define LOOM_CTLD_JOB_DEPEND_H

#include "ctld/ctld.h"

/* The stored form of a --dependency text (user form or stored form) into
 * *out (malloc'd; NULL for an empty text). self: the job's own id (0 when
 * it has none yet). LOOM_EINVAL_DEPEND on a bad text; *out untouched. */
int ctld_depend_normalize(const ctld_t *c, const char *text, uint32_t self, char **out,
                          loom_err_t *err);

/* Evaluate job's dependency now without changing anything: 0 met, 1
 * waiting, 2 never met. */
int ctld_depend_state(const ctld_t *c, const ctld_job_t *job, int64_t now);
/* Evaluate job's dependency now: 0 met (job->dependency becomes NULL), 1
 * waiting, 2 never met. Journals the new stored form when it changed. */
int ctld_depend_check(ctld_t *c, ctld_job_t *job, int64_t now);

/* Why the pending job cannot be considered by a pass now (a Slurm reason:
 * JobHeldUser/Admin, BeginTime, Dependency, DependencyNeverSatisfied, the
 * partition limits, BadConstraints, JobArrayTaskLimit), or NULL. */
const char *ctld_job_ineligible(ctld_t *c, ctld_job_t *job, int64_t now);

/* Once a second: cancel jobs whose dependency failed when they asked so;
 * split pending arrays that wait on aftercorr. */
void ctld_depend_tick(ctld_t *c);

#endif

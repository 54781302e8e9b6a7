/*
 * job_script.h - a job's batch script and environment, kept in a file under
 * StateSaveLocation and not in the controller's memory (as slurmctld keeps
 * them under its state directory): about 10 KB per job less to hold.
 *
 * Layout: <StateSaveLocation>/scripts/job.<owner>, one compact JSON object
 * {"script":"...","env":["NAME=value",...],"desc":{...}} and a newline (desc:
 * the submitted description, whole; older files have none), where the owner is
 * the job id, or for an array the master id (array_job_id): an array is one
 * record until its tasks start, and all its tasks share the one file.
 *
 * Life of a file:
 *  - written at submission (h_jobs.c) before the job.submit entry is
 *    journaled (tmp file + rename, no fsync); a submission whose file cannot
 *    be written is refused;
 *  - the job.submit entry still carries the script and environment, so the
 *    durability promise ("every acknowledged job survives a crash") stands on
 *    the journal: replaying that entry rewrites a file that is missing or
 *    whose size differs (a write lost in a crash), and the round that installs
 *    a snapshot (after which those entries are gone) syncs the file system
 *    first (journal.h);
 *  - read back for each job.launch (sched_driver.c): a file that is missing
 *    or unreadable is a launch failure with an error naming it, never a crash;
 *    the launch record's desc is the file's (loomd reads the options there),
 *    while the job table keeps only the members no job field holds
 *    (ctld_job_script_desc);
 *  - removed when the last job record that uses it is purged (MinJobAge), and
 *    after recovery when no job uses it.
 *
 * Entry points: ctld_job_script_owner, ctld_job_script_save,
 * ctld_job_script_replayed, ctld_job_script_load, ctld_job_script_purged,
 * ctld_job_script_sweep.
 */
#ifndef LOOM_CTLD_JOB_SCRIPT_H
#define LOOM_CTLD_JOB_SCRIPT_H

#include "ctld/ctld.h"

/* The id that names the job's file: array_job_id for an array, else its id. */
uint32_t ctld_job_script_owner(const ctld_job_t *job);

/* Write the file of owner from script, env and desc (NULL: empty). 0, or
 * -errno with err naming the file. */
int ctld_job_script_save(const ctld_t *c, uint32_t owner, const char *script, const json_t *env,
                         const json_t *desc, loom_err_t *err);

/* The description the job table keeps (new reference, NULL when nothing is
 * left): desc without the members that job fields hold (name, work_dir,
 * output files, hold, ...), which the controller never reads from desc. */
json_t *ctld_job_script_desc(const json_t *desc);

/* Replay of a job.submit record (rec: its "job"): rewrite the file of owner
 * from rec's "script", "env" and "desc" unless it is there with the same
 * size. A record without script and env (a snapshot's) does nothing.
 * Failures are logged. */
void ctld_job_script_replayed(const ctld_t *c, uint32_t owner, const json_t *rec);

/* Add "script" and "env" from the job's file to rec (a job.launch record),
 * and its "desc" when the file has one.
 * -ENOENT (or -errno) or -LOOM_EPARSE with err naming the file; rec is
 * untouched then. */
int ctld_job_script_load(const ctld_t *c, const ctld_job_t *job, json_t *rec, loom_err_t *err);

/* The job's record is about to be purged: remove its file when no other
 * record of the job table uses it. */
void ctld_job_script_purged(const ctld_t *c, const ctld_job_t *job);

/* After recovery: remove the files no job record uses (a crash between a
 * purge and its unlink, files of a cleared state). */
void ctld_job_script_sweep(const ctld_t *c);

#endif

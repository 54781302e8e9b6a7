/*
 * sched_driver.h - runs src/sched's passes against the controller's tables
 * and starts what they place (DESIGN.md §Scheduling; CLI_SPEC §4.3).
 *
 * Triggers: a submission, a job's end (resources freed), a node that comes
 * up, changes by scontrol, and a timer every few seconds (begin times,
 * partition changes). Triggers are coalesced: at most one pass per loop turn
 * and per CTLD_SCHED_MIN_GAP_MS.
 *
 * Order: partition PriorityTier, then priority (basic or multifactor,
 * sched_prio.h), then submit time; a job that names several partitions is
 * offered in each (sched_job.h) and starts in the first that fits, moved
 * there by a journaled job.update. Backfill runs on its own timer
 * (sched_bf.h); --deadline jobs that can no longer end in time become
 * DEADLINE at the next full pass.
 *
 * Cheap passes with a long queue: when nothing was freed since the last full
 * pass, only the jobs submitted since are looked at, against the partitions
 * that pass found blocked (a new job in a blocked partition just gets reason
 * Priority: O(1) per submission). A full pass sorts the eligible pending jobs
 * (priority, then submit time) and stops as soon as every partition is
 * blocked or no CPU is free.
 *
 * Pending reasons set here: those of ctld_job_ineligible (job_depend.h:
 * holds, BeginTime, Dependency, partition limits, JobArrayTaskLimit), then
 * Resources, Priority, and
 * Slurm's "Nodes required for job are DOWN, DRAINED or reserved..." when the
 * job would not fit even if every running job ended.
 *
 * Starting a job: the start event (with the allocation) is journaled, and
 * job.launch goes to the batch host's loomd once that entry is durable, so a
 * controller restart never forgets a job a node is running.
 */
#ifndef LOOM_CTLD_SCHED_DRIVER_H
#define LOOM_CTLD_SCHED_DRIVER_H

#include "ctld/ctld.h"
#include "ctld/server.h"

#define CTLD_SCHED_MIN_GAP_MS 5
#define CTLD_SCHED_PERIOD_S   5 /* full pass at least this often */

void ctld_sched_init(ctld_t *c);
void ctld_sched_fini(ctld_t *c);

/* Run a pass soon; full: resources were freed or priorities/states changed. */
void ctld_sched_trigger(ctld_t *c, bool full);
/* A new pending job (an incremental pass will look at it); ahead: its
 * priority may exceed older jobs' (then the pass looks at every job). */
void ctld_sched_submitted(ctld_t *c, ctld_job_t *job, bool ahead);
/* A node registered. */
void ctld_sched_node_up(ctld_t *c, ctld_node_t *n);
/* Running jobs rebuilt from state count as launched and acknowledged: their
 * nodes' registrations reconcile them. */
void ctld_sched_mark_launched(ctld_t *c);
/* Run a pass now (tests, and the timer). */
void ctld_sched_run(ctld_t *c);

/* Append a pending job's entries for a pass (one per array task it offers
 * and partition it may use; one slot per task) when it is eligible; else,
 * with set_reason, give it the reason. Multifactor priorities are brought
 * up to date on the way. */
void ctld_sched_add_entries(ctld_t *c, ctld_job_t *job, int64_t now, bool set_reason,
                            loom_sched_job_t **v, size_t *n, size_t *cap);
/* One entry of an eligible job in partition index part (backfill chunks). */
bool ctld_sched_entry(ctld_t *c, ctld_job_t *job, uint32_t part, int64_t now,
                      loom_sched_job_t *out);
/* Start what a pass placed: the array task split off, the job moved to the
 * partition it was placed in, the start journaled, the launch sent. */
void ctld_sched_start_entry(ctld_t *c, ctld_job_t *job, uint32_t part, const loom_sched_alloc_t *a,
                            int64_t now);

/* sbatch --test-only: where and when the job would start. Fills reply. */
void ctld_sched_test_only(ctld_t *c, ctld_job_t *job, json_t *reply);

/* Send a request to a node's loomd (borrowed; cb may be NULL). -LOOM_ECONNECT
 * when the node has no link. */
int ctld_node_request(ctld_t *c, ctld_node_t *n, const json_t *req, ctld_reply_f *cb, void *arg);

#endif

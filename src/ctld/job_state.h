/*
 * job_state.h - the one path for every change of controller state
 * (docs/proto/job-states.md §2; STYLE.md "every job state change goes
 * through one function that appends an event to the journal and then
 * applies it").
 *
 * Events are self-contained JSON objects:
 *   {"ev":"job.submit","t":T,"job":{FULL record}}
 *   {"ev":"job.state","t":T,"job_id":N,"event":"exit_ok",...}   jobstate.h events
 *   {"ev":"job.update","t":T,"job_id":N,"set":{record keys}}
 *   {"ev":"job.purge","t":T,"job_id":N}                          MinJobAge
 *   {"ev":"node.state","t":T,"node":"n1","state":W,"reason":...} admin/timeout states
 *   {"ev":"array.split","t":T,"job_id":M,"task":I,"new_id":N}     job_array.h
 * Extras of job.state by event: start: alloc, nodes, batch_host, start_time;
 * the ends: exit_code, end_time, reason; requeue: begin_time, hold;
 * release: priority; epilog_done: exit_code (when the node reported it).
 *
 * ctld_commit() appends (unless replaying) and applies; ctld_apply() is what
 * replay calls. Apply never talks to the network: messages to nodes and
 * scheduling triggers are the callers' business, after the commit.
 *
 * Entry points: ctld_commit, ctld_job_event, ctld_apply, ctld_state_snapshot,
 * ctld_state_replay.
 */
#ifndef LOOM_CTLD_JOB_STATE_H
#define LOOM_CTLD_JOB_STATE_H

#include "common/jobstate.h"
#include "ctld/ctld.h"

/* Journal ev (stolen) and apply it. The seq joins c->req_seq, so that the
 * current request's reply waits for it. */
int ctld_commit(ctld_t *c, json_t *ev, loom_err_t *err);

/* A job state event: checked against the transition table first (nothing is
 * journaled when it is refused: -LOOM_EALREADY_DONE or -EINVAL). extra
 * (stolen, may be NULL) holds the event's fields. */
int ctld_job_event(ctld_t *c, ctld_job_t *job, loom_job_event_t e, json_t *extra, loom_err_t *err);

/* Apply one journaled event (replay, and the second half of ctld_commit). */
int ctld_apply(ctld_t *c, const json_t *ev, loom_err_t *err);

/* The whole state for loom_journal_snapshot (loom_journal_state_f over a
 * ctld_t), a record at a time: {"job":{FULL record}} for each job, then
 * {"next_job_id":N,"last_prio":P}, {"node":{...}} for each node and
 * {"steps":{"<job id>":{...}}} for each job with steps. Replayed in that
 * order by ctld_state_replay. */
int ctld_state_snapshot(void *c, loom_journal_put_f *put, void *put_arg);

/* loom_journal_replay_f over a ctld_t. */
int ctld_state_replay(void *arg, const json_t *state, const json_t *entry);

#endif

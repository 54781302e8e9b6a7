/*
 * step_launch.h - the controller's step requests and its messages to the
 * step's nodes (docs/proto/messages.md §3 step.create, step.complete,
 * step.stat, alloc.release, job.signal with a step_id; §4 step.launch,
 * step.signal, step.usage, job.kill).
 *
 * The handlers have dispatch.h's shape; step.create and step.stat answer
 * late (CTLD_REPLY_LATER): once every node of the step has answered.
 * h_jobs.c delegates to them.
 */
#ifndef LOOM_CTLD_STEP_LAUNCH_H
#define LOOM_CTLD_STEP_LAUNCH_H

#include "common/sbuf.h"
#include "ctld/ctld.h"

int ctld_step_h_create(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                       loom_sbuf_t *raw);
int ctld_step_h_complete(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw);
int ctld_step_h_stat(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                     loom_sbuf_t *raw);
int ctld_step_h_done(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                     loom_sbuf_t *raw);
int ctld_step_h_release(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                        loom_sbuf_t *raw);

/* scancel jobid.stepid (job.signal with step_id). Security: the caller
 * checked that the peer may touch the job. */
int ctld_step_signal(ctld_t *c, ctld_job_t *job, const json_t *req, loom_err_t *err);

/* A job.kill for the job (borrowed request) to every node of its
 * allocation but the batch host (which job_ops.c told): its steps there end
 * too. */
void ctld_steps_kill_others(ctld_t *c, ctld_job_t *job, const json_t *kill);

#endif

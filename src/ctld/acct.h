/*
 * acct.h - loomctld's accounting: the records of jobs, steps and cluster
 * capacity that go to loomdbd (docs/proto/messages.md §6.1; Slurm's
 * AccountingStorageType=accounting_storage/slurmdbd).
 *
 * With accounting on, every event ctld_commit() journals marks the jobs it
 * touches; as the journal forms its next round (journal.h, aux) each marked
 * job's current record is written to the spool (acct_spool.h) in that same
 * round, so several changes of one job in one round become one record. A
 * few events need the state before they apply, and write at once:
 *   step.end      the step's final record (state, exit code, end time);
 *   epilog_done   steps still open end CANCELLED;
 *   requeue       the run being left gets state REQUEUED (the requeued job
 *                 has a new submit time, hence a new record);
 *   job.purge     marked jobs are written before the job goes.
 * A finished batch job also gets its "batch" step. At start-up every job
 * in the tables is written again: a crash between the journal's write and
 * the spool's cannot lose a change (loomdbd stores each record once).
 * Capacity (cluster_tres: total and DOWN/DRAINED TRES) is sent at start and
 * whenever it changes (checked each tick).
 *
 * Entry points: ctld_acct_start, ctld_acct_before, ctld_acct_after,
 * ctld_acct_tick, ctld_acct_stop, ctld_acct_free, ctld_acct_describe.
 */
#ifndef LOOM_CTLD_ACCT_H
#define LOOM_CTLD_ACCT_H

#include "common/sbuf.h"
#include "ctld/ctld.h"

/* After recovery, with the journal open: start when AccountingStorageType
 * is accounting_storage/slurmdbd (c->acct stays NULL otherwise). */
int ctld_acct_start(ctld_t *c, loom_err_t *err);
/* ctld_commit's hooks, around ctld_apply (not called while replaying). */
void ctld_acct_before(ctld_t *c, const json_t *ev);
void ctld_acct_after(ctld_t *c, const json_t *ev);
/* Once a second: capacity changes. */
void ctld_acct_tick(ctld_t *c);
/* Shutdown: stop sending (before the journal closes, which writes what is marked). */
void ctld_acct_stop(ctld_t *c);
/* After the loop ended. Accepts c->acct == NULL. */
void ctld_acct_free(ctld_t *c);
/* One line for scontrol/diagnostics: the link and its backlog. */
void ctld_acct_describe(const ctld_t *c, loom_sbuf_t *out);

#endif

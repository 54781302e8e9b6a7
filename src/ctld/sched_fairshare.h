/*
 * sched_fairshare.h - fair-share usage and factors for the controller (Slurm's
 * priority/multifactor with PriorityFlags=FAIR_TREE), and assoc.shares for
 * sshare (docs/proto/messages.md §3; CLI_SPEC §13 Priority* keys).
 *
 * Usage. Every PriorityCalcPeriod (and at shutdown) the controller first
 * decays every association's raw usage by PriorityDecayHalfLife over the
 * time since the last calculation (clearing it instead when a
 * PriorityUsageResetPeriod boundary passed), then charges each job that ran
 * meanwhile (running, or ended since) its billing TRES (TRESBillingWeights
 * of its partition, CPUs without them; times its QOS's UsageFactor) times
 * the seconds it ran in the period, decayed as slurmctld does. Usage is
 * kept per user association, by (account, user, partition), and summed up
 * the tree when the factors are computed (src/sched/fairtree.h).
 *
 * Durability. The usage and the time of the last calculation are written
 * to <StateSaveLocation>/fairshare_usage.json after each calculation
 * (write, fsync, rename: a few KiB once a period, on the loop) and read at
 * start, so a restart keeps the usage (Slurm's assoc_usage state file);
 * what ran since the last calculation is charged at the next one, from the
 * saved time.
 *
 * Factors. A job's fair-share factor is the FairShare of its association
 * in the association tree of assoc_mgr.h, recomputed after each
 * calculation and whenever a new tree is installed; 0 without accounting
 * or without an association (Slurm's value).
 *
 * Limits. Each job is also charged to its QOS and its partition's QOS, and
 * every entry keeps the decayed wall-clock seconds too, for GrpTRESMins and
 * GrpWall (assoc_policy.c reads them through ctld_fairshare_usage_each).
 *
 * Entry points: ctld_fairshare_init/_fini, ctld_fairshare_factor,
 * ctld_fairshare_usage_each, ctld_fairshare_h_shares (assoc.shares,
 * registered in sched_prio.c).
 */
#ifndef LOOM_CTLD_SCHED_FAIRSHARE_H
#define LOOM_CTLD_SCHED_FAIRSHARE_H

#include "ctld/assoc_mgr.h"
#include "ctld/ctld.h"
#include "ctld/dispatch.h"

typedef struct ctld_fairshare ctld_fairshare_t;

/* Read the settings and the saved usage; start the PriorityCalcPeriod
 * timer. Returns the state (owned by the caller, freed by _fini). */
ctld_fairshare_t *ctld_fairshare_init(ctld_t *c);
/* Charge up to now, save, stop the timer and free fs (accepts NULL). */
void ctld_fairshare_fini(ctld_t *c, ctld_fairshare_t *fs);

/* The fair-share factor of a job's association, in [0, 1]. */
double ctld_fairshare_factor(const ctld_t *c, ctld_fairshare_t *fs, const ctld_job_t *job);

/* One scope's decayed usage, either an association's own (assoc_key: its
 * "account\037user\037partition", the key of assoc_mgr.h's index) or a QOS's
 * (qos): TRES-seconds (cpu, mem, node, billing, gres/gpu) and wall seconds. */
typedef void (*ctld_fairshare_usage_f)(void *arg, const char *assoc_key, const char *qos,
                                       const ctld_tres_t *secs, int64_t wall_secs);
/* Call f for each scope with usage (none without priority/multifactor). */
void ctld_fairshare_usage_each(const ctld_t *c, ctld_fairshare_usage_f f, void *arg);

/* assoc.shares (user role): {users?: [name], accounts?: [name]} ->
 * {"shares": [...], "tres_names": [...]} (messages.md §3). */
int ctld_fairshare_h_shares(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                            loom_sbuf_t *raw);

#endif

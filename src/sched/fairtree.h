/*
 * fairtree.h - Slurm's fair-tree fair-share algorithm (PriorityFlags=FAIR_TREE,
 * the default of priority/multifactor since 19.05), pure: an association
 * tree with each user's raw usage in, the values sshare shows and each
 * user's fair-share factor out. No I/O, no clock.
 *
 * Definitions (as slurmctld 22.05 and sshare show them):
 *  - RawUsage of an association: its own usage plus its children's (decayed
 *    billing-weighted TRES seconds; only user associations run jobs);
 *  - NormShares: RawShares over the sum of RawShares of it and its siblings;
 *  - NormUsage: RawUsage over the root's RawUsage (0 when the root has none);
 *  - EffectvUsage: RawUsage over the parent's RawUsage (0 when the parent has
 *    none); the root's is 1;
 *  - LevelFS: NormShares / EffectvUsage; infinity without usage, 0 without
 *    shares;
 *  - ranking: siblings sorted by LevelFS, highest first (a user before an
 *    account on equal LevelFS), visited depth first; each user visited
 *    takes the next rank counting down from the number of user
 *    associations, except that a user tied (equal LevelFS) with the sibling
 *    before it, or the first user under an account tied with the sibling
 *    before it, keeps the previous rank; FairShare = rank / users, so the
 *    most deserving user gets 1.0.
 *
 * Usage decays as slurmctld's does: each second multiplies it by
 * 1 - ln2 / PriorityDecayHalfLife, so after one half-life about half is left.
 *
 * Entry points: loom_fairtree_compute, loom_fairtree_decay,
 * loom_fairtree_reset_due, loom_fairtree_parse_reset, loom_fairtree_billing.
 */
#ifndef LOOM_SCHED_FAIRTREE_H
#define LOOM_SCHED_FAIRTREE_H

#include "common/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct loom_fairtree_node {
    /* In. Index 0 is the root; every parent comes before its children. */
    int32_t parent; /* -1 for the root */
    bool is_user;
    uint32_t shares_raw;
    double usage_own; /* a user's raw usage; ignored for accounts; < 0, NaN, inf: 0 */
    /* Out. */
    double usage_raw;   /* own plus descendants' */
    double shares_norm; /* within its level (the root: 0) */
    double usage_norm;  /* over the root's usage */
    double usage_efctv; /* over the parent's usage (the root: 1) */
    double level_fs;    /* shares_norm / usage_efctv (the root: 0) */
    double fs_factor;   /* users: rank / users; accounts: 0 */
    uint32_t rank;      /* users: rank (users..1); accounts: 0 */
} loom_fairtree_node_t;

/* Fill the out fields of nodes[0..n). -EINVAL (err says which) when the
 * tree is malformed: a parent that does not come before its child, or a
 * user with children. Outputs are untouched on failure. */
int loom_fairtree_compute(loom_fairtree_node_t *nodes, size_t n, loom_err_t *err);

/* The factor usage is multiplied by over dt seconds (1 when half_life <= 0
 * or dt <= 0). */
double loom_fairtree_decay(int64_t dt, int64_t half_life);

/* The usage a job adds over dt seconds: billing * dt, decayed over the
 * period as if accrued evenly (what slurmctld charges per calc period). */
double loom_fairtree_charge(double billing, int64_t dt, int64_t half_life);

/* PriorityUsageResetPeriod. */
typedef enum loom_fairtree_reset {
    LOOM_FT_RESET_NONE,
    LOOM_FT_RESET_NOW,
    LOOM_FT_RESET_DAILY,
    LOOM_FT_RESET_WEEKLY,
    LOOM_FT_RESET_MONTHLY,
    LOOM_FT_RESET_QUARTERLY,
    LOOM_FT_RESET_YEARLY,
} loom_fairtree_reset_t;

/* "NONE", "NOW", "DAILY", ... (any case; NULL or "" is NONE). -EINVAL with
 * the word quoted otherwise. */
int loom_fairtree_parse_reset(const char *s, loom_fairtree_reset_t *out, loom_err_t *err);

/* Did a reset boundary (UTC midnight, Monday, the 1st of a month, of
 * January/April/July/October, of January) pass in (last, now]? NOW resets
 * only when last is 0: the caller asks with 0 at start-up and reconfigure,
 * as slurmctld clears usage then. */
bool loom_fairtree_reset_due(loom_fairtree_reset_t period, int64_t last, int64_t now);

/* TRESBillingWeights ("CPU=1.0,Mem=0.25G,GRES/gpu=2.0"; NULL or "": billing
 * = cpus). Mem's weight is per GiB with a G suffix, per MiB without one
 * (per TiB with T). max_tres: PriorityFlags=MAX_TRES (the largest node-level
 * product instead of the sum). Returns the billing, or -EINVAL with err set
 * when s does not parse. */
typedef struct loom_fairtree_tres {
    uint64_t cpus, mem_mib, nodes, gpus;
} loom_fairtree_tres_t;
double loom_fairtree_billing(const char *s, const loom_fairtree_tres_t *t, bool max_tres,
                             loom_err_t *err);

#endif

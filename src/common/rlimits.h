/*
 * rlimits.h - resource limits carried from the submitting shell to the job
 * (slurm.conf PropagateResourceLimits / PropagateResourceLimitsExcept,
 * sbatch/srun --propagate), as Slurm 22.05 carries them (checked side by
 * side):
 *  - the command picks the limits (--propagate[=NAME,...] | NONE | ALL, else
 *    the configuration; Slurm's upper-case names AS CORE CPU DATA FSIZE
 *    MEMLOCK NOFILE NPROC RSS STACK) and puts the soft value of each in the
 *    job's environment as SLURM_RLIMIT_<NAME>=<value|unlimited>;
 *  - the node's supervisor takes those variables out of the environment and
 *    sets each as the soft limit of the job's processes, keeping the node's
 *    hard limit (raised to the value when the supervisor may, else the soft
 *    limit is cut to it).
 *
 * Entry points: loom_rlimits_select, loom_rlimits_env, loom_rlimits_take,
 * loom_rlimits_apply.
 */
#ifndef LOOM_COMMON_RLIMITS_H
#define LOOM_COMMON_RLIMITS_H

#include "common/err.h"
#include "common/strv.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>

#define LOOM_RLIMIT_N 10

/* Which limits: spec ("ALL", "NONE", "STACK,CORE"; NULL or "" is ALL) less
 * except (NULL: none). -EINVAL on a bad name, err says "Bad rlimit name: X". */
int loom_rlimits_select(const char *spec, const char *except, bool sel[LOOM_RLIMIT_N],
                        loom_err_t *err);
/* SLURM_RLIMIT_<NAME>=<soft limit> for each selected limit of this process. */
void loom_rlimits_env(const bool sel[LOOM_RLIMIT_N], loom_strv_t *env);

typedef struct loom_rlimit_set {
    int resource[LOOM_RLIMIT_N];
    rlim_t soft[LOOM_RLIMIT_N];
    size_t n;
} loom_rlimit_set_t;

/* Take the SLURM_RLIMIT_* variables out of env into out (bad ones dropped). */
void loom_rlimits_take(loom_strv_t *env, loom_rlimit_set_t *out);
/* Set them on this process (between fork and exec: system calls only). */
void loom_rlimits_apply(const loom_rlimit_set_t *set);

#endif

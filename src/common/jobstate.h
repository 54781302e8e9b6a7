/*
 * jobstate.h - job states, their names and the transition table
 * (docs/proto/job-states.md; CLI_SPEC §5).
 *
 * A job state is a uint32_t word: a base state (loom_job_state_t) in the low
 * 8 bits and LOOM_JOB_F_* flags above. Names are Slurm's: long ("PENDING")
 * for squeue %T, scontrol and sacct; short ("PD") for squeue %t.
 *
 * Entry points: loom_job_base, loom_job_state_name, loom_job_state_short,
 * loom_job_state_list, loom_job_state_parse, loom_job_state_is_terminal,
 * loom_job_next_state, loom_job_transition_ok, loom_job_event_name.
 *
 * Invariant: loom_job_next_state() is the only way the controller moves a
 * job between states; its table is the one in job-states.md §2.
 */
#ifndef LOOM_JOBSTATE_H
#define LOOM_JOBSTATE_H

#include "common/err.h"
#include "common/strv.h"

#include <stdbool.h>
#include <stdint.h>

/* Base states; the numbers are Slurm's, which keeps sacct dumps comparable. */
typedef enum loom_job_state {
    LOOM_JOB_PENDING = 0,
    LOOM_JOB_RUNNING,
    LOOM_JOB_SUSPENDED,
    LOOM_JOB_COMPLETED,
    LOOM_JOB_CANCELLED,
    LOOM_JOB_FAILED,
    LOOM_JOB_TIMEOUT,
    LOOM_JOB_NODE_FAIL,
    LOOM_JOB_PREEMPTED,
    LOOM_JOB_BOOT_FAIL,
    LOOM_JOB_DEADLINE,
    LOOM_JOB_OUT_OF_MEMORY,
    LOOM_JOB_STATE_COUNT
} loom_job_state_t;

#define LOOM_JOB_STATE_BASE 0xffu

/* The wait status Slurm records for a job or step the OOM killer ended (its
 * SIG_OOM, 253): sacct and scontrol show ExitCode 0:125. */
#define LOOM_EXIT_OOM 253

/* Flags, in the order that picks the printed name (first set wins). */
enum {
    LOOM_JOB_F_COMPLETING = 1u << 8,
    LOOM_JOB_F_STAGE_OUT = 1u << 9,
    LOOM_JOB_F_CONFIGURING = 1u << 10,
    LOOM_JOB_F_RESIZING = 1u << 11,
    LOOM_JOB_F_REQUEUED = 1u << 12,
    LOOM_JOB_F_REQUEUE_FED = 1u << 13,
    LOOM_JOB_F_REQUEUE_HOLD = 1u << 14,
    LOOM_JOB_F_SPECIAL_EXIT = 1u << 15,
    LOOM_JOB_F_STOPPED = 1u << 16,
    LOOM_JOB_F_REVOKED = 1u << 17,
    LOOM_JOB_F_RESV_DEL_HOLD = 1u << 18,
    LOOM_JOB_F_SIGNALING = 1u << 19,
};

/* What happens to a job (job-states.md §2). */
typedef enum loom_job_event {
    LOOM_JOB_EV_START,        /* scheduled; nodes ready */
    LOOM_JOB_EV_START_BOOT,   /* scheduled; nodes must boot first */
    LOOM_JOB_EV_BOOTED,       /* its nodes finished booting */
    LOOM_JOB_EV_BOOT_FAIL,    /* its nodes failed to boot */
    LOOM_JOB_EV_EXIT_OK,      /* exit status 0 */
    LOOM_JOB_EV_EXIT_FAIL,    /* exit status != 0, signal, launch failure */
    LOOM_JOB_EV_TIME_LIMIT,   /* time limit reached */
    LOOM_JOB_EV_OOM,          /* killed for memory */
    LOOM_JOB_EV_DEADLINE,     /* --deadline can no longer be met */
    LOOM_JOB_EV_CANCEL,       /* scancel */
    LOOM_JOB_EV_NODE_FAIL,    /* a node was lost */
    LOOM_JOB_EV_PREEMPT,      /* preempted, PreemptMode=CANCEL */
    LOOM_JOB_EV_SUSPEND,      /* scontrol suspend, PreemptMode=SUSPEND */
    LOOM_JOB_EV_RESUME,       /* scontrol resume */
    LOOM_JOB_EV_REQUEUE,      /* scontrol requeue, PreemptMode=REQUEUE */
    LOOM_JOB_EV_REQUEUE_HOLD, /* scontrol requeuehold */
    LOOM_JOB_EV_SPECIAL_EXIT, /* exit code listed in RequeueExitHold */
    LOOM_JOB_EV_RELEASE,      /* scontrol release */
    LOOM_JOB_EV_EPILOG_DONE,  /* every node released the job */
    LOOM_JOB_EV_COUNT
} loom_job_event_t;

static inline loom_job_state_t loom_job_base(uint32_t state)
{
    return (loom_job_state_t)(state & LOOM_JOB_STATE_BASE);
}

/* The name squeue %T prints: the first flag set in flag order, else the base
 * name ("COMPLETING", "PENDING"). "UNKNOWN" for an invalid base. Static. */
const char *loom_job_state_name(uint32_t state);
/* The same for squeue %t ("CG", "PD"). */
const char *loom_job_state_short(uint32_t state);
/* The --json list: base name, then each flag's name. Appends to out. */
void loom_job_state_list(uint32_t state, loom_strv_t *out);

/* One base or flag name, long or short, any case ("pd", "Running", "CG"):
 * *state gets the base value or the flag bit. -LOOM_EPARSE when unknown. */
int loom_job_state_parse(const char *s, uint32_t *state, loom_err_t *err);

/* The base state is final (COMPLETED, FAILED, ...); see job-states.md §1. */
bool loom_job_state_is_terminal(uint32_t state);

/* Apply event to from: 0 and *to set, or -LOOM_EALREADY_DONE (from is
 * terminal) / -EINVAL (not allowed now) with *to untouched. */
int loom_job_next_state(uint32_t from, loom_job_event_t ev, uint32_t *to);

/* Does some event take base state from to base state to? */
bool loom_job_transition_ok(loom_job_state_t from, loom_job_state_t to);

/* "start", "exit_ok", ... as in job-states.md; "?" when out of range. */
const char *loom_job_event_name(loom_job_event_t ev);

#endif

/*
 * jobstate.c - job state names and the transition table. See jobstate.h and
 * docs/proto/job-states.md.
 */
#include "common/jobstate.h"

#include <errno.h>
#include <strings.h>

typedef struct {
    const char *name;
    const char *shortname;
} jobstate_base_t;

/* Indexed by loom_job_state_t. */
static const jobstate_base_t jobstate_bases[LOOM_JOB_STATE_COUNT] = {
    [LOOM_JOB_PENDING] = {"PENDING", "PD"},     [LOOM_JOB_RUNNING] = {"RUNNING", "R"},
    [LOOM_JOB_SUSPENDED] = {"SUSPENDED", "S"},  [LOOM_JOB_COMPLETED] = {"COMPLETED", "CD"},
    [LOOM_JOB_CANCELLED] = {"CANCELLED", "CA"}, [LOOM_JOB_FAILED] = {"FAILED", "F"},
    [LOOM_JOB_TIMEOUT] = {"TIMEOUT", "TO"},     [LOOM_JOB_NODE_FAIL] = {"NODE_FAIL", "NF"},
    [LOOM_JOB_PREEMPTED] = {"PREEMPTED", "PR"}, [LOOM_JOB_BOOT_FAIL] = {"BOOT_FAIL", "BF"},
    [LOOM_JOB_DEADLINE] = {"DEADLINE", "DL"},   [LOOM_JOB_OUT_OF_MEMORY] = {"OUT_OF_MEMORY", "OOM"},
};

typedef struct {
    uint32_t flag;
    const char *name;
    const char *shortname;
} jobstate_flag_t;

/* In printing precedence: the first flag set names the job. */
static const jobstate_flag_t jobstate_flags[] = {
    {LOOM_JOB_F_COMPLETING, "COMPLETING", "CG"},
    {LOOM_JOB_F_STAGE_OUT, "STAGE_OUT", "SO"},
    {LOOM_JOB_F_CONFIGURING, "CONFIGURING", "CF"},
    {LOOM_JOB_F_RESIZING, "RESIZING", "RS"},
    {LOOM_JOB_F_REQUEUED, "REQUEUED", "RQ"},
    {LOOM_JOB_F_REQUEUE_FED, "REQUEUE_FED", "RF"},
    {LOOM_JOB_F_REQUEUE_HOLD, "REQUEUE_HOLD", "RH"},
    {LOOM_JOB_F_SPECIAL_EXIT, "SPECIAL_EXIT", "SE"},
    {LOOM_JOB_F_STOPPED, "STOPPED", "ST"},
    {LOOM_JOB_F_REVOKED, "REVOKED", "RV"},
    {LOOM_JOB_F_RESV_DEL_HOLD, "RESV_DEL_HOLD", "RD"},
    {LOOM_JOB_F_SIGNALING, "SIGNALING", "SI"},
};

#define JOBSTATE_NFLAGS (sizeof(jobstate_flags) / sizeof(jobstate_flags[0]))

static const jobstate_flag_t *jobstate_first_flag(uint32_t state)
{
    for (size_t i = 0; i < JOBSTATE_NFLAGS; i++)
        if (state & jobstate_flags[i].flag)
            return &jobstate_flags[i];
    return NULL;
}

const char *loom_job_state_name(uint32_t state)
{
    const jobstate_flag_t *f = jobstate_first_flag(state);
    if (f)
        return f->name;
    loom_job_state_t b = loom_job_base(state);
    return b < LOOM_JOB_STATE_COUNT ? jobstate_bases[b].name : "UNKNOWN";
}

const char *loom_job_state_short(uint32_t state)
{
    const jobstate_flag_t *f = jobstate_first_flag(state);
    if (f)
        return f->shortname;
    loom_job_state_t b = loom_job_base(state);
    return b < LOOM_JOB_STATE_COUNT ? jobstate_bases[b].shortname : "?";
}

void loom_job_state_list(uint32_t state, loom_strv_t *out)
{
    loom_job_state_t b = loom_job_base(state);
    loom_strv_add(out, b < LOOM_JOB_STATE_COUNT ? jobstate_bases[b].name : "UNKNOWN");
    for (size_t i = 0; i < JOBSTATE_NFLAGS; i++)
        if (state & jobstate_flags[i].flag)
            loom_strv_add(out, jobstate_flags[i].name);
}

int loom_job_state_parse(const char *s, uint32_t *state, loom_err_t *err)
{
    for (unsigned i = 0; i < LOOM_JOB_STATE_COUNT; i++)
        if (!strcasecmp(s, jobstate_bases[i].name) || !strcasecmp(s, jobstate_bases[i].shortname)) {
            *state = i;
            return 0;
        }
    for (size_t i = 0; i < JOBSTATE_NFLAGS; i++)
        if (!strcasecmp(s, jobstate_flags[i].name) || !strcasecmp(s, jobstate_flags[i].shortname)) {
            *state = jobstate_flags[i].flag;
            return 0;
        }
    return loom_errf(err, -LOOM_EPARSE, "Invalid job state specified: %s", s);
}

bool loom_job_state_is_terminal(uint32_t state)
{
    loom_job_state_t b = loom_job_base(state);
    return b >= LOOM_JOB_COMPLETED && b < LOOM_JOB_STATE_COUNT;
}

/* ---- the transition table (job-states.md §2) ---- */

#define JS(s)       (1u << (s))
#define JS_TERMINAL (((1u << LOOM_JOB_STATE_COUNT) - 1) & ~(JS(0) | JS(1) | JS(2)))
#define JS_SAME     (-1)
#define JF_HOLDS    (LOOM_JOB_F_REQUEUE_HOLD | LOOM_JOB_F_SPECIAL_EXIT)
#define JF_CG       LOOM_JOB_F_COMPLETING

typedef struct {
    uint32_t from; /* mask of base states, JS(...) */
    loom_job_event_t ev;
    int to;          /* base state, or JS_SAME */
    uint32_t set;    /* flags set */
    uint32_t clear;  /* flags cleared (when the base stays) */
    uint32_t needs;  /* applies only with all of these */
    uint32_t unless; /* applies only with none of these */
} jobstate_row_t;

static const jobstate_row_t jobstate_table[] = {
    {JS(LOOM_JOB_PENDING), LOOM_JOB_EV_START, LOOM_JOB_RUNNING, 0, 0, 0, JF_CG | JF_HOLDS},
    {JS(LOOM_JOB_PENDING), LOOM_JOB_EV_START_BOOT, LOOM_JOB_RUNNING, LOOM_JOB_F_CONFIGURING, 0, 0,
     JF_CG | JF_HOLDS},
    {JS(LOOM_JOB_PENDING), LOOM_JOB_EV_CANCEL, LOOM_JOB_CANCELLED, 0, 0, 0, 0},
    {JS(LOOM_JOB_PENDING), LOOM_JOB_EV_DEADLINE, LOOM_JOB_DEADLINE, 0, 0, 0, 0},
    {JS(LOOM_JOB_PENDING), LOOM_JOB_EV_RELEASE, JS_SAME, 0, JF_HOLDS, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_BOOTED, JS_SAME, 0, LOOM_JOB_F_CONFIGURING,
     LOOM_JOB_F_CONFIGURING, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_BOOT_FAIL, LOOM_JOB_BOOT_FAIL, JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_EXIT_OK, LOOM_JOB_COMPLETED, JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_EXIT_FAIL, LOOM_JOB_FAILED, JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_TIME_LIMIT, LOOM_JOB_TIMEOUT, JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_OOM, LOOM_JOB_OUT_OF_MEMORY, JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_DEADLINE, LOOM_JOB_DEADLINE, JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING) | JS(LOOM_JOB_SUSPENDED), LOOM_JOB_EV_CANCEL, LOOM_JOB_CANCELLED, JF_CG,
     0, 0, 0},
    {JS(LOOM_JOB_RUNNING) | JS(LOOM_JOB_SUSPENDED), LOOM_JOB_EV_NODE_FAIL, LOOM_JOB_NODE_FAIL,
     JF_CG, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING) | JS(LOOM_JOB_SUSPENDED), LOOM_JOB_EV_PREEMPT, LOOM_JOB_PREEMPTED, JF_CG,
     0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_SUSPEND, LOOM_JOB_SUSPENDED, 0, 0, 0,
     LOOM_JOB_F_CONFIGURING},
    {JS(LOOM_JOB_SUSPENDED), LOOM_JOB_EV_RESUME, LOOM_JOB_RUNNING, 0, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING) | JS(LOOM_JOB_SUSPENDED), LOOM_JOB_EV_REQUEUE, LOOM_JOB_PENDING,
     JF_CG | LOOM_JOB_F_REQUEUED, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING) | JS(LOOM_JOB_SUSPENDED), LOOM_JOB_EV_REQUEUE_HOLD, LOOM_JOB_PENDING,
     JF_CG | LOOM_JOB_F_REQUEUED | LOOM_JOB_F_REQUEUE_HOLD, 0, 0, 0},
    {JS(LOOM_JOB_RUNNING), LOOM_JOB_EV_SPECIAL_EXIT, LOOM_JOB_PENDING,
     JF_CG | LOOM_JOB_F_REQUEUED | LOOM_JOB_F_SPECIAL_EXIT, 0, 0, 0},
    {JS_TERMINAL, LOOM_JOB_EV_REQUEUE, LOOM_JOB_PENDING, LOOM_JOB_F_REQUEUED, 0, 0, 0},
    {JS_TERMINAL, LOOM_JOB_EV_REQUEUE_HOLD, LOOM_JOB_PENDING,
     LOOM_JOB_F_REQUEUED | LOOM_JOB_F_REQUEUE_HOLD, 0, 0, 0},
    {JS_TERMINAL | JS(LOOM_JOB_PENDING), LOOM_JOB_EV_EPILOG_DONE, JS_SAME, 0,
     JF_CG | LOOM_JOB_F_REQUEUED, JF_CG, 0},
};

#define JOBSTATE_NROWS (sizeof(jobstate_table) / sizeof(jobstate_table[0]))

static const jobstate_row_t *jobstate_find(uint32_t from, loom_job_event_t ev)
{
    loom_job_state_t b = loom_job_base(from);
    if (b >= LOOM_JOB_STATE_COUNT)
        return NULL;
    for (size_t i = 0; i < JOBSTATE_NROWS; i++) {
        const jobstate_row_t *r = &jobstate_table[i];
        if (r->ev == ev && (r->from & JS(b)) && (from & r->needs) == r->needs &&
            !(from & r->unless))
            return r;
    }
    return NULL;
}

int loom_job_next_state(uint32_t from, loom_job_event_t ev, uint32_t *to)
{
    const jobstate_row_t *r = jobstate_find(from, ev);
    if (!r)
        return loom_job_state_is_terminal(from) ? -LOOM_EALREADY_DONE : -EINVAL;
    if (r->to == JS_SAME)
        *to = (from & ~r->clear) | r->set;
    else /* a new base state: only COMPLETING outlives the old one */
        *to = (uint32_t)r->to | r->set | (from & LOOM_JOB_F_COMPLETING);
    return 0;
}

bool loom_job_transition_ok(loom_job_state_t from, loom_job_state_t to)
{
    if (from >= LOOM_JOB_STATE_COUNT || to >= LOOM_JOB_STATE_COUNT)
        return false;
    for (size_t i = 0; i < JOBSTATE_NROWS; i++) {
        const jobstate_row_t *r = &jobstate_table[i];
        if ((r->from & JS(from)) && (r->to == (int)to || (r->to == JS_SAME && from == to)))
            return true;
    }
    return false;
}

const char *loom_job_event_name(loom_job_event_t ev)
{
    static const char *const names[LOOM_JOB_EV_COUNT] = {
        [LOOM_JOB_EV_START] = "start",
        [LOOM_JOB_EV_START_BOOT] = "start_boot",
        [LOOM_JOB_EV_BOOTED] = "booted",
        [LOOM_JOB_EV_BOOT_FAIL] = "boot_fail",
        [LOOM_JOB_EV_EXIT_OK] = "exit_ok",
        [LOOM_JOB_EV_EXIT_FAIL] = "exit_fail",
        [LOOM_JOB_EV_TIME_LIMIT] = "time_limit",
        [LOOM_JOB_EV_OOM] = "oom",
        [LOOM_JOB_EV_DEADLINE] = "deadline",
        [LOOM_JOB_EV_CANCEL] = "cancel",
        [LOOM_JOB_EV_NODE_FAIL] = "node_fail",
        [LOOM_JOB_EV_PREEMPT] = "preempt",
        [LOOM_JOB_EV_SUSPEND] = "suspend",
        [LOOM_JOB_EV_RESUME] = "resume",
        [LOOM_JOB_EV_REQUEUE] = "requeue",
        [LOOM_JOB_EV_REQUEUE_HOLD] = "requeue_hold",
        [LOOM_JOB_EV_SPECIAL_EXIT] = "special_exit",
        [LOOM_JOB_EV_RELEASE] = "release",
        [LOOM_JOB_EV_EPILOG_DONE] = "epilog_done",
    };
    return (unsigned)ev < LOOM_JOB_EV_COUNT ? names[ev] : "?";
}

/* test_jobstate.c - job state names and transitions (job-states.md). */
#include "common/jobstate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#define CG LOOM_JOB_F_COMPLETING
#define CF LOOM_JOB_F_CONFIGURING
#define RQ LOOM_JOB_F_REQUEUED
#define RH LOOM_JOB_F_REQUEUE_HOLD
#define SE LOOM_JOB_F_SPECIAL_EXIT

static void test_names(void **state)
{
    static const struct {
        uint32_t state;
        const char *lng, *shrt;
        bool terminal;
    } cases[] = {
        {LOOM_JOB_PENDING, "PENDING", "PD", false},
        {LOOM_JOB_RUNNING, "RUNNING", "R", false},
        {LOOM_JOB_SUSPENDED, "SUSPENDED", "S", false},
        {LOOM_JOB_COMPLETED, "COMPLETED", "CD", true},
        {LOOM_JOB_CANCELLED, "CANCELLED", "CA", true},
        {LOOM_JOB_FAILED, "FAILED", "F", true},
        {LOOM_JOB_TIMEOUT, "TIMEOUT", "TO", true},
        {LOOM_JOB_NODE_FAIL, "NODE_FAIL", "NF", true},
        {LOOM_JOB_PREEMPTED, "PREEMPTED", "PR", true},
        {LOOM_JOB_BOOT_FAIL, "BOOT_FAIL", "BF", true},
        {LOOM_JOB_DEADLINE, "DEADLINE", "DL", true},
        {LOOM_JOB_OUT_OF_MEMORY, "OUT_OF_MEMORY", "OOM", true},
        {LOOM_JOB_COMPLETED | CG, "COMPLETING", "CG", true},
        {LOOM_JOB_RUNNING | CF, "CONFIGURING", "CF", false},
        {LOOM_JOB_PENDING | CG | RQ, "COMPLETING", "CG", false},
        {LOOM_JOB_PENDING | RQ, "REQUEUED", "RQ", false},
        {LOOM_JOB_PENDING | RH | RQ, "REQUEUED", "RQ", false},
        {LOOM_JOB_PENDING | RH, "REQUEUE_HOLD", "RH", false},
        {LOOM_JOB_PENDING | SE, "SPECIAL_EXIT", "SE", false},
        {LOOM_JOB_RUNNING | LOOM_JOB_F_SIGNALING, "SIGNALING", "SI", false},
        {LOOM_JOB_RUNNING | LOOM_JOB_F_STAGE_OUT | CF, "STAGE_OUT", "SO", false},
        {LOOM_JOB_STATE_COUNT, "UNKNOWN", "?", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_string_equal(loom_job_state_name(cases[i].state), cases[i].lng);
        assert_string_equal(loom_job_state_short(cases[i].state), cases[i].shrt);
        assert_int_equal(loom_job_state_is_terminal(cases[i].state), cases[i].terminal);
    }
}

static void test_list(void **state)
{
    loom_strv_t sv = LOOM_STRV_INIT;
    loom_job_state_list(LOOM_JOB_COMPLETED | CG, &sv);
    assert_int_equal(sv.n, 2);
    assert_string_equal(sv.v[0], "COMPLETED");
    assert_string_equal(sv.v[1], "COMPLETING");
    loom_strv_free(&sv);
    loom_job_state_list(LOOM_JOB_PENDING, &sv);
    assert_int_equal(sv.n, 1);
    assert_string_equal(sv.v[0], "PENDING");
    loom_strv_free(&sv);
}

static void test_parse(void **state)
{
    static const struct {
        const char *s;
        int rc;
        uint32_t state;
    } cases[] = {
        {"PENDING", 0, LOOM_JOB_PENDING},
        {"pd", 0, LOOM_JOB_PENDING},
        {"Running", 0, LOOM_JOB_RUNNING},
        {"r", 0, LOOM_JOB_RUNNING},
        {"cd", 0, LOOM_JOB_COMPLETED},
        {"completed", 0, LOOM_JOB_COMPLETED},
        {"OOM", 0, LOOM_JOB_OUT_OF_MEMORY},
        {"out_of_memory", 0, LOOM_JOB_OUT_OF_MEMORY},
        {"CG", 0, CG},
        {"completing", 0, CG},
        {"cf", 0, CF},
        {"requeue_hold", 0, RH},
        {"se", 0, SE},
        {"nf", 0, LOOM_JOB_NODE_FAIL},
        {"", -LOOM_EPARSE, 0},
        {"RUN", -LOOM_EPARSE, 0},
        {"PD ", -LOOM_EPARSE, 0},
        {"DONE", -LOOM_EPARSE, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t st = 0xdead;
        loom_err_t err;
        int rc = loom_job_state_parse(cases[i].s, &st, &err);
        if (rc != cases[i].rc)
            fail_msg("'%s': rc %d", cases[i].s, rc);
        if (rc == 0)
            assert_int_equal(st, cases[i].state);
        else {
            assert_int_equal(st, 0xdead);
            assert_non_null(strstr(err.msg, "Invalid job state"));
        }
    }
    /* Every printed name parses back to what printed it. */
    for (uint32_t b = 0; b < LOOM_JOB_STATE_COUNT; b++) {
        uint32_t st;
        assert_int_equal(loom_job_state_parse(loom_job_state_name(b), &st, NULL), 0);
        assert_int_equal(st, b);
        assert_int_equal(loom_job_state_parse(loom_job_state_short(b), &st, NULL), 0);
        assert_int_equal(st, b);
    }
}

/* The rows of job-states.md §2, as (from, event) -> to. */
static void test_next_state(void **state)
{
    static const struct {
        uint32_t from;
        loom_job_event_t ev;
        int rc;
        uint32_t to;
    } cases[] = {
        {LOOM_JOB_PENDING, LOOM_JOB_EV_START, 0, LOOM_JOB_RUNNING},
        {LOOM_JOB_PENDING, LOOM_JOB_EV_START_BOOT, 0, LOOM_JOB_RUNNING | CF},
        {LOOM_JOB_RUNNING | CF, LOOM_JOB_EV_BOOTED, 0, LOOM_JOB_RUNNING},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_BOOTED, -EINVAL, 0},
        {LOOM_JOB_RUNNING | CF, LOOM_JOB_EV_BOOT_FAIL, 0, LOOM_JOB_BOOT_FAIL | CG},
        {LOOM_JOB_PENDING, LOOM_JOB_EV_CANCEL, 0, LOOM_JOB_CANCELLED},
        {LOOM_JOB_PENDING | RH, LOOM_JOB_EV_CANCEL, 0, LOOM_JOB_CANCELLED},
        {LOOM_JOB_PENDING, LOOM_JOB_EV_DEADLINE, 0, LOOM_JOB_DEADLINE},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_EXIT_OK, 0, LOOM_JOB_COMPLETED | CG},
        {LOOM_JOB_RUNNING | CF, LOOM_JOB_EV_EXIT_OK, 0, LOOM_JOB_COMPLETED | CG},
        {LOOM_JOB_COMPLETED | CG, LOOM_JOB_EV_EPILOG_DONE, 0, LOOM_JOB_COMPLETED},
        {LOOM_JOB_COMPLETED, LOOM_JOB_EV_EPILOG_DONE, -LOOM_EALREADY_DONE, 0},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_EXIT_FAIL, 0, LOOM_JOB_FAILED | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_TIME_LIMIT, 0, LOOM_JOB_TIMEOUT | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_OOM, 0, LOOM_JOB_OUT_OF_MEMORY | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_NODE_FAIL, 0, LOOM_JOB_NODE_FAIL | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_CANCEL, 0, LOOM_JOB_CANCELLED | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_PREEMPT, 0, LOOM_JOB_PREEMPTED | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_DEADLINE, 0, LOOM_JOB_DEADLINE | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_SUSPEND, 0, LOOM_JOB_SUSPENDED},
        {LOOM_JOB_RUNNING | CF, LOOM_JOB_EV_SUSPEND, -EINVAL, 0},
        {LOOM_JOB_SUSPENDED, LOOM_JOB_EV_RESUME, 0, LOOM_JOB_RUNNING},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_RESUME, -EINVAL, 0},
        {LOOM_JOB_SUSPENDED, LOOM_JOB_EV_CANCEL, 0, LOOM_JOB_CANCELLED | CG},
        {LOOM_JOB_SUSPENDED, LOOM_JOB_EV_NODE_FAIL, 0, LOOM_JOB_NODE_FAIL | CG},
        {LOOM_JOB_SUSPENDED, LOOM_JOB_EV_TIME_LIMIT, -EINVAL, 0},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_REQUEUE, 0, LOOM_JOB_PENDING | CG | RQ},
        {LOOM_JOB_PENDING | CG | RQ, LOOM_JOB_EV_START, -EINVAL, 0},
        {LOOM_JOB_PENDING | CG | RQ, LOOM_JOB_EV_EPILOG_DONE, 0, LOOM_JOB_PENDING},
        {LOOM_JOB_PENDING | CG | RQ, LOOM_JOB_EV_CANCEL, 0, LOOM_JOB_CANCELLED | CG},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_REQUEUE_HOLD, 0, LOOM_JOB_PENDING | CG | RQ | RH},
        {LOOM_JOB_PENDING | CG | RQ | RH, LOOM_JOB_EV_EPILOG_DONE, 0, LOOM_JOB_PENDING | RH},
        {LOOM_JOB_PENDING | RH, LOOM_JOB_EV_START, -EINVAL, 0},
        {LOOM_JOB_PENDING | RH, LOOM_JOB_EV_RELEASE, 0, LOOM_JOB_PENDING},
        {LOOM_JOB_RUNNING, LOOM_JOB_EV_SPECIAL_EXIT, 0, LOOM_JOB_PENDING | CG | RQ | SE},
        {LOOM_JOB_PENDING | SE, LOOM_JOB_EV_RELEASE, 0, LOOM_JOB_PENDING},
        {LOOM_JOB_PENDING, LOOM_JOB_EV_REQUEUE, -EINVAL, 0},
        {LOOM_JOB_COMPLETED, LOOM_JOB_EV_REQUEUE, 0, LOOM_JOB_PENDING | RQ},
        {LOOM_JOB_FAILED | CG, LOOM_JOB_EV_REQUEUE, 0, LOOM_JOB_PENDING | RQ | CG},
        {LOOM_JOB_CANCELLED, LOOM_JOB_EV_REQUEUE_HOLD, 0, LOOM_JOB_PENDING | RQ | RH},
        {LOOM_JOB_COMPLETED, LOOM_JOB_EV_CANCEL, -LOOM_EALREADY_DONE, 0},
        {LOOM_JOB_TIMEOUT | CG, LOOM_JOB_EV_START, -LOOM_EALREADY_DONE, 0},
        {LOOM_JOB_PENDING, LOOM_JOB_EV_EXIT_OK, -EINVAL, 0},
        {LOOM_JOB_STATE_COUNT, LOOM_JOB_EV_CANCEL, -EINVAL, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t to = 0xdead;
        int rc = loom_job_next_state(cases[i].from, cases[i].ev, &to);
        if (rc != cases[i].rc || (rc == 0 && to != cases[i].to))
            fail_msg("case %zu: %s --%s--> rc %d state %#x, want rc %d state %#x", i,
                     loom_job_state_name(cases[i].from), loom_job_event_name(cases[i].ev), rc, to,
                     cases[i].rc, cases[i].to);
        if (rc < 0)
            assert_int_equal(to, 0xdead);
    }
}

static void test_transition_ok(void **state)
{
    static const struct {
        loom_job_state_t from, to;
        bool ok;
    } cases[] = {
        {LOOM_JOB_PENDING, LOOM_JOB_RUNNING, true},
        {LOOM_JOB_PENDING, LOOM_JOB_CANCELLED, true},
        {LOOM_JOB_PENDING, LOOM_JOB_PENDING, true}, /* release */
        {LOOM_JOB_PENDING, LOOM_JOB_COMPLETED, false},
        {LOOM_JOB_PENDING, LOOM_JOB_SUSPENDED, false},
        {LOOM_JOB_RUNNING, LOOM_JOB_COMPLETED, true},
        {LOOM_JOB_RUNNING, LOOM_JOB_FAILED, true},
        {LOOM_JOB_RUNNING, LOOM_JOB_TIMEOUT, true},
        {LOOM_JOB_RUNNING, LOOM_JOB_NODE_FAIL, true},
        {LOOM_JOB_RUNNING, LOOM_JOB_PENDING, true},
        {LOOM_JOB_RUNNING, LOOM_JOB_SUSPENDED, true},
        {LOOM_JOB_RUNNING, LOOM_JOB_RUNNING, true}, /* booted */
        {LOOM_JOB_SUSPENDED, LOOM_JOB_RUNNING, true},
        {LOOM_JOB_SUSPENDED, LOOM_JOB_COMPLETED, false},
        {LOOM_JOB_SUSPENDED, LOOM_JOB_TIMEOUT, false},
        {LOOM_JOB_COMPLETED, LOOM_JOB_PENDING, true}, /* requeue */
        {LOOM_JOB_COMPLETED, LOOM_JOB_RUNNING, false},
        {LOOM_JOB_COMPLETED, LOOM_JOB_FAILED, false},
        {LOOM_JOB_CANCELLED, LOOM_JOB_CANCELLED, true}, /* epilog_done */
        {LOOM_JOB_STATE_COUNT, LOOM_JOB_PENDING, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (loom_job_transition_ok(cases[i].from, cases[i].to) != cases[i].ok)
            fail_msg("case %zu: %s -> %s", i, loom_job_state_name(cases[i].from),
                     loom_job_state_name(cases[i].to));
    /* Nothing leads from a terminal state to another terminal state. */
    for (uint32_t a = LOOM_JOB_COMPLETED; a < LOOM_JOB_STATE_COUNT; a++)
        for (uint32_t b = LOOM_JOB_COMPLETED; b < LOOM_JOB_STATE_COUNT; b++)
            assert_int_equal(loom_job_transition_ok(a, b), a == b);
}

/* Invariants of job-states.md §3 hold for every reachable state word. */
static void test_invariants(void **state)
{
    uint32_t seen[256];
    size_t n = 0;
    seen[n++] = LOOM_JOB_PENDING;
    for (size_t i = 0; i < n; i++) {
        for (int ev = 0; ev < LOOM_JOB_EV_COUNT; ev++) {
            uint32_t to;
            if (loom_job_next_state(seen[i], ev, &to) < 0)
                continue;
            loom_job_state_t b = loom_job_base(to);
            if (to & CF)
                assert_int_equal(b, LOOM_JOB_RUNNING);
            if (to & (RH | SE))
                assert_int_equal(b, LOOM_JOB_PENDING);
            assert_true(loom_job_transition_ok(loom_job_base(seen[i]), b));
            bool known = false;
            for (size_t j = 0; j < n; j++)
                known |= seen[j] == to;
            if (!known) {
                assert_true(n < 256);
                seen[n++] = to;
            }
        }
    }
    assert_true(n > 20);
    assert_string_equal(loom_job_event_name(LOOM_JOB_EV_EPILOG_DONE), "epilog_done");
    assert_string_equal(loom_job_event_name(LOOM_JOB_EV_COUNT), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),         cmocka_unit_test(test_list),
        cmocka_unit_test(test_parse),         cmocka_unit_test(test_next_state),
        cmocka_unit_test(test_transition_ok), cmocka_unit_test(test_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

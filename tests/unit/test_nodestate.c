/* test_nodestate.c - node state names (node-states.md, CLI_SPEC §7.3). */
#include "common/nodestate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define IDLE    LOOM_NODE_IDLE
#define ALLOC   LOOM_NODE_ALLOCATED
#define MIXED   LOOM_NODE_MIXED
#define DOWN    LOOM_NODE_DOWN
#define UNK     LOOM_NODE_UNKNOWN
#define FUTURE  LOOM_NODE_FUTURE
#define DRAIN   LOOM_NODE_F_DRAIN
#define COMP    LOOM_NODE_F_COMPLETING
#define NORESP  LOOM_NODE_F_NO_RESPOND
#define MAINT   LOOM_NODE_F_MAINT
#define PWRD    LOOM_NODE_F_POWERED_DOWN
#define PWRUP   LOOM_NODE_F_POWERING_UP
#define PWRINGD LOOM_NODE_F_POWERING_DOWN
#define PWRDN   LOOM_NODE_F_POWER_DOWN
#define RBREQ   LOOM_NODE_F_REBOOT_REQUESTED
#define RBISS   LOOM_NODE_F_REBOOT_ISSUED
#define PLAN    LOOM_NODE_F_PLANNED
#define RES     LOOM_NODE_F_RESERVED
#define FAIL    LOOM_NODE_F_FAIL

static const struct {
    uint32_t state;
    const char *complete, *lng, *cmp;
} cases[] = {
    {IDLE, "IDLE", "idle", "idle"},
    {ALLOC, "ALLOCATED", "allocated", "alloc"},
    {MIXED, "MIXED", "mixed", "mix"},
    {DOWN, "DOWN", "down", "down"},
    {UNK, "UNKNOWN", "unknown", "unk"},
    {FUTURE, "FUTURE", "future", "futr"},
    {IDLE | DRAIN, "IDLE+DRAIN", "drained", "drain"},
    {MIXED | DRAIN, "MIXED+DRAIN", "draining", "drng"},
    {ALLOC | DRAIN, "ALLOCATED+DRAIN", "draining", "drng"},
    {IDLE | DRAIN | COMP, "IDLE+COMPLETING+DRAIN", "draining", "drng"},
    {DOWN | DRAIN | NORESP, "DOWN+DRAIN+NOT_RESPONDING", "drained*", "drain*"},
    {IDLE | NORESP, "IDLE+NOT_RESPONDING", "idle*", "idle*"},
    {DOWN | NORESP, "DOWN+NOT_RESPONDING", "down*", "down*"},
    {UNK | NORESP, "UNKNOWN+NOT_RESPONDING", "unknown*", "unk*"},
    {IDLE | PWRD, "IDLE+POWERED_DOWN", "idle~", "idle~"},
    {IDLE | PWRUP, "IDLE+POWERING_UP", "idle#", "idle#"},
    {IDLE | PWRINGD, "IDLE+POWERING_DOWN", "idle%", "idle%"},
    {IDLE | PWRDN, "IDLE+POWER_DOWN", "idle!", "idle!"},
    {IDLE | PWRD | NORESP, "IDLE+POWERED_DOWN+NOT_RESPONDING", "idle~", "idle~"},
    {ALLOC | COMP, "ALLOCATED+COMPLETING", "allocated+", "alloc+"},
    {ALLOC | COMP | NORESP, "ALLOCATED+COMPLETING+NOT_RESPONDING", "allocated*", "alloc*"},
    {IDLE | COMP, "IDLE+COMPLETING", "completing", "comp"},
    {MIXED | COMP, "MIXED+COMPLETING", "completing", "comp"},
    {IDLE | MAINT, "IDLE+MAINTENANCE", "maint", "maint"},
    {IDLE | MAINT | NORESP, "IDLE+MAINTENANCE+NOT_RESPONDING", "maint*", "maint*"},
    {ALLOC | MAINT, "ALLOCATED+MAINTENANCE", "allocated$", "alloc$"},
    {IDLE | DRAIN | MAINT, "IDLE+DRAIN+MAINTENANCE", "drained$", "drain$"},
    {IDLE | RBREQ, "IDLE+REBOOT_REQUESTED", "reboot", "boot"},
    {IDLE | RBISS, "IDLE+REBOOT_ISSUED", "reboot^", "boot^"},
    {DOWN | RBREQ | NORESP, "DOWN+REBOOT_REQUESTED+NOT_RESPONDING", "reboot*", "boot*"},
    {MIXED | RBREQ, "MIXED+REBOOT_REQUESTED", "mixed@", "mix@"},
    {ALLOC | RBISS, "ALLOCATED+REBOOT_ISSUED", "allocated^", "alloc^"},
    {IDLE | RES, "IDLE+RESERVED", "reserved", "resv"},
    {IDLE | PLAN, "IDLE+PLANNED", "planned", "plnd"},
    {MIXED | PLAN, "MIXED+PLANNED", "mixed-", "mix-"},
    {IDLE | FAIL, "IDLE+FAIL", "fail", "fail"},
    {ALLOC | FAIL, "ALLOCATED+FAIL", "failing", "failg"},
    {IDLE | FAIL | NORESP, "IDLE+FAIL+NOT_RESPONDING", "fail*", "fail*"},
    {IDLE | LOOM_NODE_F_INVALID_REG, "IDLE+INVALID_REG", "inval", "inval"},
    {FUTURE | NORESP, "FUTURE+NOT_RESPONDING", "future*", "futr*"},
    {IDLE | LOOM_NODE_F_CLOUD | PWRD, "IDLE+CLOUD+POWERED_DOWN", "idle~", "idle~"},
};

static void test_forms(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t c = LOOM_SBUF_INIT, l = LOOM_SBUF_INIT, s = LOOM_SBUF_INIT;
        loom_node_state_complete(cases[i].state, &c);
        loom_node_state_sinfo(cases[i].state, false, &l);
        loom_node_state_sinfo(cases[i].state, true, &s);
        if (strcmp(loom_sbuf_str(&c), cases[i].complete) ||
            strcmp(loom_sbuf_str(&l), cases[i].lng) || strcmp(loom_sbuf_str(&s), cases[i].cmp))
            fail_msg("case %zu: got %s %s %s, want %s %s %s", i, loom_sbuf_str(&c),
                     loom_sbuf_str(&l), loom_sbuf_str(&s), cases[i].complete, cases[i].lng,
                     cases[i].cmp);
        loom_sbuf_free(&c);
        loom_sbuf_free(&l);
        loom_sbuf_free(&s);
    }
}

/* The complete form parses back exactly. */
static void test_parse_complete_roundtrip(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t st = 0;
        loom_err_t err;
        if (loom_node_state_parse(cases[i].complete, &st, &err) != 0)
            fail_msg("'%s': %s", cases[i].complete, err.msg);
        assert_int_equal(st, cases[i].state);
    }
}

static void test_parse_words(void **state)
{
    static const struct {
        const char *s;
        int rc;
        uint32_t state;
    } words[] = {
        {"idle", 0, IDLE},
        {"IDLE", 0, IDLE},
        {"alloc", 0, ALLOC},
        {"Allocated", 0, ALLOC},
        {"mix", 0, MIXED},
        {"drain", 0, IDLE | DRAIN},
        {"DRAINED", 0, IDLE | DRAIN},
        {"drng", 0, ALLOC | DRAIN},
        {"draining", 0, ALLOC | DRAIN},
        {"idle*", 0, IDLE | NORESP},
        {"down*", 0, DOWN | NORESP},
        {"drain*", 0, IDLE | DRAIN | NORESP},
        {"idle~", 0, IDLE | PWRD},
        {"alloc+", 0, ALLOC | COMP},
        {"mix-", 0, MIXED | PLAN},
        {"resv", 0, IDLE | RES},
        {"unk", 0, UNK},
        {"futr", 0, FUTURE},
        {"no_respond", 0, NORESP},
        {"NOT_RESPONDING", 0, NORESP},
        {"powered_down", 0, PWRD},
        {"boot^", 0, IDLE | RBREQ | RBISS},
        {"", -LOOM_EPARSE, 0},
        {"*", -LOOM_EPARSE, 0},
        {"idle**", -LOOM_EPARSE, 0},
        {"busy", -LOOM_EPARSE, 0},
        {"IDLE+DRAIN+", -LOOM_EPARSE, 0},
        {"IDLE++DRAIN", -LOOM_EPARSE, 0},
        {"+DRAIN", -LOOM_EPARSE, 0},
        {"IDLE+BOGUS", -LOOM_EPARSE, 0},
        {"drain+DRAIN", -LOOM_EPARSE, 0},
        {"idle?", -LOOM_EPARSE, 0},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        uint32_t st = 0xdead;
        loom_err_t err;
        int rc = loom_node_state_parse(words[i].s, &st, &err);
        if (rc != words[i].rc || (rc == 0 && st != words[i].state))
            fail_msg("'%s': rc %d state %#x, want rc %d state %#x", words[i].s, rc, st, words[i].rc,
                     words[i].state);
        if (rc < 0) {
            assert_int_equal(st, 0xdead);
            assert_non_null(strstr(err.msg, "Invalid node state"));
        }
    }
}

static void test_list(void **state)
{
    loom_strv_t sv = LOOM_STRV_INIT;
    loom_node_state_list(IDLE | DRAIN | NORESP, &sv);
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[0], "IDLE");
    assert_string_equal(sv.v[1], "DRAIN");
    assert_string_equal(sv.v[2], "NOT_RESPONDING");
    loom_strv_free(&sv);
    assert_string_equal(loom_node_base_name(LOOM_NODE_BASE_COUNT), "INVALID");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_parse_complete_roundtrip),
        cmocka_unit_test(test_parse_words),
        cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

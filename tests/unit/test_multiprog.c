/* test_multiprog.c - srun --multi-prog configuration files. */
#include "common/multiprog.h"
#include "common/sbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define N_(a) (sizeof(a) / sizeof((a)[0]))

static const char *const CONF = "# a comment\n"
                                "\n"
                                "0      ./ctl --verbose\n"
                                "1-3,5  ./worker rank=%t offset=%o\n"
                                "*      'idle prog' \"a b\" # trailing comment\n";

static void test_multiprog_argv(void **state)
{
    static const struct {
        uint32_t rank;
        const char *want; /* words joined by '|' */
    } cases[] = {
        {0, "./ctl|--verbose"},
        {1, "./worker|rank=1|offset=0"},
        {3, "./worker|rank=3|offset=2"},
        {5, "./worker|rank=5|offset=3"},
        {4, "idle prog|a b"},
        {6, "idle prog|a b"},
    };
    for (size_t i = 0; i < N_(cases); i++) {
        loom_strv_t argv = LOOM_STRV_INIT;
        assert_int_equal(loom_multiprog_argv(CONF, 7, cases[i].rank, &argv, NULL), 0);
        loom_sbuf_t got = LOOM_SBUF_INIT;
        for (size_t k = 0; k < argv.n; k++)
            loom_sbuf_addf(&got, "%s%s", k ? "|" : "", argv.v[k]);
        assert_string_equal(loom_sbuf_str(&got), cases[i].want);
        loom_sbuf_free(&got);
        loom_strv_free(&argv);
    }
}

static void test_multiprog_check(void **state)
{
    static const struct {
        const char *text;
        uint32_t ntasks;
        int rc;
        const char *msg;
    } cases[] = {
        {"0-3 prog\n", 4, 0, NULL},
        {"0 a\n* b\n", 8, 0, NULL},
        {"0-2 prog\n", 4, -LOOM_EPARSE, "no program for task 3"},
        {"0-3 a\n2 b\n", 4, -LOOM_EPARSE, "task 2 is named twice"},
        {"0-4 prog\n", 4, -LOOM_EPARSE, "invalid task list '0-4'"},
        {"x prog\n", 4, -LOOM_EPARSE, "invalid task list 'x'"},
        {"0\n", 1, -LOOM_EPARSE, "without a program"},
        {"0 'open\n", 1, -LOOM_EPARSE, "unterminated quote"},
        {"", 2, -LOOM_EPARSE, "no program for task 0"},
    };
    for (size_t i = 0; i < N_(cases); i++) {
        loom_err_t err = {0};
        assert_int_equal(loom_multiprog_check(cases[i].text, cases[i].ntasks, &err), cases[i].rc);
        if (cases[i].msg && !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
    }
    loom_strv_t argv = LOOM_STRV_INIT;
    loom_err_t err = {0};
    assert_int_equal(loom_multiprog_argv("0 a\n", 2, 1, &argv, &err), -LOOM_EPARSE);
    assert_int_equal(argv.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multiprog_argv),
        cmocka_unit_test(test_multiprog_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

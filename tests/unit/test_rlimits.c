/* test_rlimits.c - which limits are carried, their variables, and their use. */
#include "common/err.h"
#include "common/jobenv.h"
#include "common/rlimits.h"
#include "common/strv.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

static size_t count(const bool sel[LOOM_RLIMIT_N])
{
    size_t n = 0;
    for (size_t i = 0; i < LOOM_RLIMIT_N; i++)
        n += sel[i];
    return n;
}

static void test_select(void **state)
{
    bool sel[LOOM_RLIMIT_N];
    loom_err_t err = {0};
    assert_int_equal(loom_rlimits_select(NULL, NULL, sel, &err), 0);
    assert_int_equal(count(sel), LOOM_RLIMIT_N);
    assert_int_equal(loom_rlimits_select("", "MEMLOCK,CORE", sel, &err), 0);
    assert_int_equal(count(sel), LOOM_RLIMIT_N - 2);
    assert_int_equal(loom_rlimits_select("NONE", NULL, sel, &err), 0);
    assert_int_equal(count(sel), 0);
    assert_int_equal(loom_rlimits_select("STACK,NOFILE", "NONE", sel, &err), 0);
    assert_int_equal(count(sel), 2);
    assert_int_equal(loom_rlimits_select("ALL", "AS", sel, &err), 0);
    assert_int_equal(count(sel), LOOM_RLIMIT_N - 1);
    /* Slurm takes the upper-case names only */
    assert_int_equal(loom_rlimits_select("STACK,stack", NULL, sel, &err), -EINVAL);
    assert_string_equal(err.msg, "Bad rlimit name: stack");
}

/* This process's limits out, back in, and applied: the same values. */
static void test_round_trip(void **state)
{
    bool sel[LOOM_RLIMIT_N];
    loom_strv_t env = LOOM_STRV_INIT;
    loom_jobenv_set(&env, "KEEP", "1");
    assert_int_equal(loom_rlimits_select("STACK,NOFILE", NULL, sel, NULL), 0);
    struct rlimit before;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
    struct rlimit lower = {before.rlim_cur > 64 ? 64 : before.rlim_cur, before.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lower), 0);
    loom_rlimits_env(sel, &env);
    assert_string_equal(loom_jobenv_get(&env, "SLURM_RLIMIT_NOFILE"), "64");
    assert_non_null(loom_jobenv_get(&env, "SLURM_RLIMIT_STACK"));
    assert_null(loom_jobenv_get(&env, "SLURM_RLIMIT_CORE"));
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &before), 0);
    loom_rlimit_set_t set;
    loom_jobenv_set(&env, "SLURM_RLIMIT_CPU", "bogus"); /* dropped */
    loom_rlimits_take(&env, &set);
    assert_int_equal(set.n, 2);
    assert_null(loom_jobenv_get(&env, "SLURM_RLIMIT_NOFILE"));
    assert_null(loom_jobenv_get(&env, "SLURM_RLIMIT_CPU"));
    assert_string_equal(loom_jobenv_get(&env, "KEEP"), "1");
    loom_rlimits_apply(&set);
    struct rlimit now;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
    assert_int_equal(now.rlim_cur, 64);
    assert_int_equal(now.rlim_max, before.rlim_max); /* the hard limit stays */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &before), 0);
    loom_strv_free(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

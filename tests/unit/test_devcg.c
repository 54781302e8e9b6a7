/* test_devcg.c - the devices-cgroup rules that confine a step to its GPUs. */
#include "common/devcg.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Four NVIDIA-like GPUs (c 195:0-3), one plain file (emulated), one GPU
 * sharing GPU 0's device. */
static const loom_devcg_gpu_t gpus4[] = {
    {0, 'c', 195, 0}, {1, 'c', 195, 1}, {2, 'c', 195, 2}, {3, 'c', 195, 3}};
static const loom_devcg_gpu_t mixed[] = {
    {0, 'c', 195, 0}, {1, 0, 0, 0}, {2, 'b', 8, 16}, {3, 'c', 195, 0}};

static void rules_text(const loom_devcg_gpu_t *g, size_t n, const uint32_t *allowed, size_t na,
                       loom_sbuf_t *out)
{
    loom_strv_t deny = LOOM_STRV_INIT;
    size_t added = loom_devcg_rules(g, n, allowed, na, &deny);
    assert_int_equal(added, deny.n);
    for (size_t i = 0; i < deny.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? ";" : "", deny.v[i]);
    loom_strv_free(&deny);
}

static void test_devcg_rules(void **state)
{
    static const uint32_t none[1] = {0}, one[] = {1}, two[] = {3, 0}, all[] = {0, 1, 2, 3},
                          alien[] = {7}, zero[] = {0}, three[] = {3};
    static const struct {
        const loom_devcg_gpu_t *gpus;
        size_t n;
        const uint32_t *allowed;
        size_t na;
        const char *want;
    } cases[] = {
        {gpus4, 4, one, 1, "c 195:0 rwm;c 195:2 rwm;c 195:3 rwm"},
        {gpus4, 4, two, 2, "c 195:1 rwm;c 195:2 rwm"},
        {gpus4, 4, all, 4, ""},
        {gpus4, 4, none, 0, "c 195:0 rwm;c 195:1 rwm;c 195:2 rwm;c 195:3 rwm"},
        {gpus4, 4, alien, 1, "c 195:0 rwm;c 195:1 rwm;c 195:2 rwm;c 195:3 rwm"},
        {gpus4, 0, one, 1, ""},
        /* plain files give no rule; a device shared with an allowed GPU is
         * never denied; a device shared by two denied GPUs is denied once */
        {mixed, 4, zero, 1, "b 8:16 rwm"},
        {mixed, 4, one, 1, "c 195:0 rwm;b 8:16 rwm"},
        {mixed, 4, none, 0, "c 195:0 rwm;b 8:16 rwm"},
        {mixed, 4, three, 1, "b 8:16 rwm"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        rules_text(cases[i].gpus, cases[i].n, cases[i].allowed, cases[i].na, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].want) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
    }
}

static void test_devcg_stat(void **state)
{
    loom_devcg_gpu_t g = {5, 'x', 1, 1};
    loom_devcg_stat("/dev/null", &g);
    assert_int_equal(g.kind, 'c');
    assert_int_equal(g.major, 1);
    assert_int_equal(g.minor, 3);
    assert_int_equal(g.index, 5);
    loom_devcg_stat("test_devcg.c", &g); /* cwd is tests/unit: a plain file */
    assert_int_equal(g.kind, 0);
    loom_devcg_stat("/nonexistent/gpu0", &g);
    assert_int_equal(g.kind, 0);
    loom_devcg_stat(NULL, &g);
    assert_int_equal(g.kind, 0);
}

/* A root without devices.deny (cgroup v2, or not a cgroup at all) is refused
 * and leaves the output untouched. */
static void test_devcg_confine_unsupported(void **state)
{
    loom_strv_t deny = LOOM_STRV_INIT;
    loom_strv_add(&deny, "c 195:1 rwm");
    loom_devcg_t *cg = (loom_devcg_t *)&deny;
    loom_err_t err = {0};
    int rc =
        loom_devcg_confine("/nonexistent-devices-root", "n1", 5, 0, &deny, getpid(), &cg, &err);
    assert_int_equal(rc, -ENOTSUP);
    assert_ptr_equal(cg, (loom_devcg_t *)&deny);
    assert_non_null(strstr(err.msg, "/nonexistent-devices-root"));
    loom_devcg_release(NULL);
    loom_strv_free(&deny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devcg_rules),
        cmocka_unit_test(test_devcg_stat),
        cmocka_unit_test(test_devcg_confine_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

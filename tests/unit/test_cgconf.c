/* test_cgconf.c - cgroup.conf: keys, values, errors, the memory limit. */
#include "common/cgconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int parse(const char *text, loom_cgconf_t *c, loom_err_t *err)
{
    loom_cgconf_init(c);
    return loom_cgconf_parse("cgroup.conf", text, strlen(text), c, err);
}

static void test_cgconf_defaults_and_keys(void **state)
{
    loom_cgconf_t c;
    loom_err_t err = {0};
    assert_int_equal(parse("", &c, &err), 0);
    assert_string_equal(c.mountpoint, "/sys/fs/cgroup");
    assert_string_equal(c.plugin, "autodetect");
    assert_false(c.constrain_cores || c.constrain_ram || c.constrain_swap || c.constrain_devices);
    loom_cgconf_free(&c);
    const char *text = "# Slurm's own example\nCgroupAutomount=yes\nconstraincores=YES\n"
                       "ConstrainRAMSpace=yes ConstrainDevices=yes\nAllowedRAMSpace=90.5\n"
                       "CgroupMountpoint=/tmp/cg\nCgroupPlugin=cgroup/v2\nMinRAMSpace=64\n"
                       "ConstrainSwapSpace=no AllowedSwapSpace=10\n";
    assert_int_equal(parse(text, &c, &err), 0);
    assert_true(c.constrain_cores && c.constrain_ram && c.constrain_devices);
    assert_false(c.constrain_swap);
    assert_true(c.allowed_ram > 90.4 && c.allowed_ram < 90.6);
    assert_string_equal(c.mountpoint, "/tmp/cg");
    assert_string_equal(c.plugin, "cgroup/v2");
    assert_int_equal(c.min_ram_mib, 64);
    loom_cgconf_free(&c);
}

static void test_cgconf_errors(void **state)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"ConstrainCores=yes\nConstrainRam=yes\n",
         "cgroup.conf:2: unknown cgroup.conf key 'ConstrainRam'"},
        {"ConstrainCores=maybe\n", "cgroup.conf:1: ConstrainCores=maybe: expected yes or no"},
        {"AllowedRAMSpace=-5\n", "cgroup.conf:1: AllowedRAMSpace=-5: expected a percentage"},
        {"AllowedRAMSpace=5x\n", "cgroup.conf:1: AllowedRAMSpace=5x: expected a percentage"},
        {"CgroupMountpoint=sys/fs\n",
         "cgroup.conf:1: CgroupMountpoint=sys/fs: expected an absolute UTF-8 path"},
        {"CgroupMountpoint=/sys/\x9a\x8c\n",
         "cgroup.conf:1: CgroupMountpoint=/sys/\x9a\x8c: expected an absolute UTF-8 path"},
        {"CgroupPlugin=cgroup/v3\n",
         "cgroup.conf:1: CgroupPlugin=cgroup/v3: expected autodetect, cgroup/v1 or cgroup/v2"},
        {"\n\nMinRAMSpace=lots\n", "cgroup.conf:3: MinRAMSpace=lots: expected a size in megabytes"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_cgconf_t c;
        loom_err_t err = {0};
        assert_true(parse(cases[i].text, &c, &err) < 0);
        assert_string_equal(err.msg, cases[i].msg);
        loom_cgconf_free(&c);
    }
}

static void test_cgconf_task_plugin(void **state)
{
    static const struct {
        const char *v;
        bool on;
    } cases[] = {
        {"task/cgroup", true},
        {"task/affinity,task/cgroup", true},
        {"task/cgroup,task/affinity", true},
        {"task/none", false},
        {"task/cgroupx", false},
        {"xtask/cgroup", false},
        {"", false},
        {NULL, false},
    };
    for (size_t i = 0; i < N(cases); i++)
        assert_int_equal(loom_cgconf_task_cgroup(cases[i].v), cases[i].on);
}

static void test_cgconf_ram_limit_and_json(void **state)
{
    loom_cgconf_t c, back;
    loom_err_t err = {0};
    assert_int_equal(
        parse("ConstrainRAMSpace=yes\nAllowedRAMSpace=150\nMaxRAMPercent=50\n", &c, &err), 0);
    assert_int_equal(loom_cgconf_ram_limit(&c, 1000, 4000), 0); /* not task/cgroup */
    c.task_cgroup = true;
    assert_int_equal(loom_cgconf_ram_limit(&c, 1000, 4000), 1500);
    assert_int_equal(loom_cgconf_ram_limit(&c, 3000, 4000), 2000); /* MaxRAMPercent */
    assert_int_equal(loom_cgconf_ram_limit(&c, 10, 4000), 30);     /* MinRAMSpace */
    assert_int_equal(loom_cgconf_ram_limit(&c, 0, 4000), 0);
    json_t *j = loom_cgconf_to_json(&c);
    loom_cgconf_init(&back);
    loom_cgconf_from_json(j, &back);
    assert_true(back.task_cgroup && back.constrain_ram && !back.constrain_cores);
    assert_int_equal(loom_cgconf_ram_limit(&back, 1000, 4000), 1500);
    assert_string_equal(back.mountpoint, "/sys/fs/cgroup");
    json_decref(j);
    loom_cgconf_free(&back);
    loom_cgconf_free(&c);
}

static void test_cgconf_missing_file(void **state)
{
    loom_cgconf_t c;
    loom_err_t err = {0};
    loom_cgconf_init(&c);
    assert_int_equal(loom_cgconf_load("/nonexistent/cgroup.conf", &c, &err), 0);
    assert_false(c.constrain_ram);
    loom_cgconf_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgconf_defaults_and_keys),
        cmocka_unit_test(test_cgconf_errors),
        cmocka_unit_test(test_cgconf_task_plugin),
        cmocka_unit_test(test_cgconf_ram_limit_and_json),
        cmocka_unit_test(test_cgconf_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

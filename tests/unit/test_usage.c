/* test_usage.c - step usage summaries: per node, merged over nodes, records. */
#include "common/usage.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static int64_t get(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("'%s' missing", key);
    return (int64_t)json_integer_value(v);
}

static const char *gets(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "(none)";
}

/* Two tasks on one node: maxima with their task, means, sums, the least CPU. */
static void test_node(void **state)
{
    loom_usage_task_t t[2] = {
        {.rank = 4,
         .max_rss = 1000,
         .max_vmsize = 5000,
         .rss_sum = 1800,
         .vmsize_sum = 9000,
         .samples = 2,
         .user_us = 700,
         .sys_us = 300,
         .disk_read = 10,
         .disk_write = 99},
        {.rank = 5,
         .max_rss = 3000,
         .max_vmsize = 4000,
         .samples = 0, /* ended before a sample: its peak is its mean */
         .user_us = 100,
         .sys_us = 50,
         .disk_read = 20,
         .disk_write = 1},
    };
    json_t *o = loom_usage_node_json("n1", t, 2, 120, -1);
    static const struct {
        const char *key;
        int64_t want;
    } cases[] = {
        {"ntasks", 2},         {"max_rss", 3000},      {"max_rss_task", 5},
        {"ave_rss", 1950},     {"max_vmsize", 5000},   {"max_vmsize_task", 4},
        {"ave_vmsize", 4250},  {"total_cpu", 1150},    {"user_cpu", 800},
        {"system_cpu", 350},   {"min_cpu", 150},       {"min_cpu_task", 5},
        {"max_disk_read", 20}, {"max_disk_write", 99}, {"max_disk_write_task", 4},
        {"gpu_time", 120},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (get(o, cases[i].key) != cases[i].want)
            fail_msg("%s: %lld, expected %lld", cases[i].key, (long long)get(o, cases[i].key),
                     (long long)cases[i].want);
    assert_string_equal(gets(o, "max_rss_node"), "n1");
    assert_null(json_object_get(o, "gpu_util"));
    json_decref(o);
    /* no task at all: zeros */
    o = loom_usage_node_json("n2", NULL, 0, 0, 250);
    assert_int_equal(get(o, "max_rss"), 0);
    assert_int_equal(get(o, "gpu_util"), 100);
    json_decref(o);
}

/* Nodes merged: the larger maximum keeps its node, weighted means, sums. */
static void test_merge(void **state)
{
    static const char *const nodes[] = {
        "{\"node\":\"n1\",\"ntasks\":1,\"max_rss\":100,\"max_rss_node\":\"n1\",\"max_rss_task\":0,"
        "\"ave_rss\":100,\"total_cpu\":10,\"user_cpu\":6,\"system_cpu\":4,\"min_cpu\":10,"
        "\"max_disk_read\":5,\"gpu_time\":10,\"gpu_util\":80}",
        "{\"node\":\"n2\",\"ntasks\":3,\"max_rss\":400,\"max_rss_node\":\"n2\",\"max_rss_task\":3,"
        "\"ave_rss\":200,\"total_cpu\":30,\"user_cpu\":20,\"system_cpu\":10,\"min_cpu\":4,"
        "\"max_disk_read\":2,\"gpu_time\":30,\"gpu_util\":40}",
        "{\"node\":\"n3\",\"ntasks\":0,\"max_rss\":\"bad\"}",
    };
    json_t *acc = json_object();
    for (size_t i = 0; i < 3; i++) {
        json_t *n = json_loads(nodes[i], 0, NULL);
        assert_non_null(n);
        loom_usage_merge(acc, n);
        json_decref(n);
    }
    static const struct {
        const char *key;
        int64_t want;
    } cases[] = {
        {"ntasks", 4},        {"max_rss", 400}, {"max_rss_task", 3}, {"ave_rss", 175},
        {"total_cpu", 40},    {"user_cpu", 26}, {"system_cpu", 14},  {"min_cpu", 0},
        {"max_disk_read", 5}, {"gpu_time", 40}, {"gpu_util", 50},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (get(acc, cases[i].key) != cases[i].want)
            fail_msg("%s: %lld, expected %lld", cases[i].key, (long long)get(acc, cases[i].key),
                     (long long)cases[i].want);
    assert_string_equal(gets(acc, "max_rss_node"), "n2");
    assert_string_equal(gets(acc, "max_disk_read_node"), "n1");
    assert_string_equal(gets(acc, "min_cpu_node"), "n3");

    json_t *rec = loom_usage_record(acc);
    static const char *const keys[] = {
        "max_rss",   "ave_rss",  "max_vmsize", "max_rss_node",  "max_rss_task",
        "total_cpu", "user_cpu", "system_cpu", "max_disk_read", "max_disk_write",
        "gpu_time",  "gpu_util", "usage_more"};
    size_t have = 0;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        have += json_object_get(rec, keys[i]) != NULL;
    assert_int_equal(have, json_object_size(rec));
    assert_null(json_object_get(rec, "ntasks"));
    assert_int_equal(get(rec, "max_rss"), 400);
    const json_t *more = json_object_get(rec, "usage_more");
    assert_int_equal(get(more, "min_cpu"), 0);
    assert_string_equal(gets(more, "min_cpu_node"), "n3");
    assert_null(json_object_get(more, "ave_rss_node"));
    json_decref(rec);
    json_decref(acc);
}

static void test_gather_freq(void **state)
{
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {NULL, 30},
        {"", 30},
        {"30", 30},
        {"1", 1},
        {"0", 0},
        {"task=5", 5},
        {"energy=10,task=2", 2},
        {"task=3,network=9", 3},
        {"energy=10", 30},
        {"task=x", 30},
        {"5s", 30},
        {"mytask=4", 30},
        {"99999999", 86400},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (loom_usage_gather_freq(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, expected %d", cases[i].text ? cases[i].text : "(null)",
                     loom_usage_gather_freq(cases[i].text), cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_gather_freq),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

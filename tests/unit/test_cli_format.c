/* test_cli_format.c - column formats of the commands (src/cli/cli_format.c). */
#include "cli/cli_format.h"
#include "common/jobstate.h"
#include "common/nodestate.h"
#include "common/timefmt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

/* A record for the test table: three strings. */
typedef struct {
    const char *id, *name, *state;
} rec_t;

static int get_id(const void *ctx, const void *r, loom_sbuf_t *out)
{
    loom_sbuf_add(out, ((const rec_t *)r)->id);
    return 0;
}
static int get_name(const void *ctx, const void *r, loom_sbuf_t *out)
{
    loom_sbuf_add(out, ((const rec_t *)r)->name);
    return 0;
}
static int get_state(const void *ctx, const void *r, loom_sbuf_t *out)
{
    loom_sbuf_add(out, ((const rec_t *)r)->state);
    return 0;
}
/* An elapsed time: may overflow a right-justified column. */
static int get_time(const void *ctx, const void *r, loom_sbuf_t *out)
{
    loom_sbuf_add(out, "1-02:04:00");
    return LOOM_FMT_NOCUT;
}

static const loom_fmt_col_t cols[] = {
    {'i', "JobID", "JOBID", 0, get_id, 0},
    {'j', "Name", "NAME", 0, get_name, 0},
    {'T', "State", "STATE", 0, get_state, 0},
    {'l', "TimeLimit", "TIME_LIMIT", 0, get_state, 0},
    {'M', "TimeUsed", "TIME", 0, get_time, 0},
    {'N', "NodeList", "NODELIST", 0, get_name, LOOM_FMT_HDR_NOCUT},
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static char *render(const char *spec, bool lng, const rec_t *r, char **bad)
{
    loom_fmt_t f = LOOM_FMT_INIT;
    loom_strv_t b = LOOM_STRV_INIT;
    if (lng)
        loom_fmt_parse_long(spec, cols, NCOLS, &f, &b);
    else
        loom_fmt_parse(spec, cols, NCOLS, 0, &f, &b);
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_fmt_header(&f, &out);
    if (r)
        loom_fmt_row(&f, NULL, r, &out);
    loom_sbuf_t bs = LOOM_SBUF_INIT;
    for (size_t i = 0; i < b.n; i++)
        loom_sbuf_addf(&bs, "%s%s", i ? "," : "", b.v[i]);
    *bad = loom_sbuf_detach(&bs);
    loom_strv_free(&b);
    loom_fmt_free(&f);
    return loom_sbuf_detach(&out);
}

static void test_short_formats(void **state)
{
    static const struct {
        const char *spec, *out, *bad;
    } cases[] = {
        /* right-justified, truncated header (squeue -l's TIME_LIMI) */
        {"%.18i %.9l", "             JOBID TIME_LIMI\n               123 averyvery\n", ""},
        {"%i|%j", "JOBID|NAME\n123|averyveryverylongname\n", ""},
        {"%.8j", "    NAME\naveryver\n", ""},
        {"%5i|%0i|%.0i", "JOBID|JOBID|JOBID\n123  |123|123\n", ""},
        {"abc%i xyz", "abcJOBID xyz\nabc123 xyz\n", ""},
        {"%%%i%%", "%JOBID%\n%123%\n", ""},
        {"%-5i|%z|", "%-5i|%z|\n%-5i|%z|\n", "-,z"},
        /* a lone '%' at the end is dropped; "%5" is kept (squeue/sinfo 22.05.8) */
        {"%i%", "JOBID\n123\n", ""},
        {"%i|%5", "JOBID|%5\n123|%5\n", ""},
        {"", "\n\n", ""},
        {"%10T|", "STATE     |\naveryveryl|\n", ""},
        /* squeue: elapsed times and node-list headers overflow right-justified columns */
        {"%.3M|%3M|%.3N", "TIM|TIM|NODELIST\n1-02:04:00|1-0|ave\n", ""},
    };
    rec_t r = {"123", "averyveryverylongname", "averyverylongstate"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *bad;
        char *s = render(cases[i].spec, false, &r, &bad);
        assert_string_equal(s, cases[i].out);
        assert_string_equal(bad, cases[i].bad);
        free(s);
        free(bad);
    }
}

static void test_long_formats(void **state)
{
    static const struct {
        const char *spec, *out, *bad;
    } cases[] = {
        {"JobID,Name",
         "JOBID               NAME                \n"
         "7                   averyveryverylongnam\n",
         ""},
        {"jobid:.5,NAME:3,state:.,TimeLimit:20|",
         "JOBIDNAMSTATETIME_LIMIT          |\n"
         "    7aveRUNNINGRUNNING             |\n",
         ""},
        {"JobID:10 ,Bogus,Name:4", "JOBID      NAME\n7          aver\n", "Bogus"},
        /* an unknown field's suffix is still printed, as text (squeue/sinfo 22.05) */
        {"Bogus:5x,JobID:3", "xJOB\nx7  \n", "Bogus"},
        {"JobID:3|,Bogus:.2#", "JOB|#\n7  |#\n", "Bogus"},
        {",,", "\n\n", ""},
    };
    rec_t r = {"7", "averyveryverylongname", "RUNNING"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *bad;
        char *s = render(cases[i].spec, true, &r, &bad);
        assert_string_equal(s, cases[i].out);
        assert_string_equal(bad, cases[i].bad);
        free(s);
        free(bad);
    }
}

static void test_auto_width(void **state)
{
    loom_fmt_t f = LOOM_FMT_INIT;
    loom_fmt_parse("%#j %.5i", cols, NCOLS, LOOM_FMT_AUTO, &f, NULL);
    loom_fmt_set_auto(&f, get_name, 12);
    assert_true(loom_fmt_has(&f, get_id));
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_fmt_header(&f, &out);
    assert_string_equal(loom_sbuf_str(&out), "NAME         JOBID\n");
    loom_fmt_free(&f);
    /* without LOOM_FMT_AUTO '#' is not a field modifier */
    loom_strv_t bad = LOOM_STRV_INIT;
    loom_fmt_parse("%#j", cols, NCOLS, 0, &f, &bad);
    assert_int_equal(bad.n, 1);
    assert_string_equal(bad.v[0], "#");
    loom_strv_free(&bad);
    loom_fmt_free(&f);
    loom_sbuf_free(&out);
}

static void test_time_rendering(void **state)
{
    static const struct {
        int64_t secs;
        const char *elapsed, *limit;
    } cases[] = {
        {0, "0:00", "00:00:00"},
        {307, "5:07", "00:05:07"},
        {3723, "1:02:03", "01:02:03"},
        {172800, "2-00:00:00", "2-00:00:00"},
        {93840, "1-02:04:00", "1-02:04:00"},
        {LOOM_TIME_INFINITE, "UNLIMITED", "UNLIMITED"},
        {LOOM_TIME_NOT_SET, "NOT_SET", "NOT_SET"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
        loom_time_fmt_elapsed(cases[i].secs, &a);
        loom_time_fmt_limit(cases[i].secs, &b);
        assert_string_equal(loom_sbuf_str(&a), cases[i].elapsed);
        assert_string_equal(loom_sbuf_str(&b), cases[i].limit);
        loom_sbuf_free(&a);
        loom_sbuf_free(&b);
    }
}

static void test_date_line(void **state)
{
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_fmt_date_line(1795266612, &out); /* TZ=UTC in the test run */
    assert_string_equal(loom_sbuf_str(&out), "Sat Nov 21 13:10:12 2026\n");
    loom_sbuf_reset(&out);
    loom_fmt_date_line(1794387600, &out);
    assert_string_equal(loom_sbuf_str(&out), "Wed Nov 11 09:00:00 2026\n");
    loom_sbuf_free(&out);
}

static void test_json_accessors(void **state)
{
    json_t *o = json_pack("{s:s, s:i, s:b, s:f, s:n}", "a", "x", "n", 42, "t", 1, "d", 1.5, "z");
    assert_string_equal(loom_js(o, "a"), "x");
    assert_null(loom_js(o, "n"));
    assert_string_equal(loom_js_or(o, "q", "dflt"), "dflt");
    assert_int_equal(loom_ji(o, "n", -1), 42);
    assert_int_equal(loom_ji(o, "a", -1), -1);
    assert_int_equal(loom_ji(o, "missing", 7), 7);
    assert_true(loom_jb(o, "t", false));
    assert_true(loom_jhas(o, "a"));
    assert_false(loom_jhas(o, "z"));
    assert_true(loom_jd(o, "d", 0) == 1.5);
    json_decref(o);
}

static void test_job_records(void **state)
{
    static const struct {
        const char *json, *id, *state_name;
        int64_t runtime;
    } cases[] = {
        {"{\"job_id\":7,\"state\":[\"RUNNING\"],\"start_time\":100}", "7", "RUNNING", 50},
        {"{\"job_id\":9,\"array_job_id\":4,\"array_task_id\":3,\"state\":\"PENDING\"}", "4_3",
         "PENDING", 0},
        {"{\"job_id\":4,\"array_job_id\":4,\"array_task_str\":\"5-9%2\",\"state\":[\"PENDING\"]}",
         "4_[5-9%2]", "PENDING", 0},
        {"{\"job_id\":5,\"state\":[\"COMPLETED\",\"COMPLETING\"],\"start_time\":100,"
         "\"end_time\":130}",
         "5", "COMPLETING", 30},
        {"{\"job_id\":6,\"state\":[\"SUSPENDED\"],\"start_time\":100,\"suspend_time\":110,"
         "\"pre_sus_time\":10}",
         "6", "SUSPENDED", 10},
        /* resumed at 120 after 10 s run: suspended time is not run time */
        {"{\"job_id\":7,\"state\":[\"RUNNING\"],\"start_time\":100,\"suspend_time\":120,"
         "\"pre_sus_time\":10}",
         "7", "RUNNING", 40},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = json_loads(cases[i].json, 0, NULL);
        assert_non_null(j);
        loom_sbuf_t id = LOOM_SBUF_INIT;
        loom_cli_job_id(j, &id);
        assert_string_equal(loom_sbuf_str(&id), cases[i].id);
        assert_string_equal(loom_job_state_name(loom_cli_job_state(j)), cases[i].state_name);
        assert_int_equal(loom_cli_job_runtime(j, 150), cases[i].runtime);
        loom_sbuf_free(&id);
        json_decref(j);
    }
}

static void test_job_limits_and_files(void **state)
{
    json_t *j = json_pack("{s:i, s:i, s:s, s:s, s:s}", "job_id", 12, "time_limit", 90, "name",
                          "train", "work_dir", "/w", "std_err", "err-%x-%4j.txt");
    assert_int_equal(loom_cli_job_limit(j), 5400);
    loom_sbuf_t s = LOOM_SBUF_INIT;
    loom_cli_job_stdio(j, 'o', &s);
    assert_string_equal(loom_sbuf_str(&s), "/w/slurm-12.out");
    loom_sbuf_reset(&s);
    loom_cli_job_stdio(j, 'e', &s);
    assert_string_equal(loom_sbuf_str(&s), "/w/err-train-0012.txt");
    loom_sbuf_reset(&s);
    loom_cli_job_stdio(j, 'i', &s);
    assert_string_equal(loom_sbuf_str(&s), "/dev/null");
    json_object_set_new(j, "time_limit", json_integer(-1));
    assert_int_equal(loom_cli_job_limit(j), LOOM_TIME_INFINITE);
    json_object_del(j, "time_limit");
    assert_int_equal(loom_cli_job_limit(j), LOOM_TIME_NOT_SET);
    loom_sbuf_free(&s);
    json_decref(j);
}

static void test_node_state_lists(void **state)
{
    static const struct {
        const char *json, *complete, *compact;
    } cases[] = {
        {"{\"state\":[\"IDLE\"]}", "IDLE", "idle"},
        {"{\"state\":[\"DOWN\",\"DRAIN\",\"NOT_RESPONDING\"]}", "DOWN+DRAIN+NOT_RESPONDING",
         "drain*"},
        {"{\"state\":[\"MIXED\",\"DRAIN\"]}", "MIXED+DRAIN", "drng"},
        {"{\"state\":\"IDLE+DRAIN\"}", "IDLE+DRAIN", "drain"},
        {"{\"state\":[\"UNKNOWN\",\"NOT_RESPONDING\"]}", "UNKNOWN+NOT_RESPONDING", "unk*"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = json_loads(cases[i].json, 0, NULL);
        uint32_t st = loom_cli_node_state(j);
        loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
        loom_node_state_complete(st, &a);
        loom_node_state_sinfo(st, true, &b);
        assert_string_equal(loom_sbuf_str(&a), cases[i].complete);
        assert_string_equal(loom_sbuf_str(&b), cases[i].compact);
        loom_sbuf_free(&a);
        loom_sbuf_free(&b);
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_formats),    cmocka_unit_test(test_long_formats),
        cmocka_unit_test(test_auto_width),       cmocka_unit_test(test_time_rendering),
        cmocka_unit_test(test_date_line),        cmocka_unit_test(test_json_accessors),
        cmocka_unit_test(test_job_records),      cmocka_unit_test(test_job_limits_and_files),
        cmocka_unit_test(test_node_state_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_sacct_fields.c - sacct's field formatters (CLI_SPEC §8). */
#include "cli/sacct_fields.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static void test_cpu_time(void **state)
{
    static const struct {
        int64_t usec;
        const char *want;
    } cases[] = {
        {0, "00:00:00"},           {32000, "00:00.032"},     {61500000, "01:01.500"},
        {3599999000, "59:59.999"}, {3600000000, "01:00:00"}, {90061000000, "1-01:01:01"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        sacct_cpu_time(cases[i].usec, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
    }
}

static void test_fields(void **state)
{
    json_t *job =
        json_loads("{\"job_id\":4,\"array_job_id\":3,\"array_task_id\":1,\"name\":\"arr\","
                   "\"state\":\"CANCELLED\",\"cancelled_by\":0,\"exit_code\":2304,"
                   "\"start_time\":100,\"end_time\":3761,\"num_cpus\":4,"
                   "\"time_limit\":525600,\"mem_per_node\":4096,\"submit_time\":90}",
                   0, NULL);
    json_t *step = json_loads("{\"step_id\":\"batch\",\"max_rss\":12212,\"ncpus\":2,"
                              "\"start_time\":100,\"end_time\":160,\"exit_code\":9}",
                              0, NULL);
    static const struct {
        const char *field;
        int on_step;
        const char *want;
    } cases[] = {
        {"JobID", 0, "3_1"},
        {"JobIDRaw", 0, "4"},
        {"JobID", 1, "3_1.batch"},
        {"JobIDRaw", 1, "4.batch"},
        {"State", 0, "CANCELLED by 0"},
        {"ExitCode", 0, "9:0"},
        {"ExitCode", 1, "0:9"},
        {"Elapsed", 0, "01:01:01"},
        {"ElapsedRaw", 0, "3661"},
        {"CPUTime", 0, "04:04:04"},
        {"CPUTimeRAW", 1, "120"},
        {"Timelimit", 0, "365-00:00:00"},
        {"TimelimitRaw", 0, "525600"},
        {"Timelimit", 1, ""},
        {"ReqMem", 0, "4G"},
        {"MaxRSS", 1, "12212K"},
        {"MaxRSS", 0, ""},
        {"Start", 0, "1970-01-01T00:01:40"},
        {"Submit", 1, "1970-01-01T00:01:40"},
        {"End", 1, "1970-01-01T00:02:40"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const sacct_field_t *f = sacct_field_find(cases[i].field, strlen(cases[i].field));
        assert_non_null(f);
        sacct_row_t r = {.job = job, .step = cases[i].on_step ? step : NULL, .now = 10000};
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        f->fmt(&r, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].want) != 0)
            fail_msg("%s (step %d): '%s', expected '%s'", cases[i].field, cases[i].on_step,
                     loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
    }
    assert_null(sacct_field_find("Bogus", 5));
    assert_non_null(sacct_field_find("jobid", 5));
    json_decref(job);
    json_decref(step);
}

/* ReqMem as sacct 22.05 prints it: the whole request (ReqTRES's mem=), no 'c'
 * or 'n' suffix; and the fields tools ask for that have no data in Loom. */
static void test_reqmem_and_tool_fields(void **state)
{
    static const struct {
        const char *job;
        const char *field;
        int on_step;
        const char *want;
    } cases[] = {
        {"{\"tres_req\":\"billing=2,cpu=2,mem=200M,node=1\",\"mem_per_cpu\":100}", "ReqMem", 0,
         "200M"},
        {"{\"tres_req\":\"cpu=1,mem=2G,node=1\"}", "ReqMem", 0, "2G"},
        {"{\"mem_per_cpu\":100,\"num_cpus\":3}", "ReqMem", 0, "300M"},
        {"{\"mem_per_node\":512,\"num_nodes\":2}", "ReqMem", 0, "1G"},
        {"{\"tres_req\":\"cpu=1,mem=2G\"}", "ReqMem", 1, ""},
        {"{\"cluster\":\"c1\"}", "Cluster", 1, "c1"},
        {"{\"num_nodes\":2}", "AllocNodes", 0, "0"},
        {"{\"num_nodes\":2,\"start_time\":5}", "AllocNodes", 0, "2"},
        {"{\"num_nodes\":2,\"start_time\":5}", "AllocNodes", 1, "1"},
        {"{\"num_nodes\":2}", "ReqNodes", 1, "2"},
        {"{}", "NTasks", 0, ""},
        {"{}", "NTasks", 1, "3"},
        {"{}", "WCKeyID", 0, "0"},
        {"{}", "ConsumedEnergyRaw", 0, ""},
        {"{\"end_time\":9}", "ConsumedEnergyRaw", 0, "0"},
        {"{}", "AdminComment", 0, ""},
    };
    json_t *step = json_loads("{\"step_id\":0,\"ntasks\":3,\"nnodes\":1}", 0, NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *job = json_loads(cases[i].job, 0, NULL);
        const sacct_field_t *f = sacct_field_find(cases[i].field, strlen(cases[i].field));
        assert_non_null(f);
        sacct_row_t r = {.job = job, .step = cases[i].on_step ? step : NULL, .now = 10000};
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        f->fmt(&r, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].want) != 0)
            fail_msg("%s %s (step %d): '%s', expected '%s'", cases[i].job, cases[i].field,
                     cases[i].on_step, loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
        json_decref(job);
    }
    json_decref(step);
}

/* Usage figures as sacct 22.05 prints them (exact unit conversion). */
static void test_usage_fields(void **state)
{
    json_t *job = json_loads("{\"job_id\":7,\"state\":\"COMPLETED\",\"steps\":["
                             "{\"step_id\":\"batch\",\"total_cpu\":1500000,\"user_cpu\":1000000,"
                             "\"system_cpu\":500000},"
                             "{\"step_id\":0,\"total_cpu\":234000,\"user_cpu\":200000,"
                             "\"system_cpu\":34000}]}",
                             0, NULL);
    json_t *step = json_loads("{\"step_id\":0,\"max_rss\":204800,\"ave_rss\":1234,"
                              "\"max_vmsize\":0,\"max_rss_task\":3,\"max_disk_read\":2012,"
                              "\"max_disk_write\":1048576,\"total_cpu\":1234000,"
                              "\"user_cpu\":1000000,\"system_cpu\":234000}",
                              0, NULL);
    static const struct {
        const char *field;
        int on_step;
        const char *want;
    } cases[] = {
        {"MaxRSS", 1, "200M"},        {"AveRSS", 1, "1234K"},      {"MaxVMSize", 1, "0"},
        {"MaxRSSTask", 1, "3"},       {"MaxDiskRead", 1, "2012"},  {"MaxDiskWrite", 1, "1M"},
        {"TotalCPU", 1, "00:01.234"}, {"UserCPU", 1, "00:01.000"}, {"SystemCPU", 1, "00:00.234"},
        {"TotalCPU", 0, "00:01.734"}, {"UserCPU", 0, "00:01.200"}, {"SystemCPU", 0, "00:00.534"},
        {"MaxDiskRead", 0, ""},       {"MaxRSSTask", 0, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const sacct_field_t *f = sacct_field_find(cases[i].field, strlen(cases[i].field));
        assert_non_null(f);
        sacct_row_t r = {.job = job, .step = cases[i].on_step ? step : NULL, .now = 10000};
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        f->fmt(&r, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].want) != 0)
            fail_msg("%s (step %d): '%s', expected '%s'", cases[i].field, cases[i].on_step,
                     loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
    }
    static const struct {
        uint64_t bytes;
        const char *want;
    } sizes[] = {
        {0, "0"},           {1023, "1023"},
        {1024, "1K"},       {1264 * 1024, "1264K"},
        {3ull << 30, "3G"}, {(3ull << 30) + 4096, "3145732K"},
        {5ull << 50, "5P"}, {7ull << 60, "7168P"},
    };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        sacct_size(sizes[i].bytes, &sb);
        assert_string_equal(loom_sbuf_str(&sb), sizes[i].want);
        loom_sbuf_free(&sb);
    }
    json_decref(job);
    json_decref(step);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_time),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_reqmem_and_tool_fields),
        cmocka_unit_test(test_usage_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

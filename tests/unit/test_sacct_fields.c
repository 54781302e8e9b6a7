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
        {"MaxRSSTask", 1, "3"},       {"MaxDiskRead", 1, "0.00M"}, {"MaxDiskWrite", 1, "1.00M"},
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

/* The fields of 22.05 that read the supervisors' usage (usage.h), the job's
 * accounting fields, and their empty renderings; the wanted values are what
 * sacct 22.05.8 printed for a two-task srun step (bench/slurmdbd_local.sh). */
static void test_usage_more_fields(void **state)
{
    json_t *job = json_loads("{\"job_id\":1,\"qos\":\"normal\",\"num_cpus\":2,\"start_time\":100,"
                             "\"eligible_time\":100,\"end_time\":104,\"assoc_id\":2}",
                             0, NULL);
    json_t *pend = json_loads("{\"job_id\":2,\"num_cpus\":1,\"eligible_time\":13486,"
                              "\"state\":\"PENDING\",\"start_time\":13486}",
                              0, NULL);
    json_t *step = json_loads(
        "{\"step_id\":\"1\",\"ntasks\":2,\"nnodes\":1,\"max_rss\":1636,\"ave_rss\":1604,"
        "\"max_rss_node\":\"bn\",\"max_rss_task\":1,\"max_vmsize\":2920,\"total_cpu\":6000,"
        "\"max_disk_read\":6977,\"max_disk_write\":1,\"usage_more\":{\"min_rss\":1572,"
        "\"min_rss_node\":\"bn\",\"min_rss_task\":0,\"tot_rss\":3208,\"ave_vmsize\":2920,"
        "\"min_vmsize\":2920,\"tot_vmsize\":5840,\"max_vmsize_node\":\"bn\",\"max_vmsize_task\":0,"
        "\"ave_disk_read\":6977,\"min_disk_read\":6977,\"tot_disk_read\":13954,"
        "\"max_disk_read_node\":\"bn\",\"max_disk_read_task\":0,\"ave_disk_write\":1,"
        "\"min_disk_write\":1,\"tot_disk_write\":2,\"max_disk_write_node\":\"bn\","
        "\"max_disk_write_task\":0,\"min_cpu\":1000,\"min_cpu_node\":\"bn\",\"min_cpu_task\":1,"
        "\"max_cpu\":5000,\"max_cpu_node\":\"bn\",\"max_cpu_task\":0}}",
        0, NULL);
    json_t *held = json_loads("{\"job_id\":3,\"state\":\"CANCELLED\",\"priority\":0,"
                              "\"start_time\":500,\"end_time\":500,\"eligible_time\":400}",
                              0, NULL);
    json_t *batch = json_loads("{\"step_id\":\"batch\",\"ntasks\":1,\"nnodes\":1,"
                               "\"ave_rss\":100,\"usage_more\":{\"tot_rss\":3000}}",
                               0, NULL);
    static const struct {
        const char *field;
        int row; /* 0 job, 1 step, 2 batch, 3 pending job, 4 cancelled while held */
        const char *want;
    } cases[] = {
        {"TRESUsageInAve", 1, "cpu=00:00:00,energy=0,fs/disk=6977,mem=1604K,pages=0,vmem=2920K"},
        {"TRESUsageInMax", 1, "cpu=00:00:00,energy=0,fs/disk=6977,mem=1636K,pages=0,vmem=2920K"},
        {"TRESUsageInMin", 1, "cpu=00:00:00,energy=0,fs/disk=6977,mem=1572K,pages=0,vmem=2920K"},
        {"TRESUsageInTot", 1, "cpu=00:00:00,energy=0,fs/disk=13954,mem=3208K,pages=0,vmem=5840K"},
        {"TRESUsageInMaxNode", 1, "cpu=bn,energy=bn,fs/disk=bn,mem=bn,pages=bn,vmem=bn"},
        {"TRESUsageInMaxTask", 1, "cpu=0,fs/disk=0,mem=1,pages=0,vmem=0"},
        {"TRESUsageInMinTask", 1, "cpu=1,fs/disk=0,mem=0,pages=0,vmem=0"},
        {"TRESUsageOutAve", 1, "energy=0,fs/disk=1"},
        {"TRESUsageOutTot", 1, "energy=0,fs/disk=2"},
        {"TRESUsageOutMaxNode", 1, "energy=bn,fs/disk=bn"},
        {"TRESUsageOutMaxTask", 1, "fs/disk=0"},
        {"TRESUsageInTot", 0, ""},
        {"AveDiskRead", 1, "0.01M"},
        {"AveDiskWrite", 1, "0.00M"},
        {"MaxDiskReadNode", 1, "bn"},
        {"MaxDiskWriteTask", 1, "0"},
        {"AveVMSize", 1, "2920K"},
        {"MaxVMSizeNode", 1, "bn"},
        {"MinCPU", 1, "00:00:00"},
        {"MinCPUTask", 1, "1"},
        {"AveCPU", 1, "00:00:00"},
        {"AveCPU", 0, ""},
        {"AvePages", 1, "0"},
        {"MaxPagesNode", 1, "bn"},
        {"AveCPUFreq", 0, ""},
        {"Layout", 1, "Block"},
        {"Layout", 2, "Unknown"},
        {"Layout", 0, ""},
        {"ReqCPUFreq", 0, "Unknown"},
        {"ReqCPUFreqGov", 1, "Unknown"},
        {"ReqCPUFreqMin", 2, "0"},
        {"QOSRAW", 0, "1"},
        {"QOSRAW", 1, ""},
        {"AssocID", 1, "2"},
        {"DBIndex", 0, "0"},
        {"Flags", 0, "SchedMain,StartRecieved"},
        {"Flags", 3, "StartRecieved"},
        {"Flags", 1, ""},
        {"Reserved", 0, "00:00:00"},
        {"ResvCPURAW", 0, "0"},
        {"Reserved", 3, "INVALID"},
        {"ResvCPU", 3, "INVALID"},
        {"ResvCPURAW", 3, "4294963810"},
        {"Reserved", 1, ""},
        {"ReservationId", 0, ""},
        {"BlockID", 0, ""},
        {"AllocNodes", 3, "0"},
        {"Start", 3, "Unknown"},
        {"Start", 4, "None"},
        {"Eligible", 4, "Unknown"},
        {"Eligible", 0, "1970-01-01T00:01:40"},
        {"AveRSS", 2, "3000K"}, /* 22.05's mean of the tasks' peaks, not the samples' */
        {"AveRSS", 1, "1604K"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const sacct_field_t *f = sacct_field_find(cases[i].field, strlen(cases[i].field));
        if (!f)
            fail_msg("no field %s", cases[i].field);
        int row = cases[i].row;
        sacct_row_t r = {.job = row == 3   ? pend
                                : row == 4 ? held
                                           : job,
                         .step = row == 1   ? step
                                 : row == 2 ? batch
                                            : NULL,
                         .now = 10000};
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        f->fmt(&r, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].want) != 0)
            fail_msg("%s (row %d): '%s', expected '%s'", cases[i].field, row, loom_sbuf_str(&sb),
                     cases[i].want);
        loom_sbuf_free(&sb);
    }
    json_decref(job);
    json_decref(pend);
    json_decref(held);
    json_decref(step);
    json_decref(batch);
}

/* --helpformat lists 22.05's 109 fields in its order; widths as 22.05's. */
static void test_field_list(void **state)
{
    static const struct {
        size_t at;
        const char *name;
        int width;
    } cases[] = {
        {0, "Account", 10},
        {5, "AssocID", 7},
        {6, "AveCPU", 10},
        {10, "AvePages", 10},
        {15, "Comment", 14},
        {22, "DBIndex", 10},
        {35, "Layout", 9},
        {42, "MaxPages", 8},
        {43, "MaxPagesNode", 12},
        {44, "MaxPagesTask", 14},
        {62, "QOSRAW", 6},
        {64, "ReqCPUFreq", 10},
        {73, "ReservationId", 8},
        {74, "Reserved", 10},
        {76, "ResvCPURAW", 10},
        {87, "TRESUsageInAve", 14},
        {94, "TRESUsageInTot", 14},
        {99, "TRESUsageOutMin", 15},
        {101, "TRESUsageOutMinTask", 19},
        {108, "WorkDir", 20},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const sacct_field_t *f = sacct_field_at(cases[i].at);
        assert_non_null(f);
        assert_string_equal(f->name, cases[i].name);
        assert_int_equal(f->width, cases[i].width);
    }
    assert_null(sacct_field_at(109));
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (int64_t b = 0; b <= 4; b++) { /* sacct_disk_mb: 0, 0.05M, 1.00M, 20.70M, 2G */
        static const int64_t in[] = {0, 52580, 1048576, 21700615, 2147483648};
        static const char *const want[] = {"0", "0.05M", "1.00M", "20.70M", "2G"};
        loom_sbuf_reset(&sb);
        sacct_disk_mb(in[b], &sb);
        assert_string_equal(loom_sbuf_str(&sb), want[b]);
    }
    loom_sbuf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_time),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_reqmem_and_tool_fields),
        cmocka_unit_test(test_usage_fields),
        cmocka_unit_test(test_usage_more_fields),
        cmocka_unit_test(test_field_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

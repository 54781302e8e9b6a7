/* test_procstat.c - parsers of /proc/PID/{stat,status,io} and cgroup files. */
#include "common/procstat.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

/* Real lines, a name with blanks and parentheses, a kernel thread, errors. */
static void test_stat(void **state)
{
    static const struct {
        const char *text;
        int rc;
        int pid, ppid, pgrp, sid;
        char st;
        uint64_t utime, stime, cutime, cstime, vsize, rss;
    } cases[] = {
        {"4242 (python3) R 4200 4242 4100 34816 4242 4194304 52000 0 0 0 95 4 0 0 20 0 1 0 "
         "123456 229883904 51456 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 1 0 0 "
         "0 0 0\n",
         0, 4242, 4200, 4242, 4100, 'R', 95, 4, 0, 0, 229883904, 51456},
        {"77 (a b) (c)) S 1 77 77 0 -1 4194560 10 20 0 0 7 3 11 5 20 0 1 0 99 1000 2\n", 0, 77, 1,
         77, 77, 'S', 7, 3, 11, 5, 1000, 2},
        {"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0 18446744073709551615 "
         "0 0 0 0 0 0 0 2147483647 0 0 0 0 0 0 0 0 0\n",
         0, 2, 0, 0, 0, 'S', 0, 0, 0, 0, 0, 0},
        /* a zombie keeps its times */
        {"9 (sh) Z 8 9 9 0 -1 4227084 0 0 0 0 50 25 0 0 20 0 1 0 5 0 0\n", 0, 9, 8, 9, 9, 'Z', 50,
         25, 0, 0, 0, 0},
        {.text = "", .rc = -LOOM_EPARSE},
        {.text = "12 python3 R 1 2 3", .rc = -LOOM_EPARSE},
        {.text = "12 (x) 5 1 2 3", .rc = -LOOM_EPARSE},
        {.text = "12 (x) R 1 2 3 4 5 6\n", .rc = -LOOM_EPARSE},
        {.text = "12 (x) R 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 19 20 21\n",
         .rc = -LOOM_EPARSE},
        {.text = "(x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
         .rc = -LOOM_EPARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_procstat_t p = {.pid = -5};
        loom_err_t err = {0};
        int rc = loom_procstat_parse_stat(cases[i].text, &p, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d (%s), expected %d", i, rc, err.msg, cases[i].rc);
        if (rc < 0) {
            assert_int_equal(p.pid, -5); /* untouched */
            assert_true(err.msg[0] != '\0');
            continue;
        }
        assert_int_equal(p.pid, cases[i].pid);
        assert_int_equal(p.ppid, cases[i].ppid);
        assert_int_equal(p.pgrp, cases[i].pgrp);
        assert_int_equal(p.sid, cases[i].sid);
        assert_int_equal(p.state, cases[i].st);
        assert_int_equal(p.utime, cases[i].utime);
        assert_int_equal(p.stime, cases[i].stime);
        assert_int_equal(p.cutime, cases[i].cutime);
        assert_int_equal(p.cstime, cases[i].cstime);
        assert_int_equal(p.vsize, cases[i].vsize);
        assert_int_equal(p.rss_pages, cases[i].rss);
    }
}

static const char status_python[] = "Name:\tpython3\n"
                                    "Umask:\t0022\n"
                                    "State:\tR (running)\n"
                                    "Tgid:\t4242\n"
                                    "VmPeak:\t  230008 kB\n"
                                    "VmSize:\t  224496 kB\n"
                                    "VmLck:\t       0 kB\n"
                                    "VmHWM:\t  211240 kB\n"
                                    "VmRSS:\t  205824 kB\n"
                                    "RssAnon:\t  200000 kB\n"
                                    "Threads:\t1\n";

static void test_status(void **state)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t rss, hwm, size, peak;
    } cases[] = {
        {status_python, 0, 205824, 211240, 224496, 230008},
        {"Name:\tkthreadd\nState:\tS (sleeping)\nThreads:\t1\n", 0, 0, 0, 0, 0},
        {"Name:\tx\nVmRSS:\t12 kB", 0, 12, 0, 0, 0},
        {.text = "Name:\tx\nVmRSS:\tlots kB\n", .rc = -LOOM_EPARSE},
        {.text = "State:\tR\n", .rc = -LOOM_EPARSE},
        {.text = "", .rc = -LOOM_EPARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_procstatus_t st = {.vm_rss = 99};
        int rc = loom_procstat_parse_status(cases[i].text, &st, NULL);
        assert_int_equal(rc, cases[i].rc);
        if (rc < 0) {
            assert_int_equal(st.vm_rss, 99);
            continue;
        }
        assert_int_equal(st.vm_rss, cases[i].rss);
        assert_int_equal(st.vm_hwm, cases[i].hwm);
        assert_int_equal(st.vm_size, cases[i].size);
        assert_int_equal(st.vm_peak, cases[i].peak);
    }
}

static void test_io(void **state)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t rchar, wchar, rb, wb;
    } cases[] = {
        {"rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n"
         "read_bytes: 0\nwrite_bytes: 323932160\ncancelled_write_bytes: 0\n",
         0, 323934931, 323929600, 0, 323932160},
        {"rchar: 5\nwchar: 6\n", 0, 5, 6, 0, 0},
        {.text = "rchar: x\n", .rc = -LOOM_EPARSE},
        {.text = "wchar: 6\n", .rc = -LOOM_EPARSE},
        {.text = "", .rc = -LOOM_EPARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_procio_t io = {.rchar = 99};
        int rc = loom_procstat_parse_io(cases[i].text, &io, NULL);
        assert_int_equal(rc, cases[i].rc);
        if (rc < 0) {
            assert_int_equal(io.rchar, 99);
            continue;
        }
        assert_int_equal(io.rchar, cases[i].rchar);
        assert_int_equal(io.wchar, cases[i].wchar);
        assert_int_equal(io.read_bytes, cases[i].rb);
        assert_int_equal(io.write_bytes, cases[i].wb);
    }
}

/* memory.peak, memory.max_usage_in_bytes, cpuacct.usage_user: one number. */
static void test_cg_u64(void **state)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t v;
    } cases[] = {
        {"219152384\n", 0, 219152384},
        {"0\n", 0, 0},
        {"max\n", 0, UINT64_MAX},
        {"1234", 0, 1234},
        {.text = "12 34\n", .rc = -LOOM_EPARSE},
        {.text = "-1\n", .rc = -LOOM_EPARSE},
        {.text = "abc\n", .rc = -LOOM_EPARSE},
        {.text = "", .rc = -LOOM_EPARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 7;
        int rc = loom_cgstat_parse_u64(cases[i].text, &v, NULL);
        assert_int_equal(rc, cases[i].rc);
        assert_int_equal(v, rc == 0 ? cases[i].v : 7);
    }
}

static const char cpu_stat_v2[] = "usage_usec 1523301\n"
                                  "user_usec 1402010\n"
                                  "system_usec 121291\n"
                                  "nr_periods 0\n"
                                  "nr_throttled 0\n"
                                  "throttled_usec 0\n";
static const char cpuacct_stat_v1[] = "user 140\nsystem 12\n";
static const char memory_stat_v1[] = "cache 4096\nrss 209715200\nrss_huge 0\ntotal_rss 209715200\n";

/* "key value" files: cpu.stat (v2), cpuacct.stat and memory.stat (v1). */
static void test_cg_key(void **state)
{
    static const struct {
        const char *text, *key;
        int rc;
        uint64_t v;
    } cases[] = {
        {cpu_stat_v2, "user_usec", 0, 1402010},
        {cpu_stat_v2, "system_usec", 0, 121291},
        {cpu_stat_v2, "usage_usec", 0, 1523301},
        {.text = cpu_stat_v2, .key = "user", .rc = -ENOENT},
        {cpuacct_stat_v1, "user", 0, 140},
        {cpuacct_stat_v1, "system", 0, 12},
        {memory_stat_v1, "rss", 0, 209715200},
        {memory_stat_v1, "total_rss", 0, 209715200},
        {.text = memory_stat_v1, .key = "swap", .rc = -ENOENT},
        {.text = "user_usec x\n", .key = "user_usec", .rc = -LOOM_EPARSE},
        {.text = "user_usec 5 6\n", .key = "user_usec", .rc = -LOOM_EPARSE},
        {.text = "", .key = "user_usec", .rc = -ENOENT},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 7;
        int rc = loom_cgstat_parse_key(cases[i].text, cases[i].key, &v, NULL);
        if (rc != cases[i].rc)
            fail_msg("case %zu (%s): rc %d, expected %d", i, cases[i].key, rc, cases[i].rc);
        assert_int_equal(v, rc == 0 ? cases[i].v : 7);
    }
}

/* io.stat (v2) and blkio.throttle.io_service_bytes (v1): summed over devices. */
static void test_cg_io(void **state)
{
    static const struct {
        int v1;
        const char *text;
        int rc;
        uint64_t rd, wr;
    } cases[] = {
        {0,
         "8:0 rbytes=1048576 wbytes=4096 rios=3 wios=1 dbytes=0 dios=0\n"
         "259:0 rbytes=8192 wbytes=0 rios=2 wios=0 dbytes=0 dios=0\n",
         0, 1056768, 4096},
        {0, "", 0, 0, 0},
        {.v1 = 0, .text = "8:0 rbytes=x wbytes=1\n", .rc = -LOOM_EPARSE},
        {.v1 = 0, .text = "8:0 rbytes\n", .rc = -LOOM_EPARSE},
        {1,
         "8:0 Read 1048576\n8:0 Write 4096\n8:0 Sync 0\n8:0 Async 1052672\n8:0 Discard 0\n"
         "8:0 Total 1052672\n8:16 Read 10\n8:16 Write 20\nTotal 1052702\n",
         0, 1048586, 4116},
        {1, "Total 0\n", 0, 0, 0},
        {.v1 = 1, .text = "8:0 Read\n", .rc = -LOOM_EPARSE},
        {.v1 = 1, .text = "8:0 Read many\n", .rc = -LOOM_EPARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t rd = 7, wr = 7;
        loom_err_t err = {0};
        int rc = cases[i].v1 ? loom_cgstat_parse_blkio_v1(cases[i].text, &rd, &wr, &err)
                             : loom_cgstat_parse_io_v2(cases[i].text, &rd, &wr, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d (%s), expected %d", i, rc, err.msg, cases[i].rc);
        assert_int_equal(rd, rc == 0 ? cases[i].rd : 7);
        assert_int_equal(wr, rc == 0 ? cases[i].wr : 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat),   cmocka_unit_test(test_status), cmocka_unit_test(test_io),
        cmocka_unit_test(test_cg_u64), cmocka_unit_test(test_cg_key), cmocka_unit_test(test_cg_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

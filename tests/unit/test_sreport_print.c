/*
 * test_sreport_print.c - sreport's pure printing parts (sreport_print.c):
 * the -t keywords, time values in each unit, TRES order, and a whole table
 * (header block, widths that grow with the largest value, -P).
 */
#include "cli/sreport.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static void test_time_format(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"Minutes", SR_TF_MINS},
        {"min", SR_TF_MINS},
        {"m", SR_TF_MINS},
        {"hours", SR_TF_HOURS},
        {"h", SR_TF_HOURS},
        {"SECONDS", SR_TF_SECS},
        {"percent", SR_TF_PERCENT},
        {"p", SR_TF_PERCENT},
        {"secper", SR_TF_SECPER},
        {"MinPer", SR_TF_MINPER},
        {"hourper", SR_TF_HOURPER},
        {"hours,percent", -1},
        {"bogus", -1},
        {"", -1},
        {"minutesx", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(sr_time_format(cases[i].text), cases[i].want);
}

static void test_time_text(void **state)
{
    (void)state;
    static const struct {
        sr_tf_t tf;
        int64_t secs, total;
        const char *want;
    } cases[] = {
        {SR_TF_MINS, 153000, 691200, "2550"},
        {SR_TF_MINS, 89, 0, "1"},
        {SR_TF_HOURS, 153000, 691200, "42"}, /* 42.5: half to even, as printf */
        {SR_TF_HOURS, 31200, 0, "9"},        /* 8.67 */
        {SR_TF_SECS, 86400, 0, "86400"},
        {SR_TF_PERCENT, 153000, 691200, "22.14%"},
        {SR_TF_PERCENT, 0, 0, "0.00%"},
        {SR_TF_SECPER, 54000, 691200, "54000(7.81%)"},
        {SR_TF_MINPER, 691200, 691200, "11520(100.00%)"},
        {SR_TF_HOURPER, 2400, 28800, "1(8.33%)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        sr_time_text(cases[i].tf, cases[i].secs, cases[i].total, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
    }
}

static void test_tres_rank(void **state)
{
    (void)state;
    assert_true(sr_tres_rank("cpu") < sr_tres_rank("mem"));
    assert_true(sr_tres_rank("mem") < sr_tres_rank("node"));
    assert_true(sr_tres_rank("billing") < sr_tres_rank("gres/gpu"));
    assert_int_equal(sr_tres_rank("gres/gpu"), sr_tres_rank("license/x"));
}

static void print_table(sr_t *s, sr_cond_t *c, int64_t alloc)
{
    sr_rows_t rows = {0};
    sr_row_t *r = sr_rows_add(&rows);
    r->text[SR_F_CLUSTER] = sr_rows_str(&rows, "bench");
    r->secs[SR_F_ALLOC] = alloc;
    r->secs[SR_F_REPORTED] = r->total = 691200;
    sr_print(s, c, &rows);
    sr_rows_free(&rows);
}

static void test_print(void **state)
{
    (void)state;
    sr_t s = {.pf = {.delim = "|"}, .tf = SR_TF_MINS, .out = LOOM_SBUF_INIT};
    sr_cond_t c = {.rep = SR_REP_UTIL, .start = 86400, .end = 2 * 86400};
    loom_strv_add(&c.format, "Cluster");
    loom_strv_add(&c.format, "alloc");
    print_table(&s, &c, 240000000); /* 9 digits in seconds: one wider */
    assert_string_equal(loom_sbuf_str(&s.out),
                        "--------------------------------------------------------------------"
                        "------------\n"
                        "Cluster Utilization 1970-01-02T00:00:00 - 1970-01-02T23:59:59\n"
                        "Usage reported in CPU Minutes\n"
                        "--------------------------------------------------------------------"
                        "------------\n"
                        "  Cluster Allocated \n"
                        "--------- --------- \n"
                        "    bench   4000000 \n");
    loom_sbuf_free(&s.out);
    s.out = (loom_sbuf_t)LOOM_SBUF_INIT;
    s.pf.parsable = 2;
    s.pf.noheader = true;
    s.tf = SR_TF_PERCENT;
    print_table(&s, &c, 153000);
    assert_string_equal(loom_sbuf_str(&s.out), "bench|22.14%\n");
    loom_sbuf_free(&s.out);
    loom_strv_free(&c.format);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_format),
        cmocka_unit_test(test_time_text),
        cmocka_unit_test(test_tres_rank),
        cmocka_unit_test(test_print),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_rangeset.c - integer range sets: job array specs (CLI_SPEC §1 --array)
 * and squeue's bracket form.
 *
 * Which specs are accepted, the sets they give and the bracket forms were
 * checked against Slurm 22.05 (sbatch --array with MaxArraySize=1001, then
 * squeue -o %i / scontrol show job); differences are noted in rangeset.h.
 */
#include "common/rangeset.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *fmt(const loom_rangeset_t *rs)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_rangeset_format(rs, &sb);
    return loom_sbuf_detach(&sb);
}

static const struct {
    const char *spec;
    uint32_t max;
    const char *out; /* compressed form */
    uint64_t count;
    uint32_t throttle;
} good[] = {
    {"0-15", 1000, "0-15", 16, 0},
    {"1,3,5-9", 1000, "1,3,5-9", 7, 0},
    {"0-15:4", 1000, "0,4,8,12", 4, 0},
    {"1-7:2", 1000, "1,3,5,7", 4, 0},
    {"0-99%8", 1000, "0-99", 100, 8},
    {"1-10:3%2", 1000, "1,4,7,10", 4, 2},
    {"8", 1000, "8", 1, 0},
    {"0", 0, "0", 1, 0},
    {"007,08", 1000, "7-8", 2, 0},
    {"9,1-3,2,4", 1000, "1-4,9", 5, 0},
    {"5-9,1-6", 1000, "1-9", 9, 0},
    {"1,2,3,5,6,7", 1000, "1-3,5-7", 6, 0},
    {"3,3,3", 1000, "3", 1, 0},
    {"0-1000", 1000, "0-1000", 1001, 0},
    {"0-4000000", 4000000, "0-4000000", 4000001, 0},
    {"0-99999,5", 4000000, "0-99999", 100000, 0},
    {"0-10:20", 1000, "0", 1, 0},
    {"0-6:2,1-7:2", 1000, "0-7", 8, 0},
    {"0-99%0", 1000, "0-99", 100, 0},
    {"1%4294967295", 1000, "1", 1, 4294967295u},
    {"0-4294967295", 4294967295u, "0-4294967295", 4294967296ull, 0},
    {"1,,3", 1000, "1,3", 2, 0},
    {"1,", 1000, "1", 1, 0},
    {",1", 1000, "1", 1, 0},
    {"1,3,%2", 1000, "1,3", 2, 2},
    {"0-1000:1000", 1000, "0,1000", 2, 0},
    {"0-1000:999", 1000, "0,999", 2, 0},
    {"00-3", 1000, "0-3", 4, 0},
    {"1-3,2-5", 1000, "1-5", 5, 0},
    {"5-5", 1000, "5", 1, 0},
};

static void test_rangeset_good(void **state)
{
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        loom_rangeset_t rs = LOOM_RANGESET_INIT;
        loom_err_t err = {0};
        uint32_t throttle = 77;
        int rc = loom_rangeset_parse_array(good[i].spec, good[i].max, &rs, &throttle, &err);
        if (rc < 0)
            fail_msg("'%s': %s", good[i].spec, err.msg);
        assert_int_equal(rc, rs.n);
        char *s = fmt(&rs);
        if (strcmp(s, good[i].out) != 0)
            fail_msg("'%s': got '%s' want '%s'", good[i].spec, s, good[i].out);
        assert_int_equal(loom_rangeset_count(&rs), good[i].count);
        assert_int_equal(throttle, good[i].throttle);
        /* The compressed form parses back to the same set. */
        loom_rangeset_t back = LOOM_RANGESET_INIT;
        assert_true(loom_rangeset_parse(s, good[i].max, &back, NULL) >= 0);
        assert_true(loom_rangeset_equal(&rs, &back));
        free(s);
        loom_rangeset_free(&back);
        loom_rangeset_free(&rs);
    }
}

static const struct {
    const char *spec;
    uint32_t max;
    const char *msg_has;
} bad[] = {
    {"", 1000, "no indexes"},
    {",", 1000, "no indexes"},
    {",,", 1000, "no indexes"},
    {"%8", 1000, "no indexes"},
    {"0-1000:1001", 1000, "number over the maximum in '0-1000:1001'"},
    {"1-3:-1", 1000, "bad character"},
    {"0x10", 1000, "bad character"},
    {"1e2", 1000, "bad character"},
    {"1.5", 1000, "bad character"},
    {"5-1", 1000, "reversed range '5-1'"},
    {"1-", 1000, "missing number in '1-'"},
    {"-3", 1000, "missing number in '-3'"},
    {"1-2-3", 1000, "bad character in '1-2-3'"},
    {"a", 1000, "bad character in 'a'"},
    {" 1", 1000, "bad character in ' 1'"},
    {"1 ", 1000, "bad character"},
    {"+1", 1000, "bad character"},
    {"1001", 1000, "number over the maximum in '1001'"},
    {"0-1001", 1000, "over the maximum"},
    {"99999999999999999999", 4000000, "over the maximum"},
    {"0-15:0", 1000, "zero step in '0-15:0'"},
    {"0-15:", 1000, "missing number"},
    {"3:2", 1000, "step without a range in '3:2'"},
    {"1-3:2:1", 1000, "bad character"},
    {"0-9%", 1000, "missing number in '%'"},
    {"0-9%x", 1000, "bad character in '%x'"},
    {"0-9%2%3", 1000, "bad character"},
    {"0-9%-1", 1000, "bad character"},
    {"0-9%4294967296", 1000, "over the maximum"},
    {"[1-3]", 1000, "bad character"},
};

static void test_rangeset_bad(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        loom_rangeset_t rs = LOOM_RANGESET_INIT;
        loom_rangeset_add(&rs, 42, 42);
        loom_err_t err = {0};
        uint32_t throttle = 77;
        int rc = loom_rangeset_parse_array(bad[i].spec, bad[i].max, &rs, &throttle, &err);
        if (rc != -LOOM_EINVAL_ARRAY)
            fail_msg("'%s': rc %d (%s)", bad[i].spec, rc, err.msg);
        if (!strstr(err.msg, bad[i].msg_has))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, err.msg, bad[i].msg_has);
        assert_true(strstr(err.msg, "invalid job array specification") != NULL);
        /* Outputs untouched. */
        assert_int_equal(throttle, 77);
        assert_int_equal(rs.n, 1);
        assert_true(loom_rangeset_contains(&rs, 42));
        loom_rangeset_free(&rs);
    }
}

/* The plain parser gives generic codes and takes no throttle. */
static void test_rangeset_plain_codes(void **state)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    loom_err_t err;
    assert_int_equal(loom_rangeset_parse("1-3%2", 100, &rs, &err), -LOOM_EPARSE);
    assert_int_equal(loom_rangeset_parse("3-1", 100, &rs, &err), -LOOM_ERANGE);
    assert_string_equal(err.msg, "invalid range list '3-1': reversed range '3-1'");
    assert_int_equal(loom_rangeset_parse("101", 100, &rs, &err), -LOOM_ERANGE);
    assert_int_equal(loom_rangeset_parse("1,x", 100, &rs, &err), -LOOM_EPARSE);
    assert_int_equal(loom_rangeset_parse("1-3,7", 100, &rs, &err), 2);
    loom_rangeset_free(&rs);
}

static void test_rangeset_queries(void **state)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    uint32_t v;
    assert_true(loom_rangeset_empty(&rs));
    assert_int_equal(loom_rangeset_first(&rs, &v), -ENOENT);
    assert_int_equal(loom_rangeset_last(&rs, &v), -ENOENT);
    assert_int_equal(loom_rangeset_next(&rs, 0, &v), -ENOENT);
    assert_false(loom_rangeset_contains(&rs, 0));
    assert_int_equal(loom_rangeset_count(&rs), 0);

    assert_true(loom_rangeset_parse("1-3,5,7-9,4294967295", UINT32_MAX, &rs, NULL) > 0);
    static const struct {
        uint32_t i;
        bool in;
        int next_rc;
        uint32_t next;
    } q[] = {
        {0, false, 0, 1},
        {1, true, 0, 2},
        {3, true, 0, 5},
        {4, false, 0, 5},
        {5, true, 0, 7},
        {6, false, 0, 7},
        {9, true, 0, 4294967295u},
        {10, false, 0, 4294967295u},
        {4294967295u, true, -ENOENT, 0},
    };
    for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
        assert_int_equal(loom_rangeset_contains(&rs, q[k].i), q[k].in);
        v = 0;
        assert_int_equal(loom_rangeset_next(&rs, q[k].i, &v), q[k].next_rc);
        if (q[k].next_rc == 0)
            assert_int_equal(v, q[k].next);
    }
    assert_int_equal(loom_rangeset_first(&rs, &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(loom_rangeset_last(&rs, &v), 0);
    assert_int_equal(v, 4294967295u);

    /* Iteration visits every index once, in order. */
    uint32_t seen[16], n = 0;
    for (int rc = loom_rangeset_first(&rs, &v); rc == 0 && n < 16;
         rc = loom_rangeset_next(&rs, v, &v))
        seen[n++] = v;
    static const uint32_t want[] = {1, 2, 3, 5, 7, 8, 9, 4294967295u};
    assert_int_equal(n, 8);
    assert_memory_equal(seen, want, sizeof(want));

    loom_rangeset_t copy = LOOM_RANGESET_INIT;
    loom_rangeset_copy(&copy, &rs);
    assert_true(loom_rangeset_equal(&copy, &rs));
    loom_rangeset_free(&copy);
    loom_rangeset_free(&rs);
    loom_rangeset_free(NULL);
}

static void test_rangeset_add(void **state)
{
    static const struct {
        uint32_t lo, hi;
        const char *after;
    } steps[] = {
        {10, 12, "10-12"},
        {1, 1, "1,10-12"},
        {14, 14, "1,10-12,14"},
        {13, 13, "1,10-14"},
        {3, 5, "1,3-5,10-14"},
        {2, 2, "1-5,10-14"},
        {0, 20, "0-20"},
        {25, 30, "0-20,25-30"},
        {21, 24, "0-30"},
        {4294967295u, 4294967295u, "0-30,4294967295"},
        {40, 50, "0-30,40-50,4294967295"},
        {31, 4294967294u, "0-4294967295"},
    };
    loom_rangeset_t rs;
    loom_rangeset_init(&rs);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        loom_rangeset_add(&rs, steps[i].lo, steps[i].hi);
        char *s = fmt(&rs);
        assert_string_equal(s, steps[i].after);
        free(s);
    }
    assert_int_equal(loom_rangeset_count(&rs), 4294967296ull);
    loom_rangeset_free(&rs);
}

static void test_rangeset_bracket(void **state)
{
    static const struct {
        const char *spec;
        const char *out;
    } cases[] = {
        /* squeue -o %i of the pending array, Slurm 22.05, after its "N_". */
        {"5-9%2", "[5-9%2]"},         {"1,3,5-9", "[1,3,5-9]"},     {"1", "[1]"},
        {"0-15:4,1", "[0-1,4,8,12]"}, {"1-10:3%2", "[1,4,7,10%2]"}, {"0-99%0", "[0-99]"},
        {"0-1000:1000", "[0,1000]"},  {"0-15:4%3", "[0,4,8,12%3]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_rangeset_t rs = LOOM_RANGESET_INIT;
        uint32_t throttle;
        assert_true(loom_rangeset_parse_array(cases[i].spec, 1000, &rs, &throttle, NULL) > 0);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_rangeset_format_bracket(&rs, throttle, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        loom_sbuf_free(&sb);
        loom_rangeset_free(&rs);
    }
}

/* Big ranges cost one entry; long stepped specs stay bounded. */
static void test_rangeset_large(void **state)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    uint32_t t;
    assert_int_equal(loom_rangeset_parse_array("0-99999", 4000000, &rs, &t, NULL), 1);
    assert_int_equal(loom_rangeset_count(&rs), 100000);
    assert_true(loom_rangeset_contains(&rs, 99999));
    assert_int_equal(loom_rangeset_parse_array("0-3999999:2,1-3999999:2", 4000000, &rs, &t, NULL),
                     1);
    assert_int_equal(loom_rangeset_count(&rs), 4000000);
    assert_int_equal(loom_rangeset_parse("0-99999:2", 4000000, &rs, NULL), 50000);
    assert_true(rs.cap < 4 * 50000);
    loom_rangeset_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rangeset_good),        cmocka_unit_test(test_rangeset_bad),
        cmocka_unit_test(test_rangeset_plain_codes), cmocka_unit_test(test_rangeset_queries),
        cmocka_unit_test(test_rangeset_add),         cmocka_unit_test(test_rangeset_bracket),
        cmocka_unit_test(test_rangeset_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

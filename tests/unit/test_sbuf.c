/* test_sbuf.c - the string builder, string vector and error buffer. */
#include "common/err.h"
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

static void test_sbuf_basics(void **state)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    assert_string_equal(loom_sbuf_str(&sb), "");
    loom_sbuf_add(&sb, "abc");
    loom_sbuf_addc(&sb, '-');
    loom_sbuf_addf(&sb, "%d/%s", 42, "x");
    assert_string_equal(loom_sbuf_str(&sb), "abc-42/x");
    assert_int_equal(sb.len, 8);
    loom_sbuf_truncate(&sb, 3);
    assert_string_equal(loom_sbuf_str(&sb), "abc");
    char *s = loom_sbuf_detach(&sb);
    assert_string_equal(s, "abc");
    assert_null(sb.buf);
    free(s);
}

static void test_sbuf_pad(void **state)
{
    static const struct {
        const char *in;
        size_t width;
        int right;
        const char *out;
    } cases[] = {
        {"ab", 5, 1, "   ab"}, {"ab", 5, 0, "ab   "}, {"abcdef", 3, 1, "abc"},
        {"abc", 0, 1, "abc"},  {"", 2, 0, "  "},      {"PARTITION", 9, 1, "PARTITION"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addpad(&sb, cases[i].in, cases[i].width, cases[i].right);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        loom_sbuf_free(&sb);
    }
}

static void test_sbuf_grows(void **state)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (int i = 0; i < 10000; i++)
        loom_sbuf_addc(&sb, (char)('a' + i % 26));
    assert_int_equal(sb.len, 10000);
    assert_int_equal(strlen(loom_sbuf_str(&sb)), 10000);
    loom_sbuf_free(&sb);
}

static void test_strv_split(void **state)
{
    loom_strv_t sv = LOOM_STRV_INIT;
    loom_strv_split(&sv, ",a,,b c,", ", ");
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[0], "a");
    assert_string_equal(sv.v[2], "c");
    assert_null(sv.v[3]);
    assert_int_equal(loom_strv_find(&sv, "b"), 1);
    assert_int_equal(loom_strv_find(&sv, "z"), -1);
    loom_strv_free(&sv);
}

static void test_err_texts(void **state)
{
    loom_err_t err;
    loom_err_clear(&err);
    assert_int_equal(loom_errf(&err, -LOOM_EPARSE, "bad '%s'", "x"), -LOOM_EPARSE);
    assert_string_equal(err.msg, "bad 'x'");
    loom_err_prefix(&err, "slurm.conf:%d", 3);
    assert_string_equal(err.msg, "slurm.conf:3: bad 'x'");
    assert_int_equal(loom_errf(NULL, -5, "ignored"), -5);
    assert_string_equal(loom_strerror(-LOOM_EINVAL_PARTITION), "Invalid partition name specified");
    assert_string_equal(loom_strerror(-LOOM_EINVAL_JOBID), "Invalid job id specified");
    assert_string_equal(loom_errname(-LOOM_EINVAL_QOS), "LOOM_EINVAL_QOS");
    assert_int_equal(loom_errcode("LOOM_EINVAL_QOS"), -LOOM_EINVAL_QOS);
    assert_int_equal(loom_errcode("ENOENT"), -ENOENT);
    assert_int_equal(loom_errcode("nonsense"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbuf_basics), cmocka_unit_test(test_sbuf_pad),
        cmocka_unit_test(test_sbuf_grows),  cmocka_unit_test(test_strv_split),
        cmocka_unit_test(test_err_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

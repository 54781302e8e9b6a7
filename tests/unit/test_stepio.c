/* test_stepio.c - the srun <-> step supervisor I/O messages. */
#include "common/stepio.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define N_(a) (sizeof(a) / sizeof((a)[0]))

static void test_stepio_roundtrip(void **state)
{
    static const struct {
        int type;
        uint32_t rank;
        const char *data;
        size_t len;
    } cases[] = {
        {LOOM_STEPIO_STDOUT, 0, "hello\n", 6},
        {LOOM_STEPIO_STDERR, 7, "a\0b", 3}, /* output is bytes, NULs included */
        {LOOM_STEPIO_STDIN, LOOM_STEPIO_ALL, "", 0},
        {LOOM_STEPIO_STDIN_EOF, LOOM_STEPIO_ALL, NULL, 0},
        {LOOM_STEPIO_EXIT, 4095, "{\"status\":256}", 14},
    };
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < N_(cases); i++)
        loom_stepio_encode(&sb, cases[i].type, cases[i].rank, cases[i].data, cases[i].len);
    size_t off = 0;
    for (size_t i = 0; i < N_(cases); i++) {
        loom_stepio_msg_t m;
        ssize_t used = loom_stepio_parse(sb.buf + off, sb.len - off, &m, NULL);
        assert_int_equal(used, LOOM_STEPIO_HDR + cases[i].len);
        assert_int_equal(m.type, cases[i].type);
        assert_int_equal(m.rank, cases[i].rank);
        assert_int_equal(m.len, cases[i].len);
        if (cases[i].len)
            assert_memory_equal(m.data, cases[i].data, cases[i].len);
        off += (size_t)used;
    }
    assert_int_equal(off, sb.len);
    loom_sbuf_free(&sb);
}

/* A message cut anywhere needs more bytes; nothing is consumed. */
static void test_stepio_partial(void **state)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_stepio_encode(&sb, LOOM_STEPIO_STDOUT, 3, "abcdef", 6);
    for (size_t cut = 0; cut < sb.len; cut++) {
        loom_stepio_msg_t m;
        assert_int_equal(loom_stepio_parse(sb.buf, cut, &m, NULL), 0);
    }
    loom_sbuf_free(&sb);
}

static void test_stepio_bad_length(void **state)
{
    static const unsigned char cases[][4] = {
        {0, 0, 0, 0}, {0, 0, 0, 4}, {0xff, 0xff, 0xff, 0xff}, {0, 0x10, 0, 6}};
    for (size_t i = 0; i < N_(cases); i++) {
        loom_stepio_msg_t m;
        loom_err_t err = {0};
        assert_int_equal(loom_stepio_parse((const char *)cases[i], 4, &m, &err), -LOOM_EPROTO);
        assert_non_null(strstr(err.msg, "length"));
    }
}

static void test_stepio_json(void **state)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    json_t *o = json_pack("{s:i, s:s}", "signal", 10, "reason", "cancel");
    loom_stepio_encode_json(&sb, LOOM_STEPIO_KILL, LOOM_STEPIO_ALL, o);
    json_decref(o);
    loom_stepio_msg_t m;
    assert_true(loom_stepio_parse(sb.buf, sb.len, &m, NULL) > 0);
    json_t *back = loom_stepio_json(&m);
    assert_non_null(back);
    assert_int_equal(json_integer_value(json_object_get(back, "signal")), 10);
    json_decref(back);
    m.data = "[1,2]"; /* not an object */
    m.len = 5;
    assert_null(loom_stepio_json(&m));
    m.data = "{bad";
    m.len = 4;
    assert_null(loom_stepio_json(&m));
    assert_string_equal(loom_stepio_type_name(LOOM_STEPIO_WINSIZE), "WINSIZE");
    assert_string_equal(loom_stepio_type_name(99), "?");
    loom_sbuf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stepio_roundtrip),
        cmocka_unit_test(test_stepio_partial),
        cmocka_unit_test(test_stepio_bad_length),
        cmocka_unit_test(test_stepio_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

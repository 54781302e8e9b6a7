/* test_jsonread.c - the fast JSON reader: what it reads it reads as jansson
 * does; what it leaves (NULL) jansson reads or refuses. */
#include "common/jsonread.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

/* READ: the reader decodes it. LEAVE: valid, left to jansson. BAD: invalid. */
enum { READ, LEAVE, BAD };

static const struct {
    const char *text;
    int verdict;
} jsonread_cases[] = {
    {"{}", READ},
    {"[]", READ},
    {" \t\r\n{ \"a\" : 1 , \"b\" : [ ] }\n", READ},
    {"{\"job_id\":7,\"state\":[\"PENDING\"],\"reason\":\"None\",\"x\":null}", READ},
    {"[true,false,null,\"\"]", READ},
    {"[0,-0,12,-345,999999999999999999,-999999999999999999]", READ},
    {"[0.5,-1.25e3,1E+2,2e-2,1e-400]", READ},
    {"{\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\te\\u0041\\u007f\"}", READ},
    {"{\"k\\n\":1,\"k\":2}", READ},
    {"[[[[[[[[[[{}]]]]]]]]]]", READ},
    {"[1234567890123456789]", LEAVE}, /* 19 digits: jansson range-checks */
    {"[9223372036854775807]", LEAVE},
    {"{\"s\":\"caf\xc3\xa9\"}", LEAVE}, /* non-ASCII */
    {"{\"s\":\"\\u00e9\"}", LEAVE},
    {"{\"s\":\"\\ud83d\\ude00\"}", LEAVE}, /* a surrogate pair */
    {"", BAD},
    {"   ", BAD},
    {"\"top\"", BAD}, /* jansson wants an object or array */
    {"7", BAD},
    {"{\"a\":1,\"a\":2}", BAD},
    {"{\"a\":1,}", BAD},
    {"[1,]", BAD},
    {"[01]", BAD},
    {"[1.]", BAD},
    {"[.5]", BAD},
    {"[1e]", BAD},
    {"[-]", BAD},
    {"[+1]", BAD},
    {"[truex]", BAD},
    {"[nul]", BAD},
    {"{\"a\" 1}", BAD},
    {"{a:1}", BAD},
    {"[\"a\tb\"]", BAD},
    {"[\"\\u0000\"]", BAD},
    {"[\"\\x\"]", BAD},
    {"[\"\\u12\"]", BAD},
    {"[\"abc]", BAD},
    {"{} x", BAD},
    {"[1e999]", BAD},
    {"[123456789012345678901234567890]", BAD},
    {"[\"caf\xc3\"]", BAD}, /* not UTF-8 */
};

static void test_jsonread_agrees_with_jansson(void **state)
{
    for (size_t i = 0; i < sizeof(jsonread_cases) / sizeof(jsonread_cases[0]); i++) {
        const char *t = jsonread_cases[i].text;
        json_t *fast = loom_json_read(t, strlen(t));
        json_error_t je;
        json_t *ref = json_loadb(t, strlen(t), JSON_REJECT_DUPLICATES, &je);
        json_t *both = loom_json_loadb(t, strlen(t), &je);
        switch (jsonread_cases[i].verdict) {
        case READ:
            assert_non_null(fast);
            assert_true(json_equal(fast, ref));
            break;
        case LEAVE:
            assert_null(fast);
            assert_non_null(ref);
            break;
        default:
            assert_null(fast);
            assert_null(ref);
        }
        assert_true(both ? ref && json_equal(both, ref) : !ref);
        json_decref(fast);
        json_decref(ref);
        json_decref(both);
    }
}

static void test_jsonread_kinds(void **state)
{
    const char *t = "{\"i\":-42,\"r\":2.5,\"e\":1e2,\"s\":\"x\\ny\",\"b\":true,\"n\":null}";
    json_t *v = loom_json_read(t, strlen(t));
    assert_non_null(v);
    assert_true(json_is_integer(json_object_get(v, "i")));
    assert_int_equal(json_integer_value(json_object_get(v, "i")), -42);
    assert_true(json_is_real(json_object_get(v, "r")));
    assert_true(json_is_real(json_object_get(v, "e")));
    assert_string_equal(json_string_value(json_object_get(v, "s")), "x\ny");
    assert_true(json_is_true(json_object_get(v, "b")));
    assert_true(json_is_null(json_object_get(v, "n")));
    json_decref(v);
}

/* Only len bytes are read: what follows in memory does not count. */
static void test_jsonread_length(void **state)
{
    const char *t = "[1,2]garbage";
    json_t *v = loom_json_read(t, 5);
    assert_non_null(v);
    assert_int_equal(json_array_size(v), 2);
    json_decref(v);
    assert_null(loom_json_read(t, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jsonread_agrees_with_jansson),
        cmocka_unit_test(test_jsonread_kinds),
        cmocka_unit_test(test_jsonread_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

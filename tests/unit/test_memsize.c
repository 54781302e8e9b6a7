/* test_memsize.c - memory sizes (CLI_SPEC §0.3). Values checked against
 * Slurm 22.05's str_to_mbytes; the differences are marked. */
#include "common/err.h"
#include "common/memsize.h"
#include "common/sbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static void test_mem_parse_ok(void **state)
{
    static const struct {
        const char *in;
        uint64_t mib;
    } cases[] = {
        {"0", 0},
        {"0K", 0},
        {"0G", 0},
        {"1", 1},
        {"100", 100},
        {"007", 7},
        {"1K", 1}, /* K rounds up to whole MiB */
        {"1023K", 1},
        {"1024K", 1},
        {"1025K", 2},
        {"2047k", 2},
        {"2048k", 2},
        {"1M", 1},
        {"1000m", 1000},
        {"1G", 1024},
        {"4g", 4096},
        {"1T", 1048576},
        {"2t", 2097152},
        {"1KB", 1},
        {"1MB", 1},
        {"1GB", 1024},
        {"1gb", 1024},
        {"1Gb", 1024},
        {"1TB", 1048576},
        {"16777215T", 17592184995840ULL},
        {"18014398509480960K", 17592186044415ULL},
        {"17592186044415", 17592186044415ULL}, /* LOOM_MEM_MAX_MIB */
        {"17179869183G", 17592186043392ULL},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        uint64_t mib = 99;
        loom_err_t err;
        loom_err_clear(&err);
        if (loom_mem_parse_mib(cases[i].in, &mib, &err) != 0)
            fail_msg("'%s': %s", cases[i].in, err.msg);
        if (mib != cases[i].mib)
            fail_msg("'%s': got %llu", cases[i].in, (unsigned long long)mib);
    }
}

static void test_mem_parse_errors(void **state)
{
    static const struct {
        const char *in;
        int rc;
    } cases[] = {
        {"", -LOOM_EPARSE},
        {"G", -LOOM_EPARSE},
        {"G1", -LOOM_EPARSE},
        {"-1", -LOOM_EPARSE},
        {"+5", -LOOM_EPARSE}, /* Slurm: 5 */
        {" 1", -LOOM_EPARSE}, /* Slurm: 1 */
        {"1 ", -LOOM_EPARSE},
        {"1G ", -LOOM_EPARSE},
        {"1.5G", -LOOM_EPARSE},
        {"1.5", -LOOM_EPARSE},
        {"1P", -LOOM_EPARSE},
        {"1Ki", -LOOM_EPARSE},
        {"1GiB", -LOOM_EPARSE},
        {"1B", -LOOM_EPARSE},
        {"1GBB", -LOOM_EPARSE},
        {"1M2", -LOOM_EPARSE},
        {"1e3", -LOOM_EPARSE},
        {"0x10", -LOOM_EPARSE},
        {"99999999999999999999999x", -LOOM_EPARSE}, /* syntax beats size */
        {"17592186044416", -LOOM_ERANGE},
        {"17179869184G", -LOOM_ERANGE},
        {"16777216T", -LOOM_ERANGE},
        {"17179869184T", -LOOM_ERANGE}, /* Slurm accepts: 2^54 MiB */
        {"18014398509480961K", -LOOM_ERANGE},
        {"18446744073709551615", -LOOM_ERANGE},
        {"18446744073709551616", -LOOM_ERANGE},
        {"99999999999999999999999", -LOOM_ERANGE},
        {"99999999999999999999999K", -LOOM_ERANGE},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        uint64_t mib = 99;
        loom_err_t err;
        loom_err_clear(&err);
        int rc = loom_mem_parse_mib(cases[i].in, &mib, &err);
        if (rc != cases[i].rc)
            fail_msg("'%s': rc %d, want %d", cases[i].in, rc, cases[i].rc);
        assert_int_equal(mib, 99);
        assert_non_null(strstr(err.msg, cases[i].in));
    }
}

static void test_mem_messages(void **state)
{
    loom_err_t err;
    uint64_t v;
    loom_mem_parse_mib("4X", &v, &err);
    assert_string_equal(err.msg, "Invalid memory specification '4X'");
    loom_mem_parse_mib("99999999T", &v, &err);
    assert_string_equal(err.msg, "Memory specification '99999999T' is too large");
    assert_int_equal(loom_mem_parse_mib("x", &v, NULL), -LOOM_EPARSE);
}

static void test_mem_fmt(void **state)
{
    static const struct {
        uint64_t mib;
        const char *out;
    } cases[] = {
        {0, "0"},
        {1, "1M"},
        {1000, "1000M"},
        {1023, "1023M"},
        {1024, "1G"},
        {1536, "1536M"},
        {4096, "4G"},
        {1048575, "1048575M"},
        {1048576, "1T"},
        {1049600, "1025G"},
        {2097152, "2T"},
        {1073741824, "1024T"},
        {LOOM_MEM_MAX_MIB, "17592186044415M"},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_mem_fmt(cases[i].mib, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        uint64_t back = 7;
        assert_int_equal(loom_mem_parse_mib(loom_sbuf_str(&sb), &back, NULL), 0);
        assert_int_equal(back, cases[i].mib);
        loom_sbuf_free(&sb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mem_parse_ok),
        cmocka_unit_test(test_mem_parse_errors),
        cmocka_unit_test(test_mem_messages),
        cmocka_unit_test(test_mem_fmt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_jobid.c - job and step identifiers (CLI_SPEC §0.5).
 *
 * Checked against Slurm 22.05's scontrol hold: it takes 15, 0015, 15_4 and
 * 15_[0-1], and says "Invalid job id specified" for 0, 4294967295, 15x, 15_
 * and 15_x (steps, "_*" and "+1" it refuses only because hold does not act
 * on them). Slurm also takes " 15" and "15 "; Loom wants callers to trim.
 */
#include "common/jobid.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *in;
    uint32_t job;
    loom_jobid_array_t array;
    uint32_t task;
    const char *tasks; /* ARRAY_SET, compressed */
    int64_t step;
    int32_t het;
    const char *out; /* canonical text */
} good[] = {
    {"123", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_NONE, LOOM_HET_NONE, "123"},
    {"1", 1, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_NONE, LOOM_HET_NONE, "1"},
    {"4294967294", 4294967294u, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_NONE, LOOM_HET_NONE,
     "4294967294"},
    {"0123", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_NONE, LOOM_HET_NONE, "123"},
    {"123_4", 123, LOOM_JOBID_ARRAY_ONE, 4, NULL, LOOM_STEP_NONE, LOOM_HET_NONE, "123_4"},
    {"123_0", 123, LOOM_JOBID_ARRAY_ONE, 0, NULL, LOOM_STEP_NONE, LOOM_HET_NONE, "123_0"},
    {"123_4000000", 123, LOOM_JOBID_ARRAY_ONE, 4000000, NULL, LOOM_STEP_NONE, LOOM_HET_NONE,
     "123_4000000"},
    {"123_[1-3,7]", 123, LOOM_JOBID_ARRAY_SET, 0, "1-3,7", LOOM_STEP_NONE, LOOM_HET_NONE,
     "123_[1-3,7]"},
    {"123_[7,1-3,2]", 123, LOOM_JOBID_ARRAY_SET, 0, "1-3,7", LOOM_STEP_NONE, LOOM_HET_NONE,
     "123_[1-3,7]"},
    {"123_[5]", 123, LOOM_JOBID_ARRAY_SET, 0, "5", LOOM_STEP_NONE, LOOM_HET_NONE, "123_[5]"},
    {"123_[0-8:4]", 123, LOOM_JOBID_ARRAY_SET, 0, "0,4,8", LOOM_STEP_NONE, LOOM_HET_NONE,
     "123_[0,4,8]"},
    {"123_*", 123, LOOM_JOBID_ARRAY_ALL, 0, NULL, LOOM_STEP_NONE, LOOM_HET_NONE, "123_*"},
    {"123.0", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, 0, LOOM_HET_NONE, "123.0"},
    {"123.15", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, 15, LOOM_HET_NONE, "123.15"},
    {"123.4294967280", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, 4294967280ll, LOOM_HET_NONE,
     "123.4294967280"},
    {"123.batch", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_BATCH, LOOM_HET_NONE, "123.batch"},
    {"123.extern", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_EXTERN, LOOM_HET_NONE,
     "123.extern"},
    {"123.interactive", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_INTERACTIVE, LOOM_HET_NONE,
     "123.interactive"},
    {"123_4.1", 123, LOOM_JOBID_ARRAY_ONE, 4, NULL, 1, LOOM_HET_NONE, "123_4.1"},
    {"123_4.batch", 123, LOOM_JOBID_ARRAY_ONE, 4, NULL, LOOM_STEP_BATCH, LOOM_HET_NONE,
     "123_4.batch"},
    {"123+1", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_NONE, 1, "123+1"},
    {"123+0.batch", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, LOOM_STEP_BATCH, 0, "123+0.batch"},
    {"123+127.2", 123, LOOM_JOBID_ARRAY_NONE, 0, NULL, 2, 127, "123+127.2"},
};

static void test_jobid_good(void **state)
{
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        loom_jobid_t id;
        loom_err_t err = {0};
        if (loom_jobid_parse(good[i].in, &id, &err) != 0)
            fail_msg("'%s': %s", good[i].in, err.msg);
        assert_int_equal(id.job_id, good[i].job);
        assert_int_equal(id.array, good[i].array);
        assert_int_equal(id.task, good[i].task);
        assert_int_equal(id.step, good[i].step);
        assert_int_equal(id.het_offset, good[i].het);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_rangeset_format(&id.tasks, &sb);
        assert_string_equal(loom_sbuf_str(&sb), good[i].tasks ? good[i].tasks : "");
        loom_sbuf_reset(&sb);
        loom_jobid_format(&id, &sb);
        if (strcmp(loom_sbuf_str(&sb), good[i].out) != 0)
            fail_msg("'%s': printed '%s' want '%s'", good[i].in, loom_sbuf_str(&sb), good[i].out);
        /* The canonical text parses back to the same id. */
        loom_jobid_t back;
        assert_int_equal(loom_jobid_parse(loom_sbuf_str(&sb), &back, NULL), 0);
        assert_true(loom_jobid_equal(&id, &back));
        loom_sbuf_free(&sb);
        loom_jobid_free(&back);
        loom_jobid_free(&id);
    }
}

static const struct {
    const char *in;
    const char *msg; /* the whole error text */
} bad[] = {
    {"", "invalid job id '': no job number in ''"},
    {"0", "invalid job id '0': job number out of 1-4294967294"},
    {"000", "invalid job id '000': job number out of 1-4294967294"},
    {"4294967295", "invalid job id '4294967295': job number out of 1-4294967294"},
    {"99999999999999999999999", "invalid job id '99999999999999999999999': job number out of "
                                "1-4294967294"},
    {"abc", "invalid job id 'abc': no job number in 'abc'"},
    {"-1", "invalid job id '-1': no job number in '-1'"},
    {"+5", "invalid job id '+5': no job number in '+5'"},
    {" 123", "invalid job id ' 123': no job number in ' 123'"},
    {"123 ", "invalid job id '123 ': unexpected text ' '"},
    {"123abc", "invalid job id '123abc': unexpected text 'abc'"},
    {"123_", "invalid job id '123_': bad array task index ''"},
    {"123_a", "invalid job id '123_a': bad array task index 'a'"},
    {"123_4000001", "invalid job id '123_4000001': array task index over 4000000"},
    {"123_4x", "invalid job id '123_4x': unexpected text 'x'"},
    {"123_**", "invalid job id '123_**': unexpected text '*'"},
    {"123_[", "invalid job id '123_[': missing ']' in '['"},
    {"123_[]", "invalid job id '123_[]': invalid range list '': no indexes"},
    {"123_[3-1]", "invalid job id '123_[3-1]': invalid range list '3-1': reversed range '3-1'"},
    {"123_[1-3%2]", "invalid job id '123_[1-3%2]': invalid range list '1-3%2': bad character in "
                    "'1-3%2'"},
    {"123_[1-3]x", "invalid job id '123_[1-3]x': unexpected text 'x'"},
    {"123_[1-3].0", "invalid job id '123_[1-3].0': a step cannot follow several array tasks: "
                    "step '0'"},
    {"123_*.batch", "invalid job id '123_*.batch': a step cannot follow several array tasks: "
                    "step 'batch'"},
    {"123.", "invalid job id '123.': bad step id ''"},
    {"123.foo", "invalid job id '123.foo': bad step id 'foo'"},
    {"123.Batch", "invalid job id '123.Batch': bad step id 'Batch'"},
    {"123.batchx", "invalid job id '123.batchx': unexpected text 'x'"},
    {"123.4294967281", "invalid job id '123.4294967281': bad step id '4294967281'"},
    {"123.-1", "invalid job id '123.-1': bad step id '-1'"},
    {"123.0.1", "invalid job id '123.0.1': unexpected text '.1'"},
    {"123+", "invalid job id '123+': bad het job offset (0-127) ''"},
    {"123+128", "invalid job id '123+128': bad het job offset (0-127) '128'"},
    {"123+1_2", "invalid job id '123+1_2': unexpected text '_2'"},
    {"123_2+1", "invalid job id '123_2+1': unexpected text '+1'"},
};

static void test_jobid_bad(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        loom_jobid_t id;
        loom_jobid_init(&id, 99);
        loom_err_t err = {0};
        int rc = loom_jobid_parse(bad[i].in, &id, &err);
        if (rc != -LOOM_EINVAL_JOBID)
            fail_msg("'%s': rc %d", bad[i].in, rc);
        if (strcmp(err.msg, bad[i].msg) != 0)
            fail_msg("'%s': message '%s' want '%s'", bad[i].in, err.msg, bad[i].msg);
        assert_int_equal(id.job_id, 99); /* untouched */
    }
}

static void test_jobid_init_and_names(void **state)
{
    loom_jobid_t id;
    loom_jobid_init(&id, 55);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_jobid_format(&id, &sb);
    assert_string_equal(loom_sbuf_str(&sb), "55");
    id.array = LOOM_JOBID_ARRAY_SET;
    loom_rangeset_add(&id.tasks, 2, 4);
    id.step = LOOM_STEP_EXTERN; /* not parseable, but printable */
    loom_sbuf_reset(&sb);
    loom_jobid_format(&id, &sb);
    assert_string_equal(loom_sbuf_str(&sb), "55_[2-4].extern");
    loom_sbuf_free(&sb);
    loom_jobid_free(&id);
    loom_jobid_free(NULL);
    assert_string_equal(loom_jobid_step_name(LOOM_STEP_BATCH), "batch");
    assert_string_equal(loom_jobid_step_name(LOOM_STEP_INTERACTIVE), "interactive");
    assert_null(loom_jobid_step_name(LOOM_STEP_NONE));
    assert_null(loom_jobid_step_name(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobid_good),
        cmocka_unit_test(test_jobid_bad),
        cmocka_unit_test(test_jobid_init_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

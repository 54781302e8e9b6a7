/* test_fpattern.c - output-file patterns (CLI_SPEC §1.1). */
#include "common/fpattern.h"
#include "common/sbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

/* A plain batch job 128 named "train" of user "alice" on node "n3". */
static void fpattern_plain(loom_fpattern_ctx_t *c)
{
    loom_fpattern_ctx_init(c);
    c->job_id = 128;
    c->job_name = "train";
    c->user = "alice";
    c->node_name = "n3";
    c->work_dir = "/home/alice/run";
}

/* Array task 7 of array 120, raw id 128, step 2, rank 5 on node index 1. */
static void fpattern_array_step(loom_fpattern_ctx_t *c)
{
    fpattern_plain(c);
    c->array_job_id = 120;
    c->array_task_id = 7;
    c->step_id = 2;
    c->task_id = 5;
    c->node_id = 1;
    c->restart_cnt = 3;
}

static void test_fpattern_tokens(void **state)
{
    static const struct {
        int array;
        const char *pat;
        const char *out;
    } cases[] = {
        {0, "/o/%j.out", "/o/128.out"},
        {0, "/o/%%j", "/o/%j"},
        {0, "/o/%x-%u-%N", "/o/train-alice-n3"},
        {0, "/o/%A_%a", "/o/128_4294967294"},
        {0, "/o/%b", "/o/4"},
        {0, "/o/%s", "/o/batch"},
        {0, "/o/%J", "/o/128"},
        {0, "/o/%n.%t", "/o/0.0"},
        {0, "/o/%r", "/o/0"},
        {1, "/o/%A_%a", "/o/120_7"},
        {1, "/o/%j", "/o/128"},
        {1, "/o/%b", "/o/7"},
        {1, "/o/%s", "/o/2"},
        {1, "/o/%J", "/o/128.2"},
        {1, "/o/%n-%t-%r", "/o/1-5-3"},
        {1, "/o/%4s", "/o/0002"},
        {0, "/o/%4j.out", "/o/0128.out"},
        {0, "/o/%1j", "/o/128"},
        {0, "/o/%010j", "/o/0000000128"},
        {0, "/o/%12j", "/o/0000000128"},
        {0, "/o/%5N", "/o/n3"},
        {0, "/o/%5x", "/o/train"},
        {0, "/o/%q", "/o/%q"},
        {0, "/o/%3q", "/o/3q"},
        {0, "/o/%12q", "/o/2q"},
        {0, "/o/a%", "/o/a"},
        {0, "/o/%%%j%%", "/o/%128%"},
        {0, "/o/%j%j", "/o/128128"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_fpattern_ctx_t c;
        if (cases[i].array)
            fpattern_array_step(&c);
        else
            fpattern_plain(&c);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_fpattern_expand(cases[i].pat, &c, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].out) != 0)
            fail_msg("case %zu: '%s' gave '%s', want '%s'", i, cases[i].pat, loom_sbuf_str(&sb),
                     cases[i].out);
        loom_sbuf_free(&sb);
    }
}

static void test_fpattern_paths(void **state)
{
    static const struct {
        const char *work_dir;
        const char *pat;
        const char *out;
    } cases[] = {
        {"/home/alice/run", "out-%j.txt", "/home/alice/run/out-128.txt"},
        {"/home/alice/run/", "out.txt", "/home/alice/run/out.txt"},
        {"/home/alice/run", "sub/%x.log", "/home/alice/run/sub/train.log"},
        {"/home/alice/run", "/abs/%x.log", "/abs/train.log"},
        {"/home/alice/run", "none", "/dev/null"},
        {"/home/alice/run", "NONE", "/dev/null"},
        {"/home/alice/run", "nonesuch", "/home/alice/run/nonesuch"},
        {NULL, "rel-%j", "rel-128"},
        {"", "rel-%j", "rel-128"},
        /* A backslash turns substitution off; "\\" keeps one backslash. */
        {"/w", "out\\ spaces-%j", "/w/out spaces-%j"},
        {"/w", "/a\\\\b%x", "/a\\b%x"},
        {"/w", "\\%j%%", "/w/%j%%"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_fpattern_ctx_t c;
        fpattern_plain(&c);
        c.work_dir = cases[i].work_dir;
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_fpattern_expand(cases[i].pat, &c, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].out) != 0)
            fail_msg("case %zu: '%s' gave '%s', want '%s'", i, cases[i].pat, loom_sbuf_str(&sb),
                     cases[i].out);
        loom_sbuf_free(&sb);
    }
}

static void test_fpattern_stdio(void **state)
{
    static const struct {
        int array;
        const char *out_pat, *err_pat;
        const char *out, *err; /* err NULL: shares stdout's file */
    } cases[] = {
        {0, NULL, NULL, "/w/slurm-128.out", NULL},
        {0, "", "", "/w/slurm-128.out", NULL},
        {1, NULL, NULL, "/w/slurm-120_7.out", NULL},
        {0, "o-%j", NULL, "/w/o-128", NULL},
        {0, NULL, "e-%j", "/w/slurm-128.out", "/w/e-128"},
        {1, NULL, "e-%a", "/w/slurm-120_7.out", "/w/e-7"},
        {0, "o-%j", "e-%j", "/w/o-128", "/w/e-128"},
        {0, "x-%j", "x-%j", "/w/x-128", NULL},
        {0, "x-%j", "/w/x-128", "/w/x-128", NULL},
        {0, "none", "none", "/dev/null", NULL},
        {0, "o", "none", "/w/o", "/dev/null"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_fpattern_ctx_t c;
        if (cases[i].array) {
            fpattern_array_step(&c);
            c.step_id = LOOM_FPATTERN_BATCH_STEP;
        } else {
            fpattern_plain(&c);
        }
        c.work_dir = "/w";
        char *o = NULL, *e = NULL;
        loom_fpattern_stdio(cases[i].out_pat, cases[i].err_pat, cases[i].array, &c, &o, &e);
        assert_string_equal(o, cases[i].out);
        if (cases[i].err)
            assert_string_equal(e, cases[i].err);
        else
            assert_null(e);
        free(o);
        free(e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fpattern_tokens),
        cmocka_unit_test(test_fpattern_paths),
        cmocka_unit_test(test_fpattern_stdio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

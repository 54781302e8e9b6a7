/* test_acct_spool.c - the accounting spool: records ride the journal's rounds, read in order
 * up to what is durable, acked segments go, sequence numbers continue across restarts, torn
 * lines are skipped (but a line still being written is read again). */
#include "ctld/acct_spool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char dir[64];
    uv_loop_t loop;
    loom_journal_t *j;
    ctld_acct_spool_t *sp;
    int rounds;
} fixture_t;

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char p[512];
        struct stat st;
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%.300s", dir, de->d_name);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rm_tree(p);
        else
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static void hook_before(void *arg)
{
    fixture_t *f = arg;
    ctld_acct_spool_round_start(f->sp);
}

static void hook_after(void *arg, int status)
{
    fixture_t *f = arg;
    ctld_acct_spool_round_done(f->sp, status);
    f->rounds++;
}

/* (Re)open journal and spool as loomctld does at start. */
static void open_all(fixture_t *f)
{
    uv_loop_init(&f->loop);
    assert_int_equal(loom_journal_open(&f->loop, f->dir, 1, &f->j, NULL), 0);
    assert_int_equal(ctld_acct_spool_open(f->dir, &f->sp, NULL), 0);
    loom_journal_set_hooks(f->j, hook_before, hook_after, f);
}

static void close_all(fixture_t *f)
{
    loom_journal_close(f->j);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    ctld_acct_spool_free(f->sp);
    f->sp = NULL;
    /* Journal segments of this run: a new run opens at seq 1 again in this test. */
    DIR *d = opendir(f->dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%.300s", f->dir, de->d_name);
        if (strncmp(de->d_name, "journal.", 8) == 0)
            unlink(p);
    }
    if (d)
        closedir(d);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/loom-acct-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    open_all(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    if (f->sp)
        close_all(f);
    rm_tree(f->dir);
    free(f);
    return 0;
}

static void add_jobs(fixture_t *f, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        json_t *rec = json_pack("{s:i, s:s}", "job_id", i, "state", "PENDING");
        ctld_acct_spool_add(f->sp, f->j, "job", rec);
        json_decref(rec);
    }
}

static void run_rounds(fixture_t *f)
{
    while (!loom_journal_idle(f->j))
        uv_run(&f->loop, UV_RUN_ONCE);
}

/* Read what is due; returns the count, fills first/last job ids. */
static int read_due(fixture_t *f, json_t **out, ctld_acct_pos_t *pos, uint64_t *last)
{
    ctld_acct_read_t r;
    ctld_acct_spool_read_args(f->sp, &r);
    json_t *arr = json_array();
    int n = ctld_acct_spool_read(&r, arr, last, NULL);
    *pos = r.pos;
    ctld_acct_spool_read_args_free(&r);
    *out = arr;
    return n;
}

static void test_durable_then_read(void **state)
{
    fixture_t *f = *state;
    add_jobs(f, 1, 5);
    json_t *arr;
    ctld_acct_pos_t pos;
    uint64_t last = 0;
    assert_int_equal(read_due(f, &arr, &pos, &last), 0); /* not durable yet */
    json_decref(arr);
    run_rounds(f);
    assert_true(f->rounds >= 1);
    assert_int_equal(ctld_acct_spool_durable(f->sp), 5);
    assert_int_equal(read_due(f, &arr, &pos, &last), 5);
    assert_int_equal(last, 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *r = json_array_get(arr, i);
        assert_int_equal(json_integer_value(json_object_get(r, "seq")), (json_int_t)i + 1);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "job"), "job_id")),
                         (json_int_t)i + 1);
    }
    json_decref(arr);
    ctld_acct_spool_acked(f->sp, 3, NULL); /* part of it: the next read starts after 3 */
    assert_int_equal(read_due(f, &arr, &pos, &last), 2);
    assert_int_equal(last, 5);
    json_decref(arr);
    ctld_acct_spool_acked(f->sp, 5, &pos);
    assert_int_equal(read_due(f, &arr, &pos, &last), 0);
    json_decref(arr);
}

static int count_segments(const char *dir)
{
    char acct[128];
    snprintf(acct, sizeof(acct), "%s/acct", dir);
    DIR *d = opendir(acct);
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d)))
        n += strncmp(de->d_name, "spool.", 6) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_batches_segments_restart(void **state)
{
    fixture_t *f = *state;
    int total = CTLD_ACCT_SEG_RECORDS + CTLD_ACCT_SEG_RECORDS / 2;
    add_jobs(f, 1, total);
    run_rounds(f);
    assert_int_equal(count_segments(f->dir), 2);
    json_t *arr;
    ctld_acct_pos_t pos;
    uint64_t last = 0;
    assert_int_equal(read_due(f, &arr, &pos, &last), CTLD_ACCT_BATCH_MAX);
    json_decref(arr);
    ctld_acct_spool_acked(f->sp, last, &pos);
    /* Restart before the rest is acknowledged: nothing lost, seq goes on. */
    close_all(f);
    open_all(f);
    assert_int_equal(ctld_acct_spool_acked_seq(f->sp), CTLD_ACCT_BATCH_MAX);
    assert_int_equal(ctld_acct_spool_last(f->sp), (uint64_t)total);
    add_jobs(f, total + 1, 2);
    run_rounds(f);
    assert_int_equal(read_due(f, &arr, &pos, &last), total - CTLD_ACCT_BATCH_MAX + 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "seq")),
                     CTLD_ACCT_BATCH_MAX + 1);
    assert_int_equal(last, (uint64_t)total + 2);
    json_decref(arr);
    ctld_acct_spool_acked(f->sp, last, &pos);
    assert_int_equal(count_segments(f->dir), 1); /* only the one being written */
}

static void test_torn_tail_skipped(void **state)
{
    fixture_t *f = *state;
    add_jobs(f, 1, 3);
    run_rounds(f);
    close_all(f);
    /* A crash tore the last line of that run's segment. */
    char path[256];
    snprintf(path, sizeof(path), "%s/acct/spool.%020d", f->dir, 1);
    FILE *fp = fopen(path, "a");
    assert_non_null(fp);
    fputs("{\"seq\":4,\"job\":{\"job_i", fp);
    fclose(fp);
    open_all(f);
    assert_int_equal(ctld_acct_spool_last(f->sp), 3);
    add_jobs(f, 10, 1);
    run_rounds(f);
    json_t *arr;
    ctld_acct_pos_t pos;
    uint64_t last = 0;
    assert_int_equal(read_due(f, &arr, &pos, &last), 4);
    assert_int_equal(last, 4);
    json_t *r = json_array_get(arr, 3);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "job"), "job_id")), 10);
    json_decref(arr);
}

/* kill -9 leaves the segment's zero-filled tail (journal.h: preallocated extents). */
static void test_zero_tail_after_crash(void **state)
{
    fixture_t *f = *state;
    add_jobs(f, 1, 3);
    run_rounds(f);
    close_all(f);
    char path[256];
    snprintf(path, sizeof(path), "%s/acct/spool.%020d", f->dir, 1);
    FILE *fp = fopen(path, "a");
    assert_non_null(fp);
    static const char zeros[8192];
    fwrite(zeros, 1, sizeof(zeros), fp);
    fclose(fp);
    open_all(f);
    assert_int_equal(ctld_acct_spool_last(f->sp), 3);
    add_jobs(f, 10, 2);
    run_rounds(f);
    json_t *arr;
    ctld_acct_pos_t pos;
    uint64_t last = 0;
    assert_int_equal(read_due(f, &arr, &pos, &last), 5);
    assert_int_equal(last, 5);
    json_decref(arr);
    ctld_acct_spool_acked(f->sp, last, &pos);
    add_jobs(f, 20, 1); /* read on in the segment being written, past its zero tail */
    run_rounds(f);
    assert_int_equal(read_due(f, &arr, &pos, &last), 1);
    assert_int_equal(last, 6);
    json_decref(arr);
}

/* A read racing the journal's write: a line of the segment being written can
 * come back with its start still zero (the preallocated tail) and its end
 * written. The reader stops there and reads it again; in an older segment
 * such a line is a torn remnant and is stepped over. */
static void test_torn_read_in_write_segment(void **state)
{
    fixture_t *f = *state;
    static const char l1[] = "{\"seq\":1,\"job\":{\"job_id\":1}}\n";
    static const char l2[] = "\0\0\0\0\0\0\0\0\"job\":{\"job_id\":2}}\n";
    static const char l3[] = "{\"seq\":3,\"job\":{\"job_id\":3}}\n";
    char dir[128], path[256];
    snprintf(dir, sizeof(dir), "%s/acct", f->dir);
    snprintf(path, sizeof(path), "%s/spool.%020d", dir, 7);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fwrite(l1, 1, sizeof(l1) - 1, fp);
    fwrite(l2, 1, sizeof(l2) - 1, fp);
    fwrite(l3, 1, sizeof(l3) - 1, fp);
    fclose(fp);
    uint64_t segs[] = {7};
    for (int writing = 1; writing >= 0; writing--) {
        ctld_acct_read_t r = {.dir = dir,
                              .segs = segs,
                              .nsegs = 1,
                              .write_seg = writing ? 7 : 0,
                              .pos = {7, 0},
                              .after = 0,
                              .limit = 3};
        json_t *arr = json_array();
        uint64_t last = 0;
        int n = ctld_acct_spool_read(&r, arr, &last, NULL);
        assert_int_equal(n, writing ? 1 : 2);
        assert_int_equal(last, writing ? 1 : 3);
        assert_int_equal(r.pos.off,
                         writing ? sizeof(l1) - 1 : sizeof(l1) + sizeof(l2) + sizeof(l3) - 3);
        json_decref(arr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_durable_then_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_segments_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_tail_after_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_read_in_write_segment, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

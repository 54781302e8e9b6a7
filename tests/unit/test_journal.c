/* test_journal.c - the controller's journal: append, group commit, snapshot, replay, torn tail. */
#include "ctld/journal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char dir[64];
    uv_loop_t loop;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/loom-journal-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    uv_loop_init(&f->loop);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    DIR *d = opendir(f->dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%.300s", f->dir, de->d_name);
        if (de->d_name[0] != '.')
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* What a recovery saw. */
typedef struct {
    int snapshots;
    int snap_x;
    uint64_t seqs[256];
    int vals[256];
    size_t n;
    int reject_at; /* seq to refuse, 0 = none */
} seen_t;

static int replay_cb(void *arg, const json_t *state, const json_t *entry)
{
    seen_t *s = arg;
    if (state) {
        s->snapshots++;
        s->snap_x = (int)json_integer_value(json_object_get(state, "x"));
        return 0;
    }
    uint64_t seq = (uint64_t)json_integer_value(json_object_get(entry, "seq"));
    if (s->reject_at && seq == (uint64_t)s->reject_at)
        return -EINVAL;
    s->seqs[s->n] = seq;
    s->vals[s->n++] = (int)json_integer_value(json_object_get(entry, "v"));
    return 0;
}

/* Counts entries (the seen_t arrays hold only 256). */
static int count_cb(void *arg, const json_t *state, const json_t *entry)
{
    if (entry)
        ++*(uint64_t *)arg;
    return 0;
}

/* A state of one record: arg. */
static int put_one(void *arg, loom_journal_put_f *put, void *put_arg)
{
    return put(put_arg, arg);
}

static uint64_t append_v(loom_journal_t *j, int v)
{
    json_t *e = json_pack("{s:s, s:i}", "ev", "test", "v", v);
    uint64_t seq = loom_journal_append(j, e);
    json_decref(e);
    return seq;
}

static void run_until_idle(fixture_t *f, loom_journal_t *j)
{
    while (!loom_journal_idle(j))
        uv_run(&f->loop, UV_RUN_ONCE);
}

static loom_journal_t *open_at(fixture_t *f, uint64_t next)
{
    loom_journal_t *j = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_journal_open(&f->loop, f->dir, next, &j, &err), 0);
    return j;
}

static void close_j(fixture_t *f, loom_journal_t *j)
{
    loom_journal_close(j);
    uv_run(&f->loop, UV_RUN_DEFAULT);
}

static int recover(fixture_t *f, seen_t *s, uint64_t *last)
{
    loom_err_t err = {0};
    return loom_journal_recover(f->dir, replay_cb, s, last, &err);
}

static void test_append_replay(void **state)
{
    fixture_t *f = *state;
    seen_t s = {0};
    uint64_t last = 99;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(last, 0);
    loom_journal_t *j = open_at(f, last + 1);
    for (int i = 1; i <= 10; i++)
        assert_int_equal(append_v(j, i * 10), i);
    json_t *empty = json_object();
    assert_int_equal(loom_journal_append(j, empty), 11);
    json_decref(empty);
    run_until_idle(f, j);
    assert_int_equal(loom_journal_stats(j)->durable_seq, 11);
    close_j(f, j);
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(last, 11);
    assert_int_equal(s.n, 11);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(s.seqs[i], i + 1);
        assert_int_equal(s.vals[i], (int)(i + 1) * 10);
    }
}

typedef struct {
    uint64_t order[8];
    int n;
    int status;
} waits_t;

static void wait_cb_a(void *arg, int status)
{
    waits_t *w = arg;
    w->order[w->n++] = 1;
    w->status |= status;
}

static void wait_cb_b(void *arg, int status)
{
    waits_t *w = arg;
    w->order[w->n++] = 2;
    w->status |= status;
}

/* Entries appended while an fsync runs share the next one. */
static void test_group_commit(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    waits_t w = {0};
    uint64_t first = append_v(j, 1);
    assert_int_equal(loom_journal_wait(j, first, wait_cb_a, &w), 0);
    /* One loop iteration: the idle handle hands the first entry to the pool
     * (its fsync usually still runs when the next 50 arrive). */
    uv_run(&f->loop, UV_RUN_NOWAIT);
    uint64_t lastseq = 0;
    for (int i = 0; i < 50; i++)
        lastseq = append_v(j, 100 + i);
    assert_int_equal(loom_journal_wait(j, lastseq, wait_cb_b, &w), 0);
    assert_int_equal(w.n, 0); /* nothing is acknowledged before its fsync */
    while (w.n < 2)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_int_equal(w.order[0], 1);
    assert_int_equal(w.order[1], 2);
    assert_int_equal(w.status, 0);
    const loom_journal_stats_t *st = loom_journal_stats(j);
    assert_int_equal(st->batches, 2);
    assert_int_equal(st->appended, 51);
    assert_int_equal(st->durable_seq, lastseq);
    /* Already durable: wait says so at once. */
    assert_int_equal(loom_journal_wait(j, first, wait_cb_a, &w), 1);
    close_j(f, j);
}

/* Entries appended in one loop iteration share one fsync. */
static void test_one_fsync_per_burst(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    for (int i = 0; i < 200; i++)
        append_v(j, i);
    run_until_idle(f, j);
    assert_int_equal(loom_journal_stats(j)->batches, 1);
    close_j(f, j);
}

static size_t count_segments(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d)))
        n += strncmp(de->d_name, "journal.", 8) == 0;
    closedir(d);
    return n;
}

static void test_snapshot(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    for (int i = 1; i <= 5; i++)
        append_v(j, i);
    json_t *st = json_pack("{s:i}", "x", 5);
    assert_int_equal(loom_journal_snapshot(j, put_one, st), 0);
    assert_int_equal(loom_journal_snapshot(j, put_one, st), -EBUSY);
    json_decref(st);
    for (int i = 6; i <= 8; i++)
        append_v(j, i);
    run_until_idle(f, j);
    assert_int_equal(loom_journal_stats(j)->snapshots, 1);
    assert_int_equal(loom_journal_stats(j)->since_snapshot, 3);
    close_j(f, j);
    assert_int_equal(count_segments(f->dir), 1); /* the old segment is gone */
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(s.snapshots, 1);
    assert_int_equal(s.snap_x, 5);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.seqs[0], 6);
    assert_int_equal(last, 8);
    /* A snapshot right after opening (nothing in the new segment) is fine too. */
    j = open_at(f, last + 1);
    st = json_pack("{s:i}", "x", 8);
    assert_int_equal(loom_journal_snapshot(j, put_one, st), 0);
    json_decref(st);
    append_v(j, 9);
    run_until_idle(f, j);
    close_j(f, j);
    seen_t s2 = {0};
    assert_int_equal(recover(f, &s2, &last), 0);
    assert_int_equal(s2.snap_x, 8);
    assert_int_equal(s2.n, 1);
    assert_int_equal(last, 9);
}

static void append_raw(const char *dir, const char *text)
{
    /* The newest segment: names sort by their first sequence number. */
    DIR *d = opendir(dir);
    struct dirent *de;
    char best[64] = "";
    while ((de = readdir(d)))
        if (strncmp(de->d_name, "journal.", 8) == 0 && strlen(de->d_name) < sizeof(best) &&
            strcmp(de->d_name, best) > 0)
            snprintf(best, sizeof(best), "%.40s", de->d_name);
    closedir(d);
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, best);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* A write torn by a crash is dropped, in the last segment or an earlier one. */
static void test_torn_tail(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    for (int i = 1; i <= 3; i++)
        append_v(j, i);
    run_until_idle(f, j);
    close_j(f, j);
    append_raw(f->dir, "{\"seq\":4,\"ev\":\"te");
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(last, 3);
    j = open_at(f, last + 1);
    append_v(j, 4);
    run_until_idle(f, j);
    close_j(f, j);
    /* A complete but garbled last line counts as torn as well. */
    append_raw(f->dir, "{\"seq\":5,\"ev\":\n");
    seen_t s2 = {0};
    assert_int_equal(recover(f, &s2, &last), 0);
    assert_int_equal(s2.n, 4);
    assert_int_equal(s2.seqs[3], 4);
    assert_int_equal(last, 4);
    /* A segment holding only a torn write at the next sequence is set aside. */
    j = open_at(f, last + 1);
    close_j(f, j);
    append_raw(f->dir, "{\"seq\":5");
    j = open_at(f, last + 1);
    append_v(j, 5);
    run_until_idle(f, j);
    close_j(f, j);
    seen_t s3 = {0};
    assert_int_equal(recover(f, &s3, &last), 0);
    assert_int_equal(last, 5);
}

/* Corruption before the end of a segment is an error, as is a rejected entry. */
static void test_corruption(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    append_v(j, 1);
    run_until_idle(f, j);
    close_j(f, j);
    append_raw(f->dir, "garbage\n{\"seq\":3,\"v\":3}\n");
    seen_t s = {0};
    uint64_t last = 77;
    loom_err_t err = {0};
    assert_int_equal(loom_journal_recover(f->dir, replay_cb, &s, &last, &err), -LOOM_EPARSE);
    assert_non_null(strstr(err.msg, ":2: corrupt journal entry"));
    assert_int_equal(last, 77);
}

static void test_rejected_and_order(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    for (int i = 1; i <= 3; i++)
        append_v(j, i);
    run_until_idle(f, j);
    close_j(f, j);
    seen_t s = {.reject_at = 2};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), -EINVAL);
    append_raw(f->dir, "{\"seq\":2,\"v\":9}\n{\"seq\":9,\"v\":9}\n");
    seen_t s2 = {0};
    loom_err_t err = {0};
    assert_int_equal(loom_journal_recover(f->dir, replay_cb, &s2, &last, &err), -LOOM_EPARSE);
    assert_non_null(strstr(err.msg, "out of order"));
}

/* Waiters still queued at close are told, and pending entries are flushed. */
static void test_close_flushes(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    waits_t w = {0};
    uint64_t seq = append_v(j, 1);
    assert_int_equal(loom_journal_wait(j, seq, wait_cb_a, &w), 0);
    close_j(f, j);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.status, 0);
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(last, 1);
}

/* The newest segment's path and size. */
static off_t newest_segment(const char *dir, char *path, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char best[64] = "";
    while ((de = readdir(d)))
        if (strncmp(de->d_name, "journal.", 8) == 0 && strlen(de->d_name) < sizeof(best) &&
            strcmp(de->d_name, best) > 0)
            snprintf(best, sizeof(best), "%.40s", de->d_name);
    closedir(d);
    snprintf(path, size, "%s/%s", dir, best);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Segments grow by zero-filled extents: a crash leaves zeros after the last
 * entry (replayed up to the first NUL), a clean close trims them. */
static void test_preallocated_tail(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    for (int i = 1; i <= 5; i++)
        append_v(j, i);
    run_until_idle(f, j);
    char path[256];
    assert_true(newest_segment(f->dir, path, sizeof(path)) >= (1 << 20));
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0); /* as after kill -9 */
    assert_int_equal(s.n, 5);
    assert_int_equal(last, 5);
    /* A write torn inside the zeros: the partial entry is dropped. */
    int fd = open(path, O_WRONLY);
    const char *torn = "{\"seq\":6,\"ev\":\"te";
    off_t end = (off_t)(loom_journal_stats(j)->bytes);
    assert_int_equal(pwrite(fd, torn, strlen(torn), end), (ssize_t)strlen(torn));
    /* Bytes after the zeros were never acknowledged either. */
    assert_int_equal(pwrite(fd, "{\"seq\":7,\"v\":7}\n", 17, end + 4096), 17);
    close(fd);
    seen_t s2 = {0};
    assert_int_equal(recover(f, &s2, &last), 0);
    assert_int_equal(s2.n, 5);
    assert_int_equal(last, 5);
    close_j(f, j);
    assert_int_equal(newest_segment(f->dir, path, sizeof(path)), end);
    /* Larger batches extend the segment past its first extent. */
    j = open_at(f, 6);
    char big[1024];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int i = 0; i < 3000; i++) {
        json_t *e = json_pack("{s:s, s:i, s:s}", "ev", "test", "v", i, "pad", big);
        loom_journal_append(j, e);
        json_decref(e);
        if (i % 500 == 0)
            run_until_idle(f, j);
    }
    run_until_idle(f, j);
    close_j(f, j);
    loom_err_t err = {0};
    uint64_t last3 = 0;
    assert_int_equal(loom_journal_recover(f->dir, count_cb, &last3, &last, &err), 0);
    assert_int_equal(last, 3005);
    assert_int_equal(last3, 3005); /* the first segment's 5 and these */
}

/* A state larger than the write-out piece goes to disk whole. */
static void test_large_snapshot(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    append_v(j, 1);
    size_t n = 3u << 20;
    char *pad = malloc(n + 1);
    memset(pad, 'p', n);
    pad[n] = '\0';
    json_t *st = json_pack("{s:i, s:s}", "x", 5, "pad", pad);
    free(pad);
    assert_int_equal(loom_journal_snapshot(j, put_one, st), 0);
    assert_int_equal(loom_journal_snapshot(j, put_one, st), -EBUSY);
    json_decref(st);
    append_v(j, 2);
    run_until_idle(f, j);
    assert_int_equal(loom_journal_stats(j)->snapshots, 1);
    close_j(f, j);
    char path[256];
    snprintf(path, sizeof(path), "%s/snapshot.tmp", f->dir);
    assert_int_not_equal(access(path, F_OK), 0);
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(s.snapshots, 1);
    assert_int_equal(s.snap_x, 5);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.vals[0], 2);
    assert_int_equal(last, 2);
}

/* Records of a streamed snapshot: {"x":1} .. {"x":n}. */
static int put_n(void *arg, loom_journal_put_f *put, void *put_arg)
{
    int n = *(int *)arg, rc = 0;
    for (int i = 1; i <= n && rc == 0; i++) {
        json_t *rec = json_pack("{s:i}", "x", i);
        rc = put(put_arg, rec);
        json_decref(rec);
    }
    return rc;
}

static int put_abandon(void *arg, loom_journal_put_f *put, void *put_arg)
{
    (void)arg;
    json_t *rec = json_pack("{s:i}", "x", 1);
    int rc = put(put_arg, rec);
    json_decref(rec);
    return rc < 0 ? rc : -ENOSPC;
}

static int put_end(void *arg, loom_journal_put_f *put, void *put_arg)
{
    (void)arg;
    json_t *rec = json_pack("{s:i}", "end", 0); /* the end line is the journal's */
    int rc = put(put_arg, rec);
    json_decref(rec);
    return rc;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Each record reaches the replay callback in order; the producer may fail. */
static void test_snapshot_records(void **state)
{
    fixture_t *f = *state;
    loom_journal_t *j = open_at(f, 1);
    append_v(j, 1);
    int n = 100;
    assert_int_equal(loom_journal_snapshot(j, put_abandon, NULL), -ENOSPC);
    assert_int_equal(loom_journal_snapshot(j, put_end, NULL), -EINVAL);
    assert_int_equal(loom_journal_snapshot(j, put_n, &n), 0);
    append_v(j, 2);
    run_until_idle(f, j);
    close_j(f, j);
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(s.snapshots, 100);
    assert_int_equal(s.snap_x, 100); /* the last record came last */
    assert_int_equal(s.n, 1);
    assert_int_equal(last, 2);
}

/* An older snapshot ({"seq":S,"state":{...}} on one line) is one record. */
static void test_snapshot_old_format(void **state)
{
    fixture_t *f = *state;
    write_file(f->dir, "snapshot.json", "{\"seq\":7,\"state\":{\"x\":3}}\n");
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(s.snapshots, 1);
    assert_int_equal(s.snap_x, 3);
    assert_int_equal(last, 7);
}

/* A snapshot cut short, or with a bad record or count, is an error. */
static void test_snapshot_corrupt(void **state)
{
    fixture_t *f = *state;
    static const char *const bad[] = {
        "{\"seq\":7,\"format\":2}\n{\"x\":1}\n",
        "{\"seq\":7,\"format\":2}\n{\"x\":1}\n{\"end\":2}\n",
        "{\"seq\":7,\"format\":2}\n{\"x\":\n{\"end\":1}\n",
        "{\"seq\":7,\"format\":2}\n[1]\n{\"end\":1}\n",
        "{\"seq\":7}\n{\"end\":0}\n",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file(f->dir, "snapshot.json", bad[i]);
        seen_t s = {0};
        uint64_t last = 0;
        loom_err_t err = {0};
        assert_int_equal(loom_journal_recover(f->dir, replay_cb, &s, &last, &err), -LOOM_EPARSE);
        assert_non_null(strstr(err.msg, "snapshot"));
    }
    write_file(f->dir, "snapshot.json", "{\"seq\":7,\"format\":2}\n{\"x\":4}\n{\"end\":1}\n");
    seen_t s = {0};
    uint64_t last = 0;
    assert_int_equal(recover(f, &s, &last), 0);
    assert_int_equal(s.snap_x, 4);
    assert_int_equal(last, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_append_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_fsync_per_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected_and_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_flushes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preallocated_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_old_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_corrupt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* journal.c - append-only journal, group commit, snapshots, recovery. See journal.h. */
#include "ctld/journal.h"
#include "common/jsonread.h"
#include "common/log.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_SNAPSHOT     "snapshot.json"
#define JOURNAL_SNAPSHOT_TMP "snapshot.tmp"
#define JOURNAL_PREFIX       "journal."
/* Segments grow by zero-filled extents (journal.h, preallocation): the first
 * one this size, each next one as large as the segment so far, at most MAX. */
#define JOURNAL_GROW_MIN (1u << 20)
#define JOURNAL_GROW_MAX (16u << 20)
/* A snapshot is written out in pieces of about this size. */
#define JOURNAL_SNAP_CHUNK (1u << 20)

typedef struct {
    uint64_t seq;
    loom_journal_done_f *cb;
    void *arg;
} waiter_t;

/* Bytes for one file of the second stream (journal.h, aux). */
typedef struct {
    char *path;
    loom_sbuf_t data;
} aux_chunk_t;

/* The aux file being written: kept open across rounds and grown by
 * zero-filled extents like a segment, so that its fdatasync writes data only.
 * Touched by the worker while a round is in flight, else by the loop. */
typedef struct {
    char *path;
    int fd;
    uint64_t off, alloc_end;
} aux_file_t;

/* One round on the thread pool. Workers see only this struct, never the journal. */
typedef struct {
    uv_work_t work;
    loom_journal_t *j;
    char *dir;
    int fd;
    uint64_t off;       /* where data goes in the segment */
    uint64_t alloc_end; /* in/out: bytes of the segment already written (zeros past off) */
    loom_sbuf_t data;
    uint64_t last_seq;
    bool snap;   /* a snapshot in this round: snapshot.tmp written, snap_fd open */
    int snap_fd; /* -1 once closed */
    uint64_t snap_seq;
    bool rotate;      /* start segment snap_seq + 1 after the snapshot */
    aux_chunk_t *aux; /* written beside the entries, in the same round */
    size_t naux;
    aux_file_t *auxf;
    uv_work_t aux_work; /* the aux write+fdatasync runs beside the entries' */
    bool aux_inline;    /* ... or after them, in the same work item */
    int aux_status;     /* out */
    int parts;          /* work items still running */
    int new_fd;         /* out */
    int status;         /* out */
} batch_t;

struct loom_journal {
    uv_loop_t *loop;
    char *dir;
    int fd;
    uint64_t off;       /* end of the entries in the open segment */
    uint64_t alloc_end; /* its size: zeros from off to here */
    uint64_t seg_start; /* first seq of the open segment */
    uint64_t next_seq;
    loom_sbuf_t pending;
    uint64_t pending_last;
    batch_t *inflight;
    uv_idle_t idle;
    bool idle_on;
    waiter_t *waiters;
    size_t whead, wlen, wcap;
    int snap_fd; /* snapshot.tmp written, waiting for its round; -1: none */
    uint64_t snap_seq;
    size_t snap_split; /* pending bytes that precede the snapshot */
    int failed;
    bool closing;
    loom_journal_stats_t stats;
    aux_chunk_t *aux; /* pending for the next round */
    size_t naux;
    aux_file_t auxf;
    loom_journal_hook_f *before;
    loom_journal_done_f *after;
    void *hook_arg;
};

static void journal_start_batch(loom_journal_t *j);

static void journal_path(char *out, size_t size, const char *dir, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static void journal_seg_name(char *out, size_t size, uint64_t start)
{
    snprintf(out, size, JOURNAL_PREFIX "%020" PRIu64, start);
}

/* Parse "journal.<20 digits>"; false for any other name. */
static bool journal_parse_seg(const char *name, uint64_t *start)
{
    size_t plen = strlen(JOURNAL_PREFIX);
    if (strncmp(name, JOURNAL_PREFIX, plen) != 0 || strlen(name) != plen + 20)
        return false;
    uint64_t v = 0;
    for (const char *p = name + plen; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *start = v;
    return true;
}

static int journal_write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int journal_pwrite_all(int fd, const char *buf, size_t len, uint64_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, buf, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        buf += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* Make the segment at least `need` bytes long by writing zeros past
 * *alloc_end, so that the entries later overwrite blocks that already exist
 * and fdatasync has only data to write, not the inode (size, extents). The
 * caller's fdatasync makes the zeros durable with the entries. */
static int journal_reserve(int fd, uint64_t need, uint64_t *alloc_end)
{
    static const char zeros[64 * 1024];
    uint64_t end = *alloc_end;
    if (need <= end)
        return 0;
    uint64_t grow = end < JOURNAL_GROW_MIN   ? JOURNAL_GROW_MIN
                    : end > JOURNAL_GROW_MAX ? JOURNAL_GROW_MAX
                                             : end;
    uint64_t target = end;
    while (target < need)
        target += grow;
    while (end < target) {
        size_t n = target - end < sizeof(zeros) ? (size_t)(target - end) : sizeof(zeros);
        int rc = journal_pwrite_all(fd, zeros, n, end);
        if (rc < 0)
            return rc;
        end += n;
        *alloc_end = end;
    }
    return 0;
}

/* Write an entry batch at off and make it durable. */
static int journal_write_entries(int fd, const loom_sbuf_t *data, uint64_t off, uint64_t *alloc_end)
{
    int rc = journal_reserve(fd, off + data->len, alloc_end);
    if (rc == 0)
        rc = journal_pwrite_all(fd, data->buf, data->len, off);
    if (rc == 0 && fdatasync(fd) < 0)
        rc = -errno;
    return rc;
}

static int journal_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int journal_open_segment(const char *dir, uint64_t start, int *fd_out)
{
    char name[64], path[PATH_MAX];
    journal_seg_name(name, sizeof(name), start);
    journal_path(path, sizeof(path), dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Recovery found no valid entry at or after `start`, so this segment
         * holds only a torn write that was never acknowledged: keep it aside. */
        char aside[PATH_MAX + 8];
        snprintf(aside, sizeof(aside), "%s.torn", path);
        if (rename(path, aside) == 0)
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        return -errno;
    int rc = journal_fsync_dir(dir);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* Remove segments whose entries all precede `before`. */
static void journal_remove_old(const char *dir, uint64_t before)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t start;
        char path[PATH_MAX];
        if (journal_parse_seg(de->d_name, &start) && start < before) {
            journal_path(path, sizeof(path), dir, de->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

/* Close the aux file, cutting its zero tail (it ends at its last byte). */
static void journal_aux_close(aux_file_t *f)
{
    if (f->fd >= 0) {
        if (f->alloc_end > f->off && ftruncate(f->fd, (off_t)f->off) < 0)
            loom_debug("journal: cannot trim %s: %s", f->path, strerror(errno));
        close(f->fd);
    }
    free(f->path);
    f->path = NULL;
    f->fd = -1;
    f->off = f->alloc_end = 0;
}

/* Open path as the aux file; a file created here gets its directory fsynced. */
static int journal_aux_open(aux_file_t *f, const char *path)
{
    journal_aux_close(f);
    bool created = true;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = false;
        fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int rc = -errno;
        if (fd >= 0)
            close(fd);
        return rc;
    }
    f->fd = fd;
    f->path = loom_xstrdup(path);
    f->off = f->alloc_end = (uint64_t)st.st_size;
    if (!created)
        return 0;
    char *dir = loom_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int rc = journal_fsync_dir(slash ? dir : ".");
    free(dir);
    return rc;
}

/* Write a chunk of the second stream at the end of its file, durably. */
static int journal_write_aux(aux_file_t *f, const aux_chunk_t *a)
{
    int rc = 0;
    if (!f->path || strcmp(f->path, a->path) != 0)
        rc = journal_aux_open(f, a->path);
    if (rc == 0)
        rc = journal_write_entries(f->fd, &a->data, f->off, &f->alloc_end);
    if (rc == 0)
        f->off += a->data.len;
    return rc;
}

static void journal_aux_free(aux_chunk_t *aux, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(aux[i].path);
        loom_sbuf_free(&aux[i].data);
    }
    free(aux);
}

/* Make the written snapshot.tmp durable and put it in place. Closes *fd. */
static int journal_commit_snapshot(const char *dir, int *fd)
{
    char tmp[PATH_MAX], final[PATH_MAX];
    journal_path(tmp, sizeof(tmp), dir, JOURNAL_SNAPSHOT_TMP);
    journal_path(final, sizeof(final), dir, JOURNAL_SNAPSHOT);
    /* The whole file system, not only snapshot.tmp: files the caller wrote
     * beside the journal without fsync (job scripts) must be durable before
     * the segments whose entries carry them go (journal.h). */
    int rc = syncfs(*fd) < 0 ? -errno : 0;
    close(*fd);
    *fd = -1;
    if (rc == 0 && rename(tmp, final) < 0)
        rc = -errno;
    if (rc == 0)
        rc = journal_fsync_dir(dir);
    return rc;
}

/* Thread pool: write the batch, fsync, then the snapshot and rotation. */
static void journal_work(uv_work_t *w)
{
    batch_t *b = w->data;
    b->status = 0;
    if (b->data.len)
        b->status = journal_write_entries(b->fd, &b->data, b->off, &b->alloc_end);
    for (size_t i = 0; b->aux_inline && i < b->naux && b->status == 0; i++)
        b->status = journal_write_aux(b->auxf, &b->aux[i]);
    if (b->status == 0 && b->snap) {
        b->status = journal_commit_snapshot(b->dir, &b->snap_fd);
        if (b->status == 0 && b->rotate)
            b->status = journal_open_segment(b->dir, b->snap_seq + 1, &b->new_fd);
        if (b->status == 0)
            journal_remove_old(b->dir, b->snap_seq + 1);
    }
}

static void journal_batch_free(batch_t *b)
{
    loom_sbuf_free(&b->data);
    journal_aux_free(b->aux, b->naux);
    if (b->snap_fd >= 0)
        close(b->snap_fd);
    free(b->dir);
    free(b);
}

/* Run the waiters whose entries are durable (all of them, with the error, on failure). */
static void journal_run_waiters(loom_journal_t *j, int status)
{
    while (j->wlen) {
        waiter_t w = j->waiters[j->whead];
        if (status == 0 && w.seq > j->stats.durable_seq)
            break;
        j->whead = (j->whead + 1) % j->wcap;
        j->wlen--;
        w.cb(w.arg, status);
    }
}

/* Thread pool: the aux chunks, beside the entries (two fdatasyncs at once). */
static void journal_aux_work(uv_work_t *w)
{
    batch_t *b = w->data;
    b->aux_status = 0;
    for (size_t i = 0; i < b->naux && b->aux_status == 0; i++)
        b->aux_status = journal_write_aux(b->auxf, &b->aux[i]);
}

static void journal_after_work(uv_work_t *w, int uvstatus)
{
    batch_t *b = w->data;
    loom_journal_t *j = b->j;
    if (uvstatus < 0 && w == &b->aux_work)
        b->aux_status = uvstatus;
    else if (uvstatus < 0)
        b->status = uvstatus;
    if (--b->parts > 0)
        return; /* the other half of the round still runs */
    int status = b->status ? b->status : b->aux_status;
    j->inflight = NULL;
    if (status == 0) {
        j->stats.batches++;
        j->stats.bytes += b->data.len;
        j->stats.durable_seq = b->last_seq;
        j->off = b->off + b->data.len;
        j->alloc_end = b->alloc_end;
        if (b->snap)
            j->stats.snapshots++;
        if (b->rotate) {
            close(j->fd);
            j->fd = b->new_fd;
            j->seg_start = b->snap_seq + 1;
            j->off = j->alloc_end = 0;
        }
    } else {
        j->failed = status;
    }
    journal_batch_free(b);
    if (j->after)
        j->after(j->hook_arg, status);
    journal_run_waiters(j, j->failed);
    if (!j->failed && (j->pending.len || j->snap_fd >= 0 || j->naux))
        journal_start_batch(j);
    if (j->closing && !j->inflight)
        loom_journal_close(j);
}

static void journal_start_batch(loom_journal_t *j)
{
    if (j->inflight || j->failed || (!j->pending.len && j->snap_fd < 0 && !j->naux))
        return;
    if (j->before)
        j->before(j->hook_arg);
    batch_t *b = loom_xcalloc(1, sizeof(*b));
    b->aux = j->aux;
    b->naux = j->naux;
    b->auxf = &j->auxf;
    j->aux = NULL;
    j->naux = 0;
    b->j = j;
    b->dir = loom_xstrdup(j->dir);
    b->fd = j->fd;
    b->off = j->off;
    b->alloc_end = j->alloc_end;
    b->snap_fd = -1;
    if (j->snap_fd >= 0 && j->snap_split < j->pending.len) {
        /* Entries after the snapshot's seq belong to the next segment. */
        loom_sbuf_addn(&b->data, j->pending.buf, j->snap_split);
        size_t rest = j->pending.len - j->snap_split;
        memmove(j->pending.buf, j->pending.buf + j->snap_split, rest);
        loom_sbuf_truncate(&j->pending, rest);
        b->last_seq = j->snap_seq;
    } else {
        b->data = j->pending;
        loom_sbuf_init(&j->pending);
        b->last_seq = j->pending_last ? j->pending_last : j->stats.durable_seq;
    }
    if (j->snap_fd >= 0) {
        b->snap = true;
        b->snap_fd = j->snap_fd;
        b->snap_seq = j->snap_seq;
        /* The open segment may start after the snapshot (nothing in it yet). */
        b->rotate = j->seg_start <= j->snap_seq;
        j->snap_fd = -1;
    }
    b->work.data = b;
    b->aux_work.data = b;
    j->inflight = b;
    b->parts = 1;
    b->aux_inline =
        !b->naux || uv_queue_work(j->loop, &b->aux_work, journal_aux_work, journal_after_work) < 0;
    if (!b->aux_inline)
        b->parts++;
    int rc = uv_queue_work(j->loop, &b->work, journal_work, journal_after_work);
    if (rc < 0 && !b->aux_inline) {
        b->status = rc; /* the aux half ends the round */
        b->parts--;
        rc = 0;
    }
    if (rc < 0) {
        j->inflight = NULL;
        j->failed = rc;
        journal_batch_free(b);
        journal_run_waiters(j, rc);
    }
}

/* Next loop iteration, before polling: everything appended by the callbacks of
 * the previous iteration goes in one batch. An active idle handle also keeps
 * the loop from blocking in poll meanwhile. */
static void journal_idle_cb(uv_idle_t *h)
{
    loom_journal_t *j = h->data;
    uv_idle_stop(h);
    j->idle_on = false;
    journal_start_batch(j);
}

static void journal_kick(loom_journal_t *j)
{
    if (j->inflight || j->idle_on || j->closing)
        return;
    uv_idle_start(&j->idle, journal_idle_cb);
    j->idle_on = true;
}

int loom_journal_open(uv_loop_t *loop, const char *dir, uint64_t next_seq, loom_journal_t **out,
                      loom_err_t *err)
{
    if (next_seq == 0)
        next_seq = 1;
    int fd;
    int rc = journal_open_segment(dir, next_seq, &fd);
    if (rc < 0)
        return loom_errf(err, rc, "cannot create journal segment %" PRIu64 " in %s: %s", next_seq,
                         dir, strerror(-rc));
    loom_journal_t *j = loom_xcalloc(1, sizeof(*j));
    j->loop = loop;
    j->dir = loom_xstrdup(dir);
    j->fd = fd;
    j->snap_fd = -1;
    j->seg_start = next_seq;
    j->next_seq = next_seq;
    j->stats.durable_seq = next_seq - 1;
    j->auxf.fd = -1;
    j->stats.last_seq = next_seq - 1;
    uv_idle_init(loop, &j->idle);
    j->idle.data = j;
    *out = j;
    return 0;
}

/* jansson dump callback that drops the object's opening brace (unless
 * skipped is set) and, with fd >= 0, writes out every JOURNAL_SNAP_CHUNK. */
typedef struct {
    loom_sbuf_t *sb;
    bool skipped;
    int fd;
} dump_ctx_t;

static int journal_dump_cb(const char *buf, size_t size, void *data)
{
    dump_ctx_t *d = data;
    if (!d->skipped && size) {
        d->skipped = true;
        buf++;
        size--;
    }
    loom_sbuf_addn(d->sb, buf, size);
    if (d->fd < 0 || d->sb->len < JOURNAL_SNAP_CHUNK)
        return 0;
    int rc = journal_write_all(d->fd, d->sb->buf, d->sb->len);
    loom_sbuf_reset(d->sb);
    return rc < 0 ? -1 : 0;
}

uint64_t loom_journal_append(loom_journal_t *j, const json_t *entry)
{
    if (j->failed || !json_is_object(entry))
        return 0;
    uint64_t seq = j->next_seq++;
    size_t mark = j->pending.len;
    loom_sbuf_addf(&j->pending, "{\"seq\":%" PRIu64, seq);
    if (json_object_size(entry))
        loom_sbuf_addc(&j->pending, ',');
    dump_ctx_t d = {&j->pending, false, -1};
    if (json_dump_callback(entry, journal_dump_cb, &d, JSON_COMPACT) < 0) {
        loom_sbuf_truncate(&j->pending, mark);
        j->next_seq--;
        return 0;
    }
    loom_sbuf_addc(&j->pending, '\n');
    j->pending_last = seq;
    j->stats.appended++;
    j->stats.since_snapshot++;
    j->stats.last_seq = seq;
    journal_kick(j);
    return seq;
}

int loom_journal_wait(loom_journal_t *j, uint64_t seq, loom_journal_done_f *cb, void *arg)
{
    if (j->failed)
        return j->failed;
    if (seq <= j->stats.durable_seq)
        return 1;
    if (j->wlen == j->wcap) {
        size_t ncap = j->wcap ? j->wcap * 2 : 64;
        waiter_t *nw = loom_xcalloc(ncap, sizeof(*nw));
        for (size_t i = 0; i < j->wlen; i++)
            nw[i] = j->waiters[(j->whead + i) % j->wcap];
        free(j->waiters);
        j->waiters = nw;
        j->wcap = ncap;
        j->whead = 0;
    }
    j->waiters[(j->whead + j->wlen) % j->wcap] = (waiter_t){seq, cb, arg};
    j->wlen++;
    return 0;
}

/* The snapshot being written: records go to sb, written out every
 * JOURNAL_SNAP_CHUNK bytes (journal_dump_cb). */
typedef struct {
    loom_sbuf_t sb;
    int fd;
    uint64_t nrec;
    int rc;
} snap_put_t;

static int journal_snap_put(void *arg, const json_t *rec)
{
    snap_put_t *p = arg;
    if (p->rc < 0)
        return p->rc;
    if (!json_is_object(rec) || (json_object_size(rec) == 1 && json_object_get(rec, "end")))
        return p->rc = -EINVAL;
    dump_ctx_t d = {&p->sb, true, p->fd}; /* keeps the opening brace */
    if (json_dump_callback(rec, journal_dump_cb, &d, JSON_COMPACT) < 0)
        return p->rc = -EIO;
    loom_sbuf_addc(&p->sb, '\n');
    p->nrec++;
    return 0;
}

/* Write snapshot.tmp now, a record at a time and a chunk at a time (neither
 * the state nor its text is ever whole in memory); its fsync and rename wait
 * for the next round. */
static int journal_dump_snapshot(const char *dir, uint64_t seq, loom_journal_state_f *fn, void *arg,
                                 int *fd_out)
{
    char tmp[PATH_MAX];
    journal_path(tmp, sizeof(tmp), dir, JOURNAL_SNAPSHOT_TMP);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    snap_put_t p = {.fd = fd};
    loom_sbuf_addf(&p.sb, "{\"seq\":%" PRIu64 ",\"format\":2}\n", seq);
    int rc = fn(arg, journal_snap_put, &p);
    if (rc == 0)
        rc = p.rc;
    loom_sbuf_addf(&p.sb, "{\"end\":%" PRIu64 "}\n", p.nrec);
    if (rc == 0)
        rc = journal_write_all(fd, p.sb.buf, p.sb.len);
    loom_sbuf_free(&p.sb);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

int loom_journal_snapshot(loom_journal_t *j, loom_journal_state_f *fn, void *arg)
{
    if (j->failed)
        return j->failed;
    if (j->snap_fd >= 0 || (j->inflight && j->inflight->snap))
        return -EBUSY;
    int rc = journal_dump_snapshot(j->dir, j->stats.last_seq, fn, arg, &j->snap_fd);
    if (rc < 0)
        return rc;
    j->snap_seq = j->stats.last_seq;
    j->snap_split = j->pending.len;
    j->stats.since_snapshot = 0;
    journal_kick(j);
    return 0;
}

bool loom_journal_idle(const loom_journal_t *j)
{
    return !j->inflight && !j->pending.len && j->snap_fd < 0 && !j->naux;
}

void loom_journal_set_hooks(loom_journal_t *j, loom_journal_hook_f *before,
                            loom_journal_done_f *after, void *arg)
{
    j->before = before;
    j->after = after;
    j->hook_arg = arg;
}

void loom_journal_aux_add(loom_journal_t *j, const char *path, const char *buf, size_t len)
{
    if (j->failed || !len)
        return;
    if (!j->naux || strcmp(j->aux[j->naux - 1].path, path) != 0) {
        j->aux = loom_xreallocarray(j->aux, j->naux + 1, sizeof(*j->aux));
        j->aux[j->naux].path = loom_xstrdup(path);
        loom_sbuf_init(&j->aux[j->naux].data);
        j->naux++;
    }
    loom_sbuf_addn(&j->aux[j->naux - 1].data, buf, len);
    journal_kick(j);
}

const loom_journal_stats_t *loom_journal_stats(const loom_journal_t *j)
{
    return &j->stats;
}

static void journal_close_cb(uv_handle_t *h)
{
    loom_journal_t *j = h->data;
    free(j->waiters);
    free(j->dir);
    free(j);
}

void loom_journal_close(loom_journal_t *j)
{
    if (!j)
        return;
    j->closing = true;
    if (j->inflight)
        return; /* journal_after_work closes once the round is done */
    if (!j->failed && j->before)
        j->before(j->hook_arg);
    if (!j->failed && j->pending.len) {
        int rc = journal_write_entries(j->fd, &j->pending, j->off, &j->alloc_end);
        if (rc == 0) {
            j->stats.durable_seq = j->pending_last;
            j->off += j->pending.len;
        } else {
            j->failed = rc;
        }
    }
    for (size_t i = 0; i < j->naux && !j->failed; i++)
        j->failed = journal_write_aux(&j->auxf, &j->aux[i]);
    if (j->after)
        j->after(j->hook_arg, j->failed);
    journal_aux_free(j->aux, j->naux);
    j->aux = NULL;
    j->naux = 0;
    journal_aux_close(&j->auxf);
    /* A segment closed cleanly ends at its last entry (no zero tail). */
    if (!j->failed && j->fd >= 0 && j->alloc_end > j->off && ftruncate(j->fd, (off_t)j->off) < 0)
        loom_debug("journal: cannot trim the segment's zero tail: %s", strerror(errno));
    journal_run_waiters(j, j->failed);
    journal_run_waiters(j, -ECANCELED);
    loom_sbuf_free(&j->pending);
    if (j->snap_fd >= 0)
        close(j->snap_fd); /* snapshot.tmp stays unused: recovery reads snapshot.json */
    j->snap_fd = -1;
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
    uv_close((uv_handle_t *)&j->idle, journal_close_cb);
}

/* --- recovery --- */

typedef struct {
    loom_journal_replay_f *fn;
    void *arg;
    uint64_t snap_seq;
    uint64_t last_seq;
    loom_err_t *err;
} recover_t;

/* One record line of the snapshot: *done once its end line is read. */
static int journal_snap_line(recover_t *r, const char *path, char *line, size_t len, uint64_t *nrec,
                             bool *done)
{
    json_error_t jerr;
    json_t *rec = loom_json_loadb(line, len, &jerr);
    if (!json_is_object(rec)) {
        json_decref(rec);
        return loom_errf(r->err, -LOOM_EPARSE, "%s: bad snapshot record %" PRIu64 ": %s", path,
                         *nrec + 1, rec ? "not an object" : jerr.text);
    }
    json_t *end = json_object_get(rec, "end");
    int rc = 0;
    if (end && json_object_size(rec) == 1) {
        *done = true;
        if (!json_is_integer(end) || (uint64_t)json_integer_value(end) != *nrec)
            rc = loom_errf(r->err, -LOOM_EPARSE, "%s: %" PRIu64 " records, the end line says %s",
                           path, *nrec, json_is_integer(end) ? "otherwise" : "nothing");
    } else if ((rc = r->fn(r->arg, rec, NULL)) < 0) {
        loom_errf(r->err, rc, "%s: snapshot record %" PRIu64 " rejected", path, *nrec + 1);
    } else {
        ++*nrec;
    }
    json_decref(rec);
    return rc;
}

/* The records after the first line, up to the end line. */
static int journal_snap_records(recover_t *r, const char *path, FILE *fp)
{
    char *line = NULL;
    size_t cap = 0;
    uint64_t nrec = 0;
    bool done = false;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && !done && (len = getline(&line, &cap, fp)) > 0)
        rc = journal_snap_line(r, path, line, (size_t)len, &nrec, &done);
    free(line);
    if (rc == 0 && !done)
        rc = loom_errf(r->err, -LOOM_EPARSE, "%s: truncated snapshot (no end line)", path);
    return rc;
}

/* The first line: {"seq":S,"format":2}, or a whole older snapshot
 * {"seq":S,"state":{...}} whose state is its one record. */
static int journal_snap_head(recover_t *r, const char *path, FILE *fp)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, fp);
    json_error_t jerr = {.text = "empty file"};
    json_t *head = len > 0 ? json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(line);
    json_int_t seq = -1;
    json_t *state = json_object_get(head, "state");
    if (!head || json_unpack(head, "{s:I}", "seq", &seq) || seq < 0 ||
        (!state && json_integer_value(json_object_get(head, "format")) != 2)) {
        json_decref(head);
        return loom_errf(r->err, -LOOM_EPARSE, "%s: bad snapshot: %s", path,
                         head ? "missing seq, state or format" : jerr.text);
    }
    r->snap_seq = r->last_seq = (uint64_t)seq;
    int rc = state ? r->fn(r->arg, state, NULL) : journal_snap_records(r, path, fp);
    json_decref(head);
    if (state && rc < 0)
        return loom_errf(r->err, rc, "%s: snapshot rejected", path);
    return rc;
}

static int journal_load_snapshot(const char *dir, recover_t *r)
{
    char path[PATH_MAX];
    journal_path(path, sizeof(path), dir, JOURNAL_SNAPSHOT);
    FILE *fp = fopen(path, "re");
    if (!fp && errno == ENOENT)
        return 0;
    if (!fp)
        return loom_errf(r->err, -errno, "cannot read %s: %s", path, strerror(errno));
    int rc = journal_snap_head(r, path, fp);
    fclose(fp);
    return rc;
}

static int journal_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int journal_list_segments(const char *dir, uint64_t **out, size_t *n, loom_err_t *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return loom_errf(err, -errno, "cannot open state directory %s: %s", dir, strerror(errno));
    uint64_t *v = NULL;
    size_t cnt = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t start;
        if (journal_parse_seg(de->d_name, &start)) {
            v = loom_xreallocarray(v, cnt + 1, sizeof(*v));
            v[cnt++] = start;
        }
    }
    closedir(d);
    if (cnt)
        qsort(v, cnt, sizeof(*v), journal_cmp_u64);
    *out = v;
    *n = cnt;
    return 0;
}

/* One line of a segment. torn_ok: this is the last line of the last segment. */
static int journal_replay_line(recover_t *r, const char *path, size_t lineno, char *line,
                               size_t len, bool torn_ok)
{
    bool complete = len && line[len - 1] == '\n';
    json_error_t jerr;
    json_t *e = complete ? loom_json_loadb(line, len, &jerr) : NULL;
    json_int_t seq = 0;
    if (!e || json_unpack(e, "{s:I}", "seq", &seq) || seq <= 0) {
        json_decref(e);
        if (torn_ok)
            return 1; /* torn tail: never acknowledged, dropped */
        return loom_errf(r->err, -LOOM_EPARSE, "%s:%zu: corrupt journal entry", path, lineno);
    }
    int rc = 0;
    if ((uint64_t)seq > r->snap_seq) {
        if ((uint64_t)seq <= r->last_seq)
            rc = loom_errf(r->err, -LOOM_EPARSE, "%s:%zu: sequence %" PRId64 " out of order", path,
                           lineno, (int64_t)seq);
        else if ((rc = r->fn(r->arg, NULL, e)) < 0)
            loom_errf(r->err, rc, "%s:%zu: entry %" PRId64 " rejected", path, lineno, (int64_t)seq);
        else
            r->last_seq = (uint64_t)seq;
    }
    json_decref(e);
    return rc < 0 ? rc : 0;
}

static int journal_replay_segment(recover_t *r, const char *dir, uint64_t start)
{
    char name[64], path[PATH_MAX];
    journal_seg_name(name, sizeof(name), start);
    journal_path(path, sizeof(path), dir, name);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return loom_errf(r->err, -errno, "cannot read %s: %s", path, strerror(errno));
    char *line = NULL, *next = NULL;
    size_t cap = 0, ncap = 0, lineno = 0;
    ssize_t len = getline(&line, &cap, fp);
    int rc = 0;
    while (len > 0 && rc == 0) {
        ssize_t nlen = getline(&next, &ncap, fp);
        lineno++;
        /* The entries end at the first NUL (the preallocated zeros): what
         * follows was never acknowledged, since every batch is written and
         * fdatasync'd before the next one starts. */
        size_t real = strnlen(line, (size_t)len);
        if (real < (size_t)len)
            nlen = 0;
        if (real == 0)
            break;
        /* Every run appends to a fresh segment, so a torn write can only be
         * the last line of some segment. */
        rc = journal_replay_line(r, path, lineno, line, real, nlen <= 0 || next[0] == '\0');
        char *t = line;
        line = next;
        next = t;
        size_t tc = cap;
        cap = ncap;
        ncap = tc;
        len = nlen;
    }
    free(line);
    free(next);
    fclose(fp);
    return rc < 0 ? rc : 0;
}

int loom_journal_recover(const char *dir, loom_journal_replay_f *fn, void *arg, uint64_t *last_seq,
                         loom_err_t *err)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return loom_errf(err, -errno, "cannot create state directory %s: %s", dir, strerror(errno));
    recover_t r = {.fn = fn, .arg = arg, .err = err};
    int rc = journal_load_snapshot(dir, &r);
    uint64_t *segs = NULL;
    size_t nsegs = 0;
    if (rc == 0)
        rc = journal_list_segments(dir, &segs, &nsegs, err);
    for (size_t i = 0; i < nsegs && rc == 0; i++)
        rc = journal_replay_segment(&r, dir, segs[i]);
    free(segs);
    if (rc == 0)
        *last_seq = r.last_seq;
    return rc;
}

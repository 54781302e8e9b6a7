/* acct_spool.c - the durable queue of accounting records. See acct_spool.h. */
#include "ctld/acct_spool.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPOOL_PREFIX "spool."
#define SPOOL_ACKED  "acked"

struct ctld_acct_spool {
    char *dir;
    uint64_t *segs; /* ascending starts of the segments on disk (and the one being written) */
    size_t nsegs;
    uint64_t write_seg; /* 0 until the first record of this run */
    char *write_path;
    size_t write_count;
    uint64_t next; /* the next record's seq */
    uint64_t round_seq, durable, acked;
    ctld_acct_pos_t pos;
};

static void spool_seg_path(loom_sbuf_t *out, const char *dir, uint64_t start)
{
    loom_sbuf_reset(out);
    loom_sbuf_addf(out, "%s/" SPOOL_PREFIX "%020" PRIu64, dir, start);
}

static bool spool_parse_name(const char *name, uint64_t *start)
{
    size_t plen = strlen(SPOOL_PREFIX);
    if (strncmp(name, SPOOL_PREFIX, plen) != 0 || strlen(name) != plen + 20)
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

/* The seq of a complete spool line ({"seq":N,...}\n); 0 when it is not one. */
static uint64_t spool_line_seq(const char *line, size_t len)
{
    static const char head[] = "{\"seq\":";
    if (len < sizeof(head) || line[len - 1] != '\n' || memcmp(line, head, sizeof(head) - 1) != 0)
        return 0;
    uint64_t v = 0;
    const char *p = line + sizeof(head) - 1;
    if (*p < '0' || *p > '9')
        return 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return *p == ',' ? v : 0;
}

static int spool_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int spool_list(ctld_acct_spool_t *sp, loom_err_t *err)
{
    DIR *d = opendir(sp->dir);
    if (!d)
        return loom_errf(err, -errno, "cannot open %s: %s", sp->dir, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t start;
        if (spool_parse_name(de->d_name, &start)) {
            sp->segs = loom_xreallocarray(sp->segs, sp->nsegs + 1, sizeof(*sp->segs));
            sp->segs[sp->nsegs++] = start;
        }
    }
    closedir(d);
    if (sp->nsegs)
        qsort(sp->segs, sp->nsegs, sizeof(*sp->segs), spool_cmp_u64);
    return 0;
}

/* The highest seq of a complete line in a segment (0: none). */
static uint64_t spool_seg_last(const char *dir, uint64_t start)
{
    loom_sbuf_t path = LOOM_SBUF_INIT;
    spool_seg_path(&path, dir, start);
    FILE *fp = fopen(loom_sbuf_str(&path), "re");
    loom_sbuf_free(&path);
    if (!fp)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint64_t last = 0;
    while ((len = getline(&line, &cap, fp)) > 0) {
        uint64_t seq = spool_line_seq(line, (size_t)len);
        if (seq > last)
            last = seq;
    }
    free(line);
    fclose(fp);
    return last;
}

static uint64_t spool_read_acked(const char *dir)
{
    loom_sbuf_t path = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s/" SPOOL_ACKED, dir);
    FILE *fp = fopen(loom_sbuf_str(&path), "re");
    loom_sbuf_free(&path);
    unsigned long long v = 0;
    if (fp) {
        if (fscanf(fp, "%llu", &v) != 1)
            v = 0;
        fclose(fp);
    }
    return (uint64_t)v;
}

/* Remove the segments whose records are all acknowledged; last_of_last is
 * the highest seq of the newest segment (it has no successor to tell). */
static void spool_cleanup(ctld_acct_spool_t *sp, uint64_t last_of_last)
{
    loom_sbuf_t path = LOOM_SBUF_INIT;
    size_t keep = 0;
    for (size_t i = 0; i < sp->nsegs; i++) {
        uint64_t last = i + 1 < sp->nsegs ? sp->segs[i + 1] - 1 : last_of_last;
        if (sp->segs[i] != sp->write_seg && last <= sp->acked) {
            spool_seg_path(&path, sp->dir, sp->segs[i]);
            unlink(loom_sbuf_str(&path));
            continue;
        }
        sp->segs[keep++] = sp->segs[i];
    }
    sp->nsegs = keep;
    loom_sbuf_free(&path);
}

int ctld_acct_spool_open(const char *state_dir, ctld_acct_spool_t **out, loom_err_t *err)
{
    ctld_acct_spool_t *sp = loom_xcalloc(1, sizeof(*sp));
    loom_sbuf_t dir = LOOM_SBUF_INIT;
    loom_sbuf_addf(&dir, "%s/acct", state_dir);
    sp->dir = loom_sbuf_detach(&dir);
    if (mkdir(sp->dir, 0700) < 0 && errno != EEXIST) {
        int rc = loom_errf(err, -errno, "cannot create %s: %s", sp->dir, strerror(errno));
        ctld_acct_spool_free(sp);
        return rc;
    }
    int rc = spool_list(sp, err);
    if (rc < 0) {
        ctld_acct_spool_free(sp);
        return rc;
    }
    sp->acked = spool_read_acked(sp->dir);
    uint64_t last = 0;
    for (size_t i = sp->nsegs; i-- > 0 && !last;)
        last = spool_seg_last(sp->dir, sp->segs[i]);
    if (last < sp->acked)
        last = sp->acked;
    sp->next = last + 1;
    sp->durable = sp->round_seq = last;
    spool_cleanup(sp, last);
    sp->pos.seg = sp->nsegs ? sp->segs[0] : 0;
    *out = sp;
    return 0;
}

void ctld_acct_spool_free(ctld_acct_spool_t *sp)
{
    if (!sp)
        return;
    free(sp->dir);
    free(sp->segs);
    free(sp->write_path);
    free(sp);
}

uint64_t ctld_acct_spool_add(ctld_acct_spool_t *sp, loom_journal_t *j, const char *kind,
                             const json_t *rec)
{
    if (!sp->write_seg || sp->write_count >= CTLD_ACCT_SEG_RECORDS) {
        sp->write_seg = sp->next;
        sp->write_count = 0;
        sp->segs = loom_xreallocarray(sp->segs, sp->nsegs + 1, sizeof(*sp->segs));
        sp->segs[sp->nsegs++] = sp->write_seg;
        if (sp->nsegs == 1)
            sp->pos = (ctld_acct_pos_t){sp->write_seg, 0};
        loom_sbuf_t path = LOOM_SBUF_INIT;
        spool_seg_path(&path, sp->dir, sp->write_seg);
        free(sp->write_path);
        sp->write_path = loom_sbuf_detach(&path);
    }
    char *text = json_dumps(rec, JSON_COMPACT);
    if (!text)
        return 0;
    uint64_t seq = sp->next++;
    loom_sbuf_t line = LOOM_SBUF_INIT;
    loom_sbuf_addf(&line, "{\"seq\":%" PRIu64 ",\"%s\":%s}\n", seq, kind, text);
    free(text);
    loom_journal_aux_add(j, sp->write_path, line.buf, line.len);
    loom_sbuf_free(&line);
    sp->write_count++;
    return seq;
}

void ctld_acct_spool_round_start(ctld_acct_spool_t *sp)
{
    sp->round_seq = sp->next - 1;
}

void ctld_acct_spool_round_done(ctld_acct_spool_t *sp, int status)
{
    if (status == 0 && sp->round_seq > sp->durable)
        sp->durable = sp->round_seq;
}

uint64_t ctld_acct_spool_last(const ctld_acct_spool_t *sp)
{
    return sp->next - 1;
}

uint64_t ctld_acct_spool_durable(const ctld_acct_spool_t *sp)
{
    return sp->durable;
}

uint64_t ctld_acct_spool_acked_seq(const ctld_acct_spool_t *sp)
{
    return sp->acked;
}

void ctld_acct_spool_read_args(const ctld_acct_spool_t *sp, ctld_acct_read_t *r)
{
    *r = (ctld_acct_read_t){.dir = loom_xstrdup(sp->dir),
                            .write_seg = sp->write_seg,
                            .pos = sp->pos,
                            .after = sp->acked,
                            .limit = sp->durable};
    size_t from = 0;
    while (from < sp->nsegs && sp->segs[from] < sp->pos.seg)
        from++;
    if (from == sp->nsegs || sp->segs[from] != sp->pos.seg)
        r->pos = (ctld_acct_pos_t){from < sp->nsegs ? sp->segs[from] : 0, 0};
    r->nsegs = sp->nsegs - from;
    r->segs = loom_xcalloc(r->nsegs ? r->nsegs : 1, sizeof(*r->segs));
    if (r->nsegs)
        memcpy(r->segs, sp->segs + from, r->nsegs * sizeof(*r->segs));
}

void ctld_acct_spool_read_args_free(ctld_acct_read_t *r)
{
    free(r->dir);
    free(r->segs);
    r->dir = NULL;
    r->segs = NULL;
}

typedef struct {
    ctld_acct_read_t *r;
    json_t *records;
    uint64_t last;
    size_t count, bytes;
    bool stop;
} spool_reader_t;

/* One line at r->pos; false at the end of what may be read in this segment. */
static bool spool_read_line(spool_reader_t *rd, uint64_t seg, const char *line, size_t len)
{
    ctld_acct_read_t *r = rd->r;
    if (!len || line[len - 1] != '\n') {
        rd->stop = seg == r->write_seg; /* being written: wait; else a torn tail */
        return false;
    }
    uint64_t seq = spool_line_seq(line, len);
    /* Stop (and read it again next time) at a record not yet durable, and in
     * the segment being written at a line that is not a record: the journal
     * may be writing there right now, and a read can catch the start of a line
     * still zero (the preallocated tail), then its end; stepping over it
     * lost that record for good (found by test_crash_torture). */
    if (seq > r->limit || (!seq && seg == r->write_seg)) {
        rd->stop = true;
        return false;
    }
    json_t *rec = seq > r->after ? json_loadb(line, len, 0, NULL) : NULL;
    if (rec) {
        json_array_append_new(rd->records, rec);
        rd->last = seq;
        rd->count++;
        rd->bytes += len;
    }
    r->pos.off += len;
    if (rd->count >= CTLD_ACCT_BATCH_MAX || rd->bytes >= CTLD_ACCT_BATCH_BYTES)
        rd->stop = true;
    return !rd->stop;
}

static int spool_read_seg(spool_reader_t *rd, size_t i, loom_err_t *err)
{
    ctld_acct_read_t *r = rd->r;
    uint64_t seg = r->segs[i];
    if (r->pos.seg != seg)
        r->pos = (ctld_acct_pos_t){seg, 0};
    loom_sbuf_t path = LOOM_SBUF_INIT;
    spool_seg_path(&path, r->dir, seg);
    FILE *fp = fopen(loom_sbuf_str(&path), "re");
    int rc = 0;
    if (!fp) {
        if (errno != ENOENT)
            rc =
                loom_errf(err, -errno, "cannot read %s: %s", loom_sbuf_str(&path), strerror(errno));
        rd->stop = seg == r->write_seg || rc < 0;
        loom_sbuf_free(&path);
        return rc;
    }
    loom_sbuf_free(&path);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = 0;
    if (fseeko(fp, (off_t)r->pos.off, SEEK_SET) == 0)
        while ((len = getline(&line, &cap, fp)) > 0 && spool_read_line(rd, seg, line, (size_t)len))
            ;
    if (len <= 0 && seg == r->write_seg)
        rd->stop = true; /* the end of what is written so far */
    free(line);
    fclose(fp);
    return 0;
}

int ctld_acct_spool_read(ctld_acct_read_t *r, json_t *records, uint64_t *last, loom_err_t *err)
{
    spool_reader_t rd = {.r = r, .records = records};
    for (size_t i = 0; i < r->nsegs && !rd.stop; i++) {
        if (r->segs[i] < r->pos.seg)
            continue;
        int rc = spool_read_seg(&rd, i, err);
        if (rc < 0)
            return rc;
    }
    *last = rd.last;
    return (int)rd.count;
}

void ctld_acct_spool_acked(ctld_acct_spool_t *sp, uint64_t seq, const ctld_acct_pos_t *pos)
{
    if (seq > sp->acked)
        sp->acked = seq;
    if (pos)
        sp->pos = *pos;
    loom_sbuf_t path = LOOM_SBUF_INIT, tmp = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s/" SPOOL_ACKED, sp->dir);
    loom_sbuf_addf(&tmp, "%s/" SPOOL_ACKED ".tmp", sp->dir);
    FILE *fp = fopen(loom_sbuf_str(&tmp), "we");
    if (fp) {
        bool ok = fprintf(fp, "%" PRIu64 "\n", sp->acked) > 0;
        if (fclose(fp) == 0 && ok)
            rename(loom_sbuf_str(&tmp), loom_sbuf_str(&path));
    }
    loom_sbuf_free(&path);
    loom_sbuf_free(&tmp);
    spool_cleanup(sp, sp->next - 1);
}

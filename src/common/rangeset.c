/*
 * rangeset.c - sorted sets of integer ranges (job array indexes). See
 * rangeset.h for the grammar and the invariants.
 *
 * Parsing collects the items' ranges unsorted, then sorts and merges them
 * once: O(r log r) for r ranges. A stepped item adds one singleton per index;
 * the pending list is folded into canonical form whenever it has grown past
 * twice the canonical size, so a long spec of overlapping stepped items keeps
 * memory near the size of the result (at most max/2 + 1 ranges).
 */
#include "common/rangeset.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parse state: the set being built, the bound, and how to report errors. */
typedef struct {
    const char *spec;
    uint32_t max;
    int code; /* -LOOM_EINVAL_ARRAY for --array, else 0 (EPARSE/ERANGE) */
    loom_err_t *err;
    loom_rangeset_t set; /* r[0..canon) canonical, r[canon..n) pending */
    size_t canon;
} rangeset_parse_t;

void loom_rangeset_init(loom_rangeset_t *rs)
{
    rs->r = NULL;
    rs->n = 0;
    rs->cap = 0;
}

void loom_rangeset_free(loom_rangeset_t *rs)
{
    if (!rs)
        return;
    free(rs->r);
    loom_rangeset_init(rs);
}

static void rangeset_reserve(loom_rangeset_t *rs, size_t n)
{
    if (n <= rs->cap)
        return;
    size_t cap = rs->cap ? rs->cap : 8;
    while (cap < n)
        cap *= 2;
    rs->r = loom_xreallocarray(rs->r, cap, sizeof(loom_range_t));
    rs->cap = cap;
}

void loom_rangeset_copy(loom_rangeset_t *dst, const loom_rangeset_t *src)
{
    if (dst == src)
        return;
    loom_rangeset_free(dst);
    rangeset_reserve(dst, src->n);
    if (src->n)
        memcpy(dst->r, src->r, src->n * sizeof(loom_range_t));
    dst->n = src->n;
}

static int rangeset_range_cmp(const void *pa, const void *pb)
{
    const loom_range_t *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

/* Sort r[0..n) and merge overlapping or adjacent ranges in place. */
static void rangeset_normalize(loom_rangeset_t *rs)
{
    if (rs->n < 2)
        return;
    qsort(rs->r, rs->n, sizeof(loom_range_t), rangeset_range_cmp);
    size_t out = 0;
    for (size_t i = 1; i < rs->n; i++) {
        loom_range_t *last = &rs->r[out];
        if ((uint64_t)rs->r[i].lo <= (uint64_t)last->hi + 1) {
            if (rs->r[i].hi > last->hi)
                last->hi = rs->r[i].hi;
        } else {
            rs->r[++out] = rs->r[i];
        }
    }
    rs->n = out + 1;
}

/* Index of the first range with hi >= i (rs->n when none). */
static size_t rangeset_lower_bound(const loom_rangeset_t *rs, uint32_t i)
{
    size_t lo = 0, hi = rs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->r[mid].hi < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void loom_rangeset_add(loom_rangeset_t *rs, uint32_t lo, uint32_t hi)
{
    /* First range that touches or follows [lo, hi]: its hi + 1 >= lo. */
    size_t a = lo > 0 ? rangeset_lower_bound(rs, lo - 1) : 0;
    size_t b = a; /* one past the last range that touches [lo, hi] */
    while (b < rs->n && (uint64_t)rs->r[b].lo <= (uint64_t)hi + 1)
        b++;
    if (a == b) { /* nothing to merge with: insert */
        rangeset_reserve(rs, rs->n + 1);
        memmove(&rs->r[a + 1], &rs->r[a], (rs->n - a) * sizeof(loom_range_t));
        rs->r[a] = (loom_range_t){lo, hi};
        rs->n++;
        return;
    }
    loom_range_t m = {lo < rs->r[a].lo ? lo : rs->r[a].lo,
                      hi > rs->r[b - 1].hi ? hi : rs->r[b - 1].hi};
    rs->r[a] = m;
    memmove(&rs->r[a + 1], &rs->r[b], (rs->n - b) * sizeof(loom_range_t));
    rs->n -= b - a - 1;
}

uint64_t loom_rangeset_count(const loom_rangeset_t *rs)
{
    uint64_t n = 0;
    for (size_t i = 0; i < rs->n; i++)
        n += (uint64_t)rs->r[i].hi - rs->r[i].lo + 1;
    return n;
}

bool loom_rangeset_empty(const loom_rangeset_t *rs)
{
    return rs->n == 0;
}

bool loom_rangeset_contains(const loom_rangeset_t *rs, uint32_t i)
{
    size_t k = rangeset_lower_bound(rs, i);
    return k < rs->n && rs->r[k].lo <= i;
}

bool loom_rangeset_equal(const loom_rangeset_t *a, const loom_rangeset_t *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->r, b->r, a->n * sizeof(loom_range_t)) == 0);
}

int loom_rangeset_first(const loom_rangeset_t *rs, uint32_t *out)
{
    if (rs->n == 0)
        return -ENOENT;
    *out = rs->r[0].lo;
    return 0;
}

int loom_rangeset_last(const loom_rangeset_t *rs, uint32_t *out)
{
    if (rs->n == 0)
        return -ENOENT;
    *out = rs->r[rs->n - 1].hi;
    return 0;
}

int loom_rangeset_next(const loom_rangeset_t *rs, uint32_t after, uint32_t *out)
{
    if (after == UINT32_MAX)
        return -ENOENT;
    size_t k = rangeset_lower_bound(rs, after + 1);
    if (k == rs->n)
        return -ENOENT;
    *out = rs->r[k].lo > after ? rs->r[k].lo : after + 1;
    return 0;
}

void loom_rangeset_format(const loom_rangeset_t *rs, loom_sbuf_t *out)
{
    for (size_t i = 0; i < rs->n; i++) {
        if (i > 0)
            loom_sbuf_addc(out, ',');
        if (rs->r[i].lo == rs->r[i].hi)
            loom_sbuf_addf(out, "%u", rs->r[i].lo);
        else
            loom_sbuf_addf(out, "%u-%u", rs->r[i].lo, rs->r[i].hi);
    }
}

void loom_rangeset_format_bracket(const loom_rangeset_t *rs, uint32_t throttle, loom_sbuf_t *out)
{
    loom_sbuf_addc(out, '[');
    loom_rangeset_format(rs, out);
    if (throttle > 0)
        loom_sbuf_addf(out, "%%%u", throttle);
    loom_sbuf_addc(out, ']');
}

/* ---- parsing ---------------------------------------------------------- */

static int rangeset_fail(rangeset_parse_t *ps, int code, const char *what, const char *tok,
                         size_t len)
{
    const char *kind = ps->code ? "job array specification" : "range list";
    if (ps->code)
        code = ps->code;
    if (len == 0)
        return loom_errf(ps->err, code, "invalid %s '%s': %s", kind, ps->spec, what);
    return loom_errf(ps->err, code, "invalid %s '%s': %s '%.*s'", kind, ps->spec, what, (int)len,
                     tok);
}

/* Parse the decimal number s[0..len) (inside item) into *v, bounded by max. */
static int rangeset_parse_num(rangeset_parse_t *ps, const char *s, size_t len, const char *item,
                              size_t itemlen, uint32_t max, uint32_t *v)
{
    uint64_t x = 0;
    if (len == 0)
        return rangeset_fail(ps, -LOOM_EPARSE, "missing number in", item, itemlen);
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return rangeset_fail(ps, -LOOM_EPARSE, "bad character in", item, itemlen);
        x = x * 10 + (uint64_t)(s[i] - '0');
        if (x > max)
            return rangeset_fail(ps, -LOOM_ERANGE, "number over the maximum in", item, itemlen);
    }
    *v = (uint32_t)x;
    return 0;
}

/* Queue [lo, hi] as pending; fold the pending part when it has grown large. */
static void rangeset_push(rangeset_parse_t *ps, uint32_t lo, uint32_t hi)
{
    loom_rangeset_t *rs = &ps->set;
    rangeset_reserve(rs, rs->n + 1);
    rs->r[rs->n++] = (loom_range_t){lo, hi};
    if (rs->n - ps->canon > 2 * ps->canon + 4096) {
        rangeset_normalize(rs);
        ps->canon = rs->n;
    }
}

/* Parse one item "N", "N-M" or "N-M:S" (s[0..len)). */
static int rangeset_parse_item(rangeset_parse_t *ps, const char *s, size_t len)
{
    const char *dash = memchr(s, '-', len), *colon = memchr(s, ':', len);
    if (colon && (!dash || colon < dash))
        return rangeset_fail(ps, -LOOM_EPARSE, "step without a range in", s, len);
    const char *hs = dash ? dash + 1 : s;
    const char *he = colon ? colon : s + len;
    uint32_t lo = 0, hi = 0, step = 1;
    int rc = rangeset_parse_num(ps, s, (size_t)((dash ? dash : he) - s), s, len, ps->max, &lo);
    if (rc == 0)
        rc = rangeset_parse_num(ps, hs, (size_t)(he - hs), s, len, ps->max, &hi);
    if (rc == 0 && colon) {
        /* Slurm bounds the step like an index (0-1000:1001 is refused). */
        rc = rangeset_parse_num(ps, colon + 1, (size_t)(s + len - colon - 1), s, len, ps->max,
                                &step);
        if (rc == 0 && step == 0)
            rc = rangeset_fail(ps, -LOOM_EPARSE, "zero step in", s, len);
    }
    if (rc < 0)
        return rc;
    if (lo > hi)
        return rangeset_fail(ps, -LOOM_ERANGE, "reversed range", s, len);
    if (step == 1) {
        rangeset_push(ps, lo, hi);
        return 0;
    }
    for (uint64_t i = lo; i <= hi; i += step)
        rangeset_push(ps, (uint32_t)i, (uint32_t)i);
    return 0;
}

/* Parse the item list s[0..len) into ps->set (canonical on success). Empty
 * items are skipped, as sbatch does ("1,,3", "1,2,"), but some index must be
 * named. */
static int rangeset_parse_list(rangeset_parse_t *ps, const char *s, size_t len)
{
    const char *end = s + len;
    for (const char *p = s; p <= end;) {
        const char *e = memchr(p, ',', (size_t)(end - p));
        if (!e)
            e = end;
        int rc = e > p ? rangeset_parse_item(ps, p, (size_t)(e - p)) : 0;
        if (rc < 0)
            return rc;
        p = e + 1;
    }
    if (ps->set.n == 0)
        return rangeset_fail(ps, -LOOM_EPARSE, "no indexes", s, 0);
    rangeset_normalize(&ps->set);
    return 0;
}

static int rangeset_finish(rangeset_parse_t *ps, int rc, loom_rangeset_t *out)
{
    if (rc < 0) {
        loom_rangeset_free(&ps->set);
        return rc;
    }
    loom_rangeset_free(out);
    *out = ps->set;
    return (int)(out->n > INT32_MAX ? INT32_MAX : out->n);
}

int loom_rangeset_parse(const char *spec, uint32_t max, loom_rangeset_t *out, loom_err_t *err)
{
    rangeset_parse_t ps = {spec, max, 0, err, LOOM_RANGESET_INIT, 0};
    return rangeset_finish(&ps, rangeset_parse_list(&ps, spec, strlen(spec)), out);
}

int loom_rangeset_parse_array(const char *spec, uint32_t max, loom_rangeset_t *out,
                              uint32_t *throttle, loom_err_t *err)
{
    rangeset_parse_t ps = {spec, max, -LOOM_EINVAL_ARRAY, err, LOOM_RANGESET_INIT, 0};
    const char *pct = strchr(spec, '%');
    size_t len = pct ? (size_t)(pct - spec) : strlen(spec);
    uint32_t limit = 0;
    int rc = 0;
    if (pct)
        rc =
            rangeset_parse_num(&ps, pct + 1, strlen(pct + 1), pct, strlen(pct), UINT32_MAX, &limit);
    if (rc == 0)
        rc = rangeset_parse_list(&ps, spec, len);
    rc = rangeset_finish(&ps, rc, out);
    if (rc >= 0)
        *throttle = limit;
    return rc;
}

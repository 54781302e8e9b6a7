/*
 * hostlist.c - hostlist expressions: expansion, sorting, compression
 * (CLI_SPEC §0.4). See hostlist.h for the API.
 *
 * Expansion is two-phase: every name pattern of an expression is parsed into
 * segments (literal text + an optional bracket group) and its product size is
 * counted, saturating at LOOM_HOSTLIST_MAX + 1, before a single name is made.
 * So "a[1-999999999999]b[1-99999]" fails fast with no large allocation.
 *
 * Compression follows Slurm 22.05's model: a name is split into a prefix and
 * a number (its trailing run of at most HOSTLIST_MAX_DIGITS digits that fits
 * in 64 bits, or the digits of the last bracket group it was made from; with
 * neither, the whole name is a literal). Consecutive names with byte-equal
 * prefixes share one bracket group; numbers n, n+1 join one range when one
 * zero-padding width prints them all as written (n9,n10 -> n[9-10];
 * n09,n10 -> n[09-10]; n9,n010 stay apart).
 *
 * Sort order (scontrol show hostlistsorted): prefixes in natural order
 * (rack9 < rack10), then literal names before numbered ones, then by the
 * number of digits written, then by value. That is one total order; sorting
 * the names and compressing in order reproduces Slurm's output for lists of
 * names, duplicates included (n1,n1,n2 -> n[1,1-2]).
 */
#include "common/hostlist.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest digit run treated as a number (it must also fit in 64 bits). */
#define HOSTLIST_MAX_DIGITS 20

/* A name and the offset where its number starts (its length when it has
 * none). Usually the trailing digits; for a name made from a pattern ending in
 * a bracket group, that group's digits, as Slurm keeps them: "n1[3-4]" prints
 * back as "n1[3-4]", while the names n13,n14 compress to "n[13-14]". */
typedef struct {
    char *name;
    size_t split;
} hostlist_entry_t;

struct loom_hostlist {
    hostlist_entry_t *e;
    size_t n;
    size_t cap;
};

/* One "lo-hi" of a bracket group; width is the length of lo as written. */
typedef struct {
    uint64_t lo;
    uint64_t hi;
    int width;
} hostlist_range_t;

/* Literal text followed by an optional bracket group (nranges == 0: none). */
typedef struct {
    const char *lit;
    size_t litlen;
    hostlist_range_t *ranges;
    size_t nranges;
} hostlist_seg_t;

/* One name pattern of an expression, e.g. "rack[1-2]-n[01-04]". */
typedef struct {
    hostlist_seg_t *segs;
    size_t nsegs;
    size_t cap;
    uint64_t count; /* names it expands to, saturated at LOOM_HOSTLIST_MAX + 1 */
} hostlist_item_t;

/* A name split for sorting and compression. */
typedef struct {
    const char *name;
    size_t plen;  /* prefix length; the whole name when !numeric */
    int numeric;  /* has a trailing number of 1..HOSTLIST_MAX_DIGITS digits */
    int width;    /* digits written */
    uint64_t num; /* their value */
} hostlist_key_t;

static int hostlist_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

loom_hostlist_t *loom_hostlist_create(void)
{
    return loom_xcalloc(1, sizeof(loom_hostlist_t));
}

void loom_hostlist_destroy(loom_hostlist_t *hl)
{
    if (!hl)
        return;
    for (size_t i = 0; i < hl->n; i++)
        free(hl->e[i].name);
    free(hl->e);
    free(hl);
}

/* Parse the digits s[0..len) (1..HOSTLIST_MAX_DIGITS of them, a value that
 * fits in 64 bits) into *v. */
static int hostlist_parse_num(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > HOSTLIST_MAX_DIGITS)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (!hostlist_is_digit(s[i]) || x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/* Where the number of a plain name starts: its trailing digits, when they
 * make a number hostlist_parse_num accepts; else its length. */
static size_t hostlist_split(const char *name)
{
    size_t len = strlen(name), d = len;
    uint64_t v;
    while (d > 0 && hostlist_is_digit(name[d - 1]))
        d--;
    return (d < len && hostlist_parse_num(name + d, len - d, &v) == 0) ? d : len;
}

/* Append an owned name. */
static void hostlist_take(loom_hostlist_t *hl, char *name, size_t split)
{
    if (hl->n == hl->cap) {
        hl->cap = hl->cap ? hl->cap * 2 : 16;
        hl->e = loom_xreallocarray(hl->e, hl->cap, sizeof(hostlist_entry_t));
    }
    hl->e[hl->n].name = name;
    hl->e[hl->n].split = split;
    hl->n++;
}

void loom_hostlist_push(loom_hostlist_t *hl, const char *name)
{
    hostlist_take(hl, loom_xstrdup(name), hostlist_split(name));
}

size_t loom_hostlist_count(const loom_hostlist_t *hl)
{
    return hl ? hl->n : 0;
}

const char *loom_hostlist_nth(const loom_hostlist_t *hl, size_t i)
{
    return (hl && i < hl->n) ? hl->e[i].name : NULL;
}

long loom_hostlist_find(const loom_hostlist_t *hl, const char *name)
{
    for (size_t i = 0; hl && i < hl->n; i++)
        if (strcmp(hl->e[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* ---- parsing ---------------------------------------------------------- */

static int hostlist_is_sep(char c)
{
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Characters allowed in a name outside brackets. */
static int hostlist_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || hostlist_is_digit(c) ||
           (c != '\0' && strchr("-_.:@+", c) != NULL);
}

/* Quote c for an error message: 'x' when printable, else 0xNN. */
static const char *hostlist_quote_char(char c, char buf[8])
{
    unsigned char u = (unsigned char)c;
    if (u > 0x20 && u < 0x7f)
        snprintf(buf, 8, "'%c'", c);
    else
        snprintf(buf, 8, "0x%02x", u);
    return buf;
}

static uint64_t hostlist_sat_add(uint64_t a, uint64_t b)
{
    uint64_t cap = (uint64_t)LOOM_HOSTLIST_MAX + 1;
    return (a >= cap || b >= cap || a + b >= cap) ? cap : a + b;
}

static uint64_t hostlist_sat_mul(uint64_t a, uint64_t b)
{
    uint64_t cap = (uint64_t)LOOM_HOSTLIST_MAX + 1;
    if (a == 0 || b == 0)
        return 0;
    return (a >= cap || b >= cap || a > cap / b) ? cap : a * b;
}

static void hostlist_item_free(hostlist_item_t *item)
{
    for (size_t i = 0; i < item->nsegs; i++)
        free(item->segs[i].ranges);
    free(item->segs);
    memset(item, 0, sizeof(*item));
}

static hostlist_seg_t *hostlist_item_add_seg(hostlist_item_t *item, const char *lit, size_t len)
{
    if (item->nsegs == item->cap) {
        item->cap = item->cap ? item->cap * 2 : 4;
        item->segs = loom_xreallocarray(item->segs, item->cap, sizeof(hostlist_seg_t));
    }
    hostlist_seg_t *seg = &item->segs[item->nsegs++];
    memset(seg, 0, sizeof(*seg));
    seg->lit = lit;
    seg->litlen = len;
    return seg;
}

/* Parse one "lo" or "lo-hi" of a bracket group (s[0..len)). */
static int hostlist_parse_range(const char *pat, size_t patlen, const char *s, size_t len,
                                hostlist_range_t *r, loom_err_t *err)
{
    const char *dash = memchr(s, '-', len);
    size_t lolen = dash ? (size_t)(dash - s) : len;
    const char *hs = dash ? dash + 1 : s;
    size_t hilen = dash ? len - lolen - 1 : len;
    if (lolen == 0 || hilen == 0 || (dash && memchr(hs, '-', hilen)))
        return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': bad range '%.*s'",
                         (int)patlen, pat, (int)len, s);
    if (hostlist_parse_num(s, lolen, &r->lo) != 0 || hostlist_parse_num(hs, hilen, &r->hi) != 0)
        return loom_errf(err, -LOOM_ERANGE, "invalid hostlist '%.*s': number too large in '%.*s'",
                         (int)patlen, pat, (int)len, s);
    if (r->lo > r->hi)
        return loom_errf(err, -LOOM_ERANGE, "invalid hostlist '%.*s': reversed range '%.*s'",
                         (int)patlen, pat, (int)len, s);
    r->width = (int)lolen;
    return 0;
}

/* Parse the group "[...]" at *pp (inside pat) into seg; *count gets its size
 * (saturated). Advances *pp past the ']'. */
static int hostlist_parse_group(const char *pat, size_t patlen, const char **pp,
                                hostlist_seg_t *seg, uint64_t *count, loom_err_t *err)
{
    const char *open = *pp, *end = pat + patlen, *q = open + 1;
    while (q < end && *q != ']' && *q != '[')
        q++;
    if (q == end)
        return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': unbalanced '['", (int)patlen,
                         pat);
    if (*q == '[')
        return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': nested '['", (int)patlen,
                         pat);
    if (q == open + 1)
        return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': empty brackets", (int)patlen,
                         pat);
    for (const char *c = open + 1; c < q; c++) {
        char qc[8];
        if (!hostlist_is_digit(*c) && *c != ',' && *c != '-')
            return loom_errf(err, -LOOM_EPARSE,
                             "invalid hostlist '%.*s': bad character %s inside brackets",
                             (int)patlen, pat, hostlist_quote_char(*c, qc));
    }
    size_t nitems = 1; /* allocate once: the item count is the comma count + 1 */
    for (const char *c = open + 1; c < q; c++)
        nitems += *c == ',';
    seg->ranges = loom_xreallocarray(NULL, nitems, sizeof(hostlist_range_t));
    *count = 0;
    for (const char *s = open + 1; s <= q;) {
        const char *e = s;
        while (e < q && *e != ',')
            e++;
        if (e == s)
            return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': empty range in '%.*s'",
                             (int)patlen, pat, (int)(q + 1 - open), open);
        hostlist_range_t *r = &seg->ranges[seg->nranges++];
        int rc = hostlist_parse_range(pat, patlen, s, (size_t)(e - s), r, err);
        if (rc < 0)
            return rc;
        *count = hostlist_sat_add(*count, hostlist_sat_add(r->hi - r->lo, 1));
        s = e + 1;
    }
    *pp = q + 1;
    return 0;
}

/* Length of the name pattern at p: up to a separator outside brackets. */
static size_t hostlist_pattern_len(const char *p)
{
    size_t i = 0;
    int depth = 0;
    for (; p[i]; i++) {
        if (p[i] == '[')
            depth++;
        else if (p[i] == ']' && depth > 0)
            depth--;
        else if (depth == 0 && hostlist_is_sep(p[i]))
            break;
    }
    return i;
}

/* Parse the name pattern pat[0..patlen) into item (segments and count). */
static int hostlist_parse_item(const char *pat, size_t patlen, hostlist_item_t *item,
                               loom_err_t *err)
{
    const char *p = pat, *end = pat + patlen, *lit = pat;
    item->count = 1;
    while (p < end) {
        if (*p == '[') {
            hostlist_seg_t *seg = hostlist_item_add_seg(item, lit, (size_t)(p - lit));
            uint64_t n = 0;
            int rc = hostlist_parse_group(pat, patlen, &p, seg, &n, err);
            if (rc < 0)
                return rc;
            item->count = hostlist_sat_mul(item->count, n);
            lit = p;
        } else if (*p == ']') {
            return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': unbalanced ']'",
                             (int)patlen, pat);
        } else if (!hostlist_name_char(*p)) {
            char qc[8];
            return loom_errf(err, -LOOM_EPARSE, "invalid hostlist '%.*s': bad character %s",
                             (int)patlen, pat, hostlist_quote_char(*p, qc));
        } else {
            p++;
        }
    }
    hostlist_item_add_seg(item, lit, (size_t)(end - lit));
    return 0;
}

/* Advance the odometer of item's groups; returns 0 once it wrapped around.
 * Slurm's order: the last group varies fastest, then the first, the second,
 * and so on ("a[1-2]b[3-4]c[5-6]": a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...). */
static int hostlist_odometer_step(const hostlist_item_t *item, const size_t *groups, size_t ng,
                                  size_t *ri, uint64_t *v)
{
    for (size_t k = 0; k < ng; k++) {
        size_t s = groups[k == 0 ? ng - 1 : k - 1];
        const hostlist_seg_t *seg = &item->segs[s];
        if (v[s] < seg->ranges[ri[s]].hi) {
            v[s]++;
            return 1;
        }
        ri[s] = (ri[s] + 1) % seg->nranges;
        v[s] = seg->ranges[ri[s]].lo;
        if (ri[s] != 0)
            return 1;
    }
    return 0;
}

/* Append the names of item to hl. */
static void hostlist_expand_item(const hostlist_item_t *item, loom_hostlist_t *hl)
{
    size_t *groups = loom_xcalloc(item->nsegs, sizeof(size_t)); /* segments with a group */
    size_t *ri = loom_xcalloc(item->nsegs, sizeof(size_t));     /* range index per segment */
    uint64_t *v = loom_xcalloc(item->nsegs, sizeof(uint64_t));  /* current value */
    size_t ng = 0;
    for (size_t s = 0; s < item->nsegs; s++) {
        if (item->segs[s].nranges) {
            groups[ng++] = s;
            v[s] = item->segs[s].ranges[0].lo;
        }
    }
    /* A pattern ending in a group splits before that group's number. */
    int ends_in_group = ng > 0 && item->segs[item->nsegs - 1].litlen == 0;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    do {
        size_t split = 0;
        loom_sbuf_reset(&sb);
        for (size_t s = 0; s < item->nsegs; s++) {
            const hostlist_seg_t *seg = &item->segs[s];
            loom_sbuf_addn(&sb, seg->lit, seg->litlen);
            if (seg->nranges) {
                split = sb.len;
                loom_sbuf_addf(&sb, "%0*llu", seg->ranges[ri[s]].width, (unsigned long long)v[s]);
            }
        }
        char *name = loom_xstrdup(loom_sbuf_str(&sb));
        hostlist_take(hl, name, ends_in_group ? split : hostlist_split(name));
    } while (hostlist_odometer_step(item, groups, ng, ri, v));
    loom_sbuf_free(&sb);
    free(groups);
    free(ri);
    free(v);
}

static void hostlist_items_free(hostlist_item_t *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hostlist_item_free(&items[i]);
    free(items);
}

int loom_hostlist_push_expr(loom_hostlist_t *hl, const char *expr, loom_err_t *err)
{
    hostlist_item_t *items = NULL;
    size_t nitems = 0, cap = 0;
    uint64_t total = hl->n;
    const char *p = expr;
    int rc = 0;
    while (*p) {
        if (hostlist_is_sep(*p)) {
            p++;
            continue;
        }
        size_t len = hostlist_pattern_len(p);
        if (nitems == cap) {
            cap = cap ? cap * 2 : 8;
            items = loom_xreallocarray(items, cap, sizeof(hostlist_item_t));
        }
        memset(&items[nitems], 0, sizeof(hostlist_item_t));
        rc = hostlist_parse_item(p, len, &items[nitems++], err);
        if (rc < 0)
            break;
        total = hostlist_sat_add(total, items[nitems - 1].count);
        if (total > LOOM_HOSTLIST_MAX) {
            rc = loom_errf(err, -LOOM_ETOOBIG, "hostlist '%.*s' expands to more than %d names",
                           (int)(len > 200 ? 200 : len), p, LOOM_HOSTLIST_MAX);
            break;
        }
        p += len;
    }
    size_t before = hl->n;
    for (size_t i = 0; rc == 0 && i < nitems; i++)
        hostlist_expand_item(&items[i], hl);
    hostlist_items_free(items, nitems);
    return rc < 0 ? rc : (int)(hl->n - before);
}

int loom_hostlist_parse(const char *expr, loom_hostlist_t **out, loom_err_t *err)
{
    loom_hostlist_t *hl = loom_hostlist_create();
    int rc = loom_hostlist_push_expr(hl, expr, err);
    if (rc < 0) {
        loom_hostlist_destroy(hl);
        return rc;
    }
    *out = hl;
    return rc;
}

/* ---- sorting ---------------------------------------------------------- */

/* Split an entry into prefix and number for sorting and compression. */
static void hostlist_key(const hostlist_entry_t *e, hostlist_key_t *k)
{
    size_t len = strlen(e->name);
    k->name = e->name;
    k->num = 0;
    k->numeric =
        e->split < len && hostlist_parse_num(e->name + e->split, len - e->split, &k->num) == 0;
    k->plen = k->numeric ? e->split : len;
    k->width = k->numeric ? (int)(len - e->split) : 0;
}

/* Compare the digit runs a[0..na) and b[0..nb): a run with a leading zero
 * compares digit by digit (as a fraction), others by value. */
static int hostlist_digits_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    if (a[0] == '0' || b[0] == '0') {
        for (size_t i = 0; i < na && i < nb; i++)
            if (a[i] != b[i])
                return a[i] < b[i] ? -1 : 1;
        return (na > nb) - (na < nb);
    }
    if (na != nb)
        return na < nb ? -1 : 1;
    int c = memcmp(a, b, na);
    return (c > 0) - (c < 0);
}

static size_t hostlist_digit_run(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && hostlist_is_digit(s[i]))
        i++;
    return i;
}

/* Natural order of the prefixes a[0..na) and b[0..nb); ties broken bytewise. */
static int hostlist_natcmp(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (hostlist_is_digit(a[i]) && hostlist_is_digit(b[j])) {
            size_t ra = hostlist_digit_run(a + i, na - i), rb = hostlist_digit_run(b + j, nb - j);
            int c = hostlist_digits_cmp(a + i, ra, b + j, rb);
            if (c)
                return c;
            i += ra;
            j += rb;
            continue;
        }
        if (a[i] != b[j])
            return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++;
        j++;
    }
    if (na - i != nb - j)
        return (na - i) < (nb - j) ? -1 : 1;
    size_t m = na < nb ? na : nb;
    int c = memcmp(a, b, m);
    return c ? (c > 0) - (c < 0) : (na > nb) - (na < nb);
}

static int hostlist_key_cmp(const void *pa, const void *pb)
{
    const hostlist_key_t *a = pa, *b = pb;
    int c = hostlist_natcmp(a->name, a->plen, b->name, b->plen);
    if (c)
        return c;
    if (a->numeric != b->numeric)
        return a->numeric ? 1 : -1;
    if (a->width != b->width)
        return a->width < b->width ? -1 : 1;
    return (a->num > b->num) - (a->num < b->num);
}

/* Sort e[0..n) in place (O(n log n): the keys are split once). */
static void hostlist_sort_entries(hostlist_entry_t *e, size_t n)
{
    if (n < 2)
        return;
    hostlist_key_t *keys = loom_xreallocarray(NULL, n, sizeof(hostlist_key_t));
    for (size_t i = 0; i < n; i++)
        hostlist_key(&e[i], &keys[i]);
    qsort(keys, n, sizeof(hostlist_key_t), hostlist_key_cmp);
    for (size_t i = 0; i < n; i++) {
        e[i].name = (char *)keys[i].name;
        e[i].split = keys[i].plen; /* the name's length when it has no number */
    }
    free(keys);
}

/* Drop adjacent duplicates of e[0..n); returns the new count. Frees the
 * dropped names when owned. */
static size_t hostlist_dedup_entries(hostlist_entry_t *e, size_t n, int owned)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out > 0 && strcmp(e[out - 1].name, e[i].name) == 0) {
            if (owned)
                free(e[i].name);
            continue;
        }
        e[out++] = e[i];
    }
    return out;
}

void loom_hostlist_sort(loom_hostlist_t *hl)
{
    hostlist_sort_entries(hl->e, hl->n);
}

void loom_hostlist_uniq(loom_hostlist_t *hl)
{
    hostlist_sort_entries(hl->e, hl->n);
    hl->n = hostlist_dedup_entries(hl->e, hl->n, 1);
}

/* ---- compression ------------------------------------------------------ */

/* Zero-padding state of a range being built: the width every member must
 * print at (0 while no member has leading zeros), and the largest width at
 * which the unpadded members still print as written (INT32_MAX: none). */
typedef struct {
    int fixed;
    int maxw;
} hostlist_width_t;

static int hostlist_num_digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* Can k join a range in state w? If so, update w. */
static int hostlist_width_join(hostlist_width_t *w, const hostlist_key_t *k)
{
    if (k->width > hostlist_num_digits(k->num)) { /* zero-padded: width is fixed */
        if ((w->fixed && w->fixed != k->width) || k->width > w->maxw)
            return 0;
        w->fixed = k->width;
        return 1;
    }
    if (w->fixed && w->fixed > k->width)
        return 0;
    if (k->width < w->maxw)
        w->maxw = k->width;
    return 1;
}

/* Emit the ranges of keys[0..n): all numeric with one prefix. */
static void hostlist_emit_ranges(const hostlist_key_t *keys, size_t n, loom_sbuf_t *out)
{
    size_t i = 0;
    while (i < n) {
        hostlist_width_t w = {0, INT32_MAX};
        hostlist_width_join(&w, &keys[i]);
        size_t j = i + 1;
        while (j < n && keys[j - 1].num != UINT64_MAX && keys[j].num == keys[j - 1].num + 1 &&
               hostlist_width_join(&w, &keys[j]))
            j++;
        if (i > 0)
            loom_sbuf_addc(out, ',');
        loom_sbuf_add(out, keys[i].name + keys[i].plen);
        if (j - i > 1) {
            loom_sbuf_addc(out, '-');
            loom_sbuf_add(out, keys[j - 1].name + keys[j - 1].plen);
        }
        i = j;
    }
}

static int hostlist_same_prefix(const hostlist_key_t *a, const hostlist_key_t *b)
{
    return a->numeric && b->numeric && a->plen == b->plen && memcmp(a->name, b->name, a->plen) == 0;
}

/* Compress e[0..n) in their order. */
static void hostlist_ranged_entries(const hostlist_entry_t *e, size_t n, loom_sbuf_t *out)
{
    hostlist_key_t *keys = loom_xreallocarray(NULL, n ? n : 1, sizeof(hostlist_key_t));
    for (size_t i = 0; i < n; i++)
        hostlist_key(&e[i], &keys[i]);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && hostlist_same_prefix(&keys[i], &keys[j]))
            j++;
        if (i > 0)
            loom_sbuf_addc(out, ',');
        if (j - i == 1) {
            loom_sbuf_add(out, keys[i].name);
        } else {
            loom_sbuf_addn(out, keys[i].name, keys[i].plen);
            loom_sbuf_addc(out, '[');
            hostlist_emit_ranges(keys + i, j - i, out);
            loom_sbuf_addc(out, ']');
        }
        i = j;
    }
    free(keys);
}

void loom_hostlist_ranged(const loom_hostlist_t *hl, loom_sbuf_t *out)
{
    hostlist_ranged_entries(hl->e, hl->n, out);
}

char *loom_hostlist_compress_sorted(const loom_hostlist_t *hl)
{
    /* Sort borrowed names: the list itself is left as it is. */
    hostlist_entry_t *e = loom_xreallocarray(NULL, hl->n ? hl->n : 1, sizeof(hostlist_entry_t));
    if (hl->n)
        memcpy(e, hl->e, hl->n * sizeof(hostlist_entry_t));
    hostlist_sort_entries(e, hl->n);
    size_t n = hostlist_dedup_entries(e, hl->n, 0);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    hostlist_ranged_entries(e, n, &sb);
    free(e);
    return loom_sbuf_detach(&sb);
}

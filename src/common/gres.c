/*
 * gres.c - GRES requests, node GRES lists and TRES strings (CLI_SPEC §0.6).
 * See gres.h for the grammar and the invariants.
 *
 * Parsing works on (pointer, length) slices of the caller's string, so that
 * nothing is allocated until an entry is known to be good; a list under
 * construction is freed on the first error, leaving the caller's untouched.
 */
#include "common/gres.h"
#include "common/memsize.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A slice of the input. */
typedef struct {
    const char *p;
    size_t n;
} gres_span_t;

/* How gres_entry() reads one comma-separated entry. */
enum { GRES_REQUEST, GRES_NODE };

static bool gres_span_eq(gres_span_t a, const char *s)
{
    return strlen(s) == a.n && strncasecmp(a.p, s, a.n) == 0;
}

static bool gres_valid_chars(gres_span_t s, const char *extra)
{
    if (s.n == 0)
        return false;
    for (size_t i = 0; i < s.n; i++)
        if (!isalnum((unsigned char)s.p[i]) && !strchr(extra, s.p[i]))
            return false;
    return true;
}

static bool gres_valid_name(gres_span_t s)
{
    return s.n > 0 && isalpha((unsigned char)s.p[0]) && gres_valid_chars(s, "_.-");
}

static bool gres_valid_type(gres_span_t s)
{
    return s.n > 0 && isalnum((unsigned char)s.p[0]) && gres_valid_chars(s, "_.-");
}

/* Slurm's count suffixes (suffix_mult): binary without B or with iB, decimal with B. */
static uint64_t gres_suffix_mult(gres_span_t s)
{
    static const char units[] = "kmgtp";
    if (s.n == 0)
        return 1;
    const char *u = s.p[0] ? strchr(units, tolower((unsigned char)s.p[0])) : NULL;
    if (!u)
        return 0;
    uint64_t bin = 1, dec = 1;
    for (const char *q = units; q <= u; q++) {
        bin *= 1024;
        dec *= 1000;
    }
    gres_span_t rest = {s.p + 1, s.n - 1};
    if (rest.n == 0 || gres_span_eq(rest, "ib"))
        return bin;
    return gres_span_eq(rest, "b") ? dec : 0;
}

/* A count with an optional suffix: 0 ok, -1 not a count, -2 too large. */
static int gres_count(gres_span_t s, uint64_t *v)
{
    size_t i = 0;
    uint64_t x = 0;
    bool big = false;
    for (; i < s.n && isdigit((unsigned char)s.p[i]); i++) {
        uint64_t d = (uint64_t)(s.p[i] - '0');
        if (x > (LOOM_GRES_MAX_COUNT - d) / 10)
            big = true;
        else
            x = x * 10 + d;
    }
    uint64_t mult = gres_suffix_mult((gres_span_t){s.p + i, s.n - i});
    if (i == 0 || mult == 0)
        return -1;
    if (big || x > LOOM_GRES_MAX_COUNT / mult)
        return -2;
    *v = x * mult;
    return 0;
}

/* Split s on sep; fields may be empty. Returns the number of fields, or
 * max + 1 when there are more than max. */
static size_t gres_split(gres_span_t s, char sep, gres_span_t *f, size_t max)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= s.n; i++) {
        if (i < s.n && s.p[i] != sep)
            continue;
        if (n == max)
            return max + 1;
        f[n++] = (gres_span_t){s.p + start, i - start};
        start = i + 1;
    }
    return n;
}

/* The next entry of a comma list into *ent (commas inside parentheses, as in
 * "(S:0,1)", do not count); false once the list is used up. */
static bool gres_next(gres_span_t *rest, gres_span_t *ent)
{
    if (!rest->p)
        return false;
    int depth = 0;
    size_t i = 0;
    for (; i < rest->n; i++) {
        char c = rest->p[i];
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (c == ',' && depth <= 0)
            break;
    }
    *ent = (gres_span_t){rest->p, i};
    if (i < rest->n)
        *rest = (gres_span_t){rest->p + i + 1, rest->n - i - 1};
    else
        *rest = (gres_span_t){NULL, 0};
    return true;
}

/* ---- GRES lists ----------------------------------------------------------- */

static void gres_free_one(loom_gres_t *g)
{
    free(g->name);
    free(g->type);
    free(g->sockets);
}

void loom_gres_list_free(loom_gres_list_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        gres_free_one(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static bool gres_str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

int loom_gres_list_equal(const loom_gres_list_t *a, const loom_gres_list_t *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const loom_gres_t *x = &a->v[i], *y = &b->v[i];
        if (strcmp(x->name, y->name) != 0 || !gres_str_eq(x->type, y->type) ||
            x->count != y->count || !gres_str_eq(x->sockets, y->sockets))
            return 0;
    }
    return 1;
}

static char *gres_dup(gres_span_t s)
{
    return s.p ? loom_xstrndup(s.p, s.n) : NULL;
}

/* An entry parsed but not yet copied. */
typedef struct {
    gres_span_t name, type, sockets; /* p == NULL: absent */
    uint64_t count;
} gres_entry_t;

/* "S:<list>" inside the parentheses: numbers and ranges joined by commas. */
static bool gres_valid_sockets(gres_span_t s)
{
    bool digit = false;
    for (size_t i = 0; i < s.n; i++) {
        char c = s.p[i];
        if (isdigit((unsigned char)c))
            digit = true;
        else if ((c == ',' || c == '-') && digit && i + 1 < s.n)
            digit = false;
        else
            return false;
    }
    return digit;
}

/* Strip a node entry's "(S:...)" into e->sockets; false when malformed. */
static bool gres_take_sockets(gres_span_t *s, gres_entry_t *e)
{
    const char *open = memchr(s->p, '(', s->n);
    if (!open)
        return true;
    size_t at = (size_t)(open - s->p);
    gres_span_t in = {open + 1, s->n - at - 1};
    if (in.n < 3 || in.p[in.n - 1] != ')' || in.p[0] != 'S' || in.p[1] != ':')
        return false;
    e->sockets = (gres_span_t){in.p + 2, in.n - 3};
    s->n = at;
    return gres_valid_sockets(e->sockets);
}

/* "name[:type][:count]" (node form: then "(S:...)"); NULL when good, else
 * what is wrong. */
static const char *gres_entry(gres_span_t s, int form, gres_entry_t *e)
{
    gres_span_t f[3];
    *e = (gres_entry_t){.count = 1};
    if (form == GRES_NODE && !gres_take_sockets(&s, e))
        return "bad socket list";
    size_t nf = gres_split(s, ':', f, 3);
    if (nf > 3)
        return "too many fields";
    if (!gres_valid_name(f[0]))
        return "bad name";
    e->name = f[0];
    if (nf == 1)
        return NULL;
    gres_span_t last = f[nf - 1];
    int rc = gres_count(last, &e->count);
    if (rc == -2)
        return "count too large";
    if (rc == -1 && (nf == 3 || last.n == 0 || isdigit((unsigned char)last.p[0])))
        return "bad count";
    if (rc == -1)
        e->type = last; /* "gpu:a100": a type, count 1 */
    else if (nf == 3)
        e->type = f[1];
    if (e->type.p && !gres_valid_type(e->type))
        return "bad type";
    return NULL;
}

static void gres_append(loom_gres_list_t *l, const gres_entry_t *e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = loom_xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    l->v[l->n++] =
        (loom_gres_t){gres_dup(e->name), gres_dup(e->type), e->count, gres_dup(e->sockets)};
}

static bool gres_has(const loom_gres_list_t *l, const gres_entry_t *e)
{
    for (size_t i = 0; i < l->n; i++) {
        const loom_gres_t *g = &l->v[i];
        bool same_type = e->type.p ? g->type && gres_span_eq(e->type, g->type) : !g->type;
        if (same_type && gres_span_eq(e->name, g->name))
            return true;
    }
    return false;
}

/* Parse a whole list; prefix ("gpu:" for --gpus) goes before each entry. */
static int gres_parse_list(const char *s, int form, const char *prefix, loom_gres_list_t *out,
                           loom_err_t *err)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    loom_sbuf_t buf = LOOM_SBUF_INIT;
    gres_span_t rest = {s, strlen(s)}, ent;
    const char *why = NULL;
    while (!why && gres_next(&rest, &ent)) {
        loom_sbuf_reset(&buf);
        loom_sbuf_add(&buf, prefix);
        loom_sbuf_addn(&buf, ent.p, ent.n);
        gres_entry_t e;
        if (ent.n == 0)
            why = "empty entry";
        else if ((why = gres_entry((gres_span_t){loom_sbuf_str(&buf), buf.len}, form, &e)))
            break;
        else if (gres_has(&l, &e))
            why = "duplicate entry";
        else
            gres_append(&l, &e);
    }
    loom_sbuf_free(&buf);
    if (why) {
        loom_gres_list_free(&l);
        return loom_errf(err, -LOOM_EINVAL_GRES, "Invalid GRES specification '%s' (%s at '%.*s')",
                         s, why, (int)ent.n, ent.p);
    }
    loom_gres_list_free(out);
    *out = l;
    return 0;
}

int loom_gres_parse(const char *s, loom_gres_list_t *out, loom_err_t *err)
{
    if (strcasecmp(s, "none") == 0) {
        loom_gres_list_free(out);
        return 0;
    }
    return gres_parse_list(s, GRES_REQUEST, "", out, err);
}

int loom_gres_parse_node(const char *s, loom_gres_list_t *out, loom_err_t *err)
{
    return gres_parse_list(s, GRES_NODE, "", out, err);
}

int loom_gres_parse_gpus(const char *s, loom_gres_list_t *out, loom_err_t *err)
{
    return gres_parse_list(s, GRES_REQUEST, "gpu:", out, err);
}

uint64_t loom_gres_count(const loom_gres_list_t *l, const char *name)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            sum += l->v[i].count;
    return sum;
}

uint64_t loom_gres_count_type(const loom_gres_list_t *l, const char *name, const char *type)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0 && gres_str_eq(l->v[i].type, type))
            sum += l->v[i].count;
    return sum;
}

/* One entry as "name[:type]<sep><count>" with an optional prefix. */
static void gres_fmt_one(const loom_gres_t *g, const char *prefix, char sep, loom_sbuf_t *out)
{
    loom_sbuf_add(out, prefix);
    loom_sbuf_add(out, g->name);
    if (g->type)
        loom_sbuf_addf(out, ":%s", g->type);
    loom_sbuf_addf(out, "%c%llu", sep, (unsigned long long)g->count);
}

void loom_gres_fmt(const loom_gres_list_t *l, loom_sbuf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            loom_sbuf_addc(out, ',');
        gres_fmt_one(&l->v[i], "", ':', out);
        if (l->v[i].sockets)
            loom_sbuf_addf(out, "(S:%s)", l->v[i].sockets);
    }
}

void loom_gres_fmt_tres(const loom_gres_list_t *l, loom_sbuf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            loom_sbuf_addc(out, ',');
        gres_fmt_one(&l->v[i], "gres/", '=', out);
    }
}

void loom_gres_fmt_tres_per(const loom_gres_list_t *l, loom_sbuf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            loom_sbuf_addc(out, ',');
        gres_fmt_one(&l->v[i], "gres/", ':', out);
    }
}

/* ---- TRES ----------------------------------------------------------------- */

/* Slurm's fixed TRES (ids 1-8), in its order; the rest follow by rank. */
static const struct {
    const char *type, *name;
} gres_tres_builtin[] = {
    {"cpu", NULL},     {"mem", NULL},  {"energy", NULL}, {"node", NULL},
    {"billing", NULL}, {"fs", "disk"}, {"vmem", NULL},   {"pages", NULL},
};

#define GRES_TRES_NBUILTIN (sizeof(gres_tres_builtin) / sizeof(gres_tres_builtin[0]))

static size_t gres_tres_rank(const char *type, const char *name)
{
    for (size_t i = 0; i < GRES_TRES_NBUILTIN; i++)
        if (strcmp(type, gres_tres_builtin[i].type) == 0 &&
            gres_str_eq(name, gres_tres_builtin[i].name))
            return i;
    if (strcmp(type, "gres") == 0)
        return GRES_TRES_NBUILTIN;
    return strcmp(type, "license") == 0 ? GRES_TRES_NBUILTIN + 1 : GRES_TRES_NBUILTIN + 2;
}

static bool gres_tres_is_plain(gres_span_t type)
{
    for (size_t i = 0; i < GRES_TRES_NBUILTIN; i++)
        if (!gres_tres_builtin[i].name && gres_span_eq(type, gres_tres_builtin[i].type))
            return true;
    return false;
}

/* Order of (type, name) pairs; name NULL sorts first. */
static int gres_tres_cmp(const char *ta, const char *na, const char *tb, const char *nb)
{
    size_t ra = gres_tres_rank(ta, na), rb = gres_tres_rank(tb, nb);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    int c = strcmp(ta, tb);
    if (c || (!na && !nb))
        return c;
    if (!na || !nb)
        return na ? 1 : -1;
    return strcmp(na, nb);
}

void loom_tres_list_free(loom_tres_list_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].type);
        free(l->v[i].name);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int loom_tres_list_equal(const loom_tres_list_t *a, const loom_tres_list_t *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].type, b->v[i].type) != 0 || !gres_str_eq(a->v[i].name, b->v[i].name) ||
            a->v[i].count != b->v[i].count)
            return 0;
    return 1;
}

const loom_tres_t *loom_tres_find(const loom_tres_list_t *l, const char *type, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].type, type) == 0 && gres_str_eq(l->v[i].name, name))
            return &l->v[i];
    return NULL;
}

uint64_t loom_tres_count(const loom_tres_list_t *l, const char *type, const char *name)
{
    const loom_tres_t *t = loom_tres_find(l, type, name);
    return t ? t->count : 0;
}

void loom_tres_add(loom_tres_list_t *l, const char *type, const char *name, uint64_t count)
{
    size_t at = 0;
    while (at < l->n && gres_tres_cmp(l->v[at].type, l->v[at].name, type, name) < 0)
        at++;
    if (at < l->n && gres_tres_cmp(l->v[at].type, l->v[at].name, type, name) == 0) {
        uint64_t room = LOOM_GRES_MAX_COUNT - l->v[at].count;
        l->v[at].count += count < room ? count : room;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = loom_xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(*l->v));
    l->v[at] = (loom_tres_t){loom_xstrdup(type), name ? loom_xstrdup(name) : NULL,
                             count < LOOM_GRES_MAX_COUNT ? count : LOOM_GRES_MAX_COUNT};
    l->n++;
}

void loom_tres_add_gres(loom_tres_list_t *l, const loom_gres_list_t *g)
{
    loom_sbuf_t name = LOOM_SBUF_INIT;
    for (size_t i = 0; i < g->n; i++) {
        loom_tres_add(l, "gres", g->v[i].name, g->v[i].count);
        if (!g->v[i].type)
            continue;
        loom_sbuf_reset(&name);
        loom_sbuf_addf(&name, "%s:%s", g->v[i].name, g->v[i].type);
        loom_tres_add(l, "gres", loom_sbuf_str(&name), g->v[i].count);
    }
    loom_sbuf_free(&name);
}

/* One entry, still as slices of the input. */
typedef struct {
    gres_span_t type, name; /* name.p == NULL for plain types */
    uint64_t count;
} gres_tres_entry_t;

/* "gpu[:type]" after "gres/" in the '=' form. */
static bool gres_tres_valid_gres_name(gres_span_t s)
{
    gres_span_t f[2];
    size_t nf = gres_split(s, ':', f, 2);
    return nf <= 2 && gres_valid_name(f[0]) && (nf == 1 || gres_valid_type(f[1]));
}

/* The colon form after "gres/" (or 22.05's "gres:"): a GRES request entry. */
static const char *gres_tres_gres_colon(gres_span_t s, gres_tres_entry_t *t)
{
    gres_entry_t e;
    const char *why = gres_entry(s, GRES_REQUEST, &e);
    if (why)
        return why;
    const char *end = e.type.p ? e.type.p + e.type.n : e.name.p + e.name.n;
    t->name = (gres_span_t){e.name.p, (size_t)(end - e.name.p)};
    t->count = e.count;
    return NULL;
}

/* The count after '=' or ':'; mem is a memory size. */
static const char *gres_tres_value(gres_span_t v, gres_tres_entry_t *t)
{
    if (!t->name.p && gres_span_eq(t->type, "mem")) {
        char buf[64];
        if (v.n == 0 || v.n >= sizeof(buf))
            return "bad memory size";
        memcpy(buf, v.p, v.n);
        buf[v.n] = '\0';
        return loom_mem_parse_mib(buf, &t->count, NULL) == 0 ? NULL : "bad memory size";
    }
    int rc = gres_count(v, &t->count);
    return rc == 0 ? NULL : rc == -2 ? "count too large" : "bad count";
}

/* "type=N", "type:N", "type", "type/name=N", "type/name[:N]", gres forms. */
static const char *gres_tres_entry(gres_span_t s, gres_tres_entry_t *t)
{
    size_t tn = 0;
    while (tn < s.n && (isalnum((unsigned char)s.p[tn]) || s.p[tn] == '_'))
        tn++;
    *t = (gres_tres_entry_t){.type = {s.p, tn}, .count = 1};
    char sep = tn < s.n ? s.p[tn] : '\0';
    gres_span_t rest = {s.p + tn + 1, tn < s.n ? s.n - tn - 1 : 0};
    const char *eq = memchr(rest.p, '=', rest.n);
    if (tn == 0)
        return "bad type";
    bool gres = gres_span_eq(t->type, "gres");
    if (gres && !eq && (sep == '/' || sep == ':'))
        return gres_tres_gres_colon(rest, t);
    if (sep == '/') {
        const char *end = eq ? eq : memchr(rest.p, ':', rest.n);
        t->name = (gres_span_t){rest.p, end ? (size_t)(end - rest.p) : rest.n};
        bool ok = gres ? gres_tres_valid_gres_name(t->name) : gres_valid_chars(t->name, "_.@-");
        if (!ok || gres_tres_is_plain(t->type))
            return "bad name";
        if (!end)
            return NULL;
        return gres_tres_value((gres_span_t){end + 1, rest.n - t->name.n - 1}, t);
    }
    if (!gres_tres_is_plain(t->type) || (sep != '=' && sep != ':' && sep != '\0'))
        return "bad type";
    return sep == '\0' ? NULL : gres_tres_value(rest, t);
}

/* Copy a good entry into l; false when (type, name) is already there. */
static bool gres_tres_insert(loom_tres_list_t *l, const gres_tres_entry_t *t)
{
    char *type = loom_xstrndup(t->type.p, t->type.n);
    char *name = gres_dup(t->name);
    for (char *c = type; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    bool dup = loom_tres_find(l, type, name) != NULL;
    if (!dup)
        loom_tres_add(l, type, name, t->count);
    free(type);
    free(name);
    return !dup;
}

int loom_tres_parse(const char *s, loom_tres_list_t *out, loom_err_t *err)
{
    loom_tres_list_t l = LOOM_TRES_LIST_INIT;
    gres_span_t rest = {s, strlen(s)}, ent;
    const char *why = NULL;
    while (!why && gres_next(&rest, &ent)) {
        gres_tres_entry_t t;
        if (ent.n == 0)
            why = "empty entry";
        else if ((why = gres_tres_entry(ent, &t)))
            break;
        else if (!gres_tres_insert(&l, &t))
            why = "duplicate entry";
    }
    if (why) {
        loom_tres_list_free(&l);
        return loom_errf(err, -LOOM_EINVAL_GRES, "Invalid TRES specification '%s' (%s at '%.*s')",
                         s, why, (int)ent.n, ent.p);
    }
    loom_tres_list_free(out);
    *out = l;
    return 0;
}

static void gres_tres_fmt_list(const loom_tres_list_t *l, char sep, loom_sbuf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        const loom_tres_t *t = &l->v[i];
        loom_sbuf_add(out, i ? "," : "");
        loom_sbuf_add(out, t->type);
        if (t->name)
            loom_sbuf_addf(out, "/%s", t->name);
        loom_sbuf_addc(out, sep);
        if (!t->name && strcmp(t->type, "mem") == 0)
            loom_mem_fmt(t->count, out);
        else
            loom_sbuf_addf(out, "%llu", (unsigned long long)t->count);
    }
}

void loom_tres_fmt(const loom_tres_list_t *l, loom_sbuf_t *out)
{
    gres_tres_fmt_list(l, '=', out);
}

void loom_tres_fmt_per(const loom_tres_list_t *l, loom_sbuf_t *out)
{
    gres_tres_fmt_list(l, ':', out);
}

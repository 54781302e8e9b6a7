/*
 * cli_format.c - column formats for squeue, sinfo and the other listings
 * (CLI_SPEC §4.1, §4.2, §7.1, §7.2). See cli_format.h for the syntax.
 *
 * Invariant: a parsed loom_fmt_t has a non-NULL prefix and every item a
 * non-NULL column and suffix, so rendering needs no checks.
 */
#include "cli/cli_format.h"

#include "common/fpattern.h"
#include "common/jobstate.h"
#include "common/nodestate.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <grp.h>
#include <pwd.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Slurm's -O default width. */
#define FORMAT_LONG_WIDTH 20
/* Widths beyond this are treated as this (keeps a typo from eating memory). */
#define FORMAT_WIDTH_MAX 4096

const loom_fmt_col_t *loom_fmt_col_by_letter(const loom_fmt_col_t *cols, size_t ncols, char c)
{
    for (size_t i = 0; i < ncols; i++)
        if (cols[i].letter == c)
            return &cols[i];
    return NULL;
}

const loom_fmt_col_t *loom_fmt_col_by_name(const loom_fmt_col_t *cols, size_t ncols,
                                           const char *name, size_t len)
{
    for (size_t i = 0; i < ncols; i++)
        if (cols[i].name && strlen(cols[i].name) == len &&
            strncasecmp(cols[i].name, name, len) == 0)
            return &cols[i];
    return NULL;
}

static void format_push(loom_fmt_t *f, const loom_fmt_col_t *col, int width, bool right, bool autow)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 8;
        f->v = loom_xreallocarray(f->v, f->cap, sizeof(*f->v));
    }
    f->v[f->n++] = (loom_fmt_item_t){col, width, right, autow, NULL};
}

/* Where literal text goes: the last item's suffix, or the prefix. */
static void format_take_text(loom_fmt_t *f, loom_sbuf_t *text)
{
    char *s = loom_sbuf_detach(text);
    if (f->n == 0) {
        free(f->prefix);
        f->prefix = s;
    } else {
        free(f->v[f->n - 1].suffix);
        f->v[f->n - 1].suffix = s;
    }
}

/* Digits at *p as a width, capped. */
static int format_width(const char **p)
{
    long w = 0;
    while (isdigit((unsigned char)**p)) {
        if (w < FORMAT_WIDTH_MAX)
            w = w * 10 + (**p - '0');
        (*p)++;
    }
    return w > FORMAT_WIDTH_MAX ? FORMAT_WIDTH_MAX : (int)w;
}

/* One "%..." field at p (just after the '%'); returns the text after it.
 * Unknown fields become literal text in `text`. */
static const char *format_field(const char *p, const loom_fmt_col_t *cols, size_t ncols,
                                unsigned flags, loom_fmt_t *f, loom_sbuf_t *text, loom_strv_t *bad)
{
    const char *start = p;
    bool right = false, autow = false;
    if (*p == '.') {
        right = true;
        p++;
    }
    if (*p == '#' && (flags & LOOM_FMT_AUTO)) {
        autow = true;
        p++;
    }
    int width = format_width(&p);
    const loom_fmt_col_t *col = *p ? loom_fmt_col_by_letter(cols, ncols, *p) : NULL;
    if (!*p && p == start)
        return p; /* a lone '%' at the end prints nothing (squeue/sinfo 22.05) */
    if (!*p && bad)
        loom_strv_add(bad, ""); /* "%5": reported with an empty letter, kept as text */
    if (!col) {
        size_t n = *p ? (size_t)(p - start) + 1 : (size_t)(p - start);
        if (bad && *p)
            loom_strv_add(bad, (char[]){*p, '\0'});
        loom_sbuf_addc(text, '%');
        loom_sbuf_addn(text, start, n);
        return start + n;
    }
    format_take_text(f, text);
    format_push(f, col, width, right, autow);
    return p + 1;
}

/* Establish the invariant: prefix and suffixes are never NULL. */
static void format_defaults(loom_fmt_t *f)
{
    if (!f->prefix)
        f->prefix = loom_xstrdup("");
    for (size_t i = 0; i < f->n; i++)
        if (!f->v[i].suffix)
            f->v[i].suffix = loom_xstrdup("");
}

static void format_finish(loom_fmt_t *f, loom_sbuf_t *text)
{
    format_take_text(f, text);
    format_defaults(f);
}

void loom_fmt_parse(const char *spec, const loom_fmt_col_t *cols, size_t ncols, unsigned flags,
                    loom_fmt_t *out, loom_strv_t *bad)
{
    loom_sbuf_t text = LOOM_SBUF_INIT;
    const char *p = spec;
    while (*p) {
        if (*p != '%') {
            loom_sbuf_addc(&text, *p++);
        } else if (p[1] == '%') {
            loom_sbuf_addc(&text, '%');
            p += 2;
        } else {
            p = format_field(p + 1, cols, ncols, flags, out, &text, bad);
        }
    }
    format_finish(out, &text);
}

/* The text after an -O element's ':' up to end: '.' (right), digits (width);
 * returns where its suffix starts. */
static const char *format_long_opts(const char *p, const char *end, bool *right, int *width)
{
    if (p < end && *p == '.') {
        *right = true;
        p++;
    }
    char digits[16] = "";
    size_t nd = 0;
    while (p < end && isdigit((unsigned char)*p) && nd < sizeof(digits) - 1)
        digits[nd++] = *p++;
    const char *dp = digits;
    *width = format_width(&dp);
    return p;
}

/* An unknown -O element's suffix is still printed, as literal text (22.05). */
static void format_long_text(loom_fmt_t *f, const char *s, size_t n)
{
    char **at = f->n ? &f->v[f->n - 1].suffix : &f->prefix;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, *at ? *at : "");
    loom_sbuf_addn(&sb, s, n);
    free(*at);
    *at = loom_sbuf_detach(&sb);
}

/* One -O element "Name[:[.][size][suffix]]" of length len. */
static void format_long_item(const char *s, size_t len, const loom_fmt_col_t *cols, size_t ncols,
                             loom_fmt_t *f, loom_strv_t *bad)
{
    const char *colon = memchr(s, ':', len), *end = s + len;
    size_t nlen = colon ? (size_t)(colon - s) : len;
    const loom_fmt_col_t *col = loom_fmt_col_by_name(cols, ncols, s, nlen);
    bool right = false;
    int width = col && col->owidth ? col->owidth : FORMAT_LONG_WIDTH;
    const char *suffix = colon ? format_long_opts(colon + 1, end, &right, &width) : NULL;
    if (!col) {
        if (bad)
            loom_strv_addn(bad, s, nlen);
        if (suffix && suffix < end)
            format_long_text(f, suffix, (size_t)(end - suffix));
        return;
    }
    format_push(f, col, width, right, false);
    if (suffix)
        f->v[f->n - 1].suffix = loom_xstrndup(suffix, (size_t)(end - suffix));
}

void loom_fmt_parse_long(const char *spec, const loom_fmt_col_t *cols, size_t ncols,
                         loom_fmt_t *out, loom_strv_t *bad)
{
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len)
            format_long_item(p, len, cols, ncols, out, bad);
        p += len;
        if (*p == ',')
            p++;
    }
    format_defaults(out);
}

void loom_fmt_free(loom_fmt_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].suffix);
    free(f->v);
    free(f->prefix);
    *f = (loom_fmt_t)LOOM_FMT_INIT;
}

bool loom_fmt_has(const loom_fmt_t *f, loom_fmt_get_f *get)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].col->get == get)
            return true;
    return false;
}

void loom_fmt_set_auto(loom_fmt_t *f, loom_fmt_get_f *get, int width)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].autow && f->v[i].col->get == get)
            f->v[i].width = width;
}

void loom_fmt_cell(loom_sbuf_t *out, const char *val, int width, bool right, bool cut)
{
    val = val ? val : "";
    size_t len = strlen(val);
    if (width > 0 && right && !cut && len > (size_t)width)
        loom_sbuf_add(out, val);
    else
        loom_sbuf_addpad(out, val, width > 0 ? (size_t)width : 0, right);
}

void loom_fmt_header(const loom_fmt_t *f, loom_sbuf_t *out)
{
    loom_sbuf_add(out, f->prefix);
    for (size_t i = 0; i < f->n; i++) {
        const loom_fmt_item_t *it = &f->v[i];
        loom_fmt_cell(out, it->col->header, it->width, it->right,
                      !(it->col->flags & LOOM_FMT_HDR_NOCUT));
        loom_sbuf_add(out, it->suffix);
    }
    loom_sbuf_addc(out, '\n');
}

void loom_fmt_row(const loom_fmt_t *f, const void *ctx, const void *rec, loom_sbuf_t *out)
{
    loom_sbuf_t val = LOOM_SBUF_INIT;
    loom_sbuf_add(out, f->prefix);
    for (size_t i = 0; i < f->n; i++) {
        const loom_fmt_item_t *it = &f->v[i];
        loom_sbuf_reset(&val);
        int how = it->col->get(ctx, rec, &val);
        loom_fmt_cell(out, loom_sbuf_str(&val), it->width, it->right, !(how & LOOM_FMT_NOCUT));
        loom_sbuf_add(out, it->suffix);
    }
    loom_sbuf_addc(out, '\n');
    loom_sbuf_free(&val);
}

void loom_fmt_date_line(time_t now, loom_sbuf_t *out)
{
    struct tm tm;
    char buf[64];
    if (localtime_r(&now, &tm) && strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S %Y", &tm))
        loom_sbuf_add(out, buf);
    loom_sbuf_addc(out, '\n');
}

/* ---- JSON accessors ----------------------------------------------------- */

bool loom_cli_clusters(const char *list, const char *local, loom_strv_t *errors)
{
    loom_strv_t names = LOOM_STRV_INIT;
    loom_strv_split(&names, list, ",");
    bool found = false;
    loom_sbuf_t line = LOOM_SBUF_INIT;
    for (size_t i = 0; i < names.n; i++) {
        if (!strcasecmp(names.v[i], "all") || (local && !strcmp(names.v[i], local))) {
            found = true;
            continue;
        }
        loom_sbuf_reset(&line);
        loom_sbuf_addf(&line, "No cluster '%s' known by database.", names.v[i]);
        loom_strv_add(errors, loom_sbuf_str(&line));
    }
    if (!found) {
        loom_sbuf_reset(&line);
        loom_sbuf_addf(&line,
                       "'%s' can't be reached now, or it is an invalid entry for --cluster.  "
                       "Use 'sacctmgr list clusters' to see available clusters.",
                       list);
        loom_strv_add(errors, loom_sbuf_str(&line));
    }
    loom_sbuf_free(&line);
    loom_strv_free(&names);
    return found;
}

const char *loom_js(const json_t *obj, const char *key)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *loom_js_or(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = loom_js(obj, key);
    return s ? s : dflt;
}

int64_t loom_ji(const json_t *obj, const char *key, int64_t dflt)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (json_is_real(v))
        return (int64_t)json_real_value(v);
    if (json_is_boolean(v))
        return json_is_true(v);
    return dflt;
}

bool loom_jhas(const json_t *obj, const char *key)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    return v && !json_is_null(v);
}

bool loom_jb(const json_t *obj, const char *key, bool dflt)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    return dflt;
}

double loom_jd(const json_t *obj, const char *key, double dflt)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* ---- job records --------------------------------------------------------- */

static uint32_t format_state_word(const char *name)
{
    uint32_t v = 0;
    return loom_job_state_parse(name, &v, NULL) == 0 ? v : LOOM_JOB_PENDING;
}

uint32_t loom_cli_job_state(const json_t *job)
{
    json_t *st = json_object_get(job, "state");
    if (json_is_integer(st))
        return (uint32_t)json_integer_value(st);
    if (json_is_string(st))
        return format_state_word(json_string_value(st));
    uint32_t word = 0;
    size_t i;
    json_t *v;
    json_array_foreach(st, i, v)
    {
        if (json_is_string(v))
            word |= format_state_word(json_string_value(v));
    }
    return word;
}

void loom_cli_job_id(const json_t *job, loom_sbuf_t *out)
{
    const char *rest = loom_js(job, "array_task_str");
    int64_t array_id = loom_ji(job, "array_job_id", 0);
    if (array_id > 0 && rest && *rest)
        loom_sbuf_addf(out, "%lld_[%s]", (long long)array_id, rest);
    else if (array_id > 0 && loom_jhas(job, "array_task_id"))
        loom_sbuf_addf(out, "%lld_%lld", (long long)array_id,
                       (long long)loom_ji(job, "array_task_id", 0));
    else
        loom_sbuf_addf(out, "%lld", (long long)loom_ji(job, "job_id", 0));
}

int64_t loom_cli_job_runtime(const json_t *job, time_t now)
{
    int64_t start = loom_ji(job, "start_time", 0), end = loom_ji(job, "end_time", 0);
    uint32_t st = loom_cli_job_state(job);
    if (start <= 0 || loom_job_base(st) == LOOM_JOB_PENDING)
        return 0;
    /* Suspended time is not run time: what ran before the last suspend plus
     * what ran since the last resume (slurmctld's pre_sus_time). */
    int64_t pre = loom_ji(job, "pre_sus_time", 0), susp = loom_ji(job, "suspend_time", 0);
    if (loom_job_base(st) == LOOM_JOB_SUSPENDED)
        return pre;
    if (loom_job_base(st) == LOOM_JOB_RUNNING || end < start)
        end = now;
    int64_t since = susp > start ? susp : start;
    return pre + (end > since ? end - since : 0);
}

int64_t loom_cli_job_limit(const json_t *job)
{
    if (!loom_jhas(job, "time_limit"))
        return LOOM_TIME_NOT_SET;
    int64_t mins = loom_ji(job, "time_limit", -1);
    return mins < 0 ? LOOM_TIME_INFINITE : mins * 60;
}

const char *loom_cli_job_oversub(const json_t *job)
{
    json_t *os = json_object_get(job, "oversubscribe");
    if (loom_jb(job, "exclusive", false) || json_is_false(os))
        return "NO";
    return json_is_true(os) ? "YES" : "OK";
}

void loom_cli_user_name(int64_t uid, loom_sbuf_t *out)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (uid >= 0 && getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        loom_sbuf_add(out, pw.pw_name);
    else
        loom_sbuf_addf(out, "%lld", (long long)uid);
}

void loom_cli_group_name(int64_t gid, loom_sbuf_t *out)
{
    struct group gr, *res = NULL;
    char buf[4096];
    if (gid >= 0 && getgrgid_r((gid_t)gid, &gr, buf, sizeof(buf), &res) == 0 && res)
        loom_sbuf_add(out, gr.gr_name);
    else
        loom_sbuf_addf(out, "%lld", (long long)gid);
}

void loom_cli_job_stdio(const json_t *job, char which, loom_sbuf_t *out)
{
    if (which == 'i') {
        loom_sbuf_add(out, loom_js_or(job, "std_in", "/dev/null"));
        return;
    }
    loom_sbuf_t user = LOOM_SBUF_INIT;
    const char *uname = loom_js(job, "user_name");
    if (!uname) {
        loom_cli_user_name(loom_ji(job, "user_id", -1), &user);
        uname = loom_sbuf_str(&user);
    }
    loom_fpattern_ctx_t ctx;
    loom_fpattern_ctx_init(&ctx);
    ctx.job_id = (uint32_t)loom_ji(job, "job_id", 0);
    bool is_array = loom_ji(job, "array_job_id", 0) > 0;
    if (is_array) {
        ctx.array_job_id = (uint32_t)loom_ji(job, "array_job_id", 0);
        if (loom_jhas(job, "array_task_id") && !loom_js(job, "array_task_str"))
            ctx.array_task_id = (uint32_t)loom_ji(job, "array_task_id", 0);
    }
    ctx.job_name = loom_js(job, "name");
    ctx.user = uname;
    ctx.node_name = loom_js(job, "batch_host");
    ctx.work_dir = loom_js(job, "work_dir");
    char *o = NULL, *e = NULL;
    loom_fpattern_stdio(loom_js(job, "std_out"), loom_js(job, "std_err"), is_array, &ctx, &o, &e);
    loom_sbuf_add(out, which == 'e' && e ? e : o);
    free(o);
    free(e);
    loom_sbuf_free(&user);
}

uint32_t loom_cli_node_state(const json_t *node)
{
    json_t *st = json_object_get(node, "state");
    uint32_t word = 0, w;
    if (json_is_string(st))
        return loom_node_state_parse(json_string_value(st), &w, NULL) == 0 ? w : 0;
    size_t i;
    json_t *v;
    json_array_foreach(st, i, v)
    {
        if (!json_is_string(v) || loom_node_state_parse(json_string_value(v), &w, NULL) < 0)
            continue;
        /* "DRAIN" alone parses as IDLE+DRAIN: after the first name keep only flags */
        word |= i == 0 ? w : (w & ~LOOM_NODE_STATE_BASE);
    }
    return word;
}

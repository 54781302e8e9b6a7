/*
 * sreport_print.c - sreport's output: the header block, the columns and
 * the time units (see sreport.h).
 *
 * Layout as sreport 22.05 prints it: an 80-dash line, the report's title
 * with its window (end shown as end - 1 s), "Usage reported in ...", another
 * dash line (all of it left out with -n), then print_fields columns. A time
 * column is 8 wide (17 with the per-cent pair formats) and one wider for each
 * digit past 8 of its largest value in seconds; the %N widths of format= apply to
 * the other columns only.
 */
#include "cli/sreport.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- -t ------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int minlen;
    sr_tf_t tf;
} sr_formats[] = {
    {"SecPer", 6, SR_TF_SECPER},   {"MinPer", 6, SR_TF_MINPER}, {"HourPer", 6, SR_TF_HOURPER},
    {"Seconds", 1, SR_TF_SECS},    {"Minutes", 1, SR_TF_MINS},  {"Hours", 1, SR_TF_HOURS},
    {"Percent", 1, SR_TF_PERCENT},
};

/* Slurm's keyword test: strncasecmp(name, text, MAX(len, minlen)) == 0. */
static bool sr_keyword(const char *name, const char *text, size_t len, int minlen)
{
    char buf[64];
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    return strncasecmp(name, buf, len > (size_t)minlen ? len : (size_t)minlen) == 0;
}

int sr_time_format(const char *text)
{
    for (size_t i = 0; i < sizeof(sr_formats) / sizeof(sr_formats[0]); i++)
        if (sr_keyword(sr_formats[i].name, text, strlen(text), sr_formats[i].minlen))
            return (int)sr_formats[i].tf;
    return -1;
}

static bool sr_tf_per(sr_tf_t tf)
{
    return tf == SR_TF_SECPER || tf == SR_TF_MINPER || tf == SR_TF_HOURPER;
}

void sr_time_text(sr_tf_t tf, int64_t secs, int64_t total, loom_sbuf_t *out)
{
    double pct = (double)secs * 100.0 / (double)(total ? total : 1);
    switch (tf) {
    case SR_TF_SECS:
        loom_sbuf_addf(out, "%lld", (long long)secs);
        break;
    case SR_TF_HOURS:
        loom_sbuf_addf(out, "%.0f", (double)secs / 3600.0);
        break;
    case SR_TF_PERCENT:
        loom_sbuf_addf(out, "%.2f%%", pct);
        break;
    case SR_TF_SECPER:
        loom_sbuf_addf(out, "%lld(%.2f%%)", (long long)secs, pct);
        break;
    case SR_TF_MINPER:
        loom_sbuf_addf(out, "%.0f(%.2f%%)", (double)secs / 60.0, pct);
        break;
    case SR_TF_HOURPER:
        loom_sbuf_addf(out, "%.0f(%.2f%%)", (double)secs / 3600.0, pct);
        break;
    default:
        loom_sbuf_addf(out, "%.0f", (double)secs / 60.0);
        break;
    }
}

int sr_tres_rank(const char *name)
{
    static const char *const order[] = {"cpu",     "mem",     "energy", "node",
                                        "billing", "fs/disk", "vmem",   "pages"};
    for (int i = 0; i < 8; i++)
        if (!strcmp(order[i], name))
            return i;
    return 8;
}

/* ---- rows ----------------------------------------------------------------------- */

sr_row_t *sr_rows_add(sr_rows_t *rows)
{
    if (rows->n == rows->cap) {
        rows->cap = rows->cap ? rows->cap * 2 : 16;
        rows->v = loom_xrealloc(rows->v, rows->cap * sizeof(*rows->v));
    }
    sr_row_t *r = &rows->v[rows->n++];
    memset(r, 0, sizeof(*r));
    return r;
}

const char *sr_rows_str(sr_rows_t *rows, const char *s)
{
    loom_strv_add(&rows->strings, s ? s : "");
    return rows->strings.v[rows->strings.n - 1];
}

void sr_rows_free(sr_rows_t *rows)
{
    free(rows->v);
    loom_strv_free(&rows->strings);
    memset(rows, 0, sizeof(*rows));
}

/* ---- columns -------------------------------------------------------------------- */

static const struct {
    const char *name;
    int minlen;
    sr_fid_t id;
} sr_keys[] = {
    {"Accounts", 2, SR_F_ACCT},      {"allocated", 2, SR_F_ALLOC},
    {"Cluster", 2, SR_F_CLUSTER},    {"down", 1, SR_F_DOWN},
    {"Energy", 1, SR_F_ENERGY},      {"idle", 1, SR_F_IDLE},
    {"Login", 1, SR_F_LOGIN},        {"overcommitted", 1, SR_F_OVER},
    {"PlannedDown", 2, SR_F_PDOWN},  {"PLNDDown", 2, SR_F_PDOWN},
    {"planned", 2, SR_F_PLAN},       {"reserved", 3, SR_F_PLAN},
    {"Proper", 2, SR_F_PROPER},      {"reported", 3, SR_F_REPORTED},
    {"TresCount", 5, SR_F_TRES_CNT}, {"TresName", 5, SR_F_TRES_NAME},
    {"Used", 1, SR_F_USED},
};

static const struct {
    const char *header;
    int width; /* 0: a time column */
} sr_cols[SR_F_COUNT] = {
    [SR_F_CLUSTER] = {"Cluster", 9},
    [SR_F_TRES_CNT] = {"TRES Count", 10},
    [SR_F_ALLOC] = {"Allocated", 0},
    [SR_F_DOWN] = {"Down", 0},
    [SR_F_IDLE] = {"Idle", 0},
    [SR_F_PDOWN] = {"PLND Down", 0},
    [SR_F_OVER] = {"Over Comm", 0},
    [SR_F_PLAN] = {"Planned", 0},
    [SR_F_REPORTED] = {"Reported", 0},
    [SR_F_ACCT] = {"Account", 15},
    [SR_F_LOGIN] = {"Login", 9},
    [SR_F_PROPER] = {"Proper Name", 15},
    [SR_F_USED] = {"Used", 0},
    [SR_F_ENERGY] = {"Energy", 0},
    [SR_F_TRES_NAME] = {"TRES Name", 14},
};

typedef struct {
    sr_fid_t id;
    int width;
} sr_col_t;

static int sr_find_field(const char *text, size_t len)
{
    for (size_t i = 0; i < sizeof(sr_keys) / sizeof(sr_keys[0]); i++)
        if (sr_keyword(sr_keys[i].name, text, len, sr_keys[i].minlen))
            return (int)sr_keys[i].id;
    return -1;
}

/* The default columns of a report. */
static void sr_default_cols(const sr_t *s, sr_rep_t rep, loom_strv_t *out)
{
    static const char *const util[] = {"Cluster", "allocated", "down",    "PLNDDown",
                                       "idle",    "reserved",  "reported"};
    static const char *const top[] = {"Cluster", "Login", "Proper", "Accounts", "Used", "Energy"};
    static const char *const acct[] = {"Cluster", "Accounts", "Login", "Proper", "Used", "Energy"};
    const char *const *v = rep == SR_REP_UTIL ? util : rep == SR_REP_ACCT_USER ? acct : top;
    size_t n = rep == SR_REP_UTIL ? 7 : 6;
    for (size_t i = 0; i < n; i++) {
        bool used = !strcmp(v[i], "Used");
        if (s->tres_given && ((rep == SR_REP_UTIL && i == 1) || used))
            loom_strv_add(out, "TresName");
        if (!(s->tres_given && !strcmp(v[i], "Energy")))
            loom_strv_add(out, v[i]);
    }
}

static size_t sr_digits(int64_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Resolve format= into columns; a time column's width follows its largest value. */
static size_t sr_columns(sr_t *s, const sr_cond_t *c, const sr_rows_t *rows, sr_col_t *cols)
{
    loom_strv_t def = LOOM_STRV_INIT;
    const loom_strv_t *fmt = &c->format;
    if (!fmt->n) {
        sr_default_cols(s, c->rep, &def);
        fmt = &def;
    }
    size_t n = 0;
    for (size_t i = 0; i < fmt->n && n < 64; i++) {
        const char *pct = strchr(fmt->v[i], '%');
        size_t len = pct ? (size_t)(pct - fmt->v[i]) : strlen(fmt->v[i]);
        int id = sr_find_field(fmt->v[i], len);
        if (id < 0) {
            fprintf(stderr, " Unknown field '%.*s'\n", (int)len, fmt->v[i]);
            s->status = 1;
            continue;
        }
        int w = sr_cols[id].width;
        if (id == SR_F_ACCT && c->tree)
            w = -20;
        if (w && pct)
            w = atoi(pct + 1);
        if (!w) {
            int64_t max = 0;
            for (size_t r = 0; r < rows->n; r++)
                if (rows->v[r].secs[id] > max)
                    max = rows->v[r].secs[id];
            size_t d = sr_digits(max);
            w = (sr_tf_per(s->tf) ? 17 : 8) + (d > 8 ? (int)(d - 8) : 0);
        }
        cols[n++] = (sr_col_t){(sr_fid_t)id, w};
    }
    loom_strv_free(&def);
    return n;
}

/* ---- header block ------------------------------------------------------------------ */

static void sr_date(int64_t t, loom_sbuf_t *out)
{
    time_t tt = (time_t)t;
    struct tm tm;
    char buf[32];
    localtime_r(&tt, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    loom_sbuf_add(out, buf);
}

static const char *sr_unit(sr_tf_t tf)
{
    static const char *const names[] = {
        [SR_TF_SECS] = "Seconds",
        [SR_TF_MINS] = "Minutes",
        [SR_TF_HOURS] = "Hours",
        [SR_TF_PERCENT] = "Percentage of Total",
        [SR_TF_SECPER] = "Seconds/Percentage of Total",
        [SR_TF_MINPER] = "Minutes/Percentage of Total",
        [SR_TF_HOURPER] = "Hours/Percentage of Total",
    };
    return names[tf];
}

static void sr_title(const sr_t *s, const sr_cond_t *c, loom_sbuf_t *out)
{
    static const char dashes[] = "----------------------------------------"
                                 "----------------------------------------\n";
    loom_sbuf_add(out, dashes);
    switch (c->rep) {
    case SR_REP_UTIL:
        loom_sbuf_add(out, "Cluster Utilization ");
        break;
    case SR_REP_TOP:
        loom_sbuf_addf(out, "Top %d Users ", c->top);
        break;
    case SR_REP_ACCT_USER:
        loom_sbuf_add(out, "Cluster/Account/User Utilization ");
        break;
    default:
        loom_sbuf_add(out, "Cluster/User/Account Utilization ");
        break;
    }
    sr_date(c->start, out);
    loom_sbuf_add(out, " - ");
    sr_date(c->end - 1, out);
    if (c->rep != SR_REP_UTIL)
        loom_sbuf_addf(out, " (%lld secs)", (long long)(c->end - c->start));
    if (s->tf == SR_TF_PERCENT)
        loom_sbuf_addf(out, "\nUsage reported in %s\n", sr_unit(s->tf));
    else
        loom_sbuf_addf(out, "\nUsage reported in %s %s\n", s->tres_given ? "TRES" : "CPU",
                       sr_unit(s->tf));
    loom_sbuf_add(out, dashes);
}

/* ---- the table ------------------------------------------------------------------------ */

static void sr_cell(sr_t *s, const sr_row_t *r, const sr_col_t *col, bool last)
{
    loom_sbuf_t v = LOOM_SBUF_INIT;
    bool timecol = sr_cols[col->id].width == 0;
    if (timecol) {
        sr_time_text(s->tf, r->secs[col->id], r->total, &v);
    } else {
        for (int i = 0; col->id == SR_F_ACCT && i < r->indent; i++)
            loom_sbuf_addc(&v, ' ');
        loom_sbuf_add(&v, r->text[col->id] ? r->text[col->id] : "");
    }
    loom_pf_cell(&s->pf, loom_sbuf_str(&v), col->width, last, timecol, &s->out);
    loom_sbuf_free(&v);
}

void sr_print(sr_t *s, const sr_cond_t *c, const sr_rows_t *rows)
{
    sr_col_t cols[64];
    if (!s->pf.noheader)
        sr_title(s, c, &s->out);
    size_t n = sr_columns(s, c, rows, cols);
    loom_pf_col_t hdr[64];
    for (size_t i = 0; i < n; i++)
        hdr[i] = (loom_pf_col_t){sr_cols[cols[i].id].header, cols[i].width};
    loom_pf_header(&s->pf, hdr, n, &s->out);
    for (size_t r = 0; r < rows->n; r++) {
        for (size_t i = 0; i < n; i++)
            sr_cell(s, &rows->v[r], &cols[i], i + 1 == n);
        loom_sbuf_addc(&s->out, '\n');
    }
}

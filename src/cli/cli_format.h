/*
 * cli_format.h - the column formats shared by squeue, sinfo and friends
 * (CLI_SPEC §4.1, §4.2, §7.1, §7.2).
 *
 * A command describes its fields in one table of loom_fmt_col_t (the -o
 * letter, the -O name, the header and a getter) and parses the user's format
 * into a loom_fmt_t:
 *
 *  - loom_fmt_parse(): Slurm's -o syntax. Text before the first '%' is a
 *    prefix; each field is `%[.][#][size]letter` followed by literal text
 *    (its suffix) up to the next '%'. '.' right-justifies, size is the column
 *    width (0 or absent: the value's own width), '#' (only with LOOM_FMT_AUTO,
 *    sinfo's internal default formats) asks the command to compute the width
 *    from the data. "%%" is a literal '%'. An unknown letter is reported in
 *    `bad` and its text is kept literally, as Slurm does.
 *  - loom_fmt_parse_long(): the -O syntax, comma-separated
 *    `Name[:[.][size][suffix]]` with case-insensitive names; the default width
 *    is the column's `owidth` (20 when 0), left-justified.
 *
 * Rendering: a value wider than its column is cut to the width (not widened),
 * shorter ones are padded with spaces on the left ('.') or right. Headers
 * follow the same rule, which is why squeue -l prints "TIME_LIMI". Slurm
 * lets a few right-justified values overflow instead (elapsed times, node
 * lists): their getters return LOOM_FMT_NOCUT.
 *
 * Also here: the small JSON accessors the getters use on wire records
 * (docs/proto/messages.md §1) and the `-l` date line.
 */
#ifndef LOOM_CLI_FORMAT_H
#define LOOM_CLI_FORMAT_H

#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Appends the text of one field of rec to out; ctx is the command's state.
 * Returns 0, or LOOM_FMT_NOCUT when this value may overflow a right-justified
 * column (Slurm prints elapsed times and node lists that way). */
typedef int loom_fmt_get_f(const void *ctx, const void *rec, loom_sbuf_t *out);

enum {
    LOOM_FMT_NOCUT = 1u << 0,     /* getter result: do not cut a right-justified value */
    LOOM_FMT_HDR_NOCUT = 1u << 1, /* column flag: do not cut a right-justified header */
};

typedef struct loom_fmt_col {
    char letter;         /* -o letter; 0 when the field exists only for -O */
    const char *name;    /* -O name; NULL when the field exists only for -o */
    const char *header;  /* column title */
    int owidth;          /* -O default width; 0 means 20 */
    loom_fmt_get_f *get; /* the value */
    unsigned flags;      /* LOOM_FMT_HDR_NOCUT */
} loom_fmt_col_t;

/* Getters for the tables: fn that is one call, helper((rec_t)rec, args..., out),
 * and fn that prints a fixed text. */
#define LOOM_FMT_GETTER_OF(fn, rec_t, helper, ...)                                                 \
    static int fn(const void *ctx, const void *rec, loom_sbuf_t *out)                              \
    {                                                                                              \
        helper((rec_t)rec, __VA_ARGS__, out);                                                      \
        return 0;                                                                                  \
    }
#define LOOM_FMT_TEXT_GETTER(fn, text)                                                             \
    static int fn(const void *ctx, const void *rec, loom_sbuf_t *out)                              \
    {                                                                                              \
        loom_sbuf_add(out, text);                                                                  \
        return 0;                                                                                  \
    }

typedef struct loom_fmt_item {
    const loom_fmt_col_t *col; /* never NULL */
    int width;                 /* 0: the value's own width */
    bool right;                /* '.' */
    bool autow;                /* '#': the command sets width from the data */
    char *suffix;              /* literal text printed after the field (owned) */
} loom_fmt_item_t;

typedef struct loom_fmt {
    char *prefix; /* literal text before the first field (owned, never NULL after parse) */
    loom_fmt_item_t *v;
    size_t n, cap;
} loom_fmt_t;

#define LOOM_FMT_INIT                                                                              \
    {                                                                                              \
        NULL, NULL, 0, 0                                                                           \
    }

enum {
    LOOM_FMT_AUTO = 1u << 0, /* accept '#' (internal default formats only) */
};

/* Parse a -o format. Unknown letters are appended to bad (one string each,
 * the offending text without the '%'); bad may be NULL. Always succeeds. */
void loom_fmt_parse(const char *spec, const loom_fmt_col_t *cols, size_t ncols, unsigned flags,
                    loom_fmt_t *out, loom_strv_t *bad);
/* Parse a -O format; unknown names go to bad and are skipped. */
void loom_fmt_parse_long(const char *spec, const loom_fmt_col_t *cols, size_t ncols,
                         loom_fmt_t *out, loom_strv_t *bad);
void loom_fmt_free(loom_fmt_t *f);

/* The column for a -o letter or a -O name (case-insensitive), or NULL. */
const loom_fmt_col_t *loom_fmt_col_by_letter(const loom_fmt_col_t *cols, size_t ncols, char c);
const loom_fmt_col_t *loom_fmt_col_by_name(const loom_fmt_col_t *cols, size_t ncols,
                                           const char *name, size_t len);
/* Does the format show a field with this getter? */
bool loom_fmt_has(const loom_fmt_t *f, loom_fmt_get_f *get);
/* Set the width of every '#' item whose getter is get. */
void loom_fmt_set_auto(loom_fmt_t *f, loom_fmt_get_f *get, int width);

/* One cell: val padded to width (0: as is), right-justified when right. A
 * longer value is cut to the width, except a right-justified one with cut
 * false (Slurm's printf("%*s") then overflows the column). */
void loom_fmt_cell(loom_sbuf_t *out, const char *val, int width, bool right, bool cut);
/* The header line and one record's line, each ending with '\n'. */
void loom_fmt_header(const loom_fmt_t *f, loom_sbuf_t *out);
void loom_fmt_row(const loom_fmt_t *f, const void *ctx, const void *rec, loom_sbuf_t *out);

/* The date line of the -l layouts: "Sat Nov 21 13:10:12 2026" (local time). */
void loom_fmt_date_line(time_t now, loom_sbuf_t *out);

/* squeue/sinfo -M/--clusters: Loom serves one cluster, its ClusterName
 * (`local`); "all" names it too. Returns true when the comma-separated `list`
 * names it; each other name adds Slurm's "No cluster 'x' known by database."
 * to `errors`, and a list naming none adds the "can't be reached" line. */
bool loom_cli_clusters(const char *list, const char *local, loom_strv_t *errors);

/* ---- JSON record accessors (borrowed values; absent or ill-typed keys give the default) */
const char *loom_js(const json_t *obj, const char *key); /* NULL when absent */
const char *loom_js_or(const json_t *obj, const char *key, const char *dflt);
int64_t loom_ji(const json_t *obj, const char *key, int64_t dflt);
bool loom_jhas(const json_t *obj, const char *key);
bool loom_jb(const json_t *obj, const char *key, bool dflt);
double loom_jd(const json_t *obj, const char *key, double dflt);

/* ---- job records (docs/proto/messages.md §1) ----------------------------- */
/* The state word: "state" as a list (["RUNNING","COMPLETING"]), a long or short
 * name, or an integer word. PENDING when absent or unreadable. */
uint32_t loom_cli_job_state(const json_t *job);
/* The id squeue %i prints: "123", "123_4" (array task), "123_[5-9%2]"
 * (the pending remainder of an array). */
void loom_cli_job_id(const json_t *job, loom_sbuf_t *out);
/* Seconds the job has run: 0 before it starts, up to now while it runs, up
 * to its end (or suspension) afterwards. */
int64_t loom_cli_job_runtime(const json_t *job, time_t now);
/* The time limit in seconds, LOOM_TIME_INFINITE, or LOOM_TIME_NOT_SET. */
int64_t loom_cli_job_limit(const json_t *job);
/* OverSubscribe as squeue %h and scontrol print it: "NO" (--exclusive, or
 * the job's own NO), "YES", or "OK" when the job asked nothing. */
const char *loom_cli_job_oversub(const json_t *job);
/* The expanded stdin/stdout/stderr path of a batch job (which: 'i', 'o', 'e'),
 * as scontrol and squeue -O STDOUT print them (sbatch's defaults applied). */
void loom_cli_job_stdio(const json_t *job, char which, loom_sbuf_t *out);
/* The state word of a node record: "state" as a list (["DOWN","DRAIN"]: the
 * first names the base, the others add flags) or one complete-form string. */
uint32_t loom_cli_node_state(const json_t *node);
/* The user name of a uid (the number when it has no name). */
void loom_cli_user_name(int64_t uid, loom_sbuf_t *out);
void loom_cli_group_name(int64_t gid, loom_sbuf_t *out);

#endif

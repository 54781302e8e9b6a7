/*
 * jobscript.c - batch script checks, #SBATCH directives and the --wrap script.
 * See jobscript.h for the rules (CLI_SPEC §0.8, §0.10).
 */
#include "common/jobscript.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define JOBSCRIPT_DEFAULT_PREFIX "#SBATCH"
#define JOBSCRIPT_OLD_PREFIX     "#SLURM"

/* ---- checks ---------------------------------------------------------------- */

static bool jobscript_all_space(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)buf[i]))
            return false;
    return true;
}

static bool jobscript_has_crlf(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n')
            return true;
    return false;
}

int loom_jobscript_check(const char *buf, size_t len, loom_err_t *err)
{
    if (len == 0)
        return loom_errf(err, -LOOM_EPARSE, "Batch script is empty!");
    if (jobscript_all_space(buf, len))
        return loom_errf(err, -LOOM_EPARSE, "Batch script contains only whitespace!");
    if (len < 2 || buf[0] != '#' || buf[1] != '!')
        return loom_errf(err, -LOOM_EPARSE,
                         "This does not look like a batch script.  The first\n"
                         "line must start with #! followed by the path to an interpreter.\n"
                         "For instance: #!/bin/sh");
    if (memchr(buf, '\0', len))
        return loom_errf(err, -LOOM_EPARSE,
                         "The Slurm controller does not allow scripts that\n"
                         "contain a NULL character '\\0'.");
    if (jobscript_has_crlf(buf, len))
        return loom_errf(err, -LOOM_EPARSE,
                         "Batch script contains DOS line breaks (\\r\\n)\n"
                         "instead of expected UNIX line breaks (\\n).");
    return 0;
}

/* ---- directives -------------------------------------------------------------- */

/* One line of the script: [s, s + n), without its '\n' (and cut at a NUL). */
typedef struct jobscript_line {
    const char *s;
    size_t n;
    int lineno;
} jobscript_line_t;

static void jobscript_dirs_push(loom_jobscript_dirs_t *d, const char *arg, size_t n, int lineno)
{
    if (d->args.n + 1 > d->lines_cap) {
        d->lines_cap = d->lines_cap ? 2 * d->lines_cap : 16;
        d->lines = loom_xreallocarray(d->lines, d->lines_cap, sizeof(*d->lines));
    }
    d->lines[d->args.n] = lineno;
    loom_strv_addn(&d->args, arg, n);
}

/* Is the line a command (not blank, not a comment)? */
static bool jobscript_is_command(const jobscript_line_t *ln)
{
    for (size_t i = 0; i < ln->n; i++) {
        if (isspace((unsigned char)ln->s[i]))
            continue;
        return ln->s[i] != '#';
    }
    return false;
}

/*
 * Read one argument starting at *pos (after skipping whitespace). Returns 1 with
 * the argument in arg, 0 at the end of the line (end, comment, or an empty
 * argument, as Slurm stops there too), or -LOOM_EPARSE for an unmatched quote.
 */
static int jobscript_next_arg(const jobscript_line_t *ln, size_t *pos, loom_sbuf_t *arg,
                              char *quote)
{
    size_t i = *pos;
    char q = 0;
    bool esc = false;
    while (i < ln->n && isspace((unsigned char)ln->s[i]))
        i++;
    loom_sbuf_reset(arg);
    for (; i < ln->n && (q || !isspace((unsigned char)ln->s[i])); i++) {
        char c = ln->s[i];
        if (esc) {
            esc = false;
        } else if (c == '\\') {
            esc = true;
            continue;
        } else if (q) {
            if (c == q) {
                q = 0;
                continue;
            }
        } else if (c == '"' || c == '\'') {
            q = c;
            continue;
        } else if (c == '#') {
            break;
        }
        loom_sbuf_addc(arg, c);
    }
    *pos = i;
    if (q) {
        *quote = q;
        return -LOOM_EPARSE;
    }
    return arg->len > 0;
}

static bool jobscript_is_hetjob(const char *arg)
{
    return strcasecmp(arg, "hetjob") == 0 || strcasecmp(arg, "packjob") == 0;
}

/* Split one directive's text (after the prefix) into d. Returns 1 when a
 * heterogeneous-job separator ends the scan, 0 otherwise, <0 on error. */
static int jobscript_split(const jobscript_line_t *ln, size_t start, const char *file,
                           loom_jobscript_dirs_t *d, loom_err_t *err)
{
    loom_sbuf_t arg = LOOM_SBUF_INIT;
    size_t pos = start;
    char quote = 0;
    int rc;
    while ((rc = jobscript_next_arg(ln, &pos, &arg, &quote)) > 0) {
        if (jobscript_is_hetjob(loom_sbuf_str(&arg))) {
            rc = 1;
            break;
        }
        jobscript_dirs_push(d, loom_sbuf_str(&arg), arg.len, ln->lineno);
    }
    loom_sbuf_free(&arg);
    if (rc < 0) {
        size_t skip = start;
        while (skip < ln->n && isspace((unsigned char)ln->s[skip]))
            skip++;
        return loom_errf(err, -LOOM_EPARSE, "%s: line %d: Unmatched `%c` in [%.*s]",
                         file ? file : "script", ln->lineno, quote, (int)(ln->n - skip),
                         ln->s + skip);
    }
    return rc;
}

/* Length of the prefix the line starts with (prefix or #SLURM), else 0. */
static size_t jobscript_prefix_len(const jobscript_line_t *ln, const char *prefix, bool *old)
{
    size_t pl = strlen(prefix);
    size_t ol = strlen(JOBSCRIPT_OLD_PREFIX);
    *old = false;
    if (pl && ln->n >= pl && memcmp(ln->s, prefix, pl) == 0)
        return pl;
    if (strcmp(prefix, JOBSCRIPT_DEFAULT_PREFIX) == 0 && ln->n >= ol &&
        memcmp(ln->s, JOBSCRIPT_OLD_PREFIX, ol) == 0) {
        *old = true;
        return ol;
    }
    return 0;
}

static void jobscript_warn_once(loom_jobscript_dirs_t *d, bool *warned, const char *msg)
{
    if (*warned)
        return;
    *warned = true;
    loom_strv_add(&d->warnings, msg);
}

/* Scan every line into tmp; see jobscript.h for the rules. */
static int jobscript_scan(const char *buf, size_t len, const char *prefix, const char *file,
                          loom_jobscript_dirs_t *tmp, loom_err_t *err)
{
    bool warned_old = false;
    jobscript_line_t ln = {buf, 0, 0};
    for (size_t off = 0; off < len;) {
        const char *nl = memchr(buf + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - buf) : len;
        const char *nul = memchr(buf + off, '\0', end - off);
        ln.s = buf + off;
        ln.n = (nul ? (size_t)(nul - buf) : end) - off;
        ln.lineno++;
        off = end + 1;
        bool old;
        size_t pl = jobscript_prefix_len(&ln, prefix, &old);
        if (!pl) {
            if (jobscript_is_command(&ln))
                break;
            continue;
        }
        if (old)
            jobscript_warn_once(tmp, &warned_old,
                                "Change from #SLURM to #SBATCH in your script and verify the "
                                "options are valid in sbatch");
        int rc = jobscript_split(&ln, pl, file, tmp, err);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            loom_strv_add(&tmp->warnings, "heterogeneous jobs are not supported: directives "
                                          "after the first component are ignored");
            break;
        }
    }
    return 0;
}

int loom_jobscript_directives(const char *buf, size_t len, const char *prefix, const char *file,
                              loom_jobscript_dirs_t *out, loom_err_t *err)
{
    loom_jobscript_dirs_t tmp = LOOM_JOBSCRIPT_DIRS_INIT;
    int rc = jobscript_scan(buf, len, prefix ? prefix : JOBSCRIPT_DEFAULT_PREFIX, file, &tmp, err);
    if (rc < 0) {
        loom_jobscript_dirs_free(&tmp);
        return rc;
    }
    for (size_t i = 0; i < tmp.args.n; i++)
        jobscript_dirs_push(out, tmp.args.v[i], strlen(tmp.args.v[i]), tmp.lines[i]);
    for (size_t i = 0; i < tmp.warnings.n; i++)
        loom_strv_add(&out->warnings, tmp.warnings.v[i]);
    int n = (int)tmp.args.n;
    loom_jobscript_dirs_free(&tmp);
    return n;
}

void loom_jobscript_dirs_free(loom_jobscript_dirs_t *d)
{
    if (!d)
        return;
    loom_strv_free(&d->args);
    loom_strv_free(&d->warnings);
    free(d->lines);
    d->lines = NULL;
    d->lines_cap = 0;
}

char *loom_jobscript_wrap(const char *cmd)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, LOOM_JOBSCRIPT_WRAP_HEAD);
    loom_sbuf_add(&sb, cmd ? cmd : "");
    loom_sbuf_addc(&sb, '\n');
    return loom_sbuf_detach(&sb);
}

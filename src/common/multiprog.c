/*
 * multiprog.c - srun --multi-prog configuration files. See multiprog.h.
 */
#include "common/multiprog.h"

#include "common/rangeset.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Split a line into words: blanks separate, ' and " quote, '#' starts a comment. */
static int multiprog_words(const char *line, loom_strv_t *words, loom_err_t *err)
{
    const char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            return 0;
        loom_sbuf_t w = LOOM_SBUF_INIT;
        char quote = 0;
        for (; *p && (quote || !isspace((unsigned char)*p)); p++) {
            if (quote && *p == quote)
                quote = 0;
            else if (!quote && (*p == '\'' || *p == '"'))
                quote = *p;
            else
                loom_sbuf_addc(&w, *p);
        }
        if (quote) {
            loom_sbuf_free(&w);
            return loom_errf(err, -LOOM_EPARSE, "unterminated quote in multi-prog line '%s'", line);
        }
        loom_strv_take(words, loom_sbuf_detach(&w));
    }
}

/* Offset of rank in the set (its position in ascending order), -1 if absent. */
static long multiprog_offset(const loom_rangeset_t *rs, uint32_t rank)
{
    long off = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (rank >= rs->r[i].lo && rank <= rs->r[i].hi)
            return off + (long)(rank - rs->r[i].lo);
        off += (long)(rs->r[i].hi - rs->r[i].lo) + 1;
    }
    return -1;
}

/* %t and %o in one argument. */
static char *multiprog_subst(const char *arg, uint32_t rank, long offset)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (const char *p = arg; *p; p++) {
        if (p[0] == '%' && p[1] == 't') {
            loom_sbuf_addf(&sb, "%u", (unsigned)rank);
            p++;
        } else if (p[0] == '%' && p[1] == 'o') {
            loom_sbuf_addf(&sb, "%ld", offset);
            p++;
        } else {
            loom_sbuf_addc(&sb, *p);
        }
    }
    return loom_sbuf_detach(&sb);
}

typedef struct multiprog_line {
    loom_strv_t words;
    loom_rangeset_t ranks;
    bool star;
} multiprog_line_t;

static void multiprog_lines_free(multiprog_line_t *lines, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        loom_strv_free(&lines[i].words);
        loom_rangeset_free(&lines[i].ranks);
    }
    free(lines);
}

/* Parse the whole text into lines with their rank sets. */
static int multiprog_parse(const char *text, uint32_t ntasks, multiprog_line_t **out, size_t *count,
                           loom_err_t *err)
{
    loom_strv_t raw = LOOM_STRV_INIT;
    loom_strv_split(&raw, text ? text : "", "\n");
    multiprog_line_t *lines = loom_xcalloc(raw.n + 1, sizeof(*lines));
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < raw.n && rc == 0; i++) {
        multiprog_line_t *l = &lines[n];
        rc = multiprog_words(raw.v[i], &l->words, err);
        if (rc < 0 || l->words.n == 0) {
            loom_strv_free(&l->words);
            continue;
        }
        if (l->words.n < 2)
            rc = loom_errf(err, -LOOM_EPARSE, "multi-prog line without a program: '%s'", raw.v[i]);
        else if (strcmp(l->words.v[0], "*") == 0)
            l->star = true;
        else if (ntasks == 0 || loom_rangeset_parse(l->words.v[0], ntasks - 1, &l->ranks, err) < 0)
            rc =
                loom_errf(err, -LOOM_EPARSE, "invalid task list '%s' in multi-prog file (%u tasks)",
                          l->words.v[0], (unsigned)ntasks);
        n++;
    }
    loom_strv_free(&raw);
    if (rc < 0) {
        multiprog_lines_free(lines, n);
        return rc;
    }
    *out = lines;
    *count = n;
    return 0;
}

/* The line giving rank its program, and its offset there; -1 when none. */
static long multiprog_find(const multiprog_line_t *lines, size_t n, uint32_t rank, long *offset)
{
    for (size_t i = 0; i < n; i++) {
        long off = lines[i].star ? (long)rank : multiprog_offset(&lines[i].ranks, rank);
        if (off >= 0) {
            *offset = off;
            return (long)i;
        }
    }
    return -1;
}

int loom_multiprog_check(const char *text, uint32_t ntasks, loom_err_t *err)
{
    multiprog_line_t *lines = NULL;
    size_t n = 0;
    int rc = multiprog_parse(text, ntasks, &lines, &n, err);
    for (uint32_t r = 0; rc == 0 && r < ntasks; r++) {
        long off, first = multiprog_find(lines, n, r, &off);
        if (first < 0) {
            rc = loom_errf(err, -LOOM_EPARSE, "no program for task %u in the multi-prog file",
                           (unsigned)r);
            break;
        }
        for (size_t i = (size_t)first + 1; i < n; i++)
            if (!lines[i].star && multiprog_offset(&lines[i].ranks, r) >= 0)
                rc = loom_errf(err, -LOOM_EPARSE, "task %u is named twice in the multi-prog file",
                               (unsigned)r);
    }
    if (lines)
        multiprog_lines_free(lines, n);
    return rc;
}

int loom_multiprog_argv(const char *text, uint32_t ntasks, uint32_t rank, loom_strv_t *argv,
                        loom_err_t *err)
{
    multiprog_line_t *lines = NULL;
    size_t n = 0;
    int rc = multiprog_parse(text, ntasks, &lines, &n, err);
    if (rc < 0)
        return rc;
    long off = 0, i = multiprog_find(lines, n, rank, &off);
    if (i < 0)
        rc = loom_errf(err, -LOOM_EPARSE, "no program for task %u in the multi-prog file",
                       (unsigned)rank);
    for (size_t k = 1; i >= 0 && k < lines[i].words.n; k++)
        loom_strv_take(argv, multiprog_subst(lines[i].words.v[k], rank, off));
    multiprog_lines_free(lines, n);
    return rc;
}

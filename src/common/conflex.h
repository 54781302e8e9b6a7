/*
 * conflex.h - the line lexer shared by the slurm.conf and gres.conf parsers
 * (CLI_SPEC §13, §13.1).
 *
 * Turns the text of one configuration file into logical lines of Key=Value
 * pairs and hands each line to a callback, with its file name and line number:
 *
 *  - a line ending in '\' continues on the next one (joined without the
 *    backslash and the newline); the logical line keeps the first line's number;
 *  - '#' starts a comment, except inside double quotes or when escaped as
 *    "\#" (the escape is removed); blank and comment-only lines are skipped;
 *  - pairs are `Key=Value`, blanks allowed around '='; several on a line;
 *    a value in double quotes may hold blanks and '#' (the quotes are removed;
 *    there is no escape inside quotes); "Key=" gives an empty value;
 *  - a line whose first word is "Include" (any case) followed by blanks is an
 *    include directive: it is reported as one pair with key "Include" and the
 *    rest of the line (trimmed) as value, and LOOM_CONFLEX_INCLUDE set. The
 *    caller decides what to do with it (conf.c reads the file, gresconf.c too).
 *
 * Entry point: loom_conflex_buffer(). The lexer never reads files itself.
 * Errors are "<name>:<line>: <message>" in err and the callback's own errors
 * are passed through unchanged. Bounds: LOOM_CONFLEX_MAX_PAIRS pairs per line.
 */
#ifndef LOOM_CONFLEX_H
#define LOOM_CONFLEX_H

#include "common/err.h"

#include <stddef.h>

#define LOOM_CONFLEX_MAX_PAIRS 256

typedef struct loom_conf_pair {
    char *key;   /* as written (case kept) */
    char *value; /* quotes removed; never NULL */
} loom_conf_pair_t;

enum {
    LOOM_CONFLEX_INCLUDE = 1u << 0, /* an Include directive (one pair) */
};

typedef struct loom_conf_line {
    const char *file; /* the name given to the lexer */
    int lineno;       /* 1-based number of the first physical line */
    unsigned flags;
    size_t n;
    loom_conf_pair_t *pairs;
} loom_conf_line_t;

/* Called once per logical line; a negative return stops the lexer and is
 * returned by loom_conflex_buffer (err already filled by the callback). */
typedef int (*loom_conf_line_f)(void *ctx, const loom_conf_line_t *line, loom_err_t *err);

/* Lex text[0..len) (NUL bytes are an error); name is used in messages.
 * Returns 0 or the first error. */
int loom_conflex_buffer(const char *name, const char *text, size_t len, loom_conf_line_f cb,
                        void *ctx, loom_err_t *err);

/* Read a whole file into a NUL-terminated malloc'd buffer (caller frees).
 * Files over max_bytes fail with -LOOM_ETOOBIG. Returns 0 or -errno. */
int loom_conflex_read_file(const char *path, size_t max_bytes, char **text, size_t *len,
                           loom_err_t *err);

#endif

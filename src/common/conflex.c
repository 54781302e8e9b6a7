/*
 * conflex.c - logical lines and Key=Value pairs of slurm.conf-style files.
 * See conflex.h for the syntax; CLI_SPEC §13.
 */
#include "common/conflex.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *name;
    const char *text;
    size_t len;
    size_t pos; /* start of the next physical line */
    int lineno; /* number of the next physical line */
} conflex_src_t;

/* Append one physical line to out without its comment; "\#" becomes '#'.
 * Returns true when the line ends in a continuation backslash (removed). */
static bool conflex_physical(const char *s, size_t n, loom_sbuf_t *out)
{
    bool quoted = false;
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < n && s[i + 1] == '#') {
            loom_sbuf_addc(out, '#');
            i++;
            continue;
        }
        if (c == '#' && !quoted)
            return false; /* a comment ends the logical line */
        if (c == '"')
            quoted = !quoted;
        loom_sbuf_addc(out, c);
    }
    size_t n_out = out->len;
    while (n_out > start && (out->buf[n_out - 1] == ' ' || out->buf[n_out - 1] == '\t' ||
                             out->buf[n_out - 1] == '\r'))
        n_out--;
    bool cont = n_out > start && out->buf[n_out - 1] == '\\';
    if (cont)
        n_out--;
    loom_sbuf_truncate(out, n_out);
    return cont;
}

/* Gather the next logical line into out; returns false at the end of text. */
static bool conflex_next(conflex_src_t *src, loom_sbuf_t *out, int *lineno)
{
    if (src->pos >= src->len)
        return false;
    loom_sbuf_reset(out);
    *lineno = src->lineno;
    bool cont = true;
    while (cont && src->pos < src->len) {
        const char *s = src->text + src->pos;
        const char *nl = memchr(s, '\n', src->len - src->pos);
        size_t n = nl ? (size_t)(nl - s) : src->len - src->pos;
        cont = conflex_physical(s, n, out);
        src->pos += n + (nl ? 1 : 0);
        src->lineno++;
    }
    return true;
}

static const char *conflex_skip_blank(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

static void conflex_free_pairs(loom_conf_line_t *line)
{
    for (size_t i = 0; i < line->n; i++) {
        free(line->pairs[i].key);
        free(line->pairs[i].value);
    }
    free(line->pairs);
    line->pairs = NULL;
    line->n = 0;
}

static void conflex_push(loom_conf_line_t *line, const char *k, size_t kn, const char *v, size_t vn)
{
    line->pairs = loom_xreallocarray(line->pairs, line->n + 1, sizeof(*line->pairs));
    line->pairs[line->n].key = loom_xstrndup(k, kn);
    line->pairs[line->n].value = loom_xstrndup(v, vn);
    line->n++;
}

/* True when p starts a word that holds '=' before any blank: "Key=..." */
static bool conflex_looks_like_pair(const char *p)
{
    if (*p == '"' || *p == '=')
        return false;
    for (; *p && !isspace((unsigned char)*p); p++)
        if (*p == '=')
            return true;
    return false;
}

/* Parse the value that starts at *pp (just after '=' and its blanks). */
static int conflex_value(const loom_conf_line_t *line, const char *key, size_t kn, const char **pp,
                         const char **v, size_t *vn, loom_err_t *err)
{
    const char *p = *pp;
    if (*p == '"') {
        const char *end = strchr(p + 1, '"');
        if (!end)
            return loom_errf(err, -LOOM_EPARSE, "%s:%d: unterminated quoted value for key '%.*s'",
                             line->file, line->lineno, (int)kn, key);
        if (end[1] && !isspace((unsigned char)end[1]))
            return loom_errf(err, -LOOM_EPARSE, "%s:%d: text after the closing quote of key '%.*s'",
                             line->file, line->lineno, (int)kn, key);
        *v = p + 1;
        *vn = (size_t)(end - p - 1);
        *pp = end + 1;
        return 0;
    }
    const char *e = p;
    while (*e && !isspace((unsigned char)*e))
        e++;
    *v = p;
    *vn = (size_t)(e - p);
    *pp = e;
    return 0;
}

/* Split a logical line into pairs. */
static int conflex_pairs(const char *s, loom_conf_line_t *line, loom_err_t *err)
{
    const char *p = conflex_skip_blank(s);
    if (strncasecmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
        const char *v = conflex_skip_blank(p + 7);
        if (!*v)
            return loom_errf(err, -LOOM_EPARSE, "%s:%d: Include needs a file name", line->file,
                             line->lineno);
        conflex_push(line, p, 7, v, strlen(v));
        line->flags |= LOOM_CONFLEX_INCLUDE;
        return 0;
    }
    while (*p) {
        const char *k = p;
        while (*p && !isspace((unsigned char)*p) && *p != '=')
            p++;
        size_t kn = (size_t)(p - k);
        const char *q = conflex_skip_blank(p);
        if (kn == 0 || *q != '=') {
            const char *e = k;
            while (*e && !isspace((unsigned char)*e))
                e++;
            return loom_errf(err, -LOOM_EPARSE, "%s:%d: expected Key=Value, found '%.*s'",
                             line->file, line->lineno, (int)(e - k), k);
        }
        p = q + 1;
        const char *v = p;
        size_t vn = 0;
        bool blank = isspace((unsigned char)*p);
        p = conflex_skip_blank(p);
        /* "Key= Other=x": an empty value, not the value "Other=x". */
        if (!(blank && conflex_looks_like_pair(p))) {
            int rc = conflex_value(line, k, kn, &p, &v, &vn, err);
            if (rc < 0)
                return rc;
        }
        if (line->n >= LOOM_CONFLEX_MAX_PAIRS)
            return loom_errf(err, -LOOM_ETOOBIG, "%s:%d: more than %d Key=Value pairs on a line",
                             line->file, line->lineno, LOOM_CONFLEX_MAX_PAIRS);
        conflex_push(line, k, kn, v, vn);
        p = conflex_skip_blank(p);
    }
    return 0;
}

int loom_conflex_buffer(const char *name, const char *text, size_t len, loom_conf_line_f cb,
                        void *ctx, loom_err_t *err)
{
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int ln = 1;
        for (const char *c = text; c < nul; c++)
            ln += *c == '\n';
        return loom_errf(err, -LOOM_EPARSE, "%s:%d: NUL byte in the file", name, ln);
    }
    conflex_src_t src = {name, text, len, 0, 1};
    loom_sbuf_t buf = LOOM_SBUF_INIT;
    int rc = 0;
    int lineno;
    while (rc == 0 && conflex_next(&src, &buf, &lineno)) {
        loom_conf_line_t line = {name, lineno, 0, 0, NULL};
        rc = conflex_pairs(loom_sbuf_str(&buf), &line, err);
        if (rc == 0 && line.n > 0)
            rc = cb(ctx, &line, err);
        conflex_free_pairs(&line);
    }
    loom_sbuf_free(&buf);
    return rc < 0 ? rc : 0;
}

int loom_conflex_read_file(const char *path, size_t max_bytes, char **text, size_t *len,
                           loom_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return loom_errf(err, -errno, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return loom_errf(err, -EINVAL, "%s: not a regular file", path);
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    char chunk[8192];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
        if (sb.len + (size_t)n > max_bytes) {
            close(fd);
            loom_sbuf_free(&sb);
            return loom_errf(err, -LOOM_ETOOBIG, "%s: file larger than %zu bytes", path, max_bytes);
        }
        loom_sbuf_addn(&sb, chunk, (size_t)n);
    }
    int saved = errno;
    close(fd);
    if (n < 0) {
        loom_sbuf_free(&sb);
        return loom_errf(err, -saved, "cannot read %s: %s", path, strerror(saved));
    }
    *len = sb.len;
    *text = loom_sbuf_detach(&sb);
    return 0;
}

/*
 * sbuf.h - the one string-builder type.
 *
 * A growable NUL-terminated byte string. The buffer is always terminated, so
 * loom_sbuf_str() is valid after any call. Allocation failure aborts (xalloc).
 * Zero-initialise (LOOM_SBUF_INIT) or call loom_sbuf_init(); release with
 * loom_sbuf_free(), or take the string with loom_sbuf_detach() (caller frees).
 */
#ifndef LOOM_SBUF_H
#define LOOM_SBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct loom_sbuf {
    char *buf;  /* NULL until the first write; loom_sbuf_str() hides that */
    size_t len; /* bytes in use, excluding the NUL */
    size_t cap; /* allocated bytes */
} loom_sbuf_t;

#define LOOM_SBUF_INIT                                                                             \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void loom_sbuf_init(loom_sbuf_t *sb);
void loom_sbuf_free(loom_sbuf_t *sb);
/* Empty the string, keeping the allocation. */
void loom_sbuf_reset(loom_sbuf_t *sb);
/* The string; "" when nothing was written. Valid until the next write. */
const char *loom_sbuf_str(const loom_sbuf_t *sb);
/* Take ownership of the string (never NULL); the builder is left empty. */
char *loom_sbuf_detach(loom_sbuf_t *sb);

void loom_sbuf_add(loom_sbuf_t *sb, const char *s);
void loom_sbuf_addn(loom_sbuf_t *sb, const char *s, size_t n);
void loom_sbuf_addc(loom_sbuf_t *sb, char c);
void loom_sbuf_addf(loom_sbuf_t *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void loom_sbuf_vaddf(loom_sbuf_t *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Append s padded with spaces to width (right-justified when right != 0);
 * a value longer than width is cut to width. width 0 means no padding. */
void loom_sbuf_addpad(loom_sbuf_t *sb, const char *s, size_t width, int right);
/* Shorten to len bytes (no-op when already shorter). */
void loom_sbuf_truncate(loom_sbuf_t *sb, size_t len);

#endif

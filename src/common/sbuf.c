/* sbuf.c - the string builder. See sbuf.h. */
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void loom_sbuf_init(loom_sbuf_t *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void loom_sbuf_free(loom_sbuf_t *sb)
{
    if (!sb)
        return;
    free(sb->buf);
    loom_sbuf_init(sb);
}

void loom_sbuf_reset(loom_sbuf_t *sb)
{
    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

const char *loom_sbuf_str(const loom_sbuf_t *sb)
{
    return sb->buf ? sb->buf : "";
}

char *loom_sbuf_detach(loom_sbuf_t *sb)
{
    char *s = sb->buf ? sb->buf : loom_xstrdup("");
    loom_sbuf_init(sb);
    return s;
}

/* Make room for n more bytes plus the NUL; grows geometrically. */
static void sbuf_reserve(loom_sbuf_t *sb, size_t n)
{
    if (sb->len + n + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + n + 1)
        cap *= 2;
    sb->buf = loom_xrealloc(sb->buf, cap);
    sb->cap = cap;
}

void loom_sbuf_addn(loom_sbuf_t *sb, const char *s, size_t n)
{
    sbuf_reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void loom_sbuf_add(loom_sbuf_t *sb, const char *s)
{
    loom_sbuf_addn(sb, s, strlen(s));
}

void loom_sbuf_addc(loom_sbuf_t *sb, char c)
{
    loom_sbuf_addn(sb, &c, 1);
}

void loom_sbuf_vaddf(loom_sbuf_t *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n <= 0)
        return;
    sbuf_reserve(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void loom_sbuf_addf(loom_sbuf_t *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_sbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void loom_sbuf_addpad(loom_sbuf_t *sb, const char *s, size_t width, int right)
{
    size_t n = strlen(s);
    if (width == 0) {
        loom_sbuf_addn(sb, s, n);
        return;
    }
    if (n > width)
        n = width;
    size_t pad = width - n;
    sbuf_reserve(sb, width);
    if (right) {
        memset(sb->buf + sb->len, ' ', pad);
        memcpy(sb->buf + sb->len + pad, s, n);
    } else {
        memcpy(sb->buf + sb->len, s, n);
        memset(sb->buf + sb->len + n, ' ', pad);
    }
    sb->len += width;
    sb->buf[sb->len] = '\0';
}

void loom_sbuf_truncate(loom_sbuf_t *sb, size_t len)
{
    if (len < sb->len) {
        sb->len = len;
        sb->buf[len] = '\0';
    }
}

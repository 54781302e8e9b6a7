/* xalloc.c - allocation that aborts on out-of-memory. See xalloc.h. */
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void xalloc_die(size_t size)
{
    fprintf(stderr, "loom: out of memory allocating %zu bytes\n", size);
    abort();
}

void *loom_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        xalloc_die(size);
    return p;
}

void *loom_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        xalloc_die(n * size);
    return p;
}

void *loom_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        xalloc_die(size);
    return q;
}

void *loom_xreallocarray(void *p, size_t n, size_t size)
{
    void *q = reallocarray(p, n ? n : 1, size ? size : 1);
    if (!q)
        xalloc_die(n * size);
    return q;
}

char *loom_xstrdup(const char *s)
{
    return loom_xstrndup(s, strlen(s));
}

char *loom_xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        xalloc_die(n);
    return p;
}

/*
 * xalloc.h - allocation that aborts on out-of-memory.
 *
 * Daemons and commands treat OOM as fatal (the Redis model): it keeps every
 * caller free of NULL checks for small allocations. Sizes are checked for
 * overflow. Memory from these is freed with free().
 */
#ifndef LOOM_XALLOC_H
#define LOOM_XALLOC_H

#include <stddef.h>

void *loom_xmalloc(size_t size);
void *loom_xcalloc(size_t n, size_t size);
void *loom_xrealloc(void *p, size_t size);
/* realloc to n elements of size bytes, overflow-checked. */
void *loom_xreallocarray(void *p, size_t n, size_t size);
char *loom_xstrdup(const char *s);
char *loom_xstrndup(const char *s, size_t n);

#endif

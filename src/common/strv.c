/* strv.c - vector of owned strings. See strv.h. */
#include "common/strv.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

void loom_strv_take(loom_strv_t *sv, char *s)
{
    if (sv->n + 2 > sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 8;
        sv->v = loom_xreallocarray(sv->v, sv->cap, sizeof(char *));
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

void loom_strv_add(loom_strv_t *sv, const char *s)
{
    loom_strv_take(sv, loom_xstrdup(s));
}

void loom_strv_addn(loom_strv_t *sv, const char *s, size_t n)
{
    loom_strv_take(sv, loom_xstrndup(s, n));
}

void loom_strv_free(loom_strv_t *sv)
{
    if (!sv)
        return;
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

long loom_strv_find(const loom_strv_t *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return (long)i;
    return -1;
}

void loom_strv_split(loom_strv_t *sv, const char *s, const char *seps)
{
    while (*s) {
        size_t skip = strspn(s, seps);
        s += skip;
        size_t n = strcspn(s, seps);
        if (n)
            loom_strv_addn(sv, s, n);
        s += n;
    }
}

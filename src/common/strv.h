/*
 * strv.h - a growable vector of owned strings (argv, env, name lists).
 *
 * The array is kept NULL-terminated so loom_strv_t.v can be passed as an argv
 * or envp. Strings added are copied; loom_strv_free() frees them all.
 */
#ifndef LOOM_STRV_H
#define LOOM_STRV_H

#include <stddef.h>

typedef struct loom_strv {
    char **v; /* NULL-terminated once anything was added; may be NULL when empty */
    size_t n;
    size_t cap;
} loom_strv_t;

#define LOOM_STRV_INIT                                                                             \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void loom_strv_add(loom_strv_t *sv, const char *s);
void loom_strv_addn(loom_strv_t *sv, const char *s, size_t n);
/* Take ownership of s (which must come from malloc). */
void loom_strv_take(loom_strv_t *sv, char *s);
void loom_strv_free(loom_strv_t *sv);
/* Index of s or -1. */
long loom_strv_find(const loom_strv_t *sv, const char *s);
/* Split s on any of the characters in seps, skipping empty fields. */
void loom_strv_split(loom_strv_t *sv, const char *s, const char *seps);

#endif

/*
 * fuzz_hostlist.c - hostlist expressions (src/common/hostlist.c, CLI_SPEC §0.4).
 *
 * The input is an expression. When it parses: the ranged form (list order),
 * the ranged form of the sorted list and the sorted+uniq compression must
 * each expand back to exactly the names they came from (abort() if not);
 * a failure must say why. The input's lines are also pushed as literal names
 * (any bytes) and sorted, uniq'd and compressed, for crashes only.
 */
#include "common/hostlist.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Round trips cost several copies of the list: keep the big ones quick. */
#define FUZZ_ROUND_TRIP_MAX 20000

/* Abort unless the names of a and b are equal, in order. */
static void fuzz_same_names(const loom_hostlist_t *a, const loom_hostlist_t *b)
{
    if (loom_hostlist_count(a) != loom_hostlist_count(b))
        abort();
    for (size_t i = 0; i < loom_hostlist_count(a); i++)
        if (strcmp(loom_hostlist_nth(a, i), loom_hostlist_nth(b, i)) != 0)
            abort();
}

/* Expanding text must succeed and give the names of want. */
static void fuzz_expands_to(const char *text, const loom_hostlist_t *want)
{
    loom_hostlist_t *back = NULL;
    if (loom_hostlist_parse(text, &back, NULL) < 0)
        abort();
    fuzz_same_names(want, back);
    loom_hostlist_destroy(back);
}

static void fuzz_round_trips(loom_hostlist_t *hl)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_hostlist_ranged(hl, &sb);
    fuzz_expands_to(loom_sbuf_str(&sb), hl);

    loom_hostlist_sort(hl);
    loom_sbuf_reset(&sb);
    loom_hostlist_ranged(hl, &sb);
    fuzz_expands_to(loom_sbuf_str(&sb), hl);
    char *once = loom_sbuf_detach(&sb);
    loom_hostlist_sort(hl); /* sorting a sorted list changes nothing */
    loom_hostlist_ranged(hl, &sb);
    if (strcmp(once, loom_sbuf_str(&sb)) != 0)
        abort();
    free(once);

    char *c = loom_hostlist_compress_sorted(hl);
    loom_hostlist_uniq(hl);
    fuzz_expands_to(c, hl);
    for (size_t i = 1; i < loom_hostlist_count(hl); i++) /* uniq leaves no duplicates */
        if (strcmp(loom_hostlist_nth(hl, i - 1), loom_hostlist_nth(hl, i)) == 0)
            abort();
    free(c);
    loom_sbuf_free(&sb);
}

/* Literal names: every line of the input, whatever its bytes. */
static void fuzz_literals(const char *s)
{
    loom_hostlist_t *hl = loom_hostlist_create();
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = loom_xstrndup(p, len);
        loom_hostlist_push(hl, line);
        if (loom_hostlist_find(hl, line) < 0)
            abort();
        free(line);
        p += len + (nl ? 1 : 0);
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_hostlist_ranged(hl, &sb);
    char *c = loom_hostlist_compress_sorted(hl);
    loom_hostlist_uniq(hl);
    free(c);
    loom_sbuf_free(&sb);
    loom_hostlist_destroy(hl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = loom_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    loom_hostlist_t *hl = NULL;
    loom_err_t err = {0};
    int rc = loom_hostlist_parse(s, &hl, &err);
    if (rc >= 0) {
        if ((size_t)rc != loom_hostlist_count(hl))
            abort();
        if (rc <= FUZZ_ROUND_TRIP_MAX)
            fuzz_round_trips(hl);
        loom_hostlist_destroy(hl);
    } else if (err.msg[0] == '\0' || hl != NULL) {
        abort();
    }
    fuzz_literals(s);
    free(s);
    return 0;
}

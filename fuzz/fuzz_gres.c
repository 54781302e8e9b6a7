/*
 * fuzz_gres.c - GRES and TRES strings (src/common/gres.c, CLI_SPEC §0.6).
 *
 * The input goes to every parser (--gres, node Gres=, --gpus, TRES). For each
 * list accepted, every printed form must parse back to the same list:
 * parse(format(parse(x))) == parse(x), else abort().
 */
#include "common/gres.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_gres_check(const loom_gres_list_t *l, int node)
{
    loom_gres_list_t back = LOOM_GRES_LIST_INIT;
    loom_tres_list_t t1 = LOOM_TRES_LIST_INIT, t2 = LOOM_TRES_LIST_INIT;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (l->n == 0)
        return;
    loom_gres_fmt(l, &sb);
    int rc = node ? loom_gres_parse_node(loom_sbuf_str(&sb), &back, NULL)
                  : loom_gres_parse(loom_sbuf_str(&sb), &back, NULL);
    if (rc != 0 || !loom_gres_list_equal(l, &back))
        abort();
    /* Both TRES prints read back as the same TRES list. */
    loom_sbuf_reset(&sb);
    loom_gres_fmt_tres(l, &sb);
    if (loom_tres_parse(loom_sbuf_str(&sb), &t1, NULL) != 0 || t1.n != l->n)
        abort();
    loom_sbuf_reset(&sb);
    loom_gres_fmt_tres_per(l, &sb);
    if (loom_tres_parse(loom_sbuf_str(&sb), &t2, NULL) != 0 || !loom_tres_list_equal(&t1, &t2))
        abort();
    loom_tres_add_gres(&t2, l);
    loom_sbuf_free(&sb);
    loom_gres_list_free(&back);
    loom_tres_list_free(&t1);
    loom_tres_list_free(&t2);
}

static void fuzz_gres_tres(const char *s)
{
    loom_tres_list_t l = LOOM_TRES_LIST_INIT, back = LOOM_TRES_LIST_INIT;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (loom_tres_parse(s, &l, NULL) != 0)
        return;
    loom_tres_fmt(&l, &sb);
    if (loom_tres_parse(loom_sbuf_str(&sb), &back, NULL) != 0 || !loom_tres_list_equal(&l, &back))
        abort();
    loom_sbuf_reset(&sb);
    loom_tres_fmt_per(&l, &sb);
    if (loom_tres_parse(loom_sbuf_str(&sb), &back, NULL) != 0 || !loom_tres_list_equal(&l, &back))
        abort();
    loom_sbuf_free(&sb);
    loom_tres_list_free(&l);
    loom_tres_list_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = loom_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    if (loom_gres_parse(s, &l, NULL) == 0)
        fuzz_gres_check(&l, 0);
    if (loom_gres_parse_node(s, &l, NULL) == 0)
        fuzz_gres_check(&l, 1);
    if (loom_gres_parse_gpus(s, &l, NULL) == 0)
        fuzz_gres_check(&l, 0);
    loom_gres_list_free(&l);
    fuzz_gres_tres(s);
    free(s);
    return 0;
}

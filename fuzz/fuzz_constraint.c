/*
 * fuzz_constraint.c - node feature constraints (src/common/constraint.c,
 * CLI_SPEC §0.7).
 *
 * Parses the input; when accepted, the canonical print must parse back to an
 * equal tree, and matching against the features it names (all of them, and
 * none) must run (abort() on any mismatch).
 */
#include "common/constraint.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = loom_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    loom_constraint_t *c = NULL, *back = NULL;
    loom_err_t err;
    if (loom_constraint_parse(s, &c, &err) == 0) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_strv_t names = LOOM_STRV_INIT;
        loom_constraint_fmt(c, &sb);
        if (loom_constraint_parse(loom_sbuf_str(&sb), &back, NULL) != 0 ||
            !loom_constraint_equal(c, back))
            abort();
        loom_constraint_features(c, &names);
        if (names.n == 0)
            abort();
        /* A node with every feature named qualifies; one with none does not. */
        if (!loom_constraint_match_node(c, (const char *const *)names.v, names.n) ||
            loom_constraint_match_node(c, NULL, 0))
            abort();
        (void)loom_constraint_bracket(c);
        loom_strv_free(&names);
        loom_sbuf_free(&sb);
        loom_constraint_free(c);
        loom_constraint_free(back);
    } else if (err.msg[0] == '\0') {
        abort();
    }
    free(s);
    return 0;
}

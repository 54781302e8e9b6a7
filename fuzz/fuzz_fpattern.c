/*
 * fuzz_fpattern.c - output-file patterns (src/common/fpattern.c, CLI_SPEC §1.1).
 *
 * The input is a pattern (up to the first newline: the --output pattern;
 * after it: the --error pattern). Both are expanded for a plain job and for
 * an array step; the results must be NUL-free strings, absolute whenever the
 * work dir is, and a pattern without '%' or '\' must come back unchanged
 * after the work dir (abort() if not).
 */
#include "common/fpattern.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void fuzz_fpattern_one(const char *pat, const loom_fpattern_ctx_t *ctx)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_fpattern_expand(pat, ctx, &sb);
    if (strlen(loom_sbuf_str(&sb)) != sb.len)
        abort();
    if (loom_sbuf_str(&sb)[0] != '/')
        abort(); /* work dir is absolute here */
    if (!strpbrk(pat, "%\\") && strcasecmp(pat, "none") != 0) {
        const char *tail = pat[0] == '/' ? loom_sbuf_str(&sb) : loom_sbuf_str(&sb) + 5;
        if (strcmp(tail, pat) != 0)
            abort();
    }
    loom_sbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = loom_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char *err = strchr(text, '\n');
    if (err)
        *err++ = '\0';
    loom_fpattern_ctx_t plain, array;
    loom_fpattern_ctx_init(&plain);
    plain.job_id = 128;
    plain.job_name = "name with %j";
    plain.user = "u";
    plain.node_name = "n1";
    plain.work_dir = "/w/x";
    array = plain;
    array.array_job_id = 120;
    array.array_task_id = 4000000000u;
    array.step_id = 3;
    array.task_id = 17;
    array.restart_cnt = 2;
    fuzz_fpattern_one(text, &plain);
    fuzz_fpattern_one(text, &array);
    char *o = NULL, *e = NULL;
    loom_fpattern_stdio(text, err, true, &array, &o, &e);
    if (!o || (e && strcmp(o, e) == 0))
        abort();
    free(o);
    free(e);
    free(text);
    return 0;
}

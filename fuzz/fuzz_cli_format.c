/*
 * fuzz_cli_format.c - the column-format parser and renderer of the commands
 * (src/cli/cli_format.c): squeue/sinfo -o and -O strings, SQUEUE_FORMAT.
 *
 * Input: the first byte picks the syntax (even: -o, odd: -O) and whether '#'
 * widths are allowed; the rest is the format text. Every parse must render a
 * header and a row without crashing, and free everything.
 */
#include "cli/cli_format.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fuzz_get_a(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    loom_sbuf_add(out, (const char *)rec);
    return 0;
}

static int fuzz_get_b(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    loom_sbuf_add(out, "1-02:04:00");
    return LOOM_FMT_NOCUT;
}

static const loom_fmt_col_t fuzz_cols[] = {
    {'i', "JobID", "JOBID", 0, fuzz_get_a, 0},
    {'M', "TimeUsed", "TIME", 0, fuzz_get_b, 0},
    {'N', "NodeList", "NODELIST", 5, fuzz_get_a, LOOM_FMT_HDR_NOCUT},
    {0, "Extra", "EXTRA", 0, fuzz_get_b, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *spec = malloc(size);
    memcpy(spec, data + 1, size - 1);
    spec[size - 1] = '\0';
    loom_fmt_t f = LOOM_FMT_INIT;
    loom_strv_t bad = LOOM_STRV_INIT;
    size_t n = sizeof(fuzz_cols) / sizeof(fuzz_cols[0]);
    if (data[0] & 1)
        loom_fmt_parse_long(spec, fuzz_cols, n, &f, &bad);
    else
        loom_fmt_parse(spec, fuzz_cols, n, (data[0] & 2) ? LOOM_FMT_AUTO : 0, &f, &bad);
    loom_fmt_set_auto(&f, fuzz_get_a, 12);
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_fmt_header(&f, &out);
    loom_fmt_row(&f, NULL, "averyveryverylongvalue", &out);
    loom_sbuf_free(&out);
    loom_strv_free(&bad);
    loom_fmt_free(&f);
    free(spec);
    return 0;
}

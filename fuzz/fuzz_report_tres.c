/*
 * fuzz_report_tres.c - sreport's TRES arithmetic (src/dbd/store_report.c):
 * TRES texts as jobs and capacity records store them, scaled by times up to
 * the int64 limit, and the utilization split of their sums.
 *
 * The input's first line is one TRES text, the second another; both are
 * parsed with several multipliers into one object (sums saturate instead of
 * overflowing), then every name's values feed loom_report_finish, whose
 * parts must be non-negative and add up to Reported (abort() if not).
 */
#include "dbd/store_report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_report_split(const json_t *a, const json_t *b)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)a, name, v)
    {
        int64_t x = json_integer_value(v), y = json_integer_value(json_object_get(b, name));
        loom_report_util_t u = {.reported = x, .alloc = y, .down = y / 3, .planned = x / 2};
        loom_report_finish(&u);
        if (u.alloc < 0 || u.down < 0 || u.pdown < 0 || u.planned < 0 || u.idle < 0 || u.over < 0)
            abort();
        if (u.alloc + u.down + u.pdown + u.planned + u.idle != u.reported)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    char *second = strchr(s, '\n');
    if (second)
        *second++ = '\0';
    static const int64_t mults[] = {1, 3600, 86400 * 365, INT64_MAX / 1000, INT64_MAX, 0, -5};
    json_t *a = json_object(), *b = json_object();
    for (size_t i = 0; i < sizeof(mults) / sizeof(mults[0]); i++) {
        loom_report_tres_parse(s, mults[i], a);
        loom_report_tres_parse(second, mults[i], b);
    }
    fuzz_report_split(a, b);
    fuzz_report_split(b, a);
    if (loom_report_overlap(-(int64_t)size, (int64_t)size, 0, INT64_MAX) < 0)
        abort();
    json_decref(a);
    json_decref(b);
    free(s);
    return 0;
}

/*
 * fuzz_time.c - time limits and dates (src/common/timefmt.c, CLI_SPEC §0.1, §0.2).
 *
 * Feeds the input to both limit parsers and both date parsers, prints every
 * result, and checks that what the formatters print parses back to the same
 * value (abort() if not).
 */
#include "common/sbuf.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 2026-11-21T13:06:27 UTC: a fixed "now" keeps runs reproducible. */
#define FUZZ_TIME_NOW ((time_t)1795266387)

static void fuzz_time_limit(const char *s)
{
    int64_t secs, mins, back;
    if (loom_time_parse_secs(s, &secs, NULL) != 0) {
        if (loom_time_parse_mins(s, &mins, NULL) == 0)
            abort();
        return;
    }
    if (loom_time_parse_mins(s, &mins, NULL) != 0)
        abort();
    if (secs != LOOM_TIME_INFINITE && (secs < 0 || mins * 60 < secs || mins * 60 - secs >= 60))
        abort();
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_time_fmt_limit(secs, &sb);
    if (loom_time_parse_secs(loom_sbuf_str(&sb), &back, NULL) != 0 || back != secs)
        abort();
    loom_sbuf_reset(&sb);
    loom_time_fmt_elapsed(secs, &sb);
    if (loom_time_parse_secs(loom_sbuf_str(&sb), &back, NULL) != 0 || back != secs)
        abort();
    loom_sbuf_free(&sb);
}

static void fuzz_time_date(const char *s, int past)
{
    time_t t, back;
    int rc = past ? loom_date_parse_past(s, FUZZ_TIME_NOW, &t, NULL)
                  : loom_date_parse(s, FUZZ_TIME_NOW, &t, NULL);
    if (rc != 0)
        return;
    if (t <= 0)
        abort();
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_date_fmt(t, "Unknown", &sb);
    if (loom_date_parse(loom_sbuf_str(&sb), FUZZ_TIME_NOW, &back, NULL) != 0 || back != t)
        abort();
    loom_sbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = loom_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    setenv("TZ", "UTC", 0);
    fuzz_time_limit(s);
    fuzz_time_date(s, 0);
    fuzz_time_date(s, 1);
    free(s);
    return 0;
}

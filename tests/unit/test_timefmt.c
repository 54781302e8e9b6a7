/* test_timefmt.c - time limits, elapsed times and dates (CLI_SPEC §0.1, §0.2).
 * Expected values were checked against Slurm 22.05 (time_str2secs/_mins,
 * parse_time) where the two agree; the differences are marked. Runs with TZ=UTC. */
#include "common/err.h"
#include "common/sbuf.h"
#include "common/timefmt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* 2026-11-21T13:06:27 UTC, a Saturday. */
static const time_t NOW = 1795266387;

static void test_time_parse_ok(void **state)
{
    static const struct {
        const char *in;
        int64_t secs, mins;
    } cases[] = {
        {"0", 0, 0},
        {"1", 60, 1},
        {"90", 5400, 90},
        {"1:30", 90, 2}, /* M:S, seconds round up for minutes */
        {"1:0", 60, 1},
        {"0:1", 1, 1},
        {"0:0", 0, 0},
        {"0:59", 59, 1},
        {"0:60", 60, 1},
        {"1:61", 121, 3}, /* fields are not range-checked, as in Slurm */
        {"90:00", 5400, 90},
        {"1:2:3", 3723, 63},
        {"00:00:01", 1, 1},
        {"1:99:0", 9540, 159},
        {"1:2:61", 3781, 64},
        {"1-0", 86400, 1440},
        {"1-2", 93600, 1560},
        {"1-2:3", 93780, 1563},
        {"1-2:3:4", 93784, 1564},
        {"1-25", 176400, 2940},
        {"0-0", 0, 0},
        {"0-0:0:1", 1, 1},
        {"007", 420, 7},
        {"-1", LOOM_TIME_INFINITE, LOOM_TIME_INFINITE},
        {"INFINITE", LOOM_TIME_INFINITE, LOOM_TIME_INFINITE},
        {"infinite", LOOM_TIME_INFINITE, LOOM_TIME_INFINITE},
        {"UNLIMITED", LOOM_TIME_INFINITE, LOOM_TIME_INFINITE},
        {"Unlimited", LOOM_TIME_INFINITE, LOOM_TIME_INFINITE},
        {"2147483645", 2147483645LL * 60, 2147483645LL},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        int64_t secs = 12345, mins = 12345;
        loom_err_t err;
        loom_err_clear(&err);
        assert_int_equal(loom_time_parse_secs(cases[i].in, &secs, &err), 0);
        assert_int_equal(loom_time_parse_mins(cases[i].in, &mins, &err), 0);
        if (secs != cases[i].secs || mins != cases[i].mins)
            fail_msg("'%s': got %lld s / %lld min", cases[i].in, (long long)secs, (long long)mins);
        assert_int_equal(err.code, 0);
    }
}

static void test_time_parse_errors(void **state)
{
    static const char *const bad[] = {
        "",           "1:2:3:4",     "1-2:3:4:5",
        "-2",         "-5",          "-01",
        "+5",         " 5",          "5 ",
        "5x",         "1.5",         "1-",
        "1-2-3",      "-1-2",        "1::2",
        ":5",         "5:",          "1-:2",
        "inf",        "INF",         "unlim",
        "forever",    "1h",          "1-2:3:",
        "2147483646", "99999999999", "99999999999999999999999",
        "1-2:3:4x",   "1:2:3 ",      "\t1",
        "0x10",       "1e3",
    };
    for (size_t i = 0; i < N_ELEMS(bad); i++) {
        int64_t secs = 777, mins = 777;
        loom_err_t err;
        loom_err_clear(&err);
        int rc = loom_time_parse_secs(bad[i], &secs, &err);
        if (rc >= 0)
            fail_msg("'%s' accepted as %lld s", bad[i], (long long)secs);
        assert_int_equal(rc, -LOOM_EINVAL_TIME);
        assert_int_equal(secs, 777); /* untouched on failure */
        assert_non_null(strstr(err.msg, bad[i]));
        assert_int_equal(loom_time_parse_mins(bad[i], &mins, NULL), -LOOM_EINVAL_TIME);
        assert_int_equal(mins, 777);
    }
}

static void test_time_parse_message(void **state)
{
    loom_err_t err;
    int64_t v;
    loom_time_parse_secs("1:2:3:4", &v, &err);
    assert_string_equal(err.msg, "Invalid time specification '1:2:3:4'");
    loom_time_parse_mins("99999999999", &v, &err);
    assert_string_equal(err.msg, "Time specification '99999999999' is too large");
}

static void test_time_fmt(void **state)
{
    static const struct {
        int64_t secs;
        const char *limit, *elapsed;
    } cases[] = {
        {0, "00:00:00", "0:00"},
        {1, "00:00:01", "0:01"},
        {59, "00:00:59", "0:59"},
        {60, "00:01:00", "1:00"},
        {307, "00:05:07", "5:07"},
        {3599, "00:59:59", "59:59"},
        {3600, "01:00:00", "1:00:00"},
        {3723, "01:02:03", "1:02:03"},
        {86399, "23:59:59", "23:59:59"},
        {86400, "1-00:00:00", "1-00:00:00"},
        {172800, "2-00:00:00", "2-00:00:00"},
        {93784, "1-02:03:04", "1-02:03:04"},
        {3 * 86400 + 600, "3-00:10:00", "3-00:10:00"},
        {365LL * 86400, "365-00:00:00", "365-00:00:00"},
        {LOOM_TIME_INFINITE, "UNLIMITED", "UNLIMITED"},
        {LOOM_TIME_NOT_SET, "NOT_SET", "NOT_SET"},
        {-7, "INVALID", "INVALID"},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
        loom_time_fmt_limit(cases[i].secs, &a);
        loom_time_fmt_elapsed(cases[i].secs, &b);
        assert_string_equal(loom_sbuf_str(&a), cases[i].limit);
        assert_string_equal(loom_sbuf_str(&b), cases[i].elapsed);
        loom_sbuf_free(&a);
        loom_sbuf_free(&b);
    }
}

/* Whatever the limit formatter prints parses back to the same seconds. */
static void test_time_fmt_round_trip(void **state)
{
    static const int64_t vals[] = {0, 1, 59, 61, 3600, 3661, 86399, 86400, 90061, 8640000};
    for (size_t i = 0; i < N_ELEMS(vals); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        int64_t back = -5;
        loom_time_fmt_limit(vals[i], &sb);
        assert_int_equal(loom_time_parse_secs(loom_sbuf_str(&sb), &back, NULL), 0);
        assert_int_equal(back, vals[i]);
        loom_sbuf_reset(&sb);
        loom_time_fmt_elapsed(vals[i], &sb);
        assert_int_equal(loom_time_parse_secs(loom_sbuf_str(&sb), &back, NULL), 0);
        assert_int_equal(back, vals[i]);
        loom_sbuf_free(&sb);
    }
}

typedef struct {
    const char *in;
    const char *future; /* loom_date_parse (--begin) */
    const char *past;   /* loom_date_parse_past (sacct) */
} date_case_t;

static void check_date(const date_case_t *c)
{
    for (int past = 0; past <= 1; past++) {
        time_t t = 0;
        loom_err_t err;
        loom_err_clear(&err);
        int rc = past ? loom_date_parse_past(c->in, NOW, &t, &err)
                      : loom_date_parse(c->in, NOW, &t, &err);
        if (rc != 0)
            fail_msg("'%s' (past=%d): %s", c->in, past, err.msg);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_date_fmt(t, "Unknown", &sb);
        const char *want = past ? c->past : c->future;
        if (strcmp(loom_sbuf_str(&sb), want) != 0)
            fail_msg("'%s' (past=%d): got %s, want %s", c->in, past, loom_sbuf_str(&sb), want);
        loom_sbuf_free(&sb);
    }
}

/* Results as Slurm 22.05 gives them for the same "now" (parse_time past=0/1). */
static void test_date_parse_forms(void **state)
{
    static const date_case_t cases[] = {
        {"now", "2026-11-21T13:06:27", "2026-11-21T13:06:27"},
        {"NOW", "2026-11-21T13:06:27", "2026-11-21T13:06:27"},
        {"today", "2026-11-21T00:00:00", "2026-11-21T00:00:00"},
        {"tomorrow", "2026-11-22T00:00:00", "2026-11-22T00:00:00"},
        {"Tomorrow", "2026-11-22T00:00:00", "2026-11-22T00:00:00"}, /* Slurm: lower case only */
        {"midnight", "2026-11-22T00:00:00", "2026-11-21T00:00:00"},
        {"MIDNIGHT", "2026-11-22T00:00:00", "2026-11-21T00:00:00"},
        {"noon", "2026-11-22T12:00:00", "2026-11-21T12:00:00"},
        {"elevenses", "2026-11-22T11:00:00", "2026-11-21T11:00:00"}, /* not in 22.05 */
        {"fika", "2026-11-21T15:00:00", "2026-11-21T15:00:00"},
        {"teatime", "2026-11-21T16:00:00", "2026-11-21T16:00:00"},
        {"10:00", "2026-11-22T10:00:00", "2026-11-21T10:00:00"},
        {"23:59", "2026-11-21T23:59:00", "2026-11-21T23:59:00"},
        {"10:00:30", "2026-11-22T10:00:30", "2026-11-21T10:00:30"},
        {"13:06:27", "2026-11-21T13:06:27", "2026-11-21T13:06:27"},
        {"13:06:26", "2026-11-22T13:06:26", "2026-11-21T13:06:26"},
        {"1:00", "2026-11-22T01:00:00", "2026-11-21T01:00:00"},
        {"0:00", "2026-11-22T00:00:00", "2026-11-21T00:00:00"},
        {"10:00AM", "2026-11-22T10:00:00", "2026-11-21T10:00:00"},
        {"10:00pm", "2026-11-21T22:00:00", "2026-11-21T22:00:00"},
        {"10:00:00PM", "2026-11-21T22:00:00", "2026-11-21T22:00:00"},
        {"10:00 AM", "2026-11-22T10:00:00", "2026-11-21T10:00:00"},
        {"12:00AM", "2026-11-22T00:00:00", "2026-11-21T00:00:00"},
        {"12:30:00am", "2026-11-22T00:30:00", "2026-11-21T00:30:00"},
        {"12:00PM", "2026-11-22T12:00:00", "2026-11-21T12:00:00"},
        {"0101", "2027-01-01T00:00:00", "2026-01-01T00:00:00"},
        {"1231", "2026-12-31T00:00:00", "2025-12-31T00:00:00"},
        {"1121", "2027-11-21T00:00:00", "2026-11-21T00:00:00"},
        {"1122", "2026-11-22T00:00:00", "2026-11-22T00:00:00"}, /* past: same month kept */
        {"1130", "2026-11-30T00:00:00", "2026-11-30T00:00:00"},
        {"1201", "2026-12-01T00:00:00", "2025-12-01T00:00:00"},
        {"1120", "2027-11-20T00:00:00", "2026-11-20T00:00:00"},
        {"1101", "2027-11-01T00:00:00", "2026-11-01T00:00:00"},
        {"1120 23:00", "2027-11-20T23:00:00", "2026-11-20T23:00:00"},
        {"1121 13:00", "2027-11-21T13:00:00", "2026-11-21T13:00:00"},
        {"1121 14:00", "2026-11-21T14:00:00", "2026-11-21T14:00:00"},
        {"010126", "2026-01-01T00:00:00", "2026-01-01T00:00:00"},
        {"010203", "2003-01-02T00:00:00", "2003-01-02T00:00:00"},
        {"010199", "2099-01-01T00:00:00", "2099-01-01T00:00:00"},
        {"010100", "2027-01-01T00:00:00", "2026-01-01T00:00:00"}, /* YY 00: no year */
        {"12/31/00", "2026-12-31T00:00:00", "2025-12-31T00:00:00"},
        {"2000-01-01", "2000-01-01T00:00:00", "2000-01-01T00:00:00"},
        {"12/31", "2026-12-31T00:00:00", "2025-12-31T00:00:00"},
        {"1/2", "2027-01-02T00:00:00", "2026-01-02T00:00:00"},
        {"01/2", "2027-01-02T00:00:00", "2026-01-02T00:00:00"},
        {"12/31/26", "2026-12-31T00:00:00", "2026-12-31T00:00:00"},
        {"12.31", "2026-12-31T00:00:00", "2025-12-31T00:00:00"},
        {"12.31.26", "2026-12-31T00:00:00", "2026-12-31T00:00:00"},
        {"2026-01-01", "2026-01-01T00:00:00", "2026-01-01T00:00:00"},
        {"2026-01-01T10:00", "2026-01-01T10:00:00", "2026-01-01T10:00:00"},
        {"2026-01-01T10:00:05", "2026-01-01T10:00:05", "2026-01-01T10:00:05"},
        {"2026-01-01T1:00", "2026-01-01T01:00:00", "2026-01-01T01:00:00"},
        {"2028-02-29", "2028-02-29T00:00:00", "2028-02-29T00:00:00"},
        {"2100-01-01", "2100-01-01T00:00:00", "2100-01-01T00:00:00"},
        {"9999-12-31T23:59:59", "9999-12-31T23:59:59", "9999-12-31T23:59:59"},
        {"1970-01-01T00:00:01", "1970-01-01T00:00:01", "1970-01-01T00:00:01"},
        {"1231 10:00", "2026-12-31T10:00:00", "2025-12-31T10:00:00"},
        {"10:00 1231", "2026-12-31T10:00:00", "2025-12-31T10:00:00"},
        {"1231T10:00", "2026-12-31T10:00:00", "2025-12-31T10:00:00"},
        {"1121 23:00", "2026-11-21T23:00:00", "2026-11-21T23:00:00"},
        {"1121 01:00", "2027-11-21T01:00:00", "2026-11-21T01:00:00"},
        {"2026-01-01 10:00", "2026-01-01T10:00:00", "2026-01-01T10:00:00"},
        {"midnight 1231", "2026-12-31T00:00:00", "2025-12-31T00:00:00"},
        {"noon 1231", "2026-12-31T12:00:00", "2025-12-31T12:00:00"},
        {"fika tomorrow", "2026-11-22T15:00:00", "2026-11-22T15:00:00"},
        {"tomorrow 10:00", "2026-11-22T10:00:00", "2026-11-22T10:00:00"},
        {"10:00 tomorrow", "2026-11-22T10:00:00", "2026-11-22T10:00:00"},
        {"today 23:00", "2026-11-21T23:00:00", "2026-11-21T23:00:00"},
        {"today 01:00", "2026-11-21T01:00:00", "2026-11-21T01:00:00"},
        {" 0101 ", "2027-01-01T00:00:00", "2026-01-01T00:00:00"},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++)
        check_date(&cases[i]);
}

static void test_date_parse_now_offsets(void **state)
{
    static const struct {
        const char *in;
        int64_t delta;
    } cases[] = {
        {"now+0", 0},
        {"now-0", 0},
        {"now+1", 1},
        {"now+01", 1},
        {"now+60", 60},
        {"now-1", -1},
        {"now+1second", 1},
        {"now+2seconds", 2},
        {"now+1minute", 60},
        {"now+3minutes", 180},
        {"now+1hour", 3600},
        {"now+2hours", 7200},
        {"now+1day", 86400},
        {"now+1days", 86400},
        {"now-1days", -86400},
        {"now+1week", 604800},
        {"now+2weeks", 1209600},
        {"NOW+1DAYS", 86400},
        {"now+1 hours", 3600},
        {"now + 1", 1},
        {"now - 2 days", -172800},
        {"now+1day ", 86400},
        {"now", 0},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        time_t t = 0, tp = 0;
        assert_int_equal(loom_date_parse(cases[i].in, NOW, &t, NULL), 0);
        assert_int_equal(loom_date_parse_past(cases[i].in, NOW, &tp, NULL), 0);
        if (t != NOW + cases[i].delta || tp != t)
            fail_msg("'%s': got %+lld", cases[i].in, (long long)(t - NOW));
    }
}

static void test_date_parse_errors(void **state)
{
    static const char *const bad[] = {
        "",
        "   ",
        "garbage",
        "now+",
        "now+x",
        "now+1s",
        "now+1sec",
        "now+1m",
        "now+1min",
        "now+1h",
        "now+1hr",
        "now+1d",
        "now+1w",
        "now+1+2",
        "now+-1",
        "now--1",
        "now+1.5",
        "now 1231",
        "now1",
        "nowx",
        "13:00PM",
        "24:00",
        "10:60",
        "10:00:60",
        "10:5",
        "1:5",
        "10:00:5",
        "100:00",
        "10",
        "10AM",
        "10:00a",
        "10:00 A",
        "noonx",
        "20261231",
        "1700000000",
        "today+1",
        "2026-1-1",
        "2026-13-01",
        "2026-00-10",
        "2026-01-00",
        "2026-01-32",
        "2026-02-30",
        "2027-02-29",
        "2026-04-31",
        "2026-01-01T",
        "2026-01-01T10",
        "2026-01-01T25:00",
        "2026-01-01T10:00:05Z",
        "01/02/2026",
        "01.02.3",
        "1301",
        "0132",
        "0230",
        "13/01",
        "1/2/3",
        "1/2.26",
        "12-31",
        "1231 1231",
        "10:00 11:00",
        "noon 10:00",
        "today tomorrow",
        "1231T",
        "1231Tnoon",
        "1969-12-31",
        "1970-01-01",
        "0000-01-01",
        "now+99999999999999",
        "tomorrow1",
        "12:00AM PM",
        "1231 10:00 x",
    };
    for (size_t i = 0; i < N_ELEMS(bad); i++) {
        time_t t = 4242;
        loom_err_t err;
        loom_err_clear(&err);
        int rc = loom_date_parse(bad[i], NOW, &t, &err);
        if (rc != -LOOM_EINVAL_BEGIN)
            fail_msg("'%s' gave rc %d, t %lld", bad[i], rc, (long long)t);
        assert_int_equal(t, 4242);
        assert_non_null(strstr(err.msg, bad[i]));
        /* sacct -S takes a date before 1970 (Toil asks -S 1970-01-01): the epoch */
        if (!strcmp(bad[i], "1969-12-31") || !strcmp(bad[i], "1970-01-01") ||
            !strcmp(bad[i], "0000-01-01")) {
            assert_int_equal(loom_date_parse_past(bad[i], NOW, &t, NULL), 0);
            assert_int_equal(t, 0);
            continue;
        }
        assert_int_equal(loom_date_parse_past(bad[i], NOW, &t, NULL), -LOOM_EINVAL_BEGIN);
        assert_int_equal(t, 4242);
    }
}

static void test_date_parse_message(void **state)
{
    loom_err_t err;
    time_t t;
    loom_date_parse("now+1h", NOW, &t, &err);
    assert_string_equal(err.msg, "Invalid time specification 'now+1h'");
    loom_date_parse("1969-12-31", NOW, &t, &err);
    assert_string_equal(err.msg, "Time '1969-12-31' is out of range");
}

/* Feb 29 without a year: only valid when the chosen year is a leap year. */
static void test_date_leap_day(void **state)
{
    const time_t jan_2028 = 1830297600; /* 2028-01-01T00:00:00Z */
    time_t t;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    assert_int_equal(loom_date_parse("0229", jan_2028, &t, NULL), 0);
    loom_date_fmt(t, NULL, &sb);
    assert_string_equal(loom_sbuf_str(&sb), "2028-02-29T00:00:00");
    assert_int_equal(loom_date_parse("0229", NOW, &t, NULL), -LOOM_EINVAL_BEGIN);
    loom_sbuf_free(&sb);
}

static void test_date_fmt(void **state)
{
    static const struct {
        time_t t;
        const char *unset, *out;
    } cases[] = {
        {0, "Unknown", "Unknown"},
        {0, "N/A", "N/A"},
        {0, NULL, "Unknown"},
        {1, "N/A", "1970-01-01T00:00:01"},
        {NOW, "N/A", "2026-11-21T13:06:27"},
        {1767225600, NULL, "2026-01-01T00:00:00"},
        {253402300799, NULL, "9999-12-31T23:59:59"},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_add(&sb, "x=");
        loom_date_fmt(cases[i].t, cases[i].unset, &sb);
        assert_string_equal(loom_sbuf_str(&sb) + 2, cases[i].out);
        loom_sbuf_free(&sb);
    }
}

/* SLURM_TIME_FORMAT=relative, each case as squeue 22.05.8 printed a --begin
 * time side by side (now: Saturday 2026-11-21 13:06:27). */
static void test_date_fmt_relative(void **state)
{
    static const struct {
        time_t t;
        const char *out;
    } cases[] = {
        {NOW + 3600, "14:06:27"},           {NOW - 13 * 3600, "00:06:27"},
        {NOW + 86400, "Tomorr 13:06"},      {NOW - 86400, "Ystday 13:06"},
        {NOW + 3 * 86400, "Tue 13:06"},     {NOW + 6 * 86400, "Fri 13:06"},
        {NOW + 8 * 86400, "29 Nov 13:06"},  {NOW - 3 * 86400, "18 Nov 13:06"},
        {NOW + 20 * 86400, "11 Dec 13:06"}, {NOW + 41 * 86400, "1 Jan 2027"},
        {NOW + 400 * 86400, "26 Dec 2027"},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_date_fmt_relative(cases[i].t, NOW, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        loom_sbuf_free(&sb);
    }
}

/* SLURM_TIME_FORMAT: "standard" or empty is the default, anything else a
 * strftime format; "relative" goes to loom_date_fmt_relative. */
static void test_date_fmt_env(void **state)
{
    static const struct {
        const char *env, *out;
    } cases[] = {
        {"standard", "2026-11-21T13:06:27"},
        {"", "2026-11-21T13:06:27"},
        {"%a %T", "Sat 13:06:27"},
        {"%s", "1795266387"},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        setenv("SLURM_TIME_FORMAT", cases[i].env, 1);
        loom_date_fmt(NOW, NULL, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        loom_sbuf_free(&sb);
    }
    unsetenv("SLURM_TIME_FORMAT");
}

/* What the formatter prints is accepted back as the same instant. */
static void test_date_round_trip(void **state)
{
    static const time_t vals[] = {1, 86400, NOW, NOW + 1, 1767225600, 4102444800};
    for (size_t i = 0; i < N_ELEMS(vals); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        time_t back = 0;
        loom_date_fmt(vals[i], NULL, &sb);
        assert_int_equal(loom_date_parse(loom_sbuf_str(&sb), NOW, &back, NULL), 0);
        assert_int_equal(back, vals[i]);
        loom_sbuf_free(&sb);
    }
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_parse_ok),
        cmocka_unit_test(test_time_parse_errors),
        cmocka_unit_test(test_time_parse_message),
        cmocka_unit_test(test_time_fmt),
        cmocka_unit_test(test_time_fmt_round_trip),
        cmocka_unit_test(test_date_parse_forms),
        cmocka_unit_test(test_date_parse_now_offsets),
        cmocka_unit_test(test_date_parse_errors),
        cmocka_unit_test(test_date_parse_message),
        cmocka_unit_test(test_date_leap_day),
        cmocka_unit_test(test_date_fmt),
        cmocka_unit_test(test_date_fmt_relative),
        cmocka_unit_test(test_date_fmt_env),
        cmocka_unit_test(test_date_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

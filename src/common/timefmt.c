/*
 * timefmt.c - time limits, elapsed times and dates (CLI_SPEC §0.1, §0.2).
 *
 * Entry points: loom_time_parse_secs/_mins and loom_time_fmt_limit/_elapsed
 * for limits; loom_date_parse/_past and loom_date_fmt for dates. See timefmt.h.
 *
 * Behaviour checked against Slurm 22.05's parser (time_str2secs, parse_time):
 * - limit fields are not range-checked ("1:61" is 121 s, "90:00" 90 min), as
 *   Slurm does; but whitespace, signs, empty fields and trailing text are
 *   errors (Slurm quietly takes "1-" as one day; Loom rejects it).
 * - a date without a year is this year's, unless that instant has passed, then
 *   next year's (the sbatch man page); in past mode (sacct) last year's when
 *   its month is still ahead (Slurm compares months only: on Nov 21 "1125"
 *   is this year's, "1201" last year's). A bare time of day is the next occurrence, or
 *   today's in past mode. Date and time may be two words in either order.
 * - "now[+-]N[unit]": units second(s), minute(s), hour(s), day(s), week(s),
 *   any case, no abbreviations (22.05 rejects "s", "min", "h" ...).
 * - days are checked against the month (Slurm would turn 02-30 into 03-02).
 */
#include "common/timefmt.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Digits beyond this saturate: keeps every sum below INT64_MAX. */
#define TIMEFMT_FIELD_CAP ((int64_t)1000000000000)
/* The latest printable date: 9999-12-31T23:59:59Z. */
#define TIMEFMT_DATE_MAX ((time_t)253402300799)

/* Read decimal digits at *p (saturating at TIMEFMT_FIELD_CAP); returns how many. */
static size_t timefmt_digits(const char **p, int64_t *v)
{
    const char *s = *p;
    int64_t x = 0;
    while (isdigit((unsigned char)*s)) {
        x = x * 10 + (*s - '0');
        if (x > TIMEFMT_FIELD_CAP)
            x = TIMEFMT_FIELD_CAP;
        s++;
    }
    size_t n = (size_t)(s - *p);
    *p = s;
    *v = x;
    return n;
}

static bool timefmt_is_infinite(const char *s)
{
    return strcmp(s, "-1") == 0 || strcasecmp(s, "INFINITE") == 0 ||
           strcasecmp(s, "UNLIMITED") == 0;
}

/* Up to three ':'-separated fields; returns the count, 0 on a syntax error. */
static int timefmt_fields(const char *p, int64_t f[3])
{
    int n = 0;
    for (;;) {
        if (n == 3 || timefmt_digits(&p, &f[n]) == 0)
            return 0;
        n++;
        if (*p == '\0')
            return n;
        if (*p++ != ':')
            return 0;
    }
}

/* Seconds of "[D-]..." without the infinite words; -1 on a syntax error. */
static int64_t timefmt_limit_secs(const char *s)
{
    int64_t days = 0, f[3] = {0, 0, 0};
    const char *p = s;
    const char *dash = strchr(s, '-');
    if (dash) {
        if (timefmt_digits(&p, &days) == 0 || p != dash)
            return -1;
        p++;
    }
    int n = timefmt_fields(p, f);
    if (n == 0)
        return -1;
    if (dash) /* D-H, D-H:M, D-H:M:S */
        return days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
    if (n == 1) /* M */
        return f[0] * 60;
    if (n == 2) /* M:S */
        return f[0] * 60 + f[1];
    return f[0] * 3600 + f[1] * 60 + f[2]; /* H:M:S */
}

int loom_time_parse_secs(const char *s, int64_t *secs, loom_err_t *err)
{
    if (timefmt_is_infinite(s)) {
        *secs = LOOM_TIME_INFINITE;
        return 0;
    }
    int64_t v = timefmt_limit_secs(s);
    if (v < 0)
        return loom_errf(err, -LOOM_EINVAL_TIME, "Invalid time specification '%s'", s);
    if (v > LOOM_TIME_MAX_MINS * 60)
        return loom_errf(err, -LOOM_EINVAL_TIME, "Time specification '%s' is too large", s);
    *secs = v;
    return 0;
}

int loom_time_parse_mins(const char *s, int64_t *mins, loom_err_t *err)
{
    int64_t secs;
    int rc = loom_time_parse_secs(s, &secs, err);
    if (rc < 0)
        return rc;
    *mins = secs == LOOM_TIME_INFINITE ? secs : (secs + 59) / 60;
    return 0;
}

/* The special values shared by both output styles; false for a real duration. */
static bool timefmt_special(int64_t secs, loom_sbuf_t *out)
{
    if (secs == LOOM_TIME_INFINITE)
        loom_sbuf_add(out, "UNLIMITED");
    else if (secs == LOOM_TIME_NOT_SET)
        loom_sbuf_add(out, "NOT_SET");
    else if (secs < 0)
        loom_sbuf_add(out, "INVALID");
    else
        return false;
    return true;
}

void loom_time_fmt_limit(int64_t secs, loom_sbuf_t *out)
{
    if (timefmt_special(secs, out))
        return;
    long long d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
    if (d)
        loom_sbuf_addf(out, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
    else
        loom_sbuf_addf(out, "%02lld:%02lld:%02lld", h, m, s);
}

void loom_time_fmt_elapsed(int64_t secs, loom_sbuf_t *out)
{
    if (timefmt_special(secs, out))
        return;
    long long d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
    if (d)
        loom_sbuf_addf(out, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
    else if (h)
        loom_sbuf_addf(out, "%lld:%02lld:%02lld", h, m, s);
    else
        loom_sbuf_addf(out, "%lld:%02lld", m, s);
}

/* ---- dates ---------------------------------------------------------------- */

/* What the words of a date string said, before it is placed in time. */
typedef struct {
    bool has_date, has_year, has_time;
    int day_offset; /* today/tomorrow: days from today; -1 for a calendar date */
    int year, mon, mday;
    int hour, min, sec;
} timefmt_date_t;

typedef struct {
    const char *word;
    int hour;
} timefmt_keyword_t;

static const timefmt_keyword_t timefmt_time_words[] = {
    {"midnight", 0}, {"noon", 12}, {"elevenses", 11}, {"fika", 15}, {"teatime", 16},
};

static const struct {
    const char *word;
    int64_t secs;
} timefmt_units[] = {
    {"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}, {"week", 604800},
};

static bool timefmt_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int timefmt_mdays(int year, int mon)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return mon == 2 && timefmt_leap(year) ? 29 : days[mon - 1];
}

/* A word ends at the end of the string or at white space. */
static bool timefmt_word_end(const char *p)
{
    return *p == '\0' || isspace((unsigned char)*p);
}

static const char *timefmt_skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Exactly n digits at *p (n > 0), or between 1 and -n digits when n < 0. */
static bool timefmt_ndigits(const char **p, int n, int *v)
{
    const char *s = *p;
    int64_t x;
    size_t got = timefmt_digits(&s, &x);
    if (got == 0 || (n > 0 && got != (size_t)n) || (n < 0 && got > (size_t)-n))
        return false;
    *p = s;
    *v = (int)x;
    return true;
}

/* "AM"/"PM" (any case) as a whole word: 0/12 added to hours 1-12, else -1. */
static int timefmt_meridiem(const char **p)
{
    const char *s = *p;
    int add;
    if (tolower((unsigned char)s[0]) == 'a')
        add = 0;
    else if (tolower((unsigned char)s[0]) == 'p')
        add = 12;
    else
        return -1;
    if (tolower((unsigned char)s[1]) != 'm' || !timefmt_word_end(s + 2))
        return -1;
    *p = s + 2;
    return add;
}

/* "H[H]:MM[:SS][ ][AM|PM]" at *p. */
static bool timefmt_clock(const char **p, timefmt_date_t *d)
{
    const char *s = *p;
    int h, m, sec = 0;
    if (!timefmt_ndigits(&s, -2, &h) || *s++ != ':' || !timefmt_ndigits(&s, 2, &m))
        return false;
    if (*s == ':' && (s++, !timefmt_ndigits(&s, 2, &sec)))
        return false;
    const char *q = timefmt_skip_ws(s);
    int add = timefmt_meridiem(&q);
    if (add >= 0) {
        if (h > 12)
            return false;
        h = h % 12 + add;
        s = q;
    }
    if (h > 23 || m > 59 || sec > 59)
        return false;
    d->hour = h;
    d->min = m;
    d->sec = sec;
    *p = s;
    return true;
}

/* "YYYY-MM-DD"; the month and day take two digits each, as in Slurm. */
static bool timefmt_iso_date(const char **p, timefmt_date_t *d)
{
    const char *s = *p;
    if (!timefmt_ndigits(&s, 4, &d->year) || *s++ != '-' || !timefmt_ndigits(&s, 2, &d->mon) ||
        *s++ != '-' || !timefmt_ndigits(&s, 2, &d->mday))
        return false;
    d->has_year = true;
    *p = s;
    return true;
}

/* A two-digit year is 20YY; "00" counts as no year at all, as in Slurm. */
static void timefmt_set_yy(timefmt_date_t *d, int yy)
{
    d->year = 2000 + yy;
    d->has_year = yy != 0;
}

/* "M[M]/D[D][/YY]" or the same with '.'. */
static bool timefmt_sep_date(const char **p, timefmt_date_t *d)
{
    const char *s = *p;
    int yy;
    if (!timefmt_ndigits(&s, -2, &d->mon) || (*s != '/' && *s != '.'))
        return false;
    char sep = *s++;
    if (!timefmt_ndigits(&s, -2, &d->mday))
        return false;
    if (*s == sep) {
        s++;
        if (!timefmt_ndigits(&s, 2, &yy))
            return false;
        timefmt_set_yy(d, yy);
    }
    *p = s;
    return true;
}

/* "MMDD" or "MMDDYY". */
static bool timefmt_compact_date(const char **p, timefmt_date_t *d)
{
    const char *s = *p;
    int64_t v;
    size_t n = timefmt_digits(&s, &v);
    if (n != 4 && n != 6)
        return false;
    if (n == 6) {
        timefmt_set_yy(d, (int)(v % 100));
        v /= 100;
    }
    d->mon = (int)(v / 100);
    d->mday = (int)(v % 100);
    *p = s;
    return true;
}

/* Any calendar date form; Feb 29 passes here, the year is checked later. */
static bool timefmt_calendar(const char **p, timefmt_date_t *d)
{
    const char *s = *p;
    size_t n = strspn(s, "0123456789");
    bool ok;
    if (s[n] == '-')
        ok = timefmt_iso_date(&s, d);
    else if (s[n] == '/' || s[n] == '.')
        ok = timefmt_sep_date(&s, d);
    else
        ok = timefmt_compact_date(&s, d);
    if (!ok || d->mon < 1 || d->mon > 12 || d->mday < 1 || d->mday > timefmt_mdays(2000, d->mon))
        return false;
    *p = s;
    return true;
}

/* A keyword word: today/tomorrow (dates) or midnight/noon/... (times). */
static bool timefmt_keyword(const char **p, timefmt_date_t *d, bool *is_time)
{
    const char *s = *p;
    size_t n = 0;
    while (isalpha((unsigned char)s[n]))
        n++;
    if (!timefmt_word_end(s + n))
        return false;
    *p = s + n;
    if ((n == 5 && strncasecmp(s, "today", 5) == 0) ||
        (n == 8 && strncasecmp(s, "tomorrow", 8) == 0)) {
        *is_time = false;
        d->day_offset = n == 8;
        return true;
    }
    for (size_t i = 0; i < sizeof(timefmt_time_words) / sizeof(timefmt_time_words[0]); i++) {
        const char *w = timefmt_time_words[i].word;
        if (strlen(w) == n && strncasecmp(s, w, n) == 0) {
            *is_time = true;
            d->hour = timefmt_time_words[i].hour;
            d->min = d->sec = 0;
            return true;
        }
    }
    return false;
}

/* One word: a keyword, a clock time, or a calendar date with an optional
 * "T<clock>" glued on. Each of date and time may be given once. */
static bool timefmt_word(const char **p, timefmt_date_t *d)
{
    timefmt_date_t w = *d;
    bool is_time = false, glued_time = false;
    const char *s = *p;
    if (isalpha((unsigned char)*s)) {
        if (!timefmt_keyword(&s, &w, &is_time))
            return false;
    } else if (s[strspn(s, "0123456789")] == ':') {
        is_time = true;
        if (!timefmt_clock(&s, &w))
            return false;
    } else {
        w.day_offset = -1;
        if (!timefmt_calendar(&s, &w))
            return false;
        if (*s == 'T') {
            s++;
            glued_time = true;
            if (!timefmt_clock(&s, &w))
                return false;
        }
    }
    bool gives_time = is_time || glued_time, gives_date = !is_time;
    if (!timefmt_word_end(s) || (gives_time && d->has_time) || (gives_date && d->has_date))
        return false;
    w.has_time = d->has_time || gives_time;
    w.has_date = d->has_date || gives_date;
    *d = w;
    *p = s;
    return true;
}

/* mktime() of a broken-down local date; -1 when it cannot be represented. */
static time_t timefmt_mktime(int year, int mon, int mday, const timefmt_date_t *d)
{
    struct tm tm = {0};
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = mday;
    tm.tm_hour = d->hour;
    tm.tm_min = d->min;
    tm.tm_sec = d->sec;
    tm.tm_isdst = -1;
    return mktime(&tm);
}

/* Place the parsed words in time relative to now; -1 when impossible. */
static time_t timefmt_resolve(const timefmt_date_t *d, time_t now, bool past)
{
    struct tm today;
    if (!localtime_r(&now, &today))
        return -1;
    int year = today.tm_year + 1900, mon = today.tm_mon + 1, mday = today.tm_mday;
    if (d->has_date && d->day_offset >= 0) {
        mday += d->day_offset; /* mktime normalises the month end */
    } else if (d->has_date) {
        year = d->has_year ? d->year : year;
        mon = d->mon;
        mday = d->mday;
    }
    time_t t = timefmt_mktime(year, mon, mday, d);
    if (!d->has_date && !past && t != -1 && t < now)
        t = timefmt_mktime(year, mon, mday + 1, d);
    if (d->has_date && d->day_offset < 0 && !d->has_year && t != -1) {
        if (!past && t < now)
            year++;
        else if (past && mon > today.tm_mon + 1) /* Slurm compares months only */
            year--;
        t = timefmt_mktime(year, mon, mday, d);
    }
    if (d->has_date && d->day_offset < 0 && d->mday > timefmt_mdays(year, mon))
        return -1;
    return d->has_date && year < 1970 ? 0 : t; /* 0: reported as out of range */
}

/* "now", "now+N[unit]", "now - N unit" (white space allowed around parts). */
static bool timefmt_now(const char *s, time_t now, time_t *out)
{
    const char *p = timefmt_skip_ws(s + 3);
    int64_t n, mult = 1;
    if (*p == '\0') {
        *out = now;
        return true;
    }
    int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0;
    if (sign == 0)
        return false;
    p = timefmt_skip_ws(p + 1);
    if (timefmt_digits(&p, &n) == 0)
        return false;
    p = timefmt_skip_ws(p);
    size_t len = 0;
    while (isalpha((unsigned char)p[len]))
        len++;
    if (len > 0) {
        mult = 0;
        for (size_t i = 0; i < sizeof(timefmt_units) / sizeof(timefmt_units[0]); i++) {
            size_t wl = strlen(timefmt_units[i].word);
            if ((len == wl || (len == wl + 1 && tolower((unsigned char)p[wl]) == 's')) &&
                strncasecmp(p, timefmt_units[i].word, wl) == 0)
                mult = timefmt_units[i].secs;
        }
        if (mult == 0)
            return false;
    }
    if (*timefmt_skip_ws(p + len) != '\0')
        return false;
    *out = (time_t)((int64_t)now + sign * n * mult);
    return true;
}

/* The words of a non-"now" date placed in time; false on a syntax error. */
static bool timefmt_words(const char *p, time_t now, bool past, time_t *out)
{
    timefmt_date_t d = {0};
    while (*p) {
        if (!timefmt_word(&p, &d))
            return false;
        p = timefmt_skip_ws(p);
    }
    if (!d.has_date && !d.has_time)
        return false;
    *out = timefmt_resolve(&d, now, past);
    return *out != -1;
}

static int timefmt_date_parse(const char *s, time_t now, bool past, time_t *out, loom_err_t *err)
{
    time_t t;
    const char *p = timefmt_skip_ws(s);
    bool ok;
    if (strncasecmp(p, "now", 3) == 0 && !isalpha((unsigned char)p[3]))
        ok = timefmt_now(p, now, &t);
    else
        ok = timefmt_words(p, now, past, &t);
    if (!ok)
        return loom_errf(err, -LOOM_EINVAL_BEGIN, "Invalid time specification '%s'", s);
    if (past && t < 0)
        t = 0; /* sacct -S 1970-01-01 (Toil; before it east of UTC): the epoch, as sacct 22.05 */
    if ((t <= 0 && !past) || t > TIMEFMT_DATE_MAX)
        return loom_errf(err, -LOOM_EINVAL_BEGIN, "Time '%s' is out of range", s);
    *out = t;
    return 0;
}

int loom_date_parse(const char *s, time_t now, time_t *out, loom_err_t *err)
{
    return timefmt_date_parse(s, now, false, out, err);
}

int loom_date_parse_past(const char *s, time_t now, time_t *out, loom_err_t *err)
{
    return timefmt_date_parse(s, now, true, out, err);
}

/* Calendar days from now's local date to t's (negative in the past). */
static long date_day_diff(const struct tm *t, const struct tm *now)
{
    struct tm a = {
        .tm_year = t->tm_year, .tm_mon = t->tm_mon, .tm_mday = t->tm_mday, .tm_hour = 12};
    struct tm b = {
        .tm_year = now->tm_year, .tm_mon = now->tm_mon, .tm_mday = now->tm_mday, .tm_hour = 12};
    return (long)((timegm(&a) - timegm(&b)) / 86400); /* both at noon: whole days */
}

void loom_date_fmt_relative(time_t t, time_t now, loom_sbuf_t *out)
{
    struct tm tm, nt;
    char buf[64] = "";
    if (!localtime_r(&t, &tm) || !localtime_r(&now, &nt)) {
        loom_sbuf_add(out, "INVALID");
        return;
    }
    long d = date_day_diff(&tm, &nt);
    if (d == 0)
        strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
    else if (d == 1)
        strftime(buf, sizeof(buf), "Tomorr %H:%M", &tm);
    else if (d == -1)
        strftime(buf, sizeof(buf), "Ystday %H:%M", &tm);
    else if (d > 1 && d < 7)
        strftime(buf, sizeof(buf), "%a %H:%M", &tm);
    else if (tm.tm_year == nt.tm_year)
        strftime(buf, sizeof(buf), "%b %H:%M", &tm);
    else
        strftime(buf, sizeof(buf), "%b %Y", &tm);
    if (d < -1 || d >= 7)
        loom_sbuf_addf(out, "%d ", tm.tm_mday); /* "1 Jan 2027": no padding */
    loom_sbuf_add(out, buf);
}

/* A user's strftime format (SLURM_TIME_FORMAT): a format by definition. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static size_t date_user_fmt(char *buf, size_t len, const char *fmt, const struct tm *tm)
{
    return strftime(buf, len, fmt, tm);
}
#pragma GCC diagnostic pop

void loom_date_fmt(time_t t, const char *unset_text, loom_sbuf_t *out)
{
    struct tm tm;
    char buf[256];
    if (t == 0) {
        loom_sbuf_add(out, unset_text ? unset_text : "Unknown");
        return;
    }
    const char *fmt = getenv("SLURM_TIME_FORMAT");
    if (fmt && strcmp(fmt, "relative") == 0) {
        loom_date_fmt_relative(t, time(NULL), out);
        return;
    }
    if (!localtime_r(&t, &tm)) {
        loom_sbuf_add(out, "INVALID");
        return;
    }
    if (!fmt || !*fmt || strcmp(fmt, "standard") == 0)
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    else if (date_user_fmt(buf, sizeof(buf), fmt, &tm) == 0)
        buf[0] = '\0';
    loom_sbuf_add(out, buf);
}

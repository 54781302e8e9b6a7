/*
 * timefmt.h - time limits, elapsed times and dates (CLI_SPEC §0.1, §0.2).
 *
 * Time limits are kept in seconds as int64_t; LOOM_TIME_INFINITE means no limit
 * and LOOM_TIME_NOT_SET means none was given. Dates are time_t (local time for
 * parsing and printing, as Slurm does); 0 means unset. Parsers that depend on
 * the current time take it as an argument, so they are pure and testable.
 */
#ifndef LOOM_TIMEFMT_H
#define LOOM_TIMEFMT_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stdint.h>
#include <time.h>

#define LOOM_TIME_INFINITE ((int64_t)-1)
#define LOOM_TIME_NOT_SET  ((int64_t)-2)
/* The longest limit accepted: Slurm keeps limits as 32-bit minutes. */
#define LOOM_TIME_MAX_MINS ((int64_t)0x7ffffffd)

/* "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", "0", "-1"/"INFINITE"/"UNLIMITED".
 * Result in seconds (exact), or LOOM_TIME_INFINITE. Fields are not range-checked
 * ("1:61" is 121 s, as in Slurm); anything else, or more than LOOM_TIME_MAX_MINS,
 * fails with -LOOM_EINVAL_TIME and "Invalid time specification '<input>'". */
int loom_time_parse_secs(const char *s, int64_t *secs, loom_err_t *err);
/* The same, rounded up to whole minutes as Slurm does for job limits; result in
 * minutes (or LOOM_TIME_INFINITE). */
int loom_time_parse_mins(const char *s, int64_t *mins, loom_err_t *err);

/* "HH:MM:SS" or "D-HH:MM:SS"; "UNLIMITED" for infinite (scontrol, sacct, sinfo %l).
 * Both formatters print "NOT_SET" for LOOM_TIME_NOT_SET, "INVALID" for other
 * negative values. */
void loom_time_fmt_limit(int64_t secs, loom_sbuf_t *out);
/* squeue style: "M:SS", "H:MM:SS", "D-HH:MM:SS"; "UNLIMITED"/"NOT_SET" for those. */
void loom_time_fmt_elapsed(int64_t secs, loom_sbuf_t *out);

/* Every §0.2 form: "HH:MM[:SS][AM|PM]", "MMDD[YY]", "MM/DD[/YY]", "MM.DD[.YY]",
 * "YYYY-MM-DD[THH:MM[:SS]]", now/today/tomorrow/midnight/noon/elevenses/fika/
 * teatime, "now[+-]N[unit]". A date and a time may also be two words ("1231
 * 10:00", "tomorrow noon"); "MMDDTHH:MM" works too. Keywords are any case.
 * This is --begin's meaning (sbatch, scontrol StartTime=): a time of day alone
 * is its next occurrence, a date without a year the next such date. YY is 20YY
 * ("00": no year, as in Slurm).
 * Errors: -LOOM_EINVAL_BEGIN, "Invalid time specification '<input>'". */
int loom_date_parse(const char *s, time_t now, time_t *out, loom_err_t *err);
/* The same for times in the past (sacct -S/-E): a time of day alone is today's,
 * a date without a year last year's when its month is still ahead (as Slurm). */
int loom_date_parse_past(const char *s, time_t now, time_t *out, loom_err_t *err);
/* "YYYY-MM-DDTHH:MM:SS" in local time; when t == 0, unset_text ("Unknown", "N/A";
 * NULL means "Unknown"). SLURM_TIME_FORMAT, as Slurm's commands read it, may
 * ask "relative" (loom_date_fmt_relative) or a strftime format instead. */
void loom_date_fmt(time_t t, const char *unset_text, loom_sbuf_t *out);
/* SLURM_TIME_FORMAT=relative, as Slurm 22.05 prints it next to now: "08:19:40"
 * today, "Tomorr 07:19", "Ystday 07:19", "Wed 07:19" in the coming week,
 * "12 Dec 07:19" in this year, "1 Jan 2027" in another. */
void loom_date_fmt_relative(time_t t, time_t now, loom_sbuf_t *out);

#endif

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

/* "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", "0", "-1"/"INFINITE"/"UNLIMITED".
 * Result in seconds (exact), or LOOM_TIME_INFINITE. */
int loom_time_parse_secs(const char *s, int64_t *secs, loom_err_t *err);
/* The same, rounded up to whole minutes as Slurm does for job limits; result in
 * minutes (or LOOM_TIME_INFINITE). */
int loom_time_parse_mins(const char *s, int64_t *mins, loom_err_t *err);

/* "HH:MM:SS" or "D-HH:MM:SS"; "UNLIMITED" for infinite (scontrol, sacct, sinfo %l). */
void loom_time_fmt_limit(int64_t secs, loom_sbuf_t *out);
/* squeue style: "M:SS", "H:MM:SS", "D-HH:MM:SS"; "UNLIMITED"/"NOT_SET" for those. */
void loom_time_fmt_elapsed(int64_t secs, loom_sbuf_t *out);

/* Every §0.2 form: "HH:MM[:SS][AM|PM]", "MMDD[YY]", "MM/DD[/YY]", "MM.DD[.YY]",
 * "YYYY-MM-DD[THH:MM[:SS]]", now/today/tomorrow/midnight/noon/elevenses/fika/
 * teatime, "now[+-]N[unit]". */
int loom_date_parse(const char *s, time_t now, time_t *out, loom_err_t *err);
/* "YYYY-MM-DDTHH:MM:SS" in local time; when t == 0, unset_text ("Unknown", "N/A"). */
void loom_date_fmt(time_t t, const char *unset_text, loom_sbuf_t *out);

#endif

/*
 * sacct_fields.h - sacct's fields (CLI_SPEC §8): names, widths and
 * justification as Slurm 22.05 prints them, and the formatter of each.
 *
 * A row is a job record (docs/proto/messages.md §1) or one of its step
 * records (§6.1) with the job beside it. Formatters are pure: the current
 * time comes in the context, so tests are deterministic.
 *
 * Entry points: sacct_field_find, sacct_field_at, sacct_cpu_time, sacct_size,
 * sacct_disk_mb.
 */
#ifndef LOOM_CLI_SACCT_FIELDS_H
#define LOOM_CLI_SACCT_FIELDS_H

#include "common/sbuf.h"

#include <jansson.h>
#include <stdint.h>
#include <time.h>

typedef struct sacct_row {
    const json_t *job;  /* always set */
    const json_t *step; /* NULL for the job's own row */
    time_t now;
} sacct_row_t;

typedef void sacct_fmt_f(const sacct_row_t *r, loom_sbuf_t *out);

typedef struct sacct_field {
    const char *name;
    int width; /* negative: left-justified */
    sacct_fmt_f *fmt;
    int number; /* 1: a value that overflows instead of being cut */
} sacct_field_t;

/* The field named (any case), or NULL. */
const sacct_field_t *sacct_field_find(const char *name, size_t len);
/* Every field in order, for -e; NULL past the end. */
const sacct_field_t *sacct_field_at(size_t i);
/* Slurm's CPU time text from microseconds: "MM:SS.mmm" under an hour,
 * "HH:MM:SS" under a day, "D-HH:MM:SS". */
void sacct_cpu_time(int64_t usec, loom_sbuf_t *out);
/* A size as sacct prints usage (MaxRSS, MaxDiskRead: Slurm's exact unit
 * conversion): divided by 1024 while it divides evenly, with the unit
 * letter K, M, G, T, P; 1264K, 200M, 1000 (bytes). */
void sacct_size(uint64_t bytes, loom_sbuf_t *out);
/* A disk figure as sacct 22.05 prints MaxDiskRead, AveDiskWrite, ...: in
 * megabytes with two decimals ("0.05M", "20.70M", "2G"), "0" for none. */
void sacct_disk_mb(int64_t bytes, loom_sbuf_t *out);

#endif

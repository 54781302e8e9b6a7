/*
 * sreport.h - what sreport's files share (issue 7; CLI_SPEC has no sreport
 * section: the spec is Slurm 22.05's man sreport and its outputs): the
 * command state, a report's conditions, and its rows.
 *
 * sreport.c parses the options, the command words and the conditions
 * (start=, end=, cluster=, users=, accounts=, format=, TopCount=, group,
 * tree) and runs a report; sreport_reports.c asks loomdbd
 * (dbd.report.cluster, dbd.report.users, dbd.assoc.list) and turns the
 * answers into rows; sreport_print.c prints them: the header block, the
 * columns (format= keywords, widths that grow with the largest value in
 * seconds, as 22.05 does), and the time units of -t.
 *
 * Invariant: every time value travels in seconds and is converted only
 * when printed; percentages are of the cluster's Reported time.
 */
#ifndef LOOM_CLI_SREPORT_H
#define LOOM_CLI_SREPORT_H

#include "cli/cli_dbd.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* -t: the units of time columns. */
typedef enum {
    SR_TF_SECS,
    SR_TF_MINS,
    SR_TF_HOURS,
    SR_TF_PERCENT,
    SR_TF_SECPER,
    SR_TF_MINPER,
    SR_TF_HOURPER,
} sr_tf_t;

/* Columns (format= keywords). */
typedef enum {
    SR_F_CLUSTER,
    SR_F_TRES_CNT,
    SR_F_ALLOC,
    SR_F_DOWN,
    SR_F_IDLE,
    SR_F_PDOWN,
    SR_F_OVER,
    SR_F_PLAN,
    SR_F_REPORTED,
    SR_F_ACCT,
    SR_F_LOGIN,
    SR_F_PROPER,
    SR_F_USED,
    SR_F_ENERGY,
    SR_F_TRES_NAME,
    SR_F_COUNT,
} sr_fid_t;

typedef enum { SR_REP_UTIL, SR_REP_TOP, SR_REP_ACCT_USER, SR_REP_USER_ACCT } sr_rep_t;

typedef struct sr {
    loom_cli_t cli;
    loom_rpc_t *rpc;
    loom_pf_t pf;
    sr_tf_t tf;
    loom_strv_t tres; /* -T names, in TRES order; empty: cpu */
    bool tres_given, tres_all;
    const char *cluster_opt; /* -M */
    bool all_clusters;       /* -a */
    int status;              /* exit status so far */
    loom_sbuf_t out;
} sr_t;

typedef struct sr_cond {
    sr_rep_t rep;
    int64_t start, end;
    loom_strv_t clusters, users, accounts, format;
    int top;
    bool group, tree, all_clusters;
} sr_cond_t;

/* One printed line: text cells and time values (seconds) by column. */
typedef struct sr_row {
    const char *text[SR_F_COUNT];
    int64_t secs[SR_F_COUNT];
    int64_t total; /* the cluster's Reported seconds, for percentages */
    int indent;    /* tree: depth of the account column */
} sr_row_t;

typedef struct sr_rows {
    sr_row_t *v;
    size_t n, cap;
    loom_strv_t strings; /* owns the texts */
} sr_rows_t;

/* ---- sreport_print.c ---- */
/* The -t keyword (case-insensitive, abbreviations as Slurm takes them); -1 when unknown. */
int sr_time_format(const char *text);
/* Add a row and return it (zeroed). */
sr_row_t *sr_rows_add(sr_rows_t *rows);
/* Keep a copy of s for the rows' lifetime. */
const char *sr_rows_str(sr_rows_t *rows, const char *s);
void sr_rows_free(sr_rows_t *rows);
/* The header block and the table. Unknown format= fields are reported and
 * set the exit status. */
void sr_print(sr_t *s, const sr_cond_t *c, const sr_rows_t *rows);
/* One time value as -t shows it. */
void sr_time_text(sr_tf_t tf, int64_t secs, int64_t total, loom_sbuf_t *out);
/* TRES display order: cpu, mem, energy, node, billing, fs/disk, vmem, pages, then by name. */
int sr_tres_rank(const char *name);

/* ---- sreport_reports.c ---- */
int sr_report_util(sr_t *s, const sr_cond_t *c, sr_rows_t *rows);
int sr_report_users(sr_t *s, const sr_cond_t *c, sr_rows_t *rows);
int sr_report_acct_user(sr_t *s, const sr_cond_t *c, sr_rows_t *rows);

#endif

/*
 * sacct_filter.h - the job filters of sacct that slurmdbd applies in its
 * query and loomdbd leaves to the client (CLI_SPEC §8): -N/--nodelist,
 * -i/--nnodes, -I/--ncpus, -q/--qos, -g/--gid, -W/--wckeys,
 * -k/--timelimit-min and -K/--timelimit-max, and -T/--truncate.
 *
 * Semantics as sacct 22.05.8 shows them side by side: -N, -i and -I match
 * the jobs that ran (on any of those nodes; on min[-max] nodes or CPUs);
 * --timelimit-min alone matches that limit exactly, with --timelimit-max the
 * range (slurmdbd's query); -T cuts the start and end of jobs and steps to
 * the window.
 *
 * Entry points: sacct_filter_parse (options' values, Slurm's messages),
 * sacct_filter_apply.
 */
#ifndef LOOM_CLI_SACCT_FILTER_H
#define LOOM_CLI_SACCT_FILTER_H

#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct sacct_filter {
    /* the options' texts, NULL when not given */
    const char *nodes, *nnodes, *ncpus, *qos, *groups, *wckeys, *tl_min, *tl_max;
    bool truncate;
    /* parsed by sacct_filter_parse */
    int64_t nn[2], nc[2], tl[2]; /* ranges; tl in minutes */
    loom_strv_t node_names, qos_names, gids, wckey_names;
} sacct_filter_t;

/* Parse the options' values; prints sacct's message and returns -1 on a bad one. */
int sacct_filter_parse(sacct_filter_t *f);
/* Drop from jobs (an array of job records) those the filters refuse; with
 * -T, cut times to [start, end] (0: open). */
void sacct_filter_apply(const sacct_filter_t *f, json_t *jobs, int64_t start, int64_t end);
void sacct_filter_free(sacct_filter_t *f);

#endif

/*
 * part_mgr.h - scontrol update PartitionName= (CLI_SPEC §9): State, MaxTime,
 * DefaultTime, MaxNodes, MinNodes, PriorityJobFactor, PriorityTier, Hidden,
 * RootOnly, OverSubscribe, ... (the partition keys whose values are numbers,
 * booleans, times, sizes or words: conf_keys.h loom_conf_part_change).
 *
 * The first change gives the partition its own copy of its slurm.conf record
 * (the pointers stay shared: only scalar fields change). Each request is
 * checked whole on a scratch copy, journaled as a part.update event, then
 * applied and a scheduling pass asked for; the snapshot keeps each
 * partition's changes so a restart has them; a reconfigure reads slurm.conf
 * again and drops them, as slurmctld 22.05 does.
 *
 * Entry points: ctld_part_update, ctld_part_apply, ctld_part_snapshot,
 * ctld_part_restore, ctld_part_free.
 */
#ifndef LOOM_CTLD_PART_MGR_H
#define LOOM_CTLD_PART_MGR_H

#include "ctld/ctld.h"

#include <jansson.h>

/* part.update {name, changes: {Key: "value"}}: checked, journaled, applied. */
int ctld_part_update(ctld_t *c, const json_t *req, loom_err_t *err);
/* A part.update event (replay too). */
int ctld_part_apply(ctld_t *c, const json_t *ev, loom_err_t *err);
/* The snapshot record of partition i, NULL when it has no changes. */
json_t *ctld_part_snapshot(const ctld_t *c, size_t i);
/* A snapshot record back. */
void ctld_part_restore(ctld_t *c, const json_t *rec);
void ctld_part_free(ctld_part_t *p);

#endif

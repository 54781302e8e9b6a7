/*
 * tres.h - TRES limit strings as sacctmgr shows them (CLI_SPEC §0.6, §10):
 * "cpu=64,gres/gpu=8,mem=256G".
 *
 * A stored limit is kept in this canonical text: items sorted by name, each
 * name at most once, counts as integers, memory in MiB printed with the
 * largest unit that divides it exactly (4096 -> 4G, 4000 -> 4000M). Applying
 * a change merges it into the old value: an item with count -1 removes that
 * TRES, others replace or add theirs.
 *
 * Entry points: loom_tres_merge.
 */
#ifndef LOOM_DBD_TRES_H
#define LOOM_DBD_TRES_H

#include "common/err.h"
#include "common/strv.h"

/* Merge change into old (NULL or "" for none) and return the canonical text
 * in *out (caller frees; "" when no item is left). known lists the gres/...
 * and license/... names accepted besides the built-in TRES (cpu, mem, energy,
 * node, billing, fs/disk, vmem, pages); NULL accepts any gres/, license/, bb/,
 * fs/ or ic/ name. Errors name the bad
 * item: Slurm's "no TRES known by type <name>" for an unknown name. */
int loom_tres_merge(const char *old, const char *change, const loom_strv_t *known, char **out,
                    loom_err_t *err);

#endif

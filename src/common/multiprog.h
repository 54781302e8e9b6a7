/*
 * multiprog.h - srun --multi-prog configuration files (CLI_SPEC §2).
 *
 * Each line: a rank list, then the program and its arguments:
 *
 *     # comment
 *     0      ./controller --verbose
 *     1-3,5  ./worker rank=%t offset=%o
 *     *      ./idle
 *
 * Rank lists are comma-separated numbers and ranges; "*" is every rank no
 * earlier line named. In the arguments %t becomes the task's rank and %o its
 * offset within the line's list (0 for the first rank listed there); words
 * may be quoted with ' or ". Blank lines and '#' comments are skipped. A rank
 * named twice, a rank >= ntasks, or a rank left without a line is an error
 * (srun checks the file before launching; each supervisor picks its ranks).
 *
 * Entry points: loom_multiprog_check, loom_multiprog_argv. Pure functions.
 */
#ifndef LOOM_MULTIPROG_H
#define LOOM_MULTIPROG_H

#include "common/err.h"
#include "common/strv.h"

#include <stdint.h>

/* Does text give every rank of ntasks exactly one program? */
int loom_multiprog_check(const char *text, uint32_t ntasks, loom_err_t *err);

/* The command line of rank (appended to argv, which the caller frees); on
 * failure argv is untouched. */
int loom_multiprog_argv(const char *text, uint32_t ntasks, uint32_t rank, loom_strv_t *argv,
                        loom_err_t *err);

#endif

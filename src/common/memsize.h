/*
 * memsize.h - memory sizes (CLI_SPEC §0.3).
 *
 * An integer with an optional K|M|G|T suffix (any case), powers of 1024, the
 * default unit MiB. Values are kept in MiB (uint64_t). "0" is valid (for --mem
 * it means all of the node's memory). K rounds up to whole MiB; "KB".."TB" are
 * the same units (Slurm's reading). Values above LOOM_MEM_MAX_MIB are rejected,
 * so that a size in bytes always fits in a uint64_t.
 */
#ifndef LOOM_MEMSIZE_H
#define LOOM_MEMSIZE_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stdint.h>

#define LOOM_MEM_MAX_MIB (UINT64_MAX >> 20)

/* Errors: -LOOM_EPARSE "Invalid memory specification '<input>'" (also for a sign,
 * blanks, fractions, unknown units), -LOOM_ERANGE when too large. */
int loom_mem_parse_mib(const char *s, uint64_t *mib, loom_err_t *err);
/* "4G" when a whole number of GiB (or TiB: "2T"), else "1000M" (scontrol, sacct ReqMem);
 * "0" for 0. The output parses back to the same value. */
void loom_mem_fmt(uint64_t mib, loom_sbuf_t *out);

#endif

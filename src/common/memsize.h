/*
 * memsize.h - memory sizes (CLI_SPEC §0.3).
 *
 * An integer with an optional K|M|G|T suffix (any case), powers of 1024, the
 * default unit MiB. Values are kept in MiB (uint64_t). "0" is valid (for --mem
 * it means all of the node's memory).
 */
#ifndef LOOM_MEMSIZE_H
#define LOOM_MEMSIZE_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stdint.h>

int loom_mem_parse_mib(const char *s, uint64_t *mib, loom_err_t *err);
/* "4G" when a whole number of GiB (or TiB: "2T"), else "1000M" (scontrol, sacct ReqMem). */
void loom_mem_fmt(uint64_t mib, loom_sbuf_t *out);

#endif

/*
 * memsize.c - memory sizes (CLI_SPEC §0.3). See memsize.h.
 *
 * Checked against Slurm 22.05's str_to_mbytes: K rounds up to whole MiB
 * ("1K" and "1024K" are 1, "1025K" is 2), a trailing B is allowed after the
 * unit ("4GB" is "4G", still powers of 1024), there is no P suffix and no
 * fraction. Slurm also lets strtoll() skip leading blanks and a '+'; Loom
 * rejects both.
 */
#include "common/memsize.h"

#include <ctype.h>
#include <stdbool.h>

/* Multiplier to MiB for a unit letter; 0 for K (divided instead), -1 if unknown. */
static int64_t memsize_unit(char c)
{
    switch (toupper((unsigned char)c)) {
    case 'K':
        return 0;
    case 'M':
        return 1;
    case 'G':
        return 1024;
    case 'T':
        return 1024 * 1024;
    default:
        return -1;
    }
}

int loom_mem_parse_mib(const char *s, uint64_t *mib, loom_err_t *err)
{
    const char *p = s;
    uint64_t v = 0;
    bool big = false;
    if (!isdigit((unsigned char)*p))
        return loom_errf(err, -LOOM_EPARSE, "Invalid memory specification '%s'", s);
    for (; isdigit((unsigned char)*p); p++) {
        if (v > (UINT64_MAX - 9) / 10)
            big = true; /* keep reading: a syntax error still wins */
        else
            v = v * 10 + (uint64_t)(*p - '0');
    }
    int64_t mult = 1;
    if (*p) {
        mult = memsize_unit(*p++);
        if (mult >= 0 && (*p == 'B' || *p == 'b'))
            p++;
    }
    if (mult < 0 || *p)
        return loom_errf(err, -LOOM_EPARSE, "Invalid memory specification '%s'", s);
    if (mult == 0)
        v = v / 1024 + (v % 1024 != 0);
    else if (v > LOOM_MEM_MAX_MIB / (uint64_t)mult)
        big = true;
    else
        v *= (uint64_t)mult;
    if (big || v > LOOM_MEM_MAX_MIB)
        return loom_errf(err, -LOOM_ERANGE, "Memory specification '%s' is too large", s);
    *mib = v;
    return 0;
}

void loom_mem_fmt(uint64_t mib, loom_sbuf_t *out)
{
    unsigned long long v = mib;
    if (v == 0)
        loom_sbuf_add(out, "0");
    else if (v % (1024 * 1024) == 0)
        loom_sbuf_addf(out, "%lluT", v / (1024 * 1024));
    else if (v % 1024 == 0)
        loom_sbuf_addf(out, "%lluG", v / 1024);
    else
        loom_sbuf_addf(out, "%lluM", v);
}

/*
 * fuzz_memory.c - memory sizes (src/common/memsize.c, CLI_SPEC §0.3).
 *
 * Parses the input; when it is accepted, the formatted value must parse back
 * to the same number of MiB (abort() if not).
 */
#include "common/memsize.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = loom_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t mib, back;
    loom_err_t err;
    if (loom_mem_parse_mib(s, &mib, &err) == 0) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_mem_fmt(mib, &sb);
        if (mib > LOOM_MEM_MAX_MIB || loom_mem_parse_mib(loom_sbuf_str(&sb), &back, NULL) != 0 ||
            back != mib)
            abort();
        loom_sbuf_free(&sb);
    } else if (err.msg[0] == '\0') {
        abort(); /* every failure says what was wrong */
    }
    free(s);
    return 0;
}

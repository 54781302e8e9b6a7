/*
 * fuzz_multiprog.c - srun --multi-prog files (src/common/multiprog.c).
 *
 * The first byte is the task count (0-63), the rest the file. When the file
 * passes the check every rank must get a non-empty command line; a rank
 * without one must fail with argv untouched.
 */
#include "common/multiprog.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t ntasks = data[0] % 64;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    bool ok = loom_multiprog_check(text, ntasks, NULL) == 0;
    for (uint32_t r = 0; r < ntasks + 1; r++) {
        loom_strv_t argv = LOOM_STRV_INIT;
        int rc = loom_multiprog_argv(text, ntasks, r, &argv, NULL);
        if (ok && r < ntasks && (rc < 0 || argv.n == 0))
            abort();
        if (rc < 0 && argv.n != 0)
            abort();
        loom_strv_free(&argv);
    }
    free(text);
    return 0;
}

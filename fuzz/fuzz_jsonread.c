/*
 * fuzz_jsonread.c - the fast JSON reader against jansson (jsonread.h).
 *
 * Input: any bytes, read as JSON text. Whenever loom_json_read returns a
 * value, json_loadb with JSON_REJECT_DUPLICATES must return an equal one
 * (json_equal, and the same kind of number at every place: json_equal
 * counts 1 and 1.0 as different already). A NULL from loom_json_read is
 * always allowed: the caller falls back to jansson.
 */
#include "common/jsonread.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    json_t *fast = loom_json_read(text, size);
    if (fast) {
        json_t *ref = json_loadb(text, size, JSON_REJECT_DUPLICATES, NULL);
        if (!ref || !json_equal(fast, ref))
            abort();
        json_decref(ref);
        json_decref(fast);
    }
    free(text);
    return 0;
}

/*
 * fuzz_stepio.c - srun <-> step supervisor I/O messages (src/common/stepio.c,
 * messages.md §7).
 *
 * The input is a byte stream as srun or a supervisor reads it: cut it into
 * messages until more bytes are needed or the stream is broken; every
 * message must lie inside the input, re-encode to the same bytes, and its
 * JSON payload (when it parses) must be an object.
 */
#include "common/sbuf.h"
#include "common/stepio.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    size_t off = 0;
    for (;;) {
        loom_stepio_msg_t m;
        loom_err_t err = {0};
        ssize_t used = loom_stepio_parse(buf + off, size - off, &m, &err);
        if (used <= 0)
            break;
        if ((size_t)used > size - off || m.data < buf || m.data + m.len > buf + size)
            abort();
        loom_sbuf_t again = LOOM_SBUF_INIT;
        loom_stepio_encode(&again, m.type, m.rank, m.data, m.len);
        if (again.len != (size_t)used || memcmp(again.buf, buf + off, again.len) != 0)
            abort();
        loom_sbuf_free(&again);
        json_t *j = loom_stepio_json(&m);
        if (j && !json_is_object(j))
            abort();
        json_decref(j);
        (void)loom_stepio_type_name(m.type);
        off += (size_t)used;
    }
    free(buf);
    return 0;
}

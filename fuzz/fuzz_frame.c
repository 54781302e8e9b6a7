/*
 * fuzz_frame.c - the wire decoder: frame reader + body decoding + header
 * checks (docs/proto/frame.md, rpc.md).
 *
 * Input: byte 0 picks the reader's maximum (bit 0: 256 bytes, else the
 * default) and seeds the chunking; the rest is the byte stream a peer sends.
 * The stream is fed in chunks whose sizes come from the data itself, every
 * complete frame is decoded with and without the key (and with the key
 * required), and every message that decodes is checked, answered, re-encoded
 * and decoded again, which must give the same message.
 * The key is bytes 0..31; the clock is 1700000000.
 */
#include "common/frame.h"
#include "common/proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_NOW 1700000000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Plain re-encoding of a decoded message decodes to the same message. */
static void fuzz_reencode(const json_t *msg)
{
    json_t *copy = json_deep_copy(msg);
    json_object_del(copy, "auth");
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (loom_frame_encode(copy, NULL, &sb, NULL) == 0) {
        json_t *back = NULL;
        if (loom_frame_decode_body(sb.buf + 4, sb.len - 4, NULL, false, FUZZ_NOW, &back, NULL) !=
                0 ||
            !json_equal(copy, back))
            abort();
        json_decref(back);
    }
    loom_sbuf_free(&sb);
    json_decref(copy);
}

static void fuzz_body(const char *body, size_t len, const loom_key_t *key)
{
    for (int mode = 0; mode < 3; mode++) {
        json_t *msg = NULL;
        loom_err_t err;
        int rc = loom_frame_decode_body(body, len, mode == 0 ? NULL : key, mode == 2, FUZZ_NOW,
                                        &msg, &err);
        if (rc < 0) {
            if (msg)
                abort(); /* outputs untouched on failure */
            continue;
        }
        const loom_msg_type_t *t;
        uint64_t id;
        int crc = loom_msg_check(msg, &t, &id, &err);
        json_t *reply = loom_msg_reply(msg, crc, "%s", crc < 0 ? err.msg : "ok");
        if (reply && loom_msg_rc(reply, NULL) != crc)
            abort();
        json_decref(reply);
        fuzz_reencode(msg);
        json_decref(msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    static const uint8_t keybytes[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                         11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                         22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    loom_key_t *key = NULL;
    loom_key_from_bytes(keybytes, sizeof(keybytes), &key, NULL);
    loom_frame_reader_t *r = loom_frame_reader_create((buf[0] & 1) ? 256 : 0);
    size_t pos = 1, k = buf[0];
    int rc = 0;
    while (pos < size && rc == 0) {
        size_t chunk = 1 + buf[k++ % size] % 97;
        if (chunk > size - pos)
            chunk = size - pos;
        rc = loom_frame_reader_feed(r, buf + pos, chunk, NULL);
        pos += chunk;
        const char *body;
        size_t len;
        while (rc == 0 && (rc = loom_frame_reader_next(r, &body, &len, NULL)) == 1) {
            fuzz_body(body, len, key);
            rc = 0;
        }
        if (loom_frame_reader_buffered(r) > size)
            abort(); /* never more than what was sent */
    }
    loom_frame_reader_eof(r, NULL);
    loom_frame_reader_destroy(r);
    loom_key_destroy(key);
    free(buf);
    return 0;
}

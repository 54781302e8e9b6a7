/*
 * frame.h - framing of the wire protocol (docs/proto/frame.md).
 *
 * A frame is a 4-byte big-endian length N, then N bytes: one JSON object,
 * optionally followed (daemon frames) by a NUL and a 32-byte HMAC-SHA256 of
 * the JSON text. This file encodes frames, cuts them out of a byte stream
 * (loom_frame_reader_t) and decodes and verifies their bodies.
 *
 * Entry points: loom_frame_encode; loom_frame_reader_create / _destroy /
 * _feed / _next / _eof; loom_frame_decode_body; loom_frame_sender.
 *
 * Invariants of the reader (frame.md §2):
 *  - a length word of 0 or over the maximum fails feed() as soon as its 4
 *    bytes are in, before one byte of the body is stored;
 *  - it holds at most the complete frames not yet taken by next() plus one
 *    partial frame, and allocates only as data arrives (no allocation sized
 *    from an untrusted length word);
 *  - errors are sticky: after one, every call returns the same error, and the
 *    connection is to be closed.
 * Clocks are parameters (auth->ts, now), so tests are deterministic.
 */
#ifndef LOOM_FRAME_H
#define LOOM_FRAME_H

#include "common/auth.h"
#include "common/err.h"
#include "common/sbuf.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_FRAME_HDR       4                     /* the length word */
#define LOOM_FRAME_MAX_LIMIT (1024u * 1024 * 1024) /* no reader accepts more */
#define LOOM_AUTH_WINDOW     300                   /* seconds of clock skew accepted */
#define LOOM_AUTH_SENDER_MAX 255                   /* bytes in auth.sender */

/* What signs a daemon frame. */
typedef struct loom_frame_auth {
    const loom_key_t *key; /* the cluster key; required */
    const char *sender;    /* node name or "ctld", 1..LOOM_AUTH_SENDER_MAX bytes */
    int64_t ts;            /* the sender's clock, unix seconds */
    uint64_t nonce;        /* < 2^63, unique per sender within the window */
} loom_frame_auth_t;

/* Append one frame holding msg (a JSON object) to out. With auth, an
 * "auth":{"ts","nonce","sender"} member is added to the JSON text (msg is not
 * modified and must not already have one) and the MAC trailer appended.
 * Fails with -LOOM_EPROTO (not an object, already has "auth"), -LOOM_ERANGE
 * (bad auth fields) or -LOOM_EFRAME_TOOBIG (over LOOM_FRAME_MAX_LIMIT);
 * out is then as it was. */
int loom_frame_encode(const json_t *msg, const loom_frame_auth_t *auth, loom_sbuf_t *out,
                      loom_err_t *err);

typedef struct loom_frame_reader loom_frame_reader_t;

/* A reader accepting frames of at most max bytes (body + trailer); 0 means
 * LOOM_FRAME_MAX_DEFAULT, values over LOOM_FRAME_MAX_LIMIT are clamped. */
loom_frame_reader_t *loom_frame_reader_create(size_t max);
/* Accepts NULL. */
void loom_frame_reader_destroy(loom_frame_reader_t *r);

/* Copy len bytes received from the peer. Returns 0, or (sticky) -LOOM_EPROTO
 * for an empty frame and -LOOM_EFRAME_TOOBIG for an oversized one, detected
 * from the length word: the bytes after it are not stored.
 * Invalidates the bodies returned by next(). */
int loom_frame_reader_feed(loom_frame_reader_t *r, const void *data, size_t len, loom_err_t *err);

/* Take the next complete frame: returns 1 and sets *body and *len (body + trailer,
 * without the length word; valid until the next feed() or destroy()), 0 when
 * no complete frame is buffered, or the sticky error. */
int loom_frame_reader_next(loom_frame_reader_t *r, const char **body, size_t *len, loom_err_t *err);

/* The peer closed the stream: 0 when it did so between frames,
 * -LOOM_EFRAME_TRUNC when a partial frame is pending, or the sticky error.
 * Call after next() returned 0. */
int loom_frame_reader_eof(const loom_frame_reader_t *r, loom_err_t *err);

/* Bytes held (complete + partial frames), and bytes allocated. */
size_t loom_frame_reader_buffered(const loom_frame_reader_t *r);
size_t loom_frame_reader_capacity(const loom_frame_reader_t *r);

/* Decode a body from next(): split off the trailer, verify the MAC in
 * constant time before parsing anything, parse the JSON (duplicate keys
 * rejected), require an object, and for authenticated frames check the auth
 * member and that auth.ts lies within now ± LOOM_AUTH_WINDOW.
 * key may be NULL (no MAC can then be verified); require_auth refuses frames
 * without a MAC. Returns 1 (authenticated: the peer holds the key) or 0
 * (unauthenticated) and sets *msg (caller decrefs); or -LOOM_EPROTO
 * (malformed) / -LOOM_EAUTH (MAC or auth problem) with *msg untouched. */
int loom_frame_decode_body(const char *body, size_t len, const loom_key_t *key, bool require_auth,
                           int64_t now, json_t **msg, loom_err_t *err);

/* auth.sender of a decoded authenticated message (borrowed), or NULL. */
const char *loom_frame_sender(const json_t *msg);

#endif

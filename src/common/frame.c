/*
 * frame.c - frame encoding, the incremental reader, body decoding and MAC
 * checks. See frame.h and docs/proto/frame.md.
 */
#include "common/frame.h"

#include "common/jsonread.h"
#include "common/proto.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* A reader holding little keeps at most this much allocated (frame.md §2). */
#define FRAME_READER_KEEP (64u * 1024)

struct loom_frame_reader {
    uint8_t *buf;
    size_t cap;
    size_t max;      /* largest N accepted */
    size_t start;    /* first byte not yet taken by next() */
    size_t scan;     /* start of the first incomplete frame; [start, scan) are complete */
    size_t end;      /* bytes held: [start, end) */
    size_t cur_len;  /* N of the frame at scan, once its length word is in */
    loom_err_t fail; /* sticky error; fail.code == 0 while healthy */
};

/* ---- encoding ---- */

static int frame_dump_cb(const char *buffer, size_t size, void *data)
{
    loom_sbuf_addn(data, buffer, size);
    return 0;
}

static int frame_check_auth_args(const loom_frame_auth_t *auth, loom_err_t *err)
{
    size_t slen = auth->sender ? strlen(auth->sender) : 0;
    if (!auth->key)
        return loom_errf(err, -LOOM_ERANGE, "frame signing needs a cluster key");
    if (slen == 0 || slen > LOOM_AUTH_SENDER_MAX)
        return loom_errf(err, -LOOM_ERANGE, "frame sender name must have 1 to %d bytes",
                         LOOM_AUTH_SENDER_MAX);
    if (auth->nonce > (uint64_t)INT64_MAX)
        return loom_errf(err, -LOOM_ERANGE, "frame nonce %llu is over 2^63-1",
                         (unsigned long long)auth->nonce);
    return 0;
}

/* Replace the closing '}' of the JSON text in out by ,"auth":{...}} and append
 * the NUL + MAC trailer over the JSON text that starts at json_at. */
static int frame_sign(loom_sbuf_t *out, size_t json_at, bool empty_object,
                      const loom_frame_auth_t *auth)
{
    json_t *a = json_pack("{s:I, s:I, s:s}", "ts", (json_int_t)auth->ts, "nonce",
                          (json_int_t)auth->nonce, "sender", auth->sender);
    if (!a)
        return -LOOM_ERANGE; /* sender is not UTF-8 */
    loom_sbuf_truncate(out, out->len - 1);
    loom_sbuf_add(out, empty_object ? "\"auth\":" : ",\"auth\":");
    json_dump_callback(a, frame_dump_cb, out, JSON_COMPACT);
    json_decref(a);
    loom_sbuf_addc(out, '}');
    uint8_t mac[LOOM_MAC_SIZE];
    if (loom_key_hmac(auth->key, out->buf + json_at, out->len - json_at, mac) < 0)
        return -LOOM_EINTERNAL;
    loom_sbuf_addc(out, '\0');
    loom_sbuf_addn(out, (const char *)mac, sizeof(mac));
    return 0;
}

int loom_frame_encode(const json_t *msg, const loom_frame_auth_t *auth, loom_sbuf_t *out,
                      loom_err_t *err)
{
    if (!json_is_object(msg))
        return loom_errf(err, -LOOM_EPROTO, "a frame carries a JSON object");
    if (auth && json_object_get(msg, "auth"))
        return loom_errf(err, -LOOM_EPROTO, "message already has an 'auth' member");
    int rc = auth ? frame_check_auth_args(auth, err) : 0;
    if (rc < 0)
        return rc;
    size_t start = out->len;
    loom_sbuf_addn(out, "\0\0\0\0", LOOM_FRAME_HDR);
    /* jansson writes a NUL inside a string as \u0000: the text has none. */
    if (json_dump_callback(msg, frame_dump_cb, out, JSON_COMPACT) != 0)
        rc = loom_errf(err, -LOOM_EPROTO, "cannot serialise the message");
    if (rc == 0 && auth &&
        (rc = frame_sign(out, start + LOOM_FRAME_HDR, json_object_size(msg) == 0, auth)) < 0)
        loom_errf(err, rc, "cannot sign the frame");
    size_t n = out->len - start - LOOM_FRAME_HDR;
    if (rc == 0 && n > LOOM_FRAME_MAX_LIMIT)
        rc = loom_errf(err, -LOOM_EFRAME_TOOBIG, "message of %zu bytes is over the %u-byte limit",
                       n, LOOM_FRAME_MAX_LIMIT);
    if (rc < 0) {
        loom_sbuf_truncate(out, start);
        return rc;
    }
    uint8_t *hdr = (uint8_t *)out->buf + start;
    hdr[0] = (uint8_t)(n >> 24);
    hdr[1] = (uint8_t)(n >> 16);
    hdr[2] = (uint8_t)(n >> 8);
    hdr[3] = (uint8_t)n;
    return 0;
}

/* ---- the reader ---- */

loom_frame_reader_t *loom_frame_reader_create(size_t max)
{
    loom_frame_reader_t *r = loom_xcalloc(1, sizeof(*r));
    r->max = max == 0 ? LOOM_FRAME_MAX_DEFAULT : max;
    if (r->max > LOOM_FRAME_MAX_LIMIT)
        r->max = LOOM_FRAME_MAX_LIMIT;
    return r;
}

void loom_frame_reader_destroy(loom_frame_reader_t *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r);
}

static int reader_sticky(const loom_frame_reader_t *r, loom_err_t *err)
{
    if (err)
        *err = r->fail;
    return r->fail.code;
}

/* Drop the bytes taken by next(); give memory back once a big frame is gone. */
static void reader_compact(loom_frame_reader_t *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->scan -= r->start;
        r->end -= r->start;
        r->start = 0;
    }
    if (r->cap > FRAME_READER_KEEP && r->end <= FRAME_READER_KEEP) {
        r->buf = loom_xrealloc(r->buf, FRAME_READER_KEEP);
        r->cap = FRAME_READER_KEEP;
    }
}

/* Room for need bytes, doubling. Doubling keeps memory under twice the bytes
 * that actually arrived, never sized from a length word alone; for a big
 * frame (big_end != 0: its end) the last step stops at the frame's end. */
static void reader_reserve(loom_frame_reader_t *r, size_t need, size_t big_end)
{
    if (need <= r->cap)
        return;
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < need)
        cap *= 2;
    if (big_end >= need && cap > big_end)
        cap = big_end;
    r->buf = loom_xrealloc(r->buf, cap);
    r->cap = cap;
}

static int reader_fail(loom_frame_reader_t *r, int code, const char *what, size_t n,
                       loom_err_t *err)
{
    loom_errf(&r->fail, code, "%s frame: length word says %zu bytes, the limit is %zu", what, n,
              r->max);
    return reader_sticky(r, err);
}

/* The length word of the frame at scan is complete: check it. */
static int reader_header(loom_frame_reader_t *r, loom_err_t *err)
{
    const uint8_t *h = r->buf + r->scan;
    size_t n = ((size_t)h[0] << 24) | ((size_t)h[1] << 16) | ((size_t)h[2] << 8) | h[3];
    if (n == 0)
        return reader_fail(r, -LOOM_EPROTO, "empty", n, err);
    if (n > r->max)
        return reader_fail(r, -LOOM_EFRAME_TOOBIG, "oversized", n, err);
    r->cur_len = n;
    return 0;
}

int loom_frame_reader_feed(loom_frame_reader_t *r, const void *data, size_t len, loom_err_t *err)
{
    if (r->fail.code)
        return reader_sticky(r, err);
    reader_compact(r);
    const uint8_t *p = data;
    while (len > 0) {
        size_t have = r->end - r->scan;
        size_t frame_end = r->scan + LOOM_FRAME_HDR + (have >= LOOM_FRAME_HDR ? r->cur_len : 0);
        size_t take = frame_end - r->end < len ? frame_end - r->end : len;
        bool big = have >= LOOM_FRAME_HDR && r->cur_len > FRAME_READER_KEEP;
        reader_reserve(r, r->end + take, big ? frame_end : 0);
        memcpy(r->buf + r->end, p, take);
        r->end += take;
        p += take;
        len -= take;
        if (have < LOOM_FRAME_HDR && r->end - r->scan == LOOM_FRAME_HDR) {
            int rc = reader_header(r, err);
            if (rc < 0)
                return rc;
        } else if (r->end == frame_end && have >= LOOM_FRAME_HDR) {
            r->scan = r->end; /* one more complete frame */
        }
    }
    return 0;
}

int loom_frame_reader_next(loom_frame_reader_t *r, const char **body, size_t *len, loom_err_t *err)
{
    if (r->fail.code)
        return reader_sticky(r, err);
    if (r->start == r->scan)
        return 0;
    const uint8_t *h = r->buf + r->start;
    size_t n = ((size_t)h[0] << 24) | ((size_t)h[1] << 16) | ((size_t)h[2] << 8) | h[3];
    *body = (const char *)h + LOOM_FRAME_HDR;
    *len = n;
    r->start += LOOM_FRAME_HDR + n;
    return 1;
}

int loom_frame_reader_eof(const loom_frame_reader_t *r, loom_err_t *err)
{
    if (r->fail.code)
        return reader_sticky(r, err);
    if (r->end == r->scan)
        return 0;
    size_t have = r->end - r->scan;
    if (have < LOOM_FRAME_HDR)
        return loom_errf(err, -LOOM_EFRAME_TRUNC,
                         "connection closed inside a frame's length word (%zu of 4 bytes)", have);
    return loom_errf(err, -LOOM_EFRAME_TRUNC,
                     "connection closed inside a frame (%zu of %zu bytes received)",
                     have - LOOM_FRAME_HDR, r->cur_len);
}

size_t loom_frame_reader_buffered(const loom_frame_reader_t *r)
{
    return r->end - r->start;
}

size_t loom_frame_reader_capacity(const loom_frame_reader_t *r)
{
    return r->cap;
}

/* ---- decoding ---- */

/* |a - b| without overflow. */
static uint64_t frame_absdiff(int64_t a, int64_t b)
{
    return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

/* Security: the auth member is trusted only because the MAC covered it; check
 * its shape, then that it is fresh (the replay window, frame.md §3). */
static int frame_check_auth(const json_t *msg, int64_t now, loom_err_t *err)
{
    const json_t *a = json_object_get(msg, "auth");
    const json_t *ts = json_object_get(a, "ts");
    const json_t *nonce = json_object_get(a, "nonce");
    const json_t *sender = json_object_get(a, "sender");
    if (!json_is_object(a) || !json_is_integer(ts) || !json_is_integer(nonce) ||
        json_integer_value(nonce) < 0 || !json_is_string(sender) ||
        json_string_length(sender) == 0 || json_string_length(sender) > LOOM_AUTH_SENDER_MAX)
        return loom_errf(err, -LOOM_EAUTH,
                         "authenticated frame without a valid 'auth' member "
                         "{\"ts\":int,\"nonce\":int,\"sender\":string}");
    int64_t t = json_integer_value(ts);
    if (frame_absdiff(t, now) > LOOM_AUTH_WINDOW)
        return loom_errf(err, -LOOM_EAUTH,
                         "stale frame from '%s': its time %lld is %llu s away from ours (%lld); "
                         "clocks must agree within %d s",
                         json_string_value(sender), (long long)t,
                         (unsigned long long)frame_absdiff(t, now), (long long)now,
                         LOOM_AUTH_WINDOW);
    return 0;
}

/* Split body into JSON text and trailer; verify the MAC when there is one.
 * Returns 1 (MAC verified), 0 (no trailer) or an error. */
static int frame_verify(const char *body, size_t len, const loom_key_t *key, bool require_auth,
                        size_t *json_len, loom_err_t *err)
{
    const char *nul = memchr(body, '\0', len);
    if (!nul) {
        *json_len = len;
        if (require_auth)
            return loom_errf(err, -LOOM_EAUTH, "frame has no MAC; the cluster key is required");
        return 0;
    }
    size_t jlen = (size_t)(nul - body);
    if (len - jlen - 1 != LOOM_MAC_SIZE)
        return loom_errf(err, -LOOM_EPROTO, "MAC trailer has %zu bytes, expected %d",
                         len - jlen - 1, LOOM_MAC_SIZE);
    if (!key)
        return loom_errf(err, -LOOM_EAUTH, "frame has a MAC but no cluster key is configured");
    uint8_t mac[LOOM_MAC_SIZE];
    if (loom_key_hmac(key, body, jlen, mac) < 0)
        return loom_errf(err, -LOOM_EINTERNAL, "HMAC computation failed");
    if (!loom_mac_equal(mac, (const uint8_t *)nul + 1))
        return loom_errf(err, -LOOM_EAUTH, "bad MAC (is the cluster key the same on both ends?)");
    *json_len = jlen;
    return 1;
}

int loom_frame_decode_body(const char *body, size_t len, const loom_key_t *key, bool require_auth,
                           int64_t now, json_t **msg, loom_err_t *err)
{
    size_t jlen = 0;
    int authed = frame_verify(body, len, key, require_auth, &jlen, err);
    if (authed < 0)
        return authed;
    json_error_t je;
    json_t *j = loom_json_loadb(body, jlen, &je);
    int rc = 0;
    if (!j)
        rc = loom_errf(err, -LOOM_EPROTO, "malformed JSON at byte %d: %s", je.position, je.text);
    else if (!json_is_object(j))
        rc = loom_errf(err, -LOOM_EPROTO, "message is not a JSON object");
    else if (authed)
        rc = frame_check_auth(j, now, err);
    else if (json_object_get(j, "auth"))
        rc = loom_errf(err, -LOOM_EAUTH, "'auth' member in a frame without MAC");
    if (rc < 0) {
        json_decref(j);
        return rc;
    }
    *msg = j;
    return authed;
}

const char *loom_frame_sender(const json_t *msg)
{
    return json_string_value(json_object_get(json_object_get(msg, "auth"), "sender"));
}

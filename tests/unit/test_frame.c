/* test_frame.c - frame encoding, the incremental reader, body decoding and
 * MAC checks (docs/proto/frame.md). */
#include "common/frame.h"
#include "common/proto.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define NOW 1700000000

static loom_key_t *test_key(uint8_t fill)
{
    uint8_t b[32];
    memset(b, fill, sizeof(b));
    loom_key_t *k = NULL;
    assert_int_equal(loom_key_from_bytes(b, sizeof(b), &k, NULL), 0);
    return k;
}

static uint32_t be32(const char *p)
{
    const uint8_t *u = (const uint8_t *)p;
    return ((uint32_t)u[0] << 24) | ((uint32_t)u[1] << 16) | ((uint32_t)u[2] << 8) | u[3];
}

static json_t *sample(uint64_t id)
{
    json_t *m = loom_msg_new("job.submit", id);
    json_object_set_new(m, "script", json_string("#!/bin/sh\necho h\xc3\xa9llo\n"));
    json_object_set_new(m, "partition", json_string("gpu"));
    return m;
}

/* Decode the single frame in buf[0..len) through a reader. */
static int decode_one(const char *buf, size_t len, const loom_key_t *key, bool require, int64_t now,
                      json_t **msg, loom_err_t *err)
{
    loom_frame_reader_t *r = loom_frame_reader_create(0);
    assert_int_equal(loom_frame_reader_feed(r, buf, len, NULL), 0);
    const char *body;
    size_t blen;
    assert_int_equal(loom_frame_reader_next(r, &body, &blen, NULL), 1);
    int rc = loom_frame_decode_body(body, blen, key, require, now, msg, err);
    assert_int_equal(loom_frame_reader_next(r, &body, &blen, NULL), 0);
    assert_int_equal(loom_frame_reader_eof(r, NULL), 0);
    loom_frame_reader_destroy(r);
    return rc;
}

static void test_roundtrip_plain(void **state)
{
    json_t *m = sample(17);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    assert_int_equal(loom_frame_encode(m, NULL, &sb, NULL), 0);
    assert_int_equal(be32(sb.buf), sb.len - 4);
    assert_null(memchr(sb.buf + 4, '\0', sb.len - 4)); /* no trailer */
    json_t *got = NULL;
    assert_int_equal(decode_one(sb.buf, sb.len, NULL, false, NOW, &got, NULL), 0);
    assert_true(json_equal(m, got));
    json_decref(got);
    /* A key on the receiving side does not make a plain frame fail... */
    loom_key_t *k = test_key(1);
    assert_int_equal(decode_one(sb.buf, sb.len, k, false, NOW, &got, NULL), 0);
    json_decref(got);
    /* ...unless it requires authentication. */
    loom_err_t err;
    got = NULL;
    assert_int_equal(decode_one(sb.buf, sb.len, k, true, NOW, &got, &err), -LOOM_EAUTH);
    assert_null(got);
    assert_non_null(strstr(err.msg, "no MAC"));
    loom_key_destroy(k);
    loom_sbuf_free(&sb);
    json_decref(m);
}

static void test_roundtrip_auth(void **state)
{
    loom_key_t *k = test_key(7);
    json_t *m = sample(18);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_frame_auth_t a = {.key = k, .sender = "node01", .ts = NOW, .nonce = 99};
    assert_int_equal(loom_frame_encode(m, &a, &sb, NULL), 0);
    assert_int_equal(be32(sb.buf), sb.len - 4);
    assert_int_equal(sb.buf[sb.len - 33], '\0');
    assert_null(json_object_get(m, "auth")); /* msg untouched */
    json_t *got = NULL;
    assert_int_equal(decode_one(sb.buf, sb.len, k, true, NOW + 10, &got, NULL), 1);
    assert_string_equal(loom_frame_sender(got), "node01");
    json_t *auth = json_object_get(got, "auth");
    assert_int_equal(json_integer_value(json_object_get(auth, "ts")), NOW);
    assert_int_equal(json_integer_value(json_object_get(auth, "nonce")), 99);
    json_object_del(got, "auth");
    assert_true(json_equal(m, got));
    assert_null(loom_frame_sender(got));
    json_decref(got);
    loom_sbuf_free(&sb);

    /* An empty object gets {"auth":...}, without a stray comma. */
    json_t *empty = json_object();
    assert_int_equal(loom_frame_encode(empty, &a, &sb, NULL), 0);
    assert_memory_equal(sb.buf + 4, "{\"auth\":", 8);
    assert_int_equal(decode_one(sb.buf, sb.len, k, true, NOW, &got, NULL), 1);
    json_decref(got);
    json_decref(empty);
    loom_sbuf_free(&sb);
    json_decref(m);
    loom_key_destroy(k);
}

/* Three frames (plain, signed, plain) in one buffer. */
static void three_frames(loom_sbuf_t *sb, const loom_key_t *k)
{
    loom_frame_auth_t a = {.key = k, .sender = "ctld", .ts = NOW, .nonce = 1};
    for (uint64_t id = 1; id <= 3; id++) {
        json_t *m = sample(id);
        assert_int_equal(loom_frame_encode(m, id == 2 ? &a : NULL, sb, NULL), 0);
        json_decref(m);
    }
}

static void check_frame(const char *body, size_t len, const loom_key_t *k, uint64_t id)
{
    json_t *got = NULL;
    int rc = loom_frame_decode_body(body, len, k, false, NOW, &got, NULL);
    assert_int_equal(rc, id == 2 ? 1 : 0);
    uint64_t gid = 0;
    assert_int_equal(loom_msg_check(got, NULL, &gid, NULL), 0);
    assert_int_equal(gid, id);
    json_decref(got);
}

static void test_split_feeds(void **state)
{
    loom_key_t *k = test_key(3);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    three_frames(&sb, k);
    /* One byte at a time, then in odd chunks. */
    static const size_t chunks[] = {1, 2, 3, 5, 7, 64, 4096};
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        loom_frame_reader_t *r = loom_frame_reader_create(0);
        uint64_t seen = 0;
        for (size_t off = 0; off < sb.len; off += chunks[c]) {
            size_t n = sb.len - off < chunks[c] ? sb.len - off : chunks[c];
            assert_int_equal(loom_frame_reader_feed(r, sb.buf + off, n, NULL), 0);
            const char *body;
            size_t len;
            while (loom_frame_reader_next(r, &body, &len, NULL) == 1)
                check_frame(body, len, k, ++seen);
        }
        assert_int_equal(seen, 3);
        assert_int_equal(loom_frame_reader_eof(r, NULL), 0);
        assert_int_equal(loom_frame_reader_buffered(r), 0);
        loom_frame_reader_destroy(r);
    }
    loom_sbuf_free(&sb);
    loom_key_destroy(k);
}

static void test_many_in_one_feed(void **state)
{
    loom_key_t *k = test_key(3);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    three_frames(&sb, k);
    loom_frame_reader_t *r = loom_frame_reader_create(0);
    assert_int_equal(loom_frame_reader_feed(r, sb.buf, sb.len, NULL), 0);
    const char *body[3];
    size_t len[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(loom_frame_reader_next(r, &body[i], &len[i], NULL), 1);
    /* Bodies stay valid until the next feed. */
    for (int i = 0; i < 3; i++)
        check_frame(body[i], len[i], k, (uint64_t)i + 1);
    assert_int_equal(loom_frame_reader_next(r, &body[0], &len[0], NULL), 0);
    loom_frame_reader_destroy(r);
    loom_sbuf_free(&sb);
    loom_key_destroy(k);
}

static void test_oversized_before_body(void **state)
{
    /* A 4 GiB announcement followed by 1 MiB of junk in the same feed. */
    size_t junk = 1024 * 1024;
    char *buf = calloc(1, 4 + junk);
    memcpy(buf, "\xff\xff\xff\xff", 4);
    loom_frame_reader_t *r = loom_frame_reader_create(1024);
    loom_err_t err;
    assert_int_equal(loom_frame_reader_feed(r, buf, 4 + junk, &err), -LOOM_EFRAME_TOOBIG);
    assert_non_null(strstr(err.msg, "4294967295"));
    assert_true(loom_frame_reader_buffered(r) <= 4);
    assert_true(loom_frame_reader_capacity(r) <= 4096);
    /* Sticky. */
    const char *body;
    size_t len;
    assert_int_equal(loom_frame_reader_next(r, &body, &len, NULL), -LOOM_EFRAME_TOOBIG);
    assert_int_equal(loom_frame_reader_feed(r, "x", 1, NULL), -LOOM_EFRAME_TOOBIG);
    assert_int_equal(loom_frame_reader_eof(r, NULL), -LOOM_EFRAME_TOOBIG);
    loom_frame_reader_destroy(r);

    /* One past the limit, the length word fed a byte at a time. */
    r = loom_frame_reader_create(1024);
    static const char hdr[4] = {0, 0, 4, 1}; /* 1025 */
    for (int i = 0; i < 3; i++)
        assert_int_equal(loom_frame_reader_feed(r, hdr + i, 1, NULL), 0);
    assert_int_equal(loom_frame_reader_feed(r, hdr + 3, 1, NULL), -LOOM_EFRAME_TOOBIG);
    loom_frame_reader_destroy(r);

    /* Exactly the limit is fine. */
    r = loom_frame_reader_create(1024);
    memcpy(buf, "\0\0\4\0", 4);
    assert_int_equal(loom_frame_reader_feed(r, buf, 4 + 1024, NULL), 0);
    assert_int_equal(loom_frame_reader_next(r, &body, &len, NULL), 1);
    assert_int_equal(len, 1024);
    loom_frame_reader_destroy(r);
    free(buf);
}

/* A legal but large announcement allocates for what arrived, not for N. */
static void test_large_frame_memory_follows_data(void **state)
{
    loom_frame_reader_t *r = loom_frame_reader_create(0);
    static const char hdr[4] = {0, 0xff, 0, 0}; /* 16711680 bytes, under 16 MiB */
    assert_int_equal(loom_frame_reader_feed(r, hdr, 4, NULL), 0);
    assert_int_equal(loom_frame_reader_feed(r, "{\"v\":", 5, NULL), 0);
    assert_true(loom_frame_reader_capacity(r) <= 4096);
    loom_err_t err;
    assert_int_equal(loom_frame_reader_eof(r, &err), -LOOM_EFRAME_TRUNC);
    assert_non_null(strstr(err.msg, "5 of 16711680"));
    loom_frame_reader_destroy(r);

    /* After a big frame is taken, the buffer shrinks back. */
    size_t n = 300 * 1000;
    char *big = malloc(4 + n);
    big[0] = 0;
    big[1] = (char)(n >> 16);
    big[2] = (char)(n >> 8);
    big[3] = (char)n;
    memset(big + 4, ' ', n);
    r = loom_frame_reader_create(0);
    assert_int_equal(loom_frame_reader_feed(r, big, 4 + n, NULL), 0);
    assert_true(loom_frame_reader_capacity(r) >= 4 + n);
    assert_true(loom_frame_reader_capacity(r) < 2 * (4 + n));
    const char *body;
    size_t len;
    assert_int_equal(loom_frame_reader_next(r, &body, &len, NULL), 1);
    assert_int_equal(loom_frame_reader_feed(r, "\0", 1, NULL), 0);
    assert_true(loom_frame_reader_capacity(r) <= 64 * 1024);
    loom_frame_reader_destroy(r);
    free(big);
}

static void test_zero_length(void **state)
{
    loom_frame_reader_t *r = loom_frame_reader_create(0);
    loom_err_t err;
    assert_int_equal(loom_frame_reader_feed(r, "\0\0\0\0{}", 6, &err), -LOOM_EPROTO);
    assert_non_null(strstr(err.msg, "empty frame"));
    assert_int_equal(loom_frame_reader_buffered(r), 4);
    loom_frame_reader_destroy(r);
}

static void test_truncated(void **state)
{
    static const struct {
        const char *data;
        size_t len;
        const char *msg;
    } cases[] = {
        {"\0", 1, "1 of 4 bytes"},
        {"\0\0\0", 3, "3 of 4 bytes"},
        {"\0\0\0\x09{\"v\":1", 10, "6 of 9 bytes"},
        {"\0\0\0\x02{}\0\0\0\x02{", 11, "1 of 2 bytes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_frame_reader_t *r = loom_frame_reader_create(0);
        assert_int_equal(loom_frame_reader_feed(r, cases[i].data, cases[i].len, NULL), 0);
        const char *body;
        size_t len;
        while (loom_frame_reader_next(r, &body, &len, NULL) == 1)
            ;
        loom_err_t err;
        assert_int_equal(loom_frame_reader_eof(r, &err), -LOOM_EFRAME_TRUNC);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        loom_frame_reader_destroy(r);
    }
}

/* Bodies that are not one JSON object, or carry auth without a MAC. */
static void test_bad_bodies(void **state)
{
    static const struct {
        const char *body;
        size_t len; /* 0: strlen */
        int rc;
        const char *msg;
    } cases[] = {
        {"{", 0, -LOOM_EPROTO, "malformed JSON"},
        {"{\"a\":}", 0, -LOOM_EPROTO, "malformed JSON"},
        {"[1,2]", 0, -LOOM_EPROTO, "not a JSON object"},
        {"\"str\"", 0, -LOOM_EPROTO, "malformed JSON"},
        {"42", 0, -LOOM_EPROTO, "malformed JSON"},
        {"{\"a\":1}{}", 0, -LOOM_EPROTO, "malformed JSON"},
        {"{\"a\":1,\"a\":2}", 0, -LOOM_EPROTO, "duplicate"},
        {"{\"v\":1,\"x\":{\"k\":1,\"k\":1}}", 0, -LOOM_EPROTO, "duplicate"},
        {"{\"a\":\"\xff\xfe\"}", 0, -LOOM_EPROTO, "malformed JSON"},
        {"{\"a\":\"\\u0000\"}", 0, -LOOM_EPROTO, "malformed JSON"},
        {"{\"a\":99999999999999999999}", 0, -LOOM_EPROTO, "malformed JSON"},
        {" ", 0, -LOOM_EPROTO, "malformed JSON"},
        {"{\"v\":1,\"auth\":{\"ts\":1}}", 0, -LOOM_EAUTH, "without MAC"},
        {"{}\0short", 8, -LOOM_EPROTO, "trailer has 5 bytes"},
        {"{}\0", 3, -LOOM_EPROTO, "trailer has 0 bytes"},
        {" {\"v\":1} ", 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].body);
        json_t *got = NULL;
        loom_err_t err = {0};
        int rc = loom_frame_decode_body(cases[i].body, len, NULL, false, NOW, &got, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err.msg);
        if (rc < 0) {
            assert_null(got);
            if (!strstr(err.msg, cases[i].msg))
                fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        }
        json_decref(got);
    }
}

/* Whole frames whose headers are wrong: decoded fine, refused by the check. */
static void test_bad_headers(void **state)
{
    static const struct {
        const char *json;
        int rc;
    } cases[] = {
        {"{\"type\":\"ping\",\"id\":1}", -LOOM_EPROTO},
        {"{\"v\":1,\"id\":1}", -LOOM_EPROTO},
        {"{\"v\":1,\"type\":\"ping\"}", -LOOM_EPROTO},
        {"{\"v\":1,\"type\":\"ping\",\"id\":true}", -LOOM_EPROTO},
        {"{\"v\":2,\"type\":\"ping\",\"id\":1}", -LOOM_EMSG_VERSION},
        {"{\"v\":1,\"type\":\"nope\",\"id\":1}", -LOOM_EMSG_TYPE},
        {"{\"v\":1,\"type\":\"ping\",\"id\":1}", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *in = json_loads(cases[i].json, 0, NULL);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        assert_int_equal(loom_frame_encode(in, NULL, &sb, NULL), 0);
        json_t *got = NULL;
        assert_int_equal(decode_one(sb.buf, sb.len, NULL, false, NOW, &got, NULL), 0);
        assert_int_equal(loom_msg_check(got, NULL, NULL, NULL), cases[i].rc);
        json_t *reply = loom_msg_reply(got, cases[i].rc, NULL);
        /* Only a readable id earns a reply. */
        assert_int_equal(reply != NULL, strstr(cases[i].json, "\"id\":1") != NULL);
        json_decref(reply);
        json_decref(got);
        json_decref(in);
        loom_sbuf_free(&sb);
    }
}

/* Sign a hand-made JSON text with key: len + text + NUL + MAC. */
static void sign_raw(const char *json, const loom_key_t *k, loom_sbuf_t *out)
{
    size_t n = strlen(json);
    uint8_t mac[LOOM_MAC_SIZE];
    assert_int_equal(loom_key_hmac(k, json, n, mac), 0);
    loom_sbuf_addn(out, json, n);
    loom_sbuf_addc(out, '\0');
    loom_sbuf_addn(out, (const char *)mac, sizeof(mac));
}

static void test_mac_checks(void **state)
{
    loom_key_t *k = test_key(5), *other = test_key(6);
    json_t *m = sample(4);
    loom_frame_auth_t a = {.key = k, .sender = "n1", .ts = NOW, .nonce = 7};
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    assert_int_equal(loom_frame_encode(m, &a, &sb, NULL), 0);
    const char *body = sb.buf + 4;
    size_t len = sb.len - 4;
    static const struct {
        int keyno; /* 0 none, 1 right, 2 wrong */
        int64_t now;
        int flip; /* byte of the body to flip, -1 none */
        int rc;
        const char *msg;
    } cases[] = {
        {1, NOW, -1, 1, NULL},
        {1, NOW + LOOM_AUTH_WINDOW, -1, 1, NULL},
        {1, NOW - LOOM_AUTH_WINDOW, -1, 1, NULL},
        {1, NOW + LOOM_AUTH_WINDOW + 1, -1, -LOOM_EAUTH, "stale frame from 'n1'"},
        {1, NOW - LOOM_AUTH_WINDOW - 1, -1, -LOOM_EAUTH, "301 s away"},
        {1, INT64_MIN, -1, -LOOM_EAUTH, "stale"},
        {1, INT64_MAX, -1, -LOOM_EAUTH, "stale"},
        {2, NOW, -1, -LOOM_EAUTH, "bad MAC"},
        {0, NOW, -1, -LOOM_EAUTH, "no cluster key"},
        {1, NOW, 3, -LOOM_EAUTH, "bad MAC"},
        {1, NOW, -2, -LOOM_EAUTH, "bad MAC"}, /* last MAC byte */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *copy = malloc(len);
        memcpy(copy, body, len);
        if (cases[i].flip >= 0)
            copy[cases[i].flip] ^= 0x20;
        else if (cases[i].flip == -2)
            copy[len - 1] ^= 1;
        const loom_key_t *key = cases[i].keyno == 1 ? k : cases[i].keyno == 2 ? other : NULL;
        json_t *got = NULL;
        loom_err_t err = {0};
        int rc = loom_frame_decode_body(copy, len, key, true, cases[i].now, &got, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err.msg);
        if (rc < 0 && !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        json_decref(got);
        free(copy);
    }
    loom_sbuf_free(&sb);
    json_decref(m);
    loom_key_destroy(other);
    loom_key_destroy(k);
}

/* A valid MAC over a text whose auth member is malformed or absent. */
static void test_mac_bad_auth_member(void **state)
{
    loom_key_t *k = test_key(9);
    static const char *const texts[] = {
        "{\"v\":1}",
        "{\"auth\":1}",
        "{\"auth\":{\"ts\":1700000000,\"nonce\":1}}",
        "{\"auth\":{\"ts\":\"1700000000\",\"nonce\":1,\"sender\":\"n\"}}",
        "{\"auth\":{\"ts\":1700000000,\"nonce\":-1,\"sender\":\"n\"}}",
        "{\"auth\":{\"ts\":1700000000,\"nonce\":1,\"sender\":\"\"}}",
        "{\"auth\":{\"ts\":1700000000,\"nonce\":1.0,\"sender\":\"n\"}}",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        sign_raw(texts[i], k, &sb);
        json_t *got = NULL;
        loom_err_t err;
        int rc = loom_frame_decode_body(sb.buf, sb.len, k, false, NOW, &got, &err);
        if (rc != -LOOM_EAUTH)
            fail_msg("case %zu: rc %d (%s)", i, rc, err.msg);
        assert_null(got);
        loom_sbuf_free(&sb);
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    sign_raw("{\"auth\":{\"ts\":1700000000,\"nonce\":0,\"sender\":\"ctld\"}}", k, &sb);
    json_t *got = NULL;
    assert_int_equal(loom_frame_decode_body(sb.buf, sb.len, k, false, NOW, &got, NULL), 1);
    assert_string_equal(loom_frame_sender(got), "ctld");
    json_decref(got);
    loom_sbuf_free(&sb);
    loom_key_destroy(k);
}

static void test_encode_errors(void **state)
{
    loom_key_t *k = test_key(2);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, "keep");
    json_t *arr = json_array();
    json_t *m = sample(1);
    json_t *with_auth = json_pack("{s:i, s:{}}", "v", 1, "auth");
    char longname[LOOM_AUTH_SENDER_MAX + 2];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    loom_frame_auth_t ok = {.key = k, .sender = "n", .ts = NOW, .nonce = 1};
    loom_frame_auth_t nokey = {.key = NULL, .sender = "n"};
    loom_frame_auth_t empty = {.key = k, .sender = ""};
    loom_frame_auth_t toolong = {.key = k, .sender = longname};
    loom_frame_auth_t bignonce = {.key = k, .sender = "n", .nonce = 1ull << 63};
    loom_frame_auth_t badutf8 = {.key = k, .sender = "\xff"};
    static const int codes[] = {-LOOM_EPROTO, -LOOM_EPROTO, -LOOM_ERANGE, -LOOM_ERANGE,
                                -LOOM_ERANGE, -LOOM_ERANGE, -LOOM_ERANGE};
    const json_t *msgs[] = {arr, with_auth, m, m, m, m, m};
    const loom_frame_auth_t *auths[] = {NULL, &ok, &nokey, &empty, &toolong, &bignonce, &badutf8};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        loom_err_t err = {0};
        int rc = loom_frame_encode(msgs[i], auths[i], &sb, &err);
        if (rc != codes[i])
            fail_msg("case %zu: rc %d, want %d (%s)", i, rc, codes[i], err.msg);
        assert_int_equal(sb.len, 4); /* out as it was */
        assert_string_equal(loom_sbuf_str(&sb), "keep");
    }
    json_decref(arr);
    json_decref(m);
    json_decref(with_auth);
    loom_sbuf_free(&sb);
    loom_key_destroy(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_plain),
        cmocka_unit_test(test_roundtrip_auth),
        cmocka_unit_test(test_split_feeds),
        cmocka_unit_test(test_many_in_one_feed),
        cmocka_unit_test(test_oversized_before_body),
        cmocka_unit_test(test_large_frame_memory_follows_data),
        cmocka_unit_test(test_zero_length),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_bad_bodies),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_mac_checks),
        cmocka_unit_test(test_mac_bad_auth_member),
        cmocka_unit_test(test_encode_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

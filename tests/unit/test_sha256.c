/* test_sha256.c - SHA-256 and HMAC-SHA256 through the lazily loaded
 * libcrypto (FIPS 180-4 vectors, RFC 4231 test cases; sha256.c, auth.c). */
#include "common/auth.h"
#include "common/sha256.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < LOOM_SHA256_SIZE; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* FIPS 180-4 examples and the NIST short-message vectors around the
 * padding boundaries (55, 56, 63, 64 bytes). */
static void test_sha256_vectors(void **state)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrl"
         "mnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
        {"The quick brown fox jumps over the lazy dog",
         "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 55 */
         "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 56 */
         "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 63 */
         "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 64 */
         "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t d[LOOM_SHA256_SIZE];
        char h[2 * LOOM_SHA256_SIZE + 1];
        assert_int_equal(loom_sha256(cases[i].in, strlen(cases[i].in), d, NULL), 0);
        hex(d, h);
        assert_string_equal(h, cases[i].out);
    }
}

/* One million 'a' in one buffer (FIPS 180-2 appendix B.3). */
static void test_sha256_million(void **state)
{
    (void)state;
    char *m = malloc(1000000);
    assert_non_null(m);
    memset(m, 'a', 1000000);
    uint8_t d[LOOM_SHA256_SIZE];
    char h[2 * LOOM_SHA256_SIZE + 1];
    assert_int_equal(loom_sha256(m, 1000000, d, NULL), 0);
    free(m);
    hex(d, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    assert_int_equal(loom_sha256(NULL, 0, d, NULL), 0); /* NULL with no bytes */
    hex(d, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void unhex(const char *h, uint8_t *out, size_t *len)
{
    size_t n = strlen(h) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    *len = n;
}

/* RFC 4231 §4.2-4.8 (case 5 is a truncated MAC: not applicable). */
static void test_hmac_rfc4231_all(void **state)
{
    static const struct {
        const char *key, *data, *mac; /* hex */
    } cases[] = {
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
         "dddddddddddddd",
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {"0102030405060708090a0b0c0d0e0f10111213141516171819",
         "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
         "cdcdcdcdcdcdcd",
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaa", /* 131 bytes */
         "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73"
         "697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e"
         "20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e672075"
         "7365642062792074686520484d414320616c676f726974686d2e",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t key[200], data[200], mac[LOOM_MAC_SIZE];
        size_t klen, dlen;
        char h[2 * LOOM_MAC_SIZE + 1];
        unhex(cases[i].key, key, &klen);
        unhex(cases[i].data, data, &dlen);
        assert_int_equal(loom_hmac_sha256(key, klen, data, dlen, mac), 0);
        hex(mac, h);
        assert_string_equal(h, cases[i].mac);
    }
    /* Exactly one block of key: used as it is, not hashed. */
    uint8_t k64[64], mac[LOOM_MAC_SIZE];
    char h[2 * LOOM_MAC_SIZE + 1];
    memset(k64, 0x61, sizeof(k64));
    assert_int_equal(loom_hmac_sha256(k64, sizeof(k64), "", 0, mac), 0);
    hex(mac, h);
    assert_string_equal(h, "b389ef8fc24e40e35b42b70221b466916836a241257699d090bc736b8ad21b98");
}

static void test_wipe(void **state)
{
    uint8_t b[16];
    memset(b, 0xff, sizeof(b));
    loom_wipe(b, sizeof(b));
    for (size_t i = 0; i < sizeof(b); i++)
        assert_int_equal(b[i], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_sha256_million),
        cmocka_unit_test(test_hmac_rfc4231_all),
        cmocka_unit_test(test_wipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

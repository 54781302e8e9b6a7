/* test_auth.c - the cluster key file rules and HMAC-SHA256 (frame.md §3). */
#include "common/auth.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static int setup_dir(void **state)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/loom-auth-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Write size bytes to tmpdir/name with mode; returns the path (static). */
static const char *write_key(const char *name, size_t size, mode_t mode)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    for (size_t i = 0; i < size; i++) {
        char c = (char)(i * 7 + 1);
        assert_int_equal(write(fd, &c, 1), 1);
    }
    close(fd);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void hex(const uint8_t *mac, char *out)
{
    for (int i = 0; i < LOOM_MAC_SIZE; i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
}

/* RFC 4231 test case 2 (short key, through the primitive) and test case 6
 * (131-byte key, through a loom_key_t). */
static void test_hmac_rfc4231(void **state)
{
    uint8_t mac[LOOM_MAC_SIZE];
    char h[2 * LOOM_MAC_SIZE + 1];
    const char *data = "what do ya want for nothing?";
    assert_int_equal(loom_hmac_sha256("Jefe", 4, data, strlen(data), mac), 0);
    hex(mac, h);
    assert_string_equal(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    uint8_t key6[131];
    memset(key6, 0xaa, sizeof(key6));
    const char *data6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    loom_key_t *k = NULL;
    assert_int_equal(loom_key_from_bytes(key6, sizeof(key6), &k, NULL), 0);
    assert_int_equal(loom_key_hmac(k, data6, strlen(data6), mac), 0);
    hex(mac, h);
    assert_string_equal(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    uint8_t again[LOOM_MAC_SIZE];
    assert_int_equal(loom_key_hmac(k, data6, strlen(data6), again), 0);
    assert_true(loom_mac_equal(mac, again));
    again[31] ^= 1;
    assert_false(loom_mac_equal(mac, again));
    loom_key_destroy(k);
    loom_key_destroy(NULL);
}

static void test_key_from_bytes_range(void **state)
{
    uint8_t buf[LOOM_KEY_MAX + 1] = {0};
    loom_key_t *k = NULL;
    loom_err_t err;
    assert_int_equal(loom_key_from_bytes(buf, LOOM_KEY_MIN - 1, &k, &err), -LOOM_ERANGE);
    assert_null(k);
    assert_non_null(strstr(err.msg, "31 bytes"));
    assert_int_equal(loom_key_from_bytes(buf, LOOM_KEY_MAX + 1, &k, &err), -LOOM_ERANGE);
    assert_int_equal(loom_key_from_bytes(buf, LOOM_KEY_MAX, &k, &err), 0);
    loom_key_destroy(k);
}

static void test_key_load_modes(void **state)
{
    static const struct {
        size_t size;
        mode_t mode;
        int rc;
        const char *msg; /* a piece of the message, or NULL */
    } cases[] = {
        {32, 0600, 0, NULL},
        {32, 0400, 0, NULL},
        {1024, 0600, 0, NULL},
        {32, 0640, -LOOM_ECONFIG, "mode 0640"},
        {32, 0604, -LOOM_ECONFIG, "mode 0604"},
        {32, 0620, -LOOM_ECONFIG, "chmod 600"},
        {32, 0601, -LOOM_ECONFIG, "group and others"},
        {16, 0600, -LOOM_ERANGE, "16 bytes"},
        {0, 0600, -LOOM_ERANGE, "0 bytes"},
        {1025, 0600, -LOOM_ERANGE, "1025 bytes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *path = write_key("k", cases[i].size, cases[i].mode);
        loom_key_t *k = NULL;
        loom_err_t err = {0};
        int rc = loom_key_load(path, &k, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err.msg);
        if (cases[i].rc == 0) {
            assert_non_null(k);
        } else {
            assert_null(k);
            assert_non_null(strstr(err.msg, path));
            if (!strstr(err.msg, cases[i].msg))
                fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        }
        loom_key_destroy(k);
    }
}

static void test_key_load_not_regular_or_missing(void **state)
{
    loom_key_t *k = NULL;
    loom_err_t err;
    assert_int_equal(loom_key_load(tmpdir, &k, &err), -LOOM_ECONFIG);
    assert_non_null(strstr(err.msg, "not a regular file"));
    char path[128];
    snprintf(path, sizeof(path), "%s/missing", tmpdir);
    assert_int_equal(loom_key_load(path, &k, &err), -ENOENT);
    assert_non_null(strstr(err.msg, path));
    assert_null(k);
}

static void test_key_load_owner(void **state)
{
    if (geteuid() != 0)
        skip(); /* only root can give a file away */
    const char *path = write_key("owned", 32, 0600);
    assert_int_equal(chown(path, 4242, 4242), 0);
    loom_key_t *k = NULL;
    loom_err_t err;
    assert_int_equal(loom_key_load(path, &k, &err), -LOOM_ECONFIG);
    assert_non_null(strstr(err.msg, "owned by uid 4242"));
    assert_null(k);
}

static void test_key_generate(void **state)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/gen.key", tmpdir);
    unlink(path);
    mode_t old = umask(0);
    loom_err_t err;
    assert_int_equal(loom_key_generate(path, &err), 0);
    umask(old);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, LOOM_KEY_GEN_SIZE);
    loom_key_t *k = NULL;
    assert_int_equal(loom_key_load(path, &k, &err), 0);
    loom_key_destroy(k);
    assert_int_equal(loom_key_generate(path, &err), -EEXIST);
    assert_non_null(strstr(err.msg, path));

    /* Two generated keys differ (getrandom works). */
    char path2[160];
    snprintf(path2, sizeof(path2), "%s/gen2.key", tmpdir);
    unlink(path2);
    assert_int_equal(loom_key_generate(path2, &err), 0);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", path, path2);
    assert_int_not_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hmac_rfc4231),
        cmocka_unit_test(test_key_from_bytes_range),
        cmocka_unit_test(test_key_load_modes),
        cmocka_unit_test(test_key_load_not_regular_or_missing),
        cmocka_unit_test(test_key_load_owner),
        cmocka_unit_test(test_key_generate),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}

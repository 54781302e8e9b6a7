/*
 * auth.c - the cluster key and HMAC-SHA256. See auth.h and
 * docs/proto/frame.md §3.
 */
#include "common/auth.h"
#include "common/sha256.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

struct loom_key {
    size_t len;
    uint8_t bytes[]; /* len bytes */
};

static loom_key_t *auth_key_new(const void *bytes, size_t len)
{
    loom_key_t *k = loom_xmalloc(sizeof(*k) + len);
    k->len = len;
    memcpy(k->bytes, bytes, len);
    return k;
}

int loom_key_from_bytes(const void *bytes, size_t len, loom_key_t **key, loom_err_t *err)
{
    if (len < LOOM_KEY_MIN || len > LOOM_KEY_MAX)
        return loom_errf(err, -LOOM_ERANGE, "cluster key has %zu bytes; it must have %d to %d", len,
                         LOOM_KEY_MIN, LOOM_KEY_MAX);
    *key = auth_key_new(bytes, len);
    return 0;
}

void loom_key_destroy(loom_key_t *key)
{
    if (!key)
        return;
    loom_wipe(key->bytes, key->len);
    free(key);
}

/* Security: the key lets its holder act as any daemon, so only root or the
 * daemon's own user may own it, and nobody else may read or change it. */
static int auth_check_file(const char *path, const struct stat *st, loom_err_t *err)
{
    if (!S_ISREG(st->st_mode))
        return loom_errf(err, -LOOM_ECONFIG, "cluster key %s is not a regular file", path);
    if (st->st_mode & 077)
        return loom_errf(err, -LOOM_ECONFIG,
                         "cluster key %s has mode %04o; group and others must have no access "
                         "(chmod 600 %s)",
                         path, (unsigned)(st->st_mode & 07777), path);
    uid_t me = geteuid();
    if (st->st_uid != 0 && st->st_uid != me)
        return loom_errf(err, -LOOM_ECONFIG,
                         "cluster key %s is owned by uid %u; it must be owned by root or uid %u",
                         path, (unsigned)st->st_uid, (unsigned)me);
    return 0;
}

/* Read at most cap bytes; returns the count or -errno. */
static ssize_t auth_read_all(int fd, uint8_t *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int loom_key_load(const char *path, loom_key_t **key, loom_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return loom_errf(err, -errno, "cannot open cluster key %s: %s", path, strerror(errno));
    struct stat st;
    uint8_t buf[LOOM_KEY_MAX + 1];
    int rc = fstat(fd, &st) < 0
                 ? loom_errf(err, -errno, "cannot stat %s: %s", path, strerror(errno))
                 : auth_check_file(path, &st, err);
    ssize_t n = 0;
    if (rc == 0) {
        n = auth_read_all(fd, buf, sizeof(buf));
        if (n < 0)
            rc = loom_errf(err, (int)n, "cannot read cluster key %s: %s", path, strerror((int)-n));
    }
    close(fd);
    if (rc == 0) {
        rc = loom_key_from_bytes(buf, (size_t)n, key, err);
        if (rc < 0)
            loom_err_prefix(err, "%s", path);
    }
    loom_wipe(buf, sizeof(buf));
    return rc;
}

static int auth_random(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        got += (size_t)n;
    }
    return 0;
}

static int auth_write_all(int fd, const uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        done += (size_t)n;
    }
    return 0;
}

int loom_key_generate(const char *path, loom_err_t *err)
{
    uint8_t buf[LOOM_KEY_GEN_SIZE];
    int rc = auth_random(buf, sizeof(buf));
    if (rc < 0)
        return loom_errf(err, rc, "getrandom: %s", strerror(-rc));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        rc = loom_errf(err, -errno, "cannot create cluster key %s: %s", path, strerror(errno));
    } else {
        /* fchmod: the umask may have taken bits away, never added; be exact
         * before the key bytes land. */
        if (fchmod(fd, 0600) < 0)
            rc = -errno;
        if (rc == 0)
            rc = auth_write_all(fd, buf, sizeof(buf));
        if (rc == 0 && fsync(fd) < 0)
            rc = -errno;
        if (close(fd) < 0 && rc == 0)
            rc = -errno;
        if (rc < 0) {
            loom_errf(err, rc, "cannot write cluster key %s: %s", path, strerror(-rc));
            unlink(path);
        }
    }
    loom_wipe(buf, sizeof(buf));
    return rc;
}

int loom_hmac_sha256(const void *keybytes, size_t keylen, const void *data, size_t len,
                     uint8_t mac[LOOM_MAC_SIZE])
{
    return loom_hmac_sha256_raw(keybytes, keylen, data, len, mac, NULL);
}

int loom_key_hmac(const loom_key_t *key, const void *data, size_t len, uint8_t mac[LOOM_MAC_SIZE])
{
    return loom_hmac_sha256(key->bytes, key->len, data, len, mac);
}

bool loom_mac_equal(const uint8_t a[LOOM_MAC_SIZE], const uint8_t b[LOOM_MAC_SIZE])
{
    /* Constant time: every byte is compared whatever differs first. */
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < LOOM_MAC_SIZE; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

/*
 * sha256.c - SHA-256 and HMAC-SHA256 through libcrypto, loaded on first use.
 * See sha256.h.
 */
#include "common/sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SHA256_SONAME "libcrypto.so.3"

/* The libcrypto functions used here, resolved once from one dlopen handle. */
typedef struct sha256_lib {
    unsigned char *(*sha256)(const unsigned char *, size_t, unsigned char *);
    const EVP_MD *(*evp_sha256)(void);
    unsigned char *(*hmac)(const EVP_MD *, const void *, int, const unsigned char *, size_t,
                           unsigned char *, unsigned int *);
    char why[256]; /* empty when loaded */
} sha256_lib_t;

/* Written once under pthread_once, read-only afterwards (sha256.h). */
static sha256_lib_t sha256_the_lib;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static bool sha256_sym(void *dl, const char *name, void *slot)
{
    void *f = dlsym(dl, name);
    memcpy(slot, &f, sizeof(f)); /* object to function pointer, as POSIX allows */
    return f != NULL;
}

static void sha256_load(void)
{
    sha256_lib_t *lib = &sha256_the_lib;
    void *dl = dlopen(SHA256_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        snprintf(lib->why, sizeof(lib->why), "cannot load %s: %s", SHA256_SONAME, dlerror());
        return;
    }
    if (!sha256_sym(dl, "SHA256", &lib->sha256) ||
        !sha256_sym(dl, "EVP_sha256", &lib->evp_sha256) || !sha256_sym(dl, "HMAC", &lib->hmac))
        snprintf(lib->why, sizeof(lib->why), "%s lacks SHA256, EVP_sha256 or HMAC", SHA256_SONAME);
}

static const sha256_lib_t *sha256_lib(loom_err_t *err)
{
    pthread_once(&sha256_once, sha256_load);
    if (sha256_the_lib.why[0]) {
        loom_errf(err, -LOOM_ENOT_SUPPORTED, "%s", sha256_the_lib.why);
        return NULL;
    }
    return &sha256_the_lib;
}

int loom_sha256(const void *data, size_t len, uint8_t out[LOOM_SHA256_SIZE], loom_err_t *err)
{
    const sha256_lib_t *lib = sha256_lib(err);
    if (!lib)
        return -LOOM_ENOT_SUPPORTED;
    static const unsigned char none[1];
    lib->sha256(data ? data : none, len, out);
    return 0;
}

int loom_hmac_sha256_raw(const void *key, size_t keylen, const void *data, size_t len,
                         uint8_t mac[LOOM_SHA256_SIZE], loom_err_t *err)
{
    const sha256_lib_t *lib = sha256_lib(err);
    if (!lib)
        return -LOOM_ENOT_SUPPORTED;
    if (keylen > (size_t)INT32_MAX)
        return loom_errf(err, -EINVAL, "HMAC key of %zu bytes is too long", keylen);
    static const unsigned char none[1];
    unsigned int n = 0;
    if (!lib->hmac(lib->evp_sha256(), key ? key : none, (int)keylen, data ? data : none, len, mac,
                   &n) ||
        n != LOOM_SHA256_SIZE)
        return loom_errf(err, -EIO, "libcrypto's HMAC failed");
    return 0;
}

void loom_wipe(void *p, size_t len)
{
    explicit_bzero(p, len);
}

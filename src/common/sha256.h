/*
 * sha256.h - SHA-256 and HMAC-SHA256 from OpenSSL's libcrypto (DESIGN.md: the
 * frames' HMAC), the hash under auth.h's frame MAC and the digest that munge
 * credentials vouch for (munge.h).
 *
 * libcrypto is loaded with dlopen on the first call, not linked: linking it
 * costs every command about 0.7 ms of start-up (relocations), more than the
 * rest of a squeue over the local socket, which never hashes (bench/README.md).
 * Daemons and commands that talk TCP with the cluster key load it once.
 *
 * Entry points: loom_sha256 (one buffer), loom_hmac_sha256_raw (one MAC),
 * loom_wipe (memory that held a key).
 *
 * Invariants: the library is loaded at most once per process (pthread_once);
 * the resolved functions never change afterwards, so any thread may hash.
 */
#ifndef LOOM_SHA256_H
#define LOOM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define LOOM_SHA256_SIZE 32 /* digest bytes */

/* out = SHA-256(data[0..len)); data may be NULL when len is 0. 0, or
 * -LOOM_ENOT_SUPPORTED (with err) when libcrypto cannot be loaded. */
int loom_sha256(const void *data, size_t len, uint8_t out[LOOM_SHA256_SIZE], loom_err_t *err);

/* mac = HMAC-SHA256(key, data[0..len)) (RFC 2104); as loom_sha256. */
int loom_hmac_sha256_raw(const void *key, size_t keylen, const void *data, size_t len,
                         uint8_t mac[LOOM_SHA256_SIZE], loom_err_t *err);

/* Zero len bytes in a way the compiler cannot drop (key material). */
void loom_wipe(void *p, size_t len);

#endif

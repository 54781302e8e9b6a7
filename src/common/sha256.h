/*
 * sha256.h - SHA-256 (FIPS 180-4), the hash under the frames' HMAC (auth.h)
 * and the digest that munge credentials vouch for (munge.h).
 *
 * In-tree so that no program links libcrypto: loading libcrypto costs every
 * command about 0.7 ms of start-up (relocations), more than the rest of a
 * squeue over a local socket (bench/README.md). The code is the plain
 * algorithm: no table indexed by data, no branch on data, so its timing does
 * not depend on the (secret) bytes hashed.
 *
 * Entry points: loom_sha256_init, loom_sha256_update, loom_sha256_final (a
 * running hash), loom_sha256 (one buffer), loom_wipe (memory that held a key).
 *
 * Invariants: a context is plain data (copyable); final wipes it, so reuse
 * needs a new init.
 */
#ifndef LOOM_SHA256_H
#define LOOM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define LOOM_SHA256_SIZE  32 /* digest bytes */
#define LOOM_SHA256_BLOCK 64 /* block bytes (HMAC pads keys to this) */

typedef struct loom_sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t buf[LOOM_SHA256_BLOCK];
    size_t nbuf; /* bytes waiting in buf, < LOOM_SHA256_BLOCK */
} loom_sha256_t;

void loom_sha256_init(loom_sha256_t *s);
/* data may be NULL when len is 0. */
void loom_sha256_update(loom_sha256_t *s, const void *data, size_t len);
/* Write the digest and wipe the context. */
void loom_sha256_final(loom_sha256_t *s, uint8_t out[LOOM_SHA256_SIZE]);
/* out = SHA-256(data[0..len)). */
void loom_sha256(const void *data, size_t len, uint8_t out[LOOM_SHA256_SIZE]);

/* Zero len bytes in a way the compiler cannot drop (key material). */
void loom_wipe(void *p, size_t len);

#endif

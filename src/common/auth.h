/*
 * auth.h - the cluster key and HMAC-SHA256 (docs/proto/frame.md §3).
 *
 * Daemons share one key: a file of 32 to 1,024 bytes, used as they are (no
 * encoding). loom_key_load() refuses a file that group or others may access,
 * or that is owned by someone other than root or the calling user, because
 * whoever can read the key can act as any daemon of the cluster.
 *
 * Entry points: loom_key_load, loom_key_generate (for `loom up`),
 * loom_key_from_bytes (tests, keys received in memory), loom_key_destroy,
 * loom_key_hmac, loom_hmac_sha256, loom_mac_equal.
 *
 * Ownership: a loom_key_t is created by load/from_bytes and released with
 * loom_key_destroy(), which wipes the key bytes. Keys are immutable after
 * creation, so one key may be shared by many connections.
 */
#ifndef LOOM_AUTH_H
#define LOOM_AUTH_H

#include "common/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_KEY_MIN      32   /* bytes; the HMAC-SHA256 block security */
#define LOOM_KEY_MAX      1024 /* bytes; anything longer is a wrong file */
#define LOOM_KEY_GEN_SIZE 32   /* bytes written by loom_key_generate */
#define LOOM_MAC_SIZE     32   /* HMAC-SHA256 output */

typedef struct loom_key loom_key_t;

/* Read the key in path. Fails (outputs untouched) when the file is not a
 * regular file, is accessible by group or others (any of mode 077), is owned
 * by neither root nor the effective uid, or holds fewer than LOOM_KEY_MIN or
 * more than LOOM_KEY_MAX bytes. The message names the path, and the mode or
 * owner. Caller destroys *key. */
int loom_key_load(const char *path, loom_key_t **key, loom_err_t *err);

/* Create path (which must not exist) with mode 0600 holding
 * LOOM_KEY_GEN_SIZE bytes from getrandom(2). -EEXIST when it exists. */
int loom_key_generate(const char *path, loom_err_t *err);

/* A key from memory (len in [LOOM_KEY_MIN, LOOM_KEY_MAX]); bytes are copied. */
int loom_key_from_bytes(const void *bytes, size_t len, loom_key_t **key, loom_err_t *err);

/* Wipe and free. Accepts NULL. */
void loom_key_destroy(loom_key_t *key);

/* mac = HMAC-SHA256(keybytes, data[0..len)) for any key length (the
 * primitive under loom_key_hmac; known-answer tests use it), by libcrypto
 * loaded on first use (sha256.h). 0, or negative when it cannot be loaded. */
int loom_hmac_sha256(const void *keybytes, size_t keylen, const void *data, size_t len,
                     uint8_t mac[LOOM_MAC_SIZE]);

/* mac = HMAC-SHA256(key, data[0..len)); as loom_hmac_sha256. */
int loom_key_hmac(const loom_key_t *key, const void *data, size_t len, uint8_t mac[LOOM_MAC_SIZE]);

/* Constant-time comparison of two MACs. */
bool loom_mac_equal(const uint8_t a[LOOM_MAC_SIZE], const uint8_t b[LOOM_MAC_SIZE]);

#endif

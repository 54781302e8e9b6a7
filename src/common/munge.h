/*
 * munge.h - frames authenticated with munge, for commands on hosts that do
 * not hold the cluster key (AuthType=auth/munge; docs/proto/frame.md §3.1).
 *
 * A munge frame is a frame (frame.md §1) whose trailer, after the NUL, is a
 * munge credential ("MUNGE:...:") instead of an HMAC; the credential's
 * payload is the SHA-256 of the JSON text, so it vouches for exactly this
 * message, and munged refuses to decode one credential twice (replays) or
 * after its time to live. Decoding gives the uid and gid of the process
 * that encoded it, as munged on that host saw it: the receiver uses them as
 * it uses SO_PEERCRED on its Unix socket. The JSON text carries no "auth"
 * member.
 *
 * The munged socket comes from AuthInfo's "socket=<path>" (slurm.conf),
 * else libmunge's default. Built without libmunge (pkg-config munge), every
 * call fails with -LOOM_ENOT_SUPPORTED and loom_munge_available() is false.
 *
 * Entry points: loom_munge_open/_close, loom_munge_available,
 * loom_munge_socket, loom_munge_frame_is, loom_munge_frame_encode,
 * loom_munge_frame_decode.
 */
#ifndef LOOM_MUNGE_H
#define LOOM_MUNGE_H

#include "common/err.h"
#include "common/sbuf.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_MUNGE_PREFIX "MUNGE:"

typedef struct loom_munge loom_munge_t;

/* Is libmunge compiled in? */
bool loom_munge_available(void);

/* A handle on munged at socket (NULL: libmunge's default). Caller closes. */
int loom_munge_open(const char *socket, loom_munge_t **out, loom_err_t *err);
/* Accepts NULL. */
void loom_munge_close(loom_munge_t *m);

/* The socket path of an AuthInfo value ("socket=/run/munge/x,ttl=60"),
 * malloc'd, or NULL when it names none. */
char *loom_munge_socket(const char *authinfo);

/* Does a frame body (length word removed) end in a munge credential? */
bool loom_munge_frame_is(const char *body, size_t len);

/* Append a frame holding msg with a credential for it. */
int loom_munge_frame_encode(loom_munge_t *m, const json_t *msg, loom_sbuf_t *out, loom_err_t *err);

/* Verify a munge frame body and parse its JSON: *msg (caller decrefs), and
 * the credential's uid and gid. -LOOM_EAUTH when munged refuses the
 * credential (invalid, expired, replayed) or it is for another text;
 * -LOOM_EPROTO when the JSON is malformed. Outputs untouched on failure. */
int loom_munge_frame_decode(loom_munge_t *m, const char *body, size_t len, json_t **msg,
                            uint32_t *uid, uint32_t *gid, loom_err_t *err);

#endif

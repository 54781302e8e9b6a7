/*
 * rpcclient.h - the small blocking RPC client of the command-line tools
 * (docs/proto/rpc.md §2, §9).
 *
 * One connection, one request at a time: connect, call (send a request,
 * wait for the reply with the same id), close. Timeouts are poll()-based and
 * every system call is restarted on EINTR, so a command that handles
 * signals still gets a result or a timeout. Daemons use libuv instead.
 *
 * Addresses: "unix:/path/to/socket" or "host:port" ("[v6addr]:port" for
 * IPv6 literals). TCP connections set TCP_NODELAY.
 *
 * Entry points: loom_rpc_connect, loom_rpc_call, loom_rpc_close,
 * loom_rpc_set_sender, loom_rpc_set_frame_max, loom_rpc_set_munge.
 *
 * Errors: -LOOM_ECONNECT (cannot connect, connection lost) and
 * -LOOM_ETIMEDOUT, with the address in the message; frame and reply errors
 * from frame.h / proto.h. After a transport error the connection is dead and
 * every later call fails with -LOOM_ECONNECT.
 *
 * Ownership: the key passed to connect is borrowed and must outlive the
 * client; replies are new references the caller decrefs.
 */
#ifndef LOOM_RPCCLIENT_H
#define LOOM_RPCCLIENT_H

#include "common/auth.h"
#include "common/err.h"
#include "common/munge.h"

#include <jansson.h>
#include <stddef.h>

/* Per call, in milliseconds: Slurm's MessageTimeout default. */
#define LOOM_RPC_TIMEOUT_DEFAULT 10000

typedef struct loom_rpc loom_rpc_t;

/* Connect to addr within timeout_ms (0: LOOM_RPC_TIMEOUT_DEFAULT; < 0: no
 * limit; the same limit then applies to each call). With a key, requests are
 * signed and replies must be (frame.md §3). Returns NULL on failure. */
loom_rpc_t *loom_rpc_connect(const char *addr, const loom_key_t *key, int timeout_ms,
                             loom_err_t *err);

/* The auth.sender of signed requests (default: the short host name). */
void loom_rpc_set_sender(loom_rpc_t *c, const char *sender);
/* Largest reply frame accepted (default LOOM_FRAME_MAX_DEFAULT). */
void loom_rpc_set_frame_max(loom_rpc_t *c, size_t max);
/* Authenticate with munge instead (a host without the cluster key; munge.h):
 * requests carry a credential, and replies must carry one from uid 0 or
 * daemon_uid (the SlurmUser). m is borrowed and must outlive the client. */
void loom_rpc_set_munge(loom_rpc_t *c, loom_munge_t *m, uint32_t daemon_uid);

/* Send req (a JSON object, usually from loom_msg_new; its "id" is replaced by
 * the connection's next id, its other members are the caller's) and wait for
 * the reply with that id. On success *reply holds the reply (type "reply";
 * its rc is the caller's to decode with loom_msg_rc) and 0 is returned. On
 * failure *reply is untouched. req stays the caller's. */
int loom_rpc_call(loom_rpc_t *c, json_t *req, json_t **reply, loom_err_t *err);

/* Close and free. Accepts NULL. */
void loom_rpc_close(loom_rpc_t *c);

#endif

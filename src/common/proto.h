/*
 * proto.h - the message registry and message helpers (docs/proto/rpc.md).
 *
 * Every message is a JSON object {"v":1,"type":"job.submit","id":17,...}.
 * This file owns the one table of message types — name, required role,
 * since-version — and the helpers that build requests and replies and check
 * their headers. Frames (length word, MAC) are frame.h's business.
 *
 * Entry points: loom_proto_lookup / loom_proto_count / loom_proto_at /
 * loom_proto_index (the registry), loom_role_permits, loom_msg_new,
 * loom_msg_reply, loom_msg_check, loom_msg_rc.
 *
 * Dispatch is built by pairing the registry with a daemon's handler table,
 * so that the role check and the version check live in one place:
 *
 *     typedef int ctld_handler_f(ctld_t *c, const loom_peer_t *peer,
 *                                const json_t *req, json_t **reply);
 *     static const struct { const char *name; ctld_handler_f *fn; } ctld_handlers[] = {
 *         {"ping", ctld_ping}, {"job.submit", ctld_job_submit}, ...
 *     };
 *     // at start: a table indexed like the registry
 *     ctld_handler_f **fns = loom_xcalloc(loom_proto_count(), sizeof(*fns));
 *     for (i = 0; i < ARRAY_SIZE(ctld_handlers); i++) {
 *         const loom_msg_type_t *t = loom_proto_lookup(ctld_handlers[i].name);
 *         assert(t);   // a handler for an unregistered type is a bug
 *         fns[loom_proto_index(t)] = ctld_handlers[i].fn;
 *     }
 *     // per message:
 *     rc = loom_msg_check(msg, &t, &id, &err);          // v window, known type, id
 *     if (rc == 0 && !fns[loom_proto_index(t)]) rc = -LOOM_EMSG_TYPE;  // not ours
 *     if (rc == 0 && !loom_role_permits(t->role, peer->role)) rc = -LOOM_EPERM;
 *     if (rc == 0) rc = fns[loom_proto_index(t)](c, peer, msg, &reply);
 *     else reply = loom_msg_reply(msg, rc, "%s", err.msg);  // NULL: drop the connection
 *
 * Ownership: json_t values returned here are new references the caller
 * decrefs; strings returned through const char ** are borrowed from the
 * message and live as long as it does.
 */
#ifndef LOOM_PROTO_H
#define LOOM_PROTO_H

#include "common/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_PROTO_VERSION     1
#define LOOM_PROTO_MIN_VERSION 1
/* Default maximum frame (body + trailer) a receiver accepts: frame.md §2. */
#define LOOM_FRAME_MAX_DEFAULT (16u * 1024 * 1024)
/* Longest message type name, in bytes. */
#define LOOM_MSG_TYPE_MAX 63

/* Roles (rpc.md §4): what a message requires, and what a peer holds. */
typedef enum loom_role {
    LOOM_ROLE_USER = 0, /* any identified local client */
    LOOM_ROLE_ADMIN,    /* uid 0 or SlurmUser */
    LOOM_ROLE_NODE,     /* a frame with a valid cluster-key MAC */
} loom_role_t;

typedef struct loom_msg_type {
    const char *name; /* "job.submit" */
    loom_role_t role; /* least role the sender must hold */
    int since;        /* first protocol version that has it */
} loom_msg_type_t;

/* The registry entry for name, or NULL. */
const loom_msg_type_t *loom_proto_lookup(const char *name);
/* Number of registered types; loom_proto_at(i) for i < count. */
size_t loom_proto_count(void);
const loom_msg_type_t *loom_proto_at(size_t i);
/* Position of a registry entry (for arrays indexed like the registry). */
size_t loom_proto_index(const loom_msg_type_t *t);

/* "user", "admin", "node". */
const char *loom_role_name(loom_role_t role);
/* Does a peer holding `held` satisfy `required`? node ⊇ admin ⊇ user. */
bool loom_role_permits(loom_role_t required, loom_role_t held);

/* {"v":LOOM_PROTO_VERSION,"type":type,"id":id}. id must be < 2^63. */
json_t *loom_msg_new(const char *type, uint64_t id);

/* A reply to req: {"v":..,"type":"reply","id":<req id>,"rc":0|"NAME","msg":"..."}.
 * rc is 0 or a negative code; fmt may be NULL (msg is then "" for success and
 * loom_strerror(rc) for failure, as is an empty formatted text on failure).
 * Returns NULL when req has no readable id (rpc.md §6: drop the connection). */
json_t *loom_msg_reply(const json_t *req, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Check a received message's header (rpc.md §6, in order): an object with an
 * id (-LOOM_EPROTO), v and type well-typed (-LOOM_EPROTO), v in the window
 * (-LOOM_EMSG_VERSION), type registered and not newer than v
 * (-LOOM_EMSG_TYPE). On success fills *type and *id (either may be NULL). */
int loom_msg_check(const json_t *msg, const loom_msg_type_t **type, uint64_t *id, loom_err_t *err);

/* Decode a reply's rc: 0, the negative code of a known name, or -LOOM_EPROTO
 * when rc is missing, ill-typed or an unknown name. *msg (when msg is not
 * NULL) gets the reply's text, or loom_strerror() of the code when the reply
 * has none; never NULL. */
int loom_msg_rc(const json_t *reply, const char **msg);

#endif

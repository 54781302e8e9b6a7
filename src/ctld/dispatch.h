/*
 * dispatch.h - the handler table paired with the message registry
 * (docs/proto/rpc.md §4-§7; STYLE.md "one registry of message types").
 *
 * At start the daemon's handlers (h_jobs.c, h_misc.c) are paired with the
 * registry of src/common/proto.c; per message, the header, the type and the
 * peer's role are checked here, from the registry, before a handler runs.
 *
 * Every handler has one shape: decode, validate, authorize (a `Security:`
 * comment), act, reply; one error exit. A handler returns its reply (or
 * writes a prebuilt reply text into raw, the job.info fast path). When the
 * handler changed state, the reply waits until the journal entries it caused
 * are durable (loom_journal_wait): the durability promise.
 */
#ifndef LOOM_CTLD_DISPATCH_H
#define LOOM_CTLD_DISPATCH_H

#include "common/sbuf.h"
#include "ctld/ctld.h"

/* A handler returns this when it answers later itself (ctld_server_send on
 * peer->conn, which it references meanwhile): step.create, step.stat. */
#define CTLD_REPLY_LATER 1

typedef int ctld_handler_f(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                           loom_sbuf_t *raw);

typedef struct ctld_handler {
    const char *type;
    ctld_handler_f *fn;
} ctld_handler_t;

/* The handler tables of h_jobs.c and h_misc.c (NULL-terminated). */
extern const ctld_handler_t ctld_job_handlers[];
extern const ctld_handler_t ctld_misc_handlers[];

/* Build the table; an unregistered handler type is a bug (error). */
int ctld_dispatch_init(ctld_t *c, loom_err_t *err);
void ctld_dispatch_fini(ctld_t *c);
/* The server's message callback. */
void ctld_dispatch(ctld_t *c, ctld_conn_t *conn, const ctld_peer_t *peer, json_t *msg);

/* Helpers for handlers. */
/* Security: the job's owner or an administrator. */
bool ctld_may_touch(const ctld_t *c, const ctld_peer_t *peer, const ctld_job_t *job);

#endif

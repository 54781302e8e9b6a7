/*
 * server.h - loomctld's listeners and connections (docs/proto/frame.md, rpc.md §4, §9).
 *
 * Two listeners:
 *  - the Unix socket <StateSaveLocation>/loomctld.sock (mode 0666) for local
 *    commands; the peer's uid/gid come from SO_PEERCRED. Frames may be plain
 *    (role user, or admin for root/SlurmUser) or signed with the cluster key
 *    (role node);
 *  - TCP on SlurmctldHost's address and SlurmctldPort for loomd and remote
 *    clients: every frame must carry a valid HMAC (role node). An unsigned
 *    frame gets an LOOM_EAUTH reply saying so and the connection is closed.
 *
 * A frame whose MAC or auth member is bad is logged and the connection
 * closed; an oversized, empty or truncated frame closes the connection; a
 * body that is not a JSON object closes it; a well-formed object with a bad
 * header gets an error reply (rpc.md §6). Nothing a peer sends can crash the
 * daemon or make it allocate more than the frame limit.
 *
 * Both sides of a loomd link send requests: ctld_server_request() assigns the
 * next id and calls back with the reply, or with NULL when the connection
 * ends first.
 *
 * Connections are reference counted (ctld_conn_ref/unref) so that a reply held
 * back until the journal is durable can outlive a closed connection safely.
 */
#ifndef LOOM_CTLD_SERVER_H
#define LOOM_CTLD_SERVER_H

#include "ctld/ctld.h"

#include <jansson.h>

/* Called for every decoded message (borrowed). */
typedef void ctld_msg_f(ctld_t *c, ctld_conn_t *conn, const ctld_peer_t *peer, json_t *msg);
/* A reply to one of our requests (borrowed), or NULL when the link ended. */
typedef void ctld_reply_f(ctld_t *c, void *arg, json_t *reply);

int ctld_server_start(ctld_t *c, ctld_msg_f *on_msg, loom_err_t *err);
/* Stop listening and close every connection. */
void ctld_server_stop(ctld_t *c);
/* Free what stop left (after the loop closed the handles). */
void ctld_server_destroy(ctld_t *c);

/* Send msg (borrowed) on conn, signed when the peer signs. Closed or closing
 * connections drop it. */
void ctld_server_send(ctld_conn_t *conn, const json_t *msg);
/* Send a reply whose JSON text is already built (the job.info fast path). */
void ctld_server_send_text(ctld_conn_t *conn, const char *text, size_t len);
/* Send a request (borrowed; its id is replaced); cb (may be NULL) runs once. Returns 0, or
 * -LOOM_ECONNECT when the connection is closed (cb is not called). */
int ctld_server_request(ctld_conn_t *conn, const json_t *req, ctld_reply_f *cb, void *arg);
void ctld_server_close(ctld_conn_t *conn);

void ctld_conn_ref(ctld_conn_t *conn);
void ctld_conn_unref(ctld_conn_t *conn);
bool ctld_conn_open(const ctld_conn_t *conn);
/* Whether frames on conn are signed (the peer proved it holds the key). */
bool ctld_conn_signed(const ctld_conn_t *conn);
/* The node whose loomd link this is (NULL for others). */
void ctld_conn_set_node(ctld_conn_t *conn, ctld_node_t *node);
ctld_node_t *ctld_conn_node(const ctld_conn_t *conn);

/* Number of open connections (tests, logs). */
size_t ctld_server_nconns(const ctld_t *c);

#endif

/*
 * loomdbd.h - the accounting daemon: one context struct, created in main and
 * passed down (docs/proto/messages.md §6; Slurm's slurmdbd).
 *
 * Threads: the libuv loop owns every field; SQL runs on the libuv thread
 * pool, one request at a time (dbd_server.c keeps a FIFO), so the store
 * connection is only ever used by one thread at once and needs no lock. A
 * worker touches only its job (request, reply) and the store.
 *
 * Listeners: the Unix socket <dir of the SQLite file, or StateSaveLocation>/
 * loomdbd.sock (mode 0666; callers identified by SO_PEERCRED), and TCP on
 * DbdAddr/DbdHost:DbdPort (default AccountingStoragePort, else 6819) where
 * every frame must carry the cluster key's HMAC (loomctld).
 *
 * The database may be down: requests then fail with the back end's error,
 * and the next request reopens the store.
 *
 * Entry points: dbd_server_start/stop (loomdbd_server.c), dbd_handler_find
 * and dbd_store_ensure (loomdbd_ops.c).
 */
#ifndef LOOM_DBD_LOOMDBD_H
#define LOOM_DBD_LOOMDBD_H

#include "common/auth.h"
#include "common/conf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/strv.h"
#include "dbd/dbdconf.h"
#include "dbd/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

typedef struct dbd_conn dbd_conn_t;
typedef struct dbd_job dbd_job_t;
typedef struct dbd_wait dbd_wait_t;
typedef struct dbd_held dbd_held_t;

typedef struct dbd_peer {
    loom_role_t role;
    uid_t uid;
    char user[64]; /* the uid's name ("" for key holders) */
    char addr[64]; /* a TCP peer's IP address ("" on the Unix socket) */
} dbd_peer_t;

typedef struct dbd {
    uv_loop_t *loop;
    loom_conf_t *conf; /* slurm.conf */
    loom_dbdconf_t dbdconf;
    char *store_type, *store_loc; /* "sqlite" + path, or "pgsql" + conninfo */
    char *cluster;                /* ClusterName */
    loom_key_t *key;              /* the cluster key, when readable */
    loom_strv_t tres_known;       /* gres/... from AccountingStorageTRES and GresTypes */
    uid_t slurm_uid;
    loom_store_t *st; /* worker-thread only once the loop runs */
    bool store_inited;
    char *sock_path;
    int lock_fd; /* loomdbd.lock beside the socket, held while it runs (0: not taken) */
    char *tcp_host;
    int tcp_port;
    uv_pipe_t unix_srv;
    uv_tcp_t tcp_srv;
    bool tcp_on;
    uv_signal_t sigterm, sigint;
    dbd_conn_t *conns;
    dbd_job_t *q_head, *q_tail;
    bool busy, stopping;
    uint64_t nonce;
    /* Worker thread: each committed entity change bumps acct_gen; list
     * replies carry "<acct_epoch>.<acct_gen>" (messages.md §6.2). */
    int64_t acct_epoch;
    uint64_t acct_gen;
    /* Loop side (loomdbd_server.c): the generation as of the last finished
     * request, controllers parked in dbd.assoc.wait, and change replies held
     * until every waiting controller has read past them (messages.md §6.2). */
    uint64_t loop_gen;
    char loop_gen_str[48];
    dbd_wait_t *waits;
    dbd_held_t *held;
    uv_timer_t wait_timer;
    bool wait_timer_on;
} dbd_t;

/* What a request handler does on the worker thread: fill out (the reply's
 * payload) or return a negative code with err filled. */
typedef int dbd_work_f(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                       loom_err_t *err);

typedef struct dbd_handler {
    const char *name;
    dbd_work_f *fn;
    int ent; /* the loom_acct_ent_t of entity messages, else -1 */
    char op; /* 'a' add, 'm' modify, 'd' delete, 'l' list; 0 for others */
} dbd_handler_t;

/* The handler of a registered type that needs the database, or NULL. */
const dbd_handler_t *dbd_handler_find(const char *type);
/* The internal handler run when a controller's registering connection
 * closes: body cluster, control_host, control_port (as registered). */
const dbd_handler_t *dbd_handler_unregister(void);
/* Open the store (and create what a fresh database holds) if it is not open. */
int dbd_store_ensure(dbd_t *d, loom_err_t *err);
/* Close a store whose connection failed, so that the next request reopens it. */
void dbd_store_check(dbd_t *d, int rc);

int dbd_server_start(dbd_t *d, loom_err_t *err);
void dbd_server_stop(dbd_t *d);

#endif

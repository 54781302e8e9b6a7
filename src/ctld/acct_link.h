/*
 * acct_link.h - loomctld's link to loomdbd: delivers the accounting spool
 * (acct_spool.h) through dbd.job (docs/proto/messages.md §6.1).
 *
 * One request at a time, on libuv's thread pool with the blocking RPC
 * client: connect (loomdbd's Unix socket <StateSaveLocation>/loomdbd.sock
 * when it is there, else TCP AccountingStorageHost:AccountingStoragePort,
 * default 6819; frames signed with the cluster key), read the next durable
 * records after the acknowledged seq from the spool files (at most 10,000),
 * send them as one dbd.job, and on its reply drop everything up to `acked`.
 * On any error the connection is closed, nothing is dropped, and the next
 * try waits 1 s, doubling up to 10 s. Records are upserts on loomdbd's side,
 * so a batch sent again after a lost reply is stored once.
 *
 * Capacity records (cluster_tres) are not spooled: the latest few wait in
 * memory and go first in a request of their own; when loomdbd refuses them
 * (an older loomdbd) they are dropped, and the job records go on.
 *
 * Each new connection first registers the cluster (dbd.register: the
 * cluster name, SlurmctldHost's address, SlurmctldPort and Slurm 22.05's RPC
 * version, as slurmctld registers with slurmdbd); a refusal is logged and
 * the records go on.
 *
 * State changes (connected, lost, backlog over CTLD_ACCT_BACKLOG_LOG and
 * drained) are logged once each, not per retry.
 *
 * Loop thread only, except the work function.
 * Entry points: ctld_acct_link_new, _kick, _tres, _stop, _describe.
 */
#ifndef LOOM_CTLD_ACCT_LINK_H
#define LOOM_CTLD_ACCT_LINK_H

#include "common/auth.h"
#include "common/conf.h"
#include "common/sbuf.h"
#include "ctld/acct_spool.h"

#include <jansson.h>
#include <uv.h>

#define CTLD_ACCT_BACKLOG_LOG 10000 /* records waiting: logged once */
#define CTLD_ACCT_TRES_KEEP   64    /* capacity records kept while loomdbd is away */
#define CTLD_ACCT_RPC_VERSION 9728  /* SLURM_22_05_PROTOCOL_VERSION, as sacctmgr shows it */

typedef struct ctld_acct_link ctld_acct_link_t;

/* sp and key are borrowed and must outlive the link. */
ctld_acct_link_t *ctld_acct_link_new(uv_loop_t *loop, ctld_acct_spool_t *sp,
                                     const loom_conf_t *conf, const loom_key_t *key);
/* New durable records (or time passed): send when nothing is under way.
 * kick, tres and describe take NULL (a stopped link) too. */
void ctld_acct_link_kick(ctld_acct_link_t *l);
/* Queue a capacity record (stolen). */
void ctld_acct_link_tres(ctld_acct_link_t *l, json_t *rec);
/* Stop sending; the link frees itself once its request is done, so the
 * caller drops its pointer now (a later kick would touch freed memory). */
void ctld_acct_link_stop(ctld_acct_link_t *l);
/* "connected to X" / "down since T, N records spooled". */
void ctld_acct_link_describe(const ctld_acct_link_t *l, loom_sbuf_t *out);

#endif

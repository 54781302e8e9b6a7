/*
 * node_mgr.h - nodes and partitions: tables from slurm.conf and gres.conf,
 * registration, heartbeats, timeouts, admin updates (messages.md §1.1, §1.2,
 * §4; docs/proto/node-states.md; CLI_SPEC §7.3, §9, §13).
 *
 * A node's stored base state is UNKNOWN (never registered since start), IDLE
 * (registered), DOWN or FUTURE; ALLOCATED/MIXED are derived from the node
 * model when reported. Flags: DRAIN, INVALID_REG, NO_RESPOND, FAIL.
 *
 * Registration (node.register) checks the node's CPUs, memory and GPUs
 * against slurm.conf: fewer than configured drains it with INVALID_REG and
 * Slurm's reason ("Low RealMemory (reported:X < 100.00% of configured:Y)").
 * It returns a DOWN node to service per ReturnToService (0: never; 1: only
 * when it was DOWN for not responding; 2: always). It reconciles jobs: the
 * jobs the node reports done are completed; jobs the controller believes run
 * there but the node does not report are NODE_FAIL (requeued when allowed);
 * jobs the node runs that the controller does not know are killed.
 *
 * Timeouts: a node not heard from for SlurmdTimeout seconds goes
 * DOWN+NOT_RESPONDING with reason "Not responding", and its jobs NODE_FAIL.
 *
 * Changes of the admin-visible state are journaled as node.state events
 * (ctld_commit) so that DRAIN and DOWN survive a restart; nodes that were up
 * come back UNKNOWN until they register again.
 */
#ifndef LOOM_CTLD_NODE_MGR_H
#define LOOM_CTLD_NODE_MGR_H

#include "ctld/ctld.h"

/* Build nodes, partitions and the sched model from c->conf / c->gresconf. */
int ctld_node_mgr_init(ctld_t *c, loom_err_t *err);
void ctld_node_mgr_fini(ctld_t *c);

ctld_node_t *ctld_node_find(const ctld_t *c, const char *name);
/* The state word as reported (ALLOCATED/MIXED derived, COMPLETING added). */
uint32_t ctld_node_state(const ctld_t *c, const ctld_node_t *n);

/* node.register: fills *reply (config_ok, reason). */
int ctld_node_mgr_register(ctld_t *c, ctld_conn_t *conn, const json_t *req, json_t *reply,
                           loom_err_t *err);
int ctld_node_mgr_heartbeat(ctld_t *c, const json_t *req, loom_err_t *err);
/* node.update from scontrol (Security: the caller checked the admin role). */
int ctld_node_mgr_update(ctld_t *c, const json_t *req, uint32_t uid, loom_err_t *err);
/* The loomd link of node went away. */
void ctld_node_mgr_link_lost(ctld_t *c, ctld_node_t *node, ctld_conn_t *conn);
/* Once a second: SlurmdTimeout. */
void ctld_node_mgr_tick(ctld_t *c, int64_t now);

/* The records of node.info (nodes: hostlist or NULL) and part.info. */
json_t *ctld_node_mgr_records(ctld_t *c, const char *nodes, loom_err_t *err);
json_t *ctld_part_records(const ctld_t *c);

/* Journal events and snapshots. */
int ctld_node_mgr_apply(ctld_t *c, const json_t *ev, loom_err_t *err);
/* Node i's snapshot record (a node.state event without "ev"): new reference. */
json_t *ctld_node_mgr_snapshot(const ctld_t *c, size_t i);
/* An array of such records (older snapshots), or one record. */
void ctld_node_mgr_restore(ctld_t *c, const json_t *nodes);
/* After recovery: nodes that were up are UNKNOWN until they register. */
void ctld_node_mgr_after_recovery(ctld_t *c);

/* Does the node take new work? (kept in snodes[i].usable) */
void ctld_node_mgr_sync(ctld_t *c, ctld_node_t *n);

#endif

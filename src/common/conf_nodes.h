/*
 * conf_nodes.h - the node table of slurm.conf (CLI_SPEC §13).
 *
 * loom_conf_nodes_add() takes one NodeName line (already converted by the key
 * table) and completes it: the CPU topology as Slurm derives it, the parsed
 * Gres= list, and one loom_conf_node_t per name of the NodeName hostlist, with
 * NodeHostname/NodeAddr/Port expanded in parallel. loom_conf_nodes_finish()
 * runs once the whole file is read: the name index (and the duplicate check),
 * DownNodes, GresTypes against every node's GRES, each partition's node list
 * (hostlists, ALL, NodeSet names) and the single Default=YES partition.
 *
 * Both are internal to the conf loader (conf.c); errors are "<file>:<line>: ...".
 */
#ifndef LOOM_CONF_NODES_H
#define LOOM_CONF_NODES_H

#include "common/conf.h"
#include "common/err.h"

/* Complete cfg and append its nodes to c->nodes (cfg is not yet in
 * c->nodecfgs; on error c->nodes is unchanged). */
int loom_conf_nodes_add(loom_conf_t *c, loom_conf_nodecfg_t *cfg, loom_err_t *err);
int loom_conf_nodes_finish(loom_conf_t *c, loom_err_t *err);

#endif

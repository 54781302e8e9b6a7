/*
 * node_attr.h - the node attributes `scontrol update NodeName=...` changes
 * besides the state: Weight, Features (AvailableFeatures), ActiveFeatures,
 * Comment and Extra (CLI_SPEC §9).
 *
 * A change is checked (ActiveFeatures must be a subset of the available ones:
 * "Active features not subset of available features", as slurmctld 22.05
 * says), journaled in the node's node.state event and applied: the weight to
 * the node model (node selection), the features to constraint matching, the
 * pending jobs' node masks rebuilt. Features= alone sets the active features
 * too (Loom has no node features plugin). A restart keeps them (journal,
 * snapshot); a reconfigure reads slurm.conf's again, as slurmctld 22.05 does.
 *
 * Entry points: ctld_node_attr_check, ctld_node_attr_apply, ctld_node_attr_rec,
 * ctld_node_features, ctld_node_attr_free.
 */
#ifndef LOOM_CTLD_NODE_ATTR_H
#define LOOM_CTLD_NODE_ATTR_H

#include "ctld/ctld.h"

#include <jansson.h>

/* The attributes of a node.update request (weight, features, active_features,
 * comment, extra) as event keys in ev; an error when one is not valid. */
int ctld_node_attr_check(const ctld_node_t *n, const json_t *req, json_t *ev, loom_err_t *err);
/* Apply those keys of a node.state event or snapshot record that are present. */
void ctld_node_attr_apply(ctld_t *c, ctld_node_t *n, const json_t *ev);
/* The node's attributes in its record and, for_state, in its snapshot. */
void ctld_node_attr_rec(const ctld_node_t *n, json_t *o, bool for_state);
/* The features constraints match: the updated ones or slurm.conf's. */
const loom_strv_t *ctld_node_features(const ctld_node_t *n);
void ctld_node_attr_free(ctld_node_t *n);

#endif

/*
 * nodestate.h - node states and their names (docs/proto/node-states.md;
 * CLI_SPEC §7.3).
 *
 * A node state is a uint32_t word: a base state (loom_node_base_t) in the low
 * 4 bits and LOOM_NODE_F_* flags above. Three printed forms, all Slurm's:
 *  - complete, for scontrol show node State=: "IDLE+DRAIN+NOT_RESPONDING";
 *  - sinfo long (%T) and compact (%t): one lower-case word plus at most one
 *    suffix character: "drained*", "drain*", "idle~", "alloc+";
 *  - the --json list: ["IDLE","DRAIN","NOT_RESPONDING"].
 *
 * Entry points: loom_node_base, loom_node_base_name, loom_node_state_complete,
 * loom_node_state_sinfo, loom_node_state_list, loom_node_state_parse.
 */
#ifndef LOOM_NODESTATE_H
#define LOOM_NODESTATE_H

#include "common/err.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum loom_node_base {
    LOOM_NODE_UNKNOWN = 0,
    LOOM_NODE_DOWN,
    LOOM_NODE_IDLE,
    LOOM_NODE_ALLOCATED,
    LOOM_NODE_MIXED,
    LOOM_NODE_FUTURE,
    LOOM_NODE_BASE_COUNT
} loom_node_base_t;

#define LOOM_NODE_STATE_BASE 0xfu

/* Flags, in the order of the complete form. */
enum {
    LOOM_NODE_F_CLOUD = 1u << 4,
    LOOM_NODE_F_COMPLETING = 1u << 5,
    LOOM_NODE_F_DRAIN = 1u << 6,
    LOOM_NODE_F_INVALID_REG = 1u << 7,
    LOOM_NODE_F_FAIL = 1u << 8,
    LOOM_NODE_F_MAINT = 1u << 9,
    LOOM_NODE_F_POWER_DOWN = 1u << 10, /* power-down pending */
    LOOM_NODE_F_POWERED_DOWN = 1u << 11,
    LOOM_NODE_F_REBOOT_REQUESTED = 1u << 12,
    LOOM_NODE_F_REBOOT_ISSUED = 1u << 13,
    LOOM_NODE_F_RESERVED = 1u << 14,
    LOOM_NODE_F_NO_RESPOND = 1u << 15,
    LOOM_NODE_F_PLANNED = 1u << 16,
    LOOM_NODE_F_POWERING_UP = 1u << 17,
    LOOM_NODE_F_POWERING_DOWN = 1u << 18,
};

static inline loom_node_base_t loom_node_base(uint32_t state)
{
    return (loom_node_base_t)(state & LOOM_NODE_STATE_BASE);
}

/* "IDLE", "ALLOCATED", ...; "INVALID" for a bad base. Static. */
const char *loom_node_base_name(uint32_t state);
/* Append the complete form: base name, then "+FLAG" per flag. */
void loom_node_state_complete(uint32_t state, loom_sbuf_t *out);
/* Append sinfo's lower-case name: %t when compact, else %T. */
void loom_node_state_sinfo(uint32_t state, bool compact, loom_sbuf_t *out);
/* Append the --json list to out. */
void loom_node_state_list(uint32_t state, loom_strv_t *out);

/* Parse any of the forms above, any case: the complete form ("IDLE+DRAIN"),
 * a base or flag name, or a sinfo name with an optional suffix ("drng",
 * "idle*"). -LOOM_EPARSE naming the bad word; *state untouched on error. */
int loom_node_state_parse(const char *s, uint32_t *state, loom_err_t *err);

#endif

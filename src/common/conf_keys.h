/*
 * conf_keys.h - the one table of slurm.conf keys (CLI_SPEC §13; STYLE "config
 * is a table").
 *
 * Each key has a scope (global, or a field of a NodeName/PartitionName/
 * DownNodes/NodeSet/FrontendName record), a type, a default (as text, parsed
 * like a value from the file), bounds, flags (reloadable, repeatable, accepts
 * UNLIMITED, ...) and the offset of its typed field in the scope's struct
 * (conf.h), if it has one. conf.c parses with loom_conf_key_parse(), applies
 * defaults with the same function, and prints with loom_conf_key_format().
 * The global keys are in the order `scontrol show config` prints them.
 *
 * The table holds every key of Slurm 22.05's slurm.conf(5) plus the legacy
 * ones (ControlMachine, ControlAddr, BackupController, BackupAddr) and a few
 * newer ones; keys Loom does not act on carry LOOM_CKF_IGNORED (accepted,
 * checked by type, stored, reported at debug level).
 */
#ifndef LOOM_CONF_KEYS_H
#define LOOM_CONF_KEYS_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LOOM_CS_GLOBAL = 0,
    LOOM_CS_NODE,     /* loom_conf_nodecfg_t */
    LOOM_CS_PART,     /* loom_conf_part_t */
    LOOM_CS_DOWN,     /* loom_conf_down_t */
    LOOM_CS_NODESET,  /* loom_conf_nodeset_t */
    LOOM_CS_FRONTEND, /* no struct: kept as text */
} loom_conf_scope_t;

typedef enum {
    LOOM_CT_STR = 0, /* char * (NULL when unset) */
    LOOM_CT_INT,     /* int64_t within [min, max] */
    LOOM_CT_BOOL,    /* bool: YES/NO, TRUE/FALSE, 1/0, ON/OFF */
    LOOM_CT_TIME,  /* int64_t seconds from a time limit ("7-00:00:00"; bare numbers are minutes) */
    LOOM_CT_MEM,   /* int64_t MiB from a memory size ("515000", "4G") */
    LOOM_CT_ENUM,  /* int: one word of the key's list */
    LOOM_CT_FLAGS, /* unsigned: comma list of words, values OR-ed */
    LOOM_CT_LIST,  /* loom_strv_t: comma list */
    LOOM_CT_HOSTLIST, /* char *: a hostlist expression, checked */
    LOOM_CT_HOST,     /* SlurmctldHost "name[(addr)]", repeatable */
    LOOM_CT_PORTS,    /* SlurmctldPort "6817" or "6817-6818" */
    LOOM_CT_OVERSUB,  /* OverSubscribe NO|YES[:n]|FORCE[:n]|EXCLUSIVE */
    LOOM_CT_GRES,     /* char *: a node Gres= list, checked with loom_gres_parse_node */
    LOOM_CT_RECORD,   /* the name key that starts a record line */
} loom_conf_type_t;

enum {
    LOOM_CKF_RELOAD = 1u << 0,   /* takes effect on reconfigure */
    LOOM_CKF_REPEAT = 1u << 1,   /* may be given several times (SlurmctldHost) */
    LOOM_CKF_INF = 1u << 2,      /* UNLIMITED/INFINITE/-1 accepted: LOOM_CONF_UNLIMITED */
    LOOM_CKF_INF_TEXT = 1u << 3, /* prints the infinite value as INFINITE (else UNLIMITED) */
    LOOM_CKF_NOPRINT = 1u << 4,  /* not in `scontrol show config` */
    LOOM_CKF_IGNORED = 1u << 5,  /* accepted and stored; Loom does not act on it */
    LOOM_CKF_NONE = 1u << 6,     /* "NONE" accepted: LOOM_CONF_NOT_SET */
    LOOM_CKF_LOWER = 1u << 7,    /* ENUM/FLAGS printed as written in the table (else upper) */
    LOOM_CKF_MF = 1u << 8,       /* printed only with PriorityType=priority/multifactor */
    LOOM_CKF_IFSET = 1u << 9,    /* printed only when set (non-zero) */
};

typedef struct loom_conf_word {
    const char *name;
    unsigned value;
} loom_conf_word_t;

#define LOOM_CONF_NOFIELD ((size_t)-1)

typedef struct loom_conf_key {
    const char *name;              /* canonical spelling */
    uint8_t scope;                 /* loom_conf_scope_t */
    uint8_t type;                  /* loom_conf_type_t */
    uint16_t flags;                /* LOOM_CKF_* */
    const char *def;               /* default as text; NULL: unset */
    int64_t min, max;              /* INT/TIME/MEM bounds (after unit conversion) */
    size_t off;                    /* typed field in the scope's struct, or LOOM_CONF_NOFIELD */
    const loom_conf_word_t *words; /* ENUM/FLAGS words, NULL-terminated */
    const char *unit;              /* printed after numbers: "sec", "min" */
    const char *alias_of;          /* an alias: the canonical name (entry not used otherwise) */
} loom_conf_key_t;

size_t loom_conf_key_count(void);
const loom_conf_key_t *loom_conf_key_at(size_t i);
/* Index of k in the table. */
size_t loom_conf_key_index(const loom_conf_key_t *k);
/* Case-insensitive lookup in one scope; aliases resolve to their canonical key. */
const loom_conf_key_t *loom_conf_key_find(loom_conf_scope_t scope, const char *name);
/* The closest key of the scope to a misspelt name (edit distance <= 2 or a
 * unique case-insensitive prefix match), or NULL. */
const char *loom_conf_key_suggest(loom_conf_scope_t scope, const char *name);

/* Convert value for key k and store it in record (the scope's struct; may be
 * NULL to only check). Replaces an earlier value (a LIST is replaced too; a
 * HOST is appended). Error text: "invalid <Key> value '<value>'[ for <where>]
 * (<reason>)"; the caller prefixes "<file>:<line>: ". where is e.g.
 * "partition gpu", or NULL. */
int loom_conf_key_parse(const loom_conf_key_t *k, const char *value, const char *where,
                        void *record, loom_err_t *err);
/* Free what loom_conf_key_parse stored in record for k (strings, lists). */
void loom_conf_key_free(const loom_conf_key_t *k, void *record);
/* The value as `scontrol show config` prints it, from the typed field when
 * the key has one, else from text (the raw value, NULL when unset). */
void loom_conf_key_format(const loom_conf_key_t *k, const void *record, const char *text,
                          loom_sbuf_t *out);

/* scontrol update PartitionName=: one Key=value on a partition record
 * (scratch or live). Only keys whose values are numbers, booleans, times,
 * sizes or words (MaxTime, State, PriorityTier, OverSubscribe, ...), that
 * have a field and that are not IGNORED; others are -LOOM_ENOT_SUPPORTED,
 * a bad value -EINVAL. Default=, Nodes= and the Allow/Deny lists are not
 * changed this way. */
int loom_conf_part_change(void *part, const char *key, const char *value, loom_err_t *err);

/* Shared value parsers (also used by gresconf.c). */
int loom_conf_parse_bool(const char *s, bool *out);
/* Integer with optional K/M/G/T/P (x1024) suffix when suffix != 0. */
int loom_conf_parse_int(const char *s, int suffix, int64_t *out);

#endif

/*
 * sacctmgr.h - sacctmgr's shared state and tables (CLI_SPEC §10).
 *
 * sacctmgr.c parses the options and the command line, sacctmgr_keys.c
 * holds the Key=Value table (what each key sets, how its value is parsed and
 * printed), sacctmgr_show.c the list commands, sacctmgr_change.c add,
 * modify and delete with Slurm's summaries.
 */
#ifndef LOOM_CLI_SACCTMGR_H
#define LOOM_CLI_SACCTMGR_H

#include "cli/cli_dbd.h"

#include <jansson.h>
#include <stdbool.h>

enum { SAM_CLUSTER = 0, SAM_ACCOUNT, SAM_USER, SAM_QOS, SAM_ASSOC, SAM_NENTS };

typedef struct sam {
    loom_cli_t cli;
    loom_rpc_t *rpc;
    loom_pf_t pf;
    bool immediate, withassoc, json, tree;
    bool readonly; /* -r: show only */
    bool wolimits; /* show cluster WOLimits: the cluster's own columns only */
    int argc;
    char **argv;
    loom_sbuf_t out;
    loom_sbuf_t err; /* what goes to stderr, after out */
} sam_t;

/* Value kinds of keys and columns. */
enum {
    SAM_STR = 's',   /* text (cut with '+') */
    SAM_INT = 'i',   /* integer, -1 clears (overflows its column) */
    SAM_MINS = 'w',  /* a time limit kept in minutes */
    SAM_SECS = 'g',  /* a time kept in seconds */
    SAM_TRES = 't',  /* a TRES string */
    SAM_LIST = 'l',  /* a comma list with += and -= */
    SAM_FLOAT = 'f', /* UsageFactor */
    SAM_LEVEL = 'a', /* AdminLevel */
    SAM_UPPER = 'u', /* PreemptMode */
};

typedef struct sam_key {
    const char *name;  /* Key= as printed in summaries */
    const char *alias; /* "|"-separated other names, or NULL */
    const char *col;   /* the record field */
    char kind;
    unsigned ents; /* 1 << SAM_QOS etc.: where it is a `set` key */
} sam_key_t;

/* The key named (any case; aliases) valid for entity ent, or NULL. */
const sam_key_t *sam_key_find(const char *name, int ent);
/* Parse value for key into JSON (op: '=', '+', '-'); err names the bad value. */
int sam_key_value(const sam_key_t *k, const char *value, char op, json_t **out, loom_err_t *err);
/* The text of a record's field as sacctmgr prints it. */
void sam_fmt_value(char kind, const json_t *v, loom_sbuf_t *out);

int sam_show(sam_t *s, int ent, int argc, char **argv);
/* sacctmgr_tres.c: show tres; the header of an entity Loom keeps none of
 * (wckey, reservation, resource, federation), -1 for another word. */
int sam_show_tres(sam_t *s, int argc, char **argv);
int sam_show_none(sam_t *s, const char *what);
int sam_add(sam_t *s, int ent, int argc, char **argv);
int sam_modify(sam_t *s, int ent, int argc, char **argv);
int sam_delete(sam_t *s, int ent, int argc, char **argv);

/* The message type "dbd.<entity>.<op>". */
const char *sam_type(int ent, const char *op, char *buf, size_t len);
/* Ask "Would you like to commit changes?" unless -i; true to commit. */
bool sam_commit_check(sam_t *s);

#endif

/*
 * gres.h - GRES requests, node GRES lists and TRES strings (CLI_SPEC §0.6).
 *
 * GRES ("generic resources"):
 *   request   --gres=name[[:type]:count][,...]     gpu:2  gpu:a100:4,shard:2  gpu
 *   node      Gres=gpu:h100:8(S:0-1),shard:16      (slurm.conf; the socket list is kept)
 *   --gpus    [type:]count[,...]                   a100:2  4
 * A count defaults to 1 and may carry Slurm's suffixes (k/kib = 1024, kb = 1000,
 * up to p/pib/pb, any case). In "name:x" a last field x that is not a count is
 * the type (gpu:a100 = one a100), as in Slurm; but one that starts with a digit
 * must be a count. Count 0 is kept (Slurm reads it as none of that GRES).
 * "none" (any case) is an empty request. Names are [A-Za-z][A-Za-z0-9_.-]*,
 * types [A-Za-z0-9][A-Za-z0-9_.-]*. A name:type pair may appear once.
 *
 * TRES ("trackable resources"): a list of (type, name, count), e.g.
 *   cpu=8,mem=32G,node=2,billing=8,gres/gpu=4,gres/gpu:a100=4,license/matlab=1
 * Entries may also use the request form "type[/name]:count"
 * (--tres-per-task=gres/gpu:1,cpu=4, TresPerNode=gres/gpu:a100:2; 22.05's
 * "gres:gpu:2" too). Plain types are cpu, mem, energy, node, billing, vmem,
 * pages; others are "type/name" (gres/, license/, fs/disk, bb/, ic/...).
 * mem counts are MiB, parsed and printed as memory sizes (memsize.h).
 * A parsed TRES list is kept in Slurm's order: cpu, mem, energy, node,
 * billing, fs/disk, vmem, pages, then gres/..., license/..., then the rest
 * (by type), names sorted within each group. Each (type, name) appears once.
 *
 * Counts are at most LOOM_GRES_MAX_COUNT. Parsers fill an initialised list
 * (the *_INIT macro or an earlier result, whose contents are freed) only on
 * success; errors are -LOOM_EINVAL_GRES with the input quoted. The lists own
 * their strings; free them with loom_gres_list_free/loom_tres_list_free.
 */
#ifndef LOOM_GRES_H
#define LOOM_GRES_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stddef.h>
#include <stdint.h>

#define LOOM_GRES_MAX_COUNT ((uint64_t)INT64_MAX)

typedef struct loom_gres {
    char *name;     /* "gpu", "shard", "mps" */
    char *type;     /* "a100", or NULL when no type was given */
    uint64_t count; /* 1 when not given */
    char *sockets;  /* node form: "0-1" from "(S:0-1)", else NULL */
} loom_gres_t;

typedef struct loom_gres_list {
    loom_gres_t *v;
    size_t n, cap;
} loom_gres_list_t;

#define LOOM_GRES_LIST_INIT                                                                        \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* --gres / TresPerNode request lists; no socket annotations. */
int loom_gres_parse(const char *s, loom_gres_list_t *out, loom_err_t *err);
/* Node Gres= lists: entries may end in "(S:<socket list>)". */
int loom_gres_parse_node(const char *s, loom_gres_list_t *out, loom_err_t *err);
/* -G/--gpus, --gpus-per-node/-task/-socket: "[type:]count[,...]", name "gpu". */
int loom_gres_parse_gpus(const char *s, loom_gres_list_t *out, loom_err_t *err);
void loom_gres_list_free(loom_gres_list_t *l);
/* 1 when both lists hold the same entries in the same order. */
int loom_gres_list_equal(const loom_gres_list_t *a, const loom_gres_list_t *b);

/* Total count of a GRES name, whatever the type. */
uint64_t loom_gres_count(const loom_gres_list_t *l, const char *name);
/* Count of name with exactly this type (NULL: the entries without a type). */
uint64_t loom_gres_count_type(const loom_gres_list_t *l, const char *name, const char *type);

/* "gpu:a100:4,shard:2" (node entries keep "(S:0-1)"); counts always printed. */
void loom_gres_fmt(const loom_gres_list_t *l, loom_sbuf_t *out);
/* TRES form: "gres/gpu:a100=4,gres/shard=2". */
void loom_gres_fmt_tres(const loom_gres_list_t *l, loom_sbuf_t *out);
/* scontrol's TresPerNode/TresPerJob form: "gres/gpu:a100:4,gres/shard:2". */
void loom_gres_fmt_tres_per(const loom_gres_list_t *l, loom_sbuf_t *out);

typedef struct loom_tres {
    char *type;     /* lower case: "cpu", "mem", "gres", "license", "fs" */
    char *name;     /* NULL for plain types; "gpu", "gpu:a100", "disk", "matlab" */
    uint64_t count; /* MiB for mem */
} loom_tres_t;

typedef struct loom_tres_list {
    loom_tres_t *v;
    size_t n, cap;
} loom_tres_list_t;

#define LOOM_TRES_LIST_INIT                                                                        \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

int loom_tres_parse(const char *s, loom_tres_list_t *out, loom_err_t *err);
void loom_tres_list_free(loom_tres_list_t *l);
int loom_tres_list_equal(const loom_tres_list_t *a, const loom_tres_list_t *b);

/* The entry for (type, name) (name NULL for plain types), or NULL. */
const loom_tres_t *loom_tres_find(const loom_tres_list_t *l, const char *type, const char *name);
/* Its count, 0 when absent. */
uint64_t loom_tres_count(const loom_tres_list_t *l, const char *type, const char *name);
/* Add count to (type, name), inserting it in order; the sum saturates at
 * LOOM_GRES_MAX_COUNT. type and name are taken as given (lower-case type). */
void loom_tres_add(loom_tres_list_t *l, const char *type, const char *name, uint64_t count);
/* Add a GRES list as Slurm's allocation TRES do: "gres/gpu:a100" for each typed
 * entry, plus the total per name in "gres/gpu". */
void loom_tres_add_gres(loom_tres_list_t *l, const loom_gres_list_t *g);

/* "cpu=8,mem=32G,node=2,billing=8,gres/gpu=4" (sacct, scontrol TRES=). */
void loom_tres_fmt(const loom_tres_list_t *l, loom_sbuf_t *out);
/* The request form: "cpu:4,mem:4G,gres/gpu:1" (TresPerTask). */
void loom_tres_fmt_per(const loom_tres_list_t *l, loom_sbuf_t *out);

#endif

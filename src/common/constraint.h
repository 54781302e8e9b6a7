/*
 * constraint.h - node feature constraints: -C/--constraint, --prefer (CLI_SPEC §0.7).
 *
 * Grammar (Slurm's):
 *   expr    := term (('&' | '|') term)*
 *   term    := atom ['*' count]          count: nodes needed with the term, >= 1
 *   atom    := feature | '(' expr ')' | '[' expr ']'
 *   feature := [A-Za-z0-9_.-]+
 * '&' and '|' have equal precedence and group left to right, as Slurm
 * evaluates them: "a|b&c" is "(a|b)&c". Brackets mark the one multi-node
 * group Slurm allows: "[a|b|c]" (matching OR: every node gets the same one)
 * or "[a*2&b*4]" (multiple counts: an AND inside brackets needs a count on
 * each term). Brackets may not nest, carry a count, or appear twice.
 * Group nesting and the tree's height (each change between '&' and '|' adds
 * a level) are limited to LOOM_CONSTRAINT_MAX_DEPTH.
 *
 * The parse is an AST of loom_constraint_t nodes. AND/OR nodes have two or
 * more kids in input order; a chain of one operator ("a&b&c") is one node,
 * and parentheses make a separate one ("a&(b&c)"). The tree is owned by the
 * caller (loom_constraint_free). loom_constraint_fmt prints the canonical
 * form, which parses back to an equal tree.
 *
 * Errors are -LOOM_ECONSTRAINT ("Invalid feature specification") with a
 * message that quotes the input and says what is wrong where.
 */
#ifndef LOOM_CONSTRAINT_H
#define LOOM_CONSTRAINT_H

#include "common/err.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <stddef.h>
#include <stdint.h>

#define LOOM_CONSTRAINT_MAX_DEPTH 32
#define LOOM_CONSTRAINT_MAX_COUNT 1000000

typedef enum {
    LOOM_CONS_FEATURE, /* name */
    LOOM_CONS_AND,     /* every kid */
    LOOM_CONS_OR,      /* any kid */
} loom_cons_op_t;

typedef struct loom_constraint loom_constraint_t;
struct loom_constraint {
    loom_cons_op_t op;
    char *name;               /* LOOM_CONS_FEATURE only */
    loom_constraint_t **kids; /* AND/OR only: nkids >= 2 */
    size_t nkids;
    uint32_t count; /* "*N": at least N nodes must satisfy this term; 0 when not given */
    int bracket;    /* written in [...]: matching OR, or multiple counts for an AND */
};

int loom_constraint_parse(const char *s, loom_constraint_t **out, loom_err_t *err);
/* Accepts NULL. */
void loom_constraint_free(loom_constraint_t *c);
/* 1 when the trees are the same. */
int loom_constraint_equal(const loom_constraint_t *a, const loom_constraint_t *b);

/* Can a node with these features be part of an allocation? The per-node
 * reading: counts are ignored, a matching OR is an OR, and a node qualifies
 * for a bracketed AND of counted terms ("[a*2&b*4]") when it matches any one
 * of them. Choosing the same feature for all nodes and meeting the counts is
 * the scheduler's job; the AST keeps what it needs. Returns 1 or 0. */
int loom_constraint_match_node(const loom_constraint_t *c, const char *const *features, size_t n);

/* The bracketed group ([...]) of the tree, or NULL. */
const loom_constraint_t *loom_constraint_bracket(const loom_constraint_t *c);

/* Canonical text: "a&b", "(a|b)&c", "[rack1|rack2]", "[(knl&flat)*4&haswell*1]". */
void loom_constraint_fmt(const loom_constraint_t *c, loom_sbuf_t *out);
/* Append every feature named, once each, in order of first appearance. */
void loom_constraint_features(const loom_constraint_t *c, loom_strv_t *names);

#endif

/*
 * constraint.c - node feature constraints (CLI_SPEC §0.7). See constraint.h.
 *
 * A recursive-descent parser over the grammar in the header. Both the
 * nesting of groups and the height of the tree are bounded by
 * LOOM_CONSTRAINT_MAX_DEPTH, which bounds every recursion over the tree and
 * keeps the printed form (at most one group per tree level) parseable. On an error the parser
 * records the first message in its state, unwinds, and frees the partial tree.
 */
#include "common/constraint.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;                           /* the whole input, for messages */
    const char *p;                           /* the next character */
    int depth;                               /* open parentheses and brackets */
    char closers[LOOM_CONSTRAINT_MAX_DEPTH]; /* what closes each open group */
    int bracket_depth; /* depth just inside the open '[', 0 when none is open */
    bool had_bracket;
    int height; /* height of the tree last parsed (a feature is 1) */
    loom_err_t *err;
    int rc; /* 0, or the first error */
} constraint_parser_t;

static loom_constraint_t *constraint_expr(constraint_parser_t *ps);

/* Record the first error; returns false for the callers' convenience. */
static bool constraint_error(constraint_parser_t *ps, const char *why)
{
    if (ps->rc == 0)
        ps->rc = loom_errf(ps->err, -LOOM_ECONSTRAINT,
                           "Invalid feature specification '%s' (%s at '%s')", ps->s, why, ps->p);
    return false;
}

/* Why the text at ps->p cannot continue an expression. */
static const char *constraint_why_stop(const constraint_parser_t *ps)
{
    if (*ps->p == '\0')
        return ps->closers[ps->depth - 1] == ']' ? "missing ']'" : "missing ')'";
    if (*ps->p == ')' || *ps->p == ']')
        return "unbalanced brackets";
    return "unexpected character";
}

void loom_constraint_free(loom_constraint_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nkids; i++)
        loom_constraint_free(c->kids[i]);
    free(c->kids);
    free(c->name);
    free(c);
}

static bool constraint_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

static loom_constraint_t *constraint_feature(constraint_parser_t *ps)
{
    size_t n = 0;
    while (constraint_name_char(ps->p[n]))
        n++;
    if (n == 0) {
        constraint_error(ps, *ps->p ? "expected a feature name" : "missing a feature name");
        return NULL;
    }
    loom_constraint_t *c = loom_xcalloc(1, sizeof(*c));
    ps->height = 1;
    c->op = LOOM_CONS_FEATURE;
    c->name = loom_xstrndup(ps->p, n);
    ps->p += n;
    return c;
}

/* Can a group open here? */
static bool constraint_group_ok(constraint_parser_t *ps, char open)
{
    if (open == '[' && ps->bracket_depth)
        return constraint_error(ps, "nested brackets");
    if (open == '[' && ps->had_bracket)
        return constraint_error(ps, "a second bracket group");
    if (ps->depth >= LOOM_CONSTRAINT_MAX_DEPTH)
        return constraint_error(ps, "nesting too deep");
    return true;
}

/* '(' expr ')' or '[' expr ']'; ps->p is at the opening character. */
static loom_constraint_t *constraint_group(constraint_parser_t *ps)
{
    char open = *ps->p, close = open == '(' ? ')' : ']';
    if (!constraint_group_ok(ps, open))
        return NULL;
    ps->p++;
    ps->closers[ps->depth++] = close;
    if (open == '[')
        ps->bracket_depth = ps->depth;
    loom_constraint_t *c = constraint_expr(ps);
    if (!c)
        return NULL;
    if (*ps->p != close) {
        loom_constraint_free(c);
        constraint_error(ps, *ps->p == ')' || *ps->p == ']' ? "unbalanced brackets"
                                                            : constraint_why_stop(ps));
        return NULL;
    }
    ps->p++;
    ps->depth--;
    if (open == '[') {
        ps->bracket_depth = 0;
        ps->had_bracket = true;
        c->bracket = 1;
    }
    return c;
}

/* "*N" after a term. */
static bool constraint_count(constraint_parser_t *ps, loom_constraint_t *c)
{
    if (*ps->p != '*')
        return true;
    if (c->count || c->bracket)
        return constraint_error(ps, c->count ? "a second count" : "a count on brackets");
    ps->p++;
    uint32_t v = 0;
    size_t n = 0;
    for (; isdigit((unsigned char)ps->p[n]); n++) {
        v = v * 10 + (uint32_t)(ps->p[n] - '0');
        if (v > LOOM_CONSTRAINT_MAX_COUNT)
            return constraint_error(ps, "count too large");
    }
    if (n == 0 || v == 0)
        return constraint_error(ps, "expected a count of 1 or more");
    ps->p += n;
    c->count = v;
    return *ps->p == '*' ? constraint_error(ps, "a second count") : true;
}

static loom_constraint_t *constraint_term(constraint_parser_t *ps)
{
    loom_constraint_t *c =
        *ps->p == '(' || *ps->p == '[' ? constraint_group(ps) : constraint_feature(ps);
    if (c && !constraint_count(ps, c)) {
        loom_constraint_free(c);
        return NULL;
    }
    return c;
}

static void constraint_add_kid(loom_constraint_t *c, loom_constraint_t *kid)
{
    c->kids = loom_xreallocarray(c->kids, c->nkids + 1, sizeof(*c->kids));
    c->kids[c->nkids++] = kid;
}

/* A new operator node over cur and rhs. */
static loom_constraint_t *constraint_pair(loom_cons_op_t op, loom_constraint_t *cur,
                                          loom_constraint_t *rhs)
{
    loom_constraint_t *c = loom_xcalloc(1, sizeof(*c));
    c->op = op;
    constraint_add_kid(c, cur);
    constraint_add_kid(c, rhs);
    return c;
}

/* Inside brackets, an AND chain is "multiple counts": each term needs one. */
static bool constraint_counts_ok(const loom_constraint_t *c, bool in_bracket)
{
    if (!in_bracket || c->op != LOOM_CONS_AND)
        return true;
    for (size_t i = 0; i < c->nkids; i++)
        if (c->kids[i]->count == 0)
            return false;
    return true;
}

/* Fail (freeing cur) when the expression just read cannot stand; chain:
 * cur is an operator node made by this expression. */
static loom_constraint_t *constraint_expr_check(constraint_parser_t *ps, loom_constraint_t *cur,
                                                bool chain)
{
    const char *why = NULL;
    if (ps->height > LOOM_CONSTRAINT_MAX_DEPTH)
        why = "nesting too deep";
    else if (ps->depth == 0 && *ps->p != '\0')
        why = constraint_why_stop(ps);
    else if (chain &&
             !constraint_counts_ok(cur, ps->bracket_depth && ps->bracket_depth == ps->depth))
        why = "an AND inside brackets without a count on each term";
    if (!why)
        return cur;
    loom_constraint_free(cur);
    constraint_error(ps, why);
    return NULL;
}

/* Terms joined left to right: a chain of one operator grows one node, a
 * change of operator puts the chain so far under a new node. */
static loom_constraint_t *constraint_expr(constraint_parser_t *ps)
{
    bool chain = false;
    loom_constraint_t *cur = constraint_term(ps);
    int height = ps->height;
    while (cur && (*ps->p == '&' || *ps->p == '|') && height <= LOOM_CONSTRAINT_MAX_DEPTH) {
        loom_cons_op_t op = *ps->p++ == '&' ? LOOM_CONS_AND : LOOM_CONS_OR;
        loom_constraint_t *rhs = constraint_term(ps);
        if (!rhs) {
            loom_constraint_free(cur);
            return NULL;
        }
        bool grow = chain && cur->op == op;
        int h = grow ? ps->height + 1 : ps->height;
        height = grow ? (h > height ? h : height) : (h > height ? h : height) + 1;
        if (grow)
            constraint_add_kid(cur, rhs);
        else
            cur = constraint_pair(op, cur, rhs);
        chain = true;
    }
    ps->height = height;
    return cur ? constraint_expr_check(ps, cur, chain) : NULL;
}

int loom_constraint_parse(const char *s, loom_constraint_t **out, loom_err_t *err)
{
    constraint_parser_t ps = {.s = s, .p = s, .err = err};
    if (*s == '\0')
        return loom_errf(err, -LOOM_ECONSTRAINT, "Invalid feature specification '' (empty)");
    loom_constraint_t *c = constraint_expr(&ps);
    if (!c)
        return ps.rc;
    *out = c;
    return 0;
}

int loom_constraint_equal(const loom_constraint_t *a, const loom_constraint_t *b)
{
    if (a->op != b->op || a->count != b->count || !a->bracket != !b->bracket ||
        a->nkids != b->nkids)
        return 0;
    if (a->op == LOOM_CONS_FEATURE)
        return strcmp(a->name, b->name) == 0;
    for (size_t i = 0; i < a->nkids; i++)
        if (!loom_constraint_equal(a->kids[i], b->kids[i]))
            return 0;
    return 1;
}

int loom_constraint_match_node(const loom_constraint_t *c, const char *const *features, size_t n)
{
    if (c->op == LOOM_CONS_FEATURE) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(features[i], c->name) == 0)
                return 1;
        return 0;
    }
    /* A bracketed AND lists alternatives for different nodes: any one will do. */
    bool any = c->op == LOOM_CONS_OR || c->bracket;
    for (size_t i = 0; i < c->nkids; i++)
        if (loom_constraint_match_node(c->kids[i], features, n) == any)
            return any;
    return !any;
}

const loom_constraint_t *loom_constraint_bracket(const loom_constraint_t *c)
{
    if (c->bracket)
        return c;
    for (size_t i = 0; i < c->nkids; i++) {
        const loom_constraint_t *b = loom_constraint_bracket(c->kids[i]);
        if (b)
            return b;
    }
    return NULL;
}

/* A term without its brackets; nested: c is a kid, so a bare AND/OR needs
 * parentheses. */
static void constraint_fmt_term(const loom_constraint_t *c, bool nested, loom_sbuf_t *out);

static void constraint_fmt(const loom_constraint_t *c, bool nested, loom_sbuf_t *out)
{
    if (!c->bracket) {
        constraint_fmt_term(c, nested, out);
        return;
    }
    loom_sbuf_addc(out, '[');
    constraint_fmt_term(c, false, out);
    loom_sbuf_addc(out, ']');
}

static void constraint_fmt_term(const loom_constraint_t *c, bool nested, loom_sbuf_t *out)
{
    bool paren = c->op != LOOM_CONS_FEATURE && (nested || c->count);
    if (paren)
        loom_sbuf_addc(out, '(');
    if (c->op == LOOM_CONS_FEATURE)
        loom_sbuf_add(out, c->name);
    for (size_t i = 0; i < c->nkids; i++) {
        if (i)
            loom_sbuf_addc(out, c->op == LOOM_CONS_AND ? '&' : '|');
        constraint_fmt(c->kids[i], true, out);
    }
    if (paren)
        loom_sbuf_addc(out, ')');
    if (c->count)
        loom_sbuf_addf(out, "*%u", (unsigned)c->count);
}

void loom_constraint_fmt(const loom_constraint_t *c, loom_sbuf_t *out)
{
    constraint_fmt(c, false, out);
}

void loom_constraint_features(const loom_constraint_t *c, loom_strv_t *names)
{
    if (c->op == LOOM_CONS_FEATURE && loom_strv_find(names, c->name) < 0)
        loom_strv_add(names, c->name);
    for (size_t i = 0; i < c->nkids; i++)
        loom_constraint_features(c->kids[i], names);
}

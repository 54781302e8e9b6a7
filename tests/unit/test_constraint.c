/* test_constraint.c - node feature constraints (CLI_SPEC §0.7). */
#include "common/constraint.h"
#include "common/err.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Input, canonical print, and the features it names (space-separated). */
static const struct {
    const char *in, *fmt, *names;
} cons_ok[] = {
    {"intel", "intel", "intel"},
    {"a&b", "a&b", "a b"},
    {"a|b", "a|b", "a b"},
    {"a&b&c", "a&b&c", "a b c"},
    {"a|b|c|d", "a|b|c|d", "a b c d"},
    {"a|b&c", "(a|b)&c", "a b c"}, /* left to right, as Slurm evaluates */
    {"a&b|c", "(a&b)|c", "a b c"},
    {"(a&b)|c", "(a&b)|c", "a b c"},
    {"a&(b|c)", "a&(b|c)", "a b c"},
    {"a&(b&c)", "a&(b&c)", "a b c"},
    {"(a)", "a", "a"},
    {"((a))", "a", "a"},
    {"((a|b))", "a|b", "a b"},
    {"a&a", "a&a", "a"},
    {"[rack1|rack2|rack3|rack4]", "[rack1|rack2|rack3|rack4]", "rack1 rack2 rack3 rack4"},
    {"[rack1*2&rack2*4]", "[rack1*2&rack2*4]", "rack1 rack2"},
    {"[(rack1|rack2)*1&(rack3)*2]", "[(rack1|rack2)*1&rack3*2]", "rack1 rack2 rack3"},
    {"[(knl&snc4&flat)*4&haswell*1]", "[(knl&snc4&flat)*4&haswell*1]", "knl snc4 flat haswell"},
    {"[haswell*2&(knl&hemi)*4]", "[haswell*2&(knl&hemi)*4]", "haswell knl hemi"},
    {"graphics*4", "graphics*4", "graphics"},
    {"a*2&b*1", "a*2&b*1", "a b"},
    {"(a|b)*3", "(a|b)*3", "a b"},
    {"[a]", "[a]", "a"},
    {"[a*2]", "[a*2]", "a"},
    {"[(a&b)*2]", "[(a&b)*2]", "a b"},
    {"intel&[rack1|rack2]", "intel&[rack1|rack2]", "intel rack1 rack2"},
    {"[rack1|rack2]&intel", "[rack1|rack2]&intel", "rack1 rack2 intel"},
    {"([a|b])", "[a|b]", "a b"},
    {"(x&[a|b])|y", "(x&[a|b])|y", "x a b y"},
    {"a|b&[r1|r2]&c|d", "((a|b)&[r1|r2]&c)|d", "a b r1 r2 c d"}, /* fuzz: brackets in a chain */
    {"x&([(a&b)*2&c*1])", "x&[(a&b)*2&c*1]", "x a b c"},
    {"gpu_a100.80gb-sxm", "gpu_a100.80gb-sxm", "gpu_a100.80gb-sxm"},
    {"A1&b2", "A1&b2", "A1 b2"},
    {"x*1000000", "x*1000000", "x"},
    {"x*007", "x*7", "x"},
};

static void check_names(const loom_constraint_t *c, const char *want)
{
    loom_strv_t got = LOOM_STRV_INIT, exp = LOOM_STRV_INIT;
    loom_constraint_features(c, &got);
    loom_strv_split(&exp, want, " ");
    assert_int_equal(got.n, exp.n);
    for (size_t i = 0; i < got.n; i++)
        assert_string_equal(got.v[i], exp.v[i]);
    loom_strv_free(&got);
    loom_strv_free(&exp);
}

static void test_constraint_parse_ok(void **state)
{
    for (size_t i = 0; i < N_ELEMS(cons_ok); i++) {
        loom_constraint_t *c = NULL, *back = NULL;
        loom_err_t err;
        loom_err_clear(&err);
        if (loom_constraint_parse(cons_ok[i].in, &c, &err) != 0)
            fail_msg("'%s': %s", cons_ok[i].in, err.msg);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_constraint_fmt(c, &sb);
        if (strcmp(loom_sbuf_str(&sb), cons_ok[i].fmt) != 0)
            fail_msg("'%s': printed '%s'", cons_ok[i].in, loom_sbuf_str(&sb));
        assert_int_equal(loom_constraint_parse(loom_sbuf_str(&sb), &back, NULL), 0);
        assert_true(loom_constraint_equal(c, back));
        check_names(c, cons_ok[i].names);
        loom_sbuf_free(&sb);
        loom_constraint_free(c);
        loom_constraint_free(back);
    }
}

static void test_constraint_tree(void **state)
{
    loom_constraint_t *c = NULL;
    assert_int_equal(loom_constraint_parse("a|b&c*2", &c, NULL), 0);
    assert_int_equal(c->op, LOOM_CONS_AND);
    assert_int_equal(c->nkids, 2);
    assert_int_equal(c->kids[0]->op, LOOM_CONS_OR);
    assert_string_equal(c->kids[0]->kids[1]->name, "b");
    assert_int_equal(c->kids[1]->op, LOOM_CONS_FEATURE);
    assert_string_equal(c->kids[1]->name, "c");
    assert_int_equal(c->kids[1]->count, 2);
    assert_null(loom_constraint_bracket(c));
    loom_constraint_free(c);

    assert_int_equal(loom_constraint_parse("intel&[r1*2&r2*4]", &c, NULL), 0);
    const loom_constraint_t *b = loom_constraint_bracket(c);
    assert_non_null(b);
    assert_true(b->bracket);
    assert_int_equal(b->op, LOOM_CONS_AND);
    assert_int_equal(b->kids[0]->count, 2);
    assert_int_equal(b->kids[1]->count, 4);
    loom_constraint_free(c);
    loom_constraint_free(NULL);
}

static void test_constraint_match(void **state)
{
    static const struct {
        const char *expr, *features;
        int match;
    } cases[] = {
        {"intel", "intel gpu", 1},
        {"intel", "amd gpu", 0},
        {"intel", "", 0},
        {"intel", "Intel", 0}, /* case matters */
        {"intel&gpu", "gpu intel", 1},
        {"intel&gpu", "intel", 0},
        {"intel|amd", "amd", 1},
        {"intel|amd", "arm", 0},
        {"a|b&c", "a", 0}, /* (a|b)&c */
        {"a|b&c", "a c", 1},
        {"a|(b&c)", "a", 1},
        {"a&b|c", "c", 1}, /* (a&b)|c */
        {"a&b|c", "a", 0},
        {"[rack1|rack2]", "rack2", 1},
        {"[rack1|rack2]", "rack3", 0},
        {"[rack1*2&rack2*4]", "rack2", 1}, /* a node may serve either term */
        {"[rack1*2&rack2*4]", "rack1", 1},
        {"[rack1*2&rack2*4]", "rack3", 0},
        {"[(knl&flat)*4&haswell*1]", "knl", 0},
        {"[(knl&flat)*4&haswell*1]", "knl flat", 1},
        {"a*2&b*1", "a", 0}, /* without brackets: one node needs both */
        {"a*2&b*1", "a b", 1},
        {"intel&[r1|r2]", "intel r2", 1},
        {"intel&[r1|r2]", "r1", 0},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        loom_constraint_t *c = NULL;
        loom_strv_t f = LOOM_STRV_INIT;
        assert_int_equal(loom_constraint_parse(cases[i].expr, &c, NULL), 0);
        loom_strv_split(&f, cases[i].features, " ");
        int got = loom_constraint_match_node(c, (const char *const *)f.v, f.n);
        if (got != cases[i].match)
            fail_msg("'%s' on '%s': %d", cases[i].expr, cases[i].features, got);
        loom_strv_free(&f);
        loom_constraint_free(c);
    }
}

static void test_constraint_errors(void **state)
{
    static const struct {
        const char *in, *why;
    } bad[] = {
        {"", "empty"},
        {"&", "expected a feature name"},
        {"a&", "missing a feature name"},
        {"a|", "missing a feature name"},
        {"&a", "expected a feature name"},
        {"a&&b", "expected a feature name"},
        {"a||b", "expected a feature name"},
        {"a&|b", "expected a feature name"},
        {"()", "expected a feature name"},
        {"[]", "expected a feature name"},
        {"(a", "missing ')'"},
        {"((a)", "missing ')'"},
        {"a)", "unbalanced brackets"},
        {"(a))", "unbalanced brackets"},
        {"[a", "missing ']'"},
        {"a]", "unbalanced brackets"},
        {"(a]", "unbalanced brackets"},
        {"[a)", "unbalanced brackets"},
        {"a b", "unexpected character"},
        {" a", "expected a feature name"},
        {"a ", "unexpected character"},
        {"a,b", "unexpected character"},
        {"a!b", "unexpected character"},
        {"a:b", "unexpected character"},
        {"(a b)", "unexpected character"},
        {"a(b)", "unexpected character"},
        {"a*", "expected a count of 1 or more"},
        {"a*0", "expected a count of 1 or more"},
        {"a*x", "expected a count of 1 or more"},
        {"a*-1", "expected a count of 1 or more"},
        {"a*1000001", "count too large"},
        {"a*99999999999999999999", "count too large"},
        {"a*2*3", "a second count"},
        {"(a*2)*3", "a second count"},
        {"[a|b]*2", "a count on brackets"},
        {"[[a|b]]", "nested brackets"},
        {"[a|[b]]", "nested brackets"},
        {"[a|b]&[c|d]", "a second bracket group"},
        {"[a&b]", "an AND inside brackets without a count on each term"},
        {"[a*2&b]", "an AND inside brackets without a count on each term"},
        {"([a&b])", "an AND inside brackets without a count on each term"},
        {"[(a", "missing ')'"},
        {"([a", "missing ']'"},
        {"((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))",
         "nesting too deep"},
        {"a|b&c|d&e|f&g|h&i|j&k|l&m|n&o|p&q|r&s|t&u|v&w|x&y|z&a|b&c|d&e|f&g|h&i|j&k|l&m|n",
         "nesting too deep"},
    };
    for (size_t i = 0; i < N_ELEMS(bad); i++) {
        loom_constraint_t *c = (loom_constraint_t *)&c; /* must stay untouched */
        loom_constraint_t *const before = c;
        loom_err_t err;
        loom_err_clear(&err);
        if (loom_constraint_parse(bad[i].in, &c, &err) != -LOOM_ECONSTRAINT)
            fail_msg("'%s' accepted", bad[i].in);
        assert_ptr_equal(c, before);
        if (!strstr(err.msg, bad[i].why) || !strstr(err.msg, bad[i].in))
            fail_msg("'%s': message '%s'", bad[i].in, err.msg);
    }
}

/* Near the height limit: whatever parses prints in a form that parses back
 * (regression: a deep chain printed more parentheses than the parser took). */
static void test_constraint_deep_round_trip(void **state)
{
    for (int wrap = 0; wrap <= 3; wrap++) {
        for (int k = 1; k <= LOOM_CONSTRAINT_MAX_DEPTH + 2; k++) {
            loom_sbuf_t in = LOOM_SBUF_INIT, out = LOOM_SBUF_INIT;
            for (int i = 0; i < wrap; i++)
                loom_sbuf_add(&in, "(x&");
            loom_sbuf_add(&in, "[r1|r2]");
            for (int i = 0; i < k; i++)
                loom_sbuf_add(&in, i % 2 ? "|b" : "&c");
            for (int i = 0; i < wrap; i++)
                loom_sbuf_add(&in, ")");
            loom_constraint_t *c = NULL, *back = NULL;
            if (loom_constraint_parse(loom_sbuf_str(&in), &c, NULL) == 0) {
                loom_constraint_fmt(c, &out);
                assert_int_equal(loom_constraint_parse(loom_sbuf_str(&out), &back, NULL), 0);
                assert_true(loom_constraint_equal(c, back));
            } else {
                assert_true(k + wrap >= LOOM_CONSTRAINT_MAX_DEPTH - 2);
            }
            loom_constraint_free(c);
            loom_constraint_free(back);
            loom_sbuf_free(&in);
            loom_sbuf_free(&out);
        }
    }
}

static void test_constraint_message(void **state)
{
    loom_constraint_t *c;
    loom_err_t err;
    loom_constraint_parse("a&(b|", &c, &err);
    assert_string_equal(err.msg,
                        "Invalid feature specification 'a&(b|' (missing a feature name at '')");
    loom_constraint_parse("a&b)", &c, &err);
    assert_string_equal(err.msg,
                        "Invalid feature specification 'a&b)' (unbalanced brackets at ')')");
    assert_int_equal(loom_constraint_parse("a&", &c, NULL), -LOOM_ECONSTRAINT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constraint_parse_ok),
        cmocka_unit_test(test_constraint_tree),
        cmocka_unit_test(test_constraint_match),
        cmocka_unit_test(test_constraint_errors),
        cmocka_unit_test(test_constraint_deep_round_trip),
        cmocka_unit_test(test_constraint_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

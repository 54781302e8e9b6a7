/* test_fairtree.c - the fair-tree algorithm (src/sched/fairtree.c) on trees
 * worked by hand from the rules of Slurm's fair_tree.html (Level FS = S/U
 * among siblings, depth-first ranking with ties, FairShare = rank / users),
 * plus one tree checked against sshare on slurmctld 22.05.8 (root user,
 * accounts a (shares 1) with user fsu3 (2) and sub-account a1 (3) with fsu1,
 * b (1) with fsu2: NormShares 0.333333 / 0.400000 / 0.600000, all FairShare
 * 1.000000 and LevelFS inf without usage). Decay, reset periods and
 * TRESBillingWeights are checked against their definitions. */
#include "sched/fairtree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#define U    true
#define A    false
#define NMAX 16

typedef struct tree_node {
    int32_t parent;
    bool user;
    uint32_t shares;
    double usage;
    /* expected */
    double norm_shares, eff_usage, level_fs, fairshare;
} tree_node_t;

typedef struct tree_case {
    const char *what;
    size_t n;
    tree_node_t v[NMAX];
} tree_case_t;

static const tree_case_t cases[] = {
    {"sshare 22.05: no usage anywhere",
     8,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, U, 1, 0, 1.0 / 3, 0, INFINITY, 1}, /* root/root */
      {0, A, 1, 0, 1.0 / 3, 0, INFINITY, 0}, /* a */
      {2, U, 2, 0, 0.4, 0, INFINITY, 1},     /* a/fsu3 */
      {2, A, 3, 0, 0.6, 0, INFINITY, 0},     /* a1 */
      {4, U, 1, 0, 1, 0, INFINITY, 1},       /* a1/fsu1 */
      {0, A, 1, 0, 1.0 / 3, 0, INFINITY, 0}, /* b */
      {6, U, 1, 0, 1, 0, INFINITY, 1}}},     /* b/fsu2 */
    /* The same tree on slurmctld 22.05.8 after fsu3 and fsu1 each used 22
     * CPU-seconds: sshare -l showed LevelFS a 0.333333, fsu3 0.800000, a1
     * 1.200000, fsu1 1.000000 and FairShare root 1, fsu2 1 (tied through b),
     * fsu1 0.5, fsu3 0.25. */
    {"sshare 22.05: usage under a",
     8,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, U, 1, 0, 1.0 / 3, 0, INFINITY, 1},
      {0, A, 1, 0, 1.0 / 3, 1, 1.0 / 3, 0},
      {2, U, 2, 22, 0.4, 0.5, 0.8, 0.25},
      {2, A, 3, 0, 0.6, 0.5, 1.2, 0},
      {4, U, 1, 22, 1, 1, 1, 0.5},
      {0, A, 1, 0, 1.0 / 3, 0, INFINITY, 0},
      {6, U, 1, 0, 1, 0, INFINITY, 1}}},
    /* Two accounts 1:1; A's user used 300, B's 100. Level FS: A 0.5/0.75,
     * B 0.5/0.25 = 2: B first, so b1 ranks 2 (1.0) and a1 1 (0.5). */
    {"two accounts, one over-served",
     5,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, A, 1, 0, 0.5, 0.75, 0.5 / 0.75, 0},
      {1, U, 1, 300, 1, 1, 1, 0.5},
      {0, A, 1, 0, 0.5, 0.25, 2, 0},
      {3, U, 1, 100, 1, 1, 1, 1}}},
    /* Every user of the under-served account outranks every user of the
     * other, whatever their own usage: accounts A (shares 1, usage 60 = 0.6)
     * and B (1, 40 = 0.4). In A: a1 used 0 (inf), a2 60 (0.5/1). In B: b1
     * 10 (0.5/0.25 = 2), b2 30 (0.5/0.75). Order: b1 b2 a1 a2 -> 4 3 2 1. */
    {"accounts before users' own usage",
     7,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, A, 1, 0, 0.5, 0.6, 0.5 / 0.6, 0},
      {1, U, 1, 0, 0.5, 0, INFINITY, 0.5},
      {1, U, 1, 60, 0.5, 1, 0.5, 0.25},
      {0, A, 1, 0, 0.5, 0.4, 0.5 / 0.4, 0},
      {4, U, 1, 10, 0.5, 0.25, 2, 1},
      {4, U, 1, 30, 0.5, 0.75, 0.5 / 0.75, 0.75}}},
    /* Ties: two users without usage share rank 3 of 3; the third (usage)
     * gets rank 1, since the two tied ranks still count. */
    {"tied users",
     4,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, U, 1, 0, 1.0 / 3, 0, INFINITY, 1},
      {0, U, 1, 0, 1.0 / 3, 0, INFINITY, 1},
      {0, U, 1, 50, 1.0 / 3, 1, 1.0 / 3, 1.0 / 3}}},
    /* A user tied with an account: the user sorts first, and the first
     * user under the tied account keeps the user's rank. Users: u (inf),
     * acct X (inf) with x1 (inf) and x2 (inf), acct Y (usage) with y1.
     * Ranks: u 4, x1 4 (tied through X), x2 4 (tied with x1), y1 1. */
    {"user tied with an account",
     7,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, U, 1, 0, 1.0 / 3, 0, INFINITY, 1},
      {0, A, 1, 0, 1.0 / 3, 0, INFINITY, 0},
      {2, U, 1, 0, 0.5, 0, INFINITY, 1},
      {2, U, 1, 0, 0.5, 0, INFINITY, 1},
      {0, A, 1, 0, 1.0 / 3, 1, 1.0 / 3, 0},
      {5, U, 1, 20, 1, 1, 1, 0.25}}},
    /* Shares 0: Level FS 0, ranked last even without usage. Shares 3:1
     * with usage 1:1 gives Level FS 1.5 and 0.5. */
    {"zero shares and weighted shares",
     4,
     {{-1, A, 1, 0, 0, 1, 0, 0},
      {0, U, 3, 10, 0.75, 0.5, 1.5, 1},
      {0, U, 1, 10, 0.25, 0.5, 0.5, 2.0 / 3},
      {0, U, 0, 0, 0, 0, 0, 1.0 / 3}}},
};

static void near(double got, double want, const char *what, size_t i, const char *field)
{
    if (isinf(want)) {
        if (!isinf(got))
            fail_msg("%s: node %zu %s: got %g, want inf", what, i, field, got);
        return;
    }
    if (fabs(got - want) > 1e-9)
        fail_msg("%s: node %zu %s: got %.9g, want %.9g", what, i, field, got, want);
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const tree_case_t *tc = &cases[c];
        loom_fairtree_node_t nodes[NMAX];
        memset(nodes, 0, sizeof(nodes));
        for (size_t i = 0; i < tc->n; i++)
            nodes[i] = (loom_fairtree_node_t){.parent = tc->v[i].parent,
                                              .is_user = tc->v[i].user,
                                              .shares_raw = tc->v[i].shares,
                                              .usage_own = tc->v[i].usage};
        assert_int_equal(loom_fairtree_compute(nodes, tc->n, NULL), 0);
        for (size_t i = 0; i < tc->n; i++) {
            near(nodes[i].shares_norm, tc->v[i].norm_shares, tc->what, i, "NormShares");
            near(nodes[i].usage_efctv, tc->v[i].eff_usage, tc->what, i, "EffectvUsage");
            near(nodes[i].level_fs, tc->v[i].level_fs, tc->what, i, "LevelFS");
            near(nodes[i].fs_factor, tc->v[i].fairshare, tc->what, i, "FairShare");
        }
    }
}

static void test_sums(void **state)
{
    (void)state;
    loom_fairtree_node_t n[4] = {{.parent = -1},
                                 {.parent = 0, .shares_raw = 1},
                                 {.parent = 1, .is_user = true, .shares_raw = 1, .usage_own = 30},
                                 {.parent = 0, .is_user = true, .shares_raw = 1, .usage_own = 10}};
    assert_int_equal(loom_fairtree_compute(n, 4, NULL), 0);
    near(n[0].usage_raw, 40, "sums", 0, "RawUsage");
    near(n[1].usage_raw, 30, "sums", 1, "RawUsage");
    near(n[1].usage_norm, 0.75, "sums", 1, "NormUsage");
    near(n[3].usage_norm, 0.25, "sums", 3, "NormUsage");
    assert_int_equal(n[2].rank, 1);
    assert_int_equal(n[3].rank, 2);
}

static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        int32_t p0, p1, p2;
        bool user1;
        const char *msg;
    } bad[] = {
        {0, -1, 0, false, "root"},
        {-1, 2, 0, false, "not before"},
        {-1, 0, 1, true, "user node 1"},
        {-1, -1, 0, false, "not before"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        loom_fairtree_node_t n[3] = {{.parent = bad[i].p0},
                                     {.parent = bad[i].p1, .is_user = bad[i].user1},
                                     {.parent = bad[i].p2, .is_user = true, .usage_own = 5}};
        loom_err_t err = {0};
        assert_int_equal(loom_fairtree_compute(n, 3, &err), -EINVAL);
        assert_non_null(strstr(err.msg, bad[i].msg));
        assert_true(n[2].usage_raw == 0); /* untouched */
    }
    assert_int_equal(loom_fairtree_compute(NULL, 0, NULL), -EINVAL);
}

/* Usage that is negative, NaN or infinite counts as none; sums that overflow
 * to infinity leave finite, ordered factors (no NaN reaches the sort). */
static void test_bad_usage(void **state)
{
    (void)state;
    loom_fairtree_node_t n[6] = {
        {.parent = -1},
        {.parent = 0, .is_user = true, .shares_raw = 1, .usage_own = -5},
        {.parent = 0, .is_user = true, .shares_raw = 1, .usage_own = NAN},
        {.parent = 0, .is_user = true, .shares_raw = 1, .usage_own = INFINITY},
        {.parent = 0, .is_user = true, .shares_raw = 1, .usage_own = 1e308},
        {.parent = 0, .is_user = true, .shares_raw = 1, .usage_own = 1e308},
    };
    assert_int_equal(loom_fairtree_compute(n, 6, NULL), 0);
    for (size_t i = 1; i < 6; i++) {
        assert_false(isnan(n[i].level_fs));
        assert_true(n[i].fs_factor > 0 && n[i].fs_factor <= 1);
    }
    assert_true(n[1].usage_raw == 0 && n[2].usage_raw == 0 && n[3].usage_raw == 0);
    assert_true(n[1].fs_factor == 1 && n[2].fs_factor == 1 && n[3].fs_factor == 1);
}

static void test_decay(void **state)
{
    (void)state;
    /* One half-life leaves about half (Slurm's per-second factor). */
    assert_true(fabs(loom_fairtree_decay(3600, 3600) - 0.5) < 1e-4);
    assert_true(fabs(loom_fairtree_decay(7200, 3600) - 0.25) < 1e-4);
    assert_true(loom_fairtree_decay(100, 0) == 1);
    assert_true(loom_fairtree_decay(0, 3600) == 1);
    assert_true(loom_fairtree_decay(-5, 3600) == 1);
    /* A job of billing 4 over 60 s without decay: 240 TRES-seconds. */
    assert_true(loom_fairtree_charge(4, 60, 0) == 240);
    assert_true(loom_fairtree_charge(4, 60, 604800) < 240);
    assert_true(loom_fairtree_charge(4, 60, 604800) > 239.9);
    assert_true(loom_fairtree_charge(4, 0, 604800) == 0);
}

static void test_reset(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t last, now;
        bool due;
    } cases_r[] = {
        {"NONE", 1, 100000000, false},
        {"now", 0, 5, true},
        {"NOW", 7, 5000, false},
        {"DAILY", 86400 * 10 + 5, 86400 * 10 + 80000, false},
        {"DAILY", 86400 * 10 + 5, 86400 * 11 + 1, true},
        /* 1970-01-05 was a Monday. */
        {"WEEKLY", 86400 * 4 - 1, 86400 * 4, true},
        {"WEEKLY", 86400 * 4, 86400 * 10, false},
        /* 2026-01-31T12:00 -> 2026-02-01T00:00 */
        {"MONTHLY", 1769860800, 1769904000, true},
        {"QUARTERLY", 1769860800, 1769904000, false},
        /* 2026-03-31T23:00 -> 2026-04-01T01:00 */
        {"QUARTERLY", 1774998000, 1775005200, true},
        {"YEARLY", 1774998000, 1775005200, false},
        {"yearly", 1767225599, 1767225600, true},
        {"DAILY", 0, 5, false},
    };
    for (size_t i = 0; i < sizeof(cases_r) / sizeof(cases_r[0]); i++) {
        loom_fairtree_reset_t p;
        assert_int_equal(loom_fairtree_parse_reset(cases_r[i].name, &p, NULL), 0);
        if (loom_fairtree_reset_due(p, cases_r[i].last, cases_r[i].now) != cases_r[i].due)
            fail_msg("case %zu (%s)", i, cases_r[i].name);
    }
    loom_fairtree_reset_t p = LOOM_FT_RESET_DAILY;
    loom_err_t err = {0};
    assert_int_equal(loom_fairtree_parse_reset("hourly", &p, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'hourly'"));
    assert_int_equal(p, LOOM_FT_RESET_DAILY);
    assert_int_equal(loom_fairtree_parse_reset(NULL, &p, NULL), 0);
    assert_int_equal(p, LOOM_FT_RESET_NONE);
}

static void test_billing(void **state)
{
    (void)state;
    static const struct {
        const char *w;
        bool max;
        double want;
    } cases_b[] = {
        {NULL, false, 4},
        {"", false, 4},
        {"CPU=1.0", false, 4},
        {"CPU=1.0,Mem=0.25G", false, 4 + 0.25 * 8},
        {"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", false, 4 + 2 + 4},
        {"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", true, 4},
        {"CPU=0.5,GRES/gpu=3", true, 6},
        {"Mem=1", false, 8192},
        {"node=10,gres/gpu:a100=1", false, 10 + 2},
        {"license/x=5,CPU=2", false, 8},
    };
    loom_fairtree_tres_t t = {.cpus = 4, .mem_mib = 8192, .nodes = 1, .gpus = 2};
    for (size_t i = 0; i < sizeof(cases_b) / sizeof(cases_b[0]); i++) {
        double got = loom_fairtree_billing(cases_b[i].w, &t, cases_b[i].max, NULL);
        if (fabs(got - cases_b[i].want) > 1e-9)
            fail_msg("billing '%s': got %g, want %g", cases_b[i].w ? cases_b[i].w : "(null)", got,
                     cases_b[i].want);
    }
    static const char *const bad[] = {"CPU", "CPU=x", "=1", "Mem=1Q", "CPU=1G", "CPU=-1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        loom_err_t err = {0};
        assert_true(loom_fairtree_billing(bad[i], &t, false, &err) == -EINVAL);
        assert_non_null(strstr(err.msg, "bad entry"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),     cmocka_unit_test(test_sums),
        cmocka_unit_test(test_malformed), cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_decay),     cmocka_unit_test(test_reset),
        cmocka_unit_test(test_billing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

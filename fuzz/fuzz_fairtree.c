/*
 * fuzz_fairtree.c - the fair-tree core (src/sched/fairtree.h) on text input:
 *   line 1: TRESBillingWeights, billed for a job read from line 2;
 *   line 2: "CPUS MEM NODES GPUS" (the job's TRES), then PriorityFlags words
 *           (MAX_TRES picks the largest product);
 *   line 3: "PERIOD LAST NOW DT HALFLIFE" (PriorityUsageResetPeriod, a reset
 *           check over (LAST, NOW], decay and charge over DT);
 *   then one association a line: "PARENT U|A SHARES USAGE" (usage may be
 *           nan, inf, negative).
 * Checks what the header promises: computed factors in [0, 1], ranks at most
 * the number of users, no NaN in the out fields, outputs untouched on error.
 */
#include "sched/fairtree.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FT_MAX_NODES 512

static char *fz_line(char **p)
{
    char *s = *p;
    if (!s)
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = NULL;
    }
    return s;
}

static void fz_billing(const char *weights, const char *job)
{
    unsigned long long v[4] = {0};
    char flags[64] = "";
    char *end;
    const char *p = job ? job : "";
    for (int i = 0; i < 4; i++) {
        v[i] = strtoull(p, &end, 10) % 1000000;
        p = end;
    }
    size_t fl = strlen(p) < sizeof(flags) - 1 ? strlen(p) : sizeof(flags) - 1;
    memcpy(flags, p, fl);
    loom_fairtree_tres_t t = {v[0], v[1], v[2], v[3]};
    loom_err_t err = {0};
    double b = loom_fairtree_billing(weights, &t, strstr(flags, "MAX_TRES") != NULL, &err);
    if (isnan(b))
        abort();
}

static void fz_times(const char *line)
{
    char word[32] = "";
    long long last = 0, now = 0, dt = 0, hl = 0;
    if (!line)
        return;
    size_t wl = strcspn(line, " ");
    if (wl < sizeof(word))
        memcpy(word, line, wl);
    sscanf(line + wl, "%lld %lld %lld %lld", &last, &now, &dt, &hl);
    loom_fairtree_reset_t r = LOOM_FT_RESET_DAILY;
    loom_err_t err = {0};
    if (loom_fairtree_parse_reset(word, &r, &err) < 0) {
        if (r != LOOM_FT_RESET_DAILY || !err.msg[0])
            abort(); /* untouched on failure, and said why */
    } else {
        (void)loom_fairtree_reset_due(r, last, now);
    }
    double d = loom_fairtree_decay(dt, hl);
    double c = loom_fairtree_charge(2.5, dt, hl);
    if (isnan(d) || d < 0 || d > 1 || isnan(c))
        abort();
}

static size_t fz_tree(char **p, loom_fairtree_node_t *nodes)
{
    size_t n = 0;
    char *line;
    while (n < FT_MAX_NODES && (line = fz_line(p)) != NULL) {
        long parent = 0;
        char kind = 'A';
        unsigned long shares = 0;
        char usage[64] = "0";
        if (sscanf(line, "%ld %c %lu %63s", &parent, &kind, &shares, usage) < 2)
            continue;
        nodes[n] = (loom_fairtree_node_t){.parent = (int32_t)parent,
                                          .is_user = kind == 'U' || kind == 'u',
                                          .shares_raw = (uint32_t)shares,
                                          .usage_own = strtod(usage, NULL)};
        n++;
    }
    return n;
}

static void fz_check(const loom_fairtree_node_t *nodes, size_t n)
{
    uint32_t users = 0;
    for (size_t i = 0; i < n; i++)
        users += nodes[i].is_user;
    for (size_t i = 0; i < n; i++) {
        const loom_fairtree_node_t *x = &nodes[i];
        if (isnan(x->usage_raw) || isnan(x->shares_norm) || isnan(x->usage_norm) ||
            isnan(x->usage_efctv) || isnan(x->level_fs) || isnan(x->fs_factor))
            abort();
        if (x->fs_factor < 0 || x->fs_factor > 1 || x->rank > users)
            abort();
        if (!x->is_user && (x->rank || x->fs_factor != 0))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *p = text;
    char *weights = fz_line(&p);
    char *job = fz_line(&p);
    fz_billing(weights, job);
    fz_times(fz_line(&p));
    loom_fairtree_node_t *nodes = calloc(FT_MAX_NODES, sizeof(*nodes));
    size_t n = nodes ? fz_tree(&p, nodes) : 0;
    if (n) {
        loom_fairtree_node_t *copy = malloc(n * sizeof(*copy));
        memcpy(copy, nodes, n * sizeof(*copy));
        loom_err_t err = {0};
        if (loom_fairtree_compute(nodes, n, &err) == 0)
            fz_check(nodes, n);
        else if (memcmp(copy, nodes, n * sizeof(*copy)) != 0 || !err.msg[0])
            abort();
        free(copy);
    }
    free(nodes);
    free(text);
    return 0;
}

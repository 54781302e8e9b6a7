/*
 * fuzz_assoc_tree.c - the controller's association tree (assoc_mgr.c) from
 * loomdbd's lists or the cache file loomctld reads at start
 * (StateSaveLocation/assoc_cache.json), then the lookups, the TRES limit
 * strings and the limit check of assoc_policy.c over every association
 * (with both QOS, usage and "safe", for the TRES-minutes and GrpWall limits).
 * Input: JSON text {"assocs": [...], "users": [...], "qos": [...]}.
 */
#include "ctld/assoc_mgr.h"
#include "ctld/assoc_policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Walk up from a: parent links must end (no loop). */
static void fuzz_walk(const ctld_assoc_t *a)
{
    int depth = 0;
    for (; a; a = a->parent)
        if (++depth > 100000)
            abort();
}

static void fuzz_check_all(const ctld_assoc_tree_t *t)
{
    ctld_tres_t job = {0};
    ctld_tres_add(&job, "cpu", 4);
    ctld_tres_add(&job, "node", 1);
    ctld_tres_add(&job, "mem", 1024);
    ctld_tres_add(&job, "gres/gpu", 1);
    /* Usage for the first association only: every level is read, most are NULL. */
    const ctld_policy_use_t **by_idx = calloc(t->nassocs + 1, sizeof(*by_idx));
    if (!by_idx)
        return;
    ctld_policy_use_t first = {.jobs = 1, .wall_secs = 3600};
    ctld_tres_add(&first.used_secs, "cpu", 6000);
    ctld_tres_add(&first.run_secs, "gres/gpu", 600);
    by_idx[0] = &first;
    for (size_t i = 0; i < t->nassocs; i++) {
        const ctld_assoc_t *a = t->assocs[i];
        fuzz_walk(a);
        for (size_t k = 0; k < a->nchildren; k++)
            if (a->children[k]->parent != a)
                abort();
        ctld_policy_use_t use = {.jobs = (int64_t)i, .wall_secs = (int64_t)i * 60};
        ctld_tres_add(&use.used_secs, "cpu", (int64_t)i * 600);
        ctld_tres_add(&use.run_secs, "cpu", (int64_t)i * 300);
        ctld_policy_in_t in = {.assoc = a,
                               .assoc_use = by_idx,
                               .qos = t->nqos ? &t->qos[i % t->nqos] : NULL,
                               .qos_use = &use,
                               .qos2 = t->nqos ? &t->qos[(i + 1) % t->nqos] : NULL,
                               .qos2_use = &use,
                               .safe = i % 2 == 0,
                               .job = &job,
                               .time_limit = (int64_t)i % 3 - 1};
        bool never;
        ctld_policy_check(&in, &never);
        ctld_assoc_find(t, a->user, a->account, a->partition);
        ctld_assoc_find(t, a->user, NULL, "p");
        ctld_assoc_qos_allowed(a, a->default_qos);
    }
    free(by_idx);
    for (size_t i = 0; i < t->nusers; i++)
        ctld_assoc_user(t, t->users[i].name);
    for (size_t i = 0; i < t->nqos; i++)
        ctld_assoc_qos(t, t->qos[i].name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ctld_tres_t tres;
    loom_err_t err = {0};
    ctld_tres_parse(text, &tres, &err);
    json_t *lists = json_loads(text, 0, NULL);
    free(text);
    if (!lists)
        return 0;
    ctld_assoc_tree_t *t = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (ctld_assoc_tree_build(lists, pass ? "c1" : NULL, &t, &err) == 0) {
            fuzz_check_all(t);
            ctld_assoc_tree_free(t);
        }
    }
    json_decref(lists);
    return 0;
}

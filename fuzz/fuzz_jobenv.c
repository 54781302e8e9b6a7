/*
 * fuzz_jobenv.c - the job environment (src/common/jobenv.c, CLI_SPEC §12).
 *
 * Input "E<spec>": an --export value applied to a fixed environment; on
 * success every entry must be NAME=value with a valid name, and SLURM_* of
 * the source must be there. Input "J<json>": a job record (messages.md §1)
 * turned into the batch environment of node n2 and the step environment of
 * a task (abort() on an entry without '=').
 */
#include "common/jobenv.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_jobenv_check(const loom_strv_t *env)
{
    for (size_t i = 0; i < env->n; i++)
        if (!strchr(env->v[i], '=') || env->v[i][0] == '=')
            abort();
}

static void fuzz_jobenv_export(const char *spec)
{
    char *src[] = {"PATH=/bin", "HOME=/h", "A=1", "SLURM_CONF=/c", "X=", NULL};
    loom_strv_t out = LOOM_STRV_INIT;
    if (loom_jobenv_export(spec, src, &out, NULL) == 0) {
        fuzz_jobenv_check(&out);
        if (!loom_jobenv_get(&out, "SLURM_CONF"))
            abort();
    } else if (out.n != 0) {
        abort(); /* outputs untouched on failure */
    }
    loom_strv_free(&out);
}

static void fuzz_jobenv_record(const char *text)
{
    json_t *rec = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    loom_jobenv_job_t job;
    uint32_t index = 0;
    if (rec && loom_jobenv_job_from_json(rec, "n2", &job, &index, NULL) == 0) {
        static const uint32_t gpus[] = {0, 3};
        loom_jobenv_node_t node = {.name = "n2", .index = index, .gpus = gpus, .ngpus = 2};
        loom_strv_t env = LOOM_STRV_INIT;
        if (loom_jobenv_export(job.export_env, NULL, &env, NULL) == 0) {
            loom_jobenv_batch(&job, &node, &env);
            uint32_t tpn[] = {job.num_nodes, 1};
            loom_jobenv_step_t step = {.step_id = 1,
                                       .nodelist = job.nodelist,
                                       .num_nodes = 2,
                                       .tasks_per_node = tpn,
                                       .ntasks = job.num_nodes + 1,
                                       .node_name = "n2",
                                       .node_id = 1,
                                       .first_task = 1};
            loom_jobenv_step(&step, 0, 42, &env);
            fuzz_jobenv_check(&env);
        }
        loom_strv_free(&env);
        loom_jobenv_job_free(&job);
    }
    json_decref(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = loom_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    if (text[0] == 'E')
        fuzz_jobenv_export(text + 1);
    else if (text[0] == 'J')
        fuzz_jobenv_record(text + 1);
    free(text);
    return 0;
}

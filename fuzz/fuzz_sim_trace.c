/*
 * fuzz_sim_trace.c - loom-sim's trace readers (src/sim/trace.h): the input
 * is read as an SWF trace and as a GPU-jobs CSV; a small trace that parses
 * is replayed on a 3-node cluster with every policy (src/sched underneath).
 */
#include "sim/sim.h"
#include "sim/trace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_replay(const loom_sim_trace_t *t)
{
    if (t->n == 0 || t->n > 64)
        return;
    loom_sim_opts_t o = {.nodes = 3, .cpus = 8, .gpus = 4, .mem = 64000};
    for (int p = 0; p < LOOM_SIM_NPOLICY; p++) {
        o.policy = (loom_sim_policy_t)p;
        loom_sim_result_t r;
        loom_sim_run(t, &o, &r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    loom_sim_trace_t t = {0};
    if (loom_sim_swf_parse(text, &t, NULL) == 0)
        fuzz_replay(&t);
    if (loom_sim_csv_parse(text, &t, NULL) == 0)
        fuzz_replay(&t);
    loom_sim_trace_free(&t);
    free(text);
    return 0;
}

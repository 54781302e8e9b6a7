/*
 * fuzz_procstat.c - the /proc and cgroup file parsers of usage gathering
 * (src/common/procstat.c) and the usage summaries built from their figures
 * (src/common/usage.c).
 *
 * The same text goes to every parser (a process may name itself anything,
 * so /proc/PID/stat holds user-controlled bytes); a parser that fails must
 * leave its output untouched. The first bytes also make a few task figures
 * that are summarised and merged.
 */
#include "common/procstat.h"
#include "common/usage.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_untouched(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != 0xA5)
            abort();
}

static void fuzz_parsers(const char *text)
{
    loom_procstat_t st;
    loom_procstatus_t ps;
    loom_procio_t io;
    uint64_t v[2];
    memset(&st, 0xA5, sizeof(st));
    if (loom_procstat_parse_stat(text, &st, NULL) < 0)
        fuzz_untouched(&st, sizeof(st));
    memset(&ps, 0xA5, sizeof(ps));
    if (loom_procstat_parse_status(text, &ps, NULL) < 0)
        fuzz_untouched(&ps, sizeof(ps));
    memset(&io, 0xA5, sizeof(io));
    if (loom_procstat_parse_io(text, &io, NULL) < 0)
        fuzz_untouched(&io, sizeof(io));
    memset(v, 0xA5, sizeof(v));
    if (loom_cgstat_parse_u64(text, &v[0], NULL) < 0)
        fuzz_untouched(&v[0], sizeof(v[0]));
    memset(v, 0xA5, sizeof(v));
    if (loom_cgstat_parse_key(text, "user_usec", &v[0], NULL) < 0)
        fuzz_untouched(&v[0], sizeof(v[0]));
    memset(v, 0xA5, sizeof(v));
    if (loom_cgstat_parse_io_v2(text, &v[0], &v[1], NULL) < 0)
        fuzz_untouched(v, sizeof(v));
    memset(v, 0xA5, sizeof(v));
    if (loom_cgstat_parse_blkio_v1(text, &v[0], &v[1], NULL) < 0)
        fuzz_untouched(v, sizeof(v));
    loom_usage_gather_freq(text);
}

/* Task figures from the input's bytes, summarised per node and merged. */
static void fuzz_summaries(const uint8_t *data, size_t size)
{
    loom_usage_task_t t[4] = {0};
    uint32_t n = size ? data[0] % 5 : 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = 0;
        for (size_t k = 0; k < 8 && 1 + i * 8 + k < size; k++)
            x = x << 8 | data[1 + i * 8 + k];
        t[i] = (loom_usage_task_t){.rank = i,
                                   .max_rss = x >> 20,
                                   .max_vmsize = x >> 18,
                                   .rss_sum = x >> 19,
                                   .samples = (uint32_t)(x & 7),
                                   .user_us = x >> 24,
                                   .sys_us = x >> 30,
                                   .disk_read = x >> 12,
                                   .disk_write = x & 0xffff};
    }
    json_t *acc = json_object();
    for (int k = 0; k < 2; k++) {
        json_t *node = loom_usage_node_json(k ? "n2" : "n1", t, n, (int64_t)n * 7, k ? 50 : -1);
        loom_usage_merge(acc, node);
        json_decref(node);
    }
    json_t *rec = loom_usage_record(acc);
    json_decref(rec);
    json_decref(acc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    fuzz_parsers(text);
    fuzz_summaries(data, size);
    free(text);
    return 0;
}

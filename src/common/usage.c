/*
 * usage.c - step usage summaries. See usage.h.
 */
#include "common/usage.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t usage_get(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (int64_t)json_integer_value(v) : 0;
}

static void usage_set(json_t *o, const char *key, int64_t v)
{
    json_object_set_new(o, key, json_integer(v));
}

/* A maximum with its node and task: "<key>", "<key>_node", "<key>_task". */
static void usage_set_max(json_t *o, const char *key, const char *node, int64_t v, int64_t task)
{
    char k[64];
    usage_set(o, key, v);
    snprintf(k, sizeof(k), "%s_node", key);
    json_object_set_new(o, k, json_string(node ? node : ""));
    snprintf(k, sizeof(k), "%s_task", key);
    usage_set(o, k, task);
}

typedef struct usage_pick {
    uint64_t best;
    uint32_t task;
    bool any;
} usage_pick_t;

static void usage_pick(usage_pick_t *p, uint64_t v, uint32_t task, bool lowest)
{
    if (!p->any || (lowest ? v < p->best : v > p->best)) {
        p->best = v;
        p->task = task;
        p->any = true;
    }
}

/* The least of a task's figures, kept beside the maxima (TRESUsageInMin). */
static const char *const usage_mins[] = {"min_rss", "min_vmsize", "min_disk_read",
                                         "min_disk_write"};
/* Sums over every task (TRESUsageInTot / TRESUsageOutTot). */
static const char *const usage_tots[] = {"total_cpu",  "user_cpu",      "system_cpu",    "tot_rss",
                                         "tot_vmsize", "tot_disk_read", "tot_disk_write"};

json_t *loom_usage_node_json(const char *node, const loom_usage_task_t *tasks, uint32_t ntasks,
                             int64_t gpu_time, int gpu_util)
{
    usage_pick_t rss = {0}, vm = {0}, cpu = {0}, rd = {0}, wr = {0};
    usage_pick_t lo[4] = {{0}}, cpu_hi = {0}; /* rss, vmsize, disk read, write */
    uint64_t ave_rss = 0, ave_vm = 0, user = 0, sys = 0, rd_sum = 0, wr_sum = 0;
    uint64_t rss_sum = 0, vm_sum = 0;
    for (uint32_t i = 0; i < ntasks; i++) {
        const loom_usage_task_t *t = &tasks[i];
        usage_pick(&rss, t->max_rss, t->rank, false);
        usage_pick(&vm, t->max_vmsize, t->rank, false);
        usage_pick(&cpu, t->user_us + t->sys_us, t->rank, true);
        usage_pick(&cpu_hi, t->user_us + t->sys_us, t->rank, false);
        usage_pick(&rd, t->disk_read, t->rank, false);
        usage_pick(&wr, t->disk_write, t->rank, false);
        usage_pick(&lo[0], t->max_rss, t->rank, true);
        usage_pick(&lo[1], t->max_vmsize, t->rank, true);
        usage_pick(&lo[2], t->disk_read, t->rank, true);
        usage_pick(&lo[3], t->disk_write, t->rank, true);
        rss_sum += t->max_rss;
        vm_sum += t->max_vmsize;
        /* A task never sampled alive: its peak is the best average there is. */
        ave_rss += t->samples ? t->rss_sum / t->samples : t->max_rss;
        ave_vm += t->samples ? t->vmsize_sum / t->samples : t->max_vmsize;
        user += t->user_us;
        sys += t->sys_us;
        rd_sum += t->disk_read;
        wr_sum += t->disk_write;
    }
    uint32_t n = ntasks ? ntasks : 1;
    json_t *o = json_object();
    json_object_set_new(o, "node", json_string(node ? node : ""));
    usage_set(o, "ntasks", ntasks);
    usage_set_max(o, "max_rss", node, (int64_t)rss.best, rss.task);
    usage_set(o, "ave_rss", (int64_t)(ave_rss / n));
    usage_set_max(o, "max_vmsize", node, (int64_t)vm.best, vm.task);
    usage_set(o, "ave_vmsize", (int64_t)(ave_vm / n));
    usage_set(o, "total_cpu", (int64_t)(user + sys));
    usage_set(o, "user_cpu", (int64_t)user);
    usage_set(o, "system_cpu", (int64_t)sys);
    usage_set_max(o, "min_cpu", node, (int64_t)cpu.best, cpu.task);
    usage_set_max(o, "max_disk_read", node, (int64_t)rd.best, rd.task);
    usage_set(o, "ave_disk_read", (int64_t)(rd_sum / n));
    usage_set_max(o, "max_disk_write", node, (int64_t)wr.best, wr.task);
    usage_set(o, "ave_disk_write", (int64_t)(wr_sum / n));
    usage_set_max(o, "max_cpu", node, (int64_t)cpu_hi.best, cpu_hi.task);
    for (size_t i = 0; i < 4; i++)
        usage_set_max(o, usage_mins[i], node, (int64_t)lo[i].best, lo[i].task);
    usage_set(o, "tot_rss", (int64_t)rss_sum);
    usage_set(o, "tot_vmsize", (int64_t)vm_sum);
    usage_set(o, "tot_disk_read", (int64_t)rd_sum);
    usage_set(o, "tot_disk_write", (int64_t)wr_sum);
    usage_set(o, "gpu_time", gpu_time > 0 ? gpu_time : 0);
    if (gpu_util >= 0)
        usage_set(o, "gpu_util", gpu_util > 100 ? 100 : gpu_util);
    return o;
}

/* Keep the larger (or with lowest, the smaller) of acc's and node's key. */
static void usage_merge_max(json_t *acc, const json_t *node, const char *key, bool first,
                            bool lowest)
{
    int64_t a = usage_get(acc, key), v = usage_get(node, key);
    if (!first && (lowest ? v >= a : v <= a))
        return;
    char k[64];
    snprintf(k, sizeof(k), "%s_node", key);
    const char *where = json_string_value(json_object_get(node, k));
    if (!where)
        where = json_string_value(json_object_get(node, "node"));
    snprintf(k, sizeof(k), "%s_task", key);
    usage_set_max(acc, key, where, v, usage_get(node, k));
}

/* Weighted mean: acc's value over acc_w and node's over w. */
static void usage_merge_ave(json_t *acc, const json_t *node, const char *key, int64_t acc_w,
                            int64_t w)
{
    int64_t total = acc_w + w;
    if (total <= 0) {
        usage_set(acc, key, usage_get(node, key));
        return;
    }
    double v =
        ((double)usage_get(acc, key) * (double)acc_w + (double)usage_get(node, key) * (double)w) /
        (double)total;
    usage_set(acc, key, (int64_t)(v + 0.5));
}

void loom_usage_merge(json_t *acc, const json_t *node)
{
    static const char *const maxes[] = {"max_rss", "max_vmsize", "max_disk_read", "max_disk_write"};
    static const char *const aves[] = {"ave_rss", "ave_vmsize", "ave_disk_read", "ave_disk_write"};
    bool first = json_object_get(acc, "ntasks") == NULL;
    int64_t acc_n = usage_get(acc, "ntasks"), n = usage_get(node, "ntasks");
    for (size_t i = 0; i < 4; i++) {
        usage_merge_max(acc, node, maxes[i], first, false);
        usage_merge_ave(acc, node, aves[i], acc_n, n);
        if (json_object_get(node, usage_mins[i]))
            usage_merge_max(acc, node, usage_mins[i], first, true);
    }
    usage_merge_max(acc, node, "min_cpu", first, true);
    if (json_object_get(node, "max_cpu"))
        usage_merge_max(acc, node, "max_cpu", first, false);
    for (size_t i = 0; i < sizeof(usage_tots) / sizeof(usage_tots[0]); i++)
        usage_set(acc, usage_tots[i],
                  usage_get(acc, usage_tots[i]) + usage_get(node, usage_tots[i]));
    int64_t acc_g = usage_get(acc, "gpu_time"), g = usage_get(node, "gpu_time");
    if (json_is_integer(json_object_get(node, "gpu_util"))) {
        /* earlier nodes that measured nothing do not weigh */
        int64_t w = json_object_get(acc, "gpu_util") ? usage_get(acc, "gpu_util_weight") : 0;
        usage_merge_ave(acc, node, "gpu_util", w, g > 0 ? g : 1);
        usage_set(acc, "gpu_util_weight", w + (g > 0 ? g : 1));
    }
    usage_set(acc, "gpu_time", acc_g + g);
    usage_set(acc, "ntasks", acc_n + n);
}

/* key and, for a maximum or minimum, its _node and _task. */
static void usage_record_more(const json_t *summary, const char *key, json_t *x)
{
    char k[64];
    const char *sfx[] = {"", "_node", "_task"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(k, sizeof(k), "%s%s", key, sfx[i]);
        json_t *v = json_object_get(summary, k);
        if (v && (i == 0 || strncmp(key, "ave_", 4) != 0))
            json_object_set(x, k, v);
    }
}

json_t *loom_usage_record(const json_t *summary)
{
    static const char *const keys[] = {
        "max_rss",  "ave_rss",    "max_vmsize",    "max_rss_node",   "max_rss_task", "total_cpu",
        "user_cpu", "system_cpu", "max_disk_read", "max_disk_write", "gpu_time",     "gpu_util"};
    /* sacct's other usage fields (AveVMSize, MinCPU, TRESUsageIn*, ...) */
    static const char *const more[] = {"ave_vmsize",    "ave_disk_read", "ave_disk_write",
                                       "min_cpu",       "max_cpu",       "max_vmsize",
                                       "max_disk_read", "max_disk_write"};
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(summary, keys[i]);
        if (v)
            json_object_set(o, keys[i], v);
    }
    json_t *x = json_object();
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
        usage_record_more(summary, more[i], x);
    for (size_t i = 0; i < 4; i++)
        usage_record_more(summary, usage_mins[i], x);
    for (size_t i = 3; i < sizeof(usage_tots) / sizeof(usage_tots[0]); i++)
        usage_record_more(summary, usage_tots[i], x);
    json_object_set_new(o, "usage_more", x);
    return o;
}

int loom_usage_gather_freq(const char *text)
{
    if (!text || !*text)
        return LOOM_USAGE_DEFAULT_FREQ;
    const char *t = strstr(text, "task=");
    if (t && t != text && t[-1] != ',')
        t = NULL;
    const char *p = t ? t + 5 : text;
    if (!isdigit((unsigned char)*p))
        return LOOM_USAGE_DEFAULT_FREQ; /* only other kinds (energy=...) given */
    char *end;
    long v = strtol(p, &end, 10);
    if (*end && *end != ',')
        return LOOM_USAGE_DEFAULT_FREQ;
    return v > 86400 ? 86400 : (int)v;
}

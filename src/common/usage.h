/*
 * usage.h - a job step's resource usage as Slurm's accounting reports it:
 * per-task figures on one node, the node's summary, and the step's summary
 * over its nodes (docs/proto/messages.md §3 step.stat, §4 step.done,
 * §6.1 step record fields; CLI_SPEC §8 sacct, sstat).
 *
 * Units: memory in KiB, CPU in microseconds, disk in bytes, GPU time in
 * seconds, GPU utilisation in percent (-1: not measured).
 *
 * Semantics (Slurm 22.05's jobacct_gather): a task's RSS / VMSize is the sum
 * over its processes at a sample; MaxRSS is the highest a task reached
 * (sample, or the kernel's high-water mark), with the node and task holding
 * it; AveRSS the mean over tasks of each task's mean over samples; TotalCPU
 * = UserCPU + SystemCPU summed over every process of the step (reaped ones
 * included); MinCPU the least CPU of a task; MaxDiskRead / MaxDiskWrite the
 * most one task read / wrote (rchar / wchar).
 *
 * Entry points:
 *   loom_usage_node_json   a node's summary from its tasks (the reply of
 *                          stepd.usage, the "usage" of step.done/stepd.done)
 *   loom_usage_merge       fold one node's summary into the step's
 *   loom_usage_record      the step record's usage fields (§6.1) of a summary
 */
#ifndef LOOM_COMMON_USAGE_H
#define LOOM_COMMON_USAGE_H

#include <jansson.h>
#include <stdint.h>

/* One task's figures on a node. */
typedef struct loom_usage_task {
    uint32_t rank;
    uint64_t max_rss, max_vmsize;   /* KiB */
    uint64_t rss_sum, vmsize_sum;   /* KiB summed over samples */
    uint32_t samples;               /* samples with a live process */
    uint64_t user_us, sys_us;       /* CPU time */
    uint64_t disk_read, disk_write; /* bytes */
} loom_usage_task_t;

/* A node's summary: {node, ntasks, max_rss, max_rss_node, max_rss_task,
 * ave_rss, max_vmsize, max_vmsize_node, max_vmsize_task, ave_vmsize,
 * total_cpu, user_cpu, system_cpu, min_cpu, min_cpu_node, min_cpu_task,
 * max_disk_read(_node, _task), ave_disk_read, max_disk_write(_node, _task),
 * ave_disk_write, max_cpu, min_rss, min_vmsize, min_disk_read, min_disk_write
 * (each with _node, _task), tot_rss, tot_vmsize, tot_disk_read, tot_disk_write,
 * gpu_time, gpu_util}. gpu_util < 0 leaves it out. */
json_t *loom_usage_node_json(const char *node, const loom_usage_task_t *tasks, uint32_t ntasks,
                             int64_t gpu_time, int gpu_util);

/* Fold a node summary into acc (an object, empty at first): maxima keep
 * their node and task, averages are weighted by tasks, CPU and GPU time add
 * up, gpu_util is weighted by GPU time. Bad or missing members count as 0. */
void loom_usage_merge(json_t *acc, const json_t *node);

/* The step record's fields (§6.1) of a summary: new object. The figures
 * only sacct's longer fields use (AveVMSize, MinCPU, TRESUsageIn*, TRESUsageOut*) are
 * in its "usage_more" object: ave_vmsize, ave_disk_read, ave_disk_write,
 * min_cpu, max_cpu, max_vmsize, max_disk_read, max_disk_write, min_rss,
 * min_vmsize, min_disk_read, min_disk_write (each max/min with _node and
 * _task), tot_rss, tot_vmsize, tot_disk_read, tot_disk_write. */
json_t *loom_usage_record(const json_t *summary);

#define LOOM_USAGE_DEFAULT_FREQ 30

/* JobAcctGatherFrequency ("30", "task=30,energy=0", NULL) -> seconds between
 * task samples (0: none; the default 30 when the text gives no task value). */
int loom_usage_gather_freq(const char *text);

#endif

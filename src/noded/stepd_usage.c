/*
 * stepd_usage.c - usage gathering in loomstepd. See stepd_usage.h.
 */
#include "noded/stepd_usage.h"

#include "common/sbuf.h"
#include "common/usage.h"
#include "common/xalloc.h"
#include "noded/conn.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GATHER_FIRST_MS 200 /* the first sample, soon after the start */

/* One task: figures so far, and the scratch of the sample being taken. */
typedef struct gather_task {
    loom_usage_task_t u;
    uint64_t ru_user, ru_sys, ru_maxrss; /* from reaped children */
    uint64_t smp_user, smp_sys;          /* the highest sampled CPU */
    uint64_t cur_rss, cur_vsz, cur_hwm, cur_user, cur_sys, cur_rd, cur_wr;
    bool alive;
} gather_task_t;

/* NVML, when libnvidia-ml.so.1 is there (never required). */
typedef struct gather_nvml_util {
    unsigned gpu, memory;
} gather_nvml_util_t;
typedef int (*gather_nvml_init_f)(void);
typedef int (*gather_nvml_handle_f)(unsigned, void **);
typedef int (*gather_nvml_util_f)(void *, gather_nvml_util_t *);

typedef struct gather_nvml {
    void *lib;
    gather_nvml_init_f shutdown;
    gather_nvml_handle_f handle;
    gather_nvml_util_f util;
} gather_nvml_t;

struct loom_gather {
    uv_loop_t *loop;
    uv_timer_t timer;
    bool timer_init, periodic, use_cgroup, final;
    int freq; /* seconds */
    char *node_name, *cgroup_dir;
    gather_task_t *tasks;
    uint32_t ntasks;
    uint32_t *gpus, ngpus;
    int64_t start, end;
    loom_gather_owner_f *owner;
    void *arg;
    gather_nvml_t *nvml;
    uint64_t util_sum, util_samples;
    long hz, page_kib;
    loom_sbuf_t pids; /* the last sample's processes, "12,13" (sstat -i) */
};

/* ------------------------------------------------------------------ NVML */

static gather_nvml_t *gather_nvml_open(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    gather_nvml_init_f init = (gather_nvml_init_f)dlsym(lib, "nvmlInit_v2");
    gather_nvml_t n = {
        .lib = lib,
        .shutdown = (gather_nvml_init_f)dlsym(lib, "nvmlShutdown"),
        .handle = (gather_nvml_handle_f)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"),
        .util = (gather_nvml_util_f)dlsym(lib, "nvmlDeviceGetUtilizationRates"),
    };
    if (!init || !n.shutdown || !n.handle || !n.util || init() != 0) {
        dlclose(lib);
        return NULL;
    }
    gather_nvml_t *p = loom_xmalloc(sizeof(*p));
    *p = n;
    return p;
}

static void gather_nvml_close(gather_nvml_t *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

/* The mean utilisation of the step's GPUs now (one sample). */
static void gather_nvml_sample(loom_gather_t *g)
{
    uint64_t sum = 0, n = 0;
    for (uint32_t i = 0; g->nvml && i < g->ngpus; i++) {
        void *h = NULL;
        gather_nvml_util_t u = {0};
        if (g->nvml->handle(g->gpus[i], &h) == 0 && g->nvml->util(h, &u) == 0) {
            sum += u.gpu;
            n++;
        }
    }
    if (n) {
        g->util_sum += sum / n;
        g->util_samples++;
    }
}

/* ---------------------------------------------------------------- /proc */

/* Read a small file into buf (NUL-terminated); bytes read or -errno. */
static ssize_t gather_read(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = 0;
    ssize_t n;
    while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    return (ssize_t)len;
}

int loom_gather_proc(int pid, loom_procstat_t *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    ssize_t n = gather_read(path, buf, sizeof(buf));
    if (n <= 0)
        return n < 0 ? (int)n : -ENOENT;
    return loom_procstat_parse_stat(buf, out, NULL);
}

static uint64_t gather_ticks_us(const loom_gather_t *g, uint64_t ticks)
{
    return ticks * (1000000u / (uint64_t)g->hz);
}

/* One process of task t into the sample. */
static void gather_proc(loom_gather_t *g, gather_task_t *t, const loom_procstat_t *p)
{
    char path[64], buf[4096];
    loom_procstatus_t st = {0};
    loom_procio_t io = {0};
    snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
    if (gather_read(path, buf, sizeof(buf)) <= 0 || loom_procstat_parse_status(buf, &st, NULL) < 0)
        st.vm_rss = p->rss_pages * (uint64_t)g->page_kib;
    snprintf(path, sizeof(path), "/proc/%d/io", p->pid);
    if (gather_read(path, buf, sizeof(buf)) > 0)
        loom_procstat_parse_io(buf, &io, NULL);
    t->cur_rss += st.vm_rss;
    t->cur_vsz += p->vsize / 1024;
    if (st.vm_hwm > t->cur_hwm)
        t->cur_hwm = st.vm_hwm;
    t->cur_user += gather_ticks_us(g, p->utime + p->cutime);
    t->cur_sys += gather_ticks_us(g, p->stime + p->cstime);
    t->cur_rd += io.rchar;
    t->cur_wr += io.wchar;
    t->alive = true;
}

static uint64_t gather_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Fold the sample just taken into the task's figures. */
static void gather_fold(gather_task_t *t)
{
    if (!t->alive)
        return;
    loom_usage_task_t *u = &t->u;
    u->samples++;
    u->rss_sum += t->cur_rss;
    u->vmsize_sum += t->cur_vsz;
    u->max_rss = gather_max(u->max_rss, gather_max(t->cur_rss, t->cur_hwm));
    u->max_vmsize = gather_max(u->max_vmsize, t->cur_vsz);
    t->smp_user = gather_max(t->smp_user, t->cur_user);
    t->smp_sys = gather_max(t->smp_sys, t->cur_sys);
    u->disk_read = gather_max(u->disk_read, t->cur_rd);
    u->disk_write = gather_max(u->disk_write, t->cur_wr);
}

void loom_gather_sample(loom_gather_t *g)
{
    if (!g || g->final)
        return;
    for (uint32_t i = 0; i < g->ntasks; i++) {
        gather_task_t *t = &g->tasks[i];
        t->cur_rss = t->cur_vsz = t->cur_hwm = t->cur_user = t->cur_sys = 0;
        t->cur_rd = t->cur_wr = 0;
        t->alive = false;
    }
    loom_sbuf_reset(&g->pids);
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        loom_procstat_t p;
        if (!isdigit((unsigned char)e->d_name[0]) || loom_gather_proc(atoi(e->d_name), &p) < 0)
            continue;
        int idx = g->owner(g->arg, &p);
        if (idx < 0 || (uint32_t)idx >= g->ntasks)
            continue;
        gather_proc(g, &g->tasks[idx], &p);
        loom_sbuf_addf(&g->pids, "%s%d", g->pids.len ? "," : "", p.pid);
    }
    if (d)
        closedir(d);
    for (uint32_t i = 0; i < g->ntasks; i++)
        gather_fold(&g->tasks[i]);
    gather_nvml_sample(g);
}

/* -------------------------------------------------------------- cgroups */

static bool gather_cg_u64(const loom_gather_t *g, const char *file, uint64_t *out)
{
    char path[4096], buf[256];
    snprintf(path, sizeof(path), "%s/%s", g->cgroup_dir, file);
    return gather_read(path, buf, sizeof(buf)) > 0 && loom_cgstat_parse_u64(buf, out, NULL) == 0;
}

static bool gather_cg_text(const loom_gather_t *g, const char *file, char *buf, size_t size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g->cgroup_dir, file);
    return gather_read(path, buf, size) > 0;
}

/* The cgroup's counters (v2, else v1) into a one-task step's figures. */
static void gather_cgroup(loom_gather_t *g)
{
    if (!g->use_cgroup || !g->cgroup_dir || g->ntasks != 1)
        return;
    gather_task_t *t = &g->tasks[0];
    uint64_t v = 0, user = 0, sys = 0, rd = 0, wr = 0;
    char buf[8192];
    if (gather_cg_u64(g, "memory.peak", &v) || gather_cg_u64(g, "memory.max_usage_in_bytes", &v))
        t->u.max_rss = gather_max(t->u.max_rss, v / 1024);
    if (gather_cg_text(g, "cpu.stat", buf, sizeof(buf)) &&
        loom_cgstat_parse_key(buf, "user_usec", &user, NULL) == 0 &&
        loom_cgstat_parse_key(buf, "system_usec", &sys, NULL) == 0) {
        t->smp_user = gather_max(t->smp_user, user);
        t->smp_sys = gather_max(t->smp_sys, sys);
    } else if (gather_cg_u64(g, "cpuacct.usage_user", &user) &&
               gather_cg_u64(g, "cpuacct.usage_sys", &sys)) {
        t->smp_user = gather_max(t->smp_user, user / 1000);
        t->smp_sys = gather_max(t->smp_sys, sys / 1000);
    }
    if ((gather_cg_text(g, "io.stat", buf, sizeof(buf)) &&
         loom_cgstat_parse_io_v2(buf, &rd, &wr, NULL) == 0) ||
        (gather_cg_text(g, "blkio.throttle.io_service_bytes", buf, sizeof(buf)) &&
         loom_cgstat_parse_blkio_v1(buf, &rd, &wr, NULL) == 0)) {
        t->u.disk_read = gather_max(t->u.disk_read, rd);
        t->u.disk_write = gather_max(t->u.disk_write, wr);
    }
}

/* ------------------------------------------------------------ life cycle */

static void gather_due(uv_timer_t *h)
{
    loom_gather_t *g = h->data;
    loom_gather_sample(g);
    if (g->periodic && g->freq > 0 && !g->final)
        uv_timer_start(&g->timer, gather_due, (uint64_t)g->freq * 1000, 0);
}

loom_gather_t *loom_gather_create(uv_loop_t *loop, const loom_gather_opts_t *o)
{
    loom_gather_t *g = loom_xcalloc(1, sizeof(*g));
    const json_t *ag = json_object_get(o->node, "acct_gather");
    const char *type = json_string_value(json_object_get(ag, "type"));
    g->loop = loop;
    g->periodic = type && strcmp(type, "jobacct_gather/none") != 0;
    g->use_cgroup = type && strcmp(type, "jobacct_gather/cgroup") == 0;
    g->freq = json_is_integer(json_object_get(ag, "freq"))
                  ? (int)json_integer_value(json_object_get(ag, "freq"))
                  : LOOM_USAGE_DEFAULT_FREQ;
    g->node_name = loom_xstrdup(o->node_name ? o->node_name : "");
    g->cgroup_dir = o->cgroup_dir ? loom_xstrdup(o->cgroup_dir) : NULL;
    g->ntasks = o->ntasks;
    g->tasks = loom_xcalloc(o->ntasks ? o->ntasks : 1, sizeof(*g->tasks));
    for (uint32_t i = 0; i < o->ntasks; i++)
        g->tasks[i].u.rank = o->ranks ? o->ranks[i] : i;
    g->ngpus = o->ngpus;
    g->gpus = loom_xcalloc(o->ngpus ? o->ngpus : 1, sizeof(uint32_t));
    if (o->ngpus)
        memcpy(g->gpus, o->gpus, o->ngpus * sizeof(uint32_t));
    g->owner = o->owner;
    g->arg = o->arg;
    long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    g->hz = hz > 0 && hz <= 1000000 ? hz : 100;
    g->page_kib = page >= 1024 ? page / 1024 : 4;
    if (g->ngpus && g->periodic)
        g->nvml = gather_nvml_open();
    uv_timer_init(loop, &g->timer);
    g->timer.data = g;
    g->timer_init = true;
    return g;
}

void loom_gather_start(loom_gather_t *g)
{
    if (!g)
        return;
    g->start = (int64_t)time(NULL);
    if (g->periodic && g->freq > 0)
        uv_timer_start(&g->timer, gather_due, GATHER_FIRST_MS, 0);
}

void loom_gather_reaped(loom_gather_t *g, int task, const struct rusage *ru)
{
    if (!g || g->ntasks == 0)
        return;
    gather_task_t *t = &g->tasks[task >= 0 && (uint32_t)task < g->ntasks ? task : 0];
    t->ru_user += (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec;
    t->ru_sys += (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
    t->ru_maxrss = gather_max(t->ru_maxrss, (uint64_t)(ru->ru_maxrss > 0 ? ru->ru_maxrss : 0));
}

json_t *loom_gather_summary(loom_gather_t *g, bool final)
{
    if (!g)
        return NULL;
    if (!g->final)
        loom_gather_sample(g); /* sstat's on-demand sample, or the last one */
    if (final && !g->final) {
        g->final = true;
        g->end = (int64_t)time(NULL);
        uv_timer_stop(&g->timer);
        gather_cgroup(g);
    }
    loom_usage_task_t *u = loom_xcalloc(g->ntasks ? g->ntasks : 1, sizeof(*u));
    for (uint32_t i = 0; i < g->ntasks; i++) {
        const gather_task_t *t = &g->tasks[i];
        u[i] = t->u;
        u[i].user_us = gather_max(t->ru_user, t->smp_user);
        u[i].sys_us = gather_max(t->ru_sys, t->smp_sys);
        u[i].max_rss = gather_max(t->u.max_rss, t->ru_maxrss);
    }
    int64_t end = g->final ? g->end : (int64_t)time(NULL);
    int64_t elapsed = g->start && end > g->start ? end - g->start : 0;
    int util = g->util_samples ? (int)(g->util_sum / g->util_samples) : -1;
    json_t *o = loom_usage_node_json(g->node_name, u, g->ntasks, (int64_t)g->ngpus * elapsed, util);
    free(u);
    if (!g->final) /* a running step's processes, for sstat -i */
        json_object_set_new(o, "pids", json_string(loom_sbuf_str(&g->pids)));
    return o;
}

static void gather_closed(uv_handle_t *h)
{
    loom_gather_t *g = h->data;
    free(g);
}

void loom_gather_destroy(loom_gather_t *g)
{
    if (!g)
        return;
    gather_nvml_close(g->nvml);
    free(g->tasks);
    free(g->gpus);
    free(g->node_name);
    free(g->cgroup_dir);
    loom_sbuf_free(&g->pids);
    uv_timer_stop(&g->timer);
    loom_uv_close_once((uv_handle_t *)&g->timer, gather_closed);
}

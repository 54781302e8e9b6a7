/*
 * cgroup.c - one cgroup per job, v2 or v1. See cgroup.h.
 */
#include "noded/cgroup.h"

#include "common/cgconf.h"
#include "common/cgfs.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"

struct loom_cgroup {
    int version;
    char *path;   /* v2: the job's cgroup; v1: its memory cgroup */
    char *cpuset; /* v1: its cpuset cgroup, or NULL */
};

static int cgroup_mkdir(const char *path)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* 2 or 1 as the spec and the host allow, else -ENOTSUP. */
static int cgroup_version(const loom_cgroup_spec_t *spec, const char *root)
{
    if (geteuid() != 0)
        return -ENOTSUP;
    char mem[4096];
    snprintf(mem, sizeof(mem), "%s/memory", root);
    bool v2 = loom_cgfs_has(root, "cgroup.controllers") && access(root, W_OK) == 0;
    bool v1 = loom_cgfs_has(mem, "cgroup.procs") && access(mem, W_OK) == 0;
    const char *plugin = spec->plugin ? spec->plugin : "autodetect";
    if (strcmp(plugin, "cgroup/v2") == 0)
        return v2 ? 2 : -ENOTSUP;
    if (strcmp(plugin, "cgroup/v1") == 0)
        return v1 ? 1 : -ENOTSUP;
    return v2 ? 2 : v1 ? 1 : -ENOTSUP;
}

static char *cgroup_bytes(uint64_t mib, char *buf, size_t size)
{
    snprintf(buf, size, "%llu", (unsigned long long)mib * 1024 * 1024);
    return buf;
}

/* ---- v2 ------------------------------------------------------------------------- */

/* Enable cpuset and memory for the children of dir, each on its own. */
static void cgroup_enable(const char *dir)
{
    loom_cgfs_write(dir, "cgroup.subtree_control", "+cpuset");
    loom_cgfs_write(dir, "cgroup.subtree_control", "+memory");
}

/* root/loom.slice/<node>/job_<id> with controllers on the way. */
static int cgroup_v2_path(const char *root, const loom_cgroup_spec_t *spec, loom_sbuf_t *path)
{
    loom_sbuf_add(path, root);
    cgroup_enable(loom_sbuf_str(path));
    loom_sbuf_add(path, "/loom.slice");
    int rc = cgroup_mkdir(loom_sbuf_str(path));
    if (rc == 0) {
        cgroup_enable(loom_sbuf_str(path));
        loom_sbuf_addf(path, "/%s", spec->node);
        rc = cgroup_mkdir(loom_sbuf_str(path));
    }
    if (rc == 0) {
        cgroup_enable(loom_sbuf_str(path));
        loom_sbuf_addf(path, "/job_%u", (unsigned)spec->job_id);
        rc = cgroup_mkdir(loom_sbuf_str(path));
    }
    return rc;
}

/* Limits are best effort: a missing controller leaves the job unconfined in
 * that dimension only. */
static void cgroup_v2_limits(const char *dir, const loom_cgroup_spec_t *spec)
{
    char v[32];
    if (spec->cpus && *spec->cpus)
        loom_cgfs_write(dir, "cpuset.cpus", spec->cpus);
    if (spec->mem_mib)
        loom_cgfs_write(dir, "memory.max", cgroup_bytes(spec->mem_mib, v, sizeof(v)));
    if (spec->mem_mib && spec->limit_swap)
        loom_cgfs_write(dir, "memory.swap.max", cgroup_bytes(spec->swap_mib, v, sizeof(v)));
}

/* ---- v1 ------------------------------------------------------------------------- */

/* root/<ctl>/loom/<node>/job_<id>; with inherit, each new level first takes
 * its parent's cpuset.cpus and cpuset.mems (empty in a new v1 cpuset). */
static int cgroup_v1_path(const char *root, const char *ctl, const loom_cgroup_spec_t *spec,
                          bool inherit, loom_sbuf_t *path)
{
    char job[32];
    snprintf(job, sizeof(job), "job_%u", (unsigned)spec->job_id);
    const char *levels[] = {"loom", spec->node, job};
    loom_sbuf_addf(path, "%s/%s", root, ctl);
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        char parent[4096], v[4096];
        snprintf(parent, sizeof(parent), "%s", loom_sbuf_str(path));
        loom_sbuf_addf(path, "/%s", levels[i]);
        int rc = cgroup_mkdir(loom_sbuf_str(path));
        if (rc < 0)
            return rc;
        for (int k = 0; inherit && k < 2; k++) {
            const char *file = k ? "cpuset.mems" : "cpuset.cpus";
            loom_cgfs_read_line(loom_sbuf_str(path), file, v, sizeof(v));
            if (!v[0]) {
                loom_cgfs_read_line(parent, file, v, sizeof(v));
                loom_cgfs_write(loom_sbuf_str(path), file, v);
            }
        }
    }
    return 0;
}

static void cgroup_v1_memory(const char *dir, const loom_cgroup_spec_t *spec)
{
    char v[32];
    if (!spec->mem_mib)
        return;
    loom_cgfs_write(dir, "memory.limit_in_bytes", cgroup_bytes(spec->mem_mib, v, sizeof(v)));
    if (spec->limit_swap && loom_cgfs_has(dir, "memory.memsw.limit_in_bytes"))
        loom_cgfs_write(dir, "memory.memsw.limit_in_bytes",
                        cgroup_bytes(spec->mem_mib + spec->swap_mib, v, sizeof(v)));
}

/* The job's cpuset, or NULL: cores not constrained, or the cpus cannot be set
 * (an empty v1 cpuset would refuse every process). A step without cpus joins
 * the cpuset its job's supervisor made. */
static char *cgroup_v1_cpuset(const char *root, const loom_cgroup_spec_t *spec)
{
    char cpuset[4096], v[4096];
    snprintf(cpuset, sizeof(cpuset), "%s/cpuset", root);
    if (!loom_cgfs_has(cpuset, "cpuset.cpus"))
        return NULL;
    loom_sbuf_t path = LOOM_SBUF_INIT;
    if (!spec->cpus || !*spec->cpus) {
        loom_sbuf_addf(&path, "%s/loom/%s/job_%u", cpuset, spec->node, (unsigned)spec->job_id);
        loom_cgfs_read_line(loom_sbuf_str(&path), "cpuset.cpus", v, sizeof(v));
        if (v[0])
            return loom_sbuf_detach(&path);
        loom_sbuf_free(&path);
        return NULL;
    }
    if (cgroup_v1_path(root, "cpuset", spec, true, &path) < 0 ||
        loom_cgfs_write(loom_sbuf_str(&path), "cpuset.cpus", spec->cpus) < 0) {
        rmdir(loom_sbuf_str(&path));
        loom_sbuf_free(&path);
        return NULL;
    }
    return loom_sbuf_detach(&path);
}

/* ---- the job's cgroup ----------------------------------------------------------- */

int loom_cgroup_create(const loom_cgroup_spec_t *spec, loom_cgroup_t **out, loom_err_t *err)
{
    const char *root = spec->root && *spec->root ? spec->root : CGROUP_ROOT;
    int version = cgroup_version(spec, root);
    if (version < 0)
        return loom_errf(err, version, "no writable cgroup hierarchy at %s (root needed)", root);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    int rc = version == 2 ? cgroup_v2_path(root, spec, &path)
                          : cgroup_v1_path(root, "memory", spec, false, &path);
    if (rc < 0) {
        loom_errf(err, rc, "cannot create cgroup %s: %s", loom_sbuf_str(&path), strerror(-rc));
        loom_sbuf_free(&path);
        return rc;
    }
    loom_cgroup_t *cg = loom_xcalloc(1, sizeof(*cg));
    cg->version = version;
    cg->path = loom_sbuf_detach(&path);
    if (version == 2) {
        cgroup_v2_limits(cg->path, spec);
    } else {
        cgroup_v1_memory(cg->path, spec);
        cg->cpuset = cgroup_v1_cpuset(root, spec);
    }
    *out = cg;
    return 0;
}

/* The node's level: "<node>_<hash of the spool>", so that the emulated nodes
 * of several clusters on one host (a test run) never share a job's cgroup. */
void loom_cgroup_node_level(const json_t *node, char *buf, size_t size)
{
    const char *name = json_string_value(json_object_get(node, "name"));
    const char *sock = json_string_value(json_object_get(node, "loomd_sock"));
    uint32_t h = 2166136261u;
    for (const char *p = sock ? sock : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(buf, size, "%s_%08x", name ? name : "", (unsigned)h);
}

int loom_cgroup_for_job(const json_t *node, uint32_t job_id, const char *cpus, uint64_t alloc_mib,
                        loom_cgroup_t **out, loom_err_t *err)
{
    char level[300];
    loom_cgroup_node_level(node, level, sizeof(level));
    loom_cgconf_t cc;
    loom_cgconf_init(&cc);
    loom_cgconf_from_json(json_object_get(node, "cgroup"), &cc);
    uint64_t real = (uint64_t)json_integer_value(json_object_get(node, "real_memory"));
    loom_cgroup_spec_t spec = {
        .root = cc.mountpoint,
        .plugin = cc.plugin,
        .node = level,
        .job_id = job_id,
        .cpus = cc.task_cgroup && cc.constrain_cores ? cpus : NULL,
        .mem_mib = loom_cgconf_ram_limit(&cc, alloc_mib, real),
        .limit_swap = cc.task_cgroup && cc.constrain_ram && cc.constrain_swap,
        .swap_mib = (uint64_t)((double)alloc_mib * cc.allowed_swap / 100.0),
    };
    int rc = -ENOTSUP;
    if (!json_string_value(json_object_get(node, "name")))
        loom_errf(err, rc, "no node name in the spec");
    else if (!cc.track && !cc.task_cgroup)
        loom_errf(err, rc, "ProctrackType is not proctrack/cgroup");
    else
        rc = loom_cgroup_create(&spec, out, err);
    loom_cgconf_free(&cc);
    return rc;
}

/* Where the devices cgroups go, or NULL: ConstrainDevices is off. */
static char *cgroup_devcg_root(const json_t *node, const loom_cgroup_t *job_cg)
{
    loom_cgconf_t cc;
    loom_cgconf_init(&cc);
    loom_cgconf_from_json(json_object_get(node, "cgroup"), &cc);
    char *root = NULL;
    if (cc.task_cgroup && cc.constrain_devices) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        if (job_cg && job_cg->version == 2)
            loom_sbuf_add(&sb, job_cg->path);
        else
            loom_sbuf_addf(&sb, "%s/devices", cc.mountpoint);
        root = loom_sbuf_detach(&sb);
    }
    loom_cgconf_free(&cc);
    return root;
}

int loom_cgroup_confine_gpus(const json_t *node, const loom_cgroup_t *job_cg, uint32_t job_id,
                             uint32_t step_id, const uint32_t *allowed, size_t nallowed,
                             loom_devcg_t **out, loom_err_t *err)
{
    const json_t *files = json_object_get(node, "gpu_files");
    size_t n = json_array_size(files);
    char *root = n ? cgroup_devcg_root(node, job_cg) : NULL;
    if (!root)
        return loom_errf(err, -ENOTSUP, "ConstrainDevices is off, or the node has no GPUs");
    loom_devcg_gpu_t *gpus = loom_xcalloc(n, sizeof(*gpus));
    for (size_t i = 0; i < n; i++) {
        gpus[i].index = (uint32_t)i;
        loom_devcg_stat(json_string_value(json_array_get(files, i)), &gpus[i]);
    }
    char level[300];
    loom_cgroup_node_level(node, level, sizeof(level));
    loom_strv_t deny = LOOM_STRV_INIT;
    int rc = -ENOTSUP;
    if (loom_devcg_rules(gpus, n, allowed, nallowed, &deny) == 0)
        loom_errf(err, rc, "no GPU device to deny");
    else
        rc = loom_devcg_confine(root, level, job_id, step_id, &deny, 0, out, err);
    loom_strv_free(&deny);
    free(gpus);
    free(root);
    return rc;
}

int loom_cgroup_attach(loom_cgroup_t *cg, pid_t pid)
{
    char v[32];
    snprintf(v, sizeof(v), "%d", (int)pid);
    int rc = loom_cgfs_write(cg->path, "cgroup.procs", v);
    if (rc == 0 && cg->cpuset)
        rc = loom_cgfs_write(cg->cpuset, "cgroup.procs", v);
    return rc;
}

/* SIGKILL the processes dir/cgroup.procs lists; how many there were. */
static int cgroup_kill_listed(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return 0;
    int pid, n = 0;
    while (fscanf(fp, "%d", &pid) == 1) {
        kill(pid, SIGKILL);
        n++;
    }
    fclose(fp);
    return n;
}

void loom_cgroup_kill(loom_cgroup_t *cg)
{
    if (cg->version == 2 && loom_cgfs_write(cg->path, "cgroup.kill", "1") == 0)
        return;
    /* v1, or kernels before 5.14: one by one, until none is left to fork. */
    for (int round = 0; round < 20 && cgroup_kill_listed(cg->path) > 0; round++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int loom_cgroup_oom_kills(const loom_cgroup_t *cg)
{
    char path[4096], key[64];
    snprintf(path, sizeof(path), "%s/%s", cg->path,
             cg->version == 2 ? "memory.events" : "memory.oom_control");
    FILE *fp = fopen(path, "re");
    if (!fp)
        return 0;
    long long v;
    int kills = 0;
    while (fscanf(fp, "%63s %lld", key, &v) == 2)
        if (strcmp(key, "oom_kill") == 0)
            kills = (int)v;
    fclose(fp);
    return kills;
}

const char *loom_cgroup_path(const loom_cgroup_t *cg)
{
    return cg->path;
}

int loom_cgroup_version(const loom_cgroup_t *cg)
{
    return cg->version;
}

void loom_cgroup_forget(loom_cgroup_t *cg)
{
    if (!cg)
        return;
    free(cg->path);
    free(cg->cpuset);
    free(cg);
}

/* The last processes may take a moment to leave after SIGKILL. */
static void cgroup_rmdir(const char *dir)
{
    for (int i = 0; i < 50 && rmdir(dir) < 0 && errno == EBUSY; i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void loom_cgroup_destroy(loom_cgroup_t *cg)
{
    if (!cg)
        return;
    cgroup_rmdir(cg->path);
    if (cg->cpuset)
        cgroup_rmdir(cg->cpuset);
    loom_cgroup_forget(cg);
}

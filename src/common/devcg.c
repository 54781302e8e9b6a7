/*
 * devcg.c - confining a job step to its GPUs: the cgroup v1 devices
 * controller, or an eBPF device filter on a cgroup v2 directory
 * (devcg_bpf.c). See devcg.h.
 */
#include "common/devcg.h"

#include "common/cgfs.h"

#include "common/devcg_bpf.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DEVCG_ROOT "/sys/fs/cgroup/devices"

struct loom_devcg {
    char *root; /* v1: the hierarchy's root; v2: the job's cgroup, the step's parent */
    char *path; /* the step's cgroup */
    bool v2;    /* a cgroup2 directory with an eBPF device filter */
    bool moved; /* the caller moved itself in: release moves it back */
};

void loom_devcg_stat(const char *file, loom_devcg_gpu_t *g)
{
    struct stat st;
    g->kind = 0;
    g->major = g->minor = 0;
    if (!file || stat(file, &st) < 0)
        return;
    if (S_ISCHR(st.st_mode))
        g->kind = 'c';
    else if (S_ISBLK(st.st_mode))
        g->kind = 'b';
    else
        return;
    g->major = major(st.st_rdev);
    g->minor = minor(st.st_rdev);
}

static bool devcg_has(const uint32_t *v, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static bool devcg_same(const loom_devcg_gpu_t *a, const loom_devcg_gpu_t *b)
{
    return a->kind == b->kind && a->major == b->major && a->minor == b->minor;
}

/* Is the device of gpus[i] used by an allowed GPU, or denied already? */
static bool devcg_skip(const loom_devcg_gpu_t *gpus, size_t n, size_t i, const uint32_t *allowed,
                       size_t nallowed)
{
    for (size_t k = 0; k < n; k++) {
        if (k == i || !devcg_same(&gpus[k], &gpus[i]))
            continue;
        if (devcg_has(allowed, nallowed, gpus[k].index))
            return true;
        if (k < i && !devcg_has(allowed, nallowed, gpus[k].index))
            return true; /* the same rule came out for k */
    }
    return false;
}

size_t loom_devcg_rules(const loom_devcg_gpu_t *gpus, size_t n, const uint32_t *allowed,
                        size_t nallowed, loom_strv_t *deny)
{
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        const loom_devcg_gpu_t *g = &gpus[i];
        if (!g->kind || devcg_has(allowed, nallowed, g->index) ||
            devcg_skip(gpus, n, i, allowed, nallowed))
            continue;
        char rule[64];
        snprintf(rule, sizeof(rule), "%c %u:%u rwm", g->kind, g->major, g->minor);
        loom_strv_add(deny, rule);
        added++;
    }
    return added;
}

static int devcg_mkdir(loom_sbuf_t *path)
{
    if (mkdir(loom_sbuf_str(path), 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* v1: root/loom/<node>/step_<job>.<step>, made level by level. */
static int devcg_mkpath(const char *root, const char *node, uint32_t job_id, uint32_t step_id,
                        loom_sbuf_t *path)
{
    loom_sbuf_addf(path, "%s/loom", root);
    int rc = devcg_mkdir(path);
    if (rc == 0) {
        loom_sbuf_addf(path, "/%s", node);
        rc = devcg_mkdir(path);
    }
    if (rc == 0) {
        loom_sbuf_addf(path, "/step_%u.%u", (unsigned)job_id, (unsigned)step_id);
        rc = devcg_mkdir(path);
    }
    return rc;
}

/* v2: root/step_<job>.<step>, new: a leftover one is removed first, so no
 * filter of an earlier step stays attached. */
static int devcg_mkstep(const char *root, uint32_t job_id, uint32_t step_id, loom_sbuf_t *path)
{
    loom_sbuf_addf(path, "%s/step_%u.%u", root, (unsigned)job_id, (unsigned)step_id);
    const char *p = loom_sbuf_str(path);
    if (mkdir(p, 0755) < 0 && (errno != EEXIST || rmdir(p) < 0 || mkdir(p, 0755) < 0))
        return -errno;
    return 0;
}

/* pid 0: nobody (the caller attaches the processes itself). */
static int devcg_move(const char *path, pid_t pid, loom_err_t *err)
{
    if (pid <= 0)
        return 0;
    char v[32];
    snprintf(v, sizeof(v), "%d", (int)pid);
    int rc = loom_cgfs_write(path, "cgroup.procs", v);
    if (rc < 0)
        return loom_errf(err, rc, "cannot move %d into %s: %s", (int)pid, path, strerror(-rc));
    return 0;
}

static int devcg_fill(const char *path, const loom_strv_t *deny, pid_t pid, loom_err_t *err)
{
    for (size_t i = 0; i < deny->n; i++) {
        int rc = loom_cgfs_write(path, "devices.deny", deny->v[i]);
        if (rc < 0)
            return loom_errf(err, rc, "cannot deny '%s' in %s: %s", deny->v[i], path,
                             strerror(-rc));
    }
    return devcg_move(path, pid, err);
}

/* The filter first: the process never runs unconfined in the step's cgroup. */
static int devcg_fill_v2(const char *path, const loom_strv_t *deny, pid_t pid, loom_err_t *err)
{
    int rc = loom_devcg_bpf_attach(path, deny, err);
    return rc < 0 ? rc : devcg_move(path, pid, err);
}

/* 1: v1 (root/devices.deny writable), 2: v2 (root is a cgroup2 directory),
 * 0: neither. */
static int devcg_mode(const char *root)
{
    char probe[4096];
    snprintf(probe, sizeof(probe), "%s/devices.deny", root);
    if (access(probe, W_OK) == 0)
        return 1;
    snprintf(probe, sizeof(probe), "%s/cgroup.controllers", root);
    return access(probe, F_OK) == 0 ? 2 : 0;
}

int loom_devcg_confine(const char *root, const char *node, uint32_t job_id, uint32_t step_id,
                       const loom_strv_t *deny, pid_t pid, loom_devcg_t **out, loom_err_t *err)
{
    root = root ? root : DEVCG_ROOT;
    int mode = geteuid() == 0 ? devcg_mode(root) : 0;
    if (!mode)
        return loom_errf(err, -ENOTSUP,
                         "no writable cgroup v1 devices hierarchy nor cgroup v2 directory at %s",
                         root);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    int rc = mode == 1 ? devcg_mkpath(root, node, job_id, step_id, &path)
                       : devcg_mkstep(root, job_id, step_id, &path);
    if (rc < 0)
        loom_errf(err, rc, "cannot create cgroup %s: %s", loom_sbuf_str(&path), strerror(-rc));
    else if (mode == 1)
        rc = devcg_fill(loom_sbuf_str(&path), deny, pid, err);
    else
        rc = devcg_fill_v2(loom_sbuf_str(&path), deny, pid, err);
    if (rc < 0) {
        rmdir(loom_sbuf_str(&path));
        loom_sbuf_free(&path);
        return rc;
    }
    loom_devcg_t *cg = loom_xcalloc(1, sizeof(*cg));
    cg->root = loom_xstrdup(root);
    cg->path = loom_sbuf_detach(&path);
    cg->v2 = mode == 2;
    cg->moved = pid == getpid();
    *out = cg;
    return 0;
}

int loom_devcg_attach(const loom_devcg_t *cg, pid_t pid)
{
    return devcg_move(cg->path, pid, NULL);
}

bool loom_devcg_is_v2(const loom_devcg_t *cg)
{
    return cg->v2;
}

void loom_devcg_release(loom_devcg_t *cg)
{
    if (!cg)
        return;
    /* back to v1's root or v2's job cgroup: the step's cgroup must be empty
     * to go (v2 also detaches its filter then) */
    if (cg->moved)
        devcg_move(cg->root, getpid(), NULL);
    rmdir(cg->path); /* EBUSY while a task lingers: the node's cleanup is left to the admin */
    free(cg->root);
    free(cg->path);
    free(cg);
}

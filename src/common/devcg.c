/*
 * devcg.c - confining a job step to its GPUs with the cgroup v1 devices
 * controller. See devcg.h.
 */
#include "common/devcg.h"

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
    char *root, *path;
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

static int devcg_write(const char *dir, const char *file, const char *value)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, value, strlen(value));
    int rc = n < 0 ? -errno : 0;
    close(fd);
    return rc;
}

/* root/loom/<node>/step_<job>.<step>, made level by level. */
static int devcg_mkpath(const char *root, const char *node, uint32_t job_id, uint32_t step_id,
                        loom_sbuf_t *path)
{
    loom_sbuf_addf(path, "%s/loom", root);
    if (mkdir(loom_sbuf_str(path), 0755) < 0 && errno != EEXIST)
        return -errno;
    loom_sbuf_addf(path, "/%s", node);
    if (mkdir(loom_sbuf_str(path), 0755) < 0 && errno != EEXIST)
        return -errno;
    loom_sbuf_addf(path, "/step_%u.%u", (unsigned)job_id, (unsigned)step_id);
    if (mkdir(loom_sbuf_str(path), 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static int devcg_fill(const char *path, const loom_strv_t *deny, pid_t pid, loom_err_t *err)
{
    for (size_t i = 0; i < deny->n; i++) {
        int rc = devcg_write(path, "devices.deny", deny->v[i]);
        if (rc < 0)
            return loom_errf(err, rc, "cannot deny '%s' in %s: %s", deny->v[i], path,
                             strerror(-rc));
    }
    char v[32];
    snprintf(v, sizeof(v), "%d", (int)pid);
    int rc = devcg_write(path, "cgroup.procs", v);
    if (rc < 0)
        return loom_errf(err, rc, "cannot move %d into %s: %s", (int)pid, path, strerror(-rc));
    return 0;
}

int loom_devcg_confine(const char *root, const char *node, uint32_t job_id, uint32_t step_id,
                       const loom_strv_t *deny, pid_t pid, loom_devcg_t **out, loom_err_t *err)
{
    char probe[4096];
    root = root ? root : DEVCG_ROOT;
    snprintf(probe, sizeof(probe), "%s/devices.deny", root);
    if (geteuid() != 0 || access(probe, W_OK) < 0)
        return loom_errf(err, -ENOTSUP, "no writable cgroup v1 devices hierarchy at %s", root);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    int rc = devcg_mkpath(root, node, job_id, step_id, &path);
    if (rc < 0)
        loom_errf(err, rc, "cannot create cgroup %s: %s", loom_sbuf_str(&path), strerror(-rc));
    else
        rc = devcg_fill(loom_sbuf_str(&path), deny, pid, err);
    if (rc < 0) {
        rmdir(loom_sbuf_str(&path));
        loom_sbuf_free(&path);
        return rc;
    }
    loom_devcg_t *cg = loom_xcalloc(1, sizeof(*cg));
    cg->root = loom_xstrdup(root);
    cg->path = loom_sbuf_detach(&path);
    *out = cg;
    return 0;
}

void loom_devcg_release(loom_devcg_t *cg)
{
    if (!cg)
        return;
    char v[32];
    snprintf(v, sizeof(v), "%d", (int)getpid());
    devcg_write(cg->root, "cgroup.procs", v);
    rmdir(cg->path); /* EBUSY while a task lingers: the node's cleanup is left to the admin */
    free(cg->root);
    free(cg->path);
    free(cg);
}

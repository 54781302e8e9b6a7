/*
 * cgroup.c - one cgroup v2 per job. See cgroup.h.
 */
#include "noded/cgroup.h"

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
    char *path;
};

static int cgroup_write(const char *dir, const char *file, const char *value)
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

static int cgroup_mkdir(const char *path)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Enable cpuset and memory for the children of dir, each on its own. */
static void cgroup_enable(const char *dir)
{
    cgroup_write(dir, "cgroup.subtree_control", "+cpuset");
    cgroup_write(dir, "cgroup.subtree_control", "+memory");
}

static int cgroup_usable(void)
{
    if (geteuid() != 0)
        return -ENOTSUP;
    if (access(CGROUP_ROOT "/cgroup.controllers", F_OK) < 0)
        return -ENOTSUP; /* not a cgroup2 mount (v1 or hybrid) */
    if (access(CGROUP_ROOT, W_OK) < 0)
        return -ENOTSUP;
    return 0;
}

/* Create root/loom.slice/<node>/job_<id> with controllers on the way. */
static int cgroup_make_path(const char *node, uint32_t job_id, loom_sbuf_t *path)
{
    loom_sbuf_add(path, CGROUP_ROOT);
    cgroup_enable(loom_sbuf_str(path));
    loom_sbuf_add(path, "/loom.slice");
    int rc = cgroup_mkdir(loom_sbuf_str(path));
    if (rc == 0) {
        cgroup_enable(loom_sbuf_str(path));
        loom_sbuf_addf(path, "/%s", node);
        rc = cgroup_mkdir(loom_sbuf_str(path));
    }
    if (rc == 0) {
        cgroup_enable(loom_sbuf_str(path));
        loom_sbuf_addf(path, "/job_%u", (unsigned)job_id);
        rc = cgroup_mkdir(loom_sbuf_str(path));
    }
    return rc;
}

int loom_cgroup_create(const char *node, uint32_t job_id, const char *cpus, uint64_t mem_mib,
                       loom_cgroup_t **out, loom_err_t *err)
{
    int rc = cgroup_usable();
    if (rc < 0)
        return loom_errf(err, rc, "no writable cgroup2 hierarchy at %s (root needed)", CGROUP_ROOT);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    rc = cgroup_make_path(node, job_id, &path);
    if (rc < 0) {
        loom_errf(err, rc, "cannot create cgroup %s: %s", loom_sbuf_str(&path), strerror(-rc));
        loom_sbuf_free(&path);
        return rc;
    }
    /* Limits are best effort: a missing controller leaves the job unconfined
     * in that dimension only. */
    if (cpus && *cpus)
        cgroup_write(loom_sbuf_str(&path), "cpuset.cpus", cpus);
    if (mem_mib) {
        char v[32];
        snprintf(v, sizeof(v), "%llu", (unsigned long long)mem_mib * 1024 * 1024);
        cgroup_write(loom_sbuf_str(&path), "memory.max", v);
        cgroup_write(loom_sbuf_str(&path), "memory.swap.max", "0");
    }
    loom_cgroup_t *cg = loom_xcalloc(1, sizeof(*cg));
    cg->path = loom_sbuf_detach(&path);
    *out = cg;
    return 0;
}

int loom_cgroup_attach(loom_cgroup_t *cg, pid_t pid)
{
    char v[32];
    snprintf(v, sizeof(v), "%d", (int)pid);
    return cgroup_write(cg->path, "cgroup.procs", v);
}

void loom_cgroup_kill(loom_cgroup_t *cg)
{
    if (cgroup_write(cg->path, "cgroup.kill", "1") == 0)
        return;
    /* Kernels before 5.14: one by one. */
    char path[4096];
    snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return;
    int pid;
    while (fscanf(fp, "%d", &pid) == 1)
        kill(pid, SIGKILL);
    fclose(fp);
}

int loom_cgroup_oom_kills(const loom_cgroup_t *cg)
{
    char path[4096], key[64];
    snprintf(path, sizeof(path), "%s/memory.events", cg->path);
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

void loom_cgroup_destroy(loom_cgroup_t *cg)
{
    if (!cg)
        return;
    /* The last processes may take a moment to leave after SIGKILL. */
    for (int i = 0; i < 50 && rmdir(cg->path) < 0 && errno == EBUSY; i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    free(cg->path);
    free(cg);
}

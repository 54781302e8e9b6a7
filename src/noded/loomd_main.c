/*
 * loomd_main.c - loomd: options, configuration, start-up and shutdown.
 * See noded.h for what the daemon does.
 */
#include "noded/noded.h"

#include "common/daemon.h"
#include "common/log.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct loomd_opts {
    loom_daemon_opts_t d; /* -D -f -L -v */
    const char *node;     /* -N */
    bool allow_root;      /* --allow-root-jobs */
} loomd_opts_t;

/* loomd's own options: -N nodename, --allow-root-jobs. */
static int loomd_opt(int ch, const char *arg, void *ctx)
{
    loomd_opts_t *o = ctx;
    if (ch == 'N')
        o->node = arg;
    else if (ch == 'R')
        o->allow_root = true;
    else
        return -LOOM_EUSAGE;
    return 0;
}

/* SlurmdSpoolDir / SlurmdLogFile: %n is the node name, %h the host name. */
static char *loomd_expand(const char *pattern, const char *node, const char *host)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '%' && p[1] == 'n') {
            loom_sbuf_add(&sb, node);
            p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            loom_sbuf_add(&sb, host);
            p++;
        } else {
            loom_sbuf_addc(&sb, *p);
        }
    }
    return loom_sbuf_detach(&sb);
}

static int loomd_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* The directory of this executable, for loomstepd. */
static char *loomd_stepd_exe(void)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0)
        return loom_xstrdup("loomstepd");
    exe[len] = '\0';
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s/loomstepd", dirname(exe));
    return loom_sbuf_detach(&sb);
}

/* cgroup.conf beside slurm.conf (optional); it applies with task/cgroup. */
static int loomd_cgconf(loom_noded_t *n, loom_err_t *err)
{
    char path[PATH_MAX + 16], dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", n->conf_path);
    snprintf(path, sizeof(path), "%s/cgroup.conf", dirname(dir));
    loom_cgconf_init(&n->cgconf);
    int rc = loom_cgconf_load(path, &n->cgconf, err);
    n->cgconf.task_cgroup = loom_cgconf_task_cgroup(n->conf->task_plugin);
    n->cgconf.track = n->conf->proctrack_type && strstr(n->conf->proctrack_type, "cgroup");
    return rc;
}

static int loomd_config(loom_noded_t *n, const loomd_opts_t *o, loom_err_t *err)
{
    const char *conf = o->d.conf ? o->d.conf : getenv("SLURM_CONF");
    char real[PATH_MAX];
    if (!conf)
        conf = "/etc/slurm/slurm.conf";
    n->conf_path = loom_xstrdup(realpath(conf, real) ? real : conf);
    int rc = loom_conf_load(n->conf_path, &n->conf, err);
    if (rc < 0)
        return rc;
    gethostname(n->hostname, sizeof(n->hostname) - 1);
    n->name = o->node ? o->node : n->hostname;
    n->me = loom_conf_find_node(n->conf, n->name);
    if (!n->me)
        return loom_errf(err, -LOOM_EINVAL_NODENAME, "node '%s' is not in %s", n->name,
                         n->conf_path);
    char key[PATH_MAX + 16], dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", n->conf_path);
    snprintf(key, sizeof(key), "%s/slurm.key", dirname(dir));
    rc = loom_key_load(key, &n->key, err);
    if (rc < 0)
        return rc;
    n->spool =
        loomd_expand(n->conf->slurmd_spool_dir ? n->conf->slurmd_spool_dir : "/var/spool/slurmd",
                     n->name, n->hostname);
    rc = loomd_mkdirs(n->spool);
    if (rc < 0)
        return loom_errf(err, rc, "cannot create the spool dir %s: %s", n->spool, strerror(-rc));
    n->stepd_exe = loomd_stepd_exe();
    rc = loomd_cgconf(n, err);
    return rc < 0 ? rc : loom_noded_gpus_load(n, err);
}

static int loomd_logging(loom_noded_t *n, const loomd_opts_t *o)
{
    if (o->d.log)
        n->log_path = loom_xstrdup(o->d.log);
    else if (n->conf->slurmd_log_file)
        n->log_path = loomd_expand(n->conf->slurmd_log_file, n->name, n->hostname);
    n->verbose = o->d.verbose;
    loom_log_level_t level = loom_daemon_level(NULL, o->d.verbose);
    if (loom_log_init("loomd", level, n->log_path, true) < 0) {
        fprintf(stderr, "loomd: error: cannot open the log file %s: %s\n", n->log_path,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- running */

static void loomd_stop(loom_noded_t *n)
{
    if (n->stopping)
        return;
    n->stopping = true;
    loom_info("shutting down (job supervisors keep running)");
    loom_noded_ctl_stop(n);
    loom_noded_peers_close(n);
    loom_noded_jobs_stop(n);
    if (n->port_open)
        uv_close((uv_handle_t *)&n->port_server, NULL);
    if (n->stepd_open)
        uv_close((uv_handle_t *)&n->stepd_server, NULL);
    uv_close((uv_handle_t *)&n->sigchld, NULL);
    uv_close((uv_handle_t *)&n->sigterm, NULL);
    uv_close((uv_handle_t *)&n->sigint, NULL);
}

static void loomd_on_signal(uv_signal_t *h, int signum)
{
    loom_noded_t *n = h->data;
    if (signum == SIGCHLD)
        loom_noded_reap(n);
    else
        loomd_stop(n);
}

static void loomd_signals(loom_noded_t *n)
{
    uv_signal_t *hs[] = {&n->sigchld, &n->sigterm, &n->sigint};
    int sigs[] = {SIGCHLD, SIGTERM, SIGINT};
    for (size_t i = 0; i < 3; i++) {
        uv_signal_init(n->loop, hs[i]);
        hs[i]->data = n;
        uv_signal_start(hs[i], loomd_on_signal, sigs[i]);
    }
    signal(SIGPIPE, SIG_IGN);
}

static int loomd_run(loom_noded_t *n)
{
    loom_err_t err = {0};
    loomd_signals(n);
    loom_noded_scan(n);
    loom_noded_steps_scan(n);
    int rc = loom_noded_stepd_listen(n, &err);
    if (rc == 0)
        rc = loom_noded_port_listen(n, &err);
    if (rc < 0) {
        loom_error("%s", err.msg);
        loomd_stop(n);
    } else {
        loom_info("loomd %s started on node %s (port %lld, spool %s)", LOOM_SLURM_VERSION, n->name,
                  (long long)n->me->port, n->spool);
        loom_noded_ctl_start(n);
    }
    uv_run(n->loop, UV_RUN_DEFAULT);
    if (n->stepd_open) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/loomd.sock", n->spool);
        unlink(path);
    }
    return rc < 0 ? 1 : 0;
}

static void loomd_free(loom_noded_t *n)
{
    loom_noded_jobs_free(n);
    loom_noded_steps_free(n);
    loom_noded_gpus_free(n);
    loom_cgconf_free(&n->cgconf);
    loom_conf_destroy(n->conf);
    loom_key_destroy(n->key);
    free(n->conf_path);
    free(n->spool);
    free(n->log_path);
    free(n->stepd_exe);
}

int main(int argc, char **argv)
{
    loomd_opts_t o = {0};
    loom_noded_t n = {0};
    loom_err_t err = {0};
    static const struct option longopts[] = {{"allow-root-jobs", no_argument, NULL, 'R'},
                                             {NULL, 0, NULL, 0}};
    const loom_daemon_spec_t spec = {
        .usage = "Usage: loomd [-D] [-v...] [-f slurm.conf] [-N nodename] [-L logfile] "
                 "[--allow-root-jobs]",
        .shortopts = "N:",
        .longopts = longopts,
        .opt = loomd_opt,
        .ctx = &o,
    };
    int rc = loom_daemon_args(argc, argv, &spec, &o.d);
    if (rc != 0)
        return rc > 0 ? 0 : 1;
    loom_log_init("loomd", LOOM_LOG_INFO, NULL, false);
    n.allow_root = o.allow_root;
    n.boot_time = (int64_t)time(NULL);
    if (loomd_config(&n, &o, &err) < 0) {
        loom_error("%s", err.msg);
        loomd_free(&n);
        return 1;
    }
    if (!o.d.foreground && loom_daemonize() < 0)
        exit(1);
    if (loomd_logging(&n, &o) < 0) {
        loomd_free(&n);
        return 1;
    }
    uv_loop_t loop;
    uv_loop_init(&loop);
    n.loop = &loop;
    rc = loomd_run(&n);
    uv_loop_close(&loop);
    loomd_free(&n);
    loom_log_close();
    return rc;
}

/*
 * main.c - loomctld: options, the context's creation and destruction,
 * recovery, signals, the once-a-second tick, reconfigure and shutdown.
 * See ctld.h for the subsystems and their invariants.
 *
 *   loomctld [-D] [-c] [-v...] [-f slurm.conf] [-L logfile]
 *
 * -D stays in the foreground; -c starts with an empty state (the journal and
 * snapshot are moved aside, as slurmctld -c clears its state).
 */
#include "common/daemon.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/acct.h"
#include "ctld/assoc_mgr.h"
#include "ctld/ctld.h"
#include "ctld/dispatch.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_script.h"
#include "ctld/job_state.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"
#include "ctld/server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CTLD_SNAPSHOT_ENTRIES 20000 /* journal entries between snapshots */
#define CTLD_SNAPSHOT_SECS    600   /* and at least this often when anything changed */

typedef struct ctld_opts {
    loom_daemon_opts_t d; /* -D -f -L -v */
    bool clear;           /* -c */
} ctld_opts_t;

typedef struct ctld_main {
    ctld_t c;
    uv_loop_t loop;
    int lock_fd;
    int64_t last_snapshot;
    int64_t last_full_pass;
} ctld_main_t;

/* ---- options ---------------------------------------------------------------- */

/* -c, loomctld's own option. */
static int main_opt(int ch, const char *arg, void *ctx)
{
    (void)arg;
    ctld_opts_t *o = ctx;
    if (ch != 'c')
        return -LOOM_EUSAGE;
    o->clear = true;
    return 0;
}

/* ---- configuration ------------------------------------------------------------ */

static int main_log_setup(const ctld_opts_t *o, const loom_conf_t *conf)
{
    loom_log_level_t level = loom_daemon_level(conf ? conf->slurmctld_debug : NULL, o->d.verbose);
    const char *path = o->d.log ? o->d.log : (conf ? conf->slurmctld_log_file : NULL);
    uint32_t flags = 0;
    const char *bad;
    size_t badlen;
    if (conf && loom_log_slurm_flags(conf->debug_flags, &flags, &bad, &badlen) == 0)
        loom_log_set_flags(loom_log_get_flags() | flags); /* DebugFlags=Backfill,... */
    return loom_log_init("loomctld", level, path, true);
}

/* ---- state directory -------------------------------------------------------------- */

/* -c: move the snapshot and journal segments into cleared-<time>/. */
static void main_clear_state(const char *dir)
{
    char aside[4096], from[4096], to[8192];
    snprintf(aside, sizeof(aside), "%s/cleared-%lld", dir, (long long)ctld_now());
    mkdir(aside, 0700);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, "journal.", 8) != 0 && strncmp(de->d_name, "snapshot.", 9) != 0)
            continue;
        snprintf(from, sizeof(from), "%s/%.255s", dir, de->d_name);
        snprintf(to, sizeof(to), "%s/%.255s", aside, de->d_name);
        rename(from, to);
    }
    if (d)
        closedir(d);
    loom_info("-c: the saved state was moved to %s", aside);
}

static int main_state_dir(ctld_main_t *m, bool clear, loom_err_t *err)
{
    const char *dir = m->c.conf->state_save_location;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return loom_errf(err, -errno, "cannot create StateSaveLocation %s: %s", dir,
                         strerror(errno));
    loom_sbuf_t p = LOOM_SBUF_INIT;
    loom_sbuf_addf(&p, "%s/loomctld.lock", dir);
    m->lock_fd = loom_daemon_lock(loom_sbuf_str(&p), "loomctld", err);
    loom_sbuf_free(&p);
    if (m->lock_fd < 0)
        return m->lock_fd;
    if (clear)
        main_clear_state(dir);
    return 0;
}

/* Rebuild the state: snapshot + journal, then open a new segment. */
static int main_recover(ctld_main_t *m, bool clear, loom_err_t *err)
{
    ctld_t *c = &m->c;
    const char *dir = c->conf->state_save_location;
    uint64_t last = 0;
    int rc = 0;
    c->replaying = true;
    if (!clear)
        rc = loom_journal_recover(dir, ctld_state_replay, c, &last, err);
    c->replaying = false;
    if (rc < 0)
        return rc;
    ctld_node_mgr_after_recovery(c);
    ctld_job_script_sweep(c);
    ctld_sched_mark_launched(c);
    rc = loom_journal_open(c->loop, dir, last + 1, &c->journal, err);
    if (rc == 0 && (last || clear)) {
        loom_journal_snapshot(c->journal, ctld_state_snapshot, c);
        m->last_snapshot = ctld_now();
    }
    loom_info("recovered %zu jobs (journal up to entry %llu)", c->njobs, (unsigned long long)last);
    return rc;
}

/* ---- periodic work ------------------------------------------------------------------ */

static void main_maybe_snapshot(ctld_main_t *m, int64_t now)
{
    ctld_t *c = &m->c;
    const loom_journal_stats_t *st = loom_journal_stats(c->journal);
    if (!st->since_snapshot)
        return;
    if (st->since_snapshot < CTLD_SNAPSHOT_ENTRIES && now - m->last_snapshot < CTLD_SNAPSHOT_SECS)
        return;
    if (loom_journal_snapshot(c->journal, ctld_state_snapshot, c) == 0)
        m->last_snapshot = now;
}

static void main_tick(uv_timer_t *t)
{
    ctld_main_t *m = t->data;
    ctld_t *c = &m->c;
    int64_t now = ctld_now();
    if (c->shutting_down)
        return;
    ctld_node_mgr_tick(c, now);
    ctld_jobs_tick(c, now);
    if (now - m->last_full_pass >= CTLD_SCHED_PERIOD_S) {
        m->last_full_pass = now;
        ctld_sched_trigger(c, true);
    }
    main_maybe_snapshot(m, now);
    ctld_acct_tick(c);
}

/* ---- signals, shutdown, reconfigure ---------------------------------------------------- */

static void main_on_signal(uv_signal_t *h, int signum)
{
    ctld_t *c = h->data;
    loom_err_t err = {0};
    if (signum == SIGHUP) {
        if (ctld_reconfigure(c, &err) < 0)
            loom_error("reconfigure: %s", err.msg);
        return;
    }
    loom_info("signal %d: shutting down", signum);
    ctld_shutdown(c, false);
}

/* ---- the context ------------------------------------------------------------------------- */

static int main_create(ctld_main_t *m, const ctld_opts_t *o, loom_err_t *err)
{
    ctld_t *c = &m->c;
    const char *env = getenv("SLURM_CONF");
    c->conf_path =
        loom_xstrdup(o->d.conf ? o->d.conf : (env && *env ? env : "/etc/slurm/slurm.conf"));
    int rc = ctld_load_conf(c->conf_path, &c->conf, &c->gresconf, err);
    if (rc < 0)
        return rc;
    uv_loop_init(&m->loop);
    c->loop = &m->loop;
    c->boot_time = ctld_now();
    c->slurm_uid = ctld_user_uid(c->conf->slurm_user);
    c->last_prio = CTLD_PRIO_TOP;
    c->next_job_id = (uint32_t)c->conf->first_job_id;
    char *key_path = ctld_beside(c->conf_path, "slurm.key");
    loom_err_t kerr = {0};
    if (loom_key_load(key_path, &c->key, &kerr) < 0)
        loom_error("no cluster key (%s): node daemons cannot connect", kerr.msg);
    free(key_path);
    ctld_jobs_init(c);
    rc = ctld_node_mgr_init(c, err);
    if (rc == 0)
        rc = ctld_dispatch_init(c, err);
    return rc;
}

static int main_start(ctld_main_t *m, const ctld_opts_t *o, loom_err_t *err)
{
    ctld_t *c = &m->c;
    int rc = main_state_dir(m, o->clear, err);
    if (rc == 0)
        rc = main_recover(m, o->clear, err);
    if (rc == 0)
        rc = ctld_acct_start(c, err);
    if (rc == 0)
        rc = ctld_server_start(c, ctld_dispatch, err);
    if (rc < 0)
        return rc;
    ctld_sched_init(c);
    ctld_assoc_start(c);
    uv_timer_init(c->loop, &c->tick);
    c->tick.data = m;
    uv_timer_start(&c->tick, main_tick, 1000, 1000);
    uv_signal_t *sigs[] = {&c->sig_term, &c->sig_int, &c->sig_hup};
    int nums[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < 3; i++) {
        uv_signal_init(c->loop, sigs[i]);
        sigs[i]->data = c;
        uv_signal_start(sigs[i], main_on_signal, nums[i]);
    }
    ctld_sched_trigger(c, true);
    return 0;
}

static void main_destroy(ctld_main_t *m)
{
    ctld_t *c = &m->c;
    if (c->loop) {
        uv_run(c->loop, UV_RUN_DEFAULT); /* let closing handles finish */
        uv_loop_close(c->loop);
    }
    ctld_acct_free(c);
    ctld_server_destroy(c);
    ctld_dispatch_fini(c);
    ctld_jobs_fini(c);
    ctld_node_mgr_fini(c);
    ctld_sched_fini(c);
    ctld_assoc_free(c);
    loom_conf_destroy(c->conf);
    loom_gresconf_destroy(c->gresconf);
    loom_key_destroy(c->key);
    free(c->conf_path);
    if (m->lock_fd > 0)
        close(m->lock_fd);
}

int main(int argc, char **argv)
{
    ctld_opts_t o = {0};
    const loom_daemon_spec_t spec = {
        .usage = "Usage: loomctld [-D] [-c] [-v...] [-f slurm.conf] [-L logfile]",
        .shortopts = "c",
        .opt = main_opt,
        .ctx = &o,
    };
    int rc = loom_daemon_args(argc, argv, &spec, &o.d);
    if (rc != 0)
        return rc > 0 ? 0 : 1;
    signal(SIGPIPE, SIG_IGN);
    ctld_main_t m = {.lock_fd = -1};
    loom_err_t err = {0};
    main_log_setup(&o, NULL);
    rc = main_create(&m, &o, &err);
    if (rc == 0) {
        main_log_setup(&o, m.c.conf);
        if (!o.d.foreground && !o.d.log && !m.c.conf->slurmctld_log_file)
            loom_info("no log file: logging to stderr, which daemon mode closes");
        if (!o.d.foreground)
            loom_daemonize();
        loom_daemon_pidfile(m.c.conf->slurmctld_pid_file);
        rc = main_start(&m, &o, &err);
    }
    if (rc == 0) {
        loom_info("loomctld %s started (cluster %s, port %lld)", LOOM_SLURM_VERSION,
                  m.c.conf->cluster_name, (long long)m.c.conf->slurmctld_port);
        uv_run(m.c.loop, UV_RUN_DEFAULT);
        loom_info("loomctld stopped");
    } else {
        loom_error("%s", err.msg);
        ctld_shutdown(&m.c, false);
    }
    main_destroy(&m);
    loom_log_close();
    return rc == 0 ? 0 : 1;
}

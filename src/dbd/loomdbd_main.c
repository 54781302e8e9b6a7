/*
 * loomdbd_main.c - loomdbd: options, configuration, start-up and shutdown.
 * See loomdbd.h for what the daemon does.
 *
 * Usage: loomdbd [-D] [-v...] [-f slurm.conf] [-L logfile]. The storage
 * comes from slurmdbd.conf beside slurm.conf (dbdconf.h); without one,
 * SQLite at <StateSaveLocation>/loom_acct.db.
 */
#include "dbd/loomdbd.h"

#include "common/daemon.h"
#include "common/log.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOOMDBD_DEFAULT_PORT 6819

static const loom_daemon_spec_t loomdbd_spec = {
    .usage = "Usage: loomdbd [-D] [-v...] [-f slurm.conf] [-L logfile]",
};

/* The gres/... TRES that limits may name: AccountingStorageTRES and GresTypes. */
static void loomdbd_tres(dbd_t *d)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items,
                    d->conf->accounting_storage_tres ? d->conf->accounting_storage_tres : "", ",");
    for (size_t i = 0; i < items.n; i++)
        if (strchr(items.v[i], '/'))
            loom_strv_add(&d->tres_known, items.v[i]);
    for (size_t i = 0; i < d->conf->gres_types.n; i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addf(&sb, "gres/%s", d->conf->gres_types.v[i]);
        if (loom_strv_find(&d->tres_known, loom_sbuf_str(&sb)) < 0)
            loom_strv_add(&d->tres_known, loom_sbuf_str(&sb));
        loom_sbuf_free(&sb);
    }
    loom_strv_free(&items);
}

/* Where the data lives and where the socket goes. */
static void loomdbd_storage(dbd_t *d)
{
    const char *ssl = d->conf->state_save_location ? d->conf->state_save_location : "/tmp";
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (d->dbdconf.storage_type && strcmp(d->dbdconf.storage_type, "pgsql") == 0) {
        d->store_type = loom_xstrdup("pgsql");
        loom_dbdconf_conninfo(&d->dbdconf, &sb);
        d->store_loc = loom_sbuf_detach(&sb);
        loom_sbuf_addf(&sb, "%s/loomdbd.sock", ssl);
        d->sock_path = loom_sbuf_detach(&sb);
        return;
    }
    d->store_type = loom_xstrdup("sqlite");
    if (d->dbdconf.storage_loc && d->dbdconf.storage_loc[0] == '/')
        loom_sbuf_add(&sb, d->dbdconf.storage_loc);
    else
        loom_sbuf_addf(&sb, "%s/%s", ssl,
                       d->dbdconf.storage_loc ? d->dbdconf.storage_loc : "loom_acct.db");
    d->store_loc = loom_sbuf_detach(&sb);
    d->sock_path = loom_daemon_beside(d->store_loc, "loomdbd.sock");
}

static void loomdbd_listen_addr(dbd_t *d)
{
    const char *host = d->dbdconf.dbd_addr ? d->dbdconf.dbd_addr : d->dbdconf.dbd_host;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char num[128] = "127.0.0.1";
    if (host && getaddrinfo(host, NULL, &hints, &res) == 0 && res) {
        getnameinfo(res->ai_addr, res->ai_addrlen, num, sizeof(num), NULL, 0, NI_NUMERICHOST);
        freeaddrinfo(res);
    }
    d->tcp_host = loom_xstrdup(num);
    d->tcp_port = (int)(d->dbdconf.dbd_port                    ? d->dbdconf.dbd_port
                        : d->conf->accounting_storage_port > 0 ? d->conf->accounting_storage_port
                                                               : LOOMDBD_DEFAULT_PORT);
}

static int loomdbd_configure(dbd_t *d, const loom_daemon_opts_t *o, loom_err_t *err)
{
    const char *path = o->conf ? o->conf : getenv("SLURM_CONF");
    if (!path)
        path = "/etc/slurm/slurm.conf";
    int rc = loom_conf_load(path, &d->conf, err);
    if (rc < 0)
        return rc;
    char *dbdconf = loom_daemon_beside(path, "slurmdbd.conf");
    rc = loom_dbdconf_load(dbdconf, &d->dbdconf, err);
    free(dbdconf);
    if (rc == -ENOENT) {
        loom_err_clear(err);
        rc = 0;
    }
    if (rc < 0)
        return rc;
    char *keypath = loom_daemon_beside(path, "slurm.key");
    loom_err_t kerr = {0};
    if (loom_key_load(keypath, &d->key, &kerr) < 0)
        loom_info("no cluster key (%s): the TCP port refuses every request", kerr.msg);
    free(keypath);
    d->cluster = loom_xstrdup(d->conf->cluster_name);
    const char *su = d->dbdconf.slurm_user ? d->dbdconf.slurm_user : d->conf->slurm_user;
    struct passwd *pw = su ? getpwnam(su) : NULL;
    d->slurm_uid = pw ? pw->pw_uid : 0;
    loomdbd_tres(d);
    loomdbd_storage(d);
    loomdbd_listen_addr(d);
    return 0;
}

static void loomdbd_on_signal(uv_signal_t *h, int signum)
{
    dbd_t *d = h->data;
    loom_info("signal %d: shutting down", signum);
    dbd_server_stop(d);
}

static void loomdbd_free(dbd_t *d)
{
    loom_store_close(d->st);
    loom_conf_destroy(d->conf);
    loom_dbdconf_free(&d->dbdconf);
    loom_key_destroy(d->key);
    loom_strv_free(&d->tres_known);
    free(d->store_type);
    free(d->store_loc);
    free(d->cluster);
    free(d->sock_path);
    if (d->lock_fd > 0)
        close(d->lock_fd);
    free(d->tcp_host);
}

static int loomdbd_logging(const dbd_t *d, const loom_daemon_opts_t *o)
{
    loom_log_level_t level = loom_daemon_level(d->dbdconf.debug_level, o->verbose);
    const char *log = o->log ? o->log : d->dbdconf.log_file;
    if (level >= LOOM_LOG_DEBUG)
        loom_log_set_flags(LOOM_LOGF_DB);
    return loom_log_init("loomdbd", level, log, true);
}

static int loomdbd_run(dbd_t *d)
{
    loom_err_t err = {0};
    char *lock = loom_daemon_beside(d->sock_path, "loomdbd.lock");
    d->lock_fd = loom_daemon_lock(lock, "loomdbd", &err); /* before the socket is touched */
    free(lock);
    if (d->lock_fd < 0) {
        loom_error("%s", err.msg);
        return 1;
    }
    if (dbd_store_ensure(d, &err) < 0) /* the database may come later */
        loom_error("accounting store not available yet: %s", err.msg);
    if (dbd_server_start(d, &err) < 0) {
        loom_error("%s", err.msg);
        return 1;
    }
    uv_signal_init(d->loop, &d->sigterm);
    uv_signal_init(d->loop, &d->sigint);
    d->sigterm.data = d->sigint.data = d;
    uv_signal_start(&d->sigterm, loomdbd_on_signal, SIGTERM);
    uv_signal_start(&d->sigint, loomdbd_on_signal, SIGINT);
    loom_daemon_pidfile(d->dbdconf.pid_file);
    uv_run(d->loop, UV_RUN_DEFAULT);
    return 0;
}

int main(int argc, char **argv)
{
    loom_daemon_opts_t o = {0};
    int rc = loom_daemon_args(argc, argv, &loomdbd_spec, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 1;
    loom_log_init("loomdbd", LOOM_LOG_INFO, NULL, false);
    signal(SIGPIPE, SIG_IGN);
    dbd_t d = {.loop = uv_default_loop()};
    loom_err_t err = {0};
    if (loomdbd_configure(&d, &o, &err) < 0) {
        fprintf(stderr, "loomdbd: error: %s\n", err.msg);
        loomdbd_free(&d);
        return 1;
    }
    if (!o.foreground && (rc = loom_daemonize()) < 0) {
        fprintf(stderr, "loomdbd: error: daemon: %s\n", strerror(-rc));
        return 1;
    }
    loomdbd_logging(&d, &o);
    rc = loomdbd_run(&d);
    uv_loop_close(d.loop);
    loomdbd_free(&d);
    loom_log_close();
    return rc;
}

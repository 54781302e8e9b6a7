/*
 * ctld.c - operations on the whole context (ctld.h): the clock, who is an
 * administrator, loading the configuration, reconfigure and shutdown. The
 * process itself (options, start-up, the loop) is main.c's.
 */
#include "ctld/ctld.h"
#include "common/daemon.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/acct.h"
#include "ctld/assoc_mgr.h"
#include "ctld/job_mgr.h"
#include "ctld/job_state.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"
#include "ctld/server.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t ctld_now(void)
{
    return (int64_t)time(NULL);
}

bool ctld_is_admin(const ctld_t *c, uint32_t uid)
{
    return uid == 0 || uid == (uint32_t)c->slurm_uid;
}

char *ctld_beside(const char *conf_path, const char *name)
{
    return loom_daemon_beside(conf_path, name);
}

uid_t ctld_user_uid(const char *name)
{
    char buf[4096];
    struct passwd pw, *res = NULL;
    if (name && getpwnam_r(name, &pw, buf, sizeof(buf), &res) == 0 && res)
        return res->pw_uid;
    return 0;
}

int ctld_load_conf(const char *path, loom_conf_t **conf, loom_gresconf_t **gres, loom_err_t *err)
{
    int rc = loom_conf_load(path, conf, err);
    if (rc < 0)
        return rc;
    char *gpath = ctld_beside(path, "gres.conf");
    if (access(gpath, F_OK) == 0) {
        rc = loom_gresconf_load(gpath, gres, err);
        if (rc == 0)
            rc = loom_gresconf_check(*gres, *conf, NULL, err);
        if (rc < 0) {
            loom_gresconf_destroy(*gres);
            *gres = NULL;
            loom_conf_destroy(*conf);
            *conf = NULL;
        }
    }
    free(gpath);
    return rc;
}

static void ctld_close_handle(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

void ctld_shutdown(ctld_t *c, bool nodes_too)
{
    if (c->shutting_down)
        return;
    c->shutting_down = true;
    ctld_server_stop(c);
    ctld_sched_fini(c);
    ctld_assoc_stop(c);
    ctld_close_handle((uv_handle_t *)&c->tick);
    ctld_close_handle((uv_handle_t *)&c->sig_term);
    ctld_close_handle((uv_handle_t *)&c->sig_int);
    ctld_close_handle((uv_handle_t *)&c->sig_hup);
    ctld_acct_stop(c);
    loom_journal_close(c->journal);
    c->journal = NULL;
}

/* Runtime facts about nodes that a reconfigure must not lose. */
typedef struct {
    ctld_node_t saved;
    char *name;
} node_keep_t;

static node_keep_t *ctld_keep_nodes(ctld_t *c, size_t *n)
{
    node_keep_t *k = loom_xcalloc(c->nnodes + 1, sizeof(*k));
    for (size_t i = 0; i < c->nnodes; i++) {
        k[i].saved = c->nodes[i];
        k[i].name = loom_xstrdup(c->nodes[i].cfg->name);
        k[i].saved.version = c->nodes[i].version ? loom_xstrdup(c->nodes[i].version) : NULL;
        k[i].saved.arch = c->nodes[i].arch ? loom_xstrdup(c->nodes[i].arch) : NULL;
        k[i].saved.os = c->nodes[i].os ? loom_xstrdup(c->nodes[i].os) : NULL;
    }
    *n = c->nnodes;
    return k;
}

static void ctld_restore_nodes(ctld_t *c, node_keep_t *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ctld_node_t *node = ctld_node_find(c, k[i].name);
        if (node) {
            const ctld_node_t *s = &k[i].saved;
            node->registered = s->registered;
            node->link = s->link;
            node->last_heard = s->last_heard;
            node->boot_time = s->boot_time;
            node->slurmd_start = s->slurmd_start;
            node->load = s->load;
            node->free_mem = s->free_mem;
            node->version = s->version;
            node->arch = s->arch;
            node->os = s->os;
            k[i].saved.version = k[i].saved.arch = k[i].saved.os = NULL;
        }
        if (k[i].saved.link)
            ctld_conn_set_node(k[i].saved.link, node);
        free(k[i].saved.version);
        free(k[i].saved.arch);
        free(k[i].saved.os);
        free(k[i].name);
    }
    free(k);
}

/* Reconfigure keeps the state meanwhile as snapshot records, one line of
 * text each (far smaller than their JSON trees). */
static int ctld_keep_record(void *arg, const json_t *rec)
{
    char *text = json_dumps(rec, JSON_COMPACT);
    if (!text)
        return -ENOMEM;
    loom_sbuf_add(arg, text);
    loom_sbuf_addc(arg, '\n');
    free(text);
    return 0;
}

static void ctld_replay_kept(ctld_t *c, const loom_sbuf_t *kept)
{
    const char *p = kept->buf, *end = p + kept->len;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        json_t *rec = json_loadb(p, (size_t)(nl - p), 0, NULL);
        if (rec)
            ctld_state_replay(c, rec, NULL);
        json_decref(rec);
        p = nl + 1;
    }
}

int ctld_reconfigure(ctld_t *c, loom_err_t *err)
{
    loom_conf_t *conf = NULL;
    loom_gresconf_t *gres = NULL;
    int rc = ctld_load_conf(c->conf_path, &conf, &gres, err);
    if (rc < 0)
        return rc;
    loom_sbuf_t kept = LOOM_SBUF_INIT;
    ctld_state_snapshot(c, ctld_keep_record, &kept);
    size_t nkeep;
    node_keep_t *keep = ctld_keep_nodes(c, &nkeep);
    c->sched.fresh.n = 0;
    ctld_jobs_fini(c);
    ctld_node_mgr_fini(c);
    loom_conf_destroy(c->conf);
    loom_gresconf_destroy(c->gresconf);
    c->conf = conf;
    c->gresconf = gres;
    c->slurm_uid = ctld_user_uid(conf->slurm_user);
    ctld_jobs_init(c);
    ctld_node_mgr_init(c, err);
    c->replaying = c->reconfiguring = true;
    ctld_replay_kept(c, &kept);
    c->replaying = c->reconfiguring = false;
    loom_sbuf_free(&kept);
    ctld_restore_nodes(c, keep, nkeep);
    for (size_t i = 0; i < c->nnodes; i++)
        ctld_node_mgr_sync(c, &c->nodes[i]);
    ctld_sched_mark_launched(c);
    free(c->sched.part_blocked);
    c->sched.part_blocked = loom_xcalloc(c->nparts + 1, sizeof(bool));
    ctld_sched_trigger(c, true);
    return 0;
}

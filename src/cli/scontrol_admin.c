/*
 * scontrol_admin.c - scontrol's smaller commands (CLI_SPEC §9): setdebug,
 * setdebugflags, schedloglevel, wait_job, and show daemons / aliases, each
 * with scontrol 22.05.8's words and exit statuses (compared side by side).
 */
#include "cli/scontrol.h"

#include "cli/cli_format.h"
#include "common/jobstate.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Slurm's levels by number, as `scontrol setdebug 5` takes them. */
static const char *const admin_levels[] = {"quiet", "fatal",  "error",  "info",   "verbose",
                                           "debug", "debug2", "debug3", "debug4", "debug5"};

static int admin_few(loom_scontrol_t *sc, const char *kw)
{
    fprintf(stderr, "too few arguments for keyword:%s\n", kw);
    return sc->cli.exit_error;
}

/* One debug.set request; its failure in Slurm's words ("<what> error: ..."). */
static int admin_debug_call(loom_scontrol_t *sc, const char *key, const char *value,
                            const char *what)
{
    loom_err_t err = {0};
    json_t *body = json_pack("{s:s}", key, value);
    int rc = loom_cli_call(&sc->cli, "debug.set", body, NULL, &err);
    json_decref(body);
    if (rc == 0)
        return 0;
    fprintf(stderr, "%s error: %s\n", what,
            rc == -LOOM_EPERM || rc == -LOOM_EACCESS ? "Permission denied" : err.msg);
    return sc->cli.exit_error;
}

int loom_scontrol_setdebug(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1)
        return admin_few(sc, "setdebug");
    const char *name = NULL;
    char *end;
    long k = strtol(w[0], &end, 10);
    if (*w[0] && !*end && k >= 0 && k < (long)(sizeof(admin_levels) / sizeof(admin_levels[0])))
        name = admin_levels[k];
    for (size_t i = 0; !name && i < sizeof(admin_levels) / sizeof(admin_levels[0]); i++)
        if (strcasecmp(w[0], admin_levels[i]) == 0)
            name = admin_levels[i];
    if (!name) {
        fprintf(stderr, "invalid debug level: %s\n", w[0]);
        return sc->cli.exit_error;
    }
    return admin_debug_call(sc, "level", name, "slurm_set_debug_level");
}

int loom_scontrol_setdebugflags(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1)
        return admin_few(sc, "setdebugflags");
    if (n > 1) {
        fprintf(stderr, "too many arguments for keyword:setdebugflags\n");
        return sc->cli.exit_error;
    }
    char *list = NULL;
    int rc = loom_log_slurm_flags_edit(NULL, w[0], &list);
    free(list);
    if (rc == -LOOM_EPARSE)
        fprintf(stderr, "scontrol: error: Invalid DebugFlag: %s\n", w[0] + 1);
    if (rc < 0) {
        fprintf(stderr, "invalid debug flag: %s\n", w[0]);
        if (rc != -LOOM_EPARSE)
            fprintf(stderr, "Usage: setdebugflags [+|-]NAME\n");
        return sc->cli.exit_error;
    }
    return admin_debug_call(sc, "flag", w[0], "slurm_set_debug_flags");
}

/* Loom keeps no scheduler log (SlurmSchedLogFile): slurmctld's answer then. */
int loom_scontrol_schedloglevel(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1)
        return admin_few(sc, "schedloglevel");
    fprintf(stderr, "slurm_set_schedlog_level error: Requested operation is presently disabled\n");
    return sc->cli.exit_error;
}

/* wait_job J: 22.05 answers at once, ready only when the job runs. */
int loom_scontrol_wait_job(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1)
        return admin_few(sc, "wait_job");
    char *end;
    long id = strtol(w[0], &end, 10);
    json_t *reply = NULL;
    const json_t *job = NULL;
    if (*w[0] && !*end && id > 0) {
        json_t *body = json_pack("{s:[i]}", "job_ids", (int)id);
        loom_cli_call(&sc->cli, "job.info", body, &reply, NULL);
        json_decref(body);
        job = json_array_get(json_object_get(reply, "jobs"), 0);
    }
    uint32_t base = job ? loom_job_base(loom_cli_job_state(job)) : 0;
    int rc = sc->cli.exit_error;
    if (!job)
        fprintf(stderr, "scontrol: Problem running job %s\n", w[0]);
    else if (base != LOOM_JOB_RUNNING && base != LOOM_JOB_SUSPENDED)
        fprintf(stderr, "scontrol: Job %s no longer running\n", w[0]);
    else {
        fprintf(stderr, "scontrol: Nodes are ready for job %s\n", w[0]);
        rc = 0;
    }
    json_decref(reply);
    return rc;
}

/* This host's short name. */
static void admin_host(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
    buf[strcspn(buf, ".")] = '\0';
}

/* show daemons: slurmctld when this host (or localhost) is a SlurmctldHost,
 * slurmd when it is a node's host. show aliases: the nodes whose
 * NodeHostname is this host's name. */
int loom_scontrol_show_host(loom_scontrol_t *sc, bool aliases, int n)
{
    if (n > 1) {
        fprintf(stderr, "too many arguments for keyword:show\n");
        return sc->cli.exit_error;
    }
    const loom_conf_t *c = loom_cli_conf(&sc->cli, NULL);
    char me[256];
    admin_host(me, sizeof(me));
    bool ctld = false, slurmd = false;
    loom_sbuf_t names = LOOM_SBUF_INIT;
    for (size_t i = 0; c && i < c->n_ctld_hosts; i++)
        ctld |= !strcmp(c->ctld_hosts[i].name, me) || !strcmp(c->ctld_hosts[i].name, "localhost");
    for (size_t i = 0; c && i < c->n_nodes; i++) {
        const char *host = c->nodes[i].hostname ? c->nodes[i].hostname : c->nodes[i].name;
        slurmd |= !strcmp(host, me) || !strcmp(host, "localhost");
        if (!strcmp(host, me))
            loom_sbuf_addf(&names, "%s%s", names.len ? " " : "", c->nodes[i].name);
    }
    if (aliases && names.len)
        printf("%s\n", loom_sbuf_str(&names));
    else if (!aliases && (ctld || slurmd))
        printf("%s%s%s\n", ctld ? "slurmctld" : "", ctld && slurmd ? " " : "",
               slurmd ? "slurmd" : "");
    loom_sbuf_free(&names);
    return 0;
}

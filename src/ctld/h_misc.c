/*
 * h_misc.c - handlers of the controller, node and partition requests
 * (docs/proto/messages.md §3, §4): ping, shutdown, reconfigure, debug.set, part.update, node.info,
 * node.update, part.info, config.info, node.register, node.heartbeat.
 * Each one: decode, validate, authorize (Security:), act, reply; one exit.
 */
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/dispatch.h"
#include "ctld/node_mgr.h"
#include "ctld/part_mgr.h"
#include "ctld/server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int h_ping(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                  loom_sbuf_t *raw)
{
    /* Security: any identified peer may ask whether the controller is up. */
    const loom_conf_host_t *h = c->conf->n_ctld_hosts ? &c->conf->ctld_hosts[0] : NULL;
    *reply = loom_msg_reply(req, 0, NULL);
    if (*reply) {
        json_object_set_new(*reply, "host", json_string(h ? h->name : "localhost"));
        json_object_set_new(*reply, "role", json_string("primary"));
        json_object_set_new(*reply, "version", json_string(LOOM_SLURM_VERSION));
    }
    return 0;
}

static void h_free_handle(uv_handle_t *h)
{
    free(h);
}

static void h_shutdown_later(uv_timer_t *t)
{
    ctld_t *c = t->data;
    uv_close((uv_handle_t *)t, h_free_handle);
    ctld_shutdown(c, false);
}

static int h_shutdown(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                      loom_sbuf_t *raw)
{
    /* Security: the registry requires the admin role. */
    bool controller_only = json_is_true(json_object_get(req, "controller_only"));
    loom_info("shutdown requested by uid %u%s", peer->uid,
              controller_only ? " (controller only)" : "");
    if (!controller_only) {
        json_t *msg = loom_msg_new("shutdown", 0);
        for (size_t i = 0; i < c->nnodes; i++)
            if (c->nodes[i].link)
                ctld_server_request(c->nodes[i].link, msg, NULL, NULL);
        json_decref(msg);
    }
    /* Reply first; stop on the next loop turn, once the reply is written. */
    uv_timer_t *t = loom_xcalloc(1, sizeof(*t));
    uv_timer_init(c->loop, t);
    t->data = c;
    uv_timer_start(t, h_shutdown_later, 50, 0);
    *reply = loom_msg_reply(req, 0, NULL);
    return 0;
}

static int h_reconfigure(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    /* Security: the registry requires the admin role. */
    int rc = ctld_reconfigure(c, &err);
    if (rc == 0)
        loom_info("reconfigured by uid %u", peer->uid);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

/* setdebug: the level by Slurm's name ("debug2"), kept for show config. */
static int h_debug_level(ctld_t *c, const char *name, loom_err_t *err)
{
    loom_log_level_t level;
    if (loom_log_parse_level(name, &level) < 0)
        return loom_errf(err, -EINVAL, "invalid debug level: %s", name);
    loom_log_set_level(level);
    free(c->conf->slurmctld_debug);
    c->conf->slurmctld_debug = loom_xstrdup(name);
    return 0;
}

/* setdebugflags +Name / -Name: DebugFlags as show config prints them, and
 * the Loom subsystems they cover (log.h). */
static int h_debug_flag(ctld_t *c, const char *change, loom_err_t *err)
{
    char *list = NULL;
    uint32_t flags = 0;
    const char *bad;
    size_t badlen;
    if (loom_log_slurm_flags_edit(c->conf->debug_flags, change, &list) < 0)
        return loom_errf(err, -EINVAL, "invalid debug flag: %s", change);
    loom_log_slurm_flags(list, &flags, &bad, &badlen);
    loom_log_set_flags(flags);
    free(c->conf->debug_flags);
    c->conf->debug_flags = *list ? list : NULL;
    if (!*list)
        free(list);
    return 0;
}

/* scontrol setdebug / setdebugflags: the running controller's logging, until
 * a reconfigure reads slurm.conf again (as slurmctld 22.05). */
static int h_debug_set(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                       loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    /* Security: the registry requires the admin role. */
    const char *level = json_string_value(json_object_get(req, "level"));
    const char *flag = json_string_value(json_object_get(req, "flag"));
    int rc = level  ? h_debug_level(c, level, &err)
             : flag ? h_debug_flag(c, flag, &err)
                    : loom_errf(&err, -EINVAL, "debug.set needs level or flag");
    if (rc == 0)
        loom_info("%s %s set by uid %u", level ? "debug level" : "debug flag", level ? level : flag,
                  peer->uid);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

static int h_part_update(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    /* Security: the registry requires the admin role. */
    int rc = ctld_part_update(c, req, &err);
    if (rc == 0)
        loom_info("partition %s updated by uid %u", json_string_value(json_object_get(req, "name")),
                  peer->uid);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

static int h_node_info(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                       loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    /* Security: node records are public (sinfo). */
    json_t *nodes =
        ctld_node_mgr_records(c, json_string_value(json_object_get(req, "nodes")), &err);
    int rc = nodes ? 0 : err.code;
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    if (*reply && nodes)
        json_object_set(*reply, "nodes", nodes);
    json_decref(nodes);
    return rc;
}

static int h_node_update(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    /* Security: the registry requires the admin role. */
    int rc = ctld_node_mgr_update(c, req, peer->uid, &err);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

static int h_part_info(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                       loom_sbuf_t *raw)
{
    /* Security: partition records are public (sinfo). */
    *reply = loom_msg_reply(req, 0, NULL);
    if (*reply)
        json_object_set_new(*reply, "partitions", ctld_part_records(c));
    return 0;
}

/* "Key = Value" lines of loom_conf_print as pairs, with the run-time keys. */
static void h_config_pairs(const ctld_t *c, json_t *arr)
{
    loom_sbuf_t text = LOOM_SBUF_INIT;
    loom_conf_print(c->conf, &text);
    char boot[32], *save = NULL;
    struct tm tm;
    time_t bt = (time_t)c->boot_time;
    strftime(boot, sizeof(boot), "%Y-%m-%dT%H:%M:%S", localtime_r(&bt, &tm));
    char next[16];
    snprintf(next, sizeof(next), "%u", c->next_job_id);
    const char *extra[][2] = {{"BOOT_TIME", boot},
                              {"NEXT_JOB_ID", next},
                              {"SLURM_CONF", c->conf_path},
                              {"SLURM_VERSION", LOOM_SLURM_VERSION}};
    size_t e = 0, nextra = sizeof(extra) / sizeof(extra[0]);
    for (char *line = strtok_r(text.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strstr(line, " = ");
        if (!eq)
            continue;
        *eq = '\0';
        for (char *end = eq; end > line && end[-1] == ' ';)
            *--end = '\0';
        while (e < nextra && strcasecmp(extra[e][0], line) < 0) {
            json_array_append_new(arr, json_pack("[s, s]", extra[e][0], extra[e][1]));
            e++;
        }
        json_array_append_new(arr, json_pack("[s, s]", line, eq + 3));
    }
    for (; e < nextra; e++)
        json_array_append_new(arr, json_pack("[s, s]", extra[e][0], extra[e][1]));
    loom_sbuf_free(&text);
}

static int h_config_info(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    /* Security: the configuration is public (scontrol show config); no secrets in it. */
    json_t *arr = json_array();
    h_config_pairs(c, arr);
    *reply = loom_msg_reply(req, 0, NULL);
    if (*reply)
        json_object_set(*reply, "config", arr);
    json_decref(arr);
    return 0;
}

static int h_node_register(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                           loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    json_t *payload = json_object();
    /* Security: the registry requires the node role (a frame signed with the cluster key). */
    int rc = ctld_node_mgr_register(c, peer->conn, req, payload, &err);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    if (*reply && rc == 0)
        json_object_update(*reply, payload);
    json_decref(payload);
    return rc;
}

static int h_node_heartbeat(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                            loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    /* Security: the registry requires the node role. */
    int rc = ctld_node_mgr_heartbeat(c, req, &err);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

const ctld_handler_t ctld_misc_handlers[] = {
    {"ping", h_ping},
    {"shutdown", h_shutdown},
    {"reconfigure", h_reconfigure},
    {"debug.set", h_debug_set},
    {"node.info", h_node_info},
    {"node.update", h_node_update},
    {"part.info", h_part_info},
    {"part.update", h_part_update},
    {"config.info", h_config_info},
    {"node.register", h_node_register},
    {"node.heartbeat", h_node_heartbeat},
    {NULL, NULL},
};

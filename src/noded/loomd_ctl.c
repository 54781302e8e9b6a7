/*
 * loomd_ctl.c - loomd's controller link and node port (messages.md §4).
 *
 * The link: connect (TCP, every frame signed with the cluster key), send
 * node.register, then a heartbeat every SlurmdTimeout/3 (1 to 30 s). When the
 * link drops or the controller refuses the registration, reconnect after a
 * delay that doubles from 100 ms up to 5 s. The controller's requests arrive
 * on the link (and, from any holder of the key, on the node port) and go
 * through one dispatcher built from the registry's role rules.
 */
#include "noded/noded.h"

#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>

#define CTL_BACKOFF_FIRST_MS 100
#define CTL_BACKOFF_MAX_MS   5000

static void ctl_connect(loom_noded_t *n);

/* ------------------------------------------------------------------ peers */

uint64_t loom_noded_peer_add(loom_noded_t *n, loom_conn_t *c)
{
    loom_noded_peer_t *p = loom_xcalloc(1, sizeof(*p));
    p->conn = c;
    p->serial = ++n->next_serial;
    p->next = n->peers;
    n->peers = p;
    return p->serial;
}

void loom_noded_peer_remove(loom_noded_t *n, loom_conn_t *c)
{
    for (loom_noded_peer_t **pp = &n->peers; *pp; pp = &(*pp)->next) {
        if ((*pp)->conn == c) {
            loom_noded_peer_t *p = *pp;
            *pp = p->next;
            free(p);
            return;
        }
    }
}

bool loom_noded_peer_alive(const loom_noded_t *n, const loom_conn_t *c, uint64_t serial)
{
    if (c && c == n->ctl && serial == n->ctl_serial)
        return true;
    for (const loom_noded_peer_t *p = n->peers; p; p = p->next)
        if (p->conn == c && p->serial == serial)
            return true;
    return false;
}

void loom_noded_peers_close(loom_noded_t *n)
{
    /* Each close removes its peer through the close callback. */
    while (n->peers)
        loom_conn_close(n->peers->conn);
}

/* --------------------------------------------------------------- dispatch */

static void ctl_reply(loom_conn_t *c, json_t *req, int rc, const char *msg)
{
    json_t *reply = loom_msg_reply(req, rc, "%s", msg ? msg : "");
    if (!reply) {
        loom_conn_close(c);
        return;
    }
    loom_conn_send(c, reply);
    json_decref(reply);
}

/* One dispatcher for the link and the node port: header, role, handler. */
static void ctl_on_msg(loom_conn_t *c, json_t *msg, bool authed, void *arg)
{
    loom_noded_t *n = arg;
    const loom_msg_type_t *t = NULL;
    loom_err_t err = {0};
    int rc = loom_msg_check(msg, &t, NULL, &err);
    if (rc == 0 && !loom_role_permits(t->role, authed ? LOOM_ROLE_NODE : LOOM_ROLE_USER))
        rc = loom_errf(&err, -LOOM_EPERM, "'%s' needs the %s role", t->name,
                       loom_role_name(t->role));
    if (rc < 0) {
        ctl_reply(c, msg, rc, err.msg);
        return;
    }
    if (strcmp(t->name, "job.launch") == 0) {
        loom_noded_job_launch(n, c, msg);
    } else if (strcmp(t->name, "job.kill") == 0) {
        loom_noded_job_kill(n, c, msg);
    } else if (strcmp(t->name, "step.launch") == 0) {
        loom_noded_step_launch(n, c, msg);
    } else if (strcmp(t->name, "step.signal") == 0) {
        loom_noded_step_signal(n, c, msg);
    } else if (strcmp(t->name, "step.usage") == 0) {
        loom_noded_step_usage(n, c, msg);
    } else if (strcmp(t->name, "ping") == 0 || strcmp(t->name, "reconfigure") == 0) {
        ctl_reply(c, msg, 0, NULL);
    } else if (strcmp(t->name, "shutdown") == 0) {
        ctl_reply(c, msg, 0, NULL);
        loom_info("shutdown requested by the controller");
        uv_kill(getpid(), SIGTERM);
    } else {
        ctl_reply(c, msg, -LOOM_EMSG_TYPE, "loomd does not handle this message type");
    }
}

/* ------------------------------------------------------------- heartbeats */

static void ctl_ignore_reply(void *arg, json_t *reply)
{
}

static void ctl_heartbeat(uv_timer_t *t)
{
    loom_noded_t *n = t->data;
    struct sysinfo si;
    double load = 0;
    json_int_t free_mib = 0;
    if (sysinfo(&si) == 0) {
        load = (double)si.loads[0] / (double)(1 << SI_LOAD_SHIFT);
        free_mib = (json_int_t)((uint64_t)si.freeram * si.mem_unit / (1024 * 1024));
    }
    json_t *req = loom_msg_new("node.heartbeat", 0);
    json_object_set_new(req, "node", json_string(n->name));
    json_object_set_new(req, "load", json_real(load));
    json_object_set_new(req, "free_mem", json_integer(free_mib));
    loom_noded_ctl_request(n, req, ctl_ignore_reply, NULL);
    json_decref(req);
    loom_noded_jobs_tick(n);
    loom_noded_steps_tick(n);
}

static uint64_t ctl_heartbeat_ms(const loom_noded_t *n)
{
    int64_t secs = n->conf->slurmd_timeout / 3;
    if (secs < 1)
        secs = 1;
    if (secs > 30)
        secs = 30;
    return (uint64_t)secs * 1000;
}

/* ------------------------------------------------------------------- link */

bool loom_noded_ctl_request(loom_noded_t *n, json_t *req, loom_conn_reply_f *cb, void *arg)
{
    if (!n->ctl || !n->registered)
        return false;
    return loom_conn_request(n->ctl, req, cb, arg) == 0;
}

static void ctl_retry_due(uv_timer_t *t)
{
    ctl_connect(t->data);
}

static void ctl_retry(loom_noded_t *n)
{
    if (n->stopping)
        return;
    uv_timer_start(&n->reconnect_timer, ctl_retry_due, (uint64_t)n->backoff_ms, 0);
    n->backoff_ms = n->backoff_ms * 2 > CTL_BACKOFF_MAX_MS ? CTL_BACKOFF_MAX_MS : n->backoff_ms * 2;
}

static void ctl_closed(loom_conn_t *c, int status, void *arg)
{
    loom_noded_t *n = arg;
    if (n->ctl != c)
        return;
    if (n->registered)
        loom_info("lost the controller connection; reconnecting");
    n->ctl = NULL;
    n->registered = false;
    uv_timer_stop(&n->heartbeat_timer);
    loom_noded_jobs_unsent(n);
    ctl_retry(n);
}

static void ctl_registered(void *arg, json_t *reply)
{
    loom_noded_t *n = arg;
    const char *msg = NULL;
    if (!reply)
        return; /* ctl_closed handles the retry */
    int rc = loom_msg_rc(reply, &msg);
    json_t *ok = json_object_get(reply, "config_ok");
    if (rc == 0 && json_is_false(ok))
        loom_error("the controller finds this node's configuration invalid: %s",
                   json_string_value(json_object_get(reply, "reason")));
    if (rc < 0) {
        loom_error("registration refused by the controller: %s", msg);
        loom_conn_close(n->ctl); /* and retry later */
        return;
    }
    loom_info("registered with the controller as %s", n->name);
    n->registered = true;
    n->backoff_ms = CTL_BACKOFF_FIRST_MS;
    uint64_t every = ctl_heartbeat_ms(n);
    uv_timer_start(&n->heartbeat_timer, ctl_heartbeat, every, every);
    loom_noded_jobs_resend(n);
}

static void ctl_connected(void *arg, loom_conn_t *c, int status)
{
    loom_noded_t *n = arg;
    n->connecting = false;
    if (status < 0 || n->stopping) {
        if (c)
            loom_conn_close(c);
        else
            loom_debug("controller not reachable: %s", uv_strerror(status));
        ctl_retry(n);
        return;
    }
    n->ctl = c;
    n->ctl_serial = ++n->next_serial;
    json_t *req = loom_noded_register_msg(n);
    if (loom_conn_request(c, req, ctl_registered, n) < 0)
        loom_conn_close(c);
    json_decref(req);
}

static void ctl_connect(loom_noded_t *n)
{
    if (n->ctl || n->connecting || n->stopping)
        return;
    const loom_conf_host_t *h = &n->conf->ctld_hosts[0];
    loom_conn_opts_t o = {.key = n->key,
                          .sender = n->name,
                          .require_auth = true,
                          .on_msg = ctl_on_msg,
                          .on_close = ctl_closed,
                          .arg = n};
    n->connecting = true;
    if (loom_conn_tcp_connect(n->loop, h->addr ? h->addr : h->name, (int)n->conf->slurmctld_port,
                              &o, ctl_connected, n) < 0) {
        n->connecting = false;
        loom_debug("cannot resolve the controller address %s", h->addr ? h->addr : h->name);
        ctl_retry(n);
    }
}

/* What slurmd reports of its host: "boot_time", the machine's (BootTime;
 * loomd's start when the uptime is unknown), "arch" and "os": the machine,
 * and the kernel's name, release and version ("Linux 6.1.0 #1 SMP ..."). */
static void ctl_host_facts(const loom_noded_t *n, json_t *req)
{
    struct sysinfo si;
    int64_t boot = n->boot_time;
    if (sysinfo(&si) == 0 && si.uptime > 0)
        boot = (int64_t)time(NULL) - si.uptime;
    json_object_set_new(req, "boot_time", json_integer(boot));
    struct utsname u;
    if (uname(&u) < 0)
        return;
    char os[sizeof(u.sysname) + sizeof(u.release) + sizeof(u.version) + 3];
    snprintf(os, sizeof(os), "%s %s %s", u.sysname, u.release, u.version);
    json_object_set_new(req, "arch", json_string(u.machine));
    json_object_set_new(req, "os", json_string(os));
}

json_t *loom_noded_register_msg(loom_noded_t *n)
{
    const loom_conf_nodecfg_t *cfg = n->me->cfg;
    json_t *req = loom_msg_new("node.register", 0);
    json_t *gres = json_array(), *jobs = json_array();
    for (size_t i = 0; i < n->ngpus; i++) {
        json_t *g =
            json_pack("{s:s, s:I, s:s}", "name", "gpu", "index", (json_int_t)n->gpus[i].index,
                      "file", n->gpus[i].file ? n->gpus[i].file : "");
        if (n->gpus[i].type)
            json_object_set_new(g, "type", json_string(n->gpus[i].type));
        json_array_append_new(gres, g);
    }
    loom_noded_jobs_list(n, jobs);
    json_object_set_new(req, "node", json_string(n->name));
    json_object_set_new(req, "cpus", json_integer(cfg->cpus));
    json_object_set_new(req, "boards", json_integer(cfg->boards));
    json_object_set_new(req, "sockets", json_integer(cfg->sockets));
    json_object_set_new(req, "cores", json_integer(cfg->cores_per_socket));
    json_object_set_new(req, "threads", json_integer(cfg->threads_per_core));
    json_object_set_new(req, "real_memory", json_integer(cfg->real_memory));
    json_object_set_new(req, "tmp_disk", json_integer(cfg->tmp_disk));
    json_object_set_new(req, "gres", gres);
    json_object_set_new(req, "port", json_integer(n->me->port));
    json_object_set_new(req, "version", json_string(LOOM_SLURM_VERSION));
    ctl_host_facts(n, req);
    json_object_set_new(req, "jobs", jobs);
    return req;
}

void loom_noded_ctl_start(loom_noded_t *n)
{
    uv_timer_init(n->loop, &n->reconnect_timer);
    uv_timer_init(n->loop, &n->heartbeat_timer);
    n->reconnect_timer.data = n->heartbeat_timer.data = n;
    n->backoff_ms = CTL_BACKOFF_FIRST_MS;
    ctl_connect(n);
}

void loom_noded_ctl_stop(loom_noded_t *n)
{
    if (!n->reconnect_timer.loop)
        return; /* never started */
    uv_close((uv_handle_t *)&n->reconnect_timer, NULL);
    uv_close((uv_handle_t *)&n->heartbeat_timer, NULL);
    if (n->ctl)
        loom_conn_close(n->ctl);
}

/* -------------------------------------------------------------- node port */

static void port_closed(loom_conn_t *c, int status, void *arg)
{
    loom_noded_peer_remove(arg, c);
}

static void port_free(uv_handle_t *h)
{
    free(h);
}

static void port_on_connection(uv_stream_t *server, int status)
{
    loom_noded_t *n = server->data;
    if (status < 0)
        return;
    uv_tcp_t *client = loom_xcalloc(1, sizeof(*client));
    uv_tcp_init(n->loop, client);
    if (uv_accept(server, (uv_stream_t *)client) < 0) {
        uv_close((uv_handle_t *)client, port_free);
        return;
    }
    uv_tcp_nodelay(client, 1);
    /* Security: only holders of the cluster key may talk to the node port. */
    loom_conn_opts_t o = {.key = n->key,
                          .sender = n->name,
                          .require_auth = true,
                          .on_msg = ctl_on_msg,
                          .on_close = port_closed,
                          .arg = n};
    loom_conn_t *c = loom_conn_create((uv_stream_t *)client, &o);
    if (c)
        loom_noded_peer_add(n, c);
}

int loom_noded_port_listen(loom_noded_t *n, loom_err_t *err)
{
    struct sockaddr_in a4;
    int port = (int)n->me->port;
    uv_tcp_init(n->loop, &n->port_server);
    n->port_server.data = n;
    n->port_open = true;
    uv_ip4_addr("0.0.0.0", port, &a4);
    int rc = uv_tcp_bind(&n->port_server, (const struct sockaddr *)&a4, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&n->port_server, 128, port_on_connection);
    if (rc < 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot listen on port %d: %s", port,
                         uv_strerror(rc));
    return 0;
}

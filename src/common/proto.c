/*
 * proto.c - the message registry and message helpers. See proto.h and
 * docs/proto/rpc.md.
 */
#include "common/proto.h"
#include "common/sbuf.h"

#include <stdarg.h>
#include <string.h>

/* THE registry (rpc.md §5). Add a message here and in rpc.md's table; the
 * unit test checks that the two agree. Order is not significant, but keep
 * related types together. */
static const loom_msg_type_t proto_types[] = {
    {"ping", LOOM_ROLE_USER, 1},
    {"shutdown", LOOM_ROLE_ADMIN, 1},
    {"reconfigure", LOOM_ROLE_ADMIN, 1},
    {"debug.set", LOOM_ROLE_ADMIN, 1},
    {"job.submit", LOOM_ROLE_USER, 1},
    {"job.info", LOOM_ROLE_USER, 1},
    {"job.signal", LOOM_ROLE_USER, 1},
    {"job.update", LOOM_ROLE_USER, 1},
    {"job.hold", LOOM_ROLE_USER, 1},
    {"job.release", LOOM_ROLE_USER, 1},
    {"job.requeue", LOOM_ROLE_USER, 1},
    {"job.suspend", LOOM_ROLE_ADMIN, 1},
    {"job.script", LOOM_ROLE_USER, 1},
    {"node.info", LOOM_ROLE_USER, 1},
    {"node.update", LOOM_ROLE_ADMIN, 1},
    {"part.info", LOOM_ROLE_USER, 1},
    {"part.update", LOOM_ROLE_ADMIN, 1},
    {"config.info", LOOM_ROLE_USER, 1},
    {"step.create", LOOM_ROLE_USER, 1},
    {"step.complete", LOOM_ROLE_USER, 1},
    {"job.prio", LOOM_ROLE_USER, 1},
    {"assoc.shares", LOOM_ROLE_USER, 1},
    {"step.stat", LOOM_ROLE_USER, 1},
    {"alloc.release", LOOM_ROLE_USER, 1},
    {"node.register", LOOM_ROLE_NODE, 1},
    {"node.heartbeat", LOOM_ROLE_NODE, 1},
    {"job.launch", LOOM_ROLE_NODE, 1},
    {"job.kill", LOOM_ROLE_NODE, 1},
    {"job.complete", LOOM_ROLE_NODE, 1},
    {"step.launch", LOOM_ROLE_NODE, 1},
    {"step.signal", LOOM_ROLE_NODE, 1},
    {"step.usage", LOOM_ROLE_NODE, 1},
    {"step.done", LOOM_ROLE_NODE, 1},
    {"reply", LOOM_ROLE_USER, 1},
    /* Accounting (messages.md §6): loomctld, sacct, sacctmgr -> loomdbd. The
     * entity changes are role user: loomdbd also lets users whose AdminLevel
     * is Operator or Administrator make them (its Security: step). */
    {"dbd.job", LOOM_ROLE_NODE, 1},
    {"dbd.jobs.query", LOOM_ROLE_USER, 1},
    {"dbd.register", LOOM_ROLE_NODE, 1},
    {"dbd.report.cluster", LOOM_ROLE_USER, 1},
    {"dbd.report.users", LOOM_ROLE_USER, 1},
    {"dbd.cluster.add", LOOM_ROLE_USER, 1},
    {"dbd.cluster.modify", LOOM_ROLE_USER, 1},
    {"dbd.cluster.delete", LOOM_ROLE_USER, 1},
    {"dbd.cluster.list", LOOM_ROLE_USER, 1},
    {"dbd.account.add", LOOM_ROLE_USER, 1},
    {"dbd.account.modify", LOOM_ROLE_USER, 1},
    {"dbd.account.delete", LOOM_ROLE_USER, 1},
    {"dbd.account.list", LOOM_ROLE_USER, 1},
    {"dbd.user.add", LOOM_ROLE_USER, 1},
    {"dbd.user.modify", LOOM_ROLE_USER, 1},
    {"dbd.user.delete", LOOM_ROLE_USER, 1},
    {"dbd.user.list", LOOM_ROLE_USER, 1},
    {"dbd.qos.add", LOOM_ROLE_USER, 1},
    {"dbd.qos.modify", LOOM_ROLE_USER, 1},
    {"dbd.qos.delete", LOOM_ROLE_USER, 1},
    {"dbd.qos.list", LOOM_ROLE_USER, 1},
    {"dbd.assoc.modify", LOOM_ROLE_USER, 1},
    {"dbd.assoc.list", LOOM_ROLE_USER, 1},
    {"dbd.assoc.wait", LOOM_ROLE_NODE, 1},
};

#define PROTO_NTYPES (sizeof(proto_types) / sizeof(proto_types[0]))

const loom_msg_type_t *loom_proto_lookup(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < PROTO_NTYPES; i++)
        if (strcmp(proto_types[i].name, name) == 0)
            return &proto_types[i];
    return NULL;
}

size_t loom_proto_count(void)
{
    return PROTO_NTYPES;
}

const loom_msg_type_t *loom_proto_at(size_t i)
{
    return i < PROTO_NTYPES ? &proto_types[i] : NULL;
}

size_t loom_proto_index(const loom_msg_type_t *t)
{
    return (size_t)(t - proto_types);
}

const char *loom_role_name(loom_role_t role)
{
    switch (role) {
    case LOOM_ROLE_USER:
        return "user";
    case LOOM_ROLE_ADMIN:
        return "admin";
    case LOOM_ROLE_NODE:
        return "node";
    }
    return "?";
}

bool loom_role_permits(loom_role_t required, loom_role_t held)
{
    /* The roles nest: a key holder is at least an admin (rpc.md §4). */
    return held >= required;
}

json_t *loom_msg_new(const char *type, uint64_t id)
{
    return json_pack("{s:i, s:s, s:I}", "v", LOOM_PROTO_VERSION, "type", type, "id",
                     (json_int_t)id);
}

/* The message's id when it is a non-negative integer. */
static bool proto_get_id(const json_t *msg, json_int_t *id)
{
    const json_t *j = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return false;
    *id = json_integer_value(j);
    return true;
}

/* The version to answer in: the request's own when we speak it. */
static json_int_t proto_reply_version(const json_t *req)
{
    const json_t *v = json_object_get(req, "v");
    if (json_is_integer(v) && json_integer_value(v) >= LOOM_PROTO_MIN_VERSION &&
        json_integer_value(v) <= LOOM_PROTO_VERSION)
        return json_integer_value(v);
    return LOOM_PROTO_VERSION;
}

/* A JSON string of text. A message cut at the error buffer's size, or
 * quoting raw bytes, may not be valid UTF-8: such bytes become '?'. */
static json_t *proto_text(loom_sbuf_t *text)
{
    json_t *j = json_stringn(loom_sbuf_str(text), text->len);
    if (j)
        return j;
    for (size_t i = 0; i < text->len; i++)
        if ((unsigned char)text->buf[i] >= 0x80 || text->buf[i] == '\0')
            text->buf[i] = '?';
    return json_stringn(loom_sbuf_str(text), text->len);
}

json_t *loom_msg_reply(const json_t *req, int rc, const char *fmt, ...)
{
    json_int_t id;
    if (!proto_get_id(req, &id))
        return NULL;
    loom_sbuf_t text = LOOM_SBUF_INIT;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        loom_sbuf_vaddf(&text, fmt, ap);
        va_end(ap);
    }
    if (rc != 0 && text.len == 0)
        loom_sbuf_add(&text, loom_strerror(rc));
    json_t *rcj = rc == 0 ? json_integer(0) : json_string(loom_errname(rc));
    json_t *reply = json_pack("{s:I, s:s, s:I, s:o, s:o}", "v", proto_reply_version(req), "type",
                              "reply", "id", id, "rc", rcj, "msg", proto_text(&text));
    loom_sbuf_free(&text);
    return reply;
}

/* The integer member key of msg, or an error naming it. */
static int proto_get_int(const json_t *msg, const char *key, json_int_t *out, loom_err_t *err)
{
    const json_t *j = json_object_get(msg, key);
    if (!j)
        return loom_errf(err, -LOOM_EPROTO, "message has no '%s'", key);
    if (!json_is_integer(j))
        return loom_errf(err, -LOOM_EPROTO, "message '%s' is not an integer", key);
    *out = json_integer_value(j);
    return 0;
}

static int proto_check_type(const char *name, json_int_t v, const loom_msg_type_t **out,
                            loom_err_t *err)
{
    const loom_msg_type_t *t = loom_proto_lookup(name);
    if (!t)
        return loom_errf(err, -LOOM_EMSG_TYPE, "unknown message type '%.*s'", LOOM_MSG_TYPE_MAX,
                         name);
    if (t->since > v)
        return loom_errf(err, -LOOM_EMSG_TYPE,
                         "message type '%s' needs protocol version %d, message has %lld", name,
                         t->since, (long long)v);
    *out = t;
    return 0;
}

int loom_msg_check(const json_t *msg, const loom_msg_type_t **type, uint64_t *id, loom_err_t *err)
{
    if (!json_is_object(msg))
        return loom_errf(err, -LOOM_EPROTO, "message is not a JSON object");
    json_int_t idv = 0, v = 0;
    int rc = proto_get_int(msg, "id", &idv, err);
    if (rc == 0 && idv < 0)
        rc = loom_errf(err, -LOOM_EPROTO, "message id %lld is negative", (long long)idv);
    if (rc == 0)
        rc = proto_get_int(msg, "v", &v, err);
    const json_t *tj = json_object_get(msg, "type");
    if (rc == 0 && !json_is_string(tj))
        rc = loom_errf(err, -LOOM_EPROTO, "message 'type' is %s", tj ? "not a string" : "missing");
    if (rc == 0 && (v < LOOM_PROTO_MIN_VERSION || v > LOOM_PROTO_VERSION))
        rc = loom_errf(err, -LOOM_EMSG_VERSION,
                       "protocol version %lld not supported (this peer speaks %d to %d)",
                       (long long)v, LOOM_PROTO_MIN_VERSION, LOOM_PROTO_VERSION);
    const loom_msg_type_t *t = NULL;
    if (rc == 0)
        rc = proto_check_type(json_string_value(tj), v, &t, err);
    if (rc < 0)
        return rc;
    if (type)
        *type = t;
    if (id)
        *id = (uint64_t)idv;
    return 0;
}

int loom_msg_rc(const json_t *reply, const char **msg)
{
    const json_t *rcj = json_is_object(reply) ? json_object_get(reply, "rc") : NULL;
    int rc;
    if (json_is_integer(rcj) && json_integer_value(rcj) == 0)
        rc = 0;
    else if (json_is_string(rcj))
        rc = loom_errcode(json_string_value(rcj));
    else
        rc = -LOOM_EPROTO;
    if (rc == 0 && json_is_string(rcj))
        rc = -LOOM_EPROTO; /* a name we do not know: still a failure */
    if (msg) {
        const json_t *m = json_is_object(reply) ? json_object_get(reply, "msg") : NULL;
        const char *s = json_is_string(m) ? json_string_value(m) : "";
        *msg = (s[0] || rc == 0) ? s : loom_strerror(rc);
    }
    return rc;
}

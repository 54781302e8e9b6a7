/* test_proto.c - the message registry, message helpers and reply codes (rpc.md). */
#include "common/proto.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_registry_lookup(void **state)
{
    static const struct {
        const char *name;
        loom_role_t role;
    } cases[] = {
        {"ping", LOOM_ROLE_USER},          {"shutdown", LOOM_ROLE_ADMIN},
        {"reconfigure", LOOM_ROLE_ADMIN},  {"job.submit", LOOM_ROLE_USER},
        {"job.signal", LOOM_ROLE_USER},    {"node.update", LOOM_ROLE_ADMIN},
        {"node.register", LOOM_ROLE_NODE}, {"node.heartbeat", LOOM_ROLE_NODE},
        {"job.launch", LOOM_ROLE_NODE},    {"step.complete", LOOM_ROLE_USER},
        {"reply", LOOM_ROLE_USER},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const loom_msg_type_t *t = loom_proto_lookup(cases[i].name);
        assert_non_null(t);
        assert_string_equal(t->name, cases[i].name);
        assert_int_equal(t->role, cases[i].role);
        assert_int_equal(t->since, 1);
    }
    assert_null(loom_proto_lookup("job.sub"));
    assert_null(loom_proto_lookup("PING"));
    assert_null(loom_proto_lookup(""));
    assert_null(loom_proto_lookup(NULL));
}

static void test_registry_index(void **state)
{
    size_t n = loom_proto_count();
    assert_true(n >= 23);
    for (size_t i = 0; i < n; i++) {
        const loom_msg_type_t *t = loom_proto_at(i);
        assert_non_null(t);
        assert_int_equal(loom_proto_index(t), i);
        assert_ptr_equal(loom_proto_lookup(t->name), t); /* names are unique */
        assert_true(strlen(t->name) <= LOOM_MSG_TYPE_MAX);
        assert_true(t->since >= 1 && t->since <= LOOM_PROTO_VERSION);
    }
    assert_null(loom_proto_at(n));
}

/* The registry and rpc.md §5 list the same types. */
static void test_registry_documented(void **state)
{
    FILE *fp = fopen("../../docs/proto/rpc.md", "r");
    assert_non_null(fp);
    static char doc[64 * 1024];
    size_t len = fread(doc, 1, sizeof(doc) - 1, fp);
    fclose(fp);
    doc[len] = '\0';
    for (size_t i = 0; i < loom_proto_count(); i++) {
        const loom_msg_type_t *t = loom_proto_at(i);
        char row[160];
        snprintf(row, sizeof(row), "| `%s` | %s | %d |", t->name, loom_role_name(t->role),
                 t->since);
        if (!strstr(doc, row))
            fail_msg("rpc.md has no row starting '%s'", row);
    }
}

static void test_roles(void **state)
{
    static const struct {
        loom_role_t need, have;
        bool ok;
    } cases[] = {
        {LOOM_ROLE_USER, LOOM_ROLE_USER, true},   {LOOM_ROLE_USER, LOOM_ROLE_NODE, true},
        {LOOM_ROLE_ADMIN, LOOM_ROLE_USER, false}, {LOOM_ROLE_ADMIN, LOOM_ROLE_ADMIN, true},
        {LOOM_ROLE_ADMIN, LOOM_ROLE_NODE, true},  {LOOM_ROLE_NODE, LOOM_ROLE_ADMIN, false},
        {LOOM_ROLE_NODE, LOOM_ROLE_USER, false},  {LOOM_ROLE_NODE, LOOM_ROLE_NODE, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(loom_role_permits(cases[i].need, cases[i].have), cases[i].ok);
    assert_string_equal(loom_role_name(LOOM_ROLE_ADMIN), "admin");
}

static void test_msg_new(void **state)
{
    json_t *m = loom_msg_new("job.submit", 17);
    assert_non_null(m);
    assert_int_equal(json_integer_value(json_object_get(m, "v")), LOOM_PROTO_VERSION);
    assert_string_equal(json_string_value(json_object_get(m, "type")), "job.submit");
    assert_int_equal(json_integer_value(json_object_get(m, "id")), 17);
    const loom_msg_type_t *t = NULL;
    uint64_t id = 0;
    assert_int_equal(loom_msg_check(m, &t, &id, NULL), 0);
    assert_string_equal(t->name, "job.submit");
    assert_int_equal(id, 17);
    json_decref(m);
}

static void test_msg_reply(void **state)
{
    json_t *req = loom_msg_new("job.submit", 42);
    json_t *r = loom_msg_reply(req, 0, NULL);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "type")), "reply");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 42);
    assert_true(json_is_integer(json_object_get(r, "rc")));
    assert_int_equal(json_integer_value(json_object_get(r, "rc")), 0);
    const char *msg = NULL;
    assert_int_equal(loom_msg_rc(r, &msg), 0);
    assert_string_equal(msg, "");
    assert_int_equal(loom_msg_check(r, NULL, NULL, NULL), 0);
    json_decref(r);

    r = loom_msg_reply(req, -LOOM_EINVAL_PARTITION, "invalid partition '%s'", "gpux");
    assert_string_equal(json_string_value(json_object_get(r, "rc")), "LOOM_EINVAL_PARTITION");
    assert_int_equal(loom_msg_rc(r, &msg), -LOOM_EINVAL_PARTITION);
    assert_string_equal(msg, "invalid partition 'gpux'");
    json_decref(r);

    /* No text: Slurm's wording for the code. */
    r = loom_msg_reply(req, -LOOM_EINVAL_JOBID, NULL);
    assert_int_equal(loom_msg_rc(r, &msg), -LOOM_EINVAL_JOBID);
    assert_string_equal(msg, "Invalid job id specified");
    assert_string_equal(json_string_value(json_object_get(r, "msg")), "Invalid job id specified");
    json_decref(r);

    /* Invalid UTF-8 in the text cannot break the reply. */
    r = loom_msg_reply(req, -LOOM_EPROTO, "bad '%s'", "\xff\xfe");
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "msg")), "bad '?"
                                                                      "?'");
    json_decref(r);
    json_decref(req);
}

static void test_msg_reply_needs_id(void **state)
{
    static const char *const reqs[] = {
        "{\"v\":1,\"type\":\"ping\"}",
        "{\"v\":1,\"type\":\"ping\",\"id\":\"7\"}",
        "{\"v\":1,\"type\":\"ping\",\"id\":-1}",
        "[1]",
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        json_t *req = json_loads(reqs[i], 0, NULL);
        assert_non_null(req);
        assert_null(loom_msg_reply(req, -LOOM_EPROTO, "x"));
        json_decref(req);
    }
    /* A version outside the window is answered in ours; inside, in theirs. */
    json_t *req = json_loads("{\"v\":99,\"type\":\"ping\",\"id\":3}", 0, NULL);
    json_t *r = loom_msg_reply(req, -LOOM_EMSG_VERSION, NULL);
    assert_int_equal(json_integer_value(json_object_get(r, "v")), LOOM_PROTO_VERSION);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 3);
    json_decref(r);
    json_decref(req);
}

static void test_msg_check(void **state)
{
    static const struct {
        const char *json;
        int rc;
        const char *msg;
    } cases[] = {
        {"{\"v\":1,\"type\":\"ping\",\"id\":0}", 0, NULL},
        {"{\"id\":5,\"type\":\"job.info\",\"v\":1,\"extra\":[1]}", 0, NULL},
        {"{\"v\":1,\"type\":\"ping\"}", -LOOM_EPROTO, "no 'id'"},
        {"{\"v\":1,\"type\":\"ping\",\"id\":\"1\"}", -LOOM_EPROTO, "'id' is not an integer"},
        {"{\"v\":1,\"type\":\"ping\",\"id\":1.5}", -LOOM_EPROTO, "'id' is not an integer"},
        {"{\"v\":1,\"type\":\"ping\",\"id\":-4}", -LOOM_EPROTO, "negative"},
        {"{\"type\":\"ping\",\"id\":1}", -LOOM_EPROTO, "no 'v'"},
        {"{\"v\":\"1\",\"type\":\"ping\",\"id\":1}", -LOOM_EPROTO, "'v' is not an integer"},
        {"{\"v\":1,\"id\":1}", -LOOM_EPROTO, "'type' is missing"},
        {"{\"v\":1,\"type\":7,\"id\":1}", -LOOM_EPROTO, "'type' is not a string"},
        {"{\"v\":2,\"type\":\"ping\",\"id\":1}", -LOOM_EMSG_VERSION, "version 2 not supported"},
        {"{\"v\":0,\"type\":\"ping\",\"id\":1}", -LOOM_EMSG_VERSION, "speaks 1 to 1"},
        {"{\"v\":1,\"type\":\"job.frobnicate\",\"id\":1}", -LOOM_EMSG_TYPE,
         "unknown message type 'job.frobnicate'"},
        {"[]", -LOOM_EPROTO, "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *m = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
        assert_non_null(m);
        const loom_msg_type_t *t = (const loom_msg_type_t *)1;
        uint64_t id = 12345;
        loom_err_t err = {0};
        int rc = loom_msg_check(m, &t, &id, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu %s: rc %d, want %d (%s)", i, cases[i].json, rc, cases[i].rc,
                     err.msg);
        if (rc < 0) {
            assert_ptr_equal(t, (const loom_msg_type_t *)1); /* untouched */
            assert_int_equal(id, 12345);
            if (!strstr(err.msg, cases[i].msg))
                fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        }
        json_decref(m);
    }
}

/* Every code survives the trip through its wire name. */
static void test_rc_roundtrip(void **state)
{
    json_t *req = loom_msg_new("ping", 1);
    int codes[128];
    size_t n = 0;
    for (int c = LOOM_EPARSE; c <= LOOM_EINTERNAL; c++)
        codes[n++] = -c;
    for (int c = LOOM_EPROTO; c <= LOOM_ETIMEDOUT; c++)
        codes[n++] = -c;
    for (int c = LOOM_EINVAL_PARTITION; c < LOOM_EEND; c++)
        codes[n++] = -c;
    codes[n++] = -ENOENT;
    codes[n++] = -EPERM;
    codes[n++] = -EAGAIN;
    for (size_t i = 0; i < n; i++) {
        json_t *r = loom_msg_reply(req, codes[i], NULL);
        const char *msg;
        int rc = loom_msg_rc(r, &msg);
        if (rc != codes[i])
            fail_msg("code %d (%s) came back as %d", codes[i], loom_errname(codes[i]), rc);
        assert_string_equal(msg, loom_strerror(codes[i]));
        json_decref(r);
    }
    json_decref(req);
}

static void test_rc_malformed(void **state)
{
    static const struct {
        const char *json;
        int rc;
    } cases[] = {
        {"{\"rc\":0}", 0},
        {"{\"rc\":\"LOOM_EACCESS\"}", -LOOM_EACCESS},
        {"{\"rc\":\"ENOENT\",\"msg\":\"gone\"}", -ENOENT},
        {"{\"rc\":\"LOOM_ENOT_A_CODE\"}", -LOOM_EPROTO},
        {"{\"rc\":\"OK\"}", -LOOM_EPROTO},
        {"{\"rc\":3}", -LOOM_EPROTO},
        {"{\"rc\":null}", -LOOM_EPROTO},
        {"{}", -LOOM_EPROTO},
        {"[]", -LOOM_EPROTO},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *r = json_loads(cases[i].json, 0, NULL);
        const char *msg = NULL;
        assert_int_equal(loom_msg_rc(r, &msg), cases[i].rc);
        assert_non_null(msg);
        assert_int_equal(loom_msg_rc(r, NULL), cases[i].rc);
        json_decref(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_lookup),
        cmocka_unit_test(test_registry_index),
        cmocka_unit_test(test_registry_documented),
        cmocka_unit_test(test_roles),
        cmocka_unit_test(test_msg_new),
        cmocka_unit_test(test_msg_reply),
        cmocka_unit_test(test_msg_reply_needs_id),
        cmocka_unit_test(test_msg_check),
        cmocka_unit_test(test_rc_roundtrip),
        cmocka_unit_test(test_rc_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_rpcclient.c - the blocking RPC client against a tiny server in a
 * forked child, over a Unix socket in a temporary directory and over TCP
 * loopback (rpc.md §2, §9). */
#include "common/frame.h"
#include "common/proto.h"
#include "common/rpcclient.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef enum { SRV_ECHO, SRV_SILENT, SRV_TRUNC, SRV_WRONG_ID_FIRST, SRV_CLOSE } srv_mode_t;

static char tmpdir[64];

static int setup_dir(void **state)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/loom-rpc-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static loom_key_t *test_key(void)
{
    uint8_t b[32];
    memset(b, 0x5a, sizeof(b));
    loom_key_t *k = NULL;
    assert_int_equal(loom_key_from_bytes(b, sizeof(b), &k, NULL), 0);
    return k;
}

static void srv_send(int fd, const json_t *msg, const loom_key_t *key)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_frame_auth_t a = {.key = key, .sender = "ctld", .ts = time(NULL), .nonce = 1};
    if (loom_frame_encode(msg, key ? &a : NULL, &sb, NULL) == 0 &&
        write(fd, sb.buf, sb.len) != (ssize_t)sb.len)
        _exit(3);
    loom_sbuf_free(&sb);
}

/* Answer one request according to mode. Returns false to hang up. */
static bool srv_answer(int fd, const char *body, size_t len, const loom_key_t *key, srv_mode_t mode)
{
    json_t *req = NULL;
    if (loom_frame_decode_body(body, len, key, key != NULL, time(NULL), &req, NULL) < 0)
        return false;        /* a daemon drops a peer whose frame fails */
    if (mode == SRV_CLOSE) { /* read the request, then hang up */
        json_decref(req);
        return false;
    }
    if (mode == SRV_TRUNC) {
        if (write(fd, "\0\0\0\x64{\"v\":1,\"id\"", 14) != 14)
            _exit(3);
        json_decref(req);
        return false;
    }
    json_t *reply = loom_msg_reply(req, 0, "echo");
    json_object_set(reply, "echo", json_object_get(req, "payload"));
    if (mode == SRV_WRONG_ID_FIRST) {
        json_t *stale = json_deep_copy(reply);
        json_object_set_new(stale, "id", json_integer(999));
        srv_send(fd, stale, key);
        json_decref(stale);
    }
    if (mode != SRV_SILENT)
        srv_send(fd, reply, key);
    json_decref(reply);
    json_decref(req);
    return true;
}

static void srv_serve(int lfd, const loom_key_t *key, srv_mode_t mode)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        _exit(2);
    loom_frame_reader_t *r = loom_frame_reader_create(0);
    char buf[4096];
    ssize_t n;
    bool up = true;
    while (up && (n = read(fd, buf, sizeof(buf))) > 0) {
        if (loom_frame_reader_feed(r, buf, (size_t)n, NULL) < 0)
            break;
        const char *body;
        size_t len;
        while (up && loom_frame_reader_next(r, &body, &len, NULL) == 1)
            up = srv_answer(fd, body, len, key, mode);
    }
    _exit(0);
}

/* Listen (Unix socket when tcp_port is NULL, else TCP loopback), fork the
 * server, return its pid; the address goes to addr. */
static pid_t srv_start(const loom_key_t *key, srv_mode_t mode, int *tcp_port, char *addr,
                       size_t addrlen)
{
    int lfd;
    if (!tcp_port) {
        struct sockaddr_un sun = {.sun_family = AF_UNIX};
        snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/ctld.sock", tmpdir);
        unlink(sun.sun_path);
        lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
        snprintf(addr, addrlen, "unix:%s", sun.sun_path);
    } else {
        struct sockaddr_in sin = {.sin_family = AF_INET};
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t sl = sizeof(sin);
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        assert_int_equal(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
        assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
        *tcp_port = ntohs(sin.sin_port);
        snprintf(addr, addrlen, "127.0.0.1:%d", *tcp_port);
    }
    assert_int_equal(listen(lfd, 4), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        srv_serve(lfd, key, mode);
    close(lfd);
    return pid;
}

static void srv_wait(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static json_t *ping(const char *payload)
{
    json_t *req = loom_msg_new("ping", 0);
    json_object_set_new(req, "payload", json_string(payload));
    return req;
}

static void echo_twice(const char *addr, const loom_key_t *key)
{
    loom_err_t err = {0};
    loom_rpc_t *c = loom_rpc_connect(addr, key, 2000, &err);
    if (!c)
        fail_msg("connect %s: %s", addr, err.msg);
    for (int i = 1; i <= 2; i++) {
        json_t *req = ping(i == 1 ? "hello" : "h\xc3\xa9llo again");
        json_t *reply = NULL;
        if (loom_rpc_call(c, req, &reply, &err) != 0)
            fail_msg("call %d: %s", i, err.msg);
        assert_int_equal(json_integer_value(json_object_get(req, "id")), i);
        assert_int_equal(json_integer_value(json_object_get(reply, "id")), i);
        const char *msg;
        assert_int_equal(loom_msg_rc(reply, &msg), 0);
        assert_string_equal(msg, "echo");
        assert_string_equal(json_string_value(json_object_get(reply, "echo")),
                            json_string_value(json_object_get(req, "payload")));
        if (key)
            assert_string_equal(loom_frame_sender(reply), "ctld");
        json_decref(reply);
        json_decref(req);
    }
    loom_rpc_close(c);
}

static void test_echo_unix(void **state)
{
    char addr[160];
    pid_t pid = srv_start(NULL, SRV_ECHO, NULL, addr, sizeof(addr));
    echo_twice(addr, NULL);
    srv_wait(pid);
}

static void test_echo_tcp(void **state)
{
    char addr[160];
    int port;
    pid_t pid = srv_start(NULL, SRV_ECHO, &port, addr, sizeof(addr));
    echo_twice(addr, NULL);
    srv_wait(pid);
}

static void test_echo_auth(void **state)
{
    loom_key_t *k = test_key();
    char addr[160];
    pid_t pid = srv_start(k, SRV_ECHO, NULL, addr, sizeof(addr));
    echo_twice(addr, k);
    srv_wait(pid);
    loom_key_destroy(k);
}

static void test_stale_reply_skipped(void **state)
{
    char addr[160];
    pid_t pid = srv_start(NULL, SRV_WRONG_ID_FIRST, NULL, addr, sizeof(addr));
    echo_twice(addr, NULL);
    srv_wait(pid);
}

/* Run one call against a server in mode; return its rc and message. */
static int call_once(srv_mode_t mode, const loom_key_t *srv_key, int timeout_ms, loom_err_t *err,
                     char *addr, size_t addrlen)
{
    pid_t pid = srv_start(srv_key, mode, NULL, addr, addrlen);
    loom_rpc_t *c = loom_rpc_connect(addr, NULL, timeout_ms, err);
    assert_non_null(c);
    json_t *req = ping("x");
    json_t *reply = (json_t *)1;
    int rc = loom_rpc_call(c, req, &reply, err);
    assert_ptr_equal(reply, (json_t *)1); /* untouched */
    /* The connection is dead now. */
    loom_err_t err2;
    assert_int_equal(loom_rpc_call(c, req, &reply, &err2), -LOOM_ECONNECT);
    assert_non_null(strstr(err2.msg, "is closed"));
    json_decref(req);
    loom_rpc_close(c);
    if (mode == SRV_SILENT)
        kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return rc;
}

static void test_failures(void **state)
{
    loom_key_t *k = test_key();
    static const struct {
        srv_mode_t mode;
        bool srv_keyed;
        int timeout_ms;
        int rc;
        const char *msg;
    } cases[] = {
        {SRV_SILENT, false, 200, -LOOM_ETIMEDOUT, "within 200 ms"},
        {SRV_TRUNC, false, 2000, -LOOM_EFRAME_TRUNC, "inside a frame"},
        {SRV_CLOSE, false, 2000, -LOOM_ECONNECT, "closed before the reply"},
        {SRV_ECHO, true, 2000, -LOOM_ECONNECT, "closed before the reply"}, /* no key */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_err_t err = {0};
        char addr[160];
        int rc = call_once(cases[i].mode, cases[i].srv_keyed ? k : NULL, cases[i].timeout_ms, &err,
                           addr, sizeof(addr));
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err.msg);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        if (!strstr(err.msg, addr))
            fail_msg("case %zu: '%s' lacks the address", i, err.msg);
    }
    loom_key_destroy(k);
}

static void test_connect_errors(void **state)
{
    char missing[128];
    snprintf(missing, sizeof(missing), "unix:%s/nope.sock", tmpdir);
    static char longpath[200];
    memset(longpath, 'p', sizeof(longpath) - 1);
    memcpy(longpath, "unix:/", 6);
    const struct {
        const char *addr;
        const char *msg;
    } cases[] = {
        {missing, "No such file or directory"},
        {"127.0.0.1:1", "Connection refused"},
        {"justahost", "bad address 'justahost'"},
        {"host:", "bad address"},
        {":80", "bad address"},
        {"[::1", "bad address"},
        {"[::1]80", "bad address"},
        {longpath, "File name too long"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_err_t err = {0};
        loom_rpc_t *c = loom_rpc_connect(cases[i].addr, NULL, 1000, &err);
        assert_null(c);
        assert_int_equal(err.code, -LOOM_ECONNECT);
        if (!strstr(err.msg, cases[i].msg) || !strstr(err.msg, cases[i].addr))
            fail_msg("%s: '%s' lacks '%s' or the address", cases[i].addr, err.msg, cases[i].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_unix), cmocka_unit_test(test_echo_tcp),
        cmocka_unit_test(test_echo_auth), cmocka_unit_test(test_stale_reply_skipped),
        cmocka_unit_test(test_failures),  cmocka_unit_test(test_connect_errors),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}

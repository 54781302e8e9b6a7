/* test_daemon.c - the daemons' shared start-up: options, log level, pid file, paths. */
#include "common/daemon.h"
#include "common/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXARGS 8

/* What the callback saw: like loomd's -N and --allow-root-jobs. */
typedef struct own_opts {
    const char *node;
    int root;
} own_opts_t;

static int own_opt(int ch, const char *arg, void *ctx)
{
    own_opts_t *o = ctx;
    if (ch == 'N')
        o->node = arg;
    else if (ch == 'R')
        o->root++;
    else
        return -LOOM_EUSAGE;
    return 0;
}

static const struct option own_longopts[] = {{"allow-root-jobs", no_argument, NULL, 'R'},
                                             {NULL, 0, NULL, 0}};

static void test_daemon_args(void **state)
{
    static const struct {
        const char *argv[MAXARGS];
        int rc;
        const char *conf, *log, *node;
        int foreground, verbose, root;
    } cases[] = {
        {{"d"}, 0, NULL, NULL, NULL, 0, 0, 0},
        {{"d", "-D", "-f", "/x/slurm.conf"}, 0, "/x/slurm.conf", NULL, NULL, 1, 0, 0},
        {{"d", "-vvv", "-L", "/l", "-v"}, 0, NULL, "/l", NULL, 0, 4, 0},
        {{"d", "-N", "n1", "--allow-root-jobs", "-Dfc"}, 0, "c", NULL, "n1", 1, 0, 1},
        {{"d", "-Nn2", "-fconf"}, 0, "conf", NULL, "n2", 0, 0, 0},
        {{"d", "-V"}, 1, NULL, NULL, NULL, 0, 0, 0},
        {{"d", "--help"}, 1, NULL, NULL, NULL, 0, 0, 0},
        {{"d", "-x"}, -LOOM_EUSAGE, NULL, NULL, NULL, 0, 0, 0},
        {{"d", "-R"}, -LOOM_EUSAGE, NULL, NULL, NULL, 0, 0, 0},
        {{"d", "-f"}, -LOOM_EUSAGE, NULL, NULL, NULL, 0, 0, 0},
        {{"d", "-D", "stray"}, -LOOM_EUSAGE, NULL, NULL, NULL, 1, 0, 0},
        {{"d", "--nosuch"}, -LOOM_EUSAGE, NULL, NULL, NULL, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[MAXARGS + 1] = {0};
        int argc = 0;
        while (argc < MAXARGS && cases[i].argv[argc]) {
            argv[argc] = (char *)cases[i].argv[argc];
            argc++;
        }
        own_opts_t own = {0};
        const loom_daemon_spec_t spec = {.usage = "Usage: d [-D] [-N node]",
                                         .shortopts = "N:",
                                         .longopts = own_longopts,
                                         .opt = own_opt,
                                         .ctx = &own};
        loom_daemon_opts_t o = {0};
        assert_int_equal(loom_daemon_args(argc, argv, &spec, &o), cases[i].rc);
        if (cases[i].rc < 0 && !cases[i].foreground)
            continue;
        assert_true(o.conf == cases[i].conf || !strcmp(o.conf, cases[i].conf));
        assert_true(o.log == cases[i].log || !strcmp(o.log, cases[i].log));
        assert_true(own.node == cases[i].node || !strcmp(own.node, cases[i].node));
        assert_int_equal(o.foreground, cases[i].foreground);
        assert_int_equal(o.verbose, cases[i].verbose);
        assert_int_equal(own.root, cases[i].root);
    }
}

/* A daemon without options of its own refuses loomd's. */
static void test_daemon_args_plain(void **state)
{
    const loom_daemon_spec_t spec = {.usage = "Usage: plain"};
    char *ok[] = {"d", "-Dv", NULL};
    char *bad[] = {"d", "-N", "n1", NULL};
    loom_daemon_opts_t o = {0};
    assert_int_equal(loom_daemon_args(2, ok, &spec, &o), 0);
    assert_true(o.foreground);
    assert_int_equal(o.verbose, 1);
    assert_int_equal(loom_daemon_args(3, bad, &spec, &o), -LOOM_EUSAGE);
}

static void test_daemon_level(void **state)
{
    static const struct {
        const char *conf;
        int verbose;
        loom_log_level_t level;
    } cases[] = {
        {NULL, 0, LOOM_LOG_INFO},          {NULL, 1, LOOM_LOG_VERBOSE},
        {NULL, 3, LOOM_LOG_DEBUG2},        {NULL, 9, LOOM_LOG_DEBUG2},
        {"error", 0, LOOM_LOG_ERROR},      {"error", 2, LOOM_LOG_VERBOSE},
        {"debug", 0, LOOM_LOG_DEBUG},      {"debug5", 2, LOOM_LOG_DEBUG2},
        {"nonsense", 1, LOOM_LOG_VERBOSE}, {"quiet", 0, LOOM_LOG_QUIET},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(loom_daemon_level(cases[i].conf, cases[i].verbose), cases[i].level);
}

static void test_daemon_pidfile(void **state)
{
    char path[] = "/tmp/loom-test-pidfile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    loom_daemon_pidfile(path);
    loom_daemon_pidfile(NULL);
    loom_daemon_pidfile("/nonexistent-dir/x.pid");
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    int pid = 0;
    assert_int_equal(fscanf(fp, "%d", &pid), 1);
    fclose(fp);
    unlink(path);
    assert_int_equal(pid, (int)getpid());
}

static void test_daemon_beside(void **state)
{
    static const struct {
        const char *path, *name, *out;
    } cases[] = {
        {"/etc/slurm/slurm.conf", "slurm.key", "/etc/slurm/slurm.key"},
        {"slurm.conf", "gres.conf", "./gres.conf"},
        {"/slurm.conf", "x", "//x"},
        {"/a/b/", "c", "/a/c"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = loom_daemon_beside(cases[i].path, cases[i].name);
        assert_string_equal(s, cases[i].out);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon_args),   cmocka_unit_test(test_daemon_args_plain),
        cmocka_unit_test(test_daemon_level),  cmocka_unit_test(test_daemon_pidfile),
        cmocka_unit_test(test_daemon_beside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

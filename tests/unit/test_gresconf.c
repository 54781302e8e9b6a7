/* test_gresconf.c - gres.conf: the seed file against the seed slurm.conf, fake
 * tty GPUs, node-scoped lines, bad files and texts with file:line messages,
 * count mismatches. Runs in tests/unit. */
#include "common/conf.h"
#include "common/err.h"
#include "common/gresconf.h"
#include "common/sbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_CONF "../../examples/lambda/slurm.conf"
#define SEED_GRES "../../examples/lambda/gres.conf"

static void expect_msg(const char *msg, const char *want)
{
    if (!strstr(msg, want))
        fail_msg("message '%s' lacks '%s'", msg, want);
}

static loom_conf_t *seed_conf(void)
{
    loom_conf_t *c = NULL;
    loom_err_t err = {0};
    if (loom_conf_load(SEED_CONF, &c, &err) != 0)
        fail_msg("%s", err.msg);
    return c;
}

static loom_gresconf_t *gres_ok(const char *path)
{
    loom_gresconf_t *g = NULL;
    loom_err_t err = {0};
    if (loom_gresconf_load(path, &g, &err) != 0)
        fail_msg("%s", err.msg);
    return g;
}

/* Devices of node: expects count devices named gpu:type, files prefix0..N-1. */
static void check_node(const loom_gresconf_t *g, const loom_conf_t *c, const char *node,
                       const char *type, const char *prefix, const char *cores)
{
    loom_gres_devlist_t dl;
    loom_err_t err = {0};
    loom_strv_t warn = LOOM_STRV_INIT;
    const loom_conf_node_t *n = loom_conf_find_node(c, node);
    assert_non_null(n);
    if (loom_gresconf_node_devices(g, c, n, &dl, &warn, &err) != 0)
        fail_msg("%s: %s", node, err.msg);
    assert_int_equal(dl.n, 8);
    for (size_t i = 0; i < dl.n; i++) {
        char file[64];
        snprintf(file, sizeof(file), "%s%zu", prefix, i);
        assert_string_equal(dl.v[i].name, "gpu");
        assert_string_equal(dl.v[i].type, type);
        assert_int_equal(dl.v[i].index, i);
        assert_string_equal(dl.v[i].file, file);
        assert_int_equal(dl.v[i].count, 1);
        if (cores)
            assert_string_equal(dl.v[i].cores, cores);
    }
    assert_int_equal(warn.n, 0);
    loom_strv_free(&warn);
    loom_gres_devlist_free(&dl);
}

static void test_seed(void **state)
{
    loom_conf_t *c = seed_conf();
    loom_gresconf_t *g = gres_ok(SEED_GRES);
    assert_int_equal(g->autodetect, LOOM_GRES_AUTODETECT_NVML);
    assert_int_equal(g->n_lines, 2);
    assert_int_equal(g->lines[0].lineno, 3);
    assert_string_equal(g->lines[0].type, "h100");
    assert_int_equal(g->lines[0].files.n, 8);
    assert_int_equal(g->lines[0].count, 8);
    assert_string_equal(g->lines[1].cores, "32-63");
    loom_err_t err = {0};
    assert_int_equal(loom_gresconf_check(g, c, NULL, &err), 0);
    for (size_t i = 0; i < c->n_nodes; i++)
        check_node(g, c, c->nodes[i].name, i < 16 ? "h100" : "h200", "/dev/nvidia",
                   i < 16 ? "0-31" : "32-63");
    loom_gres_devlist_t dl;
    assert_int_equal(loom_gresconf_node_devices(g, c, &c->nodes[0], &dl, NULL, &err), 0);
    assert_int_equal(dl.autodetect, LOOM_GRES_AUTODETECT_NVML);
    loom_gres_devlist_free(&dl);
    loom_gresconf_destroy(g);
    loom_conf_destroy(c);
}

static void test_tty_and_scoped(void **state)
{
    loom_conf_t *c = seed_conf();
    loom_gresconf_t *g = gres_ok("conf/gres_tty.conf");
    assert_int_equal(g->autodetect, LOOM_GRES_AUTODETECT_OFF);
    check_node(g, c, "lambda-gpu-003", "h100", "/dev/tty", "0-31");
    check_node(g, c, "lambda-gpu-032", "h200", "/dev/tty", "32-63");
    loom_gresconf_destroy(g);

    g = gres_ok("conf/gres_node_scoped.conf");
    loom_err_t err = {0};
    assert_int_equal(loom_gresconf_check(g, c, NULL, &err), 0);
    check_node(g, c, "lambda-gpu-001", "h100", "/dev/nvidia", NULL);
    check_node(g, c, "lambda-gpu-002", "h100", "/dev/nvidia", NULL);
    check_node(g, c, "lambda-gpu-020", "h200", "/dev/nvidia", NULL);
    loom_gres_devlist_t dl;
    assert_int_equal(loom_gresconf_node_devices(g, c, &c->nodes[0], &dl, NULL, &err), 0);
    assert_string_equal(dl.v[0].cores, "0-7");
    assert_string_equal(dl.v[3].cores, "8-31");
    assert_string_equal(dl.v[7].cores, "32-63");
    loom_gres_devlist_free(&dl);
    loom_gresconf_destroy(g);
    loom_conf_destroy(c);
}

static void test_bad_files(void **state)
{
    static const struct {
        const char *file;
        const char *msg;
        int stage; /* 0: load, 1: check, 2: node devices */
    } cases[] = {
        {"conf/gres_bad_key.conf",
         "conf/gres_bad_key.conf:1: unknown key 'Fiel', did you mean File", 0},
        {"conf/gres_bad_count.conf",
         "conf/gres_bad_count.conf:1: Count=8 does not match the 4 file(s) of "
         "File=/dev/nvidia[0-3]",
         0},
        {"conf/gres_bad_autodetect.conf",
         "conf/gres_bad_autodetect.conf:1: invalid AutoDetect value 'cuda'", 0},
        {"conf/gres_not_in_types.conf",
         "conf/gres_not_in_types.conf:3: GRES 'mps' is not listed in GresTypes", 1},
        {"conf/gres_count_mismatch.conf",
         "conf/gres_count_mismatch.conf:2: node lambda-gpu-001: gres.conf gives 4 gpu:h100 but "
         "slurm.conf Gres= says 8",
         2},
        {"conf/gres_bad_cores.conf",
         "conf/gres_bad_cores.conf:1: Cores=0-99 is outside node lambda-gpu-001, which has 64 "
         "cores",
         2},
        {"conf/no_such_gres.conf", "cannot open conf/no_such_gres.conf", 0},
    };
    loom_conf_t *c = seed_conf();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_gresconf_t *g = NULL;
        loom_err_t err = {0};
        int rc = loom_gresconf_load(cases[i].file, &g, &err);
        if (cases[i].stage > 0 && rc == 0)
            rc = loom_gresconf_check(g, c, NULL, &err);
        for (size_t n = 0; cases[i].stage > 1 && rc == 0 && n < c->n_nodes; n++) {
            loom_gres_devlist_t dl;
            rc = loom_gresconf_node_devices(g, c, &c->nodes[n], &dl, NULL, &err);
            if (rc == 0)
                loom_gres_devlist_free(&dl);
        }
        if (rc >= 0)
            fail_msg("%s passed", cases[i].file);
        expect_msg(err.msg, cases[i].msg);
        loom_gresconf_destroy(g);
    }
    loom_conf_destroy(c);
}

static void test_bad_texts(void **state)
{
    static const struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"Type=a100 File=/dev/nvidia0\n", "g.conf:1: Name= is required"},
        {"\nName=gpu File=/dev/nvidia[0-\n", "g.conf:2: invalid File value '/dev/nvidia[0-'"},
        {"Name=gpu File=/dev/nvidia[0-7] MultipleFiles=/dev/x\n",
         "g.conf:1: File and MultipleFiles are mutually exclusive"},
        {"Name=gpu Cores=7-3\n", "g.conf:1: invalid Cores value '7-3'"},
        {"Name=gpu Cores=0-3,2\n", "invalid Cores value '0-3,2'"},
        {"Name=gpu Cores=a\n", "invalid Cores value 'a'"},
        {"Name=gpu Count=lots\n", "g.conf:1: invalid Count value 'lots'"},
        {"Name=gpu Flags=gpu_env\n", "g.conf:1: invalid Flags value 'gpu_env'"},
        {"Name=gpu Links=1,x\n", "invalid Links value '1,x'"},
        {"Name=gpu File=/dev/nvidia[0-1] Links=-1,1\n", "Links= needs a line with a single device"},
        {"NodeName=n[1- Name=gpu\n", "g.conf:1: invalid NodeName value 'n[1-'"},
        {"Name=gpu File=\n", "g.conf:1: File= needs a value"},
        {"Include x.conf\n", "g.conf:1: Include is not allowed here"},
        {"Name=gpu File=/dev/nvidia[0-2000]\n", "more than 1024 files"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_gresconf_t *g = NULL;
        loom_err_t err = {0};
        if (loom_gresconf_load_buffer("g.conf", cases[i].text, strlen(cases[i].text), &g, &err) >=
            0)
            fail_msg("case %zu loaded: %s", i, cases[i].text);
        assert_null(g);
        expect_msg(err.msg, cases[i].msg);
    }
}

/* Node-level resolution against small slurm.confs. */
static void test_resolution(void **state)
{
    static const struct {
        const char *conf; /* node lines */
        const char *gres;
        const char *node;
        int rc;          /* 0 or error */
        size_t devices;  /* on success */
        const char *msg; /* error or warning substring */
    } cases[] = {
        /* untyped Gres= takes typed lines of the same name */
        {"NodeName=n1 Gres=gpu:2\n",
         "Name=gpu Type=a100 File=/dev/tty0\nName=gpu Type=v100 "
         "File=/dev/tty1\n",
         "n1", 0, 2, NULL},
        /* typed Gres= does not take an untyped line (as Slurm): 0 != 2 */
        {"NodeName=n1 Gres=gpu:a100:2\n", "Name=gpu File=/dev/tty[0-1]\n", "n1", -1, 0,
         "s.conf:4: node n1: gres.conf gives 0 gpu:a100 but slurm.conf Gres= says 2"},
        /* two types on one node, index runs per name */
        {"NodeName=n1 Gres=gpu:a100:1,gpu:v100:2\n",
         "Name=gpu Type=v100 File=/dev/tty[1-2]\nName=gpu Type=a100 File=/dev/tty0\n", "n1", 0, 3,
         NULL},
        /* count-only GRES and shard counts over files */
        {"NodeName=n1 Gres=gpu:2,shard:8,bandwidth:4G\n",
         "Name=gpu File=/dev/tty[0-1]\nName=shard Count=8 File=/dev/tty[0-1]\n"
         "Name=bandwidth Count=4G Flags=CountOnly\n",
         "n1", 0, 5, NULL},
        /* no gres.conf line for a count-only GRES: slurm.conf's count stands */
        {"NodeName=n1 Gres=bandwidth:10\n", "", "n1", 0, 1, NULL},
        /* GPUs without File and without AutoDetect */
        {"NodeName=n1 Gres=gpu:2\n", "", "n1", -1, 0, "File= is required for GPUs"},
        /* ... but with AutoDetect they would be detected */
        {"NodeName=n1 Gres=gpu:2\n", "AutoDetect=nvml\n", "n1", 0, 1, NULL},
        /* node-scoped line for a GRES the node lacks: warning */
        {"NodeName=n[1-2] Gres=gpu:a:1\n",
         "Name=gpu Type=a File=/dev/tty0\nNodeName=n2 Name=gpu Type=x File=/dev/tty1\n", "n2", 0, 1,
         "g.conf:2: node n2 has no GRES gpu:x in slurm.conf; line ignored"},
        /* node-scoped AutoDetect=off beats the global nvml */
        {"NodeName=n1 Gres=gpu:1\n", "AutoDetect=nvml\nNodeName=n1 AutoDetect=off\n", "n1", -1, 0,
         "File= is required"},
        {"NodeName=n1 Gres=gpu:2 CPUs=8\n", "Name=gpu File=/dev/tty[0-1] Cores=0-8\n", "n1", -1, 0,
         "Cores=0-8 is outside node n1, which has 8 cores (0-7)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addf(&sb, "ClusterName=t\nSlurmctldHost=h\nGresTypes=gpu,shard,bandwidth\n%s",
                       cases[i].conf);
        loom_conf_t *c = NULL;
        loom_gresconf_t *g = NULL;
        loom_err_t err = {0};
        assert_int_equal(loom_conf_load_buffer("s.conf", loom_sbuf_str(&sb), sb.len, &c, &err), 0);
        if (loom_gresconf_load_buffer("g.conf", cases[i].gres, strlen(cases[i].gres), &g, &err))
            fail_msg("case %zu: %s", i, err.msg);
        loom_gres_devlist_t dl;
        loom_strv_t warn = LOOM_STRV_INIT;
        int rc = loom_gresconf_node_devices(g, c, loom_conf_find_node(c, cases[i].node), &dl, &warn,
                                            &err);
        if ((rc < 0) != (cases[i].rc < 0))
            fail_msg("case %zu: rc %d (%s)", i, rc, err.msg);
        if (rc == 0) {
            assert_int_equal(dl.n, cases[i].devices);
            if (cases[i].msg)
                expect_msg(warn.n ? warn.v[0] : "", cases[i].msg);
            else
                assert_int_equal(warn.n, 0);
            loom_gres_devlist_free(&dl);
        } else {
            expect_msg(err.msg, cases[i].msg);
        }
        loom_strv_free(&warn);
        loom_gresconf_destroy(g);
        loom_conf_destroy(c);
        loom_sbuf_free(&sb);
    }
}

static void test_indexes_and_counts(void **state)
{
    const char *conf = "ClusterName=t\nSlurmctldHost=h\nGresTypes=gpu,shard\n"
                       "NodeName=n1 Gres=gpu:a100:1,gpu:v100:2,shard:10\n";
    const char *gres = "Name=gpu Type=v100 File=/dev/tty[1-2]\nName=gpu Type=a100 "
                       "File=/dev/tty0\nName=shard Count=10 File=/dev/tty[0-2]\n";
    loom_conf_t *c = NULL;
    loom_gresconf_t *g = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_conf_load_buffer("s.conf", conf, strlen(conf), &c, &err), 0);
    assert_int_equal(loom_gresconf_load_buffer("g.conf", gres, strlen(gres), &g, &err), 0);
    loom_gres_devlist_t dl;
    assert_int_equal(loom_gresconf_node_devices(g, c, &c->nodes[0], &dl, NULL, &err), 0);
    /* Gres= order (a100 first), each entry's lines in file order. */
    assert_int_equal(dl.n, 6);
    assert_string_equal(dl.v[0].type, "a100");
    assert_string_equal(dl.v[0].file, "/dev/tty0");
    assert_int_equal(dl.v[0].index, 0);
    assert_string_equal(dl.v[1].file, "/dev/tty1");
    assert_int_equal(dl.v[2].index, 2);
    assert_string_equal(dl.v[3].name, "shard");
    assert_int_equal(dl.v[3].index, 0);
    assert_int_equal(dl.v[3].count + dl.v[4].count + dl.v[5].count, 10);
    assert_int_equal(dl.v[3].count, 4);
    loom_gres_devlist_free(&dl);
    loom_gresconf_destroy(g);
    loom_conf_destroy(c);
}

static void test_syntax(void **state)
{
    const char *text = "# comment\nautodetect=off\n"
                       "nodename=n[1-2] name=gpu type=a100 files=/dev/nvidia[0-1],/dev/nvidia3 "
                       "cpus=0-3 \\\n  flags=nvidia_gpu_env,CountOnly\n"
                       "Name=gpu MultipleFiles=/dev/nvidia-caps/nvidia-cap[1-2],/dev/nvidia4\n"
                       "Name=mps Count=1K\n";
    loom_gresconf_t *g = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_gresconf_load_buffer("g.conf", text, strlen(text), &g, &err), 0);
    assert_int_equal(g->n_lines, 3);
    const loom_gresconf_line_t *l = &g->lines[0];
    assert_int_equal(l->lineno, 3);
    assert_string_equal(l->nodes, "n[1-2]");
    assert_int_equal(l->files.n, 3);
    assert_string_equal(l->files.v[2], "/dev/nvidia3");
    assert_int_equal(l->count, 3);
    assert_string_equal(l->cores, "0-3");
    assert_int_equal(l->flags, LOOM_GRESF_NVIDIA_GPU_ENV | LOOM_GRESF_COUNT_ONLY);
    assert_true(g->lines[1].multiple_files);
    assert_int_equal(g->lines[1].files.n, 3);
    assert_string_equal(g->lines[1].files.v[1], "/dev/nvidia-caps/nvidia-cap2");
    assert_int_equal(g->lines[1].count, 1);
    assert_int_equal(g->lines[2].count, 1024);
    assert_string_equal(loom_gres_autodetect_name(LOOM_GRES_AUTODETECT_NVIDIA), "nvidia");
    loom_gresconf_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),       cmocka_unit_test(test_tty_and_scoped),
        cmocka_unit_test(test_bad_files),  cmocka_unit_test(test_bad_texts),
        cmocka_unit_test(test_resolution), cmocka_unit_test(test_indexes_and_counts),
        cmocka_unit_test(test_syntax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

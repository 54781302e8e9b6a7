/* test_conf.c - slurm.conf: the seed config, bad files with their file:line
 * messages, syntax, CPU topology derivation (checked against a Slurm 22.05
 * slurmctld), defaults, legacy keys and printing. Runs in tests/unit. */
#include "common/conf.h"
#include "common/conf_keys.h"
#include "common/err.h"
#include "common/sbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SEED_CONF "../../examples/lambda/slurm.conf"

static const char base[] = "ClusterName=test\nSlurmctldHost=head\n";

/* Load base + text from memory; asserts success. */
static loom_conf_t *load_ok(const char *text)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, base);
    loom_sbuf_add(&sb, text);
    loom_conf_t *c = NULL;
    loom_err_t err = {0};
    int rc = loom_conf_load_buffer("t.conf", loom_sbuf_str(&sb), sb.len, &c, &err);
    if (rc != 0)
        fail_msg("load failed: %s\n--- text:\n%s", err.msg, loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return c;
}

static void expect_msg(const char *msg, const char *want)
{
    if (!strstr(msg, want))
        fail_msg("message '%s' lacks '%s'", msg, want);
}

static void test_seed(void **state)
{
    loom_conf_t *c = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_conf_load(SEED_CONF, &c, &err), 0);
    assert_string_equal(c->cluster_name, "lambda-cluster");
    assert_int_equal(c->n_ctld_hosts, 1);
    assert_string_equal(c->ctld_hosts[0].name, "lambda-head-node");
    assert_int_equal(c->slurmctld_port, 6817);
    assert_int_equal(c->slurmd_port, 6818);
    assert_string_equal(c->slurm_user, "slurm");
    assert_string_equal(c->select_type, "select/cons_tres");
    assert_int_equal(c->select_type_parameters, LOOM_CR_CORE | LOOM_CR_MEMORY);
    assert_string_equal(c->scheduler_type, "sched/backfill");
    assert_string_equal(c->accounting_storage_type, "accounting_storage/slurmdbd");
    assert_string_equal(c->accounting_storage_host, "lambda-head-node");
    assert_int_equal(c->max_job_count, 10000);
    assert_int_equal(c->max_array_size, 10000);
    assert_int_equal(c->max_step_count, 40000);
    assert_int_equal(c->max_tasks_per_node, 64);
    assert_int_equal(c->slurmctld_timeout, 120);
    assert_int_equal(c->slurmd_timeout, 300);
    assert_int_equal(c->kill_wait, 30);
    assert_int_equal(c->min_job_age, 300);
    assert_int_equal(c->inactive_limit, 0);
    assert_int_equal(c->gres_types.n, 1);
    assert_string_equal(c->gres_types.v[0], "gpu");
    assert_string_equal(loom_conf_get(c, "jobacctgatherfrequency"), "30");
    assert_int_equal(c->warnings.n, 0);

    assert_int_equal(c->n_nodes, 32);
    assert_int_equal(c->n_nodecfgs, 2);
    for (size_t i = 0; i < c->n_nodes; i++) {
        const loom_conf_node_t *n = &c->nodes[i];
        char name[32];
        snprintf(name, sizeof(name), "lambda-gpu-%03zu", i + 1);
        assert_string_equal(n->name, name);
        assert_string_equal(n->addr, name);
        assert_int_equal(n->port, 6818);
        assert_int_equal(n->cfg->cpus, 64);
        assert_int_equal(n->cfg->sockets, 2);
        assert_int_equal(n->cfg->cores_per_socket, 32);
        assert_int_equal(n->cfg->threads_per_core, 1);
        assert_int_equal(n->cfg->real_memory, 515000);
        assert_int_equal(n->cfg->gres.n, 1);
        assert_string_equal(n->cfg->gres.v[0].name, "gpu");
        assert_string_equal(n->cfg->gres.v[0].type, i < 16 ? "h100" : "h200");
        assert_int_equal(n->cfg->gres.v[0].count, 8);
        assert_int_equal(n->cfg->features.n, 1);
        assert_string_equal(n->cfg->features.v[0], i < 16 ? "h100" : "h200");
        assert_int_equal(n->state, LOOM_CONF_NODE_UNKNOWN);
    }
    assert_ptr_equal(loom_conf_find_node(c, "lambda-gpu-017"), &c->nodes[16]);
    assert_null(loom_conf_find_node(c, "lambda-gpu-033"));

    assert_int_equal(c->n_parts, 3);
    const loom_conf_part_t *gpu = loom_conf_find_part(c, "gpu");
    const loom_conf_part_t *inter = loom_conf_find_part(c, "interactive");
    const loom_conf_part_t *batch = loom_conf_find_part(c, "batch");
    assert_ptr_equal(loom_conf_default_part(c), gpu);
    assert_int_equal(gpu->n_nodes, 32);
    assert_int_equal(gpu->max_time, 7 * 86400);
    assert_int_equal(inter->max_time, 2 * 3600);
    assert_int_equal(inter->n_nodes, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(inter->node_idx[i], i);
    assert_false(inter->is_default);
    assert_int_equal(batch->n_nodes, 28);
    assert_int_equal(batch->node_idx[0], 4);
    assert_int_equal(batch->max_time, 7 * 86400);
    assert_int_equal(gpu->state, LOOM_CONF_PART_UP);
    assert_int_equal(gpu->default_time, LOOM_CONF_NOT_SET);
    assert_int_equal(gpu->max_nodes, LOOM_CONF_UNLIMITED);
    assert_int_equal(gpu->priority_tier, 1);
    assert_int_equal(gpu->oversubscribe, LOOM_CONF_OVERSUB_NO);
    loom_conf_destroy(c);
}

static void test_bad_files(void **state)
{
    static const struct {
        const char *file;
        const char *msg;
    } cases[] = {
        {"conf/typo_key.conf",
         "conf/typo_key.conf:3: unknown key 'SlurmctlHost', did you mean SlurmctldHost?"},
        {"conf/bad_time.conf",
         "conf/bad_time.conf:5: invalid MaxTime value '7-00:00:0x' for partition gpu"},
        {"conf/unknown_node.conf", "conf/unknown_node.conf:5: partition q: unknown node 'n5'"},
        {"conf/missing_cluster.conf", "conf/missing_cluster.conf: ClusterName is required"},
        {"conf/missing_ctld.conf", "conf/missing_ctld.conf: SlurmctldHost is required"},
        {"conf/include_loop.conf", "conf/include_loop_b.conf:2: Include loop"},
        {"conf/gres_types.conf",
         "conf/gres_types.conf:3: GRES 'gpu' of node n[1-4] is not listed in GresTypes"},
        {"conf/dup_node.conf", "conf/dup_node.conf:4: duplicate node name 'n4' (first defined at "
                               "conf/dup_node.conf:3)"},
        {"conf/two_defaults.conf", "conf/two_defaults.conf:5: partition q is Default=YES but so "
                                   "is p"},
        {"conf/bad_node_key.conf",
         "conf/bad_node_key.conf:3: unknown key 'Featurez' on NodeName line, did you mean "
         "Features"},
        {"conf/bad_memory.conf",
         "conf/bad_memory.conf:4: invalid RealMemory value 'lots' for node n[1-4]"},
        {"conf/bad_value.conf",
         "conf/bad_value.conf:4: invalid SelectTypeParameters value 'CR_Core_Memmory' (did you "
         "mean CR_Core_Memory?)"},
        {"conf/no_such_file.conf", "cannot open conf/no_such_file.conf"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_conf_t *c = (loom_conf_t *)0x1;
        loom_err_t err = {0};
        int rc = loom_conf_load(cases[i].file, &c, &err);
        if (rc >= 0)
            fail_msg("%s loaded", cases[i].file);
        assert_ptr_equal(c, (loom_conf_t *)0x1); /* untouched on error */
        expect_msg(err.msg, cases[i].msg);
    }
}

static void test_include(void **state)
{
    /* A glob and a %c include, relative to the including file. */
    loom_conf_t *g = NULL;
    loom_err_t gerr = {0};
    if (loom_conf_load("conf/include_glob.conf", &g, &gerr) != 0)
        fail_msg("%s", gerr.msg);
    assert_int_equal(g->n_nodes, 4);
    assert_int_equal(g->files.n, 4);
    assert_string_equal(g->files.v[1], "conf/include_glob.d/a.conf");
    assert_string_equal(g->files.v[3], "conf/globtest_parts.conf");
    assert_int_equal(g->parts[0].n_nodes, 4);
    assert_int_equal(g->warnings.n, 2); /* lower-cased name, pattern matching nothing */
    loom_conf_destroy(g);

    loom_conf_t *c = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_conf_load("conf/include_main.conf", &c, &err), 0);
    assert_int_equal(c->n_nodes, 4);
    assert_int_equal(c->nodes[0].cfg->real_memory, 4096);
    assert_int_equal(c->files.n, 2);
    assert_string_equal(c->files.v[1], "conf/include_nodes.conf");
    assert_int_equal(c->nodes[0].cfg->src.lineno, 1);
    assert_string_equal(c->nodes[0].cfg->src.file, "conf/include_nodes.conf");
    assert_int_equal(c->parts[0].n_nodes, 4);
    loom_conf_destroy(c);
}

/* Bad texts given in memory: expected "t.conf:<line>: ..." substrings. */
static void test_bad_buffers(void **state)
{
    static const struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"KillWait=abc\n", "t.conf:3: invalid KillWait value 'abc' (expected 0 to 65533)"},
        {"KillWait=70000\n", "t.conf:3: invalid KillWait value '70000'"},
        {"SlurmctldPort=0\n", "t.conf:3: invalid SlurmctldPort value '0'"},
        {"SlurmctldPort=6818-6817\n", "invalid SlurmctldPort value '6818-6817'"},
        {"Include other.conf\n", "t.conf:3: Include is not allowed here"},
        {"NodeName=n1\nPartitionName=p Nodes=n1 Default=maybe\n",
         "t.conf:4: invalid Default value 'maybe' for partition p (expected YES or NO)"},
        {"NodeName=n1\nPartitionName=p Nodes=n1 State=OPEN\n",
         "t.conf:4: invalid State value 'OPEN' for partition p (expected one of UP, DOWN"},
        {"NodeName=n1 Reason=\"open quote\n", "t.conf:3: unterminated quoted value for key "
                                              "'Reason'"},
        {"KillWait=30 NodeName=n1\n", "t.conf:3: NodeName= must start its line"},
        {"CPUs=4\n", "t.conf:3: key 'CPUs' belongs on a NodeName line"},
        {"MaxTime=4\n", "t.conf:3: key 'MaxTime' belongs on a PartitionName line"},
        {"NodeName=n1 KillWait=3\n", "t.conf:3: key 'KillWait' is not valid on a NodeName line"},
        {"NodeName=n1 Gres=gpu:x:y:z\n", "t.conf:3: invalid Gres value 'gpu:x:y:z' for node n1"},
        {"NodeName=n[1-\n", "t.conf:3: invalid NodeName value 'n[1-'"},
        {"NodeName=ALL\n", "t.conf:3: NodeName=ALL is reserved"},
        {"NodeName=n[1-2] NodeAddr=a[1-3]\n", "t.conf:3: NodeAddr 'a[1-3]' gives 3 names but"},
        {"NodeName=n[1-3] NodeHostname=a[1-2]\n", "NodeHostname 'a[1-2]' gives 2 names but"},
        {"NodeName=n[1-2] Port=[7001-7003]\n", "t.conf:3: invalid Port value '[7001-7003]'"},
        {"NodeName=DEFAULT CPUs=x\n", "t.conf:3: invalid CPUs value 'x' for NodeName=DEFAULT"},
        {"NodeName=n1 CPUs=0\n", "invalid CPUs value '0' for node n1 (expected 1 to 65533)"},
        {"NodeName=n1\nNodeName=n1\n", "t.conf:4: duplicate node name 'n1'"},
        {"NodeName=n1\nPartitionName=p Nodes=n1\nPartitionName=p Nodes=n1\n",
         "t.conf:5: duplicate partition 'p' (first at t.conf:4)"},
        {"NodeName=n1\nPartitionName=p Nodes=n1 OverSubscribe=NO:4\n",
         "invalid OverSubscribe value 'NO:4' for partition p"},
        {"NodeName=n1\nPartitionName=p Nodes=n1 MaxTime=UNLIMITEDX\n",
         "invalid MaxTime value 'UNLIMITEDX' for partition p"},
        {"NodeName=n1\nDownNodes=n2 State=DOWN\n", "t.conf:4: DownNodes: unknown node 'n2'"},
        {"FirstJobId=100\nMaxJobId=50\n", "FirstJobId 100 is larger than MaxJobId 50"},
        {"DefMemPerCPU=100\nDefMemPerNode=1000\n",
         "DefMemPerCPU and DefMemPerNode are mutually exclusive"},
        {"ControlMachine=h\n", "t.conf:3: SlurmctldHost and the legacy ControlMachine are both"},
        {"SlurmctldHost=a(b\n", "invalid SlurmctldHost value 'a(b'"},
        {"SelectType=select/magic\n", "invalid SelectType value 'select/magic' (expected one of "
                                      "select/cons_tres"},
        {"PreemptMode=SUSPEND,GNAG\n",
         "invalid PreemptMode value 'SUSPEND,GNAG' (did you mean GANG?)"},
        {"NodeName=n1 Gres=gpu:1\nGresTypes=mps\n", "GRES 'gpu' of node n1 is not listed"},
        {"NodeName=n1\nPartitionName=p Nodes=n1\nPartitionName=DEFAULT Hiddn=YES\n",
         "t.conf:5: unknown key 'Hiddn' on PartitionName line, did you mean Hidden"},
        {"Nodename\n", "t.conf:3: expected Key=Value, found 'Nodename'"},
        {"NodeName=\n", "t.conf:3: NodeName= needs a value"},
        {"Include %c.conf\n", "Include is not allowed here"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_add(&sb, base);
        loom_sbuf_add(&sb, cases[i].text);
        loom_conf_t *c = NULL;
        loom_err_t err = {0};
        int rc = loom_conf_load_buffer("t.conf", loom_sbuf_str(&sb), sb.len, &c, &err);
        if (rc >= 0)
            fail_msg("case %zu loaded: %s", i, cases[i].text);
        assert_null(c);
        expect_msg(err.msg, cases[i].msg);
        loom_sbuf_free(&sb);
    }
}

static void test_missing_required(void **state)
{
    static const struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"SlurmctldHost=h\n", "t.conf: ClusterName is required"},
        {"ClusterName=x\n", "t.conf: SlurmctldHost is required"},
        {"ClusterName=abcdefghijabcdefghijabcdefghijabcdefghijK\nSlurmctldHost=h\n",
         "t.conf:1: ClusterName 'abcdefghijabcdefghijabcdefghijabcdefghijk' is longer than 40"},
        {"", "ClusterName is required"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_conf_t *c = NULL;
        loom_err_t err = {0};
        assert_true(
            loom_conf_load_buffer("t.conf", cases[i].text, strlen(cases[i].text), &c, &err) < 0);
        expect_msg(err.msg, cases[i].msg);
    }
}

/* CPU topology: what a Slurm 22.05 slurmctld derived from each NodeName line. */
static void test_topology(void **state)
{
    static const struct {
        const char *fields;
        int64_t cpus, sockets, cores, threads, boards;
        int warns;
    } cases[] = {
        {"CPUs=8", 8, 8, 1, 1, 1, 0},
        {"Sockets=2 CoresPerSocket=4 ThreadsPerCore=2", 16, 2, 4, 2, 1, 0},
        {"CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2", 8, 2, 4, 2, 1, 0},
        {"CPUs=10 Sockets=2 CoresPerSocket=4", 8, 2, 4, 1, 1, 1},
        {"Boards=2 SocketsPerBoard=2 CoresPerSocket=4", 16, 4, 4, 1, 2, 0},
        {"SocketsPerBoard=2 CoresPerSocket=4", 8, 2, 4, 1, 1, 0},
        {"CPUs=16 CoresPerSocket=4", 16, 4, 4, 1, 1, 0},
        {"CPUs=16 ThreadsPerCore=2", 16, 8, 1, 2, 1, 0},
        {"Sockets=2 SocketsPerBoard=3", 3, 3, 1, 1, 1, 1},
        {"CPUs=16 Boards=2", 16, 16, 1, 1, 2, 0},
        {"Boards=2 Sockets=4 CoresPerSocket=2", 8, 4, 2, 1, 2, 0},
        {"CPUs=12 CoresPerSocket=8", 8, 1, 8, 1, 1, 1},
        {"Procs=4", 4, 4, 1, 1, 1, 0},
        {"Boards=2 CoresPerSocket=4", 8, 2, 4, 1, 2, 0},
        {"CPUs=2 CoresPerSocket=4", 4, 1, 4, 1, 1, 1},
        {"CPUs=4 SocketsPerBoard=2 CoresPerSocket=2", 4, 2, 2, 1, 1, 0},
        {"", 1, 1, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "NodeName=n1 %s\n", cases[i].fields);
        loom_conf_t *c = load_ok(text);
        const loom_conf_nodecfg_t *n = c->nodes[0].cfg;
        if (n->cpus != cases[i].cpus || n->sockets != cases[i].sockets ||
            n->cores_per_socket != cases[i].cores || n->threads_per_core != cases[i].threads ||
            n->boards != cases[i].boards || (int)c->warnings.n != cases[i].warns)
            fail_msg("'%s': got CPUs=%lld S=%lld C=%lld T=%lld B=%lld warnings=%zu",
                     cases[i].fields, (long long)n->cpus, (long long)n->sockets,
                     (long long)n->cores_per_socket, (long long)n->threads_per_core,
                     (long long)n->boards, c->warnings.n);
        loom_conf_destroy(c);
    }
}

static void test_syntax(void **state)
{
    loom_conf_t *c = load_ok("# comment\n"
                             "  killwait = 45   # trailing comment\n"
                             "MinJobAge=100 MessageTimeout=20\n"
                             "nodename=n[1-2] \\\n"
                             "   cpus=4 \\\n"
                             "   Feature=a100,nvlink Reason=\"down # for maint\"\n"
                             "NodeName=n3 Reason=x\\#y Weight=5\n"
                             "partitionname=p nodes=n[1-3] default=yes maxtime=1-12\r\n");
    assert_int_equal(c->kill_wait, 45);
    assert_int_equal(c->min_job_age, 100);
    assert_int_equal(c->message_timeout, 20);
    assert_int_equal(c->n_nodes, 3);
    const loom_conf_nodecfg_t *n = c->nodes[0].cfg;
    assert_int_equal(n->cpus, 4);
    assert_int_equal(n->src.lineno, 6);
    assert_int_equal(n->features.n, 2);
    assert_string_equal(n->features.v[1], "nvlink");
    assert_string_equal(n->reason, "down # for maint");
    assert_string_equal(c->nodes[2].cfg->reason, "x#y");
    assert_int_equal(c->nodes[2].cfg->weight, 5);
    assert_int_equal(c->parts[0].max_time, 36 * 3600);
    assert_true(c->parts[0].is_default);
    assert_string_equal(loom_conf_get(c, "KILLWAIT"), "45");
    assert_string_equal(loom_conf_get(c, "SlurmdTimeout"), "300"); /* default */
    assert_null(loom_conf_get(c, "NoSuchKey"));
    assert_null(loom_conf_get(c, "Epilog"));
    assert_true(loom_conf_is_set(c, "killwait"));
    assert_false(loom_conf_is_set(c, "SlurmdTimeout"));
    loom_conf_destroy(c);
}

static void test_defaults_and_records(void **state)
{
    loom_conf_t *c = load_ok(
        "NodeName=DEFAULT CPUs=8 RealMemory=16G Gres=gpu:a100:2\n"
        "NodeName=n[1-2] NodeHostname=h[1-2] NodeAddr=10.0.0.[1-2] Port=[7001-7002]\n"
        "NodeName=DEFAULT CPUs=16\n"
        "NodeName=n3 State=DRAIN Reason=\"bad fan\"\n"
        "NodeSet=bigs Feature=big\n"
        "NodeName=n4 Features=big Gres=\n"
        "GresTypes=gpu,mps\n"
        "DownNodes=n2 State=DOWN Reason=broken\n"
        "PartitionName=DEFAULT MaxTime=1:00:00 State=DOWN\n"
        "PartitionName=a Nodes=n[1-2],bigs Default=YES OverSubscribe=FORCE:2 AllowAccounts=x,y\n"
        "PartitionName=DEFAULT State=UP\n"
        "PartitionName=b Nodes=ALL MaxTime=INFINITE PreemptMode=REQUEUE Shared=EXCLUSIVE\n"
        "PartitionName=c\n");
    assert_int_equal(c->n_nodes, 4);
    assert_string_equal(c->nodes[1].hostname, "h2");
    assert_string_equal(c->nodes[1].addr, "10.0.0.2");
    assert_int_equal(c->nodes[1].port, 7002);
    assert_int_equal(c->nodes[0].cfg->cpus, 8);
    assert_int_equal(c->nodes[0].cfg->real_memory, 16384);
    assert_int_equal(c->nodes[2].cfg->cpus, 16);
    assert_int_equal(c->nodes[2].cfg->gres.n, 1);
    assert_int_equal(c->nodes[3].cfg->gres.n, 0);
    assert_int_equal(c->nodes[2].state, LOOM_CONF_NODE_DRAIN);
    assert_string_equal(c->nodes[2].reason, "bad fan");
    assert_int_equal(c->nodes[1].state, LOOM_CONF_NODE_DOWN);
    assert_string_equal(c->nodes[1].reason, "broken");
    assert_int_equal(c->nodes[2].port, 6818);
    const loom_conf_part_t *a = &c->parts[0], *b = &c->parts[1], *pc = &c->parts[2];
    assert_int_equal(a->n_nodes, 3);
    assert_int_equal(a->node_idx[2], 3);
    assert_int_equal(a->state, LOOM_CONF_PART_DOWN);
    assert_int_equal(a->max_time, 3600);
    assert_int_equal(a->oversubscribe, LOOM_CONF_OVERSUB_FORCE);
    assert_int_equal(a->oversubscribe_n, 2);
    assert_int_equal(a->allow_accounts.n, 2);
    assert_false(a->preempt_mode_set);
    assert_int_equal(b->n_nodes, 4);
    assert_int_equal(b->state, LOOM_CONF_PART_UP);
    assert_int_equal(b->max_time, LOOM_CONF_UNLIMITED);
    assert_true(b->preempt_mode_set);
    assert_int_equal(b->preempt_mode, LOOM_PREEMPT_REQUEUE);
    assert_int_equal(b->oversubscribe, LOOM_CONF_OVERSUB_EXCLUSIVE);
    assert_int_equal(pc->n_nodes, 0);
    loom_conf_destroy(c);
}

static void test_global_values(void **state)
{
    loom_conf_t *c = load_ok("SlurmctldHost=backup(10.1.1.2)\n"
                             "SlurmctldPort=6817-6820\n"
                             "PreemptType=preempt/partition_prio\nPreemptMode=suspend,gang\n"
                             "AccountingStorageEnforce=limits,qos\n"
                             "SelectTypeParameters=CR_CPU_Memory,CR_ONE_TASK_PER_CORE\n"
                             "SuspendTime=NONE\nKillWait=10\nKillWait=20\n"
                             "OverTimeLimit=UNLIMITED\nPriorityDecayHalfLife=14-0\n"
                             "DefMemPerCPU=2G\nEnforcePartLimits=YES\nJobRequeue=0\n");
    assert_int_equal(c->n_ctld_hosts, 2);
    assert_string_equal(c->ctld_hosts[0].name, "head");
    assert_string_equal(c->ctld_hosts[0].addr, "head");
    assert_string_equal(c->ctld_hosts[1].name, "backup");
    assert_string_equal(c->ctld_hosts[1].addr, "10.1.1.2");
    assert_int_equal(c->slurmctld_port, 6817);
    assert_int_equal(c->slurmctld_port_count, 4);
    assert_int_equal(c->preempt_mode, LOOM_PREEMPT_SUSPEND | LOOM_PREEMPT_GANG);
    assert_int_equal(c->accounting_storage_enforce,
                     LOOM_ENFORCE_LIMITS | LOOM_ENFORCE_QOS | LOOM_ENFORCE_ASSOCS);
    assert_int_equal(c->select_type_parameters,
                     LOOM_CR_CPU | LOOM_CR_MEMORY | LOOM_CR_ONE_TASK_PER_CORE);
    assert_int_equal(c->suspend_time, LOOM_CONF_NOT_SET);
    assert_int_equal(c->kill_wait, 20);
    assert_int_equal(c->warnings.n, 1);
    expect_msg(
        c->warnings.v[0],
        "t.conf:11: KillWait specified more than once, latest value used (first at t.conf:10)");
    assert_int_equal(c->over_time_limit, LOOM_CONF_UNLIMITED);
    assert_int_equal(c->priority_decay_half_life, 14 * 86400);
    assert_int_equal(c->def_mem_per_cpu, 2048);
    assert_int_equal(c->enforce_part_limits, LOOM_PART_LIMITS_ALL);
    assert_int_equal(c->job_requeue, 0);
    loom_conf_destroy(c);

    c = load_ok("");
    assert_int_equal(c->suspend_time, LOOM_CONF_UNLIMITED);
    assert_int_equal(c->max_job_id, 67043328);
    assert_int_equal(c->first_job_id, 1);
    assert_int_equal(c->max_array_size, 1001);
    assert_int_equal(c->tree_width, 50);
    assert_int_equal(c->priority_decay_half_life, 7 * 86400);
    assert_int_equal(c->priority_calc_period, 300);
    assert_string_equal(c->priority_type, "priority/basic");
    assert_string_equal(c->auth_type, "auth/munge");
    assert_string_equal(c->state_save_location, "/var/spool");
    assert_int_equal(c->preempt_mode, LOOM_PREEMPT_OFF);
    assert_int_equal(c->n_nodes, 0);
    loom_conf_destroy(c);
}

static void test_legacy_and_case(void **state)
{
    const char *text = "ClusterName=Lambda\nControlMachine=h1\nControlAddr=10.0.0.1\n"
                       "BackupController=h2\n";
    loom_conf_t *c = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_conf_load_buffer("t.conf", text, strlen(text), &c, &err), 0);
    assert_string_equal(c->cluster_name, "lambda");
    assert_int_equal(c->warnings.n, 1);
    expect_msg(c->warnings.v[0], "t.conf:1: ClusterName converted to lower case");
    assert_int_equal(c->n_ctld_hosts, 2);
    assert_string_equal(c->ctld_hosts[0].addr, "10.0.0.1");
    assert_string_equal(c->ctld_hosts[1].name, "h2");
    assert_string_equal(c->ctld_hosts[1].addr, "h2");
    loom_conf_destroy(c);
}

/* Every key's default parses, every alias resolves, names are unique per scope. */
static void test_table(void **state)
{
    size_t n = loom_conf_key_count();
    assert_true(n > 250);
    for (size_t i = 0; i < n; i++) {
        const loom_conf_key_t *k = loom_conf_key_at(i);
        loom_err_t err = {0};
        if (k->def && !k->alias_of && loom_conf_key_parse(k, k->def, NULL, NULL, &err) != 0)
            fail_msg("default of %s: %s", k->name, err.msg);
        if (k->alias_of)
            assert_non_null(loom_conf_key_find(k->scope, k->alias_of));
        for (size_t j = i + 1; j < n; j++) {
            const loom_conf_key_t *o = loom_conf_key_at(j);
            if (o->scope == k->scope && strcasecmp(o->name, k->name) == 0)
                fail_msg("%s twice", k->name);
        }
    }
    assert_ptr_equal(loom_conf_key_find(LOOM_CS_NODE, "feature"),
                     loom_conf_key_find(LOOM_CS_NODE, "Features"));
    assert_string_equal(loom_conf_key_suggest(LOOM_CS_GLOBAL, "SlurmctlHost"), "SlurmctldHost");
    assert_string_equal(loom_conf_key_suggest(LOOM_CS_GLOBAL, "kilwait"), "KillWait");
    assert_null(loom_conf_key_suggest(LOOM_CS_GLOBAL, "Zebra"));
}

static void test_print(void **state)
{
    loom_conf_t *c = NULL;
    loom_err_t err = {0};
    assert_int_equal(loom_conf_load(SEED_CONF, &c, &err), 0);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_conf_print(c, &sb);
    const char *s = loom_sbuf_str(&sb);
    static const char *const lines[] = {
        "AccountingStorageEnforce = none\n",
        "AccountingStorageHost   = lambda-head-node\n",
        "AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk,vmem,pages\n",
        "AuthType                = auth/munge\n",
        "BatchStartTimeout       = 10 sec\n",
        "ClusterName             = lambda-cluster\n",
        "DefMemPerNode           = UNLIMITED\n",
        "EnforcePartLimits       = NO\n",
        "EpilogMsgTime           = 2000 usec\n",
        "GresTypes               = gpu\n",
        "JobDefaults             = (null)\nJobFileAppend           = 0\n",
        "KillWait                = 30 sec\n",
        "MaxArraySize            = 10000\n",
        "MaxJobId                = 67043328\n",
        "MaxMemPerNode           = UNLIMITED\n",
        "OverTimeLimit           = 0 min\n",
        "PreemptMode             = OFF\n",
        "PreemptExemptTime       = 00:00:00\n",
        "ResumeRate              = 300 nodes/min\n",
        "SelectTypeParameters    = CR_CORE_MEMORY\n",
        "SlurmctldHost[0]        = lambda-head-node\n",
        "SlurmctldPort           = 6817\n",
        "SuspendTime             = INFINITE\n",
        "TaskPlugin              = task/cgroup\n",
        "UsePam                  = No\n",
        "VSizeFactor             = 0 percent\n",
        "X11Parameters           = (null)\n",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        if (!strstr(s, lines[i]))
            fail_msg("missing line '%s'", lines[i]);
    assert_null(strstr(s, "PriorityWeightAge"));
    assert_null(strstr(s, "ControlMachine"));
    assert_null(strstr(s, "DefMemPerCPU"));
    assert_true(strstr(s, "AccountingStorageBackupHost") == s);
    loom_sbuf_free(&sb);
    loom_conf_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_include),
        cmocka_unit_test(test_bad_buffers),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_topology),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_defaults_and_records),
        cmocka_unit_test(test_global_values),
        cmocka_unit_test(test_legacy_and_case),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_print),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_jobenv.c - the job and step environment (CLI_SPEC §12). */
#include "common/jobenv.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#define N_(a) (sizeof(a) / sizeof((a)[0]))

static void test_jobenv_vector(void **state)
{
    loom_strv_t env = LOOM_STRV_INIT;
    loom_jobenv_set(&env, "A", "1");
    loom_jobenv_set(&env, "AB", "2");
    loom_jobenv_setf(&env, "A", "%d", 3);
    assert_int_equal(env.n, 2);
    assert_string_equal(env.v[0], "A=3");
    assert_string_equal(loom_jobenv_get(&env, "AB"), "2");
    assert_null(loom_jobenv_get(&env, "ABC"));
    assert_null(loom_jobenv_get(&env, "B"));
    loom_jobenv_set(&env, "E", NULL);
    assert_string_equal(loom_jobenv_get(&env, "E"), "");
    loom_jobenv_unset(&env, "A");
    loom_jobenv_unset(&env, "nope");
    assert_int_equal(env.n, 2);
    assert_string_equal(env.v[0], "AB=2");
    assert_null(env.v[2]);
    loom_strv_free(&env);
}

static void test_jobenv_counts(void **state)
{
    static const struct {
        uint32_t v[6];
        size_t n;
        const char *out;
    } cases[] = {
        {{4, 4, 2}, 3, "4(x2),2"},
        {{72, 72, 36}, 3, "72(x2),36"},
        {{1}, 1, "1"},
        {{2, 2, 2, 1}, 4, "2(x3),1"},
        {{1, 2, 1, 1}, 4, "1,2,1(x2)"},
        {{8, 8, 8, 8, 8, 8}, 6, "8(x6)"},
        {{0}, 0, ""},
    };
    for (size_t i = 0; i < N_(cases); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_jobenv_counts(cases[i].v, cases[i].n, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        loom_sbuf_free(&sb);
    }
}

static void test_jobenv_layout(void **state)
{
    static const struct {
        uint32_t cpus[4];
        size_t n;
        uint32_t cpt, ntasks;
        uint32_t want[4];
    } cases[] = {
        {{4, 4}, 2, 1, 3, {2, 1}}, {{4, 4}, 2, 1, 8, {4, 4}}, {{4, 2}, 2, 1, 6, {4, 2}},
        {{4, 2}, 2, 1, 5, {3, 2}}, {{2, 2}, 2, 1, 6, {3, 3}}, /* overcommit: round-robin past the
                                                                 CPUs */
        {{8}, 1, 4, 2, {2}},       {{8, 4}, 2, 4, 3, {2, 1}}, {{1, 1, 1}, 3, 1, 3, {1, 1, 1}},
        {{3, 1}, 2, 2, 2, {1, 1}}, /* a node with fewer CPUs than -c still runs one */
    };
    for (size_t i = 0; i < N_(cases); i++) {
        uint32_t got[4] = {0};
        loom_jobenv_layout(cases[i].cpus, cases[i].n, cases[i].cpt, cases[i].ntasks, got);
        for (size_t k = 0; k < cases[i].n; k++)
            if (got[k] != cases[i].want[k])
                fail_msg("case %zu node %zu: %u tasks, want %u", i, k, got[k], cases[i].want[k]);
    }
    /* Huge counts are computed, not placed one by one. */
    uint32_t big[] = {4, 2}, got[2];
    loom_jobenv_layout(big, 2, 1, UINT32_MAX, got);
    assert_int_equal((uint64_t)got[0] + got[1], UINT32_MAX);
    assert_int_equal(got[0] - got[1], 3); /* 4+2 within the CPUs, then an odd rest */
    uint32_t cpus[] = {8, 8, 3};
    assert_int_equal(loom_jobenv_default_ntasks(cpus, 3, 0), 19);
    assert_int_equal(loom_jobenv_default_ntasks(cpus, 3, 4), 5);
}

/* Render a vector as "A=1 B=2" for comparisons. */
static char *jobenv_join(const loom_strv_t *env)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < env->n; i++)
        loom_sbuf_addf(&sb, "%s%s", i ? " " : "", env->v[i]);
    return loom_sbuf_detach(&sb);
}

static void test_jobenv_export(void **state)
{
    char *src[] = {"PATH=/bin", "HOME=/h", "EDITOR=vi", "SLURM_CONF=/c", "SLURM_X=1", NULL};
    static const struct {
        const char *spec;
        const char *out; /* NULL: an error */
    } cases[] = {
        {NULL, "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1"},
        {"", "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1"},
        {"ALL", "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1"},
        {"all", "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1"},
        {"NONE", "SLURM_CONF=/c SLURM_X=1"},
        {"NIL", "SLURM_CONF=/c SLURM_X=1"},
        {"EDITOR", "SLURM_CONF=/c SLURM_X=1 EDITOR=vi"},
        {"EDITOR,ARG1=test", "SLURM_CONF=/c SLURM_X=1 EDITOR=vi ARG1=test"},
        {"EDITOR=/bin/emacs", "SLURM_CONF=/c SLURM_X=1 EDITOR=/bin/emacs"},
        {"MISSING", "SLURM_CONF=/c SLURM_X=1"},
        /* With ALL the caller's value wins over the listed one. */
        {"ALL,EDITOR=/bin/emacs", "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1"},
        {"ALL,NEW=x", "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1 NEW=x"},
        /* SLURM_* always pass; an explicit value replaces them. */
        {"SLURM_X=2", "SLURM_CONF=/c SLURM_X=2"},
        /* Commas inside quotes belong to the value; the quotes stay (22.05). */
        {"A=\"x,y\",B=z", "SLURM_CONF=/c SLURM_X=1 A=\"x,y\" B=z"},
        {"A='x y',B", "SLURM_CONF=/c SLURM_X=1 A='x y'"},
        {"A=a\"b,c\"d,EDITOR", "SLURM_CONF=/c SLURM_X=1 A=a\"b,c\"d EDITOR=vi"},
        {"ALL,NEW=\"a,b\",B=c",
         "PATH=/bin HOME=/h EDITOR=vi SLURM_CONF=/c SLURM_X=1 NEW=\"a,b\" B=c"},
        {"A=\"x,y", "SLURM_CONF=/c SLURM_X=1 A=\"x,y"},
        {",,A=1,,", "SLURM_CONF=/c SLURM_X=1 A=1"},
        {"A=x,y", "SLURM_CONF=/c SLURM_X=1 A=x"},
        {"A=", "SLURM_CONF=/c SLURM_X=1 A="},
        {"NONE,EDITOR", "SLURM_CONF=/c SLURM_X=1 EDITOR=vi"},
        {"NONE,FOO=bar", "SLURM_CONF=/c SLURM_X=1 FOO=bar"},
        {"ALL,NONE", NULL},
        {"=x", NULL},
        {"1A", NULL},
        {"A-B", NULL},
    };
    for (size_t i = 0; i < N_(cases); i++) {
        loom_strv_t out = LOOM_STRV_INIT;
        loom_err_t err = {0};
        int rc = loom_jobenv_export(cases[i].spec, src, &out, &err);
        if (!cases[i].out) {
            if (rc != -LOOM_EPARSE)
                fail_msg("case %zu '%s': rc %d, want an error", i, cases[i].spec, rc);
            assert_int_equal(out.n, 0);
            assert_true(strlen(err.msg) > 0);
            continue;
        }
        assert_int_equal(rc, 0);
        char *got = jobenv_join(&out);
        if (strcmp(got, cases[i].out) != 0)
            fail_msg("case %zu '%s': got '%s' want '%s'", i, cases[i].spec, got, cases[i].out);
        free(got);
        loom_strv_free(&out);
    }
    loom_strv_t out = LOOM_STRV_INIT;
    assert_int_equal(loom_jobenv_export("NONE", NULL, &out, NULL), 0);
    assert_int_equal(out.n, 0);
}

/* A two-node job 42 (4 and 2 CPUs) with everything optional unset. */
static void jobenv_base(loom_jobenv_job_t *job, loom_jobenv_node_t *node)
{
    static const uint32_t cpus[] = {4, 2};
    memset(job, 0, sizeof(*job));
    memset(node, 0, sizeof(*node));
    job->job_id = 42;
    job->name = "train";
    job->partition = "gpu";
    job->nodelist = "n[1-2]";
    job->num_nodes = 2;
    job->node_cpus = cpus;
    job->submit_dir = "/home/alice";
    job->submit_host = "login1";
    job->uid = 1000;
    job->gid = 100;
    job->user = "alice";
    job->group = "users";
    job->start_time = 1700000000;
    job->end_time = 1700003600;
    node->name = "n1";
    node->hostname = "host1";
    node->cluster = "loom";
    node->conf = "/etc/slurm/slurm.conf";
}

static void jobenv_expect(const loom_strv_t *env, const char *name, const char *value)
{
    const char *got = loom_jobenv_get(env, name);
    if (!value && got)
        fail_msg("%s is set to '%s', want unset", name, got);
    if (value && !got)
        fail_msg("%s is unset, want '%s'", name, value);
    if (value && strcmp(got, value) != 0)
        fail_msg("%s='%s', want '%s'", name, got, value);
}

static void test_jobenv_batch_plain(void **state)
{
    static const struct {
        const char *name, *value;
    } want[] = {
        {"SLURM_JOB_ID", "42"},
        {"SLURM_JOBID", "42"},
        {"SLURM_JOB_NAME", "train"},
        {"SLURM_JOB_NODELIST", "n[1-2]"},
        {"SLURM_NODELIST", "n[1-2]"},
        {"SLURM_JOB_NUM_NODES", "2"},
        {"SLURM_NNODES", "2"},
        {"SLURM_JOB_PARTITION", "gpu"},
        {"SLURM_JOB_CPUS_PER_NODE", "4,2"},
        {"SLURM_CPUS_ON_NODE", "4"},
        {"SLURM_TASKS_PER_NODE", "4,2"},
        {"SLURM_SUBMIT_DIR", "/home/alice"},
        {"SLURM_SUBMIT_HOST", "login1"},
        {"SLURM_CLUSTER_NAME", "loom"},
        {"SLURM_JOB_UID", "1000"},
        {"SLURM_JOB_USER", "alice"},
        {"SLURM_JOB_GID", "100"},
        {"SLURM_JOB_GROUP", "users"},
        {"SLURM_JOB_START_TIME", "1700000000"},
        {"SLURM_JOB_END_TIME", "1700003600"},
        {"SLURM_NODEID", "0"},
        {"SLURM_PROCID", "0"},
        {"SLURM_LOCALID", "0"},
        {"SLURM_GTIDS", "0"},
        {"SLURM_TASK_PID", "777"},
        {"SLURMD_NODENAME", "n1"},
        {"SLURM_TOPOLOGY_ADDR", "n1"},
        {"SLURM_TOPOLOGY_ADDR_PATTERN", "node"},
        {"SLURM_CONF", "/etc/slurm/slurm.conf"},
        {"ENVIRONMENT", "BATCH"},
        {"HOSTNAME", "host1"},
        {"SLURM_NODE_ALIASES", "(null)"},
        {"SLURM_PRIO_PROCESS", "0"},
        {"PATH", "/bin"},
        /* Absent unless requested or applicable. */
        {"SLURM_NTASKS", NULL},
        {"SLURM_NPROCS", NULL},
        {"SLURM_NTASKS_PER_NODE", NULL},
        {"SLURM_CPUS_PER_TASK", NULL},
        {"SLURM_MEM_PER_NODE", NULL},
        {"SLURM_MEM_PER_CPU", NULL},
        {"SLURM_MEM_PER_GPU", NULL},
        {"SLURM_JOB_ACCOUNT", NULL},
        {"SLURM_JOB_QOS", NULL},
        {"SLURM_JOB_RESERVATION", NULL},
        {"SLURM_ARRAY_JOB_ID", NULL},
        {"SLURM_ARRAY_TASK_ID", NULL},
        {"SLURM_RESTART_COUNT", NULL},
        {"SLURM_JOB_DEPENDENCY", NULL},
        {"SLURM_GPUS", NULL},
        {"SLURM_GPUS_PER_NODE", NULL},
        {"SLURM_GPUS_PER_TASK", NULL},
        {"SLURM_CPUS_PER_GPU", NULL},
        {"SLURM_JOB_GPUS", NULL},
        {"SLURM_GPUS_ON_NODE", NULL},
        {"CUDA_VISIBLE_DEVICES", NULL},
        {"ROCR_VISIBLE_DEVICES", NULL},
        {"GPU_DEVICE_ORDINAL", NULL},
        {"SLURM_EXPORT_ENV", NULL},
    };
    loom_jobenv_job_t job;
    loom_jobenv_node_t node;
    jobenv_base(&job, &node);
    node.task_pid = 777;
    loom_strv_t env = LOOM_STRV_INIT;
    loom_strv_add(&env, "PATH=/bin");
    loom_strv_add(&env, "SLURM_JOB_ID=1"); /* from a submitting job: replaced */
    loom_jobenv_batch(&job, &node, &env);
    for (size_t i = 0; i < N_(want); i++)
        jobenv_expect(&env, want[i].name, want[i].value);
    loom_strv_free(&env);
}

static void test_jobenv_batch_requested(void **state)
{
    static const struct {
        const char *name, *value;
    } want[] = {
        {"SLURM_NTASKS", "3"},
        {"SLURM_NPROCS", "3"},
        {"SLURM_TASKS_PER_NODE", "2,1"},
        {"SLURM_NTASKS_PER_NODE", "2"},
        {"SLURM_CPUS_PER_TASK", "2"},
        {"SLURM_MEM_PER_NODE", "65536"},
        {"SLURM_MEM_PER_GPU", "1024"},
        {"SLURM_JOB_ACCOUNT", "proj"},
        {"SLURM_JOB_QOS", "normal"},
        {"SLURM_JOB_RESERVATION", "maint"},
        {"SLURM_JOB_DEPENDENCY", "afterok:41"},
        {"SLURM_RESTART_COUNT", "2"},
        {"SLURM_ARRAY_JOB_ID", "40"},
        {"SLURM_ARRAY_TASK_ID", "3"},
        {"SLURM_ARRAY_TASK_COUNT", "4"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_MAX", "7"},
        {"SLURM_ARRAY_TASK_STEP", "2"},
        {"SLURM_GPUS", "h100:2"},
        {"SLURM_GPUS_PER_NODE", "1"},
        {"SLURM_GPUS_PER_TASK", "1"},
        {"SLURM_CPUS_PER_GPU", "4"},
        {"SLURM_JOB_GPUS", "1,3"},
        {"SLURM_GPUS_ON_NODE", "2"},
        {"CUDA_VISIBLE_DEVICES", "1,3"},
        {"ROCR_VISIBLE_DEVICES", "1,3"},
        {"GPU_DEVICE_ORDINAL", "1,3"},
        {"ZE_AFFINITY_MASK", "1,3"},
        {"SLURM_EXPORT_ENV", "NONE"},
        {"SLURM_CPUS_ON_NODE", "2"},
        {"SLURM_TASK_PID", NULL},
    };
    loom_jobenv_job_t job;
    loom_jobenv_node_t node;
    jobenv_base(&job, &node);
    static const uint32_t gpus[] = {1, 3};
    job.ntasks = 3;
    job.ntasks_per_node = 2;
    job.cpus_per_task = 2;
    job.mem_per_node = 65536;
    job.mem_per_gpu = 1024;
    job.account = "proj";
    job.qos = "normal";
    job.reservation = "maint";
    job.dependency = "afterok:41";
    job.restart_cnt = 2;
    job.array_job_id = 40;
    job.array_task_id = 3;
    job.array_task_count = 4;
    job.array_task_min = 1;
    job.array_task_max = 7;
    job.array_task_step = 2;
    job.gpus = "h100:2";
    job.gpus_per_node = "1";
    job.gpus_per_task = "1";
    job.cpus_per_gpu = 4;
    job.export_env = "NONE";
    node.name = "n2";
    node.index = 1;
    node.gpus = gpus;
    node.ngpus = 2;
    loom_strv_t env = LOOM_STRV_INIT;
    loom_jobenv_batch(&job, &node, &env);
    for (size_t i = 0; i < N_(want); i++)
        jobenv_expect(&env, want[i].name, want[i].value);
    loom_strv_free(&env);
}

static void test_jobenv_gpu_flags(void **state)
{
    static const struct {
        unsigned flags;
        const char *cuda, *rocr, *ocl, *ze;
    } cases[] = {
        {0, "0", "0", "0", "0"},
        {LOOM_JOBENV_GPU_CUDA, "0", NULL, NULL, NULL},
        {LOOM_JOBENV_GPU_ROCR, NULL, "0", NULL, NULL},
        {LOOM_JOBENV_GPU_ZE, NULL, NULL, NULL, "0"},
        {LOOM_JOBENV_GPU_OPENCL | LOOM_JOBENV_GPU_CUDA, "0", NULL, "0", NULL},
        {LOOM_JOBENV_GPU_NONE, NULL, NULL, NULL, NULL},
    };
    static const uint32_t gpus[] = {0};
    for (size_t i = 0; i < N_(cases); i++) {
        loom_jobenv_job_t job;
        loom_jobenv_node_t node;
        jobenv_base(&job, &node);
        node.gpus = gpus;
        node.ngpus = 1;
        node.gpu_env = cases[i].flags;
        loom_strv_t env = LOOM_STRV_INIT;
        loom_jobenv_batch(&job, &node, &env);
        jobenv_expect(&env, "CUDA_VISIBLE_DEVICES", cases[i].cuda);
        jobenv_expect(&env, "ROCR_VISIBLE_DEVICES", cases[i].rocr);
        jobenv_expect(&env, "GPU_DEVICE_ORDINAL", cases[i].ocl);
        jobenv_expect(&env, "ZE_AFFINITY_MASK", cases[i].ze);
        jobenv_expect(&env, "SLURM_JOB_GPUS", "0");
        loom_strv_free(&env);
    }
}

/* No -m: srun 22.05's default, cyclic when tasks <= nodes, else block. */
static void test_jobenv_step_default_dist(void **state)
{
    (void)state;
    static const uint32_t one[] = {1, 1}, two[] = {2};
    static const struct {
        uint32_t ntasks, nodes;
        const uint32_t *tpn;
        const char *want;
    } cases[] = {{1, 1, one, "cyclic"}, {2, 2, one, "cyclic"}, {2, 1, two, "block"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_jobenv_step_t step = {.nodelist = "n1",
                                   .num_nodes = cases[i].nodes,
                                   .tasks_per_node = cases[i].tpn,
                                   .ntasks = cases[i].ntasks,
                                   .node_name = "n1"};
        loom_strv_t env = LOOM_STRV_INIT;
        loom_jobenv_step(&step, 0, 0, &env);
        jobenv_expect(&env, "SLURM_DISTRIBUTION", cases[i].want);
        loom_strv_free(&env);
    }
}

static void test_jobenv_step(void **state)
{
    static const uint32_t tpn[] = {2, 2};
    static const uint32_t gpus[] = {2};
    loom_jobenv_step_t step = {
        .step_id = 3,
        .nodelist = "n[1-2]",
        .num_nodes = 2,
        .tasks_per_node = tpn,
        .ntasks = 4,
        .gpus = gpus,
        .ngpus = 1,
        .comm_host = "10.0.0.1",
        .comm_port = 40001,
        .node_name = "n2",
        .node_id = 1,
        .first_task = 2,
    };
    static const struct {
        const char *name, *value;
    } want[] = {
        {"SLURM_STEP_ID", "3"},
        {"SLURM_STEPID", "3"},
        {"SLURM_PROCID", "3"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_NODEID", "1"},
        {"SLURM_GTIDS", "2,3"},
        {"SLURM_STEP_NODELIST", "n[1-2]"},
        {"SLURM_STEP_NUM_NODES", "2"},
        {"SLURM_STEP_NUM_TASKS", "4"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
        {"SLURM_DISTRIBUTION", "block"},
        {"SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", "4(x2)"},
        {"SLURM_NTASKS", "4"},
        {"SLURM_NPROCS", "4"},
        {"SLURM_TASKS_PER_NODE", "2(x2)"},
        {"SLURM_STEP_GPUS", "2"},
        {"SLURM_GPUS_ON_NODE", "1"},
        {"CUDA_VISIBLE_DEVICES", "2"},
        {"SLURM_SRUN_COMM_HOST", "10.0.0.1"},
        {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.1"},
        {"SLURM_SRUN_COMM_PORT", "40001"},
        {"SLURM_STEP_LAUNCHER_PORT", "40001"},
        {"SLURMD_NODENAME", "n2"},
        {"SLURM_TASK_PID", "99"},
        {"SLURM_JOB_ID", "42"},
        {"ENVIRONMENT", "BATCH"},
        {"SLURM_CPUS_PER_TASK", NULL},
    };
    loom_strv_t env = LOOM_STRV_INIT;
    loom_strv_add(&env, "SLURM_JOB_ID=42");
    loom_strv_add(&env, "SLURM_JOB_CPUS_PER_NODE=4(x2)");
    loom_strv_add(&env, "ENVIRONMENT=BATCH");
    loom_strv_add(&env, "CUDA_VISIBLE_DEVICES=2,3");
    loom_jobenv_step(&step, 1, 99, &env);
    for (size_t i = 0; i < N_(want); i++)
        jobenv_expect(&env, want[i].name, want[i].value);
    loom_strv_free(&env);
}

static void test_jobenv_from_json(void **state)
{
    const char *text =
        "{\"job_id\":128,\"array_job_id\":120,\"array_task_id\":8,\"name\":\"sweep\","
        "\"partition\":\"gpu\",\"account\":\"proj\",\"nodes\":\"n[1-2]\","
        "\"user_id\":1000,\"user_name\":\"alice\",\"group_id\":100,"
        "\"group_name\":\"users\",\"work_dir\":\"/w\",\"start_time\":10,"
        "\"end_time\":70,\"restart_cnt\":1,\"mem_per_node\":2048,"
        "\"alloc\":[{\"node\":\"n1\",\"cpus\":[0,1,2,3]},"
        "{\"node\":\"n2\",\"cpus\":[4,5],\"gres\":[{\"name\":\"gpu\",\"index\":[1]}]}],"
        "\"desc\":{\"array\":\"0-12:4%2\",\"ntasks_per_node\":2,\"cpus_per_task\":1,"
        "\"gpus_per_node\":1,\"gpus\":\"a100:2\",\"export\":\"NONE\","
        "\"dependency\":\"afterok:7\"}}";
    json_t *rec = json_loads(text, 0, NULL);
    assert_non_null(rec);
    loom_jobenv_job_t job;
    uint32_t index = 9;
    assert_int_equal(loom_jobenv_job_from_json(rec, "n2", &job, &index, NULL), 0);
    assert_int_equal(index, 1);
    assert_int_equal(job.job_id, 128);
    assert_int_equal(job.array_job_id, 120);
    assert_int_equal(job.array_task_id, 8);
    assert_int_equal(job.array_task_count, 4);
    assert_int_equal(job.array_task_min, 0);
    assert_int_equal(job.array_task_max, 12);
    assert_int_equal(job.array_task_step, 4);
    assert_string_equal(job.name, "sweep");
    assert_string_equal(job.nodelist, "n[1-2]");
    assert_int_equal(job.num_nodes, 2);
    assert_int_equal(job.node_cpus[0], 4);
    assert_int_equal(job.node_cpus[1], 2);
    assert_int_equal(job.ntasks, 4); /* implied by --ntasks-per-node on 2 nodes */
    assert_int_equal(job.ntasks_per_node, 2);
    assert_int_equal(job.cpus_per_task, 1);
    assert_int_equal(job.mem_per_node, 2048);
    assert_string_equal(job.gpus_per_node, "1");
    assert_string_equal(job.gpus, "a100:2");
    assert_string_equal(job.export_env, "NONE");
    assert_string_equal(job.dependency, "afterok:7");
    assert_string_equal(job.submit_dir, "/w");
    assert_string_equal(job.user, "alice");
    assert_int_equal(job.end_time, 70);
    loom_jobenv_job_free(&job);
    json_decref(rec);

    static const struct {
        const char *spec;
        uint32_t count, min, max, step;
    } arrays[] = {
        {"1,3,5", 3, 1, 5, 1}, /* sbatch 22.05: a step only from "a-b:s" */
        {"1-3,7", 4, 1, 7, 1},           {"1-5:2,8", 4, 1, 8, 2}, {"2,20-30:5", 4, 2, 30, 5},
        {"0-10:5,11-20:3", 7, 0, 20, 5}, {"5", 1, 5, 5, 1},       {"0-99%8", 100, 0, 99, 1},
    };
    for (size_t i = 0; i < N_(arrays); i++) {
        json_t *r = json_pack("{s:i, s:i, s:i, s:{s:s}}", "job_id", 5, "array_job_id", 5,
                              "array_task_id", 0, "desc", "array", arrays[i].spec);
        assert_int_equal(loom_jobenv_job_from_json(r, "n1", &job, NULL, NULL), 0);
        assert_int_equal(job.array_task_count, arrays[i].count);
        assert_int_equal(job.array_task_min, arrays[i].min);
        assert_int_equal(job.array_task_max, arrays[i].max);
        assert_int_equal(job.array_task_step, arrays[i].step);
        assert_string_equal(job.nodelist, "n1");
        loom_jobenv_job_free(&job);
        json_decref(r);
    }
    /* The whole node's memory, not asked for: no SLURM_MEM_PER_NODE (22.05.8). */
    static const struct {
        int whole;
        uint64_t want;
    } mems[] = {{0, 1000}, {1, 0}};
    for (size_t i = 0; i < N_(mems); i++) {
        json_t *r = json_pack("{s:i, s:i, s:b}", "job_id", 6, "mem_per_node", 1000, "mem_whole",
                              mems[i].whole);
        assert_int_equal(loom_jobenv_job_from_json(r, "n1", &job, NULL, NULL), 0);
        assert_int_equal(job.mem_per_node, mems[i].want);
        loom_jobenv_job_free(&job);
        json_decref(r);
    }
    /* The keys of loom_jobopt_to_json (messages.md §2). */
    json_t *jo = json_pack("{s:i, s:{s:i, s:i, s:s, s:s, s:s, s:s, s:i}}", "job_id", 9, "desc",
                           "tasks", 4, "tasks_per_node", 2, "tres_per_job", "gres/gpu:a100:2",
                           "tres_per_task", "gres/gpu:1", "tres_per_node", "gres/gpu:1",
                           "cpus_per_tres", "gres/gpu:3", "memory_per_gpu", 512);
    assert_int_equal(loom_jobenv_job_from_json(jo, "n1", &job, NULL, NULL), 0);
    assert_int_equal(job.ntasks, 4);
    assert_int_equal(job.ntasks_per_node, 2);
    assert_string_equal(job.gpus, "a100:2");
    assert_string_equal(job.gpus_per_task, "1");
    assert_null(job.gpus_per_node); /* tres_per_node may be --gres: no echo */
    assert_int_equal(job.cpus_per_gpu, 3);
    assert_int_equal(job.mem_per_gpu, 512);
    loom_jobenv_job_free(&job);
    json_decref(jo);

    json_t *bad = json_pack("{s:s}", "name", "x");
    loom_err_t err = {0};
    assert_int_equal(loom_jobenv_job_from_json(bad, "n1", &job, NULL, &err), -LOOM_EPROTO);
    json_decref(bad);
}

static void test_jobenv_rank_nodes(void **state)
{
    static const struct {
        uint32_t tasks[4];
        size_t n;
        bool cyclic;
        uint32_t want[12];
    } cases[] = {
        {{2, 2}, 2, false, {0, 0, 1, 1}},   {{2, 2}, 2, true, {0, 1, 0, 1}},
        {{3, 1}, 2, true, {0, 1, 0, 0}},    {{2, 1, 1}, 3, false, {0, 0, 1, 2}},
        {{2, 1, 1}, 3, true, {0, 1, 2, 0}}, {{1, 3, 2}, 3, true, {0, 1, 2, 1, 2, 1}},
    };
    for (size_t i = 0; i < N_(cases); i++) {
        uint32_t got[12] = {0}, total = 0;
        for (size_t k = 0; k < cases[i].n; k++)
            total += cases[i].tasks[k];
        loom_jobenv_rank_nodes(cases[i].tasks, cases[i].n, cases[i].cyclic, got);
        for (uint32_t r = 0; r < total; r++)
            assert_int_equal(got[r], cases[i].want[r]);
    }
}

/* Cyclic ranks, the step's CPUs on the node, and the distribution name. */
static void test_jobenv_step_cyclic(void **state)
{
    uint32_t tpn[2] = {2, 2}, gtids[2] = {1, 3};
    loom_jobenv_step_t step = {
        .step_id = 3,
        .nodelist = "n[1-2]",
        .num_nodes = 2,
        .tasks_per_node = tpn,
        .ntasks = 4,
        .node_name = "n2",
        .node_id = 1,
        .gtids = gtids,
        .distribution = "cyclic",
        .cpus_on_node = 6,
    };
    loom_strv_t env = LOOM_STRV_INIT;
    loom_jobenv_step(&step, 1, 0, &env);
    jobenv_expect(&env, "SLURM_PROCID", "3");
    jobenv_expect(&env, "SLURM_LOCALID", "1");
    jobenv_expect(&env, "SLURM_GTIDS", "1,3");
    jobenv_expect(&env, "SLURM_DISTRIBUTION", "cyclic");
    jobenv_expect(&env, "SLURM_CPUS_ON_NODE", "6");
    jobenv_expect(&env, "SLURM_TASK_PID", NULL);
    loom_strv_free(&env);
}

/* salloc's shell: allocation variables, no node or task ones. */
static void test_jobenv_alloc(void **state)
{
    loom_jobenv_job_t job;
    loom_jobenv_node_t node;
    jobenv_base(&job, &node);
    loom_strv_t env = LOOM_STRV_INIT;
    loom_jobenv_alloc(&job, "c1", "/etc/slurm.conf", &env);
    jobenv_expect(&env, "SLURM_JOB_ID", "42");
    jobenv_expect(&env, "SLURM_JOBID", "42");
    jobenv_expect(&env, "SLURM_CLUSTER_NAME", "c1");
    jobenv_expect(&env, "SLURM_CONF", "/etc/slurm.conf");
    jobenv_expect(&env, "SLURM_PROCID", NULL);
    jobenv_expect(&env, "SLURM_CPUS_ON_NODE", NULL);
    jobenv_expect(&env, "SLURMD_NODENAME", NULL);
    jobenv_expect(&env, "ENVIRONMENT", NULL);
    loom_strv_free(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobenv_vector),
        cmocka_unit_test(test_jobenv_counts),
        cmocka_unit_test(test_jobenv_layout),
        cmocka_unit_test(test_jobenv_export),
        cmocka_unit_test(test_jobenv_batch_plain),
        cmocka_unit_test(test_jobenv_batch_requested),
        cmocka_unit_test(test_jobenv_gpu_flags),
        cmocka_unit_test(test_jobenv_step),
        cmocka_unit_test(test_jobenv_step_default_dist),
        cmocka_unit_test(test_jobenv_from_json),
        cmocka_unit_test(test_jobenv_rank_nodes),
        cmocka_unit_test(test_jobenv_step_cyclic),
        cmocka_unit_test(test_jobenv_alloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

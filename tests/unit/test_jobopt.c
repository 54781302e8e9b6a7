/* test_jobopt.c - the sbatch/srun/salloc option parser (CLI_SPEC §0.8, §1-§3, §12).
 * Expected messages were taken from real sbatch/srun/salloc 22.05.8 on the same input. */
#include "common/jobopt.h"
#include "common/jobopt_table.h"
#include "common/jobscript.h"
#include "common/timefmt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N(a)      (sizeof(a) / sizeof((a)[0]))
#define SB        LOOM_JOBOPT_SBATCH
#define SR        LOOM_JOBOPT_SRUN
#define SA        LOOM_JOBOPT_SALLOC
#define MAX_WORDS 32

/* Split on '|' (so that values may hold spaces) into argv with argv[0] = the command. */
static int split_args(loom_jobopt_cmd_t cmd, const char *line, char *buf, size_t size, char **argv)
{
    int argc = 0;
    argv[argc++] = (char *)loom_jobopt_cmd_name(cmd);
    snprintf(buf, size, "%s", line);
    for (char *s = buf; *buf && argc < MAX_WORDS - 1;) {
        argv[argc++] = s;
        char *bar = strchr(s, '|');
        if (!bar)
            break;
        *bar = '\0';
        s = bar + 1;
    }
    argv[argc] = NULL;
    return argc;
}

/* Parse a command line (and optional environment) into o; returns load's rc. */
static int load_line(loom_jobopt_t *o, loom_jobopt_cmd_t cmd, const char *line, char *const *envp,
                     loom_err_t *err)
{
    char buf[1024];
    char *argv[MAX_WORDS];
    int argc = split_args(cmd, line, buf, sizeof(buf), argv);
    loom_jobopt_init(o, cmd);
    o->now = 1700000000; /* 2023-11-14T22:13:20Z */
    return loom_jobopt_load(o, argc, argv, envp, NULL, err);
}

/* The job description's value for key, as compact JSON ("" when absent). */
static char *json_value(const loom_jobopt_t *o, const char *key)
{
    json_t *j = loom_jobopt_to_json(o);
    json_t *v = json_object_get(j, key);
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("");
    json_decref(j);
    return s;
}

typedef struct opt_case {
    loom_jobopt_cmd_t cmd;
    const char *args; /* '|' separated */
    const char *key;  /* job description key */
    const char *json; /* its value */
} opt_case_t;

static void check_cases(const opt_case_t *cases, size_t n, char *const *envp)
{
    for (size_t i = 0; i < n; i++) {
        loom_jobopt_t o;
        loom_err_t err = {0};
        int rc = load_line(&o, cases[i].cmd, cases[i].args, envp, &err);
        if (rc < 0)
            fail_msg("'%s': %s", cases[i].args, err.msg);
        char *v = json_value(&o, cases[i].key);
        if (strcmp(v, cases[i].json) != 0)
            fail_msg("'%s': %s is %s, want %s", cases[i].args, cases[i].key, v, cases[i].json);
        free(v);
        loom_jobopt_free(&o);
    }
}

/* Short, long, "=" and separate-word forms of each P0 option land in the description. */
static void test_jobopt_forms(void **state)
{
    static const opt_case_t cases[] = {
        {SB, "-J|x|--wrap=true", "name", "\"x\""},
        {SB, "-Jx|--wrap=true", "name", "\"x\""},
        {SB, "--job-name|my job|--wrap=true", "name", "\"my job\""},
        {SB, "--job-name=a=b|--wrap=true", "name", "\"a=b\""},
        {SB, "--job|n|--wrap=true", "name", "\"n\""}, /* unique prefix */
        {SB, "-o|o.%j|--wrap=true", "standard_output", "\"o.%j\""},
        {SB, "--output=none|--wrap=true", "standard_output", "\"/dev/null\""},
        {SB, "-e|NONE|--wrap=true", "standard_error", "\"/dev/null\""},
        {SB, "--error=e.%A_%a|--wrap=true", "standard_error", "\"e.%A_%a\""},
        {SB, "-i|in|--wrap=true", "standard_input", "\"in\""},
        {SB, "--open-mode=APPEND|--wrap=true", "open_mode", "\"append\""},
        {SB, "--open-mode|t|--wrap=true", "open_mode", "\"truncate\""},
        {SB, "-p|gpu,batch|--wrap=true", "partition", "\"gpu,batch\""},
        {SB, "--partition=debug|--wrap=true", "partition", "\"debug\""},
        {SB, "-N|2|--wrap=true", "minimum_nodes", "2"},
        {SB, "-N2-4|--wrap=true", "maximum_nodes", "4"},
        {SB, "--nodes=-3|--wrap=true", "minimum_nodes", "1"},
        {SB, "--nodes=2k|--wrap=true", "minimum_nodes", "2048"},
        {SB, "--nodes=0|--wrap=true", "minimum_nodes", "0"},
        {SB, "-n|8|--wrap=true", "tasks", "8"},
        {SB, "-n+4|--wrap=true", "tasks", "4"},
        {SB, "--ntasks=010|--wrap=true", "tasks", "10"},
        {SB, "--ntasks-per-node=4|--wrap=true", "tasks_per_node", "4"},
        {SB, "--tasks-per-node=8|--wrap=true", "tasks_per_node", "8"},
        {SB, "-c6|--wrap=true", "cpus_per_task", "6"},
        {SB, "--cpus-per-task|6|--wrap=true", "cpus_per_task", "6"},
        {SB, "--mem=64G|--wrap=true", "memory_per_node", "65536"},
        {SB, "--mem=0|--wrap=true", "memory_per_node", "0"},
        {SB, "--mem-per-cpu=1000|--wrap=true", "memory_per_cpu", "1000"},
        {SB, "--mem-per-gpu=2g|--wrap=true", "memory_per_gpu", "2048"},
        {SB, "--tmp=1T|--wrap=true", "temporary_disk_per_node", "1048576"},
        {SB, "--gres=gpu:2|--wrap=true", "tres_per_node", "\"gres/gpu:2\""},
        {SB, "--gres=gpu:h100:1|--wrap=true", "tres_per_node", "\"gres/gpu:h100:1\""},
        {SB, "--gres=gpu:a100:4,shard:2|--gpus-per-node=1|--wrap=true", "tres_per_node",
         "\"gres/gpu:a100:4,gres/shard:2,gres/gpu:1\""},
        {SB, "-G|a100:2|--wrap=true", "tres_per_job", "\"gres/gpu:a100:2\""},
        {SB, "--gpus=4|--wrap=true", "tres_per_job", "\"gres/gpu:4\""},
        {SB, "--gpus-per-task=1|--wrap=true", "tres_per_task", "\"gres/gpu:1\""},
        {SB, "--gpus-per-socket=1|--wrap=true", "tres_per_socket", "\"gres/gpu:1\""},
        {SB, "--cpus-per-gpu=8|--wrap=true", "cpus_per_tres", "\"gres/gpu:8\""},
        {SB, "-t|60|--wrap=true", "time_limit", "60"},
        {SB, "-t1:00:00|--wrap=true", "time_limit", "60"},
        {SB, "--time=1-00:00:00|--wrap=true", "time_limit", "1440"},
        {SB, "--time=10:30|--wrap=true", "time_limit", "11"}, /* M:S rounds up */
        {SB, "--time=UNLIMITED|--wrap=true", "time_limit", "-1"},
        {SB, "--time=0|--wrap=true", "time_limit", "0"},
        {SB, "--time-min=10|--wrap=true", "time_minimum", "10"},
        {SB, "-a|0-15:4%2|--wrap=true", "array", "\"0-15:4%2\""},
        {SB, "--array=1-20%4|--wrap=true", "array", "\"1-20%4\""},
        {SB, "-d|afterok:1:2|--wrap=true", "dependency", "\"afterok:1:2\""},
        {SB, "--dependency=singleton|--wrap=true", "dependency", "\"singleton\""},
        {SB, "--mail-type=begin,END|--wrap=true", "mail_type", "\"BEGIN,END\""},
        {SB, "--mail-type=ALL|--wrap=true", "mail_type",
         "\"INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT\""},
        {SB, "--mail-type=TIME_LIMIT,time_limit_90,ARRAY_TASKS|--wrap=true", "mail_type",
         "\"ARRAY_TASKS,TIME_LIMIT_90,TIME_LIMIT\""},
        {SB, "--mail-type=begin,bogus|--wrap=true", "mail_type", "\"BEGIN\""},
        {SB, "--mail-type=begin,none|--wrap=true", "mail_type", "\"NONE\""},
        {SB, "--mail-type=BEGIN|--mail-type=END|--wrap=true", "mail_type", "\"BEGIN,END\""},
        {SB, "--mail-user=me@x|--wrap=true", "mail_user", "\"me@x\""},
        {SB, "-C|a&b|--wrap=true", "constraints", "\"a&b\""},
        {SB, "--constraint=[a*2&b*1]|--wrap=true", "constraints", "\"[a*2&b*1]\""},
        {SB, "--exclusive|--wrap=true", "exclusive", "\"true\""},
        {SB, "--exclusive=USER|--wrap=true", "exclusive", "\"user\""},
        {SB, "--exclusive=mcs|--wrap=true", "exclusive", "\"mcs\""},
        {SB, "-s|--wrap=true", "oversubscribe", "true"},
        {SB, "--requeue|--wrap=true", "requeue", "true"},
        {SB, "--no-requeue|--wrap=true", "requeue", "false"},
        {SB, "--signal=B:USR1@30|--wrap=true", "kill_warning_flags", "[\"BATCH_JOB\"]"},
        {SB, "--signal=B:USR1@30|--wrap=true", "kill_warning_delay", "30"},
        {SB, "--signal=SIGUSR2|--wrap=true", "kill_warning_signal", "12"},
        {SB, "--signal=usr1|--wrap=true", "kill_warning_delay", "60"},
        {SB, "--signal=10|--wrap=true", "kill_warning_signal", "10"},
        {SB, "--signal=RB:TERM@0|--wrap=true", "kill_warning_flags",
         "[\"BATCH_JOB\",\"RESERVATION\"]"},
        {SB, "--signal=USR1@|--wrap=true", "kill_warning_delay", "0"},
        {SB, "-H|--wrap=true", "hold", "true"},
        {SB, "--hold|--wrap=true", "hold", "true"},
        {SB, "-D|/tmp/x|--wrap=true", "current_working_directory", "\"/tmp/x\""},
        {SB, "--chdir=/w|--wrap=true", "current_working_directory", "\"/w\""},
        {SB, "-q|high|--wrap=true", "qos", "\"high\""},
        {SB, "-A|proj|--wrap=true", "account", "\"proj\""},
        {SB, "--account=proj|--wrap=true", "account", "\"proj\""},
        {SB, "-b|now+1hour|--wrap=true", "begin_time", "1700003600"},
        {SB, "--begin=2024-01-02T03:04:05|--wrap=true", "begin_time", "1704164645"},
        {SB, "--deadline=now+1day|--wrap=true", "deadline", "1700086400"},
        {SB, "-w|n[1-3]|--wrap=true", "required_nodes", "\"n[1-3]\""},
        {SB, "--exclude=n4|--wrap=true", "excluded_nodes", "\"n4\""},
        {SB, "--nice|--wrap=true", "nice", "100"},
        {SB, "--nice=5|--wrap=true", "nice", "5"},
        {SB, "--nice=x|--wrap=true", "nice", "0"},
        {SB, "--nice=7x|--wrap=true", "nice", "7"},
        {SB, "--priority=5|--wrap=true", "priority", "5"},
        {SB, "--priority=top|--wrap=true", "priority", "\"TOP\""},
        {SB, "--reservation=r1|--wrap=true", "reservation", "\"r1\""},
        {SB, "-L|matlab:2|--wrap=true", "licenses", "\"matlab:2\""},
        {SB, "--comment=c c|--wrap=true", "comment", "\"c c\""},
        {SB, "--wckey=w|--wrap=true", "wckey", "\"w\""},
        {SB, "--kill-on-invalid-dep=YES|--wrap=true", "kill_on_invalid_dependency", "true"},
        {SB, "--wait-all-nodes=1|--wrap=true", "wait_all_nodes", "1"},
        {SB, "-k|--wrap=true", "kill_on_node_fail", "false"},
        {SB, "--contiguous|-O|--reboot|--wrap=true", "overcommit", "true"},
        {SB, "--mincpus=4|--wrap=true", "minimum_cpus_per_node", "4"},
        {SB, "--sockets-per-node=2|--cores-per-socket=8|--wrap=true", "cores_per_socket", "8"},
        {SB, "--threads-per-core=1|--wrap=true", "threads_per_core", "1"},
        {SB, "--ntasks-per-gpu=2|--wrap=true", "ntasks_per_gpu", "2"},
        {SB, "--ntasks-per-tres=3|--wrap=true", "ntasks_per_gpu", "3"},
        {SB, "-m|cyclic|--hint=nomultithread|--wrap=true", "distribution", "\"cyclic\""},
        {SB, "--prefer=fast|--wrap=true", "prefer", "\"fast\""},
        {SB, "-Jx|job.sh|a|-b", "argv", "[\"job.sh\",\"a\",\"-b\"]"},
        {SB, "--|job.sh|-x", "argv", "[\"job.sh\",\"-x\"]"},
        {SR, "-n2|--mpi=pmi2|python|train.py|-n|5", "argv",
         "[\"python\",\"train.py\",\"-n\",\"5\"]"},
        {SR, "-N1|-n|4|--gpus-per-task=1|true", "tres_per_task", "\"gres/gpu:1\""},
        {SR, "--cpu_bind=cores|true", "cpu_binding", "\"cores\""},
        {SR, "-I|true", "immediate", "1"},
        {SR, "--immediate=30|true", "immediate", "30"},
        {SA, "-I5|-N2", "immediate", "5"},
        {SA, "-N2|--time=10|bash", "argv", "[\"bash\"]"},
    };
    check_cases(cases, N(cases), NULL);
}

/* Fields that do not reach the description: srun/salloc/sbatch behaviour. */
static void test_jobopt_fields(void **state)
{
    loom_jobopt_t o;
    loom_err_t err = {0};
    assert_int_equal(load_line(&o, SR,
                               "-l|-u|--pty|--overlap|--exact|-K|-W|5|--jobid=42|-X|-Z|bash", NULL,
                               &err),
                     12);
    assert_true(o.label && o.unbuffered && o.pty && o.overlap && o.exact && o.disable_status &&
                o.no_allocate);
    assert_int_equal(o.kill_on_bad_exit, 1);
    assert_int_equal(o.step_wait, 5);
    assert_int_equal(o.jobid, 42);
    loom_jobopt_free(&o);

    assert_true(load_line(&o, SR, "-K0|--overlap=yes|--multi-prog|-E|conf", NULL, &err) > 0);
    assert_int_equal(o.kill_on_bad_exit, 0);
    assert_true(o.overlap && o.multi_prog && o.preserve_env);
    loom_jobopt_free(&o);

    assert_true(load_line(&o, SA, "--no-shell|-KUSR1|--bell", NULL, &err) > 0);
    assert_true(o.no_shell);
    assert_string_equal(o.kill_cmd, "USR1");
    assert_int_equal(o.ignored.n, 1);
    assert_string_equal(o.ignored.v[0], "--bell");
    loom_jobopt_free(&o);

    assert_true(load_line(&o, SB, "-vvv|-Q|--parsable|--test-only|-W|--wrap=hostname", NULL, &err) <
                0); /* -v with -Q */
    assert_string_equal(err.msg, "don't specify both --verbose (-v) and --quiet (-Q)");
    loom_jobopt_free(&o);

    assert_int_equal(
        load_line(&o, SB, "-vvv|--parsable|--test-only|-W|--wrap=hostname", NULL, &err), 6);
    assert_int_equal(o.verbose, 3);
    assert_true(o.parsable && o.test_only && o.wait);
    assert_string_equal(o.wrap, "hostname");
    assert_int_equal(o.argv.n, 0);
    loom_jobopt_free(&o);

    assert_true(load_line(&o, SB,
                          "--network=x|--bb=y|-S2|--uid=0|--delay-boot=5|--propagate|--wrap=t",
                          NULL, &err) > 0);
    assert_int_equal(o.ignored.n, 5);
    assert_string_equal(o.ignored.v[2], "--core-spec=2");
    assert_string_equal(o.ignored.v[4], "--delay-boot=5");
    assert_string_equal(o.propagate, ""); /* all limits (common/rlimits.h) */
    loom_jobopt_free(&o);
    assert_true(load_line(&o, SB, "--propagate=STACK,CORE|--wrap=t", NULL, &err) > 0);
    assert_string_equal(o.propagate, "STACK,CORE");
    loom_jobopt_free(&o);
}

typedef struct err_case {
    loom_jobopt_cmd_t cmd;
    const char *args;
    int rc;
    const char *msg;
} err_case_t;

static void check_errors(const err_case_t *cases, size_t n, char *const *envp)
{
    for (size_t i = 0; i < n; i++) {
        loom_jobopt_t o;
        loom_err_t err = {0};
        int rc = load_line(&o, cases[i].cmd, cases[i].args, envp, &err);
        if (rc != cases[i].rc || strcmp(err.msg, cases[i].msg) != 0)
            fail_msg("'%s': got %d '%s', want %d '%s'", cases[i].args, rc, err.msg, cases[i].rc,
                     cases[i].msg);
        loom_jobopt_free(&o);
    }
}

static void test_jobopt_errors(void **state)
{
    static const err_case_t cases[] = {
        {SB, "--ntasks=x|--wrap=t", -LOOM_EPARSE, "Invalid numeric value \"x\" for --ntasks."},
        {SB, "--ntasks=0|--wrap=t", -LOOM_EPARSE, "Invalid numeric value \"0\" for --ntasks."},
        {SB, "-n4x|--wrap=t", -LOOM_EPARSE, "Invalid numeric value \"4x\" for --ntasks."},
        {SB, "--ntasks=4.0|--wrap=t", -LOOM_EPARSE, "Invalid numeric value \"4.0\" for --ntasks."},
        {SB, "--ntasks=0x10|--wrap=t", -LOOM_EPARSE,
         "Invalid numeric value \"0x10\" for --ntasks."},
        {SB, "--ntasks=99999999999|--wrap=t", -LOOM_EPARSE,
         "Invalid numeric value \"99999999999\" for --ntasks."},
        {SB, "--cpus-per-task=-0|--wrap=t", -LOOM_EPARSE,
         "Invalid numeric value \"-0\" for --cpus-per-task."},
        {SB, "--tasks-per-node=x|--wrap=t", -LOOM_EPARSE,
         "Invalid numeric value \"x\" for --ntasks-per-node."},
        {SB, "-n", -LOOM_EUSAGE, "option requires an argument -- 'n'"},
        {SB, "--ntasks", -LOOM_EUSAGE, "option '--ntasks' requires an argument"},
        {SB, "--nodel", -LOOM_EUSAGE, "option '--nodelist' requires an argument"},
        {SB, "--nodes=x|--wrap=t", -LOOM_EINVAL_NODECOUNT, "\"x\" is not a valid node count"},
        {SB, "--nodes=1,2|--wrap=t", -LOOM_EINVAL_NODECOUNT, "\"1,2\" is not a valid node count"},
        {SB, "--nodes=1-2-3|--wrap=t", -LOOM_EINVAL_NODECOUNT, "\"2-3\" is not a valid node count"},
        {SB, "--nodes=3-1|--wrap=t", -LOOM_EINVAL_NODECOUNT,
         "Maximum node count 1 is less than minimum node count 3"},
        {SB, "--time=abc|--wrap=t", -LOOM_EINVAL_TIME, "Invalid --time specification"},
        {SB, "--time-min=x|--wrap=t", -LOOM_EINVAL_TIME, "Invalid --time-min specification"},
        {SB, "--mem=abc|--wrap=t", -LOOM_EPARSE, "Invalid --mem specification"},
        {SB, "--mem=1.5G|--wrap=t", -LOOM_EPARSE, "Invalid --mem specification"},
        {SB, "--mem-per-cpu=1x|--wrap=t", -LOOM_EPARSE, "Invalid --mem-per-cpu specification"},
        {SB, "--tmp=x|--wrap=t", -LOOM_EPARSE, "Invalid --tmp specification"},
        {SB, "--mem=1G|--mem-per-cpu=1G|--wrap=t", -LOOM_EINVAL_MEM,
         "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."},
        {SB, "--begin=garbage|--wrap=t", -LOOM_EINVAL_BEGIN, "Invalid --begin specification"},
        {SB, "--deadline=x|--wrap=t", -LOOM_EINVAL_BEGIN, "Invalid --deadline specification"},
        {SB, "--signal=FOO|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=USR1@x|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=USR1@65536|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=0|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=PIPE|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=X:USR1|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=B:R:USR1|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--signal=@10|--wrap=t", -LOOM_EPARSE, "Invalid --signal specification"},
        {SB, "--exclusive=topo|--wrap=t", -LOOM_EPARSE, "Invalid --exclusive specification"},
        {SB, "--open-mode=foo|--wrap=t", -LOOM_EPARSE, "Invalid --open-mode specification"},
        {SB, "--mail-type=foo|--wrap=t", -LOOM_EPARSE, "Invalid --mail-type specification"},
        {SB, "--mail-type=|--wrap=t", -LOOM_EPARSE, "Invalid --mail-type specification"},
        {SB, "--nice=2147483646|--wrap=t", -LOOM_ERANGE,
         "Invalid --nice value, out of range (+/- 2147483645)"},
        {SB, "--priority=-1|--wrap=t", -LOOM_ERANGE, "Priority must be >= 0"},
        {SB, "--kill-on-invalid-dep=1|--wrap=t", -LOOM_EPARSE,
         "Invalid --kill-on-invalid-dep specification"},
        {SB, "--no-kill=on|--wrap=t", -LOOM_EPARSE, "Invalid --no-kill specification"},
        {SB, "--wait-all-nodes=x|--wrap=t", -LOOM_EPARSE,
         "Invalid numeric value \"x\" for --wait-all-nodes."},
        {SB, "--gres=gpu:a:b:c|--wrap=t", -LOOM_EINVAL_GRES,
         "Invalid generic resource (gres) specification"},
        {SB, "--gpus=x:|--wrap=t", -LOOM_EINVAL_GRES,
         "Invalid generic resource (gres) specification"},
        {SB, "--array=x|--wrap=t", -LOOM_EINVAL_ARRAY,
         "Batch job submission failed: Invalid job array specification"},
        {SB, "--array=5-1|--wrap=t", -LOOM_EINVAL_ARRAY,
         "Batch job submission failed: Invalid job array specification"},
        {SB, "--constraint=a&&b|--wrap=t", -LOOM_ECONSTRAINT, NULL},
        {SB, "--nodelist=/nonexistent/f|--wrap=t", -LOOM_EINVAL_NODENAME,
         "slurm_allocate_resources error opening file /nonexistent/f, No such file or directory"},
        {SB, "--bogus|--wrap=t", -LOOM_EUSAGE, "unrecognized option '--bogus'"},
        {SB, "--bogus=1|--wrap=t", -LOOM_EUSAGE, "unrecognized option '--bogus=1'"},
        {SB, "--nod=2|--wrap=t", -LOOM_EUSAGE,
         "option '--nod=2' is ambiguous; possibilities: '--nodefile' '--nodelist' '--nodes'"},
        {SB, "--n=2", -LOOM_EUSAGE,
         "option '--n=2' is ambiguous; possibilities: '--network' '--nice' '--no-kill' "
         "'--no-requeue' '--nodefile' '--nodelist' '--nodes' '--ntasks' '--ntasks-per-core' "
         "'--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket' '--ntasks-per-tres'"},
        {SB, "--requeue=x", -LOOM_EUSAGE, "option '--requeue' doesn't allow an argument"},
        {SB, "--req=x", -LOOM_EUSAGE, "option '--requeue' doesn't allow an argument"},
        {SB, "-y", -LOOM_EUSAGE, "invalid option -- 'y'"},
        {SB, "-vJ", -LOOM_EUSAGE, "option requires an argument -- 'J'"},
        {SB, "-Hl|x", -LOOM_EUSAGE, "invalid option -- 'l'"},
        {SB, "--nice|-5|x", -LOOM_EUSAGE, "invalid option -- '5'"},
        {SB, "--wrap=hostname|m0.sh", -LOOM_EPARSE,
         "Script arguments not permitted with --wrap option"},
        /* per-command tables */
        {SR, "--array=1|x", -LOOM_EUSAGE, "unrecognized option '--array=1'"},
        {SR, "--requeue|x", -LOOM_EUSAGE, "unrecognized option '--requeue'"},
        {SR, "-a|1", -LOOM_EUSAGE, "invalid option -- 'a'"},
        {SR, "--cpu=1|x", -LOOM_EUSAGE, /* the alias cpu_bind is not listed, as in glibc */
         "option '--cpu=1' is ambiguous; possibilities: '--cpu-bind' '--cpu-freq' "
         "'--cpus-per-gpu' '--cpus-per-task'"},
        {SR, "--job=x|x", -LOOM_EUSAGE,
         "option '--job=x' is ambiguous; possibilities: '--jobid' '--job-name'"},
        {SR, "-Kx|x", -LOOM_EPARSE, "Invalid numeric value \"x\" for --kill-on-bad-exit."},
        {SR, "-Wx|x", -LOOM_EPARSE, "Invalid numeric value \"x\" for --wait."},
        {SR, "-Ix|x", -LOOM_EPARSE, "Invalid numeric value \"x\" for immediate."},
        {SR, "--immediate=5x|x", -LOOM_EPARSE, "Invalid numeric value \"5x\" for immediate."},
        {SR, "--jobid=x|x", -LOOM_EPARSE, "Invalid numeric value \"x\" for --jobid."},
        {SR, "--exclusive=foo|x", -LOOM_EPARSE, "Invalid --exclusive specification"},
        {SA, "-o|x|true", -LOOM_EUSAGE, "invalid option -- 'o'"},
        {SA, "--wait|x", -LOOM_EPARSE, /* a unique prefix of --wait-all-nodes */
         "Invalid numeric value \"x\" for --wait-all-nodes."},
        {SA, "-Kx|true", -LOOM_EPARSE, "Invalid --kill-command specification"},
        {SA, "-Ix|true", -LOOM_EPARSE, "Invalid numeric value \"x\" for immediate."},
        {SA, "-N3-1", -LOOM_EINVAL_NODECOUNT,
         "Maximum node count 1 is less than minimum node count 3"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        if (cases[i].msg) {
            check_errors(&cases[i], 1, NULL);
            continue;
        }
        loom_jobopt_t o;
        loom_err_t err = {0};
        assert_int_equal(load_line(&o, cases[i].cmd, cases[i].args, NULL, &err), cases[i].rc);
        assert_non_null(strstr(err.msg, "Invalid feature specification"));
        loom_jobopt_free(&o);
    }
}

static void test_jobopt_env(void **state)
{
    static char *env1[] = {"SBATCH_JOB_NAME=envname",
                           "SBATCH_PARTITION=envpart",
                           "SBATCH_TIMELIMIT=2:00:00",
                           "SBATCH_ARRAY_INX=1-3",
                           "SBATCH_EXCLUSIVE=",
                           "SBATCH_GRES=gpu:1",
                           "SBATCH_GPUS_PER_NODE=2",
                           "SBATCH_MEM_PER_CPU=3G",
                           "SBATCH_CONSTRAINT=fast",
                           "SBATCH_REQUEUE=0",
                           "SBATCH_NO_REQUEUE=yes",
                           "SBATCH_SIGNAL=B:USR2@90",
                           "SBATCH_OUTPUT=o.txt",
                           "SBATCH_EXPORT=NONE",
                           "SLURM_NTASKS=7", /* not an sbatch input */
                           "SBATCH_ACCOUNT", /* no '=': ignored */
                           NULL};
    static const opt_case_t cases[] = {
        {SB, "--wrap=t", "name", "\"envname\""},
        {SB, "-J|cli|--wrap=t", "name", "\"cli\""},
        {SB, "--wrap=t", "partition", "\"envpart\""},
        {SB, "--wrap=t", "time_limit", "120"},
        {SB, "--time=5|--wrap=t", "time_limit", "5"},
        {SB, "--wrap=t", "array", "\"1-3\""},
        {SB, "--wrap=t", "exclusive", "\"true\""},
        {SB, "--wrap=t", "tres_per_node", "\"gres/gpu:1,gres/gpu:2\""},
        {SB, "--wrap=t", "memory_per_cpu", "3072"},
        {SB, "--mem=5G|--wrap=t", "memory_per_cpu", ""}, /* the variable gives way */
        {SB, "--mem=5G|--wrap=t", "memory_per_node", "5120"},
        {SB, "--wrap=t", "constraints", "\"fast\""},
        {SB, "--wrap=t", "requeue", "false"},
        {SB, "--wrap=t", "kill_warning_delay", "90"},
        {SB, "--wrap=t", "standard_output", "\"o.txt\""},
        {SB, "--wrap=t", "tasks", ""},
        {SB, "--wrap=t", "account", ""},
    };
    check_cases(cases, N(cases), env1);

    static char *env2[] = {
        "SLURM_NTASKS=4",          "SLURM_NPROCS=9",        "SLURM_JOB_NUM_NODES=2",
        "SLURM_JOB_NAME=batch",    "SLURM_JOB_ID=17",       "SLURM_CPUS_PER_TASK=3",
        "SLURM_MEM_PER_NODE=1000", "SLURM_EXPORT_ENV=NONE", "SLURM_LABELIO=1",
        "SLURM_OVERLAP=",          "SBATCH_TIMELIMIT=5",    NULL};
    static const opt_case_t srun_cases[] = {
        {SR, "hostname", "tasks", "4"}, /* SLURM_NTASKS wins over SLURM_NPROCS */
        {SR, "-n2|hostname", "tasks", "2"},
        {SR, "hostname", "minimum_nodes", "2"},
        {SR, "hostname", "name", ""}, /* the job's name is not the step's */
        {SR, "hostname", "cpus_per_task", "3"},
        {SR, "hostname", "memory_per_node", "1000"},
        {SR, "--mem-per-cpu=10|hostname", "memory_per_node", ""},
        {SR, "hostname", "time_limit", ""},
    };
    check_cases(srun_cases, N(srun_cases), env2);

    loom_jobopt_t o;
    loom_err_t err = {0};
    assert_int_equal(load_line(&o, SR, "hostname", env2, &err), 1);
    assert_int_equal(o.jobid, 17);
    assert_true(o.label && o.overlap);
    assert_string_equal(o.export_env, "NONE");
    assert_int_equal(loom_jobopt_source(&o, "ntasks"), LOOM_JOBOPT_SRC_ENV);
    loom_jobopt_free(&o);

    static char *env3[] = {"SLURM_JOB_NAME=named", "SALLOC_DEBUG=2",
                           "SALLOC_IMMEDIATE=", "SALLOC_NO_BELL=yes", NULL};
    assert_int_equal(load_line(&o, SR, "x", env3, &err), 1);
    assert_string_equal(o.job_name, "named"); /* outside an allocation it is read */
    loom_jobopt_free(&o);
    assert_int_equal(load_line(&o, SA, "", env3, &err), 1);
    assert_int_equal(o.verbose, 2);
    assert_int_equal(o.immediate, 1);
    assert_int_equal(o.ignored.n, 1);
    loom_jobopt_free(&o);
}

/* Flag-style variables are on when empty, "yes" or a non-zero number. */
static void test_jobopt_env_flags(void **state)
{
    static const struct {
        const char *value;
        bool on;
    } cases[] = {{"", true},   {"yes", true}, {"YES", true}, {"1", true},  {"2", true},
                 {"-1", true}, {"0", false},  {"no", false}, {"x", false}, {"false", false}};
    for (size_t i = 0; i < N(cases); i++) {
        char var[64];
        snprintf(var, sizeof(var), "SBATCH_WAIT=%s", cases[i].value);
        char *envp[] = {var, NULL};
        loom_jobopt_t o;
        assert_true(load_line(&o, SB, "--wrap=t", envp, NULL) >= 0);
        assert_int_equal(o.wait, cases[i].on);
        assert_int_equal(loom_jobopt_isset(&o, "wait"), cases[i].on);
        loom_jobopt_free(&o);
    }
}

static void test_jobopt_env_errors(void **state)
{
    static char *e1[] = {"SBATCH_TIMELIMIT=x", NULL};
    static char *e2[] = {"SBATCH_MEM_PER_CPU=3G", "SBATCH_MEM_PER_NODE=4G", NULL};
    static char *e3[] = {"SBATCH_NO_KILL=0", NULL};
    static char *e4[] = {"SLURM_NTASKS=x", NULL};
    static char *e5[] = {"SALLOC_KILL_CMD=x", NULL};
    static const struct {
        char **envp;
        err_case_t c;
    } cases[] = {
        {e1, {SB, "--wrap=t", -LOOM_EINVAL_TIME, "Invalid --time specification"}},
        {e1, {SB, "--time=5|--wrap=t", -LOOM_EINVAL_TIME, "Invalid --time specification"}},
        {e2,
         {SB, "--wrap=t", -LOOM_EINVAL_MEM,
          "SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive."}},
        {e3, {SB, "--wrap=t", -LOOM_EPARSE, "Invalid --no-kill specification"}},
        {e4, {SR, "x", -LOOM_EPARSE, "Invalid numeric value \"x\" for --ntasks."}},
        {e5, {SA, "x", -LOOM_EPARSE, "Invalid --kill-command specification"}},
    };
    for (size_t i = 0; i < N(cases); i++)
        check_errors(&cases[i].c, 1, cases[i].envp);
}

/* Directives from a script, as sbatch applies them. */
static int load_script(loom_jobopt_t *o, const char *script, const char *line, char *const *envp,
                       loom_err_t *err)
{
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    int rc = loom_jobscript_directives(script, strlen(script), NULL, "job.sh", &d, err);
    char buf[1024];
    char *argv[MAX_WORDS];
    int argc = split_args(SB, line, buf, sizeof(buf), argv);
    loom_jobopt_init(o, SB);
    if (rc >= 0)
        rc = loom_jobopt_load(o, argc, argv, envp, &d, err);
    loom_jobscript_dirs_free(&d);
    return rc;
}

/* Command line > environment > script (CLI_SPEC §0.8). */
static void test_jobopt_precedence(void **state)
{
    static const char script[] = "#!/bin/bash\n"
                                 "#SBATCH --job-name=script --partition=spart\n"
                                 "#SBATCH -t 10 --qos=sqos --mail-type=BEGIN\n"
                                 "#SBATCH -v\n"
                                 "hostname\n";
    static char *envp[] = {"SBATCH_JOB_NAME=env", "SBATCH_PARTITION=epart", NULL};
    loom_jobopt_t o;
    loom_err_t err = {0};
    assert_int_equal(load_script(&o, script, "-J|cli|--mail-type=END|-v|job.sh", envp, &err), 5);
    assert_string_equal(o.job_name, "cli");
    assert_string_equal(o.partition, "epart");
    assert_string_equal(o.qos, "sqos");
    assert_int_equal(o.time_limit, 10);
    assert_int_equal(o.mail_type, LOOM_MAIL_BEGIN | LOOM_MAIL_END); /* accumulates, as in Slurm */
    assert_int_equal(o.verbose, 2);
    assert_int_equal(loom_jobopt_source(&o, "job-name"), LOOM_JOBOPT_SRC_CLI);
    assert_int_equal(loom_jobopt_source(&o, "partition"), LOOM_JOBOPT_SRC_ENV);
    assert_int_equal(loom_jobopt_source(&o, "qos"), LOOM_JOBOPT_SRC_SCRIPT);
    assert_int_equal(loom_jobopt_source(&o, "account"), LOOM_JOBOPT_SRC_NONE);
    assert_int_equal(loom_jobopt_source(&o, "no-such-option"), LOOM_JOBOPT_SRC_NONE);
    assert_string_equal(o.argv.v[0], "job.sh");
    loom_jobopt_free(&o);

    /* Without the environment the script's values stand. */
    assert_int_equal(load_script(&o, script, "job.sh", NULL, &err), 1);
    assert_string_equal(o.job_name, "script");
    assert_string_equal(o.partition, "spart");
    loom_jobopt_free(&o);
}

/* --mem, --mem-per-cpu, --mem-per-gpu across sources (checked with real sbatch). */
static void test_jobopt_mem_sources(void **state)
{
    static const char s_mem[] = "#!/bin/sh\n#SBATCH --mem=1G\ntrue\n";
    static const char s_both[] = "#!/bin/sh\n#SBATCH --mem=1G\n#SBATCH --mem-per-cpu=2G\ntrue\n";
    static char *e_cpu[] = {"SBATCH_MEM_PER_CPU=3G", NULL};
    static char *e_node[] = {"SBATCH_MEM_PER_NODE=4G", NULL};
    static const struct {
        const char *script;
        char **envp;
        const char *line;
        int rc;
        uint64_t node, cpu, gpu;
    } cases[] = {
        {s_mem, NULL, "--mem-per-cpu=2G|x.sh", -LOOM_EINVAL_MEM, 0, 0, 0},
        {s_both, NULL, "x.sh", -LOOM_EINVAL_MEM, 0, 0, 0},
        {s_mem, e_cpu, "x.sh", 1, 1024, 0, 0},
        {s_mem, e_node, "x.sh", 1, 4096, 0, 0},
        {s_mem, e_cpu, "--mem=5G|x.sh", 2, 5120, 0, 0},
        {"#!/bin/sh\n", e_cpu, "x.sh", 1, 0, 3072, 0},
        {"#!/bin/sh\n", e_cpu, "--mem-per-gpu=1G|x.sh", 2, 0, 0, 1024},
        {s_mem, NULL, "--mem=2G|x.sh", 2, 2048, 0, 0},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_jobopt_t o;
        loom_err_t err = {0};
        int rc = load_script(&o, cases[i].script, cases[i].line, cases[i].envp, &err);
        assert_int_equal(rc, cases[i].rc);
        if (rc >= 0) {
            assert_int_equal(o.mem_per_node, cases[i].node);
            assert_int_equal(o.mem_per_cpu, cases[i].cpu);
            assert_int_equal(o.mem_per_gpu, cases[i].gpu);
            assert_int_equal(loom_jobopt_isset(&o, "mem-per-cpu"), cases[i].cpu != 0);
        }
        loom_jobopt_free(&o);
    }
}

static void test_jobopt_directive_errors(void **state)
{
    static const struct {
        const char *script;
        int rc;
        const char *msg;
    } cases[] = {
        {"#!/bin/sh\n#SBATCHX --qos=foo\n", -LOOM_EPARSE,
         "Invalid directive found in batch script: X (script line 2)"},
        {"#!/bin/sh\n#SBATCH -J \"\" --hold\n#SBATCH -p a\n", -LOOM_EPARSE,
         "Invalid directive found in batch script: a (script line 3)"},
        {"#!/bin/sh\n\n#SBATCH --time=abc\n", -LOOM_EINVAL_TIME,
         "Invalid --time specification (script line 3)"},
        {"#!/bin/sh\n#SBATCH --bogus\n", -LOOM_EUSAGE,
         "unrecognized option '--bogus' (script line 2)"},
        {"#!/bin/sh\n#SBATCH -n 1\n#SBATCH -J\n", -LOOM_EUSAGE,
         "option requires an argument -- 'J' (script line 3)"},
        {"#!/bin/sh\n#SBATCH --account=\"x\n", -LOOM_EPARSE,
         "job.sh: line 2: Unmatched `\"` in [--account=\"x]"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_jobopt_t o;
        loom_err_t err = {0};
        assert_int_equal(load_script(&o, cases[i].script, "x.sh", NULL, &err), cases[i].rc);
        assert_string_equal(err.msg, cases[i].msg);
        loom_jobopt_free(&o);
    }
}

/* The directive blocks of seeds 000, 003 and 004 (/work/shared/seeds). */
static void test_jobopt_seeds(void **state)
{
    static const char seed000[] = "#!/bin/bash\n\n#SBATCH --gres=gpu:1\n\nmodule load "
                                  "python/3.10\n\nsrun python train.py\n";
    static const char seed003[] = "#!/bin/bash --login\n"
                                  "#SBATCH --nodes=1\n"
                                  "#SBATCH --time=24:00:00\n"
                                  "#SBATCH --mem=0\n"
                                  "#SBATCH --ntasks=8\n"
                                  "#SBATCH --tasks-per-node=8\n"
                                  "#SBATCH --cpus-per-task=6\n"
                                  "#SBATCH --gres=gpu:v100:8\n"
                                  "#SBATCH --constraint=cpu_intel_platinum_8260\n"
                                  "#SBATCH --partition=batch\n"
                                  "#SBATCH --output=../results/%x/slurm-%j.out\n"
                                  "#SBATCH --error=../results/%x/slurm-%j.err\n";
    static const char seed004a[] = "#!/bin/bash\n"
                                   "#SBATCH --job-name=hyperparameter-sweep\n"
                                   "#SBATCH --partition=gpu\n"
                                   "#SBATCH --array=1-20%4\n"
                                   "#SBATCH --nodes=1\n"
                                   "#SBATCH --ntasks=1\n"
                                   "#SBATCH --cpus-per-task=8\n"
                                   "#SBATCH --gres=gpu:h100:1\n"
                                   "#SBATCH --mem=64G\n"
                                   "#SBATCH --time=02:00:00\n"
                                   "#SBATCH --output=sweep_%A_%a.out\n"
                                   "#SBATCH --error=sweep_%A_%a.err\n"
                                   "\n# Environment setup\nmodule load cuda/12.1\n";
    static const char seed004b[] =
        "#!/bin/bash\n"
        "#SBATCH --job-name=pytorch-multi-gpu\n"
        "#SBATCH --partition=gpu\n"
        "#SBATCH --nodes=2\n"
        "#SBATCH --ntasks-per-node=4\n"
        "#SBATCH --cpus-per-task=8\n"
        "#SBATCH --gres=gpu:h100:4\n"
        "#SBATCH --mem=256G\n"
        "#SBATCH --time=12:00:00\n"
        "#SBATCH --output=pytorch_multi_%j.out\n"
        "#SBATCH --error=pytorch_multi_%j.err\n\nmodule load cuda/12.1\n";
    static const struct {
        const char *script, *line, *json;
    } cases[] = {
        {seed000, "job.bash",
         "{\"argv\":[\"job.bash\"],\"submit_line\":\"sbatch job.bash\",\"tres_per_node\":\"gres/"
         "gpu:1\"}"},
        {seed003,
         "--job-name|horovod|--mail-user|USER_EMAIL|--mail-type=ALL|--export|SRC_DIR=/s,DATA_DIR=/"
         "d|horovod-single-node-job.sh",
         "{\"argv\":[\"horovod-single-node-job.sh\"],\"constraints\":\"cpu_intel_platinum_8260\","
         "\"cpus_per_task\":6,\"mail_type\":\"INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT\","
         "\"mail_user\":\"USER_EMAIL\",\"memory_per_node\":0,\"minimum_nodes\":1,\"name\":"
         "\"horovod\",\"partition\":\"batch\",\"standard_error\":\"../results/%x/slurm-%j.err\","
         "\"standard_output\":\"../results/%x/slurm-%j.out\",\"submit_line\":\"sbatch --job-name "
         "horovod --mail-user USER_EMAIL --mail-type=ALL --export SRC_DIR=/s,DATA_DIR=/d "
         "horovod-single-node-job.sh\",\"tasks\":8,\"tasks_per_node\":8,"
         "\"time_limit\":1440,\"tres_per_node\":\"gres/gpu:v100:8\"}"},
        {seed004a, "my_sweep.slurm",
         "{\"argv\":[\"my_sweep.slurm\"],\"array\":\"1-20%4\",\"cpus_per_task\":8,"
         "\"memory_per_node\":65536,\"minimum_nodes\":1,\"name\":\"hyperparameter-sweep\","
         "\"partition\":\"gpu\",\"standard_error\":\"sweep_%A_%a.err\",\"standard_output\":"
         "\"sweep_%A_%a.out\",\"submit_line\":\"sbatch "
         "my_sweep.slurm\",\"tasks\":1,\"time_limit\":120,\"tres_per_node\":\"gres/"
         "gpu:h100:1\"}"},
        {seed004b, "--parsable|--dependency=afterok:123:124:125|multi.slurm",
         "{\"argv\":[\"multi.slurm\"],\"cpus_per_task\":8,\"dependency\":\"afterok:123:124:125\","
         "\"memory_per_node\":262144,\"minimum_nodes\":2,\"name\":\"pytorch-multi-gpu\","
         "\"partition\":\"gpu\",\"standard_error\":\"pytorch_multi_%j.err\",\"standard_output\":"
         "\"pytorch_multi_%j.out\",\"submit_line\":\"sbatch --parsable "
         "--dependency=afterok:123:124:125 "
         "multi.slurm\",\"tasks_per_node\":4,\"time_limit\":720,\"tres_per_node\":"
         "\"gres/gpu:h100:4\"}"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_jobopt_t o;
        loom_err_t err = {0};
        assert_int_equal(loom_jobscript_check(cases[i].script, strlen(cases[i].script), &err), 0);
        if (load_script(&o, cases[i].script, cases[i].line, NULL, &err) < 0)
            fail_msg("seed %zu: %s", i, err.msg);
        json_t *j = loom_jobopt_to_json(&o);
        char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
        assert_string_equal(s, cases[i].json);
        free(s);
        json_decref(j);
        loom_jobopt_free(&o);
    }
}

/* Seed 000's srun line and seed 004's srun/salloc lines. */
static void test_jobopt_seed_commands(void **state)
{
    static const opt_case_t cases[] = {
        {SR, "python|train.py", "argv", "[\"python\",\"train.py\"]"},
        {SR, "--nodes=1|--ntasks=8|--gres=gpu:2|--time=01:00:00|--pty|bash", "tres_per_node",
         "\"gres/gpu:2\""},
        {SA, "--nodes=2|--ntasks=16|--gres=gpu:4|--time=02:00:00", "tasks", "16"},
    };
    check_cases(cases, N(cases), NULL);
}

static void test_jobopt_first_pass(void **state)
{
    char *argv[] = {"sbatch", "--time=bad", "-vh", "--usage", "-V", "job.sh", "-x", NULL};
    loom_jobopt_t o;
    loom_err_t err = {0};
    int first = 0;
    loom_jobopt_init(&o, SB);
    assert_int_equal(loom_jobopt_first_pass(&o, 7, argv, &first, &err), 0);
    assert_int_equal(first, 5);
    assert_true(o.help && o.usage && o.version);
    assert_int_equal(o.verbose, 1);
    assert_int_equal(o.time_limit, LOOM_TIME_NOT_SET);
    loom_jobopt_free(&o);

    char *bad[] = {"sbatch", "--bogus", "--help", NULL};
    loom_jobopt_init(&o, SB);
    assert_int_equal(loom_jobopt_first_pass(&o, 3, bad, &first, &err), -LOOM_EUSAGE);
    loom_jobopt_free(&o);
}

static void test_jobopt_nodefile(void **state)
{
    char path[] = "/tmp/test_jobopt_nodesXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char names[] = "n1,n2\nn3\n\n  n5 n4\n";
    assert_int_equal(write(fd, names, sizeof(names) - 1), (ssize_t)(sizeof(names) - 1));
    close(fd);
    char line[256];
    loom_jobopt_t o;
    loom_err_t err = {0};
    snprintf(line, sizeof(line), "-w|%s|-x|%s|--wrap=t", path, path);
    assert_true(load_line(&o, SB, line, NULL, &err) > 0);
    assert_string_equal(o.nodelist, "n[1-3,5,4]");
    assert_string_equal(o.exclude, "n[1-3,5,4]");
    loom_jobopt_free(&o);
    snprintf(line, sizeof(line), "-F|%s|--wrap=t", path);
    assert_true(load_line(&o, SB, line, NULL, &err) > 0);
    assert_string_equal(o.nodelist, "n[1-3,5,4]");
    loom_jobopt_free(&o);
    /* not a regular file */
    assert_int_equal(load_line(&o, SB, "-w|/dev/null|--wrap=t", NULL, &err), -LOOM_EINVAL_NODENAME);
    loom_jobopt_free(&o);
    unlink(path);
}

static void test_jobopt_cwd_and_env(void **state)
{
    loom_jobopt_t o;
    assert_true(load_line(&o, SB, "-D|rel/dir|--wrap=t", NULL, NULL) > 0);
    loom_jobopt_set_cwd(&o, "/home/u/");
    assert_string_equal(o.chdir, "/home/u/rel/dir");
    loom_jobopt_free(&o);
    assert_true(load_line(&o, SB, "--wrap=t", NULL, NULL) > 0);
    loom_jobopt_set_cwd(&o, "/home/u");
    assert_string_equal(o.chdir, "/home/u");
    loom_jobopt_set_cwd(&o, "/elsewhere"); /* absolute now: kept */
    assert_string_equal(o.chdir, "/home/u");
    loom_jobopt_free(&o);

    static char *envp[] = {"PATH=/bin", "HOME=/h", "SLURM_CONF=/c", "A=1", NULL};
    static const struct {
        const char *args;
        const char *want;
    } cases[] = {
        {"--wrap=t", "PATH=/bin HOME=/h SLURM_CONF=/c A=1"},
        {"--export=ALL|--wrap=t", "PATH=/bin HOME=/h SLURM_CONF=/c A=1"},
        {"--export=NONE|--wrap=t", "SLURM_CONF=/c"},
        {"--export=NIL|--wrap=t", ""},
        {"--export=HOME,B=2|--wrap=t", "SLURM_CONF=/c HOME=/h B=2"},
        {"--export=ALL,A=3,MISSING|--wrap=t", "PATH=/bin HOME=/h SLURM_CONF=/c A=3"},
        {"--export=NIL,B=1|--wrap=t", "B=1"},
        /* Commas inside quotes stay in the value, quotes included (sbatch 22.05);
         * a listed value wins over the submitter's. */
        {"--export=ALL,A=\"x,y\",B=c|--wrap=t", "PATH=/bin HOME=/h SLURM_CONF=/c A=\"x,y\" B=c"},
        {"--export=NONE,B='p,q'|--wrap=t", "SLURM_CONF=/c B='p,q'"},
        {"--export=ALL,A=|--wrap=t", "PATH=/bin HOME=/h SLURM_CONF=/c A="},
        {"--export=A|--wrap=t", "SLURM_CONF=/c A=1"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        assert_true(load_line(&o, SB, cases[i].args, NULL, NULL) > 0);
        loom_jobopt_export_env(&o, envp);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        for (size_t k = 0; k < o.env.n; k++)
            loom_sbuf_addf(&sb, "%s%s", k ? " " : "", o.env.v[k]);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
        loom_jobopt_free(&o);
    }
    assert_true(load_line(&o, SB, "--wrap=t", NULL, NULL) > 0);
    loom_jobopt_export_env(&o, envp);
    char *v = json_value(&o, "environment");
    assert_string_equal(v, "[\"PATH=/bin\",\"HOME=/h\",\"SLURM_CONF=/c\",\"A=1\"]");
    free(v);
    loom_jobopt_free(&o);
}

static void test_jobopt_texts(void **state)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_jobopt_help(SB, &sb);
    static const char usage[] =
        "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n";
    assert_true(strncmp(loom_sbuf_str(&sb), usage, sizeof(usage) - 1) == 0);
    assert_non_null(strstr(loom_sbuf_str(&sb), "\n  -a, --array=indexes"));
    assert_null(strstr(loom_sbuf_str(&sb), "--pty"));
    loom_sbuf_reset(&sb);
    loom_jobopt_help(SR, &sb);
    assert_non_null(strstr(loom_sbuf_str(&sb), "Usage: srun [OPTIONS(0)... [executable(0)"));
    assert_non_null(strstr(loom_sbuf_str(&sb), "      --pty"));
    assert_null(strstr(loom_sbuf_str(&sb), "--array"));
    loom_sbuf_reset(&sb);
    loom_jobopt_help(SA, &sb);
    assert_non_null(strstr(loom_sbuf_str(&sb), "Usage: salloc [OPTIONS(0)...]"));
    loom_sbuf_reset(&sb);
    loom_jobopt_usage(SB, &sb);
    assert_true(strncmp(loom_sbuf_str(&sb), "Usage: sbatch [-N nnodes]", 25) == 0);
    assert_non_null(strstr(loom_sbuf_str(&sb), "\n              [-J jobname]"));
    loom_sbuf_reset(&sb);
    loom_jobopt_version(&sb);
    assert_string_equal(loom_sbuf_str(&sb), "slurm " LOOM_SLURM_VERSION "\n");
    loom_sbuf_free(&sb);
}

static void test_jobopt_err_fmt(void **state)
{
    static const struct {
        loom_jobopt_cmd_t cmd;
        int code;
        const char *msg, *out;
    } cases[] = {
        {SB, -LOOM_EINVAL_TIME, "Invalid --time specification",
         "sbatch: error: Invalid --time specification\n"},
        {SR, -LOOM_EUSAGE, "invalid option -- 'y'",
         "srun: invalid option -- 'y'\nTry \"srun --help\" for more information\n"},
        {SA, -LOOM_EINVAL_MEM, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
         "salloc: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"},
        {SB, -LOOM_EPARSE, "line one\nline two",
         "sbatch: error: line one\nsbatch: error: line two\n"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_err_t err = {0};
        loom_errf(&err, cases[i].code, "%s", cases[i].msg);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_jobopt_err_fmt(cases[i].cmd, &err, &sb);
        assert_string_equal(loom_sbuf_str(&sb), cases[i].out);
        loom_sbuf_free(&sb);
    }
}

/* The table itself: per command, names and letters are unique and ids fit. */
static void test_jobopt_table(void **state)
{
    size_t n;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&n);
    assert_true(n <= LOOM_JOBOPT_MAX_IDS);
    for (int cmd = 0; cmd < 3; cmd++) {
        for (size_t i = 0; i < n; i++) {
            if (!(defs[i].cmds & (1u << cmd)))
                continue;
            assert_true(loom_jobopt_def_id(&defs[i]) >= 0);
            assert_non_null(defs[i].set);
            for (size_t k = i + 1; k < n; k++) {
                if (!(defs[k].cmds & (1u << cmd)))
                    continue;
                assert_string_not_equal(defs[i].name, defs[k].name);
                if (defs[i].letter)
                    assert_int_not_equal(defs[i].letter, defs[k].letter);
            }
        }
    }
    assert_int_equal(loom_jobopt_find_id("tasks-per-node"), loom_jobopt_find_id("ntasks-per-node"));
    assert_int_equal(loom_jobopt_find_id("nope"), -1);
    loom_jobopt_free(NULL);
}

/* Every accepted-and-ignored option takes its argument kind without complaint. */
/* Fewer tasks than nodes: one node per task, with Slurm's warning unless
 * the node count came from the environment alone (srun in an allocation). */
static void test_jobopt_nodes_for_tasks(void **state)
{
    static char *e_nodes[] = {"SLURM_NNODES=2", NULL};
    static char *e_tasks[] = {"SLURM_NTASKS=1", NULL};
    static const struct {
        loom_jobopt_cmd_t cmd;
        const char *line;
        char **envp;
        uint32_t min, max;
        const char *warning;
    } cases[] = {
        {LOOM_JOBOPT_SBATCH, "-N|5|-n|1|x", NULL, 1, 1,
         "can't run 1 processes on 5 nodes, setting nnodes to 1"},
        {LOOM_JOBOPT_SBATCH, "-N|2-5|-n|1|x", NULL, 1, 1,
         "can't run 1 processes on 2 nodes, setting nnodes to 1"},
        {LOOM_JOBOPT_SBATCH, "-N|1-5|-n|3|x", NULL, 1, 3, NULL},
        {LOOM_JOBOPT_SBATCH, "-N|3-5|-n|2|x", NULL, 2, 2,
         "can't run 2 processes on 3 nodes, setting nnodes to 2"},
        {LOOM_JOBOPT_SBATCH, "-N|2|-n|4|x", NULL, 2, 0, NULL},
        {LOOM_JOBOPT_SBATCH, "-N|2|x", NULL, 2, 0, NULL},
        {LOOM_JOBOPT_SALLOC, "-N|3|-n|1", NULL, 1, 1,
         "can't run 1 processes on 3 nodes, setting nnodes to 1"},
        {LOOM_JOBOPT_SRUN, "-n|1|true", e_nodes, 1, 1, NULL},
        {LOOM_JOBOPT_SRUN, "-N|2|true", e_tasks, 1, 1,
         "can't run 1 processes on 2 nodes, setting nnodes to 1"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        loom_jobopt_t o;
        loom_err_t err = {0};
        if (load_line(&o, cases[i].cmd, cases[i].line, cases[i].envp, &err) < 0)
            fail_msg("%s: %s", cases[i].line, err.msg);
        assert_int_equal(o.min_nodes, cases[i].min);
        assert_int_equal(o.max_nodes, cases[i].max);
        assert_int_equal(o.warnings.n, cases[i].warning != NULL);
        if (cases[i].warning)
            assert_string_equal(o.warnings.v[0], cases[i].warning);
        loom_jobopt_free(&o);
    }
}

static void test_jobopt_ignored(void **state)
{
    size_t n;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&n);
    for (int cmd = 0; cmd < 3; cmd++) {
        for (size_t i = 0; i < n; i++) {
            const loom_jobopt_def_t *d = &defs[i];
            if (!(d->cmds & (1u << cmd)) || !(d->flags & LOOM_JOBOPT_F_IGNORED))
                continue;
            char line[128];
            snprintf(line, sizeof(line), "--%s%s|x", d->name,
                     d->arg == LOOM_JOBOPT_ARG_NONE ? "" : "=v");
            loom_jobopt_t o;
            loom_err_t err = {0};
            if (load_line(&o, (loom_jobopt_cmd_t)cmd, line, NULL, &err) < 0)
                fail_msg("%s: %s", line, err.msg);
            assert_int_equal(o.ignored.n, 1);
            loom_jobopt_free(&o);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobopt_forms),
        cmocka_unit_test(test_jobopt_fields),
        cmocka_unit_test(test_jobopt_errors),
        cmocka_unit_test(test_jobopt_env),
        cmocka_unit_test(test_jobopt_env_flags),
        cmocka_unit_test(test_jobopt_env_errors),
        cmocka_unit_test(test_jobopt_precedence),
        cmocka_unit_test(test_jobopt_mem_sources),
        cmocka_unit_test(test_jobopt_directive_errors),
        cmocka_unit_test(test_jobopt_seeds),
        cmocka_unit_test(test_jobopt_seed_commands),
        cmocka_unit_test(test_jobopt_first_pass),
        cmocka_unit_test(test_jobopt_nodefile),
        cmocka_unit_test(test_jobopt_cwd_and_env),
        cmocka_unit_test(test_jobopt_texts),
        cmocka_unit_test(test_jobopt_err_fmt),
        cmocka_unit_test(test_jobopt_table),
        cmocka_unit_test(test_jobopt_ignored),
        cmocka_unit_test(test_jobopt_nodes_for_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * jobopt.h - the one job-option parser shared by sbatch, srun and salloc
 * (CLI_SPEC §0.8, §1, §2, §3, §12 input variables).
 *
 * One table (jobopt_table.c) drives everything: every long option, its short
 * letter, argument kind, the commands that accept it, the input environment
 * variable(s) of each command, its setter, and its --help line. The option set
 * per command is Slurm 22.05's (long names, aliases such as --tasks-per-node,
 * short letters); P2 options are accepted and ignored (listed in o->ignored so
 * the command can say so with -v).
 *
 * Sources and precedence (§0.8): command line > input environment variables >
 * #SBATCH directives. loom_jobopt_load() applies them in reverse order into one
 * struct, so a later source overrides an earlier one; o->src[] records which
 * source set each option last. Options that accumulate in Slurm accumulate
 * here too (-v, --mail-type). Memory: --mem, --mem-per-cpu and --mem-per-gpu
 * are mutually exclusive; a memory variable from the environment gives way to
 * a different memory option from the script or command line (Slurm's rule).
 *
 * Argument syntax is getopt_long's, re-entrant: "--opt=val", "--opt val",
 * "-xval", "-x val", bundled flags "-Hv", unique prefixes of long names
 * ("--nod" is ambiguous: nodefile, nodelist, nodes), optional arguments only
 * attached ("--nice=5", "-k0"), "--" ends the options, and the first
 * non-option ends them too: for sbatch it is the script (what follows are the
 * script's arguments), for srun and salloc the command.
 *
 * Errors: 0 or a count on success, negative on failure, with err->msg in
 * Slurm's words ("Invalid --time specification", "Invalid numeric value \"x\"
 * for --ntasks."). Errors at the getopt level (unknown option, missing
 * argument, ambiguous prefix) are -LOOM_EUSAGE with glibc's text
 * ("unrecognized option '--bogus'"); memory options that exclude each other
 * are -LOOM_EINVAL_MEM (Slurm reports those as fatal); bad values are mostly
 * -LOOM_EPARSE. loom_jobopt_err_fmt() renders each kind exactly as the Slurm
 * command prints it. A directive error ends with
 * " (script line N)". On failure the struct may hold the options parsed before
 * the bad one; the caller reports and exits.
 *
 * Ownership: the struct owns every string; loom_jobopt_free() releases them
 * (accepts NULL). Library code: nothing is printed.
 */
#ifndef LOOM_JOBOPT_H
#define LOOM_JOBOPT_H

#include "common/err.h"
#include "common/jobscript.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef enum {
    LOOM_JOBOPT_SBATCH = 0,
    LOOM_JOBOPT_SRUN = 1,
    LOOM_JOBOPT_SALLOC = 2,
} loom_jobopt_cmd_t;

/* Who set an option last (o->src[]). */
typedef enum {
    LOOM_JOBOPT_SRC_NONE = 0,
    LOOM_JOBOPT_SRC_SCRIPT,
    LOOM_JOBOPT_SRC_ENV,
    LOOM_JOBOPT_SRC_CLI,
} loom_jobopt_src_t;

/* --exclusive */
typedef enum {
    LOOM_JOBOPT_EXCL_UNSET = 0,
    LOOM_JOBOPT_EXCL_NODE, /* --exclusive */
    LOOM_JOBOPT_EXCL_USER, /* --exclusive=user */
    LOOM_JOBOPT_EXCL_MCS,  /* --exclusive=mcs */
} loom_jobopt_excl_t;

/* --mail-type bits; LOOM_MAIL_NONE wins over the others ("NONE"). */
enum {
    LOOM_MAIL_BEGIN = 1u << 0,
    LOOM_MAIL_END = 1u << 1,
    LOOM_MAIL_FAIL = 1u << 2,
    LOOM_MAIL_REQUEUE = 1u << 3,
    LOOM_MAIL_TIME100 = 1u << 4, /* TIME_LIMIT */
    LOOM_MAIL_TIME90 = 1u << 5,
    LOOM_MAIL_TIME80 = 1u << 6,
    LOOM_MAIL_TIME50 = 1u << 7,
    LOOM_MAIL_STAGE_OUT = 1u << 8,
    LOOM_MAIL_ARRAY_TASKS = 1u << 9,
    LOOM_MAIL_INVALID_DEPEND = 1u << 10,
    LOOM_MAIL_NONE = 1u << 15,
};

#define LOOM_JOBOPT_MAX_IDS      192
#define LOOM_JOBOPT_SIGNAL_DELAY 60 /* --signal lead time when no @secs */

typedef struct loom_jobopt {
    loom_jobopt_cmd_t cmd;
    time_t now; /* reference time for --begin/--deadline (init: time(NULL)) */

    /* What the command itself does. */
    bool help, usage, version;
    int verbose, quiet;
    bool parsable, test_only, wait, hold;
    char *wrap; /* --wrap command */

    /* Names and accounting. */
    char *job_name, *partition, *account, *qos, *reservation, *wckey, *comment;
    char *licenses, *dependency, *mail_user, *chdir, *prefer, *export_env;
    char *clusters;     /* -M/--clusters list as given (sbatch names the one it submits to) */
    uint32_t mail_type; /* LOOM_MAIL_* */

    /* I/O patterns (CLI_SPEC §1.1); "none" is stored as "/dev/null". */
    char *std_out, *std_err, *std_in;
    char open_mode; /* 0, 'a' (append) or 't' (truncate) */

    /* Size. Counts are 0 when not given (see loom_jobopt_isset). */
    uint32_t min_nodes, max_nodes; /* -N min[-max]; max 0 when no range */
    uint32_t ntasks, ntasks_per_node, ntasks_per_socket, ntasks_per_core, ntasks_per_gpu;
    uint32_t cpus_per_task, mincpus, sockets_per_node, cores_per_socket, threads_per_core;
    uint32_t cpus_per_gpu;
    uint64_t mem_per_node, mem_per_cpu, mem_per_gpu, tmp_disk; /* MiB; --mem=0: whole node */
    char *gres;                                                /* --gres, validated */
    char *gpus, *gpus_per_node, *gpus_per_task, *gpus_per_socket;
    bool contiguous, overcommit, oversubscribe, spread_job, use_min_nodes, reboot;
    loom_jobopt_excl_t exclusive;
    char *nodelist, *exclude; /* hostlist text (from the file when the value had '/') */
    char *constraint;         /* validated */
    char *distribution, *hint, *cpu_bind, *mem_bind, *gpu_bind;

    /* Time: minutes, LOOM_TIME_NOT_SET or LOOM_TIME_INFINITE (timefmt.h). */
    int64_t time_limit, time_min;
    time_t begin, deadline; /* 0 when not given */

    /* Arrays, policy. */
    char *array;             /* --array as given (validated) */
    int requeue;             /* -1 unset, 0 --no-requeue, 1 --requeue */
    int kill_on_invalid_dep; /* -1 unset, 0 no, 1 yes */
    int32_t nice;            /* --nice (100 without a value) */
    uint32_t priority;       /* --priority (ignored when priority_top) */
    bool priority_top;       /* --priority=TOP */
    int wait_all_nodes;      /* -1 unset, else the value */
    bool no_kill;            /* -k */

    /* --signal=[{R|B}:]sig[@secs] */
    int warn_signal;    /* 0 when not given */
    int warn_time;      /* seconds before the end (default 60) */
    bool warn_batch;    /* B: the batch shell only */
    bool warn_resv_end; /* R: also at reservation end */

    /* srun / salloc. */
    bool label, unbuffered, pty, overlap, exact, multi_prog, no_allocate, disable_status;
    bool preserve_env, no_shell;
    int kill_on_bad_exit; /* -1 unset, 0, 1 */
    char *mpi;
    int immediate;  /* -I[secs]: seconds, 0 when not given */
    uint32_t jobid; /* --jobid (srun) */
    int step_wait;  /* srun -W secs, -1 unset */
    char *kill_cmd; /* salloc -K[signal] ("" without one) */

    loom_strv_t ignored;  /* "--name[=value]" of options accepted and ignored */
    loom_strv_t warnings; /* after loom_jobopt_load: "Warning: ..." lines for the command */
    loom_strv_t argv;     /* after loom_jobopt_load: script args (sbatch) or the command */
    char *submit_line;    /* after loom_jobopt_load: the command line, words joined by blanks */
    char *propagate;      /* --propagate[=list]: "" for all, NULL when not given (rlimits.h) */
    loom_strv_t env;      /* the job's environment ("K=V"); see loom_jobopt_export_env */
    uint8_t src[LOOM_JOBOPT_MAX_IDS]; /* loom_jobopt_src_t per option id */
    loom_jobopt_src_t cur_src;        /* the source being parsed */
} loom_jobopt_t;

void loom_jobopt_init(loom_jobopt_t *o, loom_jobopt_cmd_t cmd);
void loom_jobopt_free(loom_jobopt_t *o);

/* "sbatch", "srun", "salloc". */
const char *loom_jobopt_cmd_name(loom_jobopt_cmd_t cmd);

/* Was the option (long name, any alias) set by any source? */
bool loom_jobopt_isset(const loom_jobopt_t *o, const char *name);
/* Its source (LOOM_JOBOPT_SRC_NONE when unset or unknown). */
loom_jobopt_src_t loom_jobopt_source(const loom_jobopt_t *o, const char *name);

/* Parse argv[1..] as command-line options; *first_arg gets the index of the
 * first argument that is not an option (argc when none). */
int loom_jobopt_parse_args(loom_jobopt_t *o, int argc, char *const argv[], int *first_arg,
                           loom_err_t *err);
/* The first pass Slurm makes over the command line: only -h, --usage, -V, -v
 * and -Q take effect, other options are checked for syntax (getopt-level
 * errors) but not applied; finds *first_arg (the script for sbatch). */
int loom_jobopt_first_pass(loom_jobopt_t *o, int argc, char *const argv[], int *first_arg,
                           loom_err_t *err);
/* Apply the command's input environment variables (envp: "K=V" strings). */
int loom_jobopt_parse_env(loom_jobopt_t *o, char *const envp[], loom_err_t *err);
/* Apply directive arguments (lines[i] is args->v[i]'s script line, or NULL). A
 * non-option argument is "Invalid directive found in batch script: X". */
int loom_jobopt_parse_directives(loom_jobopt_t *o, const loom_strv_t *args, const int *lines,
                                 loom_err_t *err);
/* Checks across options once every source is in (memory exclusivity). */
int loom_jobopt_finish(loom_jobopt_t *o, loom_err_t *err);

/* Everything in Slurm's order: directives (dirs may be NULL), environment
 * (envp may be NULL), command line, then loom_jobopt_finish. The arguments
 * after the options go to o->argv. sbatch with --wrap refuses script
 * arguments. Returns the index of the first non-option argument. */
int loom_jobopt_load(loom_jobopt_t *o, int argc, char *const argv[], char *const envp[],
                     const loom_jobscript_dirs_t *dirs, loom_err_t *err);

/* Make --chdir absolute against cwd (the submit directory), or set it to cwd
 * when not given. */
void loom_jobopt_set_cwd(loom_jobopt_t *o, const char *cwd);

/* The job environment per --export (default ALL): ALL takes envp; NONE takes
 * only SLURM_* variables; NIL takes nothing; VAR=val items are set and VAR
 * items copied from envp; a list without ALL/NONE/NIL behaves as NONE plus the
 * list. Fills o->env (replacing it). */
void loom_jobopt_export_env(loom_jobopt_t *o, char *const envp[]);

/* The job description of the job.submit message (docs/proto/messages.md §2):
 * a new object, caller decrefs. Only what was given is present. Keys:
 *   name, partition, account, qos, reservation, wckey, comment, licenses,
 *   dependency, mail_user, prefer: strings as given
 *   mail_type            "BEGIN,END" in Slurm's order, "NONE"
 *   current_working_directory   --chdir (see loom_jobopt_set_cwd)
 *   standard_output, standard_error, standard_input: patterns
 *   open_mode            "append" | "truncate"
 *   minimum_nodes, maximum_nodes   -N (maximum only for a range)
 *   tasks, tasks_per_node, tasks_per_socket, tasks_per_core, ntasks_per_gpu,
 *   cpus_per_task, minimum_cpus_per_node (--mincpus), sockets_per_node,
 *   cores_per_socket, threads_per_core, cpus_per_gpu: integers
 *   memory_per_node, memory_per_cpu, memory_per_gpu, temporary_disk_per_node:
 *                        MiB (memory_per_node 0 = the whole node)
 *   tres_per_node        --gres and --gpus-per-node: "gres/gpu:a100:2,gres/shard:1"
 *   tres_per_job, tres_per_task, tres_per_socket   --gpus, --gpus-per-task,
 *                        --gpus-per-socket: "gres/gpu:[type:]N"
 *   cpus_per_tres        --cpus-per-gpu: "gres/gpu:N"
 *   time_limit, time_minimum   minutes; -1 = infinite (time_limit 0 = no
 *                        limit of its own, the partition's applies)
 *   begin_time, deadline epoch seconds
 *   array                "1-20%4"
 *   constraints          -C text
 *   required_nodes, excluded_nodes   hostlist text
 *   exclusive            "true" (whole nodes), "user", "mcs"
 *   oversubscribe, contiguous, overcommit, hold, reboot, spread_job,
 *   use_min_nodes, kill_on_invalid_dependency: true when given
 *   requeue              true (--requeue) or false (--no-requeue)
 *   nice, priority       integers; priority "TOP" for --priority=TOP
 *   kill_warning_signal, kill_warning_delay   --signal number and seconds
 *   kill_warning_flags   ["BATCH_JOB"] for B:, "RESERVATION" for R:
 *   wait_all_nodes       0 | 1
 *   immediate            seconds (srun/salloc -I)
 *   kill_on_node_fail    false for -k/--no-kill
 *   distribution, hint, cpu_binding, memory_binding, gpu_binding: strings
 *   environment          ["K=V", ...] from o->env (when not empty)
 *   argv                 o->argv (when not empty)
 */
json_t *loom_jobopt_to_json(const loom_jobopt_t *o);

/* --help, --usage and -V texts (appended to out, ending in '\n'). */
void loom_jobopt_help(loom_jobopt_cmd_t cmd, loom_sbuf_t *out);
void loom_jobopt_usage(loom_jobopt_cmd_t cmd, loom_sbuf_t *out);
void loom_jobopt_version(loom_sbuf_t *out);

/* err as the command prints it: "sbatch: error: <line>\n" for each line of
 * the message ("fatal" for -LOOM_EINVAL_MEM), or for -LOOM_EUSAGE "sbatch: <msg>\nTry \"sbatch
 * --help\" for more information\n". */
void loom_jobopt_err_fmt(loom_jobopt_cmd_t cmd, const loom_err_t *err, loom_sbuf_t *out);

#endif

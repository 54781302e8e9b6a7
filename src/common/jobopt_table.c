/*
 * jobopt_table.c - the sbatch/srun/salloc option table and its setters.
 * See jobopt_table.h and jobopt.h (CLI_SPEC §1, §2, §3).
 *
 * Value rules follow what Slurm 22.05's clients accept, checked against the
 * real commands: counts are decimal ("+4" and "010" are fine, "4x", "0x10" and
 * values over INT32_MAX are not); --nice and --priority read a leading number
 * and ignore the rest, as Slurm's strtoll does; --signal names are Slurm's 16.
 */
#include "common/jobopt_table.h"
#include "common/constraint.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/memsize.h"
#include "common/rangeset.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOBOPT_NICE_MAX      2147483645LL /* Slurm's NICE_OFFSET - 3 */
#define JOBOPT_ARRAY_MAX     4000000u     /* Slurm's largest MaxArraySize - 1 */
#define JOBOPT_NODEFILE_MAX  (1 << 20)    /* bytes read from a node file */
#define JOBOPT_SIGNAL_MAX    65535
#define JOBOPT_WARN_TIME_MAX 65535

/* ---- helpers ------------------------------------------------------------- */

static const char *jobopt_name(const loom_jobopt_def_t *d)
{
    return d->canon ? d->canon : d->name;
}

#define FIELD(o, d, type) ((type *)(void *)((char *)(o) + (d)->off))

static void jobopt_replace(char **field, const char *val)
{
    free(*field);
    *field = val ? loom_xstrdup(val) : NULL;
}

/* Slurm's parse_int: decimal, optional sign, nothing after; positive > 0. */
static int jobopt_parse_int(const loom_jobopt_def_t *d, const char *arg, bool positive,
                            int64_t *out, loom_err_t *err)
{
    const char *p = arg;
    while (isspace((unsigned char)*p)) /* strtol skips leading blanks */
        p++;
    if (*p == '+' || *p == '-')
        p++;
    char *end;
    errno = 0;
    long long v = isdigit((unsigned char)*p) ? strtoll(arg, &end, 10) : 0;
    if (!isdigit((unsigned char)*p) || *end || errno || v > INT32_MAX || v < INT32_MIN ||
        (positive && v <= 0) || (!positive && v < 0))
        return loom_errf(err, -LOOM_EPARSE, "Invalid numeric value \"%s\" for --%s.", arg,
                         jobopt_name(d));
    *out = v;
    return 0;
}

/* strtoll's reading: a leading number, the rest ignored ("x" is 0). */
static long long jobopt_lenient_ll(const char *arg)
{
    errno = 0;
    long long v = strtoll(arg, NULL, 10);
    return errno ? (v < 0 ? LLONG_MIN : LLONG_MAX) : v;
}

static int jobopt_invalid(const loom_jobopt_def_t *d, int code, loom_err_t *err)
{
    return loom_errf(err, code, "Invalid --%s specification", jobopt_name(d));
}

/* ---- generic setters ---------------------------------------------------- */

static int jobopt_set_str(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                          loom_err_t *err)
{
    jobopt_replace(FIELD(o, d, char *), arg ? arg : "");
    return 0;
}

/* -o/-e/-i: "none" (any case) is /dev/null, as Slurm stores it. */
static int jobopt_set_io(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                         loom_err_t *err)
{
    jobopt_replace(FIELD(o, d, char *), strcasecmp(arg, "none") == 0 ? "/dev/null" : arg);
    return 0;
}

static int jobopt_set_flag(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                           loom_err_t *err)
{
    *FIELD(o, d, bool) = true;
    return 0;
}

static int jobopt_set_pos(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                          loom_err_t *err)
{
    int64_t v;
    int rc = jobopt_parse_int(d, arg, true, &v, err);
    if (rc == 0)
        *FIELD(o, d, uint32_t) = (uint32_t)v;
    return rc;
}

/* A non-negative int field (-W secs, --wait-all-nodes). */
static int jobopt_set_int(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                          loom_err_t *err)
{
    int64_t v;
    int rc = jobopt_parse_int(d, arg, false, &v, err);
    if (rc == 0)
        *FIELD(o, d, int) = (int)v;
    return rc;
}

static int jobopt_set_mem(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                          loom_err_t *err)
{
    uint64_t mib;
    if (loom_mem_parse_mib(arg, &mib, NULL) < 0)
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    *FIELD(o, d, uint64_t) = mib;
    return 0;
}

static int jobopt_set_time(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                           loom_err_t *err)
{
    int64_t mins;
    if (loom_time_parse_mins(arg, &mins, NULL) < 0)
        return jobopt_invalid(d, -LOOM_EINVAL_TIME, err);
    *FIELD(o, d, int64_t) = mins;
    return 0;
}

static int jobopt_set_date(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                           loom_err_t *err)
{
    time_t t;
    if (loom_date_parse(arg, o->now, &t, NULL) < 0)
        return jobopt_invalid(d, -LOOM_EINVAL_BEGIN, err);
    *FIELD(o, d, time_t) = t;
    return 0;
}

/* -G and --gpus-per-*: "[type:]N[,...]". */
static int jobopt_set_gpus(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                           loom_err_t *err)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    int rc = loom_gres_parse_gpus(arg, &l, NULL);
    loom_gres_list_free(&l);
    if (rc < 0)
        return loom_errf(err, -LOOM_EINVAL_GRES, "Invalid generic resource (gres) specification");
    jobopt_replace(FIELD(o, d, char *), arg);
    return 0;
}

/* Accepted and ignored (CLI_SPEC P2): remembered for -v. */
static int jobopt_set_ignore(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                             loom_err_t *err)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "--%s", d->name);
    if (arg)
        loom_sbuf_addf(&sb, "=%s", arg);
    loom_strv_take(&o->ignored, loom_sbuf_detach(&sb));
    return 0;
}

/* ---- specific setters --------------------------------------------------- */

static int jobopt_set_gres(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                           loom_err_t *err)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    int rc = loom_gres_parse(arg, &l, NULL);
    loom_gres_list_free(&l);
    if (rc < 0)
        return loom_errf(err, -LOOM_EINVAL_GRES, "Invalid generic resource (gres) specification");
    jobopt_replace(&o->gres, arg);
    return 0;
}

static int jobopt_set_constraint(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                 loom_err_t *err)
{
    loom_constraint_t *c = NULL;
    int rc = loom_constraint_parse(arg, &c, err);
    loom_constraint_free(c);
    if (rc < 0)
        return rc;
    jobopt_replace(&o->constraint, arg);
    return 0;
}

static int jobopt_set_array(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                            loom_err_t *err)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    uint32_t throttle;
    int rc = loom_rangeset_parse_array(arg, JOBOPT_ARRAY_MAX, &rs, &throttle, NULL);
    loom_rangeset_free(&rs);
    /* Worded as sbatch 22.05 reports it: its controller checks the spec. */
    if (rc < 0)
        return loom_errf(err, -LOOM_EINVAL_ARRAY,
                         "Batch job submission failed: Invalid job array specification");
    jobopt_replace(&o->array, arg);
    return 0;
}

/* Digits with an optional k (x1024) or m (x1024^2) suffix, as Slurm reads counts. */
static int jobopt_node_num(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    size_t i = 0;
    for (; i < n && isdigit((unsigned char)s[i]); i++) {
        v = v * 10 + (s[i] - '0');
        if (v > INT32_MAX)
            return -1;
    }
    if (i == 0)
        return -1;
    if (i < n && i + 1 == n && strchr("kKmM", s[i]))
        v *= tolower((unsigned char)s[i]) == 'k' ? 1024 : 1024 * 1024;
    else if (i != n)
        return -1;
    if (v > INT32_MAX)
        return -1;
    *out = v;
    return 0;
}

/* -N min[-max]; "-max" means 1-max. */
static int jobopt_set_nodes(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                            loom_err_t *err)
{
    const char *dash = strchr(arg, '-');
    size_t n1 = dash ? (size_t)(dash - arg) : strlen(arg);
    int64_t lo = 1, hi = 0;
    if ((n1 && jobopt_node_num(arg, n1, &lo) < 0) || (!n1 && !dash))
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT, "\"%s\" is not a valid node count", arg);
    if (dash && jobopt_node_num(dash + 1, strlen(dash + 1), &hi) < 0)
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT, "\"%s\" is not a valid node count", dash + 1);
    if (dash && hi < lo)
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT,
                         "Maximum node count %lld is less than minimum node count %lld",
                         (long long)hi, (long long)lo);
    o->min_nodes = (uint32_t)lo;
    o->max_nodes = dash ? (uint32_t)hi : 0;
    return 0;
}

/* A node list, or the names in a file when the value contains '/'. */
static int jobopt_read_nodefile(const char *path, loom_sbuf_t *text, loom_err_t *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > JOBOPT_NODEFILE_MAX) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        return loom_errf(err, -LOOM_EINVAL_NODENAME,
                         "slurm_allocate_resources error opening file %s, %s", path, strerror(e));
    }
    char buf[4096];
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) > 0 && text->len <= JOBOPT_NODEFILE_MAX)
        loom_sbuf_addn(text, buf, (size_t)r);
    close(fd);
    return 0;
}

static int jobopt_nodes_from_file(const char *path, char **out, loom_err_t *err)
{
    loom_sbuf_t text = LOOM_SBUF_INIT;
    int rc = jobopt_read_nodefile(path, &text, err);
    loom_strv_t names = LOOM_STRV_INIT;
    loom_hostlist_t *hl = loom_hostlist_create();
    if (rc == 0)
        loom_strv_split(&names, loom_sbuf_str(&text), " \t\r\n,");
    for (size_t i = 0; rc == 0 && i < names.n; i++)
        if ((rc = loom_hostlist_push_expr(hl, names.v[i], err)) > 0)
            rc = 0; /* a count of names */
    if (rc == 0 && loom_hostlist_count(hl) == 0)
        rc = loom_errf(err, -LOOM_EINVAL_NODENAME, "Node file %s names no node", path);
    if (rc == 0) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_hostlist_ranged(hl, &sb);
        *out = loom_sbuf_detach(&sb);
    }
    loom_hostlist_destroy(hl);
    loom_strv_free(&names);
    loom_sbuf_free(&text);
    return rc;
}

static int jobopt_set_nodelist(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                               loom_err_t *err)
{
    char **field = FIELD(o, d, char *);
    if (!strchr(arg, '/')) {
        jobopt_replace(field, arg);
        return 0;
    }
    char *names;
    int rc = jobopt_nodes_from_file(arg, &names, err);
    if (rc < 0)
        return rc;
    free(*field);
    *field = names;
    return 0;
}

/* -F: always a file. */
static int jobopt_set_nodefile(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                               loom_err_t *err)
{
    char *names;
    int rc = jobopt_nodes_from_file(arg, &names, err);
    if (rc < 0)
        return rc;
    free(o->nodelist);
    o->nodelist = names;
    return 0;
}

static int jobopt_set_exclusive(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                loom_err_t *err)
{
    if (!arg)
        o->exclusive = LOOM_JOBOPT_EXCL_NODE;
    else if (strcasecmp(arg, "user") == 0)
        o->exclusive = LOOM_JOBOPT_EXCL_USER;
    else if (strcasecmp(arg, "mcs") == 0)
        o->exclusive = LOOM_JOBOPT_EXCL_MCS;
    else
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    return 0;
}

static int jobopt_set_open_mode(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                loom_err_t *err)
{
    char c = (char)tolower((unsigned char)arg[0]);
    if (c != 'a' && c != 't')
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    o->open_mode = c;
    return 0;
}

typedef struct jobopt_mail_name {
    const char *name;
    uint32_t bits;
} jobopt_mail_name_t;

/* In the order Slurm prints them. */
static const jobopt_mail_name_t jobopt_mail_names[] = {
    {"ARRAY_TASKS", LOOM_MAIL_ARRAY_TASKS},
    {"INVALID_DEPEND", LOOM_MAIL_INVALID_DEPEND},
    {"BEGIN", LOOM_MAIL_BEGIN},
    {"END", LOOM_MAIL_END},
    {"FAIL", LOOM_MAIL_FAIL},
    {"REQUEUE", LOOM_MAIL_REQUEUE},
    {"STAGE_OUT", LOOM_MAIL_STAGE_OUT},
    {"TIME_LIMIT_50", LOOM_MAIL_TIME50},
    {"TIME_LIMIT_80", LOOM_MAIL_TIME80},
    {"TIME_LIMIT_90", LOOM_MAIL_TIME90},
    {"TIME_LIMIT", LOOM_MAIL_TIME100},
    {"ALL", LOOM_MAIL_BEGIN | LOOM_MAIL_END | LOOM_MAIL_FAIL | LOOM_MAIL_REQUEUE |
                LOOM_MAIL_STAGE_OUT | LOOM_MAIL_INVALID_DEPEND},
    {"NONE", LOOM_MAIL_NONE},
};

#define JOBOPT_NMAIL (sizeof(jobopt_mail_names) / sizeof(jobopt_mail_names[0]))

void loom_jobopt_mail_fmt(uint32_t bits, loom_sbuf_t *out)
{
    if (bits & LOOM_MAIL_NONE) {
        loom_sbuf_add(out, "NONE");
        return;
    }
    const char *sep = "";
    for (size_t k = 0; k < JOBOPT_NMAIL; k++) {
        uint32_t b = jobopt_mail_names[k].bits;
        if ((b & (b - 1)) == 0 && (bits & b)) { /* single bits: not ALL */
            loom_sbuf_addf(out, "%s%s", sep, jobopt_mail_names[k].name);
            sep = ",";
        }
    }
}

/* Unknown words are skipped, as Slurm does; no known word at all is an error.
 * Values accumulate across sources; NONE anywhere wins. */
static int jobopt_set_mail_type(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                loom_err_t *err)
{
    loom_strv_t words = LOOM_STRV_INIT;
    uint32_t bits = 0;
    bool known = false;
    loom_strv_split(&words, arg, ",");
    for (size_t i = 0; i < words.n; i++)
        for (size_t k = 0; k < JOBOPT_NMAIL; k++)
            if (strcasecmp(words.v[i], jobopt_mail_names[k].name) == 0) {
                bits |= jobopt_mail_names[k].bits;
                known = true;
            }
    loom_strv_free(&words);
    if (!known)
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    o->mail_type |= bits;
    return 0;
}

static int jobopt_set_nice(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                           loom_err_t *err)
{
    long long v = arg ? jobopt_lenient_ll(arg) : 100;
    if (v > JOBOPT_NICE_MAX || v < -JOBOPT_NICE_MAX)
        return loom_errf(err, -LOOM_ERANGE, "Invalid --nice value, out of range (+/- %lld)",
                         JOBOPT_NICE_MAX);
    o->nice = (int32_t)v;
    return 0;
}

static int jobopt_set_priority(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                               loom_err_t *err)
{
    if (strcasecmp(arg, "TOP") == 0) {
        o->priority_top = true;
        return 0;
    }
    long long v = jobopt_lenient_ll(arg);
    if (v < 0)
        return loom_errf(err, -LOOM_ERANGE, "Priority must be >= 0");
    if (v >= 4294967294LL) /* Slurm's NO_VAL and INFINITE are not priorities */
        return loom_errf(err, -LOOM_ERANGE, "Priority must be < 4294967294");
    o->priority_top = false;
    o->priority = (uint32_t)v;
    return 0;
}

static int jobopt_set_kill_inv_dep(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                   loom_err_t *err)
{
    if (strcasecmp(arg, "yes") == 0)
        o->kill_on_invalid_dep = 1;
    else if (strcasecmp(arg, "no") == 0)
        o->kill_on_invalid_dep = 0;
    else
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    return 0;
}

static int jobopt_set_no_kill(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                              loom_err_t *err)
{
    if (arg && strcasecmp(arg, "off") != 0)
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    o->no_kill = !arg;
    return 0;
}

static int jobopt_set_requeue(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                              loom_err_t *err)
{
    o->requeue = strcmp(d->name, "requeue") == 0;
    return 0;
}

/* Slurm's signal names (sig_name2num). */
static const struct {
    const char *name;
    int num;
} jobopt_signals[] = {
    {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ABRT", 6},  {"KILL", 9},  {"ALRM", 14},
    {"TERM", 15}, {"USR1", 10}, {"USR2", 12}, {"URG", 23},  {"CONT", 18}, {"STOP", 19},
    {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
};

/* A signal number or name ("USR1", "SIGUSR1", any case) of n bytes; 0 if none. */
static int jobopt_signal_num(const char *s, size_t n)
{
    int64_t v = 0;
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i]))
        i++;
    if (i < n && isdigit((unsigned char)s[i])) {
        for (; i < n && isdigit((unsigned char)s[i]); i++)
            if ((v = v * 10 + (s[i] - '0')) > JOBOPT_SIGNAL_MAX)
                return 0;
        return i == n ? (int)v : 0;
    }
    if (n - i > 3 && strncasecmp(s + i, "SIG", 3) == 0)
        i += 3;
    for (size_t k = 0; k < sizeof(jobopt_signals) / sizeof(jobopt_signals[0]); k++)
        if (strlen(jobopt_signals[k].name) == n - i &&
            strncasecmp(s + i, jobopt_signals[k].name, n - i) == 0)
            return jobopt_signals[k].num;
    return 0;
}

/* The flags before ':' of --signal: any of R and B (any case). */
static int jobopt_signal_flags(const char *s, size_t n, bool *batch, bool *resv)
{
    for (size_t i = 0; i < n; i++) {
        char c = (char)toupper((unsigned char)s[i]);
        if (c == 'B')
            *batch = true;
        else if (c == 'R')
            *resv = true;
        else
            return -1;
    }
    return 0;
}

/* "@secs": digits (leading blanks allowed); empty is 0, as in Slurm. */
static int jobopt_signal_time(const char *s, int *out)
{
    int64_t v = 0;
    while (isspace((unsigned char)*s))
        s++;
    for (; isdigit((unsigned char)*s); s++)
        if ((v = v * 10 + (*s - '0')) > JOBOPT_WARN_TIME_MAX)
            return -1;
    if (*s)
        return -1;
    *out = (int)v;
    return 0;
}

static int jobopt_set_signal(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                             loom_err_t *err)
{
    const char *colon = strchr(arg, ':');
    const char *sig = colon ? colon + 1 : arg;
    const char *at = strchr(sig, '@');
    bool batch = false, resv = false;
    int num = jobopt_signal_num(sig, at ? (size_t)(at - sig) : strlen(sig));
    int secs = LOOM_JOBOPT_SIGNAL_DELAY;
    if ((colon && jobopt_signal_flags(arg, (size_t)(colon - arg), &batch, &resv) < 0) || num <= 0 ||
        (at && jobopt_signal_time(at + 1, &secs) < 0))
        return jobopt_invalid(d, -LOOM_EPARSE, err);
    o->warn_signal = num;
    o->warn_time = secs;
    o->warn_batch = batch;
    o->warn_resv_end = resv;
    return 0;
}

/* -v, or SBATCH_DEBUG=N from the environment. */
static int jobopt_set_verbose(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                              loom_err_t *err)
{
    if (!arg) {
        o->verbose++;
        return 0;
    }
    long long v = jobopt_lenient_ll(arg);
    o->verbose = v < 0 ? 0 : v > 10 ? 10 : (int)v;
    return 0;
}

static int jobopt_set_quiet(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                            loom_err_t *err)
{
    o->quiet++;
    return 0;
}

/* srun -K[0|1]: a number; non-zero means kill the step on a bad exit. */
static int jobopt_set_kill_bad_exit(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                    loom_err_t *err)
{
    int64_t v = 1;
    int rc = arg ? jobopt_parse_int(d, arg, false, &v, err) : 0;
    if (rc == 0)
        o->kill_on_bad_exit = v != 0;
    return rc;
}

/* -I[secs]; Slurm names it "immediate" (no dashes) in its message. */
static int jobopt_set_immediate(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                                loom_err_t *err)
{
    int64_t v = 1;
    if (arg && jobopt_parse_int(d, arg, true, &v, NULL) < 0)
        return loom_errf(err, -LOOM_EPARSE, "Invalid numeric value \"%s\" for immediate.", arg);
    o->immediate = (int)v;
    return 0;
}

static int jobopt_set_jobid(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                            loom_err_t *err)
{
    int64_t v;
    int rc = jobopt_parse_int(d, arg, true, &v, err);
    if (rc == 0)
        o->jobid = (uint32_t)v;
    return rc;
}

/* salloc -K[signal] (P2): remembered, "" without a signal. */
static int jobopt_set_kill_cmd(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                               loom_err_t *err)
{
    if (arg && jobopt_signal_num(arg, strlen(arg)) <= 0)
        return loom_errf(err, -LOOM_EPARSE, "Invalid --kill-command specification");
    jobopt_replace(&o->kill_cmd, arg ? arg : "");
    return 0;
}

/* --overlap takes an optional argument in Slurm's table and ignores it. */
static int jobopt_set_overlap(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                              loom_err_t *err)
{
    o->overlap = true;
    return 0;
}

/* ---- the table ------------------------------------------------------------ */

#define SB   LOOM_JOBOPT_M_SBATCH
#define SR   LOOM_JOBOPT_M_SRUN
#define SA   LOOM_JOBOPT_M_SALLOC
#define SBSR (SB | SR)
#define SBSA (SB | SA)
#define SRSA (SR | SA)
#define ALL  LOOM_JOBOPT_M_ALL
#define E3(b, r, a)                                                                                \
    {                                                                                              \
        b, r, a                                                                                    \
    }
#define NOENV E3(NULL, NULL, NULL)
/* Per-command variables named SBATCH_x, SLURM_x, SALLOC_x. */
#define ENVS(x) E3("SBATCH_" x, "SLURM_" x, "SALLOC_" x)

/* An option that sets a field of loom_jobopt_t. */
#define ROW(nm, let, ak, cm, fld, st, ev, ha, hp)                                                  \
    {                                                                                              \
        .name = nm, .letter = let, .arg = LOOM_JOBOPT_ARG_##ak, .cmds = cm,                        \
        .off = offsetof(loom_jobopt_t, fld), .env = ev, .set = st, .help_arg = ha, .help = hp      \
    }
/* An alias: same setter and field, messages name canon. */
#define ALIAS(nm, cn, ak, cm, fld, st, ev)                                                         \
    {                                                                                              \
        .name = nm, .arg = LOOM_JOBOPT_ARG_##ak, .cmds = cm, .off = offsetof(loom_jobopt_t, fld),  \
        .canon = cn, .env = ev, .set = st                                                          \
    }
/* Accepted and ignored (P2). */
#define IGN(nm, let, ak, cm, ev)                                                                   \
    {                                                                                              \
        .name = nm, .letter = let, .arg = LOOM_JOBOPT_ARG_##ak, .cmds = cm,                        \
        .flags = LOOM_JOBOPT_F_IGNORED, .env = ev, .set = jobopt_set_ignore                        \
    }

/* Slurm 22.05's option order (the union of the three commands' tables). */
static const loom_jobopt_def_t jobopt_rows[] = {
    IGN("accel-bind", 0, REQ, SR, NOENV),
    ROW("account", 'A', REQ, ALL, account, jobopt_set_str, ENVS("ACCOUNT"), "=name",
        "charge job to specified account"),
    IGN("acctg-freq", 0, REQ, ALL, ENVS("ACCTG_FREQ")),
    IGN("bcast", 0, OPT, SR, E3(NULL, "SLURM_BCAST", NULL)),
    IGN("bcast-exclude", 0, REQ, SR, E3(NULL, "SLURM_BCAST_EXCLUDE", NULL)),
    ROW("array", 'a', REQ, SB, array, jobopt_set_array, E3("SBATCH_ARRAY_INX", NULL, NULL),
        "=indexes", "job array index values (0-15, 1,3,5-9, 0-15:4, 0-99%8)"),
    IGN("batch", 0, REQ, SB, E3("SBATCH_BATCH", NULL, NULL)),
    ROW("begin", 'b', REQ, ALL, begin, jobopt_set_date, NOENV, "=time",
        "defer job until HH:MM, YYYY-MM-DD[THH:MM[:SS]] or now+N[unit]"),
    IGN("bell", 0, NONE, SA, E3(NULL, NULL, "SALLOC_BELL")),
    IGN("bb", 0, REQ, ALL, E3(NULL, "SLURM_BURST_BUFFER", "SALLOC_BURST_BUFFER")),
    IGN("bbf", 0, REQ, ALL, NOENV),
    IGN("cluster-constraint", 0, REQ, ALL, NOENV),
    ROW("chdir", 'D', REQ, ALL, chdir, jobopt_set_str, E3(NULL, "SLURM_WORKING_DIR", NULL), "=path",
        "change working directory before the job starts"),
    ALIAS("cluster", "clusters", REQ, ALL, clusters, jobopt_set_str, NOENV),
    ROW("clusters", 'M', REQ, ALL, clusters, jobopt_set_str,
        E3("SBATCH_CLUSTERS|SLURM_CLUSTERS", "SLURM_CLUSTERS", "SALLOC_CLUSTERS|SLURM_CLUSTERS"),
        NULL, NULL),
    ROW("comment", 0, REQ, ALL, comment, jobopt_set_str, NOENV, "=name",
        "arbitrary comment stored with the job"),
    IGN("compress", 0, OPT, SR, E3(NULL, "SLURM_COMPRESS", NULL)),
    IGN("container", 0, REQ, ALL, E3("SBATCH_CONTAINER", "SRUN_CONTAINER", "SALLOC_CONTAINER")),
    IGN("context", 0, REQ, ALL, NOENV),
    ROW("contiguous", 0, NONE, ALL, contiguous, jobopt_set_flag, NOENV, NULL,
        "demand a contiguous range of nodes"),
    ROW("constraint", 'C', REQ, ALL, constraint, jobopt_set_constraint, ENVS("CONSTRAINT"), "=list",
        "node features required: a, a&b, a|b, [a|b], a*2&b*1"),
    IGN("core-spec", 'S', REQ, ALL, ENVS("CORE_SPEC")),
    ROW("cores-per-socket", 0, REQ, ALL, cores_per_socket, jobopt_set_pos, NOENV, "=cores",
        "number of cores per socket to allocate"),
    ROW("cpu-bind", 0, REQ, SR, cpu_bind, jobopt_set_str, E3(NULL, "SLURM_CPU_BIND", NULL), "=type",
        "bind tasks to CPUs (accepted)"),
    ALIAS("cpu_bind", "cpu-bind", REQ, SR, cpu_bind, jobopt_set_str, NOENV),
    IGN("cpu-freq", 0, REQ, ALL, E3("SBATCH_CPU_FREQ_REQ", "SLURM_CPU_FREQ_REQ", NULL)),
    ROW("cpus-per-gpu", 0, REQ, ALL, cpus_per_gpu, jobopt_set_pos, ENVS("CPUS_PER_GPU"), "=n",
        "number of CPUs required per allocated GPU"),
    ROW("cpus-per-task", 'c', REQ, ALL, cpus_per_task, jobopt_set_pos,
        E3(NULL, "SRUN_CPUS_PER_TASK|SLURM_CPUS_PER_TASK", NULL), "=ncpus",
        "number of cpus required per task"),
    ROW("deadline", 0, REQ, ALL, deadline, jobopt_set_date, NOENV, "=time",
        "remove the job if it cannot end by this time"),
    IGN("debugger-test", 0, NONE, SR, NOENV),
    IGN("delay-boot", 0, REQ, ALL, ENVS("DELAY_BOOT")),
    ROW("dependency", 'd', REQ, ALL, dependency, jobopt_set_str, E3(NULL, "SLURM_DEPENDENCY", NULL),
        "=type:jobid[:time]", "defer job until condition on jobid is satisfied"),
    ROW("disable-status", 'X', NONE, SR, disable_status, jobopt_set_flag,
        E3(NULL, "SLURM_DISABLE_STATUS", NULL), NULL, "disable Ctrl-C status feature"),
    ROW("distribution", 'm', REQ, ALL, distribution, jobopt_set_str,
        E3("SBATCH_DISTRIBUTION", "SLURM_DISTRIBUTION", NULL), "=type",
        "distribution method for processes to nodes (accepted)"),
    IGN("epilog", 0, REQ, SR, E3(NULL, "SLURM_EPILOG", NULL)),
    ROW("error", 'e', REQ, SBSR, std_err, jobopt_set_io,
        E3("SBATCH_ERROR", "SLURM_STDERRMODE", NULL), "=err",
        "file for batch script's standard error"),
    ROW("exact", 0, NONE, SR, exact, jobopt_set_flag, E3(NULL, "SLURM_EXACT", NULL), NULL,
        "use only the resources requested for the step"),
    ROW("exclude", 'x', REQ, ALL, exclude, jobopt_set_nodelist, NOENV, "=hosts...",
        "exclude a specific list of hosts (or a file of names)"),
    ROW("exclusive", 0, OPT, ALL, exclusive, jobopt_set_exclusive, ENVS("EXCLUSIVE"), "[=user|mcs]",
        "allocate nodes in exclusive mode"),
    ROW("export", 0, REQ, SBSR, export_env, jobopt_set_str,
        E3("SBATCH_EXPORT", "SRUN_EXPORT_ENV|SLURM_EXPORT_ENV", NULL), "[=names]",
        "specify environment variables to export (ALL, NONE, NIL, [ALL,]VAR[=val],...)"),
    IGN("export-file", 0, REQ, SB, NOENV),
    IGN("extra-node-info", 'B', REQ, ALL, NOENV),
    IGN("get-user-env", 0, OPT, SBSA, E3("SBATCH_GET_USER_ENV", NULL, NULL)),
    IGN("gid", 0, REQ, ALL, NOENV),
    ROW("gpu-bind", 0, REQ, ALL, gpu_bind, jobopt_set_str, ENVS("GPU_BIND"), "=...",
        "task to gpu binding options (accepted)"),
    IGN("gpu-freq", 0, REQ, ALL, ENVS("GPU_FREQ")),
    ROW("gpus", 'G', REQ, ALL, gpus, jobopt_set_gpus, ENVS("GPUS"), "=n",
        "count of GPUs required for the job"),
    ROW("gpus-per-node", 0, REQ, ALL, gpus_per_node, jobopt_set_gpus, ENVS("GPUS_PER_NODE"), "=n",
        "number of GPUs required per allocated node"),
    ROW("gpus-per-socket", 0, REQ, ALL, gpus_per_socket, jobopt_set_gpus, NOENV, "=n",
        "number of GPUs required per allocated socket"),
    ROW("gpus-per-task", 0, REQ, ALL, gpus_per_task, jobopt_set_gpus, ENVS("GPUS_PER_TASK"), "=n",
        "number of GPUs required per spawned task"),
    ROW("gres", 0, REQ, ALL, gres, jobopt_set_gres, ENVS("GRES"), "=list",
        "required generic resources (gpu:2, gpu:a100:4,shard:2)"),
    IGN("gres-flags", 0, REQ, ALL, ENVS("GRES_FLAGS")),
    ROW("help", 'h', NONE, ALL, help, jobopt_set_flag, NOENV, NULL, "show this help message"),
    IGN("het-group", 0, REQ, SR, NOENV),
    ROW("hint", 0, REQ, ALL, hint, jobopt_set_str,
        E3("SBATCH_HINT|SLURM_HINT", "SLURM_HINT", "SALLOC_HINT|SLURM_HINT"), "=hint",
        "bind tasks according to application hints (accepted)"),
    ROW("hold", 'H', NONE, ALL, hold, jobopt_set_flag, NOENV, NULL, "submit job in held state"),
    ROW("immediate", 'I', OPT, SRSA, immediate, jobopt_set_immediate,
        E3(NULL, "SLURM_IMMEDIATE", "SALLOC_IMMEDIATE"), "[=secs]",
        "exit if resources are not available within the time period"),
    IGN("ignore-pbs", 0, NONE, SB, E3("SBATCH_IGNORE_PBS", NULL, NULL)),
    ROW("input", 'i', REQ, SBSR, std_in, jobopt_set_io, E3("SBATCH_INPUT", "SLURM_STDINMODE", NULL),
        "=in", "file for batch script's standard input"),
    IGN("interactive", 0, NONE, SR, NOENV),
    ROW("jobid", 0, REQ, SR, jobid, jobopt_set_jobid, E3(NULL, "SLURM_JOB_ID", NULL), "=id",
        "run under already allocated job"),
    ROW("job-name", 'J', REQ, ALL, job_name, jobopt_set_str,
        E3("SBATCH_JOB_NAME", "SLURM_JOB_NAME", NULL), "=jobname", "name of job"),
    ROW("kill-on-bad-exit", 'K', OPT, SR, kill_on_bad_exit, jobopt_set_kill_bad_exit,
        E3(NULL, "SLURM_KILL_BAD_EXIT", NULL), "[=0|1]",
        "kill the step if any task exits with a non-zero code"),
    ROW("label", 'l', NONE, SR, label, jobopt_set_flag, E3(NULL, "SLURM_LABELIO", NULL), NULL,
        "prepend task number to lines of stdout/err"),
    ROW("kill-on-invalid-dep", 0, REQ, SB, kill_on_invalid_dep, jobopt_set_kill_inv_dep, NOENV,
        "=<yes|no>", "kill the job if its dependency can never be met"),
    ROW("kill-command", 'K', OPT, SA, kill_cmd, jobopt_set_kill_cmd,
        E3(NULL, NULL, "SALLOC_KILL_CMD"), "[=signal]",
        "signal to send the command when the time limit ends"),
    ROW("licenses", 'L', REQ, ALL, licenses, jobopt_set_str, NOENV, "=names",
        "required license, comma separated"),
    ROW("mail-type", 0, REQ, ALL, mail_type, jobopt_set_mail_type, NOENV, "=type",
        "notify on state change: BEGIN, END, FAIL or ALL"),
    ROW("mail-user", 0, REQ, ALL, mail_user, jobopt_set_str, NOENV, "=user",
        "who to send email notification for job state changes"),
    IGN("threads", 'T', REQ, SR, E3(NULL, "SLURM_THREADS", NULL)),
    IGN("mcs-label", 0, REQ, ALL, NOENV),
    ROW("mem", 0, REQ, ALL, mem_per_node, jobopt_set_mem, ENVS("MEM_PER_NODE"), "=MB",
        "minimum amount of real memory (0: all of the node's)"),
    ROW("mem-bind", 0, REQ, ALL, mem_bind, jobopt_set_str, ENVS("MEM_BIND"), "=...",
        "bind memory to locality domains (accepted)"),
    ROW("mem-per-cpu", 0, REQ, ALL, mem_per_cpu, jobopt_set_mem, ENVS("MEM_PER_CPU"), "=MB",
        "maximum amount of real memory per allocated cpu required by the job"),
    ROW("mem-per-gpu", 0, REQ, ALL, mem_per_gpu, jobopt_set_mem, ENVS("MEM_PER_GPU"), "=MB",
        "real memory required per allocated GPU"),
    ROW("mincpus", 0, REQ, ALL, mincpus, jobopt_set_pos, NOENV, "=n",
        "minimum number of logical processors per node"),
    ROW("mpi", 0, REQ, SR, mpi, jobopt_set_str, E3(NULL, "SLURM_MPI_TYPE", NULL), "=type",
        "type of MPI being used (none, pmi2, pmix)"),
    IGN("msg-timeout", 0, REQ, SR, NOENV),
    ROW("multi-prog", 0, NONE, SR, multi_prog, jobopt_set_flag, NOENV, NULL,
        "if set the program name specified is the configuration specification for multiple "
        "programs"),
    IGN("network", 0, REQ, ALL, ENVS("NETWORK")),
    ROW("nice", 0, OPT, ALL, nice, jobopt_set_nice, NOENV, "[=value]",
        "decrease scheduling priority by value"),
    ROW("no-allocate", 'Z', NONE, SR, no_allocate, jobopt_set_flag, NOENV, NULL,
        "don't allocate nodes (root only)"),
    IGN("no-bell", 0, NONE, SA, E3(NULL, NULL, "SALLOC_NO_BELL")),
    ROW("no-kill", 'k', OPT, ALL, no_kill, jobopt_set_no_kill, ENVS("NO_KILL"), "[=off]",
        "do not kill job on node failure"),
    ROW("no-requeue", 0, NONE, SB, requeue, jobopt_set_requeue, E3("SBATCH_NO_REQUEUE", NULL, NULL),
        NULL, "if set, do not permit the job to be requeued"),
    ROW("no-shell", 0, NONE, SA, no_shell, jobopt_set_flag, NOENV, NULL,
        "immediately exit after allocating resources"),
    ROW("nodefile", 'F', REQ, ALL, nodelist, jobopt_set_nodefile, NOENV, "=filename",
        "request a specific list of hosts from a file"),
    ROW("nodelist", 'w', REQ, ALL, nodelist, jobopt_set_nodelist, NOENV, "=hosts...",
        "request a specific list of hosts (or a file of names)"),
    ROW("nodes", 'N', REQ, ALL, min_nodes, jobopt_set_nodes,
        E3(NULL, "SLURM_NNODES|SLURM_JOB_NUM_NODES", NULL), "=N",
        "number of nodes on which to run (N = min[-max])"),
    ROW("ntasks", 'n', REQ, ALL, ntasks, jobopt_set_pos,
        E3(NULL, "SLURM_NTASKS|SLURM_NPROCS", NULL), "=ntasks", "number of tasks to run"),
    ROW("ntasks-per-core", 0, REQ, ALL, ntasks_per_core, jobopt_set_pos,
        E3(NULL, "SLURM_NTASKS_PER_CORE", NULL), "=n", "number of tasks to invoke on each core"),
    ROW("ntasks-per-gpu", 0, REQ, ALL, ntasks_per_gpu, jobopt_set_pos,
        E3(NULL, "SLURM_NTASKS_PER_GPU", NULL), "=n", "number of tasks to invoke for each GPU"),
    ROW("ntasks-per-node", 0, REQ, ALL, ntasks_per_node, jobopt_set_pos,
        E3(NULL, "SLURM_NTASKS_PER_NODE", NULL), "=n", "number of tasks to invoke on each node"),
    ROW("ntasks-per-socket", 0, REQ, ALL, ntasks_per_socket, jobopt_set_pos,
        E3(NULL, "SLURM_NTASKS_PER_SOCKET", NULL), "=n",
        "number of tasks to invoke on each socket"),
    ROW("ntasks-per-tres", 0, REQ, ALL, ntasks_per_gpu, jobopt_set_pos, NOENV, "=n",
        "number of tasks to invoke for each GPU (as --ntasks-per-gpu)"),
    ROW("open-mode", 0, REQ, SBSR, open_mode, jobopt_set_open_mode,
        E3("SBATCH_OPEN_MODE", "SLURM_OPEN_MODE", NULL), "={append|truncate}",
        "open mode of the output and error files"),
    ROW("output", 'o', REQ, SBSR, std_out, jobopt_set_io,
        E3("SBATCH_OUTPUT", "SLURM_STDOUTMODE", NULL), "=out",
        "file for batch script's standard output"),
    ROW("overcommit", 'O', NONE, ALL, overcommit, jobopt_set_flag, ENVS("OVERCOMMIT"), NULL,
        "overcommit resources"),
    ROW("overlap", 0, OPT, SR, overlap, jobopt_set_overlap, E3(NULL, "SLURM_OVERLAP", NULL), NULL,
        "allow the step to share resources with other steps"),
    ROW("oversubscribe", 's', NONE, ALL, oversubscribe, jobopt_set_flag, NOENV, NULL,
        "over subscribe resources with other jobs"),
    IGN("pack-group", 0, REQ, SR, NOENV),
    ROW("parsable", 0, NONE, SB, parsable, jobopt_set_flag, NOENV, NULL,
        "outputs only the jobid and cluster name (if present), separated by semicolon"),
    ROW("partition", 'p', REQ, ALL, partition, jobopt_set_str, ENVS("PARTITION"), "=partition",
        "partition requested"),
    IGN("power", 0, REQ, ALL, ENVS("POWER")),
    ROW("prefer", 0, REQ, ALL, prefer, jobopt_set_str, NOENV, "=list",
        "features desired but not required by job"),
    ROW("preserve-env", 'E', NONE, SR, preserve_env, jobopt_set_flag, NOENV, NULL,
        "env vars for node and task counts override command-line flags"),
    ROW("priority", 0, REQ, ALL, priority, jobopt_set_priority, NOENV, "=value",
        "set the priority of the job to value (or TOP)"),
    IGN("profile", 0, REQ, ALL, ENVS("PROFILE")),
    IGN("prolog", 0, REQ, SR, E3(NULL, "SLURM_PROLOG", NULL)),
    ROW("propagate", 0, OPT, SBSR, propagate, jobopt_set_str, NOENV, "[=rlimits]",
        "propagate all [or specific list of] rlimits"),
    ROW("pty", 0, NONE, SR, pty, jobopt_set_flag, NOENV, NULL, "run task zero in pseudo terminal"),
    ROW("qos", 'q', REQ, ALL, qos, jobopt_set_str, ENVS("QOS"), "=qos", "quality of service"),
    ROW("quiet", 'Q', NONE, ALL, quiet, jobopt_set_quiet, NOENV, NULL, "quiet mode"),
    IGN("quit-on-interrupt", 0, NONE, SR, NOENV),
    ROW("reboot", 0, NONE, ALL, reboot, jobopt_set_flag, NOENV, NULL,
        "reboot compute nodes before starting job"),
    IGN("relative", 'r', REQ, SR, NOENV),
    ROW("requeue", 0, NONE, SB, requeue, jobopt_set_requeue, E3("SBATCH_REQUEUE", NULL, NULL), NULL,
        "if set, permit the job to be requeued"),
    ROW("reservation", 0, REQ, ALL, reservation, jobopt_set_str, ENVS("RESERVATION"), "=name",
        "allocate resources from named reservation"),
    IGN("resv-ports", 0, OPT, SR, E3(NULL, "SLURM_RESV_PORTS", NULL)),
    IGN("send-libs", 0, OPT, SR, E3(NULL, "SLURM_SEND_LIBS", NULL)),
    ROW("signal", 0, REQ, ALL, warn_signal, jobopt_set_signal, ENVS("SIGNAL"),
        "=[{R|B}:]num[@time]", "send signal when time limit within time seconds"),
    IGN("slurmd-debug", 0, REQ, SR, E3(NULL, "SLURMD_DEBUG", NULL)),
    ROW("sockets-per-node", 0, REQ, ALL, sockets_per_node, jobopt_set_pos, NOENV, "=S",
        "number of sockets per node to allocate"),
    ROW("spread-job", 0, NONE, ALL, spread_job, jobopt_set_flag, ENVS("SPREAD_JOB"), NULL,
        "spread job across as many nodes as possible"),
    IGN("switches", 0, REQ, ALL, ENVS("REQ_SWITCH")),
    IGN("task-epilog", 0, REQ, SR, E3(NULL, "SLURM_TASK_EPILOG", NULL)),
    IGN("task-prolog", 0, REQ, SR, E3(NULL, "SLURM_TASK_PROLOG", NULL)),
    ALIAS("tasks-per-node", "ntasks-per-node", REQ, ALL, ntasks_per_node, jobopt_set_pos, NOENV),
    ROW("test-only", 0, NONE, SBSR, test_only, jobopt_set_flag, NOENV, NULL,
        "validate the request and report when the job would start; nothing is submitted"),
    IGN("thread-spec", 0, REQ, ALL, ENVS("THREAD_SPEC")),
    ROW("threads-per-core", 0, REQ, ALL, threads_per_core, jobopt_set_pos, ENVS("THREADS_PER_CORE"),
        "=T", "number of threads per core to allocate"),
    ROW("time", 't', REQ, ALL, time_limit, jobopt_set_time, ENVS("TIMELIMIT"), "=minutes",
        "time limit"),
    ROW("time-min", 0, REQ, ALL, time_min, jobopt_set_time, NOENV, "=minutes",
        "minimum time limit (if distinct)"),
    ROW("tmp", 0, REQ, ALL, tmp_disk, jobopt_set_mem, NOENV, "=MB",
        "minimum amount of temporary disk"),
    IGN("uid", 0, REQ, ALL, NOENV),
    ROW("unbuffered", 'u', NONE, SR, unbuffered, jobopt_set_flag,
        E3(NULL, "SLURM_UNBUFFEREDIO", NULL), NULL, "do not line-buffer stdout/err"),
    ROW("use-min-nodes", 0, NONE, ALL, use_min_nodes, jobopt_set_flag, ENVS("USE_MIN_NODES"), NULL,
        "if a range of node counts is given, prefer the smaller count"),
    {.name = "verbose",
     .letter = 'v',
     .arg = LOOM_JOBOPT_ARG_NONE,
     .cmds = ALL,
     .flags = LOOM_JOBOPT_F_ENV_VALUE,
     .off = offsetof(loom_jobopt_t, verbose),
     .env = ENVS("DEBUG"),
     .set = jobopt_set_verbose,
     .help = "verbose mode (multiple -v's increase verbosity)"},
    ROW("version", 'V', NONE, ALL, version, jobopt_set_flag, NOENV, NULL,
        "output version information and exit"),
    ROW("usage", 0, NONE, ALL, usage, jobopt_set_flag, NOENV, NULL, "display brief usage message"),
    ROW("wait", 'W', REQ, SR, step_wait, jobopt_set_int, E3(NULL, "SLURM_WAIT", NULL), "=sec",
        "seconds to wait after first task exits before killing job"),
    ROW("wait", 'W', NONE, SB, wait, jobopt_set_flag, E3("SBATCH_WAIT", NULL, NULL), NULL,
        "wait for completion of submitted job"),
    ROW("wait-all-nodes", 0, REQ, SBSA, wait_all_nodes, jobopt_set_int,
        E3("SBATCH_WAIT_ALL_NODES", NULL, "SALLOC_WAIT_ALL_NODES"), "=0|1",
        "wait for all nodes to be allocated if 0 (default) or wait until all nodes ready (1)"),
    ROW("wckey", 0, REQ, ALL, wckey, jobopt_set_str, ENVS("WCKEY"), "=wckey",
        "wckey to run job under"),
    IGN("whole", 0, NONE, SR, NOENV),
    IGN("x11", 0, OPT, SRSA, NOENV),
    ROW("wrap", 0, REQ, SB, wrap, jobopt_set_str, NOENV, "[=command string]",
        "wrap command string in a sh script and submit"),
};

_Static_assert(sizeof(jobopt_rows) / sizeof(jobopt_rows[0]) <= LOOM_JOBOPT_MAX_IDS,
               "LOOM_JOBOPT_MAX_IDS is too small for the option table");

const loom_jobopt_def_t *loom_jobopt_defs(size_t *n)
{
    *n = sizeof(jobopt_rows) / sizeof(jobopt_rows[0]);
    return jobopt_rows;
}

int loom_jobopt_find_id(const char *name)
{
    size_t n;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(defs[i].name, name) == 0)
            return defs[i].canon ? loom_jobopt_find_id(defs[i].canon) : (int)i;
    return -1;
}

int loom_jobopt_def_id(const loom_jobopt_def_t *d)
{
    return loom_jobopt_find_id(d->canon ? d->canon : d->name);
}

/* ---- --help ------------------------------------------------------------------ */

#define JOBOPT_HELP_COL 30

void loom_jobopt_help_table(loom_jobopt_cmd_t cmd, loom_sbuf_t *out)
{
    size_t n;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&n);
    for (size_t i = 0; i < n; i++) {
        const loom_jobopt_def_t *d = &defs[i];
        if (!(d->cmds & (1u << cmd)) || !d->help)
            continue;
        size_t start = out->len;
        if (d->letter)
            loom_sbuf_addf(out, "  -%c, --%s%s", d->letter, d->name,
                           d->help_arg ? d->help_arg : "");
        else
            loom_sbuf_addf(out, "      --%s%s", d->name, d->help_arg ? d->help_arg : "");
        size_t w = out->len - start;
        if (w + 1 >= JOBOPT_HELP_COL)
            loom_sbuf_addf(out, "\n%*s", JOBOPT_HELP_COL, "");
        else
            loom_sbuf_addf(out, "%*s", (int)(JOBOPT_HELP_COL - w), "");
        loom_sbuf_addf(out, "%s\n", d->help);
    }
}

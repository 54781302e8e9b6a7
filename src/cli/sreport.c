/*
 * sreport.c - sreport: usage reports from loomdbd (issue 7; Slurm 22.05's
 * sreport, no CLI_SPEC section): `cluster Utilization`, `cluster
 * AccountUtilizationByUser`, `cluster UserUtilizationByAccount` and `user
 * TopUsage`, with Slurm's options (-a -M -n -p -P -Q -t -T -v -V) and
 * conditions (start= end= clusters= users= accounts= format= TopCount=
 * group tree all_clusters). Without a command it reads commands from stdin.
 *
 * The window, as sreport computes it: start= and end= (sacct's date forms)
 * are rounded to the nearest hour, end no later than now; by default
 * yesterday 00:00 to today 00:00 (local time); at least one hour long.
 * Mistakes are reported with Slurm's texts; most leave the report to run
 * with the exit status 1, as sreport does.
 */
#include "cli/sreport.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Slurm's keyword test: strncasecmp(name, word, MAX(len, minlen)) == 0. */
static bool sreport_is(const char *name, const char *word, size_t len, int minlen)
{
    char buf[128];
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, word, len);
    buf[len] = '\0';
    return strncasecmp(name, buf, len > (size_t)minlen ? len : (size_t)minlen) == 0;
}

/* ---- the window ------------------------------------------------------------------------ */

static int64_t sreport_round_hour(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    if (tm.tm_sec >= 30)
        tm.tm_min++;
    if (tm.tm_min >= 30)
        tm.tm_hour++;
    tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    return (int64_t)mktime(&tm);
}

static int64_t sreport_midnight(time_t now, int days_back)
{
    struct tm tm;
    localtime_r(&now, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_mday -= days_back;
    tm.tm_isdst = -1;
    return (int64_t)mktime(&tm);
}

static void sreport_window(sr_cond_t *c, time_t now)
{
    c->end = c->end ? sreport_round_hour(c->end) : sreport_midnight(now, 0);
    c->start = c->start ? sreport_round_hour(c->start) : sreport_midnight(now, 1);
    if (c->end - c->start < 3600)
        c->end = c->start + 3600;
}

static int64_t sreport_time(const char *text, time_t now)
{
    time_t t;
    if (loom_date_parse_past(text, now, &t, NULL) < 0) {
        fprintf(stderr, "Invalid time specification (pos=0): %s\n", text);
        return 0;
    }
    return (int64_t)t;
}

/* ---- conditions --------------------------------------------------------------------------- */

static void sreport_list(loom_strv_t *v, const char *text)
{
    loom_strv_split(v, text, ",");
}

/* One condition of a report; false when it is not one of this report's. */
static bool sreport_cond(sr_cond_t *c, const char *arg, time_t now)
{
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const char *val = eq ? eq + 1 : arg;
    bool user_rep = c->rep != SR_REP_UTIL;
    if (!eq && sreport_is("all_clusters", arg, len, 1)) {
        c->all_clusters = true;
    } else if (!eq && c->rep == SR_REP_TOP && sreport_is("group", arg, len, 1)) {
        c->group = true;
    } else if (!eq && c->rep == SR_REP_ACCT_USER && sreport_is("tree", arg, len, 4)) {
        c->tree = true;
    } else if (user_rep && (!eq || sreport_is("Users", arg, len, 1))) {
        sreport_list(&c->users, val);
    } else if (!user_rep && (!eq || sreport_is("Clusters", arg, len, 1))) {
        sreport_list(&c->clusters, val);
    } else if (user_rep &&
               (sreport_is("Accounts", arg, len, 2) || sreport_is("Acct", arg, len, 4))) {
        sreport_list(&c->accounts, val);
    } else if (sreport_is("Clusters", arg, len, 1)) {
        sreport_list(&c->clusters, val);
    } else if (sreport_is("End", arg, len, 1)) {
        c->end = sreport_time(val, now);
        if (c->end > (int64_t)now)
            c->end = (int64_t)now;
    } else if (sreport_is("Format", arg, len, 1)) {
        sreport_list(&c->format, val);
    } else if (sreport_is("Start", arg, len, 1)) {
        c->start = sreport_time(val, now);
    } else if (c->rep == SR_REP_TOP && sreport_is("TopCount", arg, len, 1)) {
        c->top = atoi(val);
    } else {
        return false;
    }
    return true;
}

static void sreport_cond_free(sr_cond_t *c)
{
    loom_strv_free(&c->clusters);
    loom_strv_free(&c->users);
    loom_strv_free(&c->accounts);
    loom_strv_free(&c->format);
}

/* ---- running a report ---------------------------------------------------------------------- */

static void sreport_run(sr_t *s, sr_rep_t rep, int argc, char **argv)
{
    time_t now = time(NULL);
    sr_cond_t c = {.rep = rep, .top = 10, .all_clusters = s->all_clusters};
    for (int i = 0; i < argc; i++) {
        if (!sreport_cond(&c, argv[i], now)) {
            fprintf(stderr, " Unknown condition: %s\nUse keyword set to modify value\n", argv[i]);
            s->status = 1;
        }
    }
    if (!c.clusters.n && !c.all_clusters) {
        if (s->cluster_opt) {
            sreport_list(&c.clusters, s->cluster_opt);
        } else {
            const loom_conf_t *conf = loom_cli_conf(&s->cli, NULL);
            loom_strv_add(&c.clusters, conf && conf->cluster_name ? conf->cluster_name : "cluster");
        }
    }
    sreport_window(&c, now);
    sr_rows_t rows = {0};
    int rc = rep == SR_REP_UTIL        ? sr_report_util(s, &c, &rows)
             : rep == SR_REP_ACCT_USER ? sr_report_acct_user(s, &c, &rows)
                                       : sr_report_users(s, &c, &rows);
    if (rc < 0)
        s->status = 1;
    else
        sr_print(s, &c, &rows);
    sr_rows_free(&rows);
    sreport_cond_free(&c);
}

static void sreport_cluster(sr_t *s, int argc, char **argv)
{
    size_t len = argc ? strlen(argv[0]) : 0;
    if (argc && sreport_is("AccountUtilizationByUser", argv[0], len, 1)) {
        sreport_run(s, SR_REP_ACCT_USER, argc - 1, argv + 1);
    } else if (argc && sreport_is("UserUtilizationByAccount", argv[0], len, 18)) {
        sreport_run(s, SR_REP_USER_ACCT, argc - 1, argv + 1);
    } else if (argc && sreport_is("Utilization", argv[0], len, 2)) {
        sreport_run(s, SR_REP_UTIL, argc - 1, argv + 1);
    } else if (argc && (sreport_is("UserUtilizationByWckey", argv[0], len, 18) ||
                        sreport_is("WCKeyUtilizationByUser", argv[0], len, 1))) {
        fprintf(stderr, "sreport: error: Loom does not track WCKeys\n");
        s->status = 1;
    } else {
        fprintf(stderr,
                "Not valid report %s\nValid cluster reports are, "
                "\"AccountUtilizationByUser\", \"UserUtilizationByAccount\", "
                "\"UserUtilizationByWckey\", \"Utilization\", and "
                "\"WCKeyUtilizationByUser\"\n",
                argc ? argv[0] : "");
        s->status = 1;
    }
}

static void sreport_user(sr_t *s, int argc, char **argv)
{
    if (argc && sreport_is("TopUsage", argv[0], strlen(argv[0]), 1)) {
        sreport_run(s, SR_REP_TOP, argc - 1, argv + 1);
        return;
    }
    fprintf(stderr, "Not valid report %s\nValid user reports are, \"Top\"\n", argc ? argv[0] : "");
    s->status = 1;
}

/* One command line: `cluster <report> ...`, `user <report> ...`. */
static void sreport_command(sr_t *s, int argc, char **argv)
{
    size_t len = strlen(argv[0]);
    if (sreport_is("cluster", argv[0], len, 2)) {
        sreport_cluster(s, argc - 1, argv + 1);
    } else if (sreport_is("user", argv[0], len, 1)) {
        sreport_user(s, argc - 1, argv + 1);
    } else if (sreport_is("job", argv[0], len, 1) || sreport_is("reservation", argv[0], len, 2)) {
        fprintf(stderr, "sreport: error: %s reports are not available in Loom yet\n", argv[0]);
        s->status = 1;
    } else if (sreport_is("version", argv[0], len, 4)) {
        loom_cli_version();
    } else if (sreport_is("parsable", argv[0], len, 8)) {
        s->pf.parsable = 1;
    } else if (sreport_is("parsable2", argv[0], len, 9)) {
        s->pf.parsable = 2;
    } else if (sreport_is("nonparsable", argv[0], len, 4)) {
        s->pf.parsable = 0;
    } else if (!sreport_is("quit", argv[0], len, 4) && !sreport_is("exit", argv[0], len, 4)) {
        fprintf(stderr, "invalid keyword: %s\n", argv[0]);
        s->status = 1;
    }
}

/* No command on the command line: one per line of stdin. */
static void sreport_interactive(sr_t *s)
{
    char line[4096];
    while (fgets(line, sizeof(line), stdin)) {
        loom_strv_t words = LOOM_STRV_INIT;
        loom_strv_split(&words, line, " \t\r\n");
        if (words.n)
            sreport_command(s, (int)words.n, words.v);
        loom_cli_flush(&s->out);
        bool quit = words.n && (sreport_is("quit", words.v[0], strlen(words.v[0]), 4) ||
                                sreport_is("exit", words.v[0], strlen(words.v[0]), 4));
        loom_strv_free(&words);
        if (quit)
            break;
    }
}

/* ---- options ------------------------------------------------------------------------------- */

static bool sreport_tres_known(const char *name)
{
    static const char *const builtin[] = {"cpu",     "mem",     "energy", "node",
                                          "billing", "fs/disk", "vmem",   "pages"};
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
        if (!strcasecmp(builtin[i], name))
            return true;
    return !strncasecmp(name, "gres/", 5) || !strncasecmp(name, "license/", 8) ||
           !strncasecmp(name, "bb/", 3) || !strncasecmp(name, "ic/", 3);
}

static int sreport_tres(sr_t *s, const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    s->tres_given = true;
    for (size_t i = 0; i < v.n; i++) {
        if (!strcasecmp(v.v[i], "ALL"))
            s->tres_all = true;
        else if (sreport_tres_known(v.v[i]))
            loom_strv_add(&s->tres, v.v[i]);
    }
    loom_strv_free(&v);
    if (!s->tres_all && !s->tres.n) {
        fprintf(stderr, "sreport: fatal: No valid TRES given\n");
        return -1;
    }
    return 0;
}

static void sreport_help(void)
{
    printf("sreport [<OPTION>] [<COMMAND>]\n"
           "    Valid <OPTION> values are:\n"
           "     -a or --all_clusters: Use all clusters instead of current\n"
           "     -M or --cluster: Cluster(s) to report on\n"
           "     -n or --noheader: Don't print header when listing results\n"
           "     -p or --parsable: '|' delimited output with a trailing '|'\n"
           "     -P or --parsable2: '|' delimited output without a trailing '|'\n"
           "     -Q or --quiet: Print no messages\n"
           "     -t <time_format>: Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer\n"
           "     -T or --tres: TRES to report on (default cpu), or ALL\n"
           "     -V or --version: Print the version\n\n"
           "  <COMMAND> may be:\n"
           "     cluster AccountUtilizationByUser | UserUtilizationByAccount | Utilization\n"
           "     user TopUsage\n"
           "  with start=, end=, clusters=, users=, accounts=, format=, TopCount=,\n"
           "  group, tree and all_clusters.\n");
}

/* getopt's complaint with the command's name (opterr is off: argv[0] may be a path). */
static void sreport_bad_option(char **argv, int c)
{
    const char *arg = argv[optind - 1];
    if (c == ':' && optopt)
        fprintf(stderr, "sreport: option requires an argument -- '%c'\n", optopt);
    else if (c == ':')
        fprintf(stderr, "sreport: option '%s' requires an argument\n", arg);
    else if (optopt)
        fprintf(stderr, "sreport: invalid option -- '%c'\n", optopt);
    else
        fprintf(stderr, "sreport: unrecognized option '%s'\n", arg);
    fprintf(stderr, "Try \"sreport --help\" for more information\n");
}

static int sreport_opts(sr_t *s, int argc, char **argv)
{
    static const struct option lo[] = {
        {"all_clusters", no_argument, NULL, 'a'}, {"cluster", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},         {"noheader", no_argument, NULL, 'n'},
        {"parsable", no_argument, NULL, 'p'},     {"parsable2", no_argument, NULL, 'P'},
        {"quiet", no_argument, NULL, 'Q'},        {"tres", required_argument, NULL, 'T'},
        {"verbose", no_argument, NULL, 'v'},      {"version", no_argument, NULL, 'V'},
        {"local", no_argument, NULL, 'L'},        {"federation", no_argument, NULL, 'F'},
        {"usage", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    const char *env_tres = getenv("SREPORT_TRES");
    s->cluster_opt = getenv("SREPORT_CLUSTER");
    if (env_tres && *env_tres && sreport_tres(s, env_tres) < 0)
        return -1;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":aM:hnpPQt:T:vV", lo, NULL)) != -1) {
        switch (c) {
        case 'a':
            s->all_clusters = true;
            break;
        case 'M':
            s->cluster_opt = optarg;
            break;
        case 'h':
            sreport_help();
            exit(0);
        case 'n':
            s->pf.noheader = true;
            break;
        case 'p':
            s->pf.parsable = 1;
            break;
        case 'P':
            s->pf.parsable = 2;
            break;
        case 't': {
            int tf = sr_time_format(optarg);
            if (tf < 0)
                fprintf(stderr, "unknown time format %s", optarg);
            else
                s->tf = (sr_tf_t)tf;
            break;
        }
        case 'T':
            loom_strv_free(&s->tres);
            s->tres_all = false;
            if (sreport_tres(s, optarg) < 0)
                return -1;
            break;
        case 'V':
            loom_cli_version();
            exit(0);
        case 'Q':
        case 'v':
        case 'L':
        case 'F':
            break;
        default:
            sreport_bad_option(argv, c);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    sr_t s = {.pf = {.delim = "|"}, .tf = SR_TF_MINS, .out = LOOM_SBUF_INIT};
    loom_cli_init(&s.cli, "sreport");
    if (sreport_opts(&s, argc, argv) < 0) {
        s.status = 1;
    } else if (optind < argc) {
        sreport_command(&s, argc - optind, argv + optind);
    } else {
        sreport_interactive(&s);
    }
    loom_cli_flush(&s.out);
    loom_sbuf_free(&s.out);
    loom_strv_free(&s.tres);
    loom_rpc_close(s.rpc);
    loom_cli_fini(&s.cli);
    return s.status;
}

/*
 * loom_up.c - `loom up` and `loom down`: a local emulated cluster.
 *
 * `loom up` writes a cluster configuration under a run directory (slurm.conf,
 * gres.conf with fake GPU device files, the cluster key), starts loomdbd
 * (accounting on SQLite in <dir>/state, so sacct works), one loomctld
 * and N loomd (each a named node with its own port, spool directory and GPUs),
 * waits until every node has registered, records what it started in
 * <dir>/loom-up.pids and prints how to use the cluster.
 * `loom down` stops exactly the processes recorded there (after checking that
 * each pid still runs the binary that was started) and nothing else.
 *
 * Entry points: loom_up_main(), loom_down_main() (called by loom.c).
 * DESIGN.md §Local cluster.
 */
#include "cli/loom_up.h"
#include "common/auth.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/rpcclient.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define UP_PIDS_FILE       "loom-up.pids"
#define UP_MAX_NODES       64
#define UP_READY_TIMEOUT_S 30

typedef struct {
    char dir[PATH_MAX]; /* absolute run directory */
    char bindir[PATH_MAX];
    int nodes;
    int gpus;
    int cpus;
    long mem_mib;
    const char *gpu_type;
    const char *partition;
    const char *extra[32]; /* --set Key=Value lines appended to slurm.conf */
    int nextra;
} up_opts_t;

/* A free TCP port on loopback (bind to 0, read it back, release it). */
static int up_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    int port = -EADDRNOTAVAIL;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static int up_mkdir(const char *path, mode_t mode)
{
    if (mkdir(path, mode) == 0 || errno == EEXIST)
        return 0;
    return -errno;
}

/* mkdir -p: every missing component of an absolute path. */
static int up_mkdir_parents(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof(buf))
        return -ENAMETOOLONG;
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = up_mkdir(buf, mode);
        *p = '/';
        if (rc != 0)
            return rc;
    }
    return up_mkdir(buf, mode);
}

static int up_write_file(const char *path, const char *text, mode_t mode)
{
    loom_sbuf_t tmp = LOOM_SBUF_INIT;
    loom_sbuf_addf(&tmp, "%s.tmp", path);
    int fd = open(loom_sbuf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC, mode);
    int rc = fd < 0 ? -errno : 0;
    if (fd >= 0) {
        size_t len = strlen(text);
        ssize_t n = write(fd, text, len);
        rc = (n == (ssize_t)len) ? 0 : -EIO;
        if (close(fd) != 0 && rc == 0)
            rc = -errno;
        if (rc == 0 && rename(loom_sbuf_str(&tmp), path) != 0)
            rc = -errno;
    }
    loom_sbuf_free(&tmp);
    return rc;
}

/* The directory holding this executable: the daemons are installed beside it. */
static int up_find_bindir(char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -errno;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -ENOENT;
    *slash = '\0';
    snprintf(out, size, "%s", exe);
    return 0;
}

static void up_conf_header(const up_opts_t *o, int ctld_port, int dbd_port, loom_sbuf_t *sb)
{
    struct passwd *pw = getpwuid(getuid());
    loom_sbuf_addf(sb,
                   "# Written by `loom up`: an emulated cluster on this host.\n"
                   "ClusterName=loom\n"
                   "SlurmctldHost=localhost(127.0.0.1)\n"
                   "SlurmctldPort=%d\n"
                   "SlurmUser=%s\n"
                   "StateSaveLocation=%s/state\n"
                   "SlurmdSpoolDir=%s/spool/%%n\n"
                   "SlurmctldLogFile=%s/log/loomctld.log\n"
                   "SlurmdLogFile=%s/log/loomd-%%n.log\n"
                   "GresTypes=gpu\n"
                   "SelectType=select/cons_tres\n"
                   "SelectTypeParameters=CR_Core_Memory\n"
                   "SchedulerType=sched/backfill\n"
                   "ProctrackType=proctrack/linuxproc\n"
                   "ReturnToService=2\n"
                   "SlurmdTimeout=60\n"
                   "KillWait=5\n"
                   "MinJobAge=300\n"
                   "DefMemPerCPU=%ld\n"
                   "AccountingStorageType=accounting_storage/slurmdbd\n"
                   "AccountingStorageHost=localhost\n"
                   "AccountingStoragePort=%d\n",
                   ctld_port, pw ? pw->pw_name : "root", o->dir, o->dir, o->dir, o->dir,
                   o->mem_mib / o->cpus, dbd_port);
}

/* slurm.conf and gres.conf text for the run directory; creates fake GPU files. */
static int up_write_configs(const up_opts_t *o, int ctld_port, int dbd_port, const int *node_ports,
                            loom_err_t *err)
{
    loom_sbuf_t conf = LOOM_SBUF_INIT, gres = LOOM_SBUF_INIT;
    char path[PATH_MAX + 64];
    int rc = 0;
    up_conf_header(o, ctld_port, dbd_port, &conf);
    loom_sbuf_addf(&gres, "# Written by `loom up`: fake GPUs are plain files.\n");
    for (int i = 0; i < o->nodes && rc == 0; i++) {
        loom_sbuf_addf(&conf,
                       "NodeName=node%d NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d "
                       "CPUs=%d Sockets=1 CoresPerSocket=%d ThreadsPerCore=1 RealMemory=%ld",
                       i + 1, node_ports[i], o->cpus, o->cpus, o->mem_mib);
        if (o->gpus > 0) {
            loom_sbuf_addf(&conf, " Gres=gpu:%s:%d", o->gpu_type, o->gpus);
            snprintf(path, sizeof(path), "%s/dev/node%d", o->dir, i + 1);
            rc = up_mkdir(path, 0755);
            for (int g = 0; g < o->gpus && rc == 0; g++) {
                snprintf(path, sizeof(path), "%s/dev/node%d/nvidia%d", o->dir, i + 1, g);
                rc = up_write_file(path, "", 0644);
            }
            loom_sbuf_addf(&gres,
                           "NodeName=node%d Name=gpu Type=%s File=%s/dev/node%d/nvidia[0-%d]\n",
                           i + 1, o->gpu_type, o->dir, i + 1, o->gpus - 1);
        }
        loom_sbuf_add(&conf, " State=UNKNOWN\n");
    }
    loom_sbuf_addf(&conf, "PartitionName=%s Nodes=ALL Default=YES MaxTime=7-00:00:00 State=UP\n",
                   o->partition);
    /* Later lines win in slurm.conf, so --set overrides the defaults above. */
    for (int i = 0; i < o->nextra; i++)
        loom_sbuf_addf(&conf, "%s\n", o->extra[i]);
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/etc/slurm.conf", o->dir);
        rc = up_write_file(path, loom_sbuf_str(&conf), 0644);
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/etc/gres.conf", o->dir);
        rc = up_write_file(path, loom_sbuf_str(&gres), 0644);
    }
    loom_sbuf_free(&conf);
    loom_sbuf_free(&gres);
    if (rc != 0)
        return loom_errf(err, rc, "cannot write the configuration under %s: %s", o->dir,
                         loom_strerror(rc));
    return 0;
}

static int up_make_dirs(const up_opts_t *o, loom_err_t *err)
{
    static const char *const subdirs[] = {"", "/etc", "/state", "/spool", "/log", "/dev"};
    char path[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", o->dir, subdirs[i]);
        int rc = i == 0 ? up_mkdir_parents(path, 0755) : up_mkdir(path, 0755);
        if (rc != 0)
            return loom_errf(err, rc, "cannot create %s: %s", path, loom_strerror(rc));
    }
    return 0;
}

/* Start one daemon in its own session, output to <dir>/log/<tag>.out. */
static pid_t up_spawn(const up_opts_t *o, const char *tag, char *const argv[], loom_err_t *err)
{
    char out[PATH_MAX + 32];
    snprintf(out, sizeof(out), "%s/log/%s.out", o->dir, tag);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return loom_errf(err, -rc, "cannot start %s: %s", argv[0], strerror(rc));
    return pid;
}

static int up_record_pid(FILE *fp, pid_t pid, const char *exe)
{
    return fprintf(fp, "%d %s\n", (int)pid, exe) > 0 ? 0 : -EIO;
}

/* Give loomdbd up to 5 s to listen, so that loomctld finds it at once (it
 * would retry, with an error in its log). */
static void up_wait_dbd(const up_opts_t *o)
{
    char sock[PATH_MAX + 32];
    snprintf(sock, sizeof(sock), "%s/state/loomdbd.sock", o->dir);
    for (int i = 0; i < 100 && access(sock, F_OK) != 0; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Start loomdbd, loomctld and every loomd; each started pid goes to the pids
 * file (loom down stops them in reverse order: loomdbd last). */
static int up_start_daemons(const up_opts_t *o, FILE *pids, loom_err_t *err)
{
    char conf[PATH_MAX + 32], exe[PATH_MAX + 16];
    snprintf(conf, sizeof(conf), "%s/etc/slurm.conf", o->dir);
    snprintf(exe, sizeof(exe), "%s/loomdbd", o->bindir);
    char *dbd_argv[] = {exe, "-D", "-f", conf, NULL};
    pid_t pid = up_spawn(o, "loomdbd", dbd_argv, err);
    if (pid < 0)
        return pid;
    up_record_pid(pids, pid, exe);
    fflush(pids);
    up_wait_dbd(o);
    snprintf(exe, sizeof(exe), "%s/loomctld", o->bindir);
    char *ctld_argv[] = {exe, "-D", "-f", conf, NULL};
    pid = up_spawn(o, "loomctld", ctld_argv, err);
    if (pid < 0)
        return pid;
    up_record_pid(pids, pid, exe);
    fflush(pids);
    snprintf(exe, sizeof(exe), "%s/loomd", o->bindir);
    for (int i = 0; i < o->nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node%d", i + 1);
        char *argv[] = {exe, "-D", "-f", conf, "-N", name, "--allow-root-jobs", NULL};
        char tag[48];
        snprintf(tag, sizeof(tag), "loomd-%s", name);
        pid = up_spawn(o, tag, argv, err);
        if (pid < 0)
            return pid;
        up_record_pid(pids, pid, exe);
        fflush(pids);
    }
    return 0;
}

/* Count the nodes that registered (state neither UNKNOWN nor DOWN). */
static int up_count_ready(loom_rpc_t *rpc)
{
    json_t *req = loom_msg_new("node.info", 0);
    json_t *reply = NULL;
    int ready = 0;
    if (loom_rpc_call(rpc, req, &reply, NULL) == 0 && loom_msg_rc(reply, NULL) == 0) {
        json_t *nodes = json_object_get(reply, "nodes"), *n;
        size_t i;
        json_array_foreach(nodes, i, n)
        {
            json_t *state = json_object_get(n, "state"); /* ["IDLE","DRAIN"] */
            const char *st =
                json_string_value(json_is_array(state) ? json_array_get(state, 0) : state);
            if (st && strncmp(st, "UNKNOWN", 7) != 0 && strncmp(st, "DOWN", 4) != 0)
                ready++;
        }
    }
    json_decref(req);
    json_decref(reply);
    return ready;
}

static int up_wait_ready(const up_opts_t *o, loom_err_t *err)
{
    char addr[PATH_MAX + 32];
    snprintf(addr, sizeof(addr), "unix:%s/state/loomctld.sock", o->dir);
    for (int tries = 0; tries < UP_READY_TIMEOUT_S * 4; tries++) {
        loom_rpc_t *rpc = loom_rpc_connect(addr, NULL, 2000, NULL);
        if (rpc) {
            int ready = up_count_ready(rpc);
            loom_rpc_close(rpc);
            if (ready >= o->nodes)
                return 0;
        }
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return loom_errf(err, -LOOM_ETIMEDOUT,
                     "the cluster did not come up within %d s; see the logs in %s/log",
                     UP_READY_TIMEOUT_S, o->dir);
}

static void up_print_usage_hint(const up_opts_t *o)
{
    printf("Loom cluster up: 1 controller, %d node%s (%d CPUs, %ld MiB, %d fake %s GPU%s each)\n",
           o->nodes, o->nodes == 1 ? "" : "s", o->cpus, o->mem_mib, o->gpus, o->gpu_type,
           o->gpus == 1 ? "" : "s");
    printf("Run directory: %s (logs in %s/log)\n\n", o->dir, o->dir);
    printf("Use it from this shell:\n");
    printf("  export SLURM_CONF=%s/etc/slurm.conf PATH=%s:$PATH\n", o->dir, o->bindir);
    printf("  sinfo; sbatch --wrap='hostname'; squeue; sacct\n\n");
    printf("Stop it: loom down --dir %s\n", o->dir);
}

static void up_usage(FILE *fp)
{
    fprintf(fp, "Usage: loom up [--dir DIR] [--nodes N] [--gpus-per-node G] [--gpu-type T]\n"
                "               [--cpus-per-node C] [--mem-per-node MIB] [--partition NAME]\n"
                "               [--set Key=Value]...   (extra slurm.conf lines)\n"
                "       loom down [--dir DIR]\n"
                "DIR defaults to ./loom-run.\n");
}

static int up_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -LOOM_EPARSE;
    *out = v;
    return 0;
}

static int up_set_dir(up_opts_t *o, const char *dir, loom_err_t *err)
{
    char cwd[PATH_MAX];
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (dir[0] != '/' && !getcwd(cwd, sizeof(cwd)))
        return loom_errf(err, -errno, "cannot read the current directory");
    if (dir[0] == '/')
        loom_sbuf_add(&sb, dir);
    else
        loom_sbuf_addf(&sb, "%s/%s", cwd, dir);
    while (sb.len > 1 && sb.buf[sb.len - 1] == '/')
        loom_sbuf_truncate(&sb, sb.len - 1);
    int rc = 0;
    if (sb.len >= sizeof(o->dir) - 64) /* room for the files under it */
        rc = loom_errf(err, -ENAMETOOLONG, "run directory name too long: %s", dir);
    else
        memcpy(o->dir, sb.buf, sb.len + 1);
    loom_sbuf_free(&sb);
    return rc;
}

enum {
    UP_OPT_DIR = 1,
    UP_OPT_NODES,
    UP_OPT_GPUS,
    UP_OPT_GPU_TYPE,
    UP_OPT_CPUS,
    UP_OPT_MEM,
    UP_OPT_PART,
    UP_OPT_SET,
    UP_OPT_HELP
};

static const struct option up_longopts[] = {
    {"dir", required_argument, NULL, UP_OPT_DIR},
    {"nodes", required_argument, NULL, UP_OPT_NODES},
    {"gpus-per-node", required_argument, NULL, UP_OPT_GPUS},
    {"gpu-type", required_argument, NULL, UP_OPT_GPU_TYPE},
    {"cpus-per-node", required_argument, NULL, UP_OPT_CPUS},
    {"mem-per-node", required_argument, NULL, UP_OPT_MEM},
    {"partition", required_argument, NULL, UP_OPT_PART},
    {"set", required_argument, NULL, UP_OPT_SET},
    {"help", no_argument, NULL, UP_OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* One option into o; -LOOM_EPARSE with the message in err on a bad value. */
static int up_apply_opt(up_opts_t *o, int c, const char *arg, loom_err_t *err)
{
    long v = 0;
    int rc = 0;
    switch (c) {
    case UP_OPT_DIR:
        return up_set_dir(o, arg, err);
    case UP_OPT_NODES:
        rc = up_parse_int(arg, 1, UP_MAX_NODES, &v);
        o->nodes = (int)v;
        break;
    case UP_OPT_GPUS:
        rc = up_parse_int(arg, 0, 64, &v);
        o->gpus = (int)v;
        break;
    case UP_OPT_CPUS:
        rc = up_parse_int(arg, 1, 4096, &v);
        o->cpus = (int)v;
        break;
    case UP_OPT_MEM:
        rc = up_parse_int(arg, 1, 64L * 1024 * 1024, &v);
        o->mem_mib = v;
        break;
    case UP_OPT_GPU_TYPE:
        o->gpu_type = arg;
        break;
    case UP_OPT_PART:
        o->partition = arg;
        break;
    case UP_OPT_SET:
        if (!strchr(arg, '=') || strchr(arg, '\n') || o->nextra == 32)
            return loom_errf(err, -LOOM_EPARSE, "--set takes Key=Value (at most 32): '%s'", arg);
        o->extra[o->nextra++] = arg;
        break;
    default:
        return loom_errf(err, -LOOM_EPARSE, "unknown option (see loom up --help)");
    }
    if (rc != 0)
        return loom_errf(err, rc, "invalid value '%s'", arg);
    return 0;
}

static int up_parse_args(up_opts_t *o, int argc, char **argv, bool *help, loom_err_t *err)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", up_longopts, NULL)) != -1) {
        if (c == UP_OPT_HELP) {
            *help = true;
            return 0;
        }
        int rc = up_apply_opt(o, c, optarg, err);
        if (rc != 0)
            return rc;
    }
    if (optind < argc)
        return loom_errf(err, -LOOM_EPARSE, "unexpected argument '%s'", argv[optind]);
    return 0;
}

static void up_defaults(up_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    up_set_dir(o, "loom-run", NULL);
    o->nodes = 2;
    o->gpus = 4;
    o->cpus = 16;
    o->mem_mib = 128 * 1024;
    o->gpu_type = "h100";
    o->partition = "gpu";
}

static int up_run(up_opts_t *o, loom_err_t *err)
{
    char path[PATH_MAX + 32];
    int rc = up_find_bindir(o->bindir, sizeof(o->bindir));
    if (rc != 0)
        return loom_errf(err, rc, "cannot find the directory of the loom binary");
    snprintf(path, sizeof(path), "%s/%s", o->dir, UP_PIDS_FILE);
    if (access(path, F_OK) == 0)
        return loom_errf(err, -EEXIST, "a cluster already runs from %s (loom down --dir %s)",
                         o->dir, o->dir);
    if ((rc = up_make_dirs(o, err)) != 0)
        return rc;
    int ctld_port = up_free_port(), dbd_port = up_free_port(), node_ports[UP_MAX_NODES];
    for (int i = 0; i < o->nodes; i++)
        node_ports[i] = up_free_port();
    if ((rc = up_write_configs(o, ctld_port, dbd_port, node_ports, err)) != 0)
        return rc;
    snprintf(path, sizeof(path), "%s/etc/slurm.key", o->dir);
    if (access(path, F_OK) != 0 && (rc = loom_key_generate(path, err)) != 0)
        return rc;
    snprintf(path, sizeof(path), "%s/%s", o->dir, UP_PIDS_FILE);
    FILE *pids = fopen(path, "w");
    if (!pids)
        return loom_errf(err, -errno, "cannot write %s: %s", path, strerror(errno));
    rc = up_start_daemons(o, pids, err);
    fclose(pids);
    if (rc == 0)
        rc = up_wait_ready(o, err);
    return rc;
}

int loom_up_main(int argc, char **argv)
{
    up_opts_t o;
    loom_err_t err = {0};
    bool help = false;
    up_defaults(&o);
    if (up_parse_args(&o, argc, argv, &help, &err) != 0) {
        fprintf(stderr, "loom: error: up: %s\n", err.msg);
        return 1;
    }
    if (help) {
        up_usage(stdout);
        return 0;
    }
    if (up_run(&o, &err) != 0) {
        fprintf(stderr, "loom: error: up: %s\n", err.msg);
        return 1;
    }
    up_print_usage_hint(&o);
    return 0;
}

/* True when /proc/<pid>/exe still names exe: the pid was not reused. A
 * binary rebuilt since it started reads "exe (deleted)". */
static bool down_same_process(pid_t pid, const char *exe)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return false;
    target[n] = '\0';
    size_t len = strlen(exe);
    return strncmp(target, exe, len) == 0 &&
           (target[len] == '\0' || strcmp(target + len, " (deleted)") == 0);
}

/* SIGTERM, then wait up to 10 s, then SIGKILL. Returns 1 if it was running. */
static int down_stop(pid_t pid, const char *exe)
{
    if (!down_same_process(pid, exe))
        return 0;
    kill(pid, SIGTERM);
    for (int i = 0; i < 100 && down_same_process(pid, exe); i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (down_same_process(pid, exe))
        kill(pid, SIGKILL);
    return 1;
}

int loom_down_main(int argc, char **argv)
{
    up_opts_t o;
    loom_err_t err = {0};
    bool help = false;
    up_defaults(&o);
    if (up_parse_args(&o, argc, argv, &help, &err) != 0) {
        fprintf(stderr, "loom: error: down: %s\n", err.msg);
        return 1;
    }
    if (help) {
        up_usage(stdout);
        return 0;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", o.dir, UP_PIDS_FILE);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "loom: error: down: no cluster started from %s (%s)\n", o.dir,
                strerror(errno));
        return 1;
    }
    int pid, stopped = 0;
    char exe[PATH_MAX];
    /* Node daemons first, then the controller, loomdbd last: the file lists
     * them in the order they started. */
    int pids[UP_MAX_NODES + 2], count = 0;
    char exes[UP_MAX_NODES + 2][PATH_MAX];
    while (count < UP_MAX_NODES + 2 && fscanf(fp, "%d %4095s", &pid, exe) == 2) {
        pids[count] = pid;
        snprintf(exes[count++], PATH_MAX, "%s", exe);
    }
    fclose(fp);
    for (int i = count - 1; i >= 0; i--)
        stopped += down_stop(pids[i], exes[i]);
    unlink(path);
    printf("Loom cluster in %s stopped (%d daemon%s).\n", o.dir, stopped, stopped == 1 ? "" : "s");
    return 0;
}

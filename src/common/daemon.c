/*
 * daemon.c - what loomctld, loomdbd and loomd do alike at start-up.
 * See daemon.h.
 */
#include "common/daemon.h"

#include "common/err.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define DAEMON_SHORTOPTS "Df:L:vVh"

static const struct option daemon_longopts[] = {
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
};

#define DAEMON_NLONG (sizeof(daemon_longopts) / sizeof(daemon_longopts[0]))

/* The common long options, then the daemon's, then the zero entry (caller frees). */
static struct option *daemon_all_longopts(const struct option *own)
{
    size_t n = 0;
    while (own && own[n].name)
        n++;
    struct option *all = loom_xcalloc(DAEMON_NLONG + n + 1, sizeof(*all));
    memcpy(all, daemon_longopts, sizeof(daemon_longopts));
    if (n)
        memcpy(all + DAEMON_NLONG, own, n * sizeof(*own));
    return all;
}

/* One option; 0 taken, 1 -V/-h done, -LOOM_EUSAGE bad. */
static int daemon_option(int ch, const loom_daemon_spec_t *spec, loom_daemon_opts_t *o)
{
    switch (ch) {
    case 'D':
        o->foreground = true;
        return 0;
    case 'f':
        o->conf = optarg;
        return 0;
    case 'L':
        o->log = optarg;
        return 0;
    case 'v':
        o->verbose++;
        return 0;
    case 'V':
        printf("slurm %s\n", LOOM_SLURM_VERSION);
        return 1;
    case 'h':
        printf("%s\n", spec->usage);
        return 1;
    case '?':
    case ':':
        return -LOOM_EUSAGE;
    default:
        if (spec->opt && spec->opt(ch, optarg, spec->ctx) == 0)
            return 0;
        return -LOOM_EUSAGE;
    }
}

int loom_daemon_args(int argc, char **argv, const loom_daemon_spec_t *spec, loom_daemon_opts_t *o)
{
    loom_sbuf_t shortopts = LOOM_SBUF_INIT;
    loom_sbuf_add(&shortopts, DAEMON_SHORTOPTS);
    if (spec->shortopts)
        loom_sbuf_add(&shortopts, spec->shortopts);
    struct option *longopts = daemon_all_longopts(spec->longopts);
    int ch, rc = 0;
    optind = 0; /* glibc: start over, as on a first call */
    while (rc == 0 &&
           (ch = getopt_long(argc, argv, loom_sbuf_str(&shortopts), longopts, NULL)) != -1)
        rc = daemon_option(ch, spec, o);
    if (rc == 0 && optind != argc)
        rc = -LOOM_EUSAGE;
    if (rc < 0)
        fprintf(stderr, "%s\n", spec->usage);
    loom_sbuf_free(&shortopts);
    free(longopts);
    return rc;
}

loom_log_level_t loom_daemon_level(const char *conf_level, int verbose)
{
    loom_log_level_t level = LOOM_LOG_INFO;
    if (conf_level)
        loom_log_parse_level(conf_level, &level);
    for (int i = 0; i < verbose && level < LOOM_LOG_DEBUG2; i++)
        level = (loom_log_level_t)(level + 1);
    return level;
}

int loom_daemonize(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid > 0)
        _exit(0);
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2)
            close(fd);
    }
    return 0;
}

void loom_daemon_pidfile(const char *path)
{
    if (!path)
        return;
    FILE *fp = fopen(path, "we");
    if (fp) {
        fprintf(fp, "%d\n", (int)getpid());
        fclose(fp);
    }
}

int loom_daemon_lock(const char *path, const char *who, loom_err_t *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return loom_errf(err, -errno, "cannot open the lock %s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        char *dir = loom_daemon_beside(path, ".");
        dir[strlen(dir) - 2] = '\0'; /* "<dir>/." */
        loom_errf(err, -EBUSY, "another %s uses %s", who, dir);
        free(dir);
        return -EBUSY;
    }
    return fd;
}

char *loom_daemon_beside(const char *path, const char *name)
{
    char *copy = loom_xstrdup(path);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s/%s", dirname(copy), name);
    free(copy);
    return loom_sbuf_detach(&sb);
}

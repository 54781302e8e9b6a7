/*
 * daemon.h - what loomctld, loomdbd and loomd do alike at start-up.
 *
 * The command line every daemon takes (-D, -f slurm.conf, -L logfile, -v...,
 * -V/--version, -h/--help) plus a daemon's own options, handed to a
 * callback; the log level from a configured debug level and -v's; going to
 * the background (fork, setsid, stdin/stdout/stderr on /dev/null); the pid
 * file; a path beside the configuration file.
 *
 * Entry points: loom_daemon_args, loom_daemon_level, loom_daemonize,
 * loom_daemon_pidfile, loom_daemon_beside.
 * Invariants: loom_daemon_args is the one libloom function that prints (the
 * usage, the version and getopt's complaints: it is a daemon's command
 * line); it resets getopt (optind) so that it can be called again.
 */
#ifndef LOOM_DAEMON_H
#define LOOM_DAEMON_H

#include "common/err.h"
#include "common/log.h"

#include <getopt.h>
#include <stdbool.h>

/* The options every daemon takes. */
typedef struct loom_daemon_opts {
    const char *conf; /* -f: slurm.conf */
    const char *log;  /* -L: the log file */
    bool foreground;  /* -D */
    int verbose;      /* one per -v */
} loom_daemon_opts_t;

/* One of a daemon's own options: ch as getopt_long returned it, arg its
 * argument (NULL without); 0 when taken, negative for a bad one. */
typedef int (*loom_daemon_opt_f)(int ch, const char *arg, void *ctx);

/* A daemon's command line. */
typedef struct loom_daemon_spec {
    const char *usage;             /* "Usage: loomd [-D] ...", no newline */
    const char *shortopts;         /* its own, getopt syntax ("c", "N:"), or NULL */
    const struct option *longopts; /* its own, ending in a zero entry, or NULL */
    loom_daemon_opt_f opt;         /* called for each of its own; NULL without */
    void *ctx;                     /* the callback's argument */
} loom_daemon_spec_t;

/* Parse argv into o (left as it was for options not given; on failure it may
 * hold the options before the bad one: the daemon exits). Returns 0 to run;
 * 1 after -V ("slurm <version>") or -h (the usage), printed on stdout: the
 * daemon exits 0; -LOOM_EUSAGE for an unknown option, a missing argument or
 * a stray word, the usage printed on stderr: the daemon exits 1. */
int loom_daemon_args(int argc, char **argv, const loom_daemon_spec_t *spec, loom_daemon_opts_t *o);

/* INFO, or the configured level (Slurm's names; NULL or a bad name: INFO),
 * one step up per -v, at most DEBUG2. */
loom_log_level_t loom_daemon_level(const char *conf_level, int verbose);

/* Into the background: fork (the parent exits 0), setsid, stdin, stdout and
 * stderr on /dev/null. Returns 0 in the child, -errno when fork failed. */
int loom_daemonize(void);

/* Write "<pid>\n" to path; nothing for NULL, nothing either when it cannot
 * be written (as slurmctld, the daemon runs on). */
void loom_daemon_pidfile(const char *path);

/* Hold an exclusive lock on path (created 0600) for the life of the process,
 * so that a second daemon on the same state refuses to start before it
 * touches anything. Returns the descriptor to keep open, or -EBUSY with
 * "another <who> uses <dir>" (-errno when path cannot be opened). */
int loom_daemon_lock(const char *path, const char *who, loom_err_t *err);

/* "<directory of path>/<name>" (caller frees). */
char *loom_daemon_beside(const char *path, const char *name);

#endif

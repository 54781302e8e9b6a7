/*
 * scontrol.h - what scontrol.c and its scontrol_*.c parts share
 * (CLI_SPEC §9).
 *
 * scontrol.c parses the global options and dispatches a command line (argv
 * words, or lines read from stdin in interactive mode) to the functions
 * below. Each returns the command's exit status (0 or cli.exit_error) and
 * prints its own messages, with Slurm's wording.
 */
#ifndef LOOM_SCONTROL_H
#define LOOM_SCONTROL_H

#include "cli/cli_common.h"

#include <stdbool.h>

typedef struct loom_scontrol {
    loom_cli_t cli;
    bool oneliner; /* -o */
    bool details;  /* -d */
    bool json;     /* --json */
    bool quiet;    /* -Q */
    int argc;      /* the command line, for the --json meta */
    char **argv;
} loom_scontrol_t;

/* show <entity> [name]: words[0] is the entity. */
int loom_scontrol_show(loom_scontrol_t *sc, int n, char **words);
/* update Key=Value ... */
int loom_scontrol_update(loom_scontrol_t *sc, int n, char **words);
/* hold, uhold, release: ids in words. */
int loom_scontrol_hold(loom_scontrol_t *sc, const char *verb, int n, char **words);
/* requeue [Incomplete] ids; requeuehold [State=SpecialExit] ids. */
int loom_scontrol_requeue(loom_scontrol_t *sc, bool hold, int n, char **words);
/* suspend ids / resume ids (admin). */
int loom_scontrol_suspend(loom_scontrol_t *sc, bool resume, int n, char **words);

/* ping: "Slurmctld(primary) at <host> is UP"; exit status 0 when it answered. */
int loom_scontrol_ping(loom_scontrol_t *sc);

/* scontrol_admin.c: setdebug LEVEL, setdebugflags [+|-]NAME..., schedloglevel,
 * wait_job J; show daemons (aliases false) and show aliases. */
int loom_scontrol_setdebug(loom_scontrol_t *sc, int n, char **words);
int loom_scontrol_setdebugflags(loom_scontrol_t *sc, int n, char **words);
int loom_scontrol_schedloglevel(loom_scontrol_t *sc, int n, char **words);
int loom_scontrol_wait_job(loom_scontrol_t *sc, int n, char **words);
int loom_scontrol_show_host(loom_scontrol_t *sc, bool aliases, int n);

/* Does word abbreviate name (case-insensitive, at least min characters)? */
bool loom_scontrol_word_is(const char *word, const char *name, size_t min);

#endif

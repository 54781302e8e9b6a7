/*
 * jobopt_table.h - the option table behind jobopt.h (CLI_SPEC §1, §2, §3, §12).
 *
 * One row per long option name (aliases are rows sharing an id). A row says
 * which commands accept it, its short letter and argument kind there, the
 * input environment variable of each command, how a value is applied (the
 * setter), and its --help line. The rows follow Slurm 22.05's table order,
 * which is the order getopt lists ambiguous prefixes in.
 *
 * Entry points: loom_jobopt_defs() (the rows), loom_jobopt_find_id() and
 * loom_jobopt_def_id() (option ids for o->src[]), loom_jobopt_help_table() (help text from the
 * rows). Invariant: for any one command, long names and letters are unique.
 */
#ifndef LOOM_JOBOPT_TABLE_H
#define LOOM_JOBOPT_TABLE_H

#include "common/jobopt.h"

#include <stddef.h>

typedef enum {
    LOOM_JOBOPT_ARG_NONE = 0,
    LOOM_JOBOPT_ARG_REQ,
    LOOM_JOBOPT_ARG_OPT,
} loom_jobopt_arg_t;

/* Command masks. */
#define LOOM_JOBOPT_M_SBATCH (1u << LOOM_JOBOPT_SBATCH)
#define LOOM_JOBOPT_M_SRUN   (1u << LOOM_JOBOPT_SRUN)
#define LOOM_JOBOPT_M_SALLOC (1u << LOOM_JOBOPT_SALLOC)
#define LOOM_JOBOPT_M_ALL    (LOOM_JOBOPT_M_SBATCH | LOOM_JOBOPT_M_SRUN | LOOM_JOBOPT_M_SALLOC)

/* Row flags. */
#define LOOM_JOBOPT_F_ENV_VALUE                                                                    \
    0x01                           /* a flag option whose variable carries a value (SBATCH_DEBUG) */
#define LOOM_JOBOPT_F_IGNORED 0x02 /* accepted and ignored (P2) */

typedef struct loom_jobopt_def loom_jobopt_def_t;

/* Apply arg (NULL when none was given) to o. Errors name d's option. */
typedef int loom_jobopt_set_f(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *arg,
                              loom_err_t *err);

struct loom_jobopt_def {
    const char *name;       /* long name, without "--" */
    char letter;            /* short option, 0 when none */
    uint8_t arg;            /* loom_jobopt_arg_t */
    uint8_t cmds;           /* LOOM_JOBOPT_M_* */
    uint8_t flags;          /* LOOM_JOBOPT_F_* */
    size_t off;             /* field offset in loom_jobopt_t for generic setters */
    const char *canon;      /* name used in messages when not name (aliases) */
    const char *env[3];     /* input variable per command, "A|B" = A, else B; NULL none */
    loom_jobopt_set_f *set; /* how a value is applied */
    const char *help_arg;   /* "=indexes" in --help, NULL for none */
    const char *help;       /* --help text; NULL: not listed */
};

/* All rows; *n gets their count. */
const loom_jobopt_def_t *loom_jobopt_defs(size_t *n);

/* The id of the option with this long name (any alias), or -1: the index of
 * its first row, so ids are below LOOM_JOBOPT_MAX_IDS and aliases share one. */
int loom_jobopt_find_id(const char *name);
/* The id of a row. */
int loom_jobopt_def_id(const loom_jobopt_def_t *d);

/* --mail-type bits as Slurm prints them: "BEGIN,END", "NONE". */
void loom_jobopt_mail_fmt(uint32_t bits, loom_sbuf_t *out);

/* The option lines of --help for cmd. */
void loom_jobopt_help_table(loom_jobopt_cmd_t cmd, loom_sbuf_t *out);

#endif

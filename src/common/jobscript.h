/*
 * jobscript.h - batch scripts as sbatch sees them: the checks it makes before
 * submitting, the #SBATCH directives, and the --wrap script (CLI_SPEC §0.8,
 * §0.10, §1).
 *
 * Entry points:
 *   loom_jobscript_check()       reject what Slurm's sbatch rejects, with its words
 *   loom_jobscript_directives()  collect the directive arguments, each with its line
 *   loom_jobscript_wrap()        the script sbatch --wrap="cmd" submits
 *
 * Checks, in Slurm's order (each message is Slurm's text; a multi-line message
 * has one '\n' between lines and the caller prints each line with its
 * "sbatch: error: " prefix):
 *   empty                    "Batch script is empty!"
 *   only whitespace          "Batch script contains only whitespace!"
 *   no "#!" at byte 0        "This does not look like a batch script.  The first" /
 *                            "line must start with #! followed by the path to an interpreter." /
 *                            "For instance: #!/bin/sh"
 *   a NUL byte               "The Slurm controller does not allow scripts that" /
 *                            "contain a NULL character '\0'."
 *   "\r\n" anywhere          "Batch script contains DOS line breaks (\r\n)" /
 *                            "instead of expected UNIX line breaks (\n)."
 *
 * Directive rules (as Slurm 22.05 reads them):
 *   - lines are split on '\n'; a directive line starts with "#SBATCH" at byte 0
 *     (an indented "#SBATCH" is an ordinary comment). "#SLURM" is read the same
 *     way with a warning (Slurm's old prefix). The prefix is matched without a
 *     word boundary, so "#SBATCHX --a" yields the arguments "X" and "--a" (and
 *     the option parser then rejects "X" as Slurm does).
 *   - scanning stops at the first line that is neither blank nor a comment
 *     (first non-space character '#'); later directives are ignored.
 *   - a directive's text splits into arguments at unquoted whitespace; '...'
 *     and "..." group (quotes may appear inside a word: a"b c"d is `ab cd`); a
 *     backslash keeps the next character literally (also inside quotes); an
 *     unquoted, unescaped '#' ends the line (comment), even inside a word. No
 *     other shell processing: no variables, globs or command substitution.
 *   - an empty argument ("" or '') ends the line's arguments, as in Slurm.
 *   - an unmatched quote is an error: "<file>: line N: Unmatched `"` in [text]".
 *   - a line whose arguments include "hetjob"/"packjob" (heterogeneous-job
 *     separator, CLI_SPEC P2) ends the scan: only the first component is read,
 *     with a warning.
 * Arguments of all directive lines form one argv, so "#SBATCH -J" followed by
 * "#SBATCH name" is "-J name", as with Slurm.
 *
 * Ownership: loom_jobscript_dirs_t owns its arguments, line numbers and
 * warnings; loom_jobscript_dirs_free() releases them (accepts NULL).
 */
#ifndef LOOM_JOBSCRIPT_H
#define LOOM_JOBSCRIPT_H

#include "common/err.h"
#include "common/strv.h"

#include <stddef.h>

/* What sbatch --wrap puts before the command (the command and a '\n' follow). */
#define LOOM_JOBSCRIPT_WRAP_HEAD "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n"

typedef struct loom_jobscript_dirs {
    loom_strv_t args;     /* directive arguments in script order */
    int *lines;           /* lines[i]: 1-based script line of args.v[i] */
    size_t lines_cap;     /* allocated entries of lines */
    loom_strv_t warnings; /* messages for the caller to print ("sbatch: error: "), e.g. #SLURM */
} loom_jobscript_dirs_t;

#define LOOM_JOBSCRIPT_DIRS_INIT                                                                   \
    {                                                                                              \
        LOOM_STRV_INIT, NULL, 0, LOOM_STRV_INIT                                                    \
    }

/* 0 when sbatch would accept the script, else -LOOM_EPARSE with the message above. */
int loom_jobscript_check(const char *buf, size_t len, loom_err_t *err);

/* Append the directives (prefix "#SBATCH"; NULL means "#SBATCH") of buf to out.
 * file names the script in messages (NULL: "script"). On error (-LOOM_EPARSE,
 * unmatched quote) out is unchanged. Returns the number of arguments added. */
int loom_jobscript_directives(const char *buf, size_t len, const char *prefix, const char *file,
                              loom_jobscript_dirs_t *out, loom_err_t *err);

void loom_jobscript_dirs_free(loom_jobscript_dirs_t *d);

/* The --wrap script for cmd: LOOM_JOBSCRIPT_WRAP_HEAD, cmd, "\n". Caller frees. */
char *loom_jobscript_wrap(const char *cmd);

#endif

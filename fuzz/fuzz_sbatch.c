/*
 * fuzz_sbatch.c - a batch script as sbatch reads it (src/common/jobscript.c,
 * src/common/jobopt.c; CLI_SPEC §0.8, §0.10, §1-§3).
 *
 * The input is a script: the sbatch checks, #SBATCH extraction, then the
 * options of the directives (plus a command line naming the script) through
 * loom_jobopt_load, the job description and --export. The same directive
 * arguments are also parsed as srun and salloc command lines, and those of the
 * form NAME=value as each command's input environment. Invariants (abort()
 * otherwise): a failure returns the code it put in err with a message, and
 * err_fmt renders it; a success yields a JSON object that serialises.
 */
#include "common/jobopt.h"
#include "common/jobscript.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NOW 1700000000 /* a fixed clock keeps runs reproducible */

static void fuzz_check_err(loom_jobopt_cmd_t cmd, int rc, const loom_err_t *err)
{
    if (rc >= 0)
        return;
    if (err->code != rc || err->msg[0] == '\0')
        abort();
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_jobopt_err_fmt(cmd, err, &sb);
    if (sb.len == 0)
        abort();
    loom_sbuf_free(&sb);
}

static void fuzz_json(loom_jobopt_t *o)
{
    static char *envp[] = {"PATH=/bin", "SLURM_CONF=/etc/slurm.conf", "HOME=/h", NULL};
    loom_jobopt_set_cwd(o, "/submit/dir");
    loom_jobopt_export_env(o, envp);
    json_t *j = loom_jobopt_to_json(o);
    if (!json_is_object(j))
        abort();
    char *s = json_dumps(j, JSON_COMPACT);
    if (!s)
        abort();
    free(s);
    json_decref(j);
}

/* sbatch: directives, then "sbatch fuzz.sh". */
static void fuzz_sbatch(const loom_jobscript_dirs_t *d)
{
    char *argv[] = {"sbatch", "fuzz.sh", NULL};
    loom_jobopt_t o;
    loom_err_t err = {0};
    loom_jobopt_init(&o, LOOM_JOBOPT_SBATCH);
    o.now = FUZZ_NOW;
    int rc = loom_jobopt_load(&o, 2, argv, NULL, d, &err);
    fuzz_check_err(o.cmd, rc, &err);
    if (rc >= 0)
        fuzz_json(&o);
    loom_jobopt_free(&o);
}

/* The directive arguments as a command line, and NAME=value ones as its environment. */
static void fuzz_command(loom_jobopt_cmd_t cmd, const loom_jobscript_dirs_t *d)
{
    size_t n = d->args.n;
    char **argv = loom_xcalloc(n + 2, sizeof(char *));
    char **envp = loom_xcalloc(n + 1, sizeof(char *));
    size_t ne = 0;
    argv[0] = (char *)loom_jobopt_cmd_name(cmd);
    for (size_t i = 0; i < n; i++) {
        argv[i + 1] = d->args.v[i];
        if (isupper((unsigned char)d->args.v[i][0]) && strchr(d->args.v[i], '='))
            envp[ne++] = d->args.v[i];
    }
    loom_jobopt_t o;
    loom_err_t err = {0};
    loom_jobopt_init(&o, cmd);
    o.now = FUZZ_NOW;
    int rc = loom_jobopt_load(&o, (int)n + 1, argv, envp, NULL, &err);
    fuzz_check_err(cmd, rc, &err);
    if (rc >= 0) {
        if (rc > (int)n + 1 || o.argv.n != n + 1 - (size_t)rc)
            abort();
        fuzz_json(&o);
    }
    loom_jobopt_free(&o);
    free(argv);
    free(envp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = loom_xmalloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    loom_err_t err = {0};
    int rc = loom_jobscript_check(buf, size, &err);
    if (rc < 0 && (err.code != rc || err.msg[0] == '\0'))
        abort();
    loom_jobscript_dirs_t d = LOOM_JOBSCRIPT_DIRS_INIT;
    rc = loom_jobscript_directives(buf, size, NULL, "fuzz.sh", &d, &err);
    if (rc < 0 && (err.code != rc || err.msg[0] == '\0'))
        abort();
    if (rc >= 0) {
        if ((size_t)rc != d.args.n)
            abort();
        fuzz_sbatch(&d);
        fuzz_command(LOOM_JOBOPT_SRUN, &d);
        fuzz_command(LOOM_JOBOPT_SALLOC, &d);
    }
    loom_jobscript_dirs_free(&d);
    free(buf);
    return 0;
}

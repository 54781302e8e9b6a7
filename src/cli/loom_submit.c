/* loom_submit.c - sbatch runs, state files and quoting for loom sweep/pipeline.
 * See loom_submit.h. */
#include "cli/loom_submit.h"
#include "common/jobopt_table.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- running sbatch ------------------------------------------------------------ */

/* sbatch beside this binary, else the name for a PATH search. */
static char *submit_sbatch_path(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            loom_sbuf_t sb = LOOM_SBUF_INIT;
            loom_sbuf_addf(&sb, "%.*s/sbatch", (int)(slash - self), self);
            if (access(loom_sbuf_str(&sb), X_OK) == 0)
                return loom_sbuf_detach(&sb);
            loom_sbuf_free(&sb);
        }
    }
    return loom_xstrdup("sbatch");
}

static void submit_write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* sbatch stopped reading: its exit status tells */
        s += w;
        n -= (size_t)w;
    }
}

static void submit_read_all(int fd, loom_sbuf_t *out)
{
    char buf[4096];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        loom_sbuf_addn(out, buf, (size_t)r);
    }
}

/* Spawn sbatch with stdin and stdout on pipes. */
static int submit_spawn(const loom_strv_t *args, int in[2], int out[2], pid_t *pid)
{
    loom_strv_t argv = LOOM_STRV_INIT;
    char *path = submit_sbatch_path();
    loom_strv_add(&argv, path);
    loom_strv_add(&argv, "--parsable");
    for (size_t i = 0; i < args->n; i++)
        loom_strv_add(&argv, args->v[i]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    int rc = posix_spawnp(pid, path, &fa, NULL, argv.v, environ);
    posix_spawn_file_actions_destroy(&fa);
    loom_strv_free(&argv);
    free(path);
    return rc ? -rc : 0;
}

int loom_submit_sbatch(const loom_strv_t *args, const char *script, uint32_t *job_id)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(out, O_CLOEXEC) < 0) {
        int e = errno;
        close(in[0]);
        close(in[1]);
        return -e;
    }
    pid_t pid;
    int rc = submit_spawn(args, in, out, &pid);
    close(in[0]);
    close(out[1]);
    if (rc == 0) {
        void (*old)(int) = signal(SIGPIPE, SIG_IGN);
        if (script)
            submit_write_all(in[1], script, strlen(script));
        close(in[1]);
        signal(SIGPIPE, old);
        loom_sbuf_t text = LOOM_SBUF_INIT;
        submit_read_all(out[0], &text);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        char *end = NULL;
        unsigned long id = strtoul(loom_sbuf_str(&text), &end, 10);
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        if (rc == 0 && (!id || end == loom_sbuf_str(&text)))
            rc = 1;
        if (rc == 0)
            *job_id = (uint32_t)id;
        loom_sbuf_free(&text);
    } else {
        close(in[1]);
    }
    close(out[0]);
    return rc;
}

/* ---- state files --------------------------------------------------------------- */

static int submit_mkdir(const char *path)
{
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -errno;
}

char *loom_submit_state_path(const char *tool, const char *name)
{
    const char *base = getenv("LOOM_STATE_DIR");
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (base && *base) {
        loom_sbuf_add(&sb, base);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home)
            return NULL;
        loom_sbuf_addf(&sb, "%s/.loom", home);
    }
    int rc = submit_mkdir(loom_sbuf_str(&sb));
    loom_sbuf_addf(&sb, "/%s", tool);
    if (rc == 0)
        rc = submit_mkdir(loom_sbuf_str(&sb));
    if (rc < 0) {
        loom_sbuf_free(&sb);
        return NULL;
    }
    if (name)
        loom_sbuf_addf(&sb, "/%s", name);
    return loom_sbuf_detach(&sb);
}

int loom_submit_save(const char *path, const json_t *doc)
{
    loom_sbuf_t tmp = LOOM_SBUF_INIT;
    loom_sbuf_addf(&tmp, "%s.tmp", path);
    int rc = json_dump_file(doc, loom_sbuf_str(&tmp), JSON_INDENT(1)) < 0 ? -EIO : 0;
    if (rc == 0 && rename(loom_sbuf_str(&tmp), path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(loom_sbuf_str(&tmp));
    loom_sbuf_free(&tmp);
    return rc;
}

json_t *loom_submit_load(const char *path)
{
    return json_load_file(path, 0, NULL);
}

/* ---- words ------------------------------------------------------------------------- */

void loom_submit_shquote(const char *s, loom_sbuf_t *out)
{
    loom_sbuf_addc(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            loom_sbuf_add(out, "'\\''");
        else
            loom_sbuf_addc(out, *s);
    }
    loom_sbuf_addc(out, '\'');
}

/* The sbatch row of a long name, or its unique prefix (as getopt takes it). */
static const loom_jobopt_def_t *submit_find_long(const char *name, size_t len)
{
    size_t n;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&n), *hit = NULL;
    int hits = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(defs[i].cmds & LOOM_JOBOPT_M_SBATCH) || strncmp(defs[i].name, name, len) != 0)
            continue;
        if (strlen(defs[i].name) == len)
            return &defs[i];
        if (!hit || loom_jobopt_def_id(hit) != loom_jobopt_def_id(&defs[i]))
            hits++;
        hit = &defs[i];
    }
    return hits == 1 ? hit : NULL;
}

static const loom_jobopt_def_t *submit_find_short(char letter)
{
    size_t n;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&n);
    for (size_t i = 0; i < n; i++)
        if (defs[i].letter == letter && (defs[i].cmds & LOOM_JOBOPT_M_SBATCH))
            return &defs[i];
    return NULL;
}

int loom_submit_opt_value(const char *word)
{
    if (word[0] != '-' || !word[1])
        return -1;
    if (word[1] == '-') {
        const char *name = word + 2;
        size_t len = strcspn(name, "=");
        const loom_jobopt_def_t *d = submit_find_long(name, len);
        if (!d)
            return -1;
        return !name[len] && d->arg == LOOM_JOBOPT_ARG_REQ;
    }
    const loom_jobopt_def_t *d = submit_find_short(word[1]);
    if (!d)
        return -1;
    return !word[2] && d->arg == LOOM_JOBOPT_ARG_REQ;
}

/* ---- the controller ------------------------------------------------------------------ */

json_t *loom_submit_records(loom_cli_t *cli, const uint32_t *ids, size_t n, loom_err_t *err)
{
    json_t *list = json_array(), *reply = NULL;
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_integer(ids[i]));
    json_t *body = json_pack("{s:o}", "job_ids", list);
    int rc = loom_cli_call(cli, "job.info", body, &reply, err);
    json_decref(body);
    json_t *jobs = NULL;
    if (rc == 0)
        jobs = json_incref(json_object_get(reply, "jobs"));
    else if (rc == -LOOM_EINVAL_JOBID)
        jobs = json_array(); /* all of them are gone (MinJobAge) */
    json_decref(reply);
    return jobs;
}

int loom_submit_cancel(loom_cli_t *cli, const uint32_t *ids, size_t n)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *body = json_pack("{s:I, s:b}", "job_id", (json_int_t)ids[i], "cancel", 1);
        loom_err_t err = {0};
        int rc = loom_cli_call(cli, "job.signal", body, NULL, &err);
        json_decref(body);
        if (rc < 0 && rc != -LOOM_EALREADY_DONE && rc != -LOOM_EINVAL_JOBID) {
            fprintf(stderr, "loom: error: cancelling job %u: %s\n", ids[i], err.msg);
            failed++;
        }
    }
    return failed;
}

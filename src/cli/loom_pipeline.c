/* loom_pipeline.c - `loom pipeline`: steps with their own resources as dependent
 * jobs. See loom_pipeline.h. */
#include "cli/loom_pipeline.h"
#include "cli/cli_common.h"
#include "cli/cli_format.h"
#include "cli/loom_submit.h"
#include "common/jobstate.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIPE_MAX_STEPS 1000

typedef struct pipe_step {
    char *name;
    json_t *spec; /* the step merged over the defaults */
    size_t *deps; /* indexes of the steps it waits for */
    size_t ndeps;
    const char *after; /* "ok", "any", "notok" */
    uint32_t job_id;
} pipe_step_t;

typedef struct pipeline {
    char *name;
    char *dir; /* the file's directory */
    const char *file;
    pipe_step_t *steps;
    size_t n;
    size_t *order; /* submission order (dependencies first) */
} pipeline_t;

/* Keys that are not sbatch options. */
static const char *const pipe_own_keys[] = {"name",       "command", "script", "args",
                                            "depends_on", "after",   "env"};
/* sbatch options a step may not set (the pipeline sets or forbids them). */
static const char *const pipe_forbidden[] = {"dependency", "wrap",     "parsable",
                                             "wait",       "job-name", "kill-on-invalid-dep"};

static void pipe_usage(FILE *fp)
{
    fprintf(fp, "Usage: loom pipeline [--dry-run] [--parsable] FILE.json\n"
                "       loom pipeline status NAME-OR-ID [--json]\n"
                "       loom pipeline cancel NAME-OR-ID\n");
}

static int pipe_err(const pipeline_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int pipe_err(const pipeline_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "loom: error: %s: ", p->file);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static void pipe_free(pipeline_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->steps[i].name);
        json_decref(p->steps[i].spec);
        free(p->steps[i].deps);
    }
    free(p->steps);
    free(p->order);
    free(p->name);
    free(p->dir);
}

/* ---- reading and checking ---------------------------------------------------------- */

static bool pipe_name_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return false;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
            return false;
    return true;
}

static bool pipe_in(const char *const *list, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], k) == 0)
            return true;
    return false;
}

/* "cpus_per_task" -> "cpus-per-task". */
static char *pipe_opt_name(const char *key)
{
    char *o = loom_xstrdup(key);
    for (char *c = o; *c; c++)
        if (*c == '_')
            *c = '-';
    return o;
}

static int pipe_check_keys(const pipeline_t *p, const char *step, const json_t *spec)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)spec, k, v)
    {
        if (pipe_in(pipe_own_keys, sizeof(pipe_own_keys) / sizeof(*pipe_own_keys), k))
            continue;
        char *o = pipe_opt_name(k);
        loom_sbuf_t w = LOOM_SBUF_INIT;
        loom_sbuf_addf(&w, "--%s", o);
        bool bad = loom_submit_opt_value(loom_sbuf_str(&w)) < 0 ||
                   pipe_in(pipe_forbidden, sizeof(pipe_forbidden) / sizeof(*pipe_forbidden), o);
        bool typed =
            json_is_string(v) || json_is_integer(v) || json_is_boolean(v) || json_is_real(v);
        loom_sbuf_free(&w);
        free(o);
        if (bad)
            return pipe_err(p, "step '%s': '%s' is not an sbatch option a step may set", step, k);
        if (!typed)
            return pipe_err(p, "step '%s': option '%s' needs a string, number or boolean", step, k);
    }
    return 0;
}

static int pipe_check_run(const pipeline_t *p, const char *step, const json_t *spec)
{
    const json_t *cmd = json_object_get(spec, "command"), *script = json_object_get(spec, "script");
    if (!cmd == !script)
        return pipe_err(p, "step '%s' needs one of command and script", step);
    if (cmd && !json_is_string(cmd) && !(json_is_array(cmd) && json_array_size(cmd)))
        return pipe_err(p, "step '%s': command is a string or a list of words", step);
    if (script && !json_is_string(script))
        return pipe_err(p, "step '%s': script is a path", step);
    if (script) {
        loom_sbuf_t path = LOOM_SBUF_INIT;
        const char *s = json_string_value(script);
        loom_sbuf_addf(&path, "%s%s%s", s[0] == '/' ? "" : p->dir, s[0] == '/' ? "" : "/", s);
        int ok = access(loom_sbuf_str(&path), R_OK);
        loom_sbuf_free(&path);
        if (ok < 0)
            return pipe_err(p, "step '%s': cannot read script %s", step, s);
    }
    const json_t *env = json_object_get(spec, "env");
    if (env && !json_is_object(env))
        return pipe_err(p, "step '%s': env is an object of NAME: value", step);
    const char *after = json_string_value(json_object_get(spec, "after"));
    if (json_object_get(spec, "after") &&
        (!after || (strcmp(after, "ok") && strcmp(after, "any") && strcmp(after, "notok"))))
        return pipe_err(p, "step '%s': after is ok, any or notok", step);
    return 0;
}

/* The step objects, named, in file order ("steps" as a list or an object). */
static int pipe_collect(pipeline_t *p, const json_t *doc)
{
    const json_t *steps = json_object_get(doc, "steps"), *defs = json_object_get(doc, "defaults");
    size_t n = json_is_array(steps) ? json_array_size(steps) : json_object_size(steps);
    if (!n || n > PIPE_MAX_STEPS || (defs && !json_is_object(defs)))
        return pipe_err(p, "a non-empty \"steps\" list (and \"defaults\" as an object)");
    p->steps = loom_xcalloc(n, sizeof(*p->steps));
    const char *key;
    json_t *v;
    size_t i = 0;
    void *it = json_is_object(steps) ? json_object_iter((json_t *)steps) : NULL;
    for (; i < n; i++) {
        key = it ? json_object_iter_key(it) : NULL;
        v = it ? json_object_iter_value(it) : json_array_get(steps, i);
        it = it ? json_object_iter_next((json_t *)steps, it) : NULL;
        if (!json_is_object(v))
            return pipe_err(p, "step %s is not an object", key ? key : "");
        pipe_step_t *s = &p->steps[p->n++];
        s->spec = defs ? json_deep_copy(defs) : json_object();
        json_object_update(s->spec, v);
        const char *nm = key ? key : json_string_value(json_object_get(v, "name"));
        if (!pipe_name_ok(nm))
            return pipe_err(p, "step name '%s' (letters, digits, '_', '.', '-')", nm ? nm : "");
        s->name = loom_xstrdup(nm);
        const char *after = json_string_value(json_object_get(s->spec, "after"));
        s->after = after ? after : "ok";
    }
    return 0;
}

static long pipe_find(const pipeline_t *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->steps[i].name, name) == 0)
            return (long)i;
    return -1;
}

static int pipe_link(pipeline_t *p, pipe_step_t *s)
{
    const json_t *d = json_object_get(s->spec, "depends_on"), *x;
    json_t *list = json_is_string(d) ? json_pack("[O]", d) : json_incref((json_t *)d);
    size_t i;
    int rc = d && !json_is_array(list)
                 ? pipe_err(p, "step '%s': depends_on is a name or a list", s->name)
                 : 0;
    s->deps = loom_xcalloc(json_array_size(list) + 1, sizeof(size_t));
    json_array_foreach(rc == 0 ? list : NULL, i, x)
    {
        long k = json_is_string(x) ? pipe_find(p, json_string_value(x)) : -1;
        if (k < 0 || (size_t)k == (size_t)(s - p->steps)) {
            rc = pipe_err(p, "step '%s' depends on an unknown step '%s'", s->name,
                          json_is_string(x) ? json_string_value(x) : "?");
            break;
        }
        s->deps[s->ndeps++] = (size_t)k;
    }
    json_decref(list);
    return rc;
}

/* Dependencies first, file order otherwise (Kahn's algorithm); a cycle is an error. */
static int pipe_order(pipeline_t *p)
{
    bool *done = loom_xcalloc(p->n, sizeof(bool));
    p->order = loom_xcalloc(p->n, sizeof(size_t));
    size_t k = 0;
    for (bool moved = true; moved && k < p->n;) {
        moved = false;
        for (size_t i = 0; i < p->n; i++) {
            bool ready = !done[i];
            for (size_t d = 0; ready && d < p->steps[i].ndeps; d++)
                ready = done[p->steps[i].deps[d]];
            if (ready) {
                done[i] = moved = true;
                p->order[k++] = i;
            }
        }
    }
    free(done);
    if (k < p->n)
        return pipe_err(p, "the steps' dependencies form a cycle");
    return 0;
}

static int pipe_read(pipeline_t *p, const char *file)
{
    p->file = file;
    char real[PATH_MAX];
    if (!realpath(file, real)) {
        fprintf(stderr, "loom: error: cannot read %s\n", file);
        return -1;
    }
    p->dir = loom_xstrndup(real, (size_t)(strrchr(real, '/') - real));
    if (!*p->dir) {
        free(p->dir);
        p->dir = loom_xstrdup("/");
    }
    json_error_t jerr;
    json_t *doc = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(doc)) {
        fprintf(stderr, "loom: error: %s:%d: %s\n", file, jerr.line,
                doc ? "the pipeline is a JSON object" : jerr.text);
        json_decref(doc);
        return -1;
    }
    const char *name = json_string_value(json_object_get(doc, "name"));
    int rc = pipe_name_ok(name) ? 0 : pipe_err(p, "a \"name\" (letters, digits, '_', '.', '-')");
    if (rc == 0) {
        p->name = loom_xstrdup(name);
        rc = pipe_collect(p, doc);
    }
    for (size_t i = 0; rc == 0 && i < p->n; i++)
        if (pipe_find(p, p->steps[i].name) != (long)i)
            rc = pipe_err(p, "two steps are named '%s'", p->steps[i].name);
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        rc = pipe_check_keys(p, p->steps[i].name, p->steps[i].spec);
        if (rc == 0)
            rc = pipe_check_run(p, p->steps[i].name, p->steps[i].spec);
        if (rc == 0)
            rc = pipe_link(p, &p->steps[i]);
    }
    if (rc == 0)
        rc = pipe_order(p);
    json_decref(doc);
    return rc;
}

/* ---- submitting ------------------------------------------------------------------ */

static void pipe_value(const json_t *v, loom_sbuf_t *out)
{
    if (json_is_string(v))
        loom_sbuf_add(out, json_string_value(v));
    else if (json_is_integer(v))
        loom_sbuf_addf(out, "%lld", (long long)json_integer_value(v));
    else
        loom_sbuf_addf(out, "%g", json_real_value(v));
}

static void pipe_options(const pipeline_t *p, const pipe_step_t *s, loom_strv_t *args)
{
    const char *k;
    json_t *v;
    bool chdir_set = false;
    json_object_foreach(s->spec, k, v)
    {
        if (pipe_in(pipe_own_keys, sizeof(pipe_own_keys) / sizeof(*pipe_own_keys), k) ||
            json_is_false(v))
            continue;
        char *o = pipe_opt_name(k);
        loom_sbuf_t w = LOOM_SBUF_INIT;
        loom_sbuf_addf(&w, "--%s", o);
        if (!json_is_true(v)) {
            loom_sbuf_addc(&w, '=');
            pipe_value(v, &w);
        }
        chdir_set = chdir_set || strcmp(o, "chdir") == 0;
        loom_strv_add(args, loom_sbuf_str(&w));
        loom_sbuf_free(&w);
        free(o);
    }
    if (!chdir_set) {
        loom_sbuf_t w = LOOM_SBUF_INIT;
        loom_sbuf_addf(&w, "--chdir=%s", p->dir);
        loom_strv_add(args, loom_sbuf_str(&w));
        loom_sbuf_free(&w);
    }
}

/* --export=ALL,NAME=value,... from "env". */
static void pipe_env(const pipe_step_t *s, loom_strv_t *args)
{
    const json_t *env = json_object_get(s->spec, "env");
    if (!json_object_size(env))
        return;
    loom_sbuf_t w = LOOM_SBUF_INIT;
    loom_sbuf_add(&w, "--export=ALL");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)env, k, v)
    {
        loom_sbuf_addf(&w, ",%s=", k);
        pipe_value(v, &w);
    }
    loom_strv_add(args, loom_sbuf_str(&w));
    loom_sbuf_free(&w);
}

static void pipe_depend(const pipeline_t *p, const pipe_step_t *s, loom_strv_t *args)
{
    if (!s->ndeps)
        return;
    loom_sbuf_t w = LOOM_SBUF_INIT;
    loom_sbuf_addf(&w, "--dependency=after%s", s->after);
    for (size_t d = 0; d < s->ndeps; d++)
        loom_sbuf_addf(&w, ":%u", p->steps[s->deps[d]].job_id);
    loom_strv_add(args, loom_sbuf_str(&w));
    loom_strv_add(args, "--kill-on-invalid-dep=yes");
    loom_sbuf_free(&w);
}

/* The command (--wrap) or the script and its arguments, last. */
static void pipe_run(const pipeline_t *p, const pipe_step_t *s, loom_strv_t *args)
{
    const json_t *cmd = json_object_get(s->spec, "command"), *x;
    size_t i;
    if (cmd) {
        loom_sbuf_t w = LOOM_SBUF_INIT;
        loom_sbuf_add(&w, "--wrap=");
        if (json_is_string(cmd))
            loom_sbuf_add(&w, json_string_value(cmd));
        json_array_foreach(json_is_array(cmd) ? cmd : NULL, i, x)
        {
            if (i)
                loom_sbuf_addc(&w, ' ');
            loom_sbuf_t v = LOOM_SBUF_INIT;
            pipe_value(x, &v);
            loom_submit_shquote(loom_sbuf_str(&v), &w);
            loom_sbuf_free(&v);
        }
        loom_strv_add(args, loom_sbuf_str(&w));
        loom_sbuf_free(&w);
        return;
    }
    const char *script = json_string_value(json_object_get(s->spec, "script"));
    loom_sbuf_t path = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s%s%s", script[0] == '/' ? "" : p->dir, script[0] == '/' ? "" : "/",
                   script);
    loom_strv_add(args, loom_sbuf_str(&path));
    loom_sbuf_free(&path);
    json_array_foreach(json_object_get(s->spec, "args"), i, x)
    {
        loom_sbuf_t v = LOOM_SBUF_INIT;
        pipe_value(x, &v);
        loom_strv_add(args, loom_sbuf_str(&v));
        loom_sbuf_free(&v);
    }
}

static void pipe_args(const pipeline_t *p, const pipe_step_t *s, loom_strv_t *args)
{
    loom_sbuf_t w = LOOM_SBUF_INIT;
    loom_sbuf_addf(&w, "--job-name=%s.%s", p->name, s->name);
    loom_strv_add(args, loom_sbuf_str(&w));
    loom_sbuf_free(&w);
    pipe_options(p, s, args);
    pipe_env(s, args);
    pipe_depend(p, s, args);
    pipe_run(p, s, args);
}

static json_t *pipe_doc(const pipeline_t *p)
{
    json_t *steps = json_array();
    for (size_t k = 0; k < p->n; k++) {
        const pipe_step_t *s = &p->steps[p->order[k]];
        json_t *deps = json_array();
        for (size_t d = 0; d < s->ndeps; d++)
            json_array_append_new(deps, json_string(p->steps[s->deps[d]].name));
        json_array_append_new(steps, json_pack("{s:s, s:I, s:o}", "name", s->name, "job_id",
                                               (json_int_t)s->job_id, "depends_on", deps));
    }
    return json_pack("{s:I, s:s, s:s, s:I, s:o}", "id", (json_int_t)p->steps[p->order[0]].job_id,
                     "name", p->name, "file", p->file, "submitted", (json_int_t)time(NULL), "steps",
                     steps);
}

static void pipe_save(const pipeline_t *p)
{
    char name[32];
    snprintf(name, sizeof(name), "%u.json", p->steps[p->order[0]].job_id);
    char *path = loom_submit_state_path("pipelines", name);
    json_t *doc = pipe_doc(p);
    if (!path || loom_submit_save(path, doc) < 0)
        fprintf(stderr, "loom: warning: could not keep the pipeline's jobs (%s)\n",
                path ? path : "no state directory");
    json_decref(doc);
    free(path);
}

/* Undo: cancel every job made so far. */
static void pipe_rollback(const pipeline_t *p, size_t made, const char *failed)
{
    uint32_t *ids = loom_xcalloc(made + 1, sizeof(uint32_t));
    for (size_t k = 0; k < made; k++)
        ids[k] = p->steps[p->order[k]].job_id;
    loom_cli_t cli;
    loom_cli_init(&cli, "loom");
    int bad = loom_submit_cancel(&cli, ids, made);
    loom_cli_fini(&cli);
    fprintf(stderr, "loom: error: step '%s' was not submitted; %zu job(s) already made %s\n",
            failed, made, bad ? "could not all be cancelled" : "were cancelled");
    free(ids);
}

static void pipe_print_args(const pipe_step_t *s, const loom_strv_t *args)
{
    loom_sbuf_t line = LOOM_SBUF_INIT;
    loom_sbuf_addf(&line, "%s: sbatch", s->name);
    for (size_t i = 0; i < args->n; i++) {
        loom_sbuf_addc(&line, ' ');
        loom_submit_shquote(args->v[i], &line);
    }
    puts(loom_sbuf_str(&line));
    loom_sbuf_free(&line);
}

static int pipe_submit(pipeline_t *p, bool dry_run, bool parsable)
{
    for (size_t k = 0; k < p->n; k++) {
        pipe_step_t *s = &p->steps[p->order[k]];
        loom_strv_t args = LOOM_STRV_INIT;
        if (dry_run)
            s->job_id = (uint32_t)(k + 1); /* placeholders in the printed dependencies */
        pipe_args(p, s, &args);
        int rc = dry_run ? 0 : loom_submit_sbatch(&args, NULL, &s->job_id);
        if (dry_run)
            pipe_print_args(s, &args);
        loom_strv_free(&args);
        if (rc != 0) {
            if (rc < 0)
                fprintf(stderr, "loom: error: cannot run sbatch: %s\n", strerror(-rc));
            pipe_rollback(p, k, s->name);
            return 1;
        }
    }
    if (dry_run)
        return 0;
    pipe_save(p);
    uint32_t id = p->steps[p->order[0]].job_id;
    if (parsable) {
        printf("%u\n", id);
        return 0;
    }
    printf("Submitted pipeline %s (id %u): %zu jobs\n", p->name, id, p->n);
    for (size_t k = 0; k < p->n; k++)
        printf("  %-16s %u\n", p->steps[p->order[k]].name, p->steps[p->order[k]].job_id);
    return 0;
}

/* ---- status and cancel ------------------------------------------------------------ */

/* The saved pipeline with this id (or a job of it), or the latest of this name. */
static json_t *pipe_lookup(const char *what)
{
    char *dir = loom_submit_state_path("pipelines", NULL);
    DIR *d = dir ? opendir(dir) : NULL;
    char *end = NULL;
    unsigned long id = strtoul(what, &end, 10);
    bool by_id = *what && !*end;
    json_t *best = NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, ".json") || strstr(e->d_name, ".tmp"))
            continue;
        loom_sbuf_t path = LOOM_SBUF_INIT;
        loom_sbuf_addf(&path, "%s/%s", dir, e->d_name);
        json_t *doc = loom_submit_load(loom_sbuf_str(&path));
        loom_sbuf_free(&path);
        bool hit = false;
        size_t i;
        json_t *s;
        json_array_foreach(by_id ? json_object_get(doc, "steps") : NULL, i, s)
        {
            hit = hit || (unsigned long)loom_ji(s, "job_id", 0) == id;
        }
        if (!by_id)
            hit = strcmp(loom_js_or(doc, "name", ""), what) == 0;
        if (hit && (!best || loom_ji(doc, "id", 0) > loom_ji(best, "id", 0))) {
            json_decref(best);
            best = json_incref(doc);
        }
        json_decref(doc);
    }
    if (d)
        closedir(d);
    free(dir);
    return best;
}

static uint32_t *pipe_ids(const json_t *doc, size_t *n)
{
    const json_t *steps = json_object_get(doc, "steps");
    *n = json_array_size(steps);
    uint32_t *ids = loom_xcalloc(*n + 1, sizeof(uint32_t));
    for (size_t i = 0; i < *n; i++)
        ids[i] = (uint32_t)loom_ji(json_array_get(steps, i), "job_id", 0);
    return ids;
}

/* The record of a step's job: the one with its id, else (an array) any of it. */
static const json_t *pipe_record(const json_t *jobs, uint32_t id)
{
    size_t i;
    json_t *j;
    const json_t *any = NULL;
    json_array_foreach(jobs, i, j)
    {
        if (loom_ji(j, "job_id", 0) == id)
            return j;
        if (loom_ji(j, "array_job_id", 0) == id && !any)
            any = j;
    }
    return any;
}

static void pipe_status_row(const json_t *step, const json_t *rec, time_t now, loom_strv_t *row)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_strv_add(row, loom_js_or(step, "name", "?"));
    loom_sbuf_addf(&sb, "%lld", (long long)loom_ji(step, "job_id", 0));
    loom_strv_add(row, loom_sbuf_str(&sb));
    uint32_t st = rec ? loom_cli_job_state(rec) : 0;
    loom_strv_add(row, rec ? loom_job_state_name(st) : "UNKNOWN");
    loom_strv_add(row, rec ? loom_js_or(rec, "reason", "None") : "-");
    loom_sbuf_reset(&sb);
    if (rec && loom_job_state_is_terminal(st))
        loom_cli_exit_code(loom_ji(rec, "exit_code", 0), &sb);
    loom_strv_add(row, sb.len ? loom_sbuf_str(&sb) : "-");
    loom_sbuf_reset(&sb);
    loom_time_fmt_elapsed(rec ? loom_cli_job_runtime(rec, now) : 0, &sb);
    loom_strv_add(row, loom_sbuf_str(&sb));
    loom_strv_add(row, rec && loom_js(rec, "nodes") ? loom_js(rec, "nodes") : "-");
    loom_sbuf_reset(&sb);
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(step, "depends_on"), i, d)
    {
        loom_sbuf_addf(&sb, "%s%s", i ? "," : "", json_string_value(d));
    }
    loom_strv_add(row, sb.len ? loom_sbuf_str(&sb) : "-");
    loom_sbuf_free(&sb);
}

static void pipe_print_status(const json_t *doc, const json_t *jobs)
{
    static const char *const head[] = {"STEP", "JOBID",   "STATE", "REASON",
                                       "EXIT", "ELAPSED", "NODES", "AFTER"};
    const json_t *steps = json_object_get(doc, "steps");
    size_t n = json_array_size(steps), nc = sizeof(head) / sizeof(*head);
    loom_strv_t *rows = loom_xcalloc(n + 1, sizeof(*rows));
    for (size_t k = 0; k < nc; k++)
        loom_strv_add(&rows[0], head[k]);
    time_t now = time(NULL);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(steps, i);
        pipe_status_row(s, pipe_record(jobs, (uint32_t)loom_ji(s, "job_id", 0)), now, &rows[i + 1]);
    }
    size_t w[8] = {0};
    for (size_t r = 0; r <= n; r++)
        for (size_t k = 0; k < nc; k++)
            w[k] = strlen(rows[r].v[k]) > w[k] ? strlen(rows[r].v[k]) : w[k];
    printf("PIPELINE %s (id %lld): %zu steps\n", loom_js_or(doc, "name", "?"),
           (long long)loom_ji(doc, "id", 0), n);
    for (size_t r = 0; r <= n; r++) {
        for (size_t k = 0; k < nc; k++)
            printf("%-*s%s", k + 1 < nc ? (int)w[k] : 0, rows[r].v[k], k + 1 < nc ? "  " : "\n");
        loom_strv_free(&rows[r]);
    }
    free(rows);
}

static json_t *pipe_status_json(const json_t *doc, const json_t *jobs)
{
    json_t *steps = json_array(), *s;
    size_t i;
    json_array_foreach(json_object_get(doc, "steps"), i, s)
    {
        const json_t *rec = pipe_record(jobs, (uint32_t)loom_ji(s, "job_id", 0));
        json_t *e = json_deep_copy(s);
        json_object_set_new(
            e, "state",
            json_string(rec ? loom_job_state_name(loom_cli_job_state(rec)) : "UNKNOWN"));
        if (rec)
            json_object_set_new(e, "reason", json_string(loom_js_or(rec, "reason", "None")));
        json_array_append_new(steps, e);
    }
    return json_pack("{s:O, s:O, s:o}", "id", json_object_get(doc, "id"), "name",
                     json_object_get(doc, "name"), "steps", steps);
}

static int pipe_status_or_cancel(int argc, char **argv, bool cancel)
{
    bool as_json = !cancel && argc > 2 && strcmp(argv[2], "--json") == 0;
    if (argc < 2) {
        pipe_usage(stderr);
        return 1;
    }
    json_t *doc = pipe_lookup(argv[1]);
    if (!doc) {
        fprintf(stderr, "loom: error: no pipeline '%s' was submitted from here\n", argv[1]);
        return 1;
    }
    size_t n;
    uint32_t *ids = pipe_ids(doc, &n);
    loom_cli_t cli;
    loom_cli_init(&cli, "loom");
    loom_err_t err = {0};
    int rc = 0;
    json_t *jobs = cancel ? NULL : loom_submit_records(&cli, ids, n, &err);
    if (cancel) {
        rc = loom_submit_cancel(&cli, ids, n) ? 1 : 0;
    } else if (!jobs) {
        fprintf(stderr, "loom: error: %s\n", err.msg);
        rc = 1;
    } else if (as_json) {
        json_t *out = pipe_status_json(doc, jobs);
        json_dumpf(out, stdout, JSON_INDENT(2));
        printf("\n");
        json_decref(out);
    } else {
        pipe_print_status(doc, jobs);
    }
    json_decref(jobs);
    json_decref(doc);
    free(ids);
    loom_cli_fini(&cli);
    return rc;
}

int loom_pipeline_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "status") == 0)
        return pipe_status_or_cancel(argc - 1, argv + 1, false);
    if (argc > 1 && strcmp(argv[1], "cancel") == 0)
        return pipe_status_or_cancel(argc - 1, argv + 1, true);
    bool dry_run = false, parsable = false;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dry-run") == 0)
            dry_run = true;
        else if (strcmp(argv[i], "--parsable") == 0)
            parsable = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            pipe_usage(stdout);
            return 0;
        } else if (!file && argv[i][0] != '-')
            file = argv[i];
        else {
            pipe_usage(stderr);
            return 1;
        }
    }
    if (!file) {
        pipe_usage(stderr);
        return 1;
    }
    pipeline_t p = {0};
    int rc = pipe_read(&p, file) == 0 ? pipe_submit(&p, dry_run, parsable) : 1;
    pipe_free(&p);
    return rc;
}

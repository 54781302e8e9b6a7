/* loom_sweep.c - `loom sweep`: parameter sweeps as one job array. See loom_sweep.h. */
#include "cli/loom_sweep.h"
#include "cli/cli_common.h"
#include "cli/cli_format.h"
#include "cli/loom_submit.h"
#include "common/jobstate.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SWEEP_MAX_ROWS 1000000

typedef struct sweep {
    loom_strv_t sbatch;  /* options passed to sbatch */
    loom_strv_t names;   /* parameter names */
    json_t *rows;        /* [[value or null per name], ...] */
    loom_strv_t command; /* program or script, then its arguments */
    const char *file;
    long throttle;
    bool dry_run;
    bool quiet_id; /* --parsable: print only the id */
} sweep_t;

static void sweep_usage(FILE *fp)
{
    fprintf(fp, "Usage: loom sweep [sbatch options] NAME=v1,v2,... [NAME=...] [--] COMMAND [ARGS]\n"
                "       loom sweep [sbatch options] --file rows.csv|rows.json [--] COMMAND [ARGS]\n"
                "       loom sweep status ID [--json]\n"
                "Options: --throttle N (at most N tasks at once), --dry-run (print the\n"
                "script, submit nothing); every other option goes to sbatch.\n");
}

/* ---- parameters --------------------------------------------------------------- */

static bool sweep_name_ok(const char *s, size_t n)
{
    if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
            return false;
    return true;
}

static bool sweep_is_param(const char *w)
{
    const char *eq = strchr(w, '=');
    return eq && sweep_name_ok(w, (size_t)(eq - w));
}

static int sweep_add_name(sweep_t *s, const char *name)
{
    if (loom_strv_find(&s->names, name) >= 0) {
        fprintf(stderr, "loom: error: parameter '%s' given twice\n", name);
        return -1;
    }
    loom_strv_add(&s->names, name);
    return 0;
}

/* Every combination of the value lists, the first list varying slowest. */
static int sweep_grid(sweep_t *s, json_t *lists)
{
    size_t total = 1, n = json_array_size(lists);
    for (size_t k = 0; k < n; k++) {
        total *= json_array_size(json_array_get(lists, k));
        if (total == 0 || total > SWEEP_MAX_ROWS) {
            fprintf(stderr, "loom: error: the grid has %s tasks\n", total ? "too many" : "no");
            return -1;
        }
    }
    s->rows = json_array();
    for (size_t r = 0; r < total; r++) {
        json_t *row = json_array();
        size_t rest = r;
        for (size_t k = n; k-- > 0;) {
            json_t *vals = json_array_get(lists, k);
            json_array_insert(row, 0, json_array_get(vals, rest % json_array_size(vals)));
            rest /= json_array_size(vals);
        }
        json_array_append_new(s->rows, row);
    }
    return 0;
}

/* NAME=v1,v2 words into lists. */
static int sweep_grid_words(sweep_t *s, const loom_strv_t *words)
{
    json_t *lists = json_array();
    int rc = 0;
    for (size_t i = 0; i < words->n && rc == 0; i++) {
        const char *w = words->v[i], *eq = strchr(w, '=');
        char *name = loom_xstrndup(w, (size_t)(eq - w));
        rc = sweep_add_name(s, name);
        free(name);
        json_t *vals = json_array();
        loom_strv_t parts = LOOM_STRV_INIT;
        loom_strv_split(&parts, eq + 1, ",");
        for (size_t k = 0; k < parts.n; k++)
            json_array_append_new(vals, json_string(parts.v[k]));
        loom_strv_free(&parts);
        if (rc == 0 && !json_array_size(vals)) {
            fprintf(stderr, "loom: error: parameter '%s' has no values\n", w);
            rc = -1;
        }
        json_array_append_new(lists, vals);
    }
    if (rc == 0)
        rc = sweep_grid(s, lists);
    json_decref(lists);
    return rc;
}

/* One CSV line into fields ("a,\"b,c\",d"; "" inside quotes is a quote). */
static void sweep_csv_line(const char *line, loom_strv_t *out)
{
    loom_sbuf_t f = LOOM_SBUF_INIT;
    bool quoted = false;
    for (const char *p = line;; p++) {
        if (quoted && *p == '"' && p[1] == '"') {
            loom_sbuf_addc(&f, '"');
            p++;
        } else if (*p == '"') {
            quoted = !quoted;
        } else if (*p && (quoted || *p != ',')) {
            loom_sbuf_addc(&f, *p);
        } else {
            loom_strv_add(out, loom_sbuf_str(&f));
            loom_sbuf_reset(&f);
            if (!*p)
                break;
        }
    }
    loom_sbuf_free(&f);
}

static int sweep_csv(sweep_t *s, const char *text)
{
    loom_strv_t lines = LOOM_STRV_INIT;
    loom_strv_split(&lines, text, "\r\n");
    int rc = lines.n < 2 ? -1 : 0;
    if (rc < 0)
        fprintf(stderr, "loom: error: %s: a header line and at least one row are needed\n",
                s->file);
    s->rows = json_array();
    for (size_t i = 0; rc == 0 && i < lines.n; i++) {
        loom_strv_t f = LOOM_STRV_INIT;
        sweep_csv_line(lines.v[i], &f);
        for (size_t k = 0; i == 0 && rc == 0 && k < f.n; k++)
            rc = sweep_name_ok(f.v[k], strlen(f.v[k])) ? sweep_add_name(s, f.v[k]) : -1;
        if (i == 0 && rc < 0)
            fprintf(stderr, "loom: error: %s: bad column names\n", s->file);
        if (i > 0 && f.n != s->names.n) {
            fprintf(stderr, "loom: error: %s:%zu: %zu fields, the header has %zu\n", s->file, i + 1,
                    f.n, s->names.n);
            rc = -1;
        }
        json_t *row = json_array();
        for (size_t k = 0; i > 0 && k < f.n; k++)
            json_array_append_new(row, json_string(f.v[k]));
        if (i > 0)
            json_array_append_new(s->rows, row);
        else
            json_decref(row);
        loom_strv_free(&f);
    }
    loom_strv_free(&lines);
    return rc;
}

/* A JSON value as the text a task gets: strings as they are, others as JSON. */
static json_t *sweep_text(const json_t *v)
{
    if (json_is_string(v))
        return json_incref((json_t *)v);
    if (!v || json_is_null(v))
        return json_null();
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    json_t *s = json_string(t ? t : "");
    free(t);
    return s;
}

/* [{name: value}, ...] rows (a missing name: no value for that task). */
static int sweep_json_rows(sweep_t *s, const json_t *doc)
{
    size_t i;
    json_t *o;
    const char *k;
    json_t *v;
    json_array_foreach(doc, i, o)
    {
        if (!json_is_object(o))
            return -1;
        json_object_foreach(o, k, v)
        {
            if (loom_strv_find(&s->names, k) < 0 &&
                (!sweep_name_ok(k, strlen(k)) || sweep_add_name(s, k) < 0))
                return -1;
        }
    }
    s->rows = json_array();
    json_array_foreach(doc, i, o)
    {
        json_t *row = json_array();
        for (size_t n = 0; n < s->names.n; n++)
            json_array_append_new(row, sweep_text(json_object_get(o, s->names.v[n])));
        json_array_append_new(s->rows, row);
    }
    return json_array_size(s->rows) ? 0 : -1;
}

/* {name: [values]} is a grid. */
static int sweep_json_grid(sweep_t *s, const json_t *doc)
{
    json_t *lists = json_array(), *v;
    const char *k;
    int rc = 0;
    json_object_foreach((json_t *)doc, k, v)
    {
        json_t *vals = json_array(), *x;
        size_t i;
        json_array_foreach(json_is_array(v) ? v : NULL, i, x)
        {
            json_array_append_new(vals, sweep_text(x));
        }
        if (!json_is_array(v))
            json_array_append_new(vals, sweep_text(v));
        json_array_append_new(lists, vals);
        if (rc == 0 && (!sweep_name_ok(k, strlen(k)) || sweep_add_name(s, k) < 0))
            rc = -1;
    }
    if (rc == 0)
        rc = sweep_grid(s, lists);
    json_decref(lists);
    return rc;
}

static int sweep_file(sweep_t *s)
{
    FILE *fp = fopen(s->file, "r");
    if (!fp) {
        fprintf(stderr, "loom: error: cannot read %s\n", s->file);
        return -1;
    }
    loom_sbuf_t text = LOOM_SBUF_INIT;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        loom_sbuf_addn(&text, buf, n);
    fclose(fp);
    const char *dot = strrchr(s->file, '.');
    int rc;
    if (dot && strcmp(dot, ".json") == 0) {
        json_error_t jerr;
        json_t *doc = json_loads(loom_sbuf_str(&text), 0, &jerr);
        rc = json_is_array(doc)    ? sweep_json_rows(s, doc)
             : json_is_object(doc) ? sweep_json_grid(s, doc)
                                   : -1;
        if (rc < 0)
            fprintf(stderr, "loom: error: %s: %s\n", s->file,
                    doc ? "a list of objects or an object of lists is needed" : jerr.text);
        json_decref(doc);
    } else {
        rc = sweep_csv(s, loom_sbuf_str(&text));
    }
    loom_sbuf_free(&text);
    return rc;
}

/* ---- options ------------------------------------------------------------------ */

/* loom's own options; 1 when w was one (and *i moved past its value). */
static int sweep_own_option(sweep_t *s, int argc, char **argv, int *i)
{
    const char *w = argv[*i];
    const char *val = NULL;
    bool file = strncmp(w, "--file", 6) == 0 && (!w[6] || w[6] == '=');
    bool thr = strncmp(w, "--throttle", 10) == 0 && (!w[10] || w[10] == '=');
    if (strcmp(w, "--dry-run") == 0) {
        s->dry_run = true;
        return 1;
    }
    if (!file && !thr)
        return 0;
    val = strchr(w, '=') ? strchr(w, '=') + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!val || !*val) {
        fprintf(stderr, "loom: error: %s needs a value\n", w);
        return -1;
    }
    if (file)
        s->file = val;
    else if ((s->throttle = strtol(val, NULL, 10)) <= 0) {
        fprintf(stderr, "loom: error: bad --throttle '%s'\n", val);
        return -1;
    }
    return 1;
}

/* sbatch options, NAME=values words, then the command. */
static int sweep_parse(sweep_t *s, int argc, char **argv, loom_strv_t *params)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *w = argv[i];
        int own = sweep_own_option(s, argc, argv, &i);
        if (own < 0)
            return -1;
        if (own)
            continue;
        if (strcmp(w, "--") == 0) {
            i++;
            break;
        }
        if (sweep_is_param(w)) {
            loom_strv_add(params, w);
            continue;
        }
        int takes = loom_submit_opt_value(w);
        if (takes < 0 && w[0] == '-') {
            fprintf(stderr, "loom: error: unknown option '%s'\n", w);
            return -1;
        }
        if (takes < 0)
            break;
        if (strcmp(w, "--parsable") == 0)
            s->quiet_id = true;
        else if (strncmp(w, "--array", 7) == 0 || (w[1] == 'a' && w[0] == '-' && w[1] != '-')) {
            fprintf(stderr, "loom: error: loom sweep makes the array itself (no --array)\n");
            return -1;
        } else
            loom_strv_add(&s->sbatch, w);
        if (takes && i + 1 < argc)
            loom_strv_add(&s->sbatch, argv[++i]);
    }
    for (; i < argc; i++)
        loom_strv_add(&s->command, argv[i]);
    if (!s->command.n || (!params->n && !s->file) || (params->n && s->file)) {
        sweep_usage(stderr);
        return -1;
    }
    return 0;
}

/* ---- the script ------------------------------------------------------------------ */

static void sweep_env_name(const char *name, loom_sbuf_t *out)
{
    loom_sbuf_add(out, "LOOM_PARAM_");
    for (const char *p = name; *p; p++)
        loom_sbuf_addc(out, isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_');
}

/* case "$SLURM_ARRAY_TASK_ID" in i) set -- ARGS --name=value...; ... esac */
static void sweep_case(const sweep_t *s, const loom_strv_t *args, loom_sbuf_t *out)
{
    loom_sbuf_add(out, "case \"${SLURM_ARRAY_TASK_ID:-0}\" in\n");
    size_t r;
    json_t *row;
    json_array_foreach(s->rows, r, row)
    {
        loom_sbuf_addf(out, "%zu) set --", r);
        for (size_t k = 0; args && k < args->n; k++) {
            loom_sbuf_addc(out, ' ');
            loom_submit_shquote(args->v[k], out);
        }
        loom_sbuf_t env = LOOM_SBUF_INIT;
        for (size_t k = 0; k < s->names.n; k++) {
            const char *v = json_string_value(json_array_get(row, k));
            if (!v)
                continue;
            loom_sbuf_t w = LOOM_SBUF_INIT;
            loom_sbuf_addf(&w, "--%s=%s", s->names.v[k], v);
            loom_sbuf_addc(out, ' ');
            loom_submit_shquote(loom_sbuf_str(&w), out);
            loom_sbuf_free(&w);
            loom_sbuf_addc(&env, ' ');
            sweep_env_name(s->names.v[k], &env);
            loom_sbuf_addc(&env, '=');
            loom_submit_shquote(v, &env);
        }
        loom_sbuf_addf(out, "\n  %s ;;\n", env.len ? loom_sbuf_str(&env) + 1 : ":");
        loom_sbuf_free(&env);
    }
    loom_sbuf_add(out, "*) echo \"loom sweep: no parameters for task $SLURM_ARRAY_TASK_ID\" >&2;"
                       " exit 1 ;;\nesac\nexport");
    for (size_t k = 0; k < s->names.n; k++) {
        loom_sbuf_addc(out, ' ');
        sweep_env_name(s->names.v[k], out);
    }
    loom_sbuf_add(out, "\nLOOM_SWEEP_PARAMS=\"$*\"; export LOOM_SWEEP_PARAMS\n");
}

static const char *sweep_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The script's text, or NULL when COMMAND is not a script file. */
static char *sweep_read_script(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    loom_sbuf_t t = LOOM_SBUF_INIT;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        loom_sbuf_addn(&t, buf, n);
    fclose(fp);
    if (strncmp(loom_sbuf_str(&t), "#!", 2) != 0) {
        loom_sbuf_free(&t);
        return NULL;
    }
    return loom_sbuf_detach(&t);
}

static bool sweep_sh_family(const char *shebang_line)
{
    static const char *const shells[] = {"sh", "bash", "dash", "ksh", "zsh"};
    size_t n = strcspn(shebang_line, "\n");
    char *line = loom_xstrndup(shebang_line, n);
    loom_strv_t w = LOOM_STRV_INIT;
    loom_strv_split(&w, line + 2, " \t");
    const char *interp = w.n ? sweep_base(w.v[0]) : "";
    if (strcmp(interp, "env") == 0 && w.n > 1)
        interp = w.v[1];
    bool sh = false;
    for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
        sh = sh || strcmp(interp, shells[i]) == 0;
    loom_strv_free(&w);
    free(line);
    return sh;
}

/* Length of the header sbatch reads directives from: comments and blank lines. */
static size_t sweep_header_len(const char *text)
{
    const char *p = strchr(text, '\n');
    p = p ? p + 1 : text + strlen(text);
    while (*p) {
        size_t n = strcspn(p, "\n");
        size_t lead = strspn(p, " \t");
        if (lead < n && p[lead] != '#')
            break;
        p += n + (p[n] == '\n');
    }
    return (size_t)(p - text);
}

static void sweep_sbatch_lines(const char *header, size_t len, loom_sbuf_t *out)
{
    for (const char *p = header; p < header + len;) {
        size_t n = strcspn(p, "\n");
        if (strncmp(p, "#SBATCH", 7) == 0)
            loom_sbuf_addf(out, "%.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static char *sweep_script(const sweep_t *s)
{
    loom_sbuf_t out = LOOM_SBUF_INIT;
    char *text = sweep_read_script(s->command.v[0]);
    loom_strv_t args = LOOM_STRV_INIT;
    for (size_t i = 1; text && i < s->command.n; i++)
        loom_strv_add(&args, s->command.v[i]);
    size_t hl = text ? sweep_header_len(text) : 0;
    bool embed = text && sweep_sh_family(text);
    size_t first = text ? strcspn(text, "\n") + 1 : 0;
    loom_sbuf_addf(&out, "%.*s#SBATCH --job-name=%s\n", embed ? (int)first : 10,
                   embed ? text : "#!/bin/sh\n", sweep_base(s->command.v[0]));
    if (embed)
        loom_sbuf_addf(&out, "%.*s", (int)(hl - first), text + first);
    else if (text)
        sweep_sbatch_lines(text + first, hl - first, &out);
    loom_sbuf_addf(&out, "# loom sweep: %zu tasks (loom sweep status $SLURM_ARRAY_JOB_ID)\n",
                   json_array_size(s->rows));
    sweep_case(s, embed ? &args : NULL, &out);
    if (embed) {
        loom_sbuf_add(&out, text + hl);
    } else {
        loom_sbuf_add(&out, "exec");
        for (size_t i = 0; i < s->command.n; i++) {
            loom_sbuf_addc(&out, ' ');
            loom_submit_shquote(s->command.v[i], &out);
        }
        loom_sbuf_add(&out, " \"$@\"\n");
    }
    loom_strv_free(&args);
    free(text);
    return loom_sbuf_detach(&out);
}

/* ---- submit --------------------------------------------------------------------- */

static void sweep_save(const sweep_t *s, uint32_t id)
{
    char name[32];
    snprintf(name, sizeof(name), "%u.json", id);
    char *path = loom_submit_state_path("sweeps", name);
    json_t *names = json_array(), *cmd = json_array();
    for (size_t i = 0; i < s->names.n; i++)
        json_array_append_new(names, json_string(s->names.v[i]));
    for (size_t i = 0; i < s->command.n; i++)
        json_array_append_new(cmd, json_string(s->command.v[i]));
    json_t *doc = json_pack("{s:I, s:o, s:O, s:o, s:I}", "job_id", (json_int_t)id, "params", names,
                            "rows", s->rows, "command", cmd, "submitted", (json_int_t)time(NULL));
    if (!path || loom_submit_save(path, doc) < 0)
        fprintf(stderr, "loom: warning: could not keep the sweep table (%s)\n",
                path ? path : "no state directory");
    json_decref(doc);
    free(path);
}

static int sweep_submit(sweep_t *s)
{
    char *script = sweep_script(s);
    if (s->dry_run) {
        fputs(script, stdout);
        free(script);
        return 0;
    }
    loom_strv_t args = LOOM_STRV_INIT;
    for (size_t i = 0; i < s->sbatch.n; i++)
        loom_strv_add(&args, s->sbatch.v[i]);
    loom_sbuf_t arr = LOOM_SBUF_INIT;
    loom_sbuf_addf(&arr, "--array=0-%zu", json_array_size(s->rows) - 1);
    if (s->throttle)
        loom_sbuf_addf(&arr, "%%%ld", s->throttle);
    loom_strv_add(&args, loom_sbuf_str(&arr));
    uint32_t id = 0;
    int rc = loom_submit_sbatch(&args, script, &id);
    if (rc == 0) {
        sweep_save(s, id);
        if (s->quiet_id)
            printf("%u\n", id);
        else
            printf("Submitted batch job %u\n", id);
    } else if (rc < 0) {
        fprintf(stderr, "loom: error: cannot run sbatch: %s\n", strerror(-rc));
    }
    loom_sbuf_free(&arr);
    loom_strv_free(&args);
    free(script);
    return rc == 0 ? 0 : 1;
}

/* ---- status --------------------------------------------------------------------- */

typedef struct {
    const char *state;
    int64_t exit_code, elapsed, job_id;
    bool have_exit;
} sweep_task_t;

/* Per row: what the controller says (tasks still in the meta record are PENDING). */
static void sweep_states(const json_t *jobs, size_t nrows, time_t now, sweep_task_t *t)
{
    for (size_t i = 0; i < nrows; i++)
        t[i] = (sweep_task_t){.state = "UNKNOWN", .job_id = -1};
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        loom_rangeset_t rs = LOOM_RANGESET_INIT;
        uint32_t st = loom_cli_job_state(j), task;
        const char *name = loom_job_state_name(st);
        const char *rest = loom_js(j, "array_task_str");
        if (rest && *rest && loom_cli_array_tasks(rest, &rs) >= 0) {
            for (int rc = loom_rangeset_first(&rs, &task); rc == 0;
                 rc = loom_rangeset_next(&rs, task, &task))
                if (task < nrows)
                    t[task] = (sweep_task_t){.state = name, .job_id = loom_ji(j, "job_id", 0)};
        } else if (loom_jhas(j, "array_task_id") &&
                   (task = (uint32_t)loom_ji(j, "array_task_id", 0)) < nrows) {
            bool ended = loom_job_state_is_terminal(st);
            t[task] = (sweep_task_t){.state = name,
                                     .exit_code = loom_ji(j, "exit_code", 0),
                                     .have_exit = ended,
                                     .elapsed = loom_cli_job_runtime(j, now),
                                     .job_id = loom_ji(j, "job_id", 0)};
        }
        loom_rangeset_free(&rs);
    }
}

static void sweep_cell(loom_strv_t *row, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sweep_cell(loom_strv_t *row, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    loom_strv_add(row, buf);
}

/* Rows of cells: TASK, the parameters, STATE, EXIT, ELAPSED, JOBID. */
static void sweep_table_rows(const json_t *doc, const sweep_task_t *t, loom_strv_t *rows,
                             size_t *ncols)
{
    const json_t *names = json_object_get(doc, "params"), *data = json_object_get(doc, "rows");
    loom_strv_add(&rows[0], "TASK");
    for (size_t k = 0; k < json_array_size(names); k++)
        loom_strv_add(&rows[0], json_string_value(json_array_get(names, k)));
    const char *tail[] = {"STATE", "EXIT", "ELAPSED", "JOBID"};
    for (size_t k = 0; k < 4; k++)
        loom_strv_add(&rows[0], tail[k]);
    for (size_t r = 0; r < json_array_size(data); r++) {
        loom_strv_t *row = &rows[r + 1];
        sweep_cell(row, "%zu", r);
        for (size_t k = 0; k < json_array_size(names); k++) {
            const char *v = json_string_value(json_array_get(json_array_get(data, r), k));
            loom_strv_add(row, v ? v : "-");
        }
        loom_strv_add(row, t[r].state);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        if (t[r].have_exit)
            loom_cli_exit_code(t[r].exit_code, &sb);
        loom_strv_add(row, t[r].have_exit ? loom_sbuf_str(&sb) : "-");
        loom_sbuf_reset(&sb);
        loom_time_fmt_elapsed(t[r].elapsed, &sb);
        loom_strv_add(row, loom_sbuf_str(&sb));
        loom_sbuf_free(&sb);
        if (t[r].job_id >= 0)
            sweep_cell(row, "%lld", (long long)t[r].job_id);
        else
            loom_strv_add(row, "-");
    }
    *ncols = rows[0].n;
}

static void sweep_print_table(const json_t *doc, const sweep_task_t *t, size_t nrows)
{
    loom_strv_t *rows = loom_xcalloc(nrows + 1, sizeof(*rows));
    size_t ncols;
    sweep_table_rows(doc, t, rows, &ncols);
    size_t *w = loom_xcalloc(ncols, sizeof(*w));
    for (size_t r = 0; r <= nrows; r++)
        for (size_t k = 0; k < ncols && k < rows[r].n; k++)
            w[k] = strlen(rows[r].v[k]) > w[k] ? strlen(rows[r].v[k]) : w[k];
    loom_sbuf_t out = LOOM_SBUF_INIT;
    for (size_t r = 0; r <= nrows; r++) {
        for (size_t k = 0; k < ncols && k < rows[r].n; k++)
            loom_sbuf_addf(&out, "%-*s%s", k + 1 < ncols ? (int)w[k] : 0, rows[r].v[k],
                           k + 1 < ncols ? "  " : "\n");
        loom_strv_free(&rows[r]);
        if (out.len > 65536)
            loom_cli_flush(&out);
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    free(w);
    free(rows);
}

static void sweep_summary(const sweep_task_t *t, size_t n)
{
    loom_strv_t names = LOOM_STRV_INIT;
    size_t counts[64] = {0};
    for (size_t i = 0; i < n; i++) {
        long k = loom_strv_find(&names, t[i].state);
        if (k < 0 && names.n < 64) {
            loom_strv_add(&names, t[i].state);
            k = (long)names.n - 1;
        }
        if (k >= 0)
            counts[k]++;
    }
    printf("%zu tasks:", n);
    for (size_t k = 0; k < names.n; k++)
        printf("%s %zu %s", k ? "," : "", counts[k], names.v[k]);
    printf("\n");
    loom_strv_free(&names);
}

static json_t *sweep_status_json(const json_t *doc, const sweep_task_t *t, size_t n)
{
    json_t *out = json_array();
    const json_t *names = json_object_get(doc, "params"), *data = json_object_get(doc, "rows");
    for (size_t r = 0; r < n; r++) {
        json_t *p = json_object();
        for (size_t k = 0; k < json_array_size(names); k++)
            json_object_set(p, json_string_value(json_array_get(names, k)),
                            json_array_get(json_array_get(data, r), k));
        json_t *e = json_pack("{s:I, s:o, s:s, s:I}", "task", (json_int_t)r, "params", p, "state",
                              t[r].state, "elapsed", (json_int_t)t[r].elapsed);
        if (t[r].have_exit)
            json_object_set_new(e, "exit_code", json_integer(t[r].exit_code >> 8));
        if (t[r].job_id >= 0)
            json_object_set_new(e, "job_id", json_integer(t[r].job_id));
        json_array_append_new(out, e);
    }
    return out;
}

static int sweep_status(int argc, char **argv)
{
    bool as_json = argc > 2 && strcmp(argv[argc - 1], "--json") == 0;
    char *end = NULL;
    unsigned long id = argc > 1 ? strtoul(argv[1], &end, 10) : 0;
    if (!id || *end) {
        fprintf(stderr, "Usage: loom sweep status ID [--json]\n");
        return 1;
    }
    char name[32];
    snprintf(name, sizeof(name), "%lu.json", id);
    char *path = loom_submit_state_path("sweeps", name);
    json_t *doc = path ? loom_submit_load(path) : NULL;
    free(path);
    if (!doc) {
        fprintf(stderr, "loom: error: no sweep %lu was submitted from here\n", id);
        return 1;
    }
    loom_cli_t cli;
    loom_cli_init(&cli, "loom");
    loom_err_t err = {0};
    uint32_t jid = (uint32_t)id;
    json_t *jobs = loom_submit_records(&cli, &jid, 1, &err);
    int rc = jobs ? 0 : 1;
    if (!jobs)
        fprintf(stderr, "loom: error: %s\n", err.msg);
    size_t n = json_array_size(json_object_get(doc, "rows"));
    sweep_task_t *t = loom_xcalloc(n + 1, sizeof(*t));
    if (jobs) {
        sweep_states(jobs, n, time(NULL), t);
        if (as_json) {
            json_t *out = sweep_status_json(doc, t, n);
            json_dumpf(out, stdout, JSON_INDENT(2));
            printf("\n");
            json_decref(out);
        } else {
            sweep_print_table(doc, t, n);
            sweep_summary(t, n);
        }
    }
    free(t);
    json_decref(jobs);
    json_decref(doc);
    loom_cli_fini(&cli);
    return rc;
}

int loom_sweep_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "status") == 0)
        return sweep_status(argc - 1, argv + 1);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        sweep_usage(stdout);
        return 0;
    }
    sweep_t s = {.names = LOOM_STRV_INIT};
    loom_strv_t params = LOOM_STRV_INIT;
    int rc = sweep_parse(&s, argc, argv, &params);
    if (rc == 0)
        rc = s.file ? sweep_file(&s) : sweep_grid_words(&s, &params);
    if (rc == 0)
        rc = sweep_submit(&s);
    else
        rc = 1;
    loom_strv_free(&params);
    loom_strv_free(&s.sbatch);
    loom_strv_free(&s.names);
    loom_strv_free(&s.command);
    json_decref(s.rows);
    return rc;
}

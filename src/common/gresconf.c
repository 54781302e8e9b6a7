/*
 * gresconf.c - gres.conf lines, device file ranges, per-node device lists.
 * See gresconf.h; CLI_SPEC §13.1.
 */
#include "common/gresconf.h"
#include "common/conf_keys.h"
#include "common/conflex.h"
#include "common/gres.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GRESCONF_MAX_DEVICES 1024 /* devices of one line (Slurm's File limit per node) */
#define GRESCONF_MAX_CORE    (1 << 20)

typedef enum {
    GK_NODENAME,
    GK_NAME,
    GK_TYPE,
    GK_FILE,
    GK_MULTIPLE_FILES,
    GK_COUNT,
    GK_CORES,
    GK_LINKS,
    GK_FLAGS,
    GK_AUTODETECT,
} gresconf_key_t;

static const struct {
    const char *name;
    gresconf_key_t key;
} gresconf_keys[] = {
    {"NodeName", GK_NODENAME},
    {"Name", GK_NAME},
    {"Type", GK_TYPE},
    {"File", GK_FILE},
    {"Files", GK_FILE},
    {"MultipleFiles", GK_MULTIPLE_FILES},
    {"Count", GK_COUNT},
    {"Cores", GK_CORES},
    {"CPUs", GK_CORES},
    {"Links", GK_LINKS},
    {"Link", GK_LINKS},
    {"Flags", GK_FLAGS},
    {"AutoDetect", GK_AUTODETECT},
};
#define GRESCONF_NKEYS (sizeof(gresconf_keys) / sizeof(gresconf_keys[0]))

static const loom_conf_word_t gresconf_flag_words[] = {
    {"CountOnly", LOOM_GRESF_COUNT_ONLY},
    {"explicit", LOOM_GRESF_EXPLICIT},
    {"one_sharing", LOOM_GRESF_ONE_SHARING},
    {"all_sharing", LOOM_GRESF_ALL_SHARING},
    {"nvidia_gpu_env", LOOM_GRESF_NVIDIA_GPU_ENV},
    {"amd_gpu_env", LOOM_GRESF_AMD_GPU_ENV},
    {"intel_gpu_env", LOOM_GRESF_INTEL_GPU_ENV},
    {"opencl_env", LOOM_GRESF_OPENCL_ENV},
    {"no_gpu_env", LOOM_GRESF_NO_GPU_ENV},
    {"env_uuid", LOOM_GRESF_ENV_UUID},
    {NULL, 0},
};

static const char *const gresconf_autodetect_names[] = {"off",    "nvml", "rsmi",
                                                        "oneapi", "nrt",  "nvidia"};

typedef struct {
    loom_gresconf_t *g;
    bool allow_include;
    int depth;
} gresconf_state_t;

const char *loom_gres_autodetect_name(int a)
{
    if (a < 0 || a >= (int)(sizeof(gresconf_autodetect_names) / sizeof(char *)))
        return "unset";
    return gresconf_autodetect_names[a];
}

static int gresconf_lookup(const char *key, gresconf_key_t *out)
{
    for (size_t i = 0; i < GRESCONF_NKEYS; i++) {
        if (strcasecmp(gresconf_keys[i].name, key) == 0) {
            *out = gresconf_keys[i].key;
            return 0;
        }
    }
    return -1;
}

/* The known key closest to a misspelt one (at most 2 edits), or NULL. */
static const char *gresconf_suggest(const char *key)
{
    const char *best = NULL;
    size_t best_d = 3, lk = strlen(key);
    for (size_t i = 0; i < GRESCONF_NKEYS && lk <= 32; i++) {
        const char *k = gresconf_keys[i].name;
        size_t lb = strlen(k), d[33][33];
        for (size_t a = 0; a <= lk; a++)
            d[a][0] = a;
        for (size_t b = 0; b <= lb; b++)
            d[0][b] = b;
        for (size_t a = 1; a <= lk; a++)
            for (size_t b = 1; b <= lb; b++) {
                size_t c = tolower((unsigned char)key[a - 1]) != tolower((unsigned char)k[b - 1]);
                size_t m = d[a - 1][b - 1] + c;
                if (d[a - 1][b] + 1 < m)
                    m = d[a - 1][b] + 1;
                if (d[a][b - 1] + 1 < m)
                    m = d[a][b - 1] + 1;
                d[a][b] = m;
            }
        if (d[lk][lb] < best_d) {
            best_d = d[lk][lb];
            best = k;
        }
    }
    return best;
}

static int gresconf_bad(const loom_conf_line_t *ln, const char *key, const char *value,
                        const char *why, loom_err_t *err)
{
    return loom_errf(err, -LOOM_ECONFIG, "%s:%d: invalid %s value '%s' (%s)", ln->file, ln->lineno,
                     key, value, why);
}

/* Expand one File item: "dir/base[0-3]" -> dir/base0 .. dir/base3. */
static int gresconf_expand_item(const char *item, loom_strv_t *out, char *why, size_t why_n)
{
    const char *br = strchr(item, '[');
    const char *slash = NULL;
    for (const char *p = item; *p && (!br || p < br); p++)
        if (*p == '/')
            slash = p;
    size_t dir_n = slash ? (size_t)(slash - item + 1) : 0;
    if (!br) {
        loom_strv_add(out, item);
        return 0;
    }
    loom_hostlist_t *hl = NULL;
    loom_err_t e2;
    if (loom_hostlist_parse(item + dir_n, &hl, &e2) < 0) {
        /* why_n may be shorter than the message: copy what fits. */
        size_t len = strnlen(e2.msg, why_n - 1);
        memcpy(why, e2.msg, len);
        why[len] = '\0';
        return -1;
    }
    size_t n = loom_hostlist_count(hl);
    int rc = 0;
    if (out->n + n > GRESCONF_MAX_DEVICES) {
        snprintf(why, why_n, "more than %d files", GRESCONF_MAX_DEVICES);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addn(&sb, item, dir_n);
        loom_sbuf_add(&sb, loom_hostlist_nth(hl, i));
        loom_strv_take(out, loom_sbuf_detach(&sb));
    }
    loom_hostlist_destroy(hl);
    return rc;
}

/* File=/MultipleFiles=: comma-separated items, commas inside brackets kept. */
static int gresconf_files(const loom_conf_line_t *ln, const char *key, const char *v,
                          loom_strv_t *out, loom_err_t *err)
{
    char why[300] = "empty file name";
    const char *s = v;
    for (;;) {
        const char *e = s;
        int depth = 0;
        while (*e && (depth > 0 || *e != ','))
            depth += (*e == '[') - (*e == ']'), e++;
        char *item = loom_xstrndup(s, (size_t)(e - s));
        int rc = *item ? gresconf_expand_item(item, out, why, sizeof(why)) : -1;
        free(item);
        if (rc < 0 || out->n > GRESCONF_MAX_DEVICES) {
            loom_strv_free(out);
            return gresconf_bad(ln, key, v, why, err);
        }
        if (!*e)
            return 0;
        s = e + 1;
    }
}

/* Cores=: "0-31", "0-7,16-23", "0,1,2,3". */
static int gresconf_cores(const loom_conf_line_t *ln, const char *v, loom_err_t *err)
{
    const char *p = v;
    long prev = -1;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            break;
        long lo = strtol(p, &end, 10), hi = lo;
        if (*end == '-') {
            if (!isdigit((unsigned char)end[1]))
                break;
            hi = strtol(end + 1, &end, 10);
        }
        if (lo > hi || lo <= prev || hi >= GRESCONF_MAX_CORE)
            return gresconf_bad(ln, "Cores", v, "ranges must ascend and not overlap", err);
        prev = hi;
        p = end;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            break;
    }
    if (*p || !*v)
        return gresconf_bad(ln, "Cores", v, "expected core numbers like 0-31 or 0-7,16-23", err);
    return 0;
}

static int gresconf_flags(const loom_conf_line_t *ln, const char *v, unsigned *out, loom_err_t *err)
{
    unsigned acc = 0;
    const char *p = v;
    while (true) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const loom_conf_word_t *w = gresconf_flag_words;
        while (w->name && !(strlen(w->name) == n && strncasecmp(w->name, p, n) == 0))
            w++;
        if (!w->name)
            return gresconf_bad(ln, "Flags", v,
                                "expected CountOnly, explicit, one_sharing, all_sharing, "
                                "nvidia_gpu_env, amd_gpu_env, intel_gpu_env, opencl_env, "
                                "no_gpu_env or env_uuid",
                                err);
        acc |= w->value;
        if (!e)
            break;
        p = e + 1;
    }
    *out = acc;
    return 0;
}

static int gresconf_links(const loom_conf_line_t *ln, const char *v, loom_err_t *err)
{
    const char *p = v;
    do {
        char *end;
        if (*p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return gresconf_bad(ln, "Links", v, "expected a comma list of numbers", err);
        strtol(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return gresconf_bad(ln, "Links", v, "expected a comma list of numbers", err);
    } while (*p);
    return 0;
}

static int gresconf_autodetect(const loom_conf_line_t *ln, const char *v, int *out, loom_err_t *err)
{
    for (size_t i = 0; i < sizeof(gresconf_autodetect_names) / sizeof(char *); i++) {
        if (strcasecmp(v, gresconf_autodetect_names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    }
    return gresconf_bad(ln, "AutoDetect", v, "expected nvml, rsmi, oneapi, nrt, nvidia or off",
                        err);
}

static void gresconf_line_free(loom_gresconf_line_t *l)
{
    free(l->nodes);
    loom_hostlist_destroy(l->node_list);
    free(l->name);
    free(l->type);
    free(l->file_expr);
    loom_strv_free(&l->files);
    free(l->cores);
    free(l->links);
}

static void gresconf_set(char **field, const char *v)
{
    free(*field);
    *field = loom_xstrdup(v);
}

static int gresconf_pair(const loom_conf_line_t *ln, const loom_conf_pair_t *p,
                         loom_gresconf_line_t *l, loom_err_t *err)
{
    gresconf_key_t key;
    if (gresconf_lookup(p->key, &key) < 0) {
        const char *hint = gresconf_suggest(p->key);
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: unknown key '%s'%s%s%s", ln->file, ln->lineno,
                         p->key, hint ? ", did you mean " : "", hint ? hint : "", hint ? "?" : "");
    }
    const char *v = p->value;
    if (!*v)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: %s= needs a value", ln->file, ln->lineno,
                         p->key);
    loom_err_t e2;
    switch (key) {
    case GK_NODENAME:
        gresconf_set(&l->nodes, v);
        loom_hostlist_destroy(l->node_list);
        l->node_list = NULL;
        if (loom_hostlist_parse(v, &l->node_list, &e2) < 0)
            return gresconf_bad(ln, "NodeName", v, e2.msg, err);
        return 0;
    case GK_NAME:
        gresconf_set(&l->name, v);
        return 0;
    case GK_TYPE:
        gresconf_set(&l->type, v);
        return 0;
    case GK_FILE:
    case GK_MULTIPLE_FILES:
        if (l->file_expr && l->multiple_files != (key == GK_MULTIPLE_FILES))
            return loom_errf(err, -LOOM_ECONFIG,
                             "%s:%d: File and MultipleFiles are mutually exclusive", ln->file,
                             ln->lineno);
        gresconf_set(&l->file_expr, v);
        l->multiple_files = key == GK_MULTIPLE_FILES;
        loom_strv_free(&l->files);
        return gresconf_files(ln, p->key, v, &l->files, err);
    case GK_COUNT: {
        int64_t n;
        if (loom_conf_parse_int(v, 1, &n) != 0)
            return gresconf_bad(ln, "Count", v,
                                "expected a number, optionally with K, M, G, T or P", err);
        l->count = (uint64_t)n;
        l->count_set = true;
        return 0;
    }
    case GK_CORES:
        gresconf_set(&l->cores, v);
        return gresconf_cores(ln, v, err);
    case GK_LINKS:
        gresconf_set(&l->links, v);
        return gresconf_links(ln, v, err);
    case GK_FLAGS:
        return gresconf_flags(ln, v, &l->flags, err);
    case GK_AUTODETECT:
        return gresconf_autodetect(ln, v, &l->autodetect, err);
    }
    return 0;
}

static bool gresconf_shared(const char *name)
{
    return strcasecmp(name, "mps") == 0 || strcasecmp(name, "shard") == 0;
}

/* Whole-line rules, after every pair was read. */
static int gresconf_line_check(const loom_conf_line_t *ln, loom_gresconf_line_t *l, loom_err_t *err)
{
    bool only_detect = !l->name && !l->type && !l->file_expr && !l->count_set && !l->cores &&
                       !l->links && !l->flags;
    if (!l->name && !(only_detect && l->autodetect != LOOM_GRES_AUTODETECT_UNSET))
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: Name= is required", ln->file, ln->lineno);
    if (!l->name)
        return 0;
    size_t devices = l->multiple_files ? 1 : l->files.n;
    if (l->count_set && l->files.n && !l->multiple_files && !gresconf_shared(l->name) &&
        l->count != devices)
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: Count=%llu does not match the %zu file(s) of File=%s", ln->file,
                         ln->lineno, (unsigned long long)l->count, devices, l->file_expr);
    if (l->links && devices > 1)
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: Links= needs a line with a single device, File=%s has %zu",
                         ln->file, ln->lineno, l->file_expr, devices);
    if (!l->count_set)
        l->count = l->files.n ? devices : 1;
    return 0;
}

static int gresconf_include(gresconf_state_t *st, const loom_conf_line_t *ln, loom_err_t *err);

static int gresconf_line(void *ctx, const loom_conf_line_t *ln, loom_err_t *err)
{
    gresconf_state_t *st = ctx;
    if (ln->flags & LOOM_CONFLEX_INCLUDE)
        return gresconf_include(st, ln, err);
    loom_gresconf_line_t l = {.file = ln->file, .lineno = ln->lineno};
    l.autodetect = LOOM_GRES_AUTODETECT_UNSET;
    int rc = 0;
    for (size_t i = 0; i < ln->n && rc == 0; i++)
        rc = gresconf_pair(ln, &ln->pairs[i], &l, err);
    if (rc == 0)
        rc = gresconf_line_check(ln, &l, err);
    if (rc < 0) {
        gresconf_line_free(&l);
        return rc;
    }
    loom_gresconf_t *g = st->g;
    if (!l.nodes && !l.name && l.autodetect != LOOM_GRES_AUTODETECT_UNSET) {
        g->autodetect = l.autodetect; /* a global AutoDetect line */
        gresconf_line_free(&l);
        return 0;
    }
    g->lines = loom_xreallocarray(g->lines, g->n_lines + 1, sizeof(*g->lines));
    g->lines[g->n_lines++] = l;
    return 0;
}

static const char *gresconf_file_name(loom_gresconf_t *g, const char *name)
{
    long i = loom_strv_find(&g->files, name);
    if (i >= 0)
        return g->files.v[i];
    loom_strv_add(&g->files, name);
    return g->files.v[g->files.n - 1];
}

static int gresconf_text(gresconf_state_t *st, const char *name, const char *text, size_t len,
                         loom_err_t *err)
{
    st->depth++;
    int rc =
        loom_conflex_buffer(gresconf_file_name(st->g, name), text, len, gresconf_line, st, err);
    st->depth--;
    return rc;
}

static int gresconf_file(gresconf_state_t *st, const char *path, loom_err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = loom_conflex_read_file(path, LOOM_CONF_MAX_FILE_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = gresconf_text(st, path, text, len, err);
    free(text);
    return rc;
}

static int gresconf_include(gresconf_state_t *st, const loom_conf_line_t *ln, loom_err_t *err)
{
    if (!st->allow_include)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: Include is not allowed here", ln->file,
                         ln->lineno);
    if (st->depth >= LOOM_CONF_MAX_INCLUDE_DEPTH)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: Include nested more than %d deep (a loop?)",
                         ln->file, ln->lineno, LOOM_CONF_MAX_INCLUDE_DEPTH);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    const char *v = ln->pairs[0].value, *slash = strrchr(ln->file, '/');
    if (v[0] != '/' && slash)
        loom_sbuf_addn(&path, ln->file, (size_t)(slash - ln->file + 1));
    loom_sbuf_add(&path, v);
    int rc = gresconf_file(st, loom_sbuf_str(&path), err);
    if (rc < 0 && strncmp(err ? err->msg : "", "cannot", 6) == 0)
        loom_err_prefix(err, "%s:%d", ln->file, ln->lineno);
    loom_sbuf_free(&path);
    return rc;
}

static int gresconf_load(const char *name, const char *text, size_t len, loom_gresconf_t **out,
                         loom_err_t *err)
{
    gresconf_state_t st = {0};
    st.g = loom_xcalloc(1, sizeof(*st.g));
    st.g->path = loom_xstrdup(name);
    st.g->autodetect = LOOM_GRES_AUTODETECT_OFF;
    st.allow_include = text == NULL;
    int rc = text ? gresconf_text(&st, name, text, len, err) : gresconf_file(&st, name, err);
    if (rc < 0) {
        loom_gresconf_destroy(st.g);
        return rc;
    }
    *out = st.g;
    return 0;
}

int loom_gresconf_load(const char *path, loom_gresconf_t **out, loom_err_t *err)
{
    return gresconf_load(path, NULL, 0, out, err);
}

int loom_gresconf_load_buffer(const char *name, const char *text, size_t len, loom_gresconf_t **out,
                              loom_err_t *err)
{
    return gresconf_load(name, text ? text : "", text ? len : 0, out, err);
}

void loom_gresconf_destroy(loom_gresconf_t *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_lines; i++)
        gresconf_line_free(&g->lines[i]);
    free(g->lines);
    loom_strv_free(&g->files);
    free(g->path);
    free(g);
}

/* ---- checks against slurm.conf ------------------------------------------- */

static void gresconf_warn(loom_strv_t *w, const loom_gresconf_line_t *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void gresconf_warn(loom_strv_t *w, const loom_gresconf_line_t *l, const char *fmt, ...)
{
    if (!w)
        return;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s:%d: ", l->file, l->lineno);
    va_list ap;
    va_start(ap, fmt);
    loom_sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    if (loom_strv_find(w, loom_sbuf_str(&sb)) < 0)
        loom_strv_take(w, loom_sbuf_detach(&sb));
    loom_sbuf_free(&sb);
}

int loom_gresconf_check(const loom_gresconf_t *g, const loom_conf_t *conf, loom_strv_t *warnings,
                        loom_err_t *err)
{
    for (size_t i = 0; i < g->n_lines; i++) {
        const loom_gresconf_line_t *l = &g->lines[i];
        bool known = !l->name;
        for (size_t t = 0; !known && t < conf->gres_types.n; t++)
            known = strcasecmp(conf->gres_types.v[t], l->name) == 0;
        if (!known)
            return loom_errf(err, -LOOM_ECONFIG, "%s:%d: GRES '%s' is not listed in GresTypes%s",
                             l->file, l->lineno, l->name,
                             conf->gres_types.n ? "" : " (GresTypes is not set)");
        size_t n = l->node_list ? loom_hostlist_count(l->node_list) : 0;
        for (size_t j = 0; j < n; j++)
            if (!loom_conf_find_node(conf, loom_hostlist_nth(l->node_list, j)))
                gresconf_warn(warnings, l, "NodeName names '%s', which slurm.conf does not define",
                              loom_hostlist_nth(l->node_list, j));
    }
    return 0;
}

/* ---- per-node device lists ----------------------------------------------- */

static bool gresconf_names_node(const loom_gresconf_line_t *l, const char *node)
{
    return !l->node_list || loom_hostlist_find(l->node_list, node) >= 0;
}

/* Whether line l serves the node Gres= entry e. */
static bool gresconf_serves(const loom_gresconf_line_t *l, const loom_gres_t *e)
{
    if (!l->name || strcasecmp(l->name, e->name) != 0)
        return false;
    if (!e->type)
        return true;
    return l->type && strcasecmp(l->type, e->type) == 0;
}

static int gresconf_effective_detect(const loom_gresconf_t *g, const char *node)
{
    int a = g->autodetect;
    for (size_t i = 0; i < g->n_lines; i++)
        if (g->lines[i].node_list && g->lines[i].autodetect != LOOM_GRES_AUTODETECT_UNSET &&
            gresconf_names_node(&g->lines[i], node))
            a = g->lines[i].autodetect;
    return a;
}

/* Core numbers of Cores= must be below the node's core count. */
static int gresconf_check_cores(const loom_gresconf_line_t *l, const loom_conf_node_t *node,
                                loom_err_t *err)
{
    if (!l->cores)
        return 0;
    int64_t ncores = node->cfg->sockets * node->cfg->cores_per_socket;
    const char *p = l->cores;
    long max = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (v > max)
            max = v;
        p = *end ? end + 1 : end;
    }
    if (max >= ncores)
        return loom_errf(
            err, -LOOM_ECONFIG, "%s:%d: Cores=%s is outside node %s, which has %lld cores (0-%lld)",
            l->file, l->lineno, l->cores, node->name, (long long)ncores, (long long)ncores - 1);
    return 0;
}

static void gresconf_push(loom_gres_devlist_t *out, const loom_gresconf_line_t *l,
                          const loom_gres_t *e, const char *file, uint64_t count, uint64_t *next)
{
    out->v = loom_xreallocarray(out->v, out->n + 1, sizeof(*out->v));
    loom_gres_dev_t *d = &out->v[out->n++];
    d->name = l ? l->name : e->name;
    d->type = l && l->type ? l->type : e->type;
    d->index = (*next)++;
    d->file = file;
    d->cores = l ? l->cores : NULL;
    d->count = count;
    d->line = l;
}

/* Append the devices of line l (serving entry e) to out. */
static void gresconf_add_line(loom_gres_devlist_t *out, const loom_gresconf_line_t *l,
                              const loom_gres_t *e, uint64_t *next)
{
    size_t nf = l->files.n;
    if (nf == 0) {
        gresconf_push(out, l, e, NULL, l->count, next);
    } else if (l->multiple_files) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        for (size_t i = 0; i < nf; i++)
            loom_sbuf_addf(&sb, "%s%s", i ? "," : "", l->files.v[i]);
        out->multi = loom_xreallocarray(out->multi, out->n_multi + 1, sizeof(char *));
        out->multi[out->n_multi] = loom_sbuf_detach(&sb);
        gresconf_push(out, l, e, out->multi[out->n_multi++], l->count, next);
    } else {
        bool shared = gresconf_shared(l->name);
        for (size_t i = 0; i < nf; i++) {
            uint64_t c = shared ? l->count / nf + (i < l->count % nf) : 1;
            gresconf_push(out, l, e, l->files.v[i], c, next);
        }
    }
}

/* The next-index counter of a GRES name (indexes run per name). */
static uint64_t *gresconf_counter(const char **names, uint64_t *next, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcasecmp(names[i], name) == 0)
            return &next[i];
    names[*n] = name;
    next[*n] = 0;
    return &next[(*n)++];
}

static int gresconf_entry(const loom_gresconf_t *g, const loom_conf_node_t *node,
                          const loom_gres_t *e, int detect, loom_gres_devlist_t *out,
                          uint64_t *next, loom_err_t *err)
{
    uint64_t total = 0;
    const loom_gresconf_line_t *first = NULL;
    for (size_t i = 0; i < g->n_lines; i++) {
        const loom_gresconf_line_t *l = &g->lines[i];
        if (!gresconf_names_node(l, node->name) || !gresconf_serves(l, e))
            continue;
        int rc = gresconf_check_cores(l, node, err);
        if (rc < 0)
            return rc;
        gresconf_add_line(out, l, e, next);
        total += l->count;
        if (!first)
            first = l;
    }
    /* The mismatch is reported at the first gres.conf line that counted, or
     * at the NodeName line when none did. */
    const char *file = first ? first->file : node->cfg->src.file;
    int lineno = first ? first->lineno : node->cfg->src.lineno;
    bool gpu_needs_file =
        !first && detect == LOOM_GRES_AUTODETECT_OFF && strcasecmp(e->name, "gpu") == 0;
    if ((first && total != e->count) || (gpu_needs_file && e->count > 0))
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: node %s: gres.conf gives %llu %s%s%s but slurm.conf Gres= says "
                         "%llu%s",
                         file, lineno, node->name, (unsigned long long)total, e->name,
                         e->type ? ":" : "", e->type ? e->type : "", (unsigned long long)e->count,
                         gpu_needs_file ? " (File= is required for GPUs)" : "");
    /* No line at all: slurm.conf's count stands alone (a count-only GRES, or
     * devices AutoDetect would find). */
    if (!first)
        gresconf_push(out, NULL, e, NULL, e->count, next);
    return 0;
}

/* Warn about node-scoped lines that name the node but serve none of its GRES. */
static void gresconf_unused(const loom_gresconf_t *g, const loom_conf_node_t *node,
                            loom_strv_t *warnings)
{
    const loom_gres_list_t *gl = &node->cfg->gres;
    for (size_t i = 0; i < g->n_lines; i++) {
        const loom_gresconf_line_t *l = &g->lines[i];
        if (!l->node_list || !l->name || !gresconf_names_node(l, node->name))
            continue;
        bool used = false;
        for (size_t j = 0; j < gl->n && !used; j++)
            used = gresconf_serves(l, &gl->v[j]);
        if (!used)
            gresconf_warn(warnings, l, "node %s has no GRES %s%s%s in slurm.conf; line ignored",
                          node->name, l->name, l->type ? ":" : "", l->type ? l->type : "");
    }
}

int loom_gresconf_node_devices(const loom_gresconf_t *g, const loom_conf_t *conf,
                               const loom_conf_node_t *node, loom_gres_devlist_t *out,
                               loom_strv_t *warnings, loom_err_t *err)
{
    const loom_gres_list_t *gl = &node->cfg->gres;
    loom_gres_devlist_t res = {0};
    const char **names = loom_xcalloc(gl->n + 1, sizeof(char *));
    uint64_t *next = loom_xcalloc(gl->n + 1, sizeof(uint64_t));
    size_t n_names = 0;
    int rc = 0;
    res.autodetect = gresconf_effective_detect(g, node->name);
    for (size_t i = 0; i < gl->n && rc == 0; i++)
        rc = gresconf_entry(g, node, &gl->v[i], res.autodetect, &res,
                            gresconf_counter(names, next, &n_names, gl->v[i].name), err);
    free(names);
    free(next);
    if (rc < 0) {
        loom_gres_devlist_free(&res);
        return rc;
    }
    gresconf_unused(g, node, warnings);
    *out = res;
    return 0;
}

void loom_gres_devlist_free(loom_gres_devlist_t *l)
{
    free(l->v);
    for (size_t i = 0; i < l->n_multi; i++)
        free(l->multi[i]);
    free(l->multi);
    memset(l, 0, sizeof(*l));
}

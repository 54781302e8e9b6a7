/*
 * conf.c - slurm.conf loading: lines to keys, records, Include, defaults and
 * the checks that span the whole file. See conf.h; CLI_SPEC §13.
 *
 * Flow: conflex.c hands over logical lines; a global key is converted into
 * loom_conf_t through the key table (conf_keys.c) and its text kept in
 * vals[]; a record line (NodeName=, PartitionName=, ...) has the DEFAULT
 * values of its kind merged in and is converted into its struct, every value
 * keeping the file:line it came from. conf_finish() then applies the global
 * defaults, checks what needs the whole file, and conf_nodes.c builds the
 * node table and the partitions' node lists.
 */
#include "common/conf.h"
#include "common/conf_keys.h"
#include "common/conf_nodes.h"
#include "common/conflex.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One Key=Value of a record line, resolved against the table. */
typedef struct {
    const loom_conf_key_t *key;
    char *value;
    loom_conf_src_t src;
} conf_pv_t;

typedef struct {
    conf_pv_t *v;
    size_t n;
} conf_pvs_t;

typedef struct {
    loom_conf_t *c;
    bool allow_include;
    int depth;
    loom_strv_t stack;      /* real paths of the files being read (loop check) */
    conf_pvs_t defaults[2]; /* NodeName=DEFAULT, PartitionName=DEFAULT */
} conf_state_t;

/* ---- small helpers ------------------------------------------------------- */

static void conf_pvs_free(conf_pvs_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i].value);
    free(p->v);
    p->v = NULL;
    p->n = 0;
}

/* Set key in p, replacing an earlier value of the same key. */
static void conf_pvs_set(conf_pvs_t *p, const loom_conf_key_t *k, const char *value,
                         loom_conf_src_t src)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i].key == k) {
            free(p->v[i].value);
            p->v[i].value = loom_xstrdup(value);
            p->v[i].src = src;
            return;
        }
    }
    p->v = loom_xreallocarray(p->v, p->n + 1, sizeof(*p->v));
    p->v[p->n++] = (conf_pv_t){k, loom_xstrdup(value), src};
}

static const conf_pv_t *conf_pvs_get(const conf_pvs_t *p, const loom_conf_key_t *k)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].key == k)
            return &p->v[i];
    return NULL;
}

/* The file name kept in c->files (stable for the life of the conf). */
static const char *conf_file_name(loom_conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->files.n; i++)
        if (strcmp(c->files.v[i], name) == 0)
            return c->files.v[i];
    loom_strv_add(&c->files, name);
    return c->files.v[c->files.n - 1];
}

static void conf_warn(loom_conf_t *c, loom_conf_src_t src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void conf_warn(loom_conf_t *c, loom_conf_src_t src, const char *fmt, ...)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (src.lineno > 0)
        loom_sbuf_addf(&sb, "%s:%d: ", src.file, src.lineno);
    else
        loom_sbuf_addf(&sb, "%s: ", src.file);
    va_list ap;
    va_start(ap, fmt);
    loom_sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    loom_strv_take(&c->warnings, loom_sbuf_detach(&sb));
}

static int conf_unknown_key(loom_conf_scope_t scope, const char *what, const loom_conf_line_t *ln,
                            const char *key, loom_err_t *err)
{
    const char *hint = loom_conf_key_suggest(scope, key);
    const loom_conf_key_t *g = loom_conf_key_find(LOOM_CS_GLOBAL, key);
    if (!hint && scope == LOOM_CS_GLOBAL && loom_conf_key_find(LOOM_CS_NODE, key))
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: key '%s' belongs on a NodeName line", ln->file,
                         ln->lineno, key);
    if (!hint && scope == LOOM_CS_GLOBAL && loom_conf_key_find(LOOM_CS_PART, key))
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: key '%s' belongs on a PartitionName line",
                         ln->file, ln->lineno, key);
    if (!hint && g && scope != LOOM_CS_GLOBAL)
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: key '%s' is not valid on a %s line (it is a "
                         "global key: put it on a line of its own)",
                         ln->file, ln->lineno, key, what);
    return loom_errf(err, -LOOM_ECONFIG, "%s:%d: unknown key '%s'%s%s%s%s%s%s", ln->file,
                     ln->lineno, key, what ? " on " : "", what ? what : "", what ? " line" : "",
                     hint ? ", did you mean " : "", hint ? hint : "", hint ? "?" : "");
}

/* ---- global keys --------------------------------------------------------- */

static void conf_fold_cluster(loom_conf_t *c, loom_conf_src_t src);

static int conf_global(conf_state_t *st, const loom_conf_line_t *ln, const loom_conf_pair_t *p,
                       loom_err_t *err)
{
    loom_conf_t *c = st->c;
    const loom_conf_key_t *k = loom_conf_key_find(LOOM_CS_GLOBAL, p->key);
    if (!k)
        return conf_unknown_key(LOOM_CS_GLOBAL, NULL, ln, p->key, err);
    if (k->type == LOOM_CT_RECORD)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: %s= must start its line", ln->file, ln->lineno,
                         k->name);
    loom_conf_val_t *v = &c->vals[loom_conf_key_index(k)];
    loom_conf_src_t src = {ln->file, ln->lineno};
    if (v->text && !(k->flags & LOOM_CKF_REPEAT))
        conf_warn(c, src, "%s specified more than once, latest value used (first at %s:%d)",
                  k->name, v->src.file, v->src.lineno);
    int rc = loom_conf_key_parse(k, p->value, NULL, c, err);
    if (rc < 0)
        return loom_err_prefix(err, "%s:%d", ln->file, ln->lineno);
    free(v->text);
    v->text = loom_xstrdup(p->value);
    v->src = src;
    if (v->text && strcmp(k->name, "ClusterName") == 0)
        conf_fold_cluster(c, src);
    if (k->flags & LOOM_CKF_IGNORED)
        loom_log_sub(LOOM_LOGF_CONF, "%s:%d: %s is accepted but not used by Loom", ln->file,
                     ln->lineno, k->name);
    return 0;
}

/* ---- records ------------------------------------------------------------- */

/* Numeric fields without a default start as NOT_SET (topology derivation and
 * "inherit the global value" need to tell "not given" from any value). */
static void conf_init_fields(loom_conf_scope_t scope, void *record)
{
    if (!record)
        return;
    for (size_t i = 0; i < loom_conf_key_count(); i++) {
        const loom_conf_key_t *k = loom_conf_key_at(i);
        if (k->scope != scope || k->off == LOOM_CONF_NOFIELD || k->alias_of)
            continue;
        if (k->type == LOOM_CT_INT || k->type == LOOM_CT_TIME || k->type == LOOM_CT_MEM)
            *(int64_t *)((char *)record + k->off) = LOOM_CONF_NOT_SET;
    }
}

/* Convert the merged values into record, then the defaults of keys not given. */
static int conf_fill(loom_conf_scope_t scope, void *record, const conf_pvs_t *pv, const char *where,
                     loom_err_t *err)
{
    conf_init_fields(scope, record);
    for (size_t i = 0; i < pv->n; i++) {
        if (loom_conf_key_parse(pv->v[i].key, pv->v[i].value, where, record, err) < 0)
            return loom_err_prefix(err, "%s:%d", pv->v[i].src.file, pv->v[i].src.lineno);
    }
    for (size_t i = 0; i < loom_conf_key_count(); i++) {
        const loom_conf_key_t *k = loom_conf_key_at(i);
        if (k->scope != scope || !k->def || k->alias_of || conf_pvs_get(pv, k))
            continue;
        if (loom_conf_key_parse(k, k->def, where, record, err) < 0)
            return loom_err_prefix(err, "default of %s", k->name);
    }
    return 0;
}

static void conf_free_fields(loom_conf_scope_t scope, void *record)
{
    for (size_t i = 0; i < loom_conf_key_count(); i++) {
        const loom_conf_key_t *k = loom_conf_key_at(i);
        if (k->scope == scope && !k->alias_of)
            loom_conf_key_free(k, record);
    }
}

static void conf_nodecfg_free(loom_conf_nodecfg_t *n)
{
    if (!n)
        return;
    conf_free_fields(LOOM_CS_NODE, n);
    loom_gres_list_free(&n->gres);
    free(n);
}

static void conf_part_free(loom_conf_part_t *p)
{
    conf_free_fields(LOOM_CS_PART, p);
    free(p->node_idx);
}

static int conf_add_node(conf_state_t *st, const conf_pvs_t *pv, const char *name,
                         loom_conf_src_t src, loom_err_t *err)
{
    loom_conf_nodecfg_t *n = loom_xcalloc(1, sizeof(*n));
    n->src = src;
    char where[96];
    snprintf(where, sizeof(where), "node %s", name);
    int rc = conf_fill(LOOM_CS_NODE, n, pv, where, err);
    if (rc == 0)
        rc = loom_conf_nodes_add(st->c, n, err);
    if (rc < 0) {
        conf_nodecfg_free(n);
        return rc;
    }
    loom_conf_t *c = st->c;
    c->nodecfgs = loom_xreallocarray(c->nodecfgs, c->n_nodecfgs + 1, sizeof(*c->nodecfgs));
    c->nodecfgs[c->n_nodecfgs++] = n;
    return 0;
}

static int conf_add_part(conf_state_t *st, const conf_pvs_t *pv, const char *name,
                         loom_conf_src_t src, loom_err_t *err)
{
    loom_conf_t *c = st->c;
    for (size_t i = 0; i < c->n_parts; i++)
        if (strcmp(c->parts[i].name, name) == 0)
            return loom_errf(err, -LOOM_ECONFIG, "%s:%d: duplicate partition '%s' (first at %s:%d)",
                             src.file, src.lineno, name, c->parts[i].src.file,
                             c->parts[i].src.lineno);
    loom_conf_part_t p = {0};
    p.src = src;
    char where[96];
    snprintf(where, sizeof(where), "partition %s", name);
    int rc = conf_fill(LOOM_CS_PART, &p, pv, where, err);
    if (rc < 0) {
        conf_part_free(&p);
        return rc;
    }
    p.preempt_mode_set = conf_pvs_get(pv, loom_conf_key_find(LOOM_CS_PART, "PreemptMode"));
    c->parts = loom_xreallocarray(c->parts, c->n_parts + 1, sizeof(*c->parts));
    c->parts[c->n_parts++] = p;
    return 0;
}

static int conf_add_other(conf_state_t *st, loom_conf_scope_t scope, const conf_pvs_t *pv,
                          const char *name, loom_conf_src_t src, loom_err_t *err)
{
    loom_conf_t *c = st->c;
    char where[96];
    snprintf(where, sizeof(where), "%s", name);
    if (scope == LOOM_CS_DOWN) {
        loom_conf_down_t d = {.src = src};
        int rc = conf_fill(scope, &d, pv, where, err);
        if (rc < 0) {
            conf_free_fields(scope, &d);
            return rc;
        }
        c->downs = loom_xreallocarray(c->downs, c->n_downs + 1, sizeof(*c->downs));
        c->downs[c->n_downs++] = d;
    } else if (scope == LOOM_CS_NODESET) {
        loom_conf_nodeset_t s = {.src = src};
        int rc = conf_fill(scope, &s, pv, where, err);
        if (rc < 0) {
            conf_free_fields(scope, &s);
            return rc;
        }
        c->nodesets = loom_xreallocarray(c->nodesets, c->n_nodesets + 1, sizeof(*c->nodesets));
        c->nodesets[c->n_nodesets++] = s;
    } else {
        int rc = conf_fill(scope, NULL, pv, where, err);
        if (rc < 0)
            return rc;
        loom_strv_add(&c->frontends, name);
    }
    return 0;
}

static loom_conf_scope_t conf_record_scope(const char *starter, const char **what)
{
    static const struct {
        const char *name;
        loom_conf_scope_t scope;
    } starters[] = {
        {"NodeName", LOOM_CS_NODE},         {"PartitionName", LOOM_CS_PART},
        {"DownNodes", LOOM_CS_DOWN},        {"NodeSet", LOOM_CS_NODESET},
        {"FrontendName", LOOM_CS_FRONTEND},
    };
    for (size_t i = 0; i < sizeof(starters) / sizeof(starters[0]); i++) {
        if (strcasecmp(starters[i].name, starter) == 0) {
            *what = starters[i].name;
            return starters[i].scope;
        }
    }
    *what = "FrontendName";
    return LOOM_CS_FRONTEND;
}

/* Resolve the line's pairs in scope into pv (on top of what pv holds). */
static int conf_record_pairs(loom_conf_scope_t scope, const char *what, const loom_conf_line_t *ln,
                             conf_pvs_t *pv, loom_err_t *err)
{
    loom_conf_src_t src = {ln->file, ln->lineno};
    for (size_t i = 1; i < ln->n; i++) {
        const loom_conf_key_t *k = loom_conf_key_find(scope, ln->pairs[i].key);
        if (!k)
            return conf_unknown_key(scope, what, ln, ln->pairs[i].key, err);
        if (k->type == LOOM_CT_RECORD)
            return loom_errf(err, -LOOM_ECONFIG,
                             "%s:%d: %s= may appear only once, first on its line", ln->file,
                             ln->lineno, k->name);
        conf_pvs_set(pv, k, ln->pairs[i].value, src);
    }
    return 0;
}

static int conf_record(conf_state_t *st, const loom_conf_line_t *ln, loom_err_t *err)
{
    const char *what;
    loom_conf_scope_t scope = conf_record_scope(ln->pairs[0].key, &what);
    const char *name = ln->pairs[0].value;
    loom_conf_src_t src = {ln->file, ln->lineno};
    if (!*name)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: %s= needs a value", ln->file, ln->lineno,
                         what);
    conf_pvs_t *defaults = scope == LOOM_CS_NODE   ? &st->defaults[0]
                           : scope == LOOM_CS_PART ? &st->defaults[1]
                                                   : NULL;
    if (defaults && strcasecmp(name, "DEFAULT") == 0) {
        conf_pvs_t tmp = {0};
        int rc = conf_record_pairs(scope, what, ln, &tmp, err);
        for (size_t i = 0; rc == 0 && i < tmp.n; i++) {
            rc = loom_conf_key_parse(
                tmp.v[i].key, tmp.v[i].value,
                scope == LOOM_CS_NODE ? "NodeName=DEFAULT" : "PartitionName=DEFAULT", NULL, err);
            if (rc < 0)
                loom_err_prefix(err, "%s:%d", ln->file, ln->lineno);
            else
                conf_pvs_set(defaults, tmp.v[i].key, tmp.v[i].value, tmp.v[i].src);
        }
        conf_pvs_free(&tmp);
        return rc;
    }
    conf_pvs_t pv = {0};
    if (defaults)
        for (size_t i = 0; i < defaults->n; i++)
            conf_pvs_set(&pv, defaults->v[i].key, defaults->v[i].value, defaults->v[i].src);
    conf_pvs_set(&pv, loom_conf_key_find(scope, what), name, src);
    int rc = conf_record_pairs(scope, what, ln, &pv, err);
    if (rc == 0 && scope == LOOM_CS_NODE)
        rc = conf_add_node(st, &pv, name, src, err);
    else if (rc == 0 && scope == LOOM_CS_PART)
        rc = conf_add_part(st, &pv, name, src, err);
    else if (rc == 0)
        rc = conf_add_other(st, scope, &pv, name, src, err);
    conf_pvs_free(&pv);
    return rc;
}

/* ---- Include ------------------------------------------------------------- */

static int conf_parse_file(conf_state_t *st, const char *path, const loom_conf_line_t *from,
                           loom_err_t *err);

/* The include path: "%c" replaced by the cluster name, relative to dir of from. */
static int conf_include_path(conf_state_t *st, const loom_conf_line_t *ln, loom_sbuf_t *out,
                             loom_err_t *err)
{
    const char *v = ln->pairs[0].value;
    if (v[0] != '/') {
        const char *slash = strrchr(ln->file, '/');
        if (slash)
            loom_sbuf_addn(out, ln->file, (size_t)(slash - ln->file + 1));
    }
    for (const char *p = v; *p; p++) {
        if (p[0] == '%' && p[1] == 'c') {
            if (!st->c->cluster_name)
                return loom_errf(err, -LOOM_ECONFIG,
                                 "%s:%d: Include uses %%c before ClusterName is set", ln->file,
                                 ln->lineno);
            loom_sbuf_add(out, st->c->cluster_name);
            p++;
        } else {
            loom_sbuf_addc(out, *p);
        }
    }
    return 0;
}

static int conf_include(conf_state_t *st, const loom_conf_line_t *ln, loom_err_t *err)
{
    if (!st->allow_include)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: Include is not allowed here", ln->file,
                         ln->lineno);
    if (st->depth >= LOOM_CONF_MAX_INCLUDE_DEPTH)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: Include nested more than %d deep", ln->file,
                         ln->lineno, LOOM_CONF_MAX_INCLUDE_DEPTH);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    int rc = conf_include_path(st, ln, &path, err);
    if (rc == 0 && !strpbrk(loom_sbuf_str(&path), "*?[")) {
        rc = conf_parse_file(st, loom_sbuf_str(&path), ln, err);
    } else if (rc == 0) {
        glob_t g;
        int grc = glob(loom_sbuf_str(&path), 0, NULL, &g);
        if (grc == GLOB_NOMATCH)
            conf_warn(st->c, (loom_conf_src_t){ln->file, ln->lineno},
                      "Include '%s' matches no file", ln->pairs[0].value);
        else if (grc != 0)
            rc = loom_errf(err, -LOOM_ECONFIG, "%s:%d: cannot expand Include '%s'", ln->file,
                           ln->lineno, ln->pairs[0].value);
        for (size_t i = 0; grc == 0 && rc == 0 && i < g.gl_pathc; i++)
            rc = conf_parse_file(st, g.gl_pathv[i], ln, err);
        if (grc == 0)
            globfree(&g);
    }
    loom_sbuf_free(&path);
    return rc;
}

/* ---- lines and files ----------------------------------------------------- */

static int conf_line(void *ctx, const loom_conf_line_t *ln, loom_err_t *err)
{
    conf_state_t *st = ctx;
    if (ln->flags & LOOM_CONFLEX_INCLUDE)
        return conf_include(st, ln, err);
    const loom_conf_key_t *k = loom_conf_key_find(LOOM_CS_GLOBAL, ln->pairs[0].key);
    if (k && k->type == LOOM_CT_RECORD)
        return conf_record(st, ln, err);
    for (size_t i = 0; i < ln->n; i++) {
        int rc = conf_global(st, ln, &ln->pairs[i], err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int conf_parse_text(conf_state_t *st, const char *name, const char *text, size_t len,
                           loom_err_t *err)
{
    const char *fname = conf_file_name(st->c, name);
    st->depth++;
    int rc = loom_conflex_buffer(fname, text, len, conf_line, st, err);
    st->depth--;
    return rc;
}

/* Read and parse one file; errors before its first line carry the location
 * of the Include line (from), when there is one. */
static int conf_parse_file(conf_state_t *st, const char *path, const loom_conf_line_t *from,
                           loom_err_t *err)
{
    char real[PATH_MAX];
    char *text = NULL;
    size_t len = 0;
    int rc = 0;
    if (!realpath(path, real))
        rc = loom_errf(err, -errno, "cannot open %s: %s", path, strerror(errno));
    else if (loom_strv_find(&st->stack, real) >= 0)
        rc = loom_errf(err, -LOOM_ECONFIG, "Include loop: %s is already being read", path);
    else
        rc = loom_conflex_read_file(path, LOOM_CONF_MAX_FILE_BYTES, &text, &len, err);
    if (rc < 0)
        return from ? loom_err_prefix(err, "%s:%d", from->file, from->lineno) : rc;
    loom_strv_add(&st->stack, real);
    rc = conf_parse_text(st, path, text, len, err);
    free(st->stack.v[--st->stack.n]);
    st->stack.v[st->stack.n] = NULL;
    free(text);
    return rc;
}

/* ---- whole-file checks --------------------------------------------------- */

static const loom_conf_val_t *conf_val(const loom_conf_t *c, const char *key)
{
    const loom_conf_key_t *k = loom_conf_key_find(LOOM_CS_GLOBAL, key);
    return k ? &c->vals[loom_conf_key_index(k)] : NULL;
}

static loom_conf_src_t conf_src_of(const loom_conf_t *c, const char *key)
{
    const loom_conf_val_t *v = conf_val(c, key);
    if (v && v->text)
        return v->src;
    return (loom_conf_src_t){c->path, 0};
}

static int conf_errat(loom_err_t *err, loom_conf_src_t src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int conf_errat(loom_err_t *err, loom_conf_src_t src, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (src.lineno > 0)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: %s", src.file, src.lineno, msg);
    return loom_errf(err, -LOOM_ECONFIG, "%s: %s", src.file, msg);
}

static int conf_apply_defaults(loom_conf_t *c, loom_err_t *err)
{
    for (size_t i = 0; i < loom_conf_key_count(); i++) {
        const loom_conf_key_t *k = loom_conf_key_at(i);
        if (k->scope != LOOM_CS_GLOBAL || !k->def || k->alias_of || c->vals[i].text)
            continue;
        if (loom_conf_key_parse(k, k->def, NULL, c, err) < 0)
            return loom_err_prefix(err, "default of %s", k->name);
    }
    if (!c->vals[loom_conf_key_index(loom_conf_key_find(LOOM_CS_GLOBAL, "SelectTypeParameters"))]
             .text &&
        strcmp(c->select_type, "select/linear") != 0)
        c->select_type_parameters = LOOM_CR_CORE | LOOM_CR_MEMORY;
    unsigned *e = &c->accounting_storage_enforce;
    if (*e & LOOM_ENFORCE_SAFE)
        *e |= LOOM_ENFORCE_LIMITS;
    if (*e & (LOOM_ENFORCE_LIMITS | LOOM_ENFORCE_QOS | LOOM_ENFORCE_WCKEYS))
        *e |= LOOM_ENFORCE_ASSOCS;
    if (*e & LOOM_ENFORCE_NOJOBS)
        *e |= LOOM_ENFORCE_NOSTEPS;
    return 0;
}

static int conf_check_cluster(loom_conf_t *c, loom_err_t *err)
{
    loom_conf_src_t src = conf_src_of(c, "ClusterName");
    if (!c->cluster_name)
        return conf_errat(err, src, "ClusterName is required");
    if (strlen(c->cluster_name) > LOOM_CONF_CLUSTER_NAME_MAX)
        return conf_errat(err, src, "ClusterName '%s' is longer than %d characters",
                          c->cluster_name, LOOM_CONF_CLUSTER_NAME_MAX);
    return 0;
}

/* Slurm folds ClusterName to lower case; done as it is read, so that an
 * Include's %c already sees the final name. */
static void conf_fold_cluster(loom_conf_t *c, loom_conf_src_t src)
{
    bool upper = false;
    for (char *p = c->cluster_name; p && *p; p++) {
        upper |= isupper((unsigned char)*p) != 0;
        *p = (char)tolower((unsigned char)*p);
    }
    if (upper)
        conf_warn(c, src, "ClusterName converted to lower case: '%s'", c->cluster_name);
}

static void conf_add_host(loom_conf_t *c, const char *name, const char *addr)
{
    c->ctld_hosts = loom_xreallocarray(c->ctld_hosts, c->n_ctld_hosts + 1, sizeof(*c->ctld_hosts));
    c->ctld_hosts[c->n_ctld_hosts].name = loom_xstrdup(name);
    c->ctld_hosts[c->n_ctld_hosts++].addr = loom_xstrdup(addr ? addr : name);
}

/* SlurmctldHost, or the legacy ControlMachine/ControlAddr/BackupController/BackupAddr. */
static int conf_check_ctld(loom_conf_t *c, loom_err_t *err)
{
    const char *cm = conf_val(c, "ControlMachine")->text;
    const char *bc = conf_val(c, "BackupController")->text;
    if (c->n_ctld_hosts > 0 && (cm || bc))
        return conf_errat(err, conf_src_of(c, cm ? "ControlMachine" : "BackupController"),
                          "SlurmctldHost and the legacy %s are both set; keep SlurmctldHost",
                          cm ? "ControlMachine" : "BackupController");
    if (c->n_ctld_hosts == 0 && bc && !cm)
        return conf_errat(err, conf_src_of(c, "BackupController"),
                          "BackupController is set but ControlMachine is not");
    if (cm) {
        conf_add_host(c, cm, conf_val(c, "ControlAddr")->text);
        if (bc)
            conf_add_host(c, bc, conf_val(c, "BackupAddr")->text);
    }
    if (c->n_ctld_hosts == 0)
        return conf_errat(err, (loom_conf_src_t){c->path, 0}, "SlurmctldHost is required");
    return 0;
}

static int conf_check_values(loom_conf_t *c, loom_err_t *err)
{
    if (c->first_job_id > c->max_job_id)
        return conf_errat(err, conf_src_of(c, "FirstJobId"),
                          "FirstJobId %lld is larger than MaxJobId %lld",
                          (long long)c->first_job_id, (long long)c->max_job_id);
    if (c->def_mem_per_cpu > 0 && conf_val(c, "DefMemPerNode")->text)
        return conf_errat(err, conf_src_of(c, "DefMemPerNode"),
                          "DefMemPerCPU and DefMemPerNode are mutually exclusive");
    if (c->max_mem_per_cpu > 0 && conf_val(c, "MaxMemPerNode")->text)
        return conf_errat(err, conf_src_of(c, "MaxMemPerNode"),
                          "MaxMemPerCPU and MaxMemPerNode are mutually exclusive");
    for (size_t i = 0; i < c->n_parts; i++) {
        const loom_conf_part_t *p = &c->parts[i];
        if (p->def_mem_per_cpu > 0 && p->def_mem_per_node != 0)
            return conf_errat(err, p->src,
                              "partition %s: DefMemPerCPU and DefMemPerNode are mutually "
                              "exclusive",
                              p->name);
        if (p->max_mem_per_cpu > 0 && p->max_mem_per_node != 0)
            return conf_errat(err, p->src,
                              "partition %s: MaxMemPerCPU and MaxMemPerNode are mutually "
                              "exclusive",
                              p->name);
    }
    return 0;
}

static int conf_finish(loom_conf_t *c, loom_err_t *err)
{
    int rc = conf_apply_defaults(c, err);
    if (rc == 0)
        rc = conf_check_cluster(c, err);
    if (rc == 0)
        rc = conf_check_ctld(c, err);
    if (rc == 0)
        rc = conf_check_values(c, err);
    if (rc == 0)
        rc = loom_conf_nodes_finish(c, err);
    return rc;
}

/* ---- entry points -------------------------------------------------------- */

static loom_conf_t *conf_new(const char *name)
{
    loom_conf_t *c = loom_xcalloc(1, sizeof(*c));
    c->path = loom_xstrdup(name);
    c->vals = loom_xcalloc(loom_conf_key_count(), sizeof(*c->vals));
    conf_init_fields(LOOM_CS_GLOBAL, c);
    return c;
}

static int conf_load(const char *name, const char *text, size_t len, loom_conf_t **out,
                     loom_err_t *err)
{
    conf_state_t st = {0};
    st.c = conf_new(name);
    st.allow_include = text == NULL;
    int rc =
        text ? conf_parse_text(&st, name, text, len, err) : conf_parse_file(&st, name, NULL, err);
    if (rc == 0)
        rc = conf_finish(st.c, err);
    conf_pvs_free(&st.defaults[0]);
    conf_pvs_free(&st.defaults[1]);
    loom_strv_free(&st.stack);
    if (rc < 0) {
        loom_conf_destroy(st.c);
        return rc;
    }
    *out = st.c;
    return 0;
}

int loom_conf_load(const char *path, loom_conf_t **out, loom_err_t *err)
{
    return conf_load(path, NULL, 0, out, err);
}

int loom_conf_load_buffer(const char *name, const char *text, size_t len, loom_conf_t **out,
                          loom_err_t *err)
{
    return conf_load(name, text ? text : "", text ? len : 0, out, err);
}

void loom_conf_destroy(loom_conf_t *c)
{
    if (!c)
        return;
    conf_free_fields(LOOM_CS_GLOBAL, c);
    for (size_t i = 0; c->vals && i < loom_conf_key_count(); i++)
        free(c->vals[i].text);
    free(c->vals);
    for (size_t i = 0; i < c->n_ctld_hosts; i++) {
        free(c->ctld_hosts[i].name);
        free(c->ctld_hosts[i].addr);
    }
    free(c->ctld_hosts);
    for (size_t i = 0; i < c->n_nodecfgs; i++)
        conf_nodecfg_free(c->nodecfgs[i]);
    free(c->nodecfgs);
    for (size_t i = 0; i < c->n_nodes; i++) {
        free(c->nodes[i].name);
        free(c->nodes[i].hostname);
        free(c->nodes[i].addr);
    }
    free(c->nodes);
    free(c->node_by_name);
    for (size_t i = 0; i < c->n_parts; i++)
        conf_part_free(&c->parts[i]);
    free(c->parts);
    for (size_t i = 0; i < c->n_downs; i++)
        conf_free_fields(LOOM_CS_DOWN, &c->downs[i]);
    free(c->downs);
    for (size_t i = 0; i < c->n_nodesets; i++)
        conf_free_fields(LOOM_CS_NODESET, &c->nodesets[i]);
    free(c->nodesets);
    loom_strv_free(&c->frontends);
    loom_strv_free(&c->warnings);
    loom_strv_free(&c->files);
    free(c->path);
    free(c);
}

/* ---- queries and printing ------------------------------------------------ */

const char *loom_conf_get(const loom_conf_t *c, const char *key)
{
    const loom_conf_key_t *k = loom_conf_key_find(LOOM_CS_GLOBAL, key);
    if (!k || k->type == LOOM_CT_RECORD)
        return NULL;
    const char *t = c->vals[loom_conf_key_index(k)].text;
    return t ? t : k->def;
}

bool loom_conf_is_set(const loom_conf_t *c, const char *key)
{
    const loom_conf_val_t *v = conf_val(c, key);
    return v && v->text;
}

long loom_conf_node_index(const loom_conf_t *c, const char *name)
{
    size_t lo = 0, hi = c->node_by_name ? c->n_nodes : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t idx = c->node_by_name[mid];
        int r = strcmp(name, c->nodes[idx].name);
        if (r == 0)
            return (long)idx;
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

const loom_conf_node_t *loom_conf_find_node(const loom_conf_t *c, const char *name)
{
    long i = loom_conf_node_index(c, name);
    return i < 0 ? NULL : &c->nodes[i];
}

const loom_conf_part_t *loom_conf_find_part(const loom_conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_parts; i++)
        if (strcmp(c->parts[i].name, name) == 0)
            return &c->parts[i];
    return NULL;
}

const loom_conf_part_t *loom_conf_default_part(const loom_conf_t *c)
{
    for (size_t i = 0; i < c->n_parts; i++)
        if (c->parts[i].is_default)
            return &c->parts[i];
    return NULL;
}

static void conf_print_line(loom_sbuf_t *out, const char *key, const char *value)
{
    loom_sbuf_addf(out, "%-23s = %s\n", key, value);
}

/* Lines printed in place of a key (or besides it); true when handled. */
static bool conf_print_special(const loom_conf_t *c, const loom_conf_key_t *k, loom_sbuf_t *out)
{
    loom_sbuf_t v = LOOM_SBUF_INIT;
    bool done = true;
    if (strcmp(k->name, "SlurmctldHost") == 0) {
        for (size_t i = 0; i < c->n_ctld_hosts; i++) {
            char key[48];
            snprintf(key, sizeof(key), "SlurmctldHost[%zu]", i);
            loom_sbuf_reset(&v);
            loom_sbuf_add(&v, c->ctld_hosts[i].name);
            if (strcmp(c->ctld_hosts[i].name, c->ctld_hosts[i].addr) != 0)
                loom_sbuf_addf(&v, "(%s)", c->ctld_hosts[i].addr);
            conf_print_line(out, key, loom_sbuf_str(&v));
        }
    } else if (strcmp(k->name, "SlurmctldPort") == 0) {
        loom_sbuf_addf(&v, "%lld", (long long)c->slurmctld_port);
        if (c->slurmctld_port_count > 1)
            loom_sbuf_addf(&v, "-%lld",
                           (long long)(c->slurmctld_port + c->slurmctld_port_count - 1));
        conf_print_line(out, k->name, loom_sbuf_str(&v));
    } else if (strcmp(k->name, "JobFileAppend") == 0) {
        /* 22.05 prints the GPU defaults as one JobDefaults line, just before. */
        if (c->def_cpu_per_gpu > 0)
            loom_sbuf_addf(&v, "DefCpuPerGPU=%lld", (long long)c->def_cpu_per_gpu);
        if (c->def_mem_per_gpu > 0)
            loom_sbuf_addf(&v, "%sDefMemPerGPU=%lld", v.len ? "," : "",
                           (long long)c->def_mem_per_gpu);
        conf_print_line(out, "JobDefaults", v.len ? loom_sbuf_str(&v) : "(null)");
        done = false;
    } else if (strcmp(k->name, "DefMemPerNode") == 0 || strcmp(k->name, "MaxMemPerNode") == 0) {
        done = k->name[0] == 'D' ? c->def_mem_per_cpu > 0 : c->max_mem_per_cpu > 0;
    } else if (strcmp(k->name, "UsePAM") == 0) {
        conf_print_line(out, "UsePam", c->use_pam ? "Yes" : "No");
    } else {
        done = false;
    }
    loom_sbuf_free(&v);
    return done;
}

static bool conf_print_skip(const loom_conf_t *c, const loom_conf_key_t *k, size_t i)
{
    if (k->scope != LOOM_CS_GLOBAL || (k->flags & LOOM_CKF_NOPRINT) || k->alias_of)
        return true;
    if ((k->flags & LOOM_CKF_MF) && strcmp(c->priority_type, "priority/multifactor") != 0)
        return true;
    if (k->flags & LOOM_CKF_IFSET) {
        if (k->type == LOOM_CT_FLAGS)
            return !c->vals[i].text && strcmp(c->select_type, "select/linear") == 0;
        return !c->vals[i].text;
    }
    return false;
}

void loom_conf_print(const loom_conf_t *c, loom_sbuf_t *out)
{
    loom_sbuf_t v = LOOM_SBUF_INIT;
    for (size_t i = 0; i < loom_conf_key_count(); i++) {
        const loom_conf_key_t *k = loom_conf_key_at(i);
        if (conf_print_skip(c, k, i) || conf_print_special(c, k, out))
            continue;
        loom_sbuf_reset(&v);
        const char *text = c->vals[i].text ? c->vals[i].text : k->def;
        loom_conf_key_format(k, c, text, &v);
        conf_print_line(out, k->name, loom_sbuf_str(&v));
    }
    loom_sbuf_free(&v);
}

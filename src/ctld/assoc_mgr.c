/*
 * assoc_mgr.c - the controller's association tree: building it from
 * loomdbd's lists, lookups, TRES limit strings; then the manager that
 * polls loomdbd on the thread pool and keeps the cache. See assoc_mgr.h.
 */
#include "ctld/assoc_mgr.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/rpcclient.h"
#include "common/sbuf.h"
#include "common/xalloc.h"
#include "ctld/sched_driver.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- TRES ----------------------------------------------------------------- */

static int64_t assoc_tres_unit(char u, bool mem)
{
    switch (toupper((unsigned char)u)) {
    case 'K':
        return mem ? 0 : 1024; /* KiB of memory round to 0 MiB below */
    case 'M':
        return mem ? 1 : 1024 * 1024;
    case 'G':
        return mem ? 1024 : 1024LL * 1024 * 1024;
    case 'T':
        return mem ? 1024 * 1024 : 1024LL * 1024 * 1024 * 1024;
    case 'P':
        return mem ? 1024LL * 1024 * 1024 : 1024LL * 1024 * 1024 * 1024 * 1024;
    default:
        return -1;
    }
}

static int assoc_tres_item(const char *item, ctld_tres_t *t, loom_err_t *err)
{
    const char *eq = strchr(item, '=');
    size_t nlen = eq ? (size_t)(eq - item) : 0;
    if (!eq || nlen == 0 || nlen >= CTLD_TRES_NAME_MAX)
        return loom_errf(err, -LOOM_EPARSE, "bad TRES item '%s'", item);
    char name[CTLD_TRES_NAME_MAX];
    memcpy(name, item, nlen);
    name[nlen] = '\0';
    errno = 0;
    char *end = NULL;
    long long v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || v < -1)
        return loom_errf(err, -LOOM_EPARSE, "bad TRES count in '%s'", item);
    bool mem = strcmp(name, "mem") == 0;
    if (*end) {
        int64_t mul = end[1] ? -1 : assoc_tres_unit(*end, mem);
        if (mul < 0)
            return loom_errf(err, -LOOM_EPARSE, "bad TRES unit in '%s'", item);
        if (mem && toupper((unsigned char)*end) == 'K')
            v = (v + 1023) / 1024;
        else if (v > 0 && v > INT64_MAX / mul)
            return loom_errf(err, -LOOM_EPARSE, "TRES count too large in '%s'", item);
        else
            v *= mul;
    }
    if (v >= 0)
        ctld_tres_add(t, name, v);
    return 0;
}

int ctld_tres_parse(const char *s, ctld_tres_t *out, loom_err_t *err)
{
    ctld_tres_t t = {0};
    loom_strv_t items = {0};
    loom_strv_split(&items, s ? s : "", ",");
    int rc = 0;
    for (size_t i = 0; i < items.n && rc == 0; i++)
        if (*items.v[i])
            rc = assoc_tres_item(items.v[i], &t, err);
    loom_strv_free(&items);
    if (rc == 0)
        *out = t;
    return rc;
}

int64_t ctld_tres_get(const ctld_tres_t *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->it[i].name, name) == 0)
            return t->it[i].v;
    return -1;
}

void ctld_tres_add(ctld_tres_t *t, const char *name, int64_t n)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->it[i].name, name) == 0) {
            t->it[i].v += n;
            return;
        }
    if (t->n == CTLD_TRES_MAX || strlen(name) >= CTLD_TRES_NAME_MAX)
        return;
    snprintf(t->it[t->n].name, CTLD_TRES_NAME_MAX, "%s", name);
    t->it[t->n++].v = n;
}

/* ---- record fields -------------------------------------------------------------- */

static const char *assoc_str(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static char *assoc_dup(const json_t *r, const char *key)
{
    return loom_xstrdup(assoc_str(r, key));
}

/* An integer limit; -1 when absent or null. */
static int64_t assoc_int(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);
    if (json_is_integer(v))
        return json_integer_value(v) < -1 ? -1 : json_integer_value(v);
    if (json_is_string(v) && *json_string_value(v))
        return strtoll(json_string_value(v), NULL, 10);
    return -1;
}

static void assoc_tres(const json_t *r, const char *key, ctld_tres_t *out)
{
    loom_err_t err = {0};
    if (ctld_tres_parse(assoc_str(r, key), out, &err) < 0)
        *out = (ctld_tres_t){0}; /* loomdbd stores canonical text; ignore the rest */
}

/* A list column: a JSON array or a comma string. */
static void assoc_list(const json_t *r, const char *key, loom_strv_t *out)
{
    const json_t *v = json_object_get(r, key);
    if (json_is_string(v)) {
        loom_strv_split(out, json_string_value(v), ",");
        return;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        if (json_is_string(e))
            loom_strv_add(out, json_string_value(e));
    }
}

static void assoc_key(loom_sbuf_t *sb, const char *acct, const char *user, const char *part)
{
    loom_sbuf_reset(sb);
    loom_sbuf_addf(sb, "%s\037%s\037%s", acct, user ? user : "", part ? part : "");
}

/* ---- building ------------------------------------------------------------------- */

static ctld_assoc_t *assoc_from_rec(const json_t *r)
{
    ctld_assoc_t *a = loom_xcalloc(1, sizeof(*a));
    a->id = (uint32_t)(assoc_int(r, "id") < 0 ? 0 : assoc_int(r, "id"));
    a->account = assoc_dup(r, "account");
    a->user = assoc_dup(r, "user_name");
    a->partition = assoc_dup(r, "partition");
    a->parent_account = assoc_dup(r, "parent_account");
    a->shares = assoc_int(r, "shares") < 0 ? 1 : assoc_int(r, "shares");
    a->priority = assoc_int(r, "priority");
    a->grp_jobs = assoc_int(r, "grp_jobs");
    a->grp_submit_jobs = assoc_int(r, "grp_submit_jobs");
    a->grp_wall = assoc_int(r, "grp_wall");
    a->max_jobs = assoc_int(r, "max_jobs");
    a->max_submit_jobs = assoc_int(r, "max_submit_jobs");
    a->max_wall = assoc_int(r, "max_wall");
    assoc_tres(r, "grp_tres", &a->grp_tres);
    assoc_tres(r, "max_tres", &a->max_tres);
    assoc_tres(r, "max_tres_per_node", &a->max_tres_per_node);
    assoc_tres(r, "grp_tres_mins", &a->grp_tres_mins);
    assoc_tres(r, "grp_tres_run_mins", &a->grp_tres_run_mins);
    assoc_tres(r, "max_tres_mins", &a->max_tres_mins);
    assoc_list(r, "qos", &a->qos);
    const char *dq = assoc_str(r, "default_qos");
    a->default_qos = *dq ? loom_xstrdup(dq) : NULL;
    return a;
}

static void assoc_free_one(ctld_assoc_t *a)
{
    free(a->account);
    free(a->user);
    free(a->partition);
    free(a->parent_account);
    free(a->children);
    loom_strv_free(&a->qos);
    free(a->default_qos);
    free(a);
}

static unsigned assoc_qos_flags(const char *s)
{
    static const struct {
        const char *name;
        unsigned bit;
    } words[] = {
        {"DenyOnLimit", CTLD_QOS_DENY_ON_LIMIT},
        {"NoReserve", CTLD_QOS_NO_RESERVE},
        {"PartitionMinNodes", CTLD_QOS_PART_MIN_NODE},
        {"PartitionMaxNodes", CTLD_QOS_PART_MAX_NODE},
        {"PartitionTimeLimit", CTLD_QOS_PART_TIME_LIMIT},
        {"OverPartQOS", CTLD_QOS_OVER_PART_QOS},
    };
    loom_strv_t sv = {0};
    loom_strv_split(&sv, s, ",");
    unsigned f = 0;
    for (size_t i = 0; i < sv.n; i++)
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
            if (strcasecmp(sv.v[i], words[k].name) == 0)
                f |= words[k].bit;
    loom_strv_free(&sv);
    return f;
}

static void assoc_qos_from_rec(const json_t *r, uint32_t idx, ctld_qos_t *q)
{
    q->idx = idx;
    q->id = (uint32_t)(assoc_int(r, "id") < 0 ? 0 : assoc_int(r, "id"));
    q->name = assoc_dup(r, "name");
    q->priority = assoc_int(r, "priority") < 0 ? 0 : assoc_int(r, "priority");
    q->flags = assoc_qos_flags(assoc_str(r, "flags"));
    const char *uf = assoc_str(r, "usage_factor");
    q->usage_factor = *uf ? strtod(uf, NULL) : 1.0;
    q->grp_jobs = assoc_int(r, "grp_jobs");
    q->grp_submit_jobs = assoc_int(r, "grp_submit_jobs");
    q->grp_wall = assoc_int(r, "grp_wall");
    q->max_wall = assoc_int(r, "max_wall");
    q->max_jobs_pu = assoc_int(r, "max_jobs_pu");
    q->max_submit_pu = assoc_int(r, "max_submit_pu");
    q->max_jobs_pa = assoc_int(r, "max_jobs_pa");
    q->max_submit_pa = assoc_int(r, "max_submit_pa");
    assoc_tres(r, "grp_tres", &q->grp_tres);
    assoc_tres(r, "max_tres", &q->max_tres);
    assoc_tres(r, "max_tres_per_node", &q->max_tres_per_node);
    assoc_tres(r, "max_tres_pu", &q->max_tres_pu);
    assoc_tres(r, "max_tres_pa", &q->max_tres_pa);
    assoc_tres(r, "min_tres", &q->min_tres);
    assoc_tres(r, "grp_tres_mins", &q->grp_tres_mins);
    assoc_tres(r, "grp_tres_run_mins", &q->grp_tres_run_mins);
    assoc_tres(r, "max_tres_mins", &q->max_tres_mins);
    assoc_list(r, "preempt", &q->preempt);
}

static int assoc_level(const char *s)
{
    if (strcasecmp(s, "Administrator") == 0 || strcasecmp(s, "Admin") == 0)
        return 2;
    return strcasecmp(s, "Operator") == 0;
}

/* Is a at or above p? (a loop in the parent accounts) */
static bool assoc_above(const ctld_assoc_t *p, const ctld_assoc_t *a)
{
    for (int depth = 0; p && depth < 256; depth++, p = p->parent)
        if (p == a)
            return true;
    return p != NULL; /* deeper than any sane tree: treat as a loop */
}

static void assoc_add_child(ctld_assoc_t *p, ctld_assoc_t *a)
{
    p->children = loom_xreallocarray(p->children, p->nchildren + 1, sizeof(*p->children));
    p->children[p->nchildren++] = a;
    a->parent = p;
}

/* Parent links: a user's (or partition's) association hangs under its
 * account's, an account's under its parent account's. */
static void assoc_link(ctld_assoc_tree_t *t)
{
    for (size_t i = 0; i < t->nassocs; i++) {
        ctld_assoc_t *a = t->assocs[i];
        const ctld_assoc_t *p = NULL;
        if (*a->user || *a->partition)
            p = ctld_assoc_find_account(t, a->account);
        else if (strcmp(a->account, "root") != 0)
            p = ctld_assoc_find_account(t, a->parent_account);
        if (p && !assoc_above(p, a))
            assoc_add_child(t->assocs[p->idx], a);
        if (!*a->user && !*a->partition && strcmp(a->account, "root") == 0)
            t->root = a;
        if (a->max_submit_jobs >= 0 || a->grp_submit_jobs >= 0)
            t->submit_limits = true;
        if (a->grp_jobs >= 0 || a->max_jobs >= 0 || a->max_wall >= 0 || a->grp_tres.n ||
            a->max_tres.n || a->max_tres_per_node.n || a->grp_wall >= 0 || a->grp_tres_mins.n ||
            a->grp_tres_run_mins.n || a->max_tres_mins.n)
            t->run_limits = true;
        if (a->grp_wall >= 0 || a->grp_tres_mins.n)
            t->usage_limits = true;
    }
}

static void assoc_build_assocs(ctld_assoc_tree_t *t, const json_t *list, const char *cluster)
{
    t->assocs = loom_xcalloc(json_array_size(list) + 1, sizeof(*t->assocs));
    t->index = json_object();
    loom_sbuf_t key = LOOM_SBUF_INIT;
    size_t i;
    const json_t *r;
    json_array_foreach(list, i, r)
    {
        if (cluster && *assoc_str(r, "cluster") && strcmp(assoc_str(r, "cluster"), cluster) != 0)
            continue;
        ctld_assoc_t *a = assoc_from_rec(r);
        assoc_key(&key, a->account, a->user, a->partition);
        if (json_object_get(t->index, loom_sbuf_str(&key))) {
            assoc_free_one(a); /* duplicate key: keep the first */
            continue;
        }
        a->idx = (uint32_t)t->nassocs;
        t->assocs[t->nassocs++] = a;
        json_object_set_new(t->index, loom_sbuf_str(&key), json_integer(a->idx));
    }
    loom_sbuf_free(&key);
    assoc_link(t);
}

static void assoc_build_rest(ctld_assoc_tree_t *t, const json_t *users, const json_t *qos)
{
    t->users = loom_xcalloc(json_array_size(users) + 1, sizeof(*t->users));
    size_t i;
    const json_t *r;
    json_array_foreach(users, i, r)
    {
        ctld_assoc_user_t *u = &t->users[t->nusers++];
        u->name = assoc_dup(r, "name");
        u->default_account = assoc_dup(r, "default_account");
        u->admin_level = assoc_level(assoc_str(r, "admin_level"));
    }
    t->qos = loom_xcalloc(json_array_size(qos) + 1, sizeof(*t->qos));
    json_array_foreach(qos, i, r)
    {
        ctld_qos_t *q = &t->qos[t->nqos];
        assoc_qos_from_rec(r, (uint32_t)t->nqos++, q);
        if (q->priority > t->max_qos_priority)
            t->max_qos_priority = q->priority;
        if (q->max_submit_pu >= 0 || q->grp_submit_jobs >= 0 || q->max_submit_pa >= 0)
            t->submit_limits = true;
        if (q->grp_jobs >= 0 || q->max_jobs_pu >= 0 || q->max_jobs_pa >= 0 || q->max_wall >= 0 ||
            q->grp_tres.n || q->max_tres.n || q->max_tres_pu.n || q->max_tres_pa.n ||
            q->max_tres_per_node.n || q->grp_wall >= 0 || q->grp_tres_mins.n ||
            q->grp_tres_run_mins.n || q->max_tres_mins.n)
            t->run_limits = true;
        if (q->grp_wall >= 0 || q->grp_tres_mins.n)
            t->usage_limits = true;
    }
}

int ctld_assoc_tree_build(const json_t *lists, const char *cluster, ctld_assoc_tree_t **out,
                          loom_err_t *err)
{
    const json_t *assocs = json_object_get(lists, "assocs");
    const json_t *users = json_object_get(lists, "users");
    const json_t *qos = json_object_get(lists, "qos");
    if (!json_is_array(assocs) || !json_is_array(users) || !json_is_array(qos))
        return loom_errf(err, -LOOM_EPROTO, "association lists need assocs, users and qos");
    ctld_assoc_tree_t *t = loom_xcalloc(1, sizeof(*t));
    assoc_build_assocs(t, assocs, cluster && *cluster ? cluster : NULL);
    assoc_build_rest(t, users, qos);
    *out = t;
    return 0;
}

void ctld_assoc_tree_free(ctld_assoc_tree_t *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nassocs; i++)
        assoc_free_one(t->assocs[i]);
    free(t->assocs);
    for (size_t i = 0; i < t->nusers; i++) {
        free(t->users[i].name);
        free(t->users[i].default_account);
    }
    free(t->users);
    for (size_t i = 0; i < t->nqos; i++) {
        free(t->qos[i].name);
        loom_strv_free(&t->qos[i].preempt);
    }
    free(t->qos);
    json_decref(t->index);
    free(t);
}

/* ---- lookups ---------------------------------------------------------------------- */

static const ctld_assoc_t *assoc_get(const ctld_assoc_tree_t *t, const char *acct, const char *user,
                                     const char *part)
{
    loom_sbuf_t key = LOOM_SBUF_INIT;
    assoc_key(&key, acct, user, part);
    const json_t *v = json_object_get(t->index, loom_sbuf_str(&key));
    loom_sbuf_free(&key);
    return v ? t->assocs[json_integer_value(v)] : NULL;
}

const ctld_assoc_t *ctld_assoc_find_account(const ctld_assoc_tree_t *t, const char *account)
{
    return t && account && *account ? assoc_get(t, account, "", "") : NULL;
}

const ctld_assoc_t *ctld_assoc_find(const ctld_assoc_tree_t *t, const char *user,
                                    const char *account, const char *partition)
{
    if (!t || !user || !*user)
        return NULL;
    if (!account || !*account) {
        const ctld_assoc_user_t *u = ctld_assoc_user(t, user);
        account = u ? u->default_account : NULL;
        if (!account || !*account)
            return NULL;
    }
    const ctld_assoc_t *a = NULL;
    if (partition && *partition)
        a = assoc_get(t, account, user, partition);
    return a ? a : assoc_get(t, account, user, "");
}

const ctld_assoc_user_t *ctld_assoc_user(const ctld_assoc_tree_t *t, const char *name)
{
    for (size_t i = 0; t && name && i < t->nusers; i++)
        if (strcmp(t->users[i].name, name) == 0)
            return &t->users[i];
    return NULL;
}

const ctld_qos_t *ctld_assoc_qos(const ctld_assoc_tree_t *t, const char *name)
{
    for (size_t i = 0; t && name && i < t->nqos; i++)
        if (strcasecmp(t->qos[i].name, name) == 0)
            return &t->qos[i];
    return NULL;
}

bool ctld_assoc_qos_allowed(const ctld_assoc_t *a, const char *qos)
{
    for (size_t i = 0; a && qos && i < a->qos.n; i++)
        if (strcasecmp(a->qos.v[i], qos) == 0)
            return true;
    return false;
}

/* ---- the manager: polling loomdbd, the cache ------------------------------------------ */

#define ASSOC_RPC_TIMEOUT_MS 5000
#define ASSOC_WAIT_MS        1000 /* one wait; short, so that a stop is never held up */

typedef struct assoc_poll assoc_poll_t;
typedef struct assoc_wait assoc_wait_t;

struct ctld_assoc_mgr {
    ctld_t *c;
    ctld_assoc_tree_t *tree;
    char *text; /* the tree's lists as compact sorted JSON */
    char *gen;  /* loomdbd's "gen" of those lists (NULL: unknown) */
    uint64_t generation;
    uv_timer_t timer;
    bool timer_on, stopped, down;
    assoc_poll_t *poll;   /* in flight */
    assoc_wait_t *wait;   /* dbd.assoc.wait in flight */
    bool again;           /* loomdbd changed during a poll: poll once more after it */
    loom_rpc_t *wait_rpc; /* the wait's connection: only the wait's worker, or free */
    /* Where loomdbd is (copied from the configuration). */
    char *state_dir, *conf_dir, *host, *cluster, *cache_path;
    int port;
};

struct assoc_poll {
    uv_work_t req;
    ctld_assoc_mgr_t *m;
    char *prev;              /* the text in use (for the worker to compare) */
    char *prev_gen, *gen;    /* loomdbd's generation: the known one, the one read */
    bool unchanged;          /* loomdbd said nothing changed since prev_gen */
    char *text;              /* new text when it differs */
    ctld_assoc_tree_t *tree; /* built from it */
    const loom_key_t *key;   /* immutable, borrowed */
    int rc;
    loom_err_t err;
};

/* One dbd.assoc.wait (at most ASSOC_WAIT_MS) on the thread pool. */
struct assoc_wait {
    uv_work_t req;
    ctld_assoc_mgr_t *m;
    char *if_gen;
    const loom_key_t *key;
    bool changed;
    int rc;
    loom_err_t err;
};

bool ctld_assoc_enabled(const ctld_t *c)
{
    const char *t = c->conf ? c->conf->accounting_storage_type : NULL;
    return t && strstr(t, "slurmdbd") != NULL;
}

const ctld_assoc_tree_t *ctld_assoc_tree(const ctld_t *c)
{
    return c->assoc ? c->assoc->tree : NULL;
}

uint64_t ctld_assoc_generation(const ctld_t *c)
{
    return c->assoc ? c->assoc->generation : 0;
}

static bool assoc_is_socket(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The SQLite StorageLoc's directory from slurmdbd.conf in conf_dir, into out. */
static void assoc_dbdconf_sock(const char *conf_dir, loom_sbuf_t *out)
{
    loom_sbuf_t path = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s/slurmdbd.conf", conf_dir);
    FILE *fp = fopen(loom_sbuf_str(&path), "r");
    loom_sbuf_free(&path);
    if (!fp)
        return;
    char line[4096];
    while (fgets(line, sizeof(line), fp)) {
        if (strncasecmp(line, "StorageLoc=", 11) != 0 || line[11] != '/')
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        char *slash = strrchr(line + 11, '/');
        if (slash)
            *slash = '\0';
        loom_sbuf_reset(out);
        loom_sbuf_addf(out, "%s/loomdbd.sock", line[11] ? line + 11 : "/");
    }
    fclose(fp);
}

/* loomdbd's address as the commands find it (messages.md §6); *tcp set. */
static void assoc_address(const ctld_assoc_mgr_t *m, loom_sbuf_t *addr, bool *tcp)
{
    const char *env = getenv("LOOM_DBD_ADDR");
    if (env && *env) {
        loom_sbuf_add(addr, env);
        *tcp = strncmp(env, "unix:", 5) != 0;
        return;
    }
    loom_sbuf_t sock = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sock, "%s/loomdbd.sock", m->state_dir);
    if (!assoc_is_socket(loom_sbuf_str(&sock)))
        assoc_dbdconf_sock(m->conf_dir, &sock);
    *tcp = !assoc_is_socket(loom_sbuf_str(&sock));
    if (*tcp)
        loom_sbuf_addf(addr, "%s:%d", m->host, m->port);
    else
        loom_sbuf_addf(addr, "unix:%s", loom_sbuf_str(&sock));
    loom_sbuf_free(&sock);
}

static int assoc_call(loom_rpc_t *rpc, const char *type, assoc_poll_t *p, const char *key,
                      json_t *into, loom_err_t *err)
{
    json_t *req = loom_msg_new(type, 0);
    const char *cluster = p->m->cluster;
    bool first = strcmp(key, "assocs") == 0;
    if (cluster && *cluster && first)
        json_object_set_new(req, "where", json_pack("{s:[s]}", "clusters", cluster));
    if (first && p->prev_gen && p->prev)
        json_object_set_new(req, "if_gen", json_string(p->prev_gen));
    json_t *rep = NULL;
    int rc = loom_rpc_call(rpc, req, &rep, err);
    json_decref(req);
    if (rc < 0)
        return rc;
    const char *msg = NULL;
    rc = loom_msg_rc(rep, &msg);
    const char *gen = json_string_value(json_object_get(rep, "gen"));
    if (first && gen && !p->gen)
        p->gen = loom_xstrdup(gen);
    if (rc < 0)
        loom_errf(err, rc, "%s: %s", type, msg ? msg : "failed");
    else if (first && json_is_true(json_object_get(rep, "unchanged")))
        p->unchanged = true;
    else if (!json_is_array(json_object_get(rep, key)))
        rc = loom_errf(err, -LOOM_EPROTO, "%s: no %s in the reply", type, key);
    else
        json_object_set(into, key, json_object_get(rep, key));
    json_decref(rep);
    return rc;
}

/* The three lists from loomdbd, or NULL with err (or when unchanged). */
static json_t *assoc_fetch(assoc_poll_t *p, loom_err_t *err)
{
    const ctld_assoc_mgr_t *m = p->m;
    const loom_key_t *key = p->key;
    loom_sbuf_t addr = LOOM_SBUF_INIT;
    bool tcp = false;
    assoc_address(m, &addr, &tcp);
    loom_rpc_t *rpc =
        loom_rpc_connect(loom_sbuf_str(&addr), tcp ? key : NULL, ASSOC_RPC_TIMEOUT_MS, err);
    loom_sbuf_free(&addr);
    if (!rpc)
        return NULL;
    json_t *lists = json_object();
    int rc = assoc_call(rpc, "dbd.assoc.list", p, "assocs", lists, err);
    if (rc == 0 && !p->unchanged)
        rc = assoc_call(rpc, "dbd.user.list", p, "users", lists, err);
    if (rc == 0 && !p->unchanged)
        rc = assoc_call(rpc, "dbd.qos.list", p, "qos", lists, err);
    loom_rpc_close(rpc);
    if (rc < 0 || p->unchanged) {
        json_decref(lists);
        return NULL;
    }
    return lists;
}

/* Write text to path durably (tmp, fsync, rename). */
static int assoc_write_cache(const char *path, const char *text, loom_err_t *err)
{
    loom_sbuf_t tmp = LOOM_SBUF_INIT;
    loom_sbuf_addf(&tmp, "%s.new", path);
    int fd = open(loom_sbuf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : 0;
    size_t len = strlen(text), off = 0;
    while (rc == 0 && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno != EINTR)
            rc = -errno;
        else if (w > 0)
            off += (size_t)w;
    }
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rename(loom_sbuf_str(&tmp), path) < 0)
        rc = -errno;
    if (rc < 0)
        loom_errf(err, rc, "%s: %s", path, strerror(-rc));
    loom_sbuf_free(&tmp);
    return rc;
}

static void assoc_poll_work(uv_work_t *req)
{
    assoc_poll_t *p = req->data;
    json_t *lists = assoc_fetch(p, &p->err);
    if (!lists) {
        p->rc = p->unchanged ? 0 : p->err.code ? p->err.code : -LOOM_ECONNECT;
        return;
    }
    char *text = json_dumps(lists, JSON_COMPACT | JSON_SORT_KEYS);
    if (text && (!p->prev || strcmp(text, p->prev) != 0)) {
        p->rc = ctld_assoc_tree_build(lists, p->m->cluster, &p->tree, &p->err);
        if (p->rc == 0 && assoc_write_cache(p->m->cache_path, text, &p->err) < 0)
            loom_error("association cache not written: %s", p->err.msg);
        p->text = text;
        text = NULL;
    }
    free(text);
    json_decref(lists);
}

/* Install a new tree (its text is taken). */
static void assoc_install(ctld_assoc_mgr_t *m, ctld_assoc_tree_t *tree, char *text)
{
    ctld_assoc_tree_free(m->tree);
    free(m->text);
    m->tree = tree;
    m->text = text;
    m->generation++;
    loom_info("associations: %zu, users: %zu, QOS: %zu (generation %llu)", tree->nassocs,
              tree->nusers, tree->nqos, (unsigned long long)m->generation);
}

/* ---- dbd.assoc.wait: loomdbd says at once when something changed ---------------- */

static void assoc_wait_start(ctld_assoc_mgr_t *m);

static void assoc_wait_work(uv_work_t *req)
{
    assoc_wait_t *w = req->data;
    ctld_assoc_mgr_t *m = w->m;
    if (!m->wait_rpc) {
        loom_sbuf_t addr = LOOM_SBUF_INIT;
        bool tcp = false;
        assoc_address(m, &addr, &tcp);
        m->wait_rpc = loom_rpc_connect(loom_sbuf_str(&addr), w->key, ASSOC_RPC_TIMEOUT_MS, &w->err);
        loom_sbuf_free(&addr);
        if (!m->wait_rpc) {
            w->rc = -LOOM_ECONNECT;
            return;
        }
        loom_rpc_set_sender(m->wait_rpc, "ctld");
    }
    json_t *rq = loom_msg_new("dbd.assoc.wait", 0), *rep = NULL;
    json_object_set_new(rq, "if_gen", json_string(w->if_gen));
    json_object_set_new(rq, "timeout_ms", json_integer(ASSOC_WAIT_MS));
    w->rc = loom_rpc_call(m->wait_rpc, rq, &rep, &w->err);
    json_decref(rq);
    if (w->rc == 0) {
        const char *msg = NULL;
        w->rc = loom_msg_rc(rep, &msg);
        w->changed = json_is_true(json_object_get(rep, "changed"));
    }
    json_decref(rep);
    if (w->rc < 0) { /* the next successful poll starts again, on a new connection */
        loom_rpc_close(m->wait_rpc);
        m->wait_rpc = NULL;
    }
}

static void assoc_wait_done(uv_work_t *req, int status)
{
    assoc_wait_t *w = req->data;
    ctld_assoc_mgr_t *m = w->m;
    m->wait = NULL;
    if (!m->stopped && status == 0 && w->rc == 0) {
        if (!w->changed)
            assoc_wait_start(m);
        else if (m->poll)
            m->again = true;
        else
            ctld_assoc_refresh(m->c);
    }
    free(w->if_gen);
    free(w);
}

/* Keep one wait open on the generation in use (after a successful poll). */
static void assoc_wait_start(ctld_assoc_mgr_t *m)
{
    if (m->wait || m->poll || m->stopped || !m->gen)
        return;
    assoc_wait_t *w = loom_xcalloc(1, sizeof(*w));
    w->m = m;
    w->key = m->c->key;
    w->if_gen = loom_xstrdup(m->gen);
    w->req.data = w;
    m->wait = w;
    if (uv_queue_work(m->c->loop, &w->req, assoc_wait_work, assoc_wait_done) != 0) {
        m->wait = NULL;
        free(w->if_gen);
        free(w);
    }
}

static void assoc_poll_done(uv_work_t *req, int status)
{
    assoc_poll_t *p = req->data;
    ctld_assoc_mgr_t *m = p->m;
    m->poll = NULL;
    if (status == 0 && p->rc == 0 && p->tree && !m->stopped) {
        assoc_install(m, p->tree, p->text);
        p->tree = NULL;
        p->text = NULL;
        ctld_sched_trigger(m->c, true); /* limits may have changed */
    }
    if (p->rc < 0 && !m->down)
        loom_error("loomdbd: %s (%s)", p->err.msg,
                   m->tree ? "enforcing the associations last known" : "no associations yet");
    else if (p->rc == 0 && m->down)
        loom_info("loomdbd answers again");
    m->down = p->rc < 0;
    if (p->rc == 0 && !m->stopped) { /* the generation the tree in use matches */
        free(m->gen);
        m->gen = p->gen;
        p->gen = NULL;
    }
    free(p->gen);
    free(p->prev_gen);
    ctld_assoc_tree_free(p->tree);
    free(p->text);
    free(p->prev);
    bool ok = p->rc == 0;
    free(p);
    if (m->again && !m->stopped) {
        m->again = false;
        ctld_assoc_refresh(m->c);
    } else if (ok) {
        assoc_wait_start(m);
    }
}

void ctld_assoc_refresh(ctld_t *c)
{
    ctld_assoc_mgr_t *m = c->assoc;
    if (!m || m->poll || m->stopped)
        return;
    assoc_poll_t *p = loom_xcalloc(1, sizeof(*p));
    p->m = m;
    p->key = c->key;
    p->prev = m->text ? loom_xstrdup(m->text) : NULL;
    p->prev_gen = m->gen ? loom_xstrdup(m->gen) : NULL;
    p->req.data = p;
    m->poll = p;
    if (uv_queue_work(c->loop, &p->req, assoc_poll_work, assoc_poll_done) != 0) {
        m->poll = NULL;
        free(p->prev);
        free(p->prev_gen);
        free(p);
    }
}

static void assoc_timer_cb(uv_timer_t *t)
{
    ctld_assoc_refresh(t->data);
}

/* The cache from the last run, when there is one. */
static void assoc_read_cache(ctld_assoc_mgr_t *m)
{
    json_error_t jerr;
    json_t *lists = json_load_file(m->cache_path, 0, &jerr);
    if (!lists)
        return;
    ctld_assoc_tree_t *tree = NULL;
    loom_err_t err = {0};
    if (ctld_assoc_tree_build(lists, m->cluster, &tree, &err) == 0) {
        loom_info("associations from %s", m->cache_path);
        assoc_install(m, tree, json_dumps(lists, JSON_COMPACT | JSON_SORT_KEYS));
    } else {
        loom_error("%s: %s", m->cache_path, err.msg);
    }
    json_decref(lists);
}

static char *assoc_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return loom_xstrdup(".");
    return slash == path ? loom_xstrdup("/") : loom_xstrndup(path, (size_t)(slash - path));
}

void ctld_assoc_start(ctld_t *c)
{
    if (c->assoc || !ctld_assoc_enabled(c))
        return;
    ctld_assoc_mgr_t *m = loom_xcalloc(1, sizeof(*m));
    const loom_conf_t *cf = c->conf;
    m->c = c;
    m->state_dir = loom_xstrdup(cf->state_save_location ? cf->state_save_location : "/tmp");
    m->conf_dir = assoc_dir_of(c->conf_path);
    m->host = loom_xstrdup(cf->accounting_storage_host ? cf->accounting_storage_host : "localhost");
    m->port = cf->accounting_storage_port > 0 ? (int)cf->accounting_storage_port : 6819;
    m->cluster = cf->cluster_name ? loom_xstrdup(cf->cluster_name) : NULL;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s/assoc_cache.json", m->state_dir);
    m->cache_path = loom_sbuf_detach(&sb);
    c->assoc = m;
    assoc_read_cache(m);
    uv_timer_init(c->loop, &m->timer);
    m->timer.data = c;
    m->timer_on = true;
    uv_timer_start(&m->timer, assoc_timer_cb, 0, CTLD_ASSOC_POLL_MS);
}

void ctld_assoc_stop(ctld_t *c)
{
    ctld_assoc_mgr_t *m = c->assoc;
    if (!m || m->stopped)
        return;
    m->stopped = true;
    if (m->timer_on)
        uv_close((uv_handle_t *)&m->timer, NULL);
}

void ctld_assoc_free(ctld_t *c)
{
    ctld_assoc_mgr_t *m = c->assoc;
    if (!m)
        return;
    loom_rpc_close(m->wait_rpc);
    ctld_assoc_tree_free(m->tree);
    free(m->text);
    free(m->gen);
    free(m->state_dir);
    free(m->conf_dir);
    free(m->host);
    free(m->cluster);
    free(m->cache_path);
    free(m);
    c->assoc = NULL;
}

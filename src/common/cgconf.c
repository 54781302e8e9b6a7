/*
 * cgconf.c - cgroup.conf. See cgconf.h.
 */
#include "common/cgconf.h"

#include "common/conf_keys.h"
#include "common/conflex.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CGCONF_MAX_BYTES (1024 * 1024)

void loom_cgconf_init(loom_cgconf_t *c)
{
    *c = (loom_cgconf_t){.allowed_ram = 100, .max_ram_percent = 100, .min_ram_mib = 30};
    c->mountpoint = loom_xstrdup("/sys/fs/cgroup");
    c->plugin = loom_xstrdup("autodetect");
}

void loom_cgconf_free(loom_cgconf_t *c)
{
    free(c->mountpoint);
    free(c->plugin);
    c->mountpoint = c->plugin = NULL;
}

/* ---- keys ----------------------------------------------------------------------- */

typedef enum { CG_IGNORED, CG_PATH, CG_PLUGIN, CG_BOOL, CG_PERCENT, CG_MIB } cgconf_kind_t;

typedef struct cgconf_key {
    const char *name;
    cgconf_kind_t kind;
    size_t off;
} cgconf_key_t;

#define K(n, k, m)                                                                                 \
    {                                                                                              \
        n, k, offsetof(loom_cgconf_t, m)                                                           \
    }
#define KI(n)                                                                                      \
    {                                                                                              \
        n, CG_IGNORED, 0                                                                           \
    }
static const cgconf_key_t cgconf_keys[] = {
    K("CgroupMountpoint", CG_PATH, mountpoint),
    K("CgroupPlugin", CG_PLUGIN, plugin),
    K("ConstrainCores", CG_BOOL, constrain_cores),
    K("ConstrainRAMSpace", CG_BOOL, constrain_ram),
    K("ConstrainSwapSpace", CG_BOOL, constrain_swap),
    K("ConstrainDevices", CG_BOOL, constrain_devices),
    K("AllowedRAMSpace", CG_PERCENT, allowed_ram),
    K("AllowedSwapSpace", CG_PERCENT, allowed_swap),
    K("MaxRAMPercent", CG_PERCENT, max_ram_percent),
    K("MinRAMSpace", CG_MIB, min_ram_mib),
    KI("CgroupAutomount"),
    KI("CgroupReleaseAgentDir"),
    KI("ConstrainKmemSpace"),
    KI("AllowedKmemSpace"),
    KI("MaxKmemPercent"),
    KI("MinKmemSpace"),
    KI("MaxSwapPercent"),
    KI("MemorySwappiness"),
    KI("TaskAffinity"),
    KI("IgnoreSystemd"),
    KI("IgnoreSystemdOnFailure"),
    KI("EnableControllers"),
};
#undef K
#undef KI

static const cgconf_key_t *cgconf_key(const char *name)
{
    for (size_t i = 0; i < sizeof(cgconf_keys) / sizeof(cgconf_keys[0]); i++)
        if (strcasecmp(cgconf_keys[i].name, name) == 0)
            return &cgconf_keys[i];
    return NULL;
}

static int cgconf_percent(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(d) || d < 0 || d > 1e6)
        return -LOOM_EPARSE;
    *out = d;
    return 0;
}

static int cgconf_mib(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *v == '-' || *end || errno || x > (1ull << 40))
        return -LOOM_EPARSE;
    *out = x;
    return 0;
}

static int cgconf_string(cgconf_kind_t kind, const char *v, char **out)
{
    json_t *utf8 = json_string(v); /* NULL: not UTF-8, which the supervisors' spec cannot carry */
    json_decref(utf8);
    if (!utf8 || (kind == CG_PATH && v[0] != '/'))
        return -LOOM_EPARSE;
    if (kind == CG_PLUGIN && strcasecmp(v, "autodetect") != 0 && strcasecmp(v, "cgroup/v1") != 0 &&
        strcasecmp(v, "cgroup/v2") != 0)
        return -LOOM_EPARSE;
    free(*out);
    *out = loom_xstrdup(v);
    return 0;
}

static int cgconf_set(loom_cgconf_t *c, const cgconf_key_t *k, const char *v)
{
    char *field = (char *)c + k->off;
    switch (k->kind) {
    case CG_IGNORED:
        return 0;
    case CG_BOOL:
        return loom_conf_parse_bool(v, (bool *)(void *)field);
    case CG_PERCENT:
        return cgconf_percent(v, (double *)(void *)field);
    case CG_MIB:
        return cgconf_mib(v, (uint64_t *)(void *)field);
    default:
        return cgconf_string(k->kind, v, (char **)(void *)field);
    }
}

static const char *cgconf_expect(cgconf_kind_t kind)
{
    static const char *const what[] = {
        "",          "an absolute UTF-8 path", "autodetect, cgroup/v1 or cgroup/v2",
        "yes or no", "a percentage",           "a size in megabytes"};
    return what[kind];
}

static int cgconf_line(void *ctx, const loom_conf_line_t *line, loom_err_t *err)
{
    loom_cgconf_t *c = ctx;
    for (size_t i = 0; i < line->n; i++) {
        const loom_conf_pair_t *p = &line->pairs[i];
        const cgconf_key_t *k = cgconf_key(p->key);
        if (!k)
            return loom_errf(err, -LOOM_EPARSE, "%s:%d: unknown cgroup.conf key '%s'", line->file,
                             line->lineno, p->key);
        if (cgconf_set(c, k, p->value) < 0)
            return loom_errf(err, -LOOM_EPARSE, "%s:%d: %s=%s: expected %s", line->file,
                             line->lineno, k->name, p->value, cgconf_expect(k->kind));
    }
    return 0;
}

int loom_cgconf_parse(const char *name, const char *text, size_t len, loom_cgconf_t *c,
                      loom_err_t *err)
{
    return loom_conflex_buffer(name, text, len, cgconf_line, c, err);
}

int loom_cgconf_load(const char *path, loom_cgconf_t *c, loom_err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = loom_conflex_read_file(path, CGCONF_MAX_BYTES, &text, &len, err);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0)
        rc = loom_cgconf_parse(path, text, len, c, err);
    free(text);
    return rc;
}

bool loom_cgconf_task_cgroup(const char *task_plugin)
{
    for (const char *p = task_plugin; p && (p = strstr(p, "task/cgroup")); p++) {
        char after = p[strlen("task/cgroup")];
        if ((p == task_plugin || p[-1] == ',') && (after == '\0' || after == ','))
            return true;
    }
    return false;
}

/* ---- to and from the supervisors ------------------------------------------------ */

json_t *loom_cgconf_to_json(const loom_cgconf_t *c)
{
    return json_pack("{s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:f, s:f, s:f, s:I}", "mountpoint",
                     c->mountpoint, "plugin", c->plugin, "task_cgroup", c->task_cgroup, "track",
                     c->track, "cores", c->constrain_cores, "ram", c->constrain_ram, "swap",
                     c->constrain_swap, "devices", c->constrain_devices, "allowed_ram",
                     c->allowed_ram, "allowed_swap", c->allowed_swap, "max_ram_percent",
                     c->max_ram_percent, "min_ram_mib", (json_int_t)c->min_ram_mib);
}

static void cgconf_json_str(const json_t *j, const char *key, char **out)
{
    const char *v = json_string_value(json_object_get(j, key));
    if (v) {
        free(*out);
        *out = loom_xstrdup(v);
    }
}

void loom_cgconf_from_json(const json_t *j, loom_cgconf_t *c)
{
    if (!json_is_object(j))
        return;
    cgconf_json_str(j, "mountpoint", &c->mountpoint);
    cgconf_json_str(j, "plugin", &c->plugin);
    c->task_cgroup = json_is_true(json_object_get(j, "task_cgroup"));
    c->track = json_is_true(json_object_get(j, "track"));
    c->constrain_cores = json_is_true(json_object_get(j, "cores"));
    c->constrain_ram = json_is_true(json_object_get(j, "ram"));
    c->constrain_swap = json_is_true(json_object_get(j, "swap"));
    c->constrain_devices = json_is_true(json_object_get(j, "devices"));
    if (json_is_number(json_object_get(j, "allowed_ram")))
        c->allowed_ram = json_number_value(json_object_get(j, "allowed_ram"));
    if (json_is_number(json_object_get(j, "allowed_swap")))
        c->allowed_swap = json_number_value(json_object_get(j, "allowed_swap"));
    if (json_is_number(json_object_get(j, "max_ram_percent")))
        c->max_ram_percent = json_number_value(json_object_get(j, "max_ram_percent"));
    if (json_is_integer(json_object_get(j, "min_ram_mib")))
        c->min_ram_mib = (uint64_t)json_integer_value(json_object_get(j, "min_ram_mib"));
}

uint64_t loom_cgconf_ram_limit(const loom_cgconf_t *c, uint64_t alloc_mib, uint64_t real_mib)
{
    if (!c->task_cgroup || !c->constrain_ram || !alloc_mib)
        return 0;
    double mib = (double)alloc_mib * c->allowed_ram / 100.0;
    if (real_mib && mib > (double)real_mib * c->max_ram_percent / 100.0)
        mib = (double)real_mib * c->max_ram_percent / 100.0;
    if (mib < (double)c->min_ram_mib)
        mib = (double)c->min_ram_mib;
    return (uint64_t)mib;
}

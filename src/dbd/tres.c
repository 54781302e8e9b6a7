/*
 * tres.c - canonical TRES limit strings. See tres.h.
 */
#include "dbd/tres.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const tres_builtin[] = {
    "cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", NULL,
};

typedef struct {
    char *name;
    int64_t count; /* MiB for mem; -1: remove */
} tres_item_t;

typedef struct {
    tres_item_t v[64];
    int n;
} tres_list_t;

static void tres_list_free(tres_list_t *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i].name);
    l->n = 0;
}

static bool tres_known(const char *name, const loom_strv_t *known)
{
    for (const char *const *b = tres_builtin; *b; b++)
        if (strcmp(*b, name) == 0)
            return true;
    if (known)
        return loom_strv_find(known, name) >= 0;
    static const char *const kinds[] = {"gres/", "license/", "bb/", "fs/", "ic/", NULL};
    for (const char *const *k = kinds; *k; k++)
        if (strncmp(name, *k, strlen(*k)) == 0 && name[strlen(*k)])
            return true;
    return false;
}

/* "256G" -> MiB; plain numbers are MiB. */
static int tres_mem(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < -1)
        return -1;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0':
        break;
    case 'K':
        shift = -10;
        break;
    case 'M':
        break;
    case 'G':
        shift = 10;
        break;
    case 'T':
        shift = 20;
        break;
    case 'P':
        shift = 30;
        break;
    default:
        return -1;
    }
    if (*end && end[1] && !(toupper((unsigned char)end[1]) == 'B' && !end[2]))
        return -1;
    if (v == -1)
        *out = -1;
    else
        *out = shift >= 0 ? (int64_t)v << shift : (int64_t)v >> -shift;
    return 0;
}

static int tres_count(const char *name, const char *val, int64_t *out)
{
    if (strcmp(name, "mem") == 0)
        return tres_mem(val, out);
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (errno || end == val || *end || v < -1)
        return -1;
    *out = v;
    return 0;
}

static void tres_set(tres_list_t *l, const char *name, int64_t count)
{
    for (int i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].name, name) == 0) {
            l->v[i].count = count;
            return;
        }
    }
    l->v[l->n].name = loom_xstrdup(name);
    l->v[l->n++].count = count;
}

static int tres_parse(const char *s, const loom_strv_t *known, tres_list_t *l, loom_err_t *err)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, s ? s : "", ",");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < items.n; i++) {
        char *eq = strchr(items.v[i], '=');
        int64_t count;
        if (!eq) {
            rc = loom_errf(err, -LOOM_EPARSE, "Invalid TRES '%s' (name=count)", items.v[i]);
            break;
        }
        *eq = '\0';
        const char *name = items.v[i];
        for (char *c = items.v[i]; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        if (!tres_known(name, known))
            rc = loom_errf(err, -LOOM_EPARSE, "slurmdb_format_tres_str: no TRES known by type %s",
                           name);
        else if (tres_count(name, eq + 1, &count) < 0)
            rc = loom_errf(err, -LOOM_EPARSE, "Invalid TRES count '%s' for %s", eq + 1, name);
        else if (l->n >= 64)
            rc = loom_errf(err, -LOOM_ETOOBIG, "too many TRES in '%s'", s);
        else
            tres_set(l, name, count);
    }
    loom_strv_free(&items);
    return rc;
}

static int tres_cmp(const void *a, const void *b)
{
    return strcmp(((const tres_item_t *)a)->name, ((const tres_item_t *)b)->name);
}

static void tres_fmt_mem(int64_t mib, loom_sbuf_t *out)
{
    static const char units[] = "MGTP";
    int u = 0;
    while (mib >= 1024 && mib % 1024 == 0 && u < 3) {
        mib /= 1024;
        u++;
    }
    loom_sbuf_addf(out, "%" PRId64 "%c", mib, units[u]);
}

int loom_tres_merge(const char *old, const char *change, const loom_strv_t *known, char **out,
                    loom_err_t *err)
{
    tres_list_t l = {.n = 0};
    int rc = tres_parse(old, NULL, &l, err);
    if (rc == 0)
        rc = tres_parse(change, known, &l, err);
    if (rc < 0) {
        tres_list_free(&l);
        return rc;
    }
    qsort(l.v, (size_t)l.n, sizeof(l.v[0]), tres_cmp);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (int i = 0; i < l.n; i++) {
        if (l.v[i].count < 0)
            continue;
        loom_sbuf_addf(&sb, "%s%s=", sb.len ? "," : "", l.v[i].name);
        if (strcmp(l.v[i].name, "mem") == 0)
            tres_fmt_mem(l.v[i].count, &sb);
        else
            loom_sbuf_addf(&sb, "%" PRId64, l.v[i].count);
    }
    tres_list_free(&l);
    *out = loom_sbuf_detach(&sb);
    return 0;
}

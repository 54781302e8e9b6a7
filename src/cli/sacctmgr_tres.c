/*
 * sacctmgr_tres.c - `sacctmgr show tres`, and the entities Loom keeps none of
 * (wckey, reservation, resource, federation): their header and no rows, as
 * sacctmgr 22.05.8 prints an empty list.
 *
 * The TRES are slurmdbd's: the built-in eight with their fixed ids, then
 * each AccountingStorageTRES entry that is not one of them (gres/gpu,
 * license/x, ...) from id 1001 in the order slurm.conf lists them.
 */
#include "cli/sacctmgr.h"

#include "common/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    char type[32], name[64];
    int id;
} tres_row_t;

static const char *const tres_builtin[] = {"cpu",     "mem",     "energy", "node",
                                           "billing", "fs/disk", "vmem",   "pages"};

static size_t tres_rows(const loom_conf_t *c, tres_row_t *rows, size_t max)
{
    size_t n = 0;
    loom_strv_t extra = LOOM_STRV_INIT;
    for (size_t i = 0; i < sizeof(tres_builtin) / sizeof(tres_builtin[0]); i++)
        loom_strv_add(&extra, tres_builtin[i]);
    size_t builtin = extra.n;
    loom_strv_t conf = LOOM_STRV_INIT;
    loom_strv_split(&conf, c && c->accounting_storage_tres ? c->accounting_storage_tres : "", ",");
    for (size_t i = 0; i < conf.n; i++)
        if (loom_strv_find(&extra, conf.v[i]) < 0 && strchr(conf.v[i], '/'))
            loom_strv_add(&extra, conf.v[i]);
    for (size_t i = 0; i < extra.n && n < max; i++, n++) {
        const char *slash = strchr(extra.v[i], '/');
        size_t tl = slash ? (size_t)(slash - extra.v[i]) : strlen(extra.v[i]);
        snprintf(rows[n].type, sizeof(rows[n].type), "%.*s", (int)tl, extra.v[i]);
        snprintf(rows[n].name, sizeof(rows[n].name), "%s", slash ? slash + 1 : "");
        rows[n].id = i < builtin ? (int)i + 1 : 1001 + (int)(i - builtin);
    }
    loom_strv_free(&conf);
    loom_strv_free(&extra);
    return n;
}

/* The columns of format=Type,Name,ID (any order, any case). */
static int tres_format(const char *spec, int cols[3], size_t *ncols)
{
    static const char *const names[] = {"Type", "Name", "ID"};
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, spec, ",");
    *ncols = 0;
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0 && *ncols < 3; i++) {
        size_t k = 0;
        while (k < 3 && strcasecmp(v.v[i], names[k]) != 0)
            k++;
        if (k == 3) {
            fprintf(stderr, " Unknown field '%s'\n", v.v[i]);
            rc = -1;
        } else {
            cols[(*ncols)++] = (int)k;
        }
    }
    loom_strv_free(&v);
    return rc;
}

int sam_show_tres(sam_t *s, int argc, char **argv)
{
    static const loom_pf_col_t all[3] = {{"Type", 8}, {"Name", 15}, {"ID", 6}};
    int cols[3] = {0, 1, 2};
    size_t ncols = 3;
    for (int i = 0; i < argc; i++) {
        if (strncasecmp(argv[i], "format=", 7) == 0 && tres_format(argv[i] + 7, cols, &ncols) < 0)
            return 1;
    }
    tres_row_t rows[64];
    size_t n = tres_rows(loom_cli_conf(&s->cli, NULL), rows, 64);
    loom_pf_col_t hdr[3];
    for (size_t k = 0; k < ncols; k++)
        hdr[k] = all[cols[k]];
    loom_pf_header(&s->pf, hdr, ncols, &s->out);
    for (size_t r = 0; r < n; r++) {
        char id[16];
        snprintf(id, sizeof(id), "%d", rows[r].id);
        const char *vals[3] = {rows[r].type, rows[r].name, id};
        for (size_t k = 0; k < ncols; k++)
            loom_pf_cell(&s->pf, vals[cols[k]], hdr[k].width, k + 1 == ncols, cols[k] == 2,
                         &s->out);
        loom_sbuf_addc(&s->out, '\n');
    }
    return 0;
}

int sam_show_none(sam_t *s, const char *what)
{
    static const struct {
        const char *ent;
        loom_pf_col_t cols[6];
        size_t n;
    } lists[] = {
        {"wckey", {{"WCKey", 10}, {"Cluster", 10}, {"User", 10}}, 3},
        {"reservation",
         {{"Cluster", 10},
          {"Name", 15},
          {"TRES", 30},
          {"TimeStart", 19},
          {"TimeEnd", 19},
          {"UnusedWall", 10}},
         6},
        {"resource",
         {{"Name", 10},
          {"Server", 10},
          {"Type", 8},
          {"Count", 6},
          {"% Allocated", 11},
          {"ServerType", 10}},
         6},
        {"federation",
         {{"Federation", 10}, {"Cluster", 10}, {"ID", 2}, {"Features", 20}, {"FedState", 12}},
         5},
    };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        size_t len = strlen(lists[i].ent);
        if (strncasecmp(what, lists[i].ent, len) == 0 &&
            (!what[len] || (what[len] == 's' && !what[len + 1]))) {
            loom_pf_header(&s->pf, lists[i].cols, lists[i].n, &s->out);
            return 0;
        }
    }
    return -1;
}

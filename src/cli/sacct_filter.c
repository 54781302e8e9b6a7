/* sacct_filter.c - sacct's client-side job filters and -T. See sacct_filter.h. */
#include "cli/sacct_filter.h"

#include "cli/cli_format.h"
#include "common/hostlist.h"
#include "common/timefmt.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "min[-max]" of non-negative integers; max INT64_MAX when not given. */
static bool filter_range(const char *s, int64_t r[2])
{
    char *end;
    long long lo = strtoll(s, &end, 10);
    if (end == s || lo < 0)
        return false;
    long long hi = lo;
    if (*end == '-') {
        const char *p = end + 1;
        hi = strtoll(p, &end, 10);
        if (end == p || hi < 0)
            return false;
    }
    r[0] = lo;
    r[1] = hi;
    return *end == '\0';
}

static int filter_groups(sacct_filter_t *f)
{
    loom_strv_t names = LOOM_STRV_INIT;
    loom_strv_split(&names, f->groups, ",");
    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char *end, buf[24];
        long gid = strtol(names.v[i], &end, 10);
        if (*names.v[i] && !*end && gid >= 0) {
            snprintf(buf, sizeof(buf), "%ld", gid);
            loom_strv_add(&f->gids, buf);
            continue;
        }
        struct group *gr = getgrnam(names.v[i]);
        if (!gr) {
            fprintf(stderr, "sacct: error: Invalid group id: %s\n", names.v[i]);
            rc = -1;
        } else {
            snprintf(buf, sizeof(buf), "%u", (unsigned)gr->gr_gid);
            loom_strv_add(&f->gids, buf);
        }
    }
    loom_strv_free(&names);
    return rc;
}

/* Each node of the -N list; a list that does not parse matches nothing. */
static void filter_nodes(sacct_filter_t *f)
{
    loom_hostlist_t *hl = NULL;
    loom_err_t err = {0};
    if (loom_hostlist_parse(f->nodes, &hl, &err) >= 0)
        for (size_t i = 0; i < loom_hostlist_count(hl); i++)
            loom_strv_add(&f->node_names, loom_hostlist_nth(hl, i));
    loom_hostlist_destroy(hl);
}

int sacct_filter_parse(sacct_filter_t *f)
{
    if (f->nnodes && !filter_range(f->nnodes, f->nn)) {
        fprintf(stderr, "sacct: error: Invalid numeric value \"%s\" for requested node range.\n",
                f->nnodes);
        return -1;
    }
    if (f->ncpus && !filter_range(f->ncpus, f->nc)) {
        fprintf(stderr, "sacct: error: Invalid numeric value \"%s\" for requested cpu range.\n",
                f->ncpus);
        return -1;
    }
    f->tl[0] = f->tl[1] = -1;
    if ((f->tl_min && loom_time_parse_mins(f->tl_min, &f->tl[0], NULL) < 0) ||
        (f->tl_max && loom_time_parse_mins(f->tl_max, &f->tl[1], NULL) < 0)) {
        fprintf(stderr, "sacct: fatal: Invalid time limit specification\n");
        return -1;
    }
    if (f->groups && filter_groups(f) < 0)
        return -1;
    if (f->nodes)
        filter_nodes(f);
    if (f->qos)
        loom_strv_split(&f->qos_names, f->qos, ",");
    if (f->wckeys)
        loom_strv_split(&f->wckey_names, f->wckeys, ",");
    return 0;
}

/* Ran on one of the -N nodes. */
static bool filter_ran_on(const sacct_filter_t *f, const char *nodes)
{
    loom_hostlist_t *hl = NULL;
    loom_err_t err = {0};
    bool hit = false;
    if (nodes && *nodes && loom_hostlist_parse(nodes, &hl, &err) >= 0)
        for (size_t i = 0; i < loom_hostlist_count(hl) && !hit; i++)
            hit = loom_strv_find(&f->node_names, loom_hostlist_nth(hl, i)) >= 0;
    loom_hostlist_destroy(hl);
    return hit;
}

static bool filter_in(const int64_t r[2], int64_t v)
{
    return v >= r[0] && v <= r[1];
}

static bool filter_job(const sacct_filter_t *f, const json_t *job)
{
    const char *nodes = loom_js(job, "nodes");
    bool ran = nodes && *nodes && strcmp(nodes, "None assigned") != 0;
    if (f->nodes && !filter_ran_on(f, nodes))
        return false;
    if (f->nnodes && !(ran && filter_in(f->nn, loom_ji(job, "num_nodes", 0))))
        return false;
    if (f->ncpus && !(ran && filter_in(f->nc, loom_ji(job, "num_cpus", 0))))
        return false;
    if (f->qos && loom_strv_find(&f->qos_names, loom_js_or(job, "qos", "normal")) < 0)
        return false;
    if (f->wckeys && loom_strv_find(&f->wckey_names, loom_js_or(job, "wckey", "")) < 0)
        return false;
    if (f->groups) {
        char gid[24];
        snprintf(gid, sizeof(gid), "%lld", (long long)loom_ji(job, "group_id", -1));
        if (loom_strv_find(&f->gids, gid) < 0)
            return false;
    }
    if (f->tl_min) { /* slurmdbd: the limit itself, or the range with a maximum */
        int64_t limit = loom_ji(job, "time_limit", -1);
        if (f->tl_max ? !(limit >= f->tl[0] && limit <= f->tl[1]) : limit != f->tl[0])
            return false;
    }
    return true;
}

/* -T: a start before the window is the window's start, an end after it its end. */
static void filter_truncate(json_t *rec, int64_t start, int64_t end)
{
    int64_t s = loom_ji(rec, "start_time", 0), e = loom_ji(rec, "end_time", 0);
    if (s <= 0)
        return;
    if (start > 0 && s < start)
        json_object_set_new(rec, "start_time", json_integer(start));
    if (end > 0 && e > end)
        json_object_set_new(rec, "end_time", json_integer(end));
}

void sacct_filter_apply(const sacct_filter_t *f, json_t *jobs, int64_t start, int64_t end)
{
    for (size_t i = json_array_size(jobs); i-- > 0;) {
        json_t *job = json_array_get(jobs, i);
        if (!filter_job(f, job)) {
            json_array_remove(jobs, i);
            continue;
        }
        if (!f->truncate)
            continue;
        filter_truncate(job, start, end);
        size_t k;
        json_t *st;
        json_array_foreach(json_object_get(job, "steps"), k, st) filter_truncate(st, start, end);
    }
}

void sacct_filter_free(sacct_filter_t *f)
{
    loom_strv_free(&f->node_names);
    loom_strv_free(&f->qos_names);
    loom_strv_free(&f->gids);
    loom_strv_free(&f->wckey_names);
}

/* part_mgr.c - partition changes by scontrol update. See part_mgr.h. */
#include "ctld/part_mgr.h"

#include "common/conf_keys.h"
#include "common/log.h"
#include "ctld/job_state.h"
#include "ctld/sched_driver.h"

#include <string.h>
#include <strings.h>

static ctld_part_t *part_find(ctld_t *c, const char *name)
{
    for (size_t i = 0; name && i < c->nparts; i++)
        if (strcmp(c->parts[i].cfg->name, name) == 0)
            return &c->parts[i];
    return NULL;
}

/* Every change of the request on a copy of the partition: the first bad one. */
static int part_check(const ctld_part_t *p, const json_t *changes, loom_err_t *err)
{
    if (!json_is_object(changes) || !json_object_size(changes))
        return loom_errf(err, -LOOM_EPROTO, "part.update needs changes");
    loom_conf_part_t scratch = *p->cfg;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)changes, key, v)
    {
        if (!json_is_string(v))
            return loom_errf(err, -LOOM_EPROTO, "part.update: %s is not a string", key);
        int rc = loom_conf_part_change(&scratch, key, json_string_value(v), err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ctld_part_update(ctld_t *c, const json_t *req, loom_err_t *err)
{
    const char *name = json_string_value(json_object_get(req, "name"));
    ctld_part_t *p = part_find(c, name);
    if (!p)
        return loom_errf(err, -LOOM_EINVAL_PARTITION, "%s", loom_strerror(-LOOM_EINVAL_PARTITION));
    const json_t *changes = json_object_get(req, "changes");
    int rc = part_check(p, changes, err);
    if (rc < 0)
        return rc;
    json_t *ev = json_pack("{s:s, s:s, s:O}", "ev", "part.update", "name", name, "changes",
                           (json_t *)changes);
    return ctld_commit(c, ev, err);
}

static void part_apply_changes(ctld_t *c, ctld_part_t *p, const json_t *changes)
{
    if (p->cfg != &p->own) {
        p->own = *p->cfg; /* scalar fields change; the pointers stay slurm.conf's */
        p->cfg = &p->own;
    }
    if (!p->changes)
        p->changes = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)changes, key, v)
    {
        loom_err_t err = {0};
        if (loom_conf_part_change(&p->own, key, json_string_value(v), &err) < 0) {
            loom_error("partition %s: %s=%s: %s", p->own.name, key, json_string_value(v), err.msg);
            continue;
        }
        json_object_set(p->changes, key, v);
    }
    p->state = p->own.state;
    ctld_sched_trigger(c, true);
}

int ctld_part_apply(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    ctld_part_t *p = part_find(c, json_string_value(json_object_get(ev, "name")));
    if (p) /* else a partition removed from slurm.conf since */
        part_apply_changes(c, p, json_object_get(ev, "changes"));
    return 0;
}

json_t *ctld_part_snapshot(const ctld_t *c, size_t i)
{
    const ctld_part_t *p = &c->parts[i];
    if (!p->changes)
        return NULL;
    return json_pack("{s:s, s:O}", "name", p->cfg->name, "changes", p->changes);
}

void ctld_part_restore(ctld_t *c, const json_t *rec)
{
    loom_err_t err = {0};
    ctld_part_apply(c, rec, &err);
}

void ctld_part_free(ctld_part_t *p)
{
    json_decref(p->changes);
    p->changes = NULL;
}

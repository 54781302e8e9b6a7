/* node_attr.c - node attributes changed by scontrol update. See node_attr.h. */
#include "ctld/node_attr.h"

#include "common/xalloc.h"
#include "ctld/job_desc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const loom_strv_t *attr_conf_features(const ctld_node_t *n)
{
    return &n->cfg->cfg->features;
}

const loom_strv_t *ctld_node_features(const ctld_node_t *n)
{
    return n->avail_features ? n->avail_features : attr_conf_features(n);
}

static const loom_strv_t *attr_active(const ctld_node_t *n)
{
    return n->active_features ? n->active_features : ctld_node_features(n);
}

static bool attr_subset(const char *list, const loom_strv_t *of)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    bool ok = true;
    for (size_t i = 0; i < v.n && ok; i++)
        ok = loom_strv_find(of, v.v[i]) >= 0;
    loom_strv_free(&v);
    return ok;
}

int ctld_node_attr_check(const ctld_node_t *n, const json_t *req, json_t *ev, loom_err_t *err)
{
    const json_t *w = json_object_get(req, "weight");
    if (w && (!json_is_integer(w) || json_integer_value(w) < 0 ||
              json_integer_value(w) > UINT32_MAX - 2))
        return loom_errf(err, -EINVAL, "Invalid weight");
    if (w)
        json_object_set(ev, "weight", (json_t *)w);
    const char *avail = json_string_value(json_object_get(req, "features"));
    const char *act = json_string_value(json_object_get(req, "active_features"));
    loom_strv_t have = LOOM_STRV_INIT;
    loom_strv_split(&have, avail ? avail : "", ",");
    const loom_strv_t *pool = avail ? &have : ctld_node_features(n);
    bool ok = !act || attr_subset(act, pool);
    loom_strv_free(&have);
    if (!ok)
        return loom_errf(err, -EINVAL, "Active features not subset of available features");
    if (avail)
        json_object_set_new(ev, "features", json_string(avail));
    if (avail || act)
        json_object_set_new(ev, "active_features", json_string(act ? act : avail));
    static const char *const texts[] = {"comment", "extra"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(req, texts[i]);
        if (json_is_string(v))
            json_object_set(ev, texts[i], (json_t *)v);
    }
    return 0;
}

static loom_strv_t *attr_list(const char *text)
{
    loom_strv_t *v = loom_xcalloc(1, sizeof(*v));
    loom_strv_split(v, text, ",");
    return v;
}

static void attr_set_list(loom_strv_t **dst, const char *text)
{
    if (*dst)
        loom_strv_free(*dst);
    free(*dst);
    *dst = attr_list(text);
}

static void attr_set_text(char **dst, const char *text)
{
    free(*dst);
    *dst = text && *text ? loom_xstrdup(text) : NULL;
}

/* New features: the node model's, and every pending job's node mask. */
static void attr_features_changed(ctld_t *c, ctld_node_t *n)
{
    loom_sched_node_t *sn = &c->snodes[n->idx];
    const loom_strv_t *f = ctld_node_features(n);
    sn->features = (const char *const *)f->v;
    sn->nfeatures = f->n;
    for (size_t i = 0; i < c->jobs_pending.n; i++) {
        ctld_job_t *job = c->jobs_pending.v[i];
        loom_err_t err = {0};
        if (job->features)
            ctld_job_build_req(c, job, &err);
    }
}

void ctld_node_attr_apply(ctld_t *c, ctld_node_t *n, const json_t *ev)
{
    if (c->reconfiguring) /* slurm.conf's again, as a reconfigure gives them */
        return;
    const json_t *w = json_object_get(ev, "weight");
    if (json_is_integer(w)) {
        n->weight = json_integer_value(w);
        c->snodes[n->idx].weight = (uint32_t)n->weight;
    }
    const char *avail = json_string_value(json_object_get(ev, "features"));
    const char *act = json_string_value(json_object_get(ev, "active_features"));
    if (avail)
        attr_set_list(&n->avail_features, avail);
    if (act)
        attr_set_list(&n->active_features, act);
    if (avail || act)
        attr_features_changed(c, n);
    static const char *const keys[] = {"comment", "extra"};
    char **dst[] = {&n->comment, &n->extra};
    for (size_t i = 0; i < 2; i++)
        if (json_is_string(json_object_get(ev, keys[i])))
            attr_set_text(dst[i], json_string_value(json_object_get(ev, keys[i])));
}

static json_t *attr_joined(const loom_strv_t *v)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < v->n; i++)
        loom_sbuf_addf(&sb, "%s%s", i ? "," : "", v->v[i]);
    json_t *s = json_string(loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return s;
}

void ctld_node_attr_rec(const ctld_node_t *n, json_t *o, bool for_state)
{
    if (n->weight >= 0 || !for_state)
        json_object_set_new(o, "weight",
                            json_integer(n->weight >= 0 ? n->weight : n->cfg->cfg->weight));
    if (n->avail_features || (!for_state && ctld_node_features(n)->n))
        json_object_set_new(o, "features", attr_joined(ctld_node_features(n)));
    if (n->active_features || (!for_state && attr_active(n)->n))
        json_object_set_new(o, "active_features", attr_joined(attr_active(n)));
    if (n->comment)
        json_object_set_new(o, "comment", json_string(n->comment));
    if (n->extra)
        json_object_set_new(o, "extra", json_string(n->extra));
}

void ctld_node_attr_free(ctld_node_t *n)
{
    if (n->avail_features)
        loom_strv_free(n->avail_features);
    if (n->active_features)
        loom_strv_free(n->active_features);
    free(n->avail_features);
    free(n->active_features);
    free(n->comment);
    free(n->extra);
}

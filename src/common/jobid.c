/*
 * jobid.c - parse and print job/step identifiers (CLI_SPEC §0.5). See jobid.h
 * for the forms and the bounds.
 *
 * The parser is a left-to-right scan: job id, then at most one of "_task",
 * "_[set]", "_*" or "+het", then an optional ".step", then the end of the
 * string. It builds into a local value and copies it out only on success.
 */
#include "common/jobid.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Named steps, in the spelling sacct prints. */
static const struct {
    int64_t step;
    const char *name;
} jobid_step_names[] = {
    {LOOM_STEP_BATCH, "batch"},
    {LOOM_STEP_EXTERN, "extern"},
    {LOOM_STEP_INTERACTIVE, "interactive"},
};

void loom_jobid_init(loom_jobid_t *id, uint32_t job_id)
{
    memset(id, 0, sizeof(*id));
    id->job_id = job_id;
    id->array = LOOM_JOBID_ARRAY_NONE;
    loom_rangeset_init(&id->tasks);
    id->step = LOOM_STEP_NONE;
    id->het_offset = LOOM_HET_NONE;
}

void loom_jobid_free(loom_jobid_t *id)
{
    if (id)
        loom_rangeset_free(&id->tasks);
}

const char *loom_jobid_step_name(int64_t step)
{
    for (size_t i = 0; i < sizeof(jobid_step_names) / sizeof(jobid_step_names[0]); i++)
        if (jobid_step_names[i].step == step)
            return jobid_step_names[i].name;
    return NULL;
}

static int jobid_fail(const char *s, loom_err_t *err, const char *what, const char *tok)
{
    return loom_errf(err, -LOOM_EINVAL_JOBID, "invalid job id '%s': %s '%s'", s, what, tok);
}

/* Parse the digits at *pp into *v, bounded by max: 0, -1 when there are no
 * digits, -2 when the value is over max. */
static int jobid_parse_num(const char **pp, uint64_t max, uint64_t *v)
{
    const char *p = *pp;
    uint64_t x = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        x = x * 10 + (uint64_t)(*p - '0');
        if (x > max)
            return -2;
    }
    *pp = p;
    *v = x;
    return 0;
}

static int jobid_parse_job(const char *s, const char **pp, loom_jobid_t *id, loom_err_t *err)
{
    uint64_t v;
    int rc = jobid_parse_num(pp, LOOM_JOBID_MAX, &v);
    if (rc == -1)
        return jobid_fail(s, err, "no job number in", s);
    if (rc == -2 || v == 0)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "invalid job id '%s': job number out of 1-%u", s,
                         LOOM_JOBID_MAX);
    id->job_id = (uint32_t)v;
    return 0;
}

/* "[set]" after "_": the set goes through the rangeset parser. */
static int jobid_parse_set(const char *s, const char **pp, loom_jobid_t *id, loom_err_t *err)
{
    const char *p = *pp, *close = strchr(p, ']');
    if (!close)
        return jobid_fail(s, err, "missing ']' in", p);
    char *inner = loom_xstrndup(p + 1, (size_t)(close - p - 1));
    loom_err_t sub;
    int rc = loom_rangeset_parse(inner, LOOM_ARRAY_INDEX_MAX, &id->tasks, &sub);
    free(inner);
    if (rc < 0)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "invalid job id '%s': %s", s, sub.msg);
    id->array = LOOM_JOBID_ARRAY_SET;
    *pp = close + 1;
    return 0;
}

/* What follows "_": a task index, a bracketed set or '*'. */
static int jobid_parse_array(const char *s, const char **pp, loom_jobid_t *id, loom_err_t *err)
{
    uint64_t v;
    if (**pp == '*') {
        id->array = LOOM_JOBID_ARRAY_ALL;
        (*pp)++;
        return 0;
    }
    if (**pp == '[')
        return jobid_parse_set(s, pp, id, err);
    const char *start = *pp;
    int rc = jobid_parse_num(pp, LOOM_ARRAY_INDEX_MAX, &v);
    if (rc == -1)
        return jobid_fail(s, err, "bad array task index", start);
    if (rc == -2)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "invalid job id '%s': array task index over %u",
                         s, LOOM_ARRAY_INDEX_MAX);
    id->array = LOOM_JOBID_ARRAY_ONE;
    id->task = (uint32_t)v;
    return 0;
}

/* What follows "+": the het job offset. */
static int jobid_parse_het(const char *s, const char **pp, loom_jobid_t *id, loom_err_t *err)
{
    uint64_t v;
    const char *start = *pp;
    if (jobid_parse_num(pp, LOOM_HET_OFFSET_MAX, &v) < 0)
        return jobid_fail(s, err, "bad het job offset (0-127)", start);
    id->het_offset = (int32_t)v;
    return 0;
}

/* What follows ".": a step number or a step name. */
static int jobid_parse_step(const char *s, const char **pp, loom_jobid_t *id, loom_err_t *err)
{
    uint64_t v;
    const char *start = *pp;
    if (id->array == LOOM_JOBID_ARRAY_SET || id->array == LOOM_JOBID_ARRAY_ALL)
        return jobid_fail(s, err, "a step cannot follow several array tasks: step", start);
    for (size_t i = 0; i < sizeof(jobid_step_names) / sizeof(jobid_step_names[0]); i++) {
        size_t n = strlen(jobid_step_names[i].name);
        if (strncmp(start, jobid_step_names[i].name, n) == 0) {
            id->step = jobid_step_names[i].step;
            *pp = start + n;
            return 0;
        }
    }
    if (jobid_parse_num(pp, (uint64_t)LOOM_STEP_ID_MAX, &v) < 0)
        return jobid_fail(s, err, "bad step id", start);
    id->step = (int64_t)v;
    return 0;
}

int loom_jobid_parse(const char *s, loom_jobid_t *out, loom_err_t *err)
{
    loom_jobid_t id;
    const char *p = s;
    loom_jobid_init(&id, 0);
    int rc = jobid_parse_job(s, &p, &id, err);
    if (rc == 0 && *p == '_') {
        p++;
        rc = jobid_parse_array(s, &p, &id, err);
    } else if (rc == 0 && *p == '+') {
        p++;
        rc = jobid_parse_het(s, &p, &id, err);
    }
    if (rc == 0 && *p == '.') {
        p++;
        rc = jobid_parse_step(s, &p, &id, err);
    }
    if (rc == 0 && *p != '\0')
        rc = jobid_fail(s, err, "unexpected text", p);
    if (rc < 0) {
        loom_jobid_free(&id);
        return rc;
    }
    *out = id;
    return 0;
}

void loom_jobid_format(const loom_jobid_t *id, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%u", id->job_id);
    switch (id->array) {
    case LOOM_JOBID_ARRAY_ONE:
        loom_sbuf_addf(out, "_%u", id->task);
        break;
    case LOOM_JOBID_ARRAY_SET:
        loom_sbuf_addc(out, '_');
        loom_rangeset_format_bracket(&id->tasks, 0, out);
        break;
    case LOOM_JOBID_ARRAY_ALL:
        loom_sbuf_add(out, "_*");
        break;
    case LOOM_JOBID_ARRAY_NONE:
        break;
    }
    if (id->het_offset != LOOM_HET_NONE)
        loom_sbuf_addf(out, "+%d", id->het_offset);
    const char *name = loom_jobid_step_name(id->step);
    if (name)
        loom_sbuf_addf(out, ".%s", name);
    else if (id->step >= 0)
        loom_sbuf_addf(out, ".%lld", (long long)id->step);
}

bool loom_jobid_equal(const loom_jobid_t *a, const loom_jobid_t *b)
{
    return a->job_id == b->job_id && a->array == b->array &&
           (a->array != LOOM_JOBID_ARRAY_ONE || a->task == b->task) &&
           loom_rangeset_equal(&a->tasks, &b->tasks) && a->step == b->step &&
           a->het_offset == b->het_offset;
}

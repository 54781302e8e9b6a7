/*
 * fpattern.c - output/error/input file-name patterns (CLI_SPEC §1.1).
 *
 * The expansion is one left-to-right pass. Padding digits follow Slurm's
 * reading: "%<digits><letter>" pads a numeric field to min(digits, 10); when
 * the letter is not a field, '%' and all but the last digit are dropped
 * ("%12q" gives "2q"), which is what Slurm's stepd writes.
 */
#include "common/fpattern.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void loom_fpattern_ctx_init(loom_fpattern_ctx_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->array_task_id = LOOM_FPATTERN_NO_VAL;
    ctx->step_id = LOOM_FPATTERN_BATCH_STEP;
}

static void fpattern_num(loom_sbuf_t *out, unsigned width, uint32_t v)
{
    loom_sbuf_addf(out, "%0*u", (int)width, (unsigned)v);
}

static void fpattern_str(loom_sbuf_t *out, const char *s)
{
    if (s)
        loom_sbuf_add(out, s);
}

/* Expand one field letter; returns false when c is not a field. */
static bool fpattern_field(char c, unsigned width, const loom_fpattern_ctx_t *ctx, loom_sbuf_t *out)
{
    bool batch = ctx->step_id == LOOM_FPATTERN_BATCH_STEP;
    switch (c) {
    case 'j':
        fpattern_num(out, width, ctx->job_id);
        return true;
    case 'J':
        fpattern_num(out, width, ctx->job_id);
        if (!batch)
            loom_sbuf_addf(out, ".%u", (unsigned)ctx->step_id);
        return true;
    case 'A':
        fpattern_num(out, width, ctx->array_job_id ? ctx->array_job_id : ctx->job_id);
        return true;
    case 'a':
        fpattern_num(out, width, ctx->array_task_id);
        return true;
    case 'b':
        fpattern_num(out, width, ctx->array_task_id % 10);
        return true;
    case 's':
        if (batch)
            loom_sbuf_add(out, "batch");
        else
            fpattern_num(out, width, ctx->step_id);
        return true;
    case 'n':
        fpattern_num(out, width, ctx->node_id);
        return true;
    case 't':
        fpattern_num(out, width, ctx->task_id);
        return true;
    case 'r':
        fpattern_num(out, width, ctx->restart_cnt);
        return true;
    case 'N':
        fpattern_str(out, ctx->node_name);
        return true;
    case 'u':
        fpattern_str(out, ctx->user);
        return true;
    case 'x':
        fpattern_str(out, ctx->job_name);
        return true;
    default:
        return false;
    }
}

/* Handle the text after a '%' at p; returns the position after what was used. */
static const char *fpattern_token(const char *p, const loom_fpattern_ctx_t *ctx, loom_sbuf_t *out)
{
    if (*p == '%') {
        loom_sbuf_addc(out, '%');
        return p + 1;
    }
    if (*p == '\0') /* a trailing '%' is dropped, as Slurm does */
        return p;
    const char *digits = p;
    unsigned width = 0;
    while (isdigit((unsigned char)*p)) {
        if (width <= LOOM_FPATTERN_MAX_WIDTH)
            width = width * 10 + (unsigned)(*p - '0');
        p++;
    }
    if (width > LOOM_FPATTERN_MAX_WIDTH)
        width = LOOM_FPATTERN_MAX_WIDTH;
    if (*p != '\0' && fpattern_field(*p, width, ctx, out))
        return p + 1;
    if (p > digits) /* Slurm keeps only the last digit of a width without a field */
        return p - 1;
    loom_sbuf_addc(out, '%');
    return p;
}

/* Escaped names: drop single backslashes, keep one of each pair. */
static void fpattern_unescape(const char *p, loom_sbuf_t *out)
{
    while (*p) {
        if (p[0] == '\\' && p[1] == '\\') {
            loom_sbuf_addc(out, '\\');
            p += 2;
        } else if (p[0] == '\\') {
            p++;
        } else {
            loom_sbuf_addc(out, *p++);
        }
    }
}

void loom_fpattern_expand(const char *pattern, const loom_fpattern_ctx_t *ctx, loom_sbuf_t *out)
{
    if (strcasecmp(pattern, "none") == 0) {
        loom_sbuf_add(out, "/dev/null");
        return;
    }
    if (pattern[0] != '/' && ctx->work_dir && ctx->work_dir[0]) {
        loom_sbuf_add(out, ctx->work_dir);
        if (ctx->work_dir[strlen(ctx->work_dir) - 1] != '/')
            loom_sbuf_addc(out, '/');
    }
    if (strchr(pattern, '\\')) {
        fpattern_unescape(pattern, out);
        return;
    }
    const char *p = pattern;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            loom_sbuf_add(out, p);
            break;
        }
        loom_sbuf_addn(out, p, (size_t)(pct - p));
        p = fpattern_token(pct + 1, ctx, out);
    }
}

void loom_fpattern_stdio(const char *out_pat, const char *err_pat, bool is_array,
                         const loom_fpattern_ctx_t *ctx, char **out_path, char **err_path)
{
    const char *def = is_array ? "slurm-%A_%a.out" : "slurm-%j.out";
    loom_sbuf_t o = LOOM_SBUF_INIT, e = LOOM_SBUF_INIT;
    loom_fpattern_expand(out_pat && *out_pat ? out_pat : def, ctx, &o);
    *err_path = NULL;
    if (err_pat && *err_pat) {
        loom_fpattern_expand(err_pat, ctx, &e);
        if (strcmp(loom_sbuf_str(&e), loom_sbuf_str(&o)) != 0)
            *err_path = loom_sbuf_detach(&e);
    }
    loom_sbuf_free(&e);
    *out_path = loom_sbuf_detach(&o);
}

/*
 * fuzz_jobid.c - job/step ids and job array specs (src/common/jobid.c,
 * src/common/rangeset.c; CLI_SPEC §0.5, §1 --array).
 *
 * The input is tried as a job id and as an --array spec. An accepted id must
 * print a canonical text that parses back to an equal id and prints the same
 * again; an accepted array spec must print ("1-3,5" plus "%N") back to the
 * same set and throttle, and its count, first/last and next must agree with
 * contains (abort() on any mismatch). A failure must say why.
 */
#include "common/jobid.h"
#include "common/rangeset.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A smaller MaxArraySize than Slurm's largest keeps stepped specs quick. */
#define FUZZ_ARRAY_MAX 20000u

static void fuzz_jobid(const char *s)
{
    loom_jobid_t id, back;
    loom_err_t err = {0};
    if (loom_jobid_parse(s, &id, &err) != 0) {
        if (err.code != -LOOM_EINVAL_JOBID || err.msg[0] == '\0')
            abort();
        return;
    }
    loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
    loom_jobid_format(&id, &a);
    if (loom_jobid_parse(loom_sbuf_str(&a), &back, NULL) != 0 || !loom_jobid_equal(&id, &back))
        abort();
    loom_jobid_format(&back, &b);
    if (strcmp(loom_sbuf_str(&a), loom_sbuf_str(&b)) != 0)
        abort();
    loom_sbuf_free(&a);
    loom_sbuf_free(&b);
    loom_jobid_free(&id);
    loom_jobid_free(&back);
}

/* Walk the set with first/next (at most a few thousand steps). */
static void fuzz_walk(const loom_rangeset_t *rs)
{
    uint32_t v, first, last, prev = 0, steps = 0;
    int rc = loom_rangeset_first(rs, &first);
    if ((rc == 0) != !loom_rangeset_empty(rs) || (loom_rangeset_last(rs, &last) == 0) != (rc == 0))
        abort();
    for (rc = loom_rangeset_first(rs, &v); rc == 0 && steps < 4096;
         rc = loom_rangeset_next(rs, v, &v), steps++) {
        if (!loom_rangeset_contains(rs, v) || (steps > 0 && v <= prev) || v > last)
            abort();
        if (steps > 0 && v > prev + 1 && loom_rangeset_contains(rs, prev + 1))
            abort();
        prev = v;
    }
    if (rc != 0 && loom_rangeset_count(rs) != steps)
        abort();
}

static void fuzz_array(const char *s)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT, back = LOOM_RANGESET_INIT;
    loom_err_t err = {0};
    uint32_t throttle = 0, t2 = 0;
    if (loom_rangeset_parse_array(s, FUZZ_ARRAY_MAX, &rs, &throttle, &err) < 0) {
        if (err.code != -LOOM_EINVAL_ARRAY || err.msg[0] == '\0' || rs.n != 0)
            abort();
        return;
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_rangeset_format(&rs, &sb);
    if (throttle)
        loom_sbuf_addf(&sb, "%%%u", throttle);
    if (loom_rangeset_parse_array(loom_sbuf_str(&sb), FUZZ_ARRAY_MAX, &back, &t2, NULL) < 0 ||
        !loom_rangeset_equal(&rs, &back) || t2 != throttle)
        abort();
    for (size_t i = 0; i < rs.n; i++) /* canonical: sorted, disjoint, not adjacent */
        if (rs.r[i].lo > rs.r[i].hi || rs.r[i].hi > FUZZ_ARRAY_MAX ||
            (i > 0 && (uint64_t)rs.r[i - 1].hi + 1 >= rs.r[i].lo))
            abort();
    fuzz_walk(&rs);
    loom_sbuf_reset(&sb);
    loom_rangeset_format_bracket(&rs, throttle, &sb);
    if (sb.len < 3 || sb.buf[0] != '[' || sb.buf[sb.len - 1] != ']')
        abort();
    loom_sbuf_free(&sb);
    loom_rangeset_free(&rs);
    loom_rangeset_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = loom_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    fuzz_jobid(s);
    fuzz_array(s);
    free(s);
    return 0;
}

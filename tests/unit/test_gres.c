/* test_gres.c - GRES requests, node GRES lists and TRES strings (CLI_SPEC §0.6). */
#include "common/err.h"
#include "common/gres.h"
#include "common/sbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

enum { REQ, NODE, GPUS };

static int parse(int form, const char *s, loom_gres_list_t *l, loom_err_t *err)
{
    if (form == NODE)
        return loom_gres_parse_node(s, l, err);
    if (form == GPUS)
        return loom_gres_parse_gpus(s, l, err);
    return loom_gres_parse(s, l, err);
}

/* in, its canonical print (loom_gres_fmt), and the TRES forms. */
static const struct {
    int form;
    const char *in, *fmt, *tres, *tres_per;
} gres_ok[] = {
    {REQ, "gpu", "gpu:1", "gres/gpu=1", "gres/gpu:1"},
    {REQ, "gpu:2", "gpu:2", "gres/gpu=2", "gres/gpu:2"},
    {REQ, "gpu:0", "gpu:0", "gres/gpu=0", "gres/gpu:0"},
    {REQ, "gpu:a100", "gpu:a100:1", "gres/gpu:a100=1", "gres/gpu:a100:1"},
    {REQ, "gpu:a100:4", "gpu:a100:4", "gres/gpu:a100=4", "gres/gpu:a100:4"},
    {REQ, "gpu:a100:4,shard:2", "gpu:a100:4,shard:2", "gres/gpu:a100=4,gres/shard=2",
     "gres/gpu:a100:4,gres/shard:2"},
    {REQ, "gpu:tesla_v100-pcie-32gb:1", "gpu:tesla_v100-pcie-32gb:1",
     "gres/gpu:tesla_v100-pcie-32gb=1", "gres/gpu:tesla_v100-pcie-32gb:1"},
    {REQ, "gpu:3090:1", "gpu:3090:1", "gres/gpu:3090=1", "gres/gpu:3090:1"},
    {REQ, "mps:100", "mps:100", "gres/mps=100", "gres/mps:100"},
    {REQ, "shard:1k", "shard:1024", "gres/shard=1024", "gres/shard:1024"},
    {REQ, "bandwidth:2KB", "bandwidth:2000", "gres/bandwidth=2000", "gres/bandwidth:2000"},
    {REQ, "bw:1KiB", "bw:1024", "gres/bw=1024", "gres/bw:1024"},
    {REQ, "bw:1m", "bw:1048576", "gres/bw=1048576", "gres/bw:1048576"},
    {REQ, "bw:1G", "bw:1073741824", "gres/bw=1073741824", "gres/bw:1073741824"},
    {REQ, "bw:1gb", "bw:1000000000", "gres/bw=1000000000", "gres/bw:1000000000"},
    {REQ, "bw:1T", "bw:1099511627776", "gres/bw=1099511627776", "gres/bw:1099511627776"},
    {REQ, "bw:1p", "bw:1125899906842624", "gres/bw=1125899906842624", "gres/bw:1125899906842624"},
    {REQ, "gpu:a100:2,gpu:v100:1,gpu:1", "gpu:a100:2,gpu:v100:1,gpu:1",
     "gres/gpu:a100=2,gres/gpu:v100=1,gres/gpu=1", "gres/gpu:a100:2,gres/gpu:v100:1,gres/gpu:1"},
    {REQ, "Gpu:A100:1", "Gpu:A100:1", "gres/Gpu:A100=1", "gres/Gpu:A100:1"},
    {REQ, "gpu:9223372036854775807", "gpu:9223372036854775807", "gres/gpu=9223372036854775807",
     "gres/gpu:9223372036854775807"},
    {REQ, "none", "", "", ""},
    {REQ, "NONE", "", "", ""},
    {NODE, "gpu:h100:8(S:0-1)", "gpu:h100:8(S:0-1)", "gres/gpu:h100=8", "gres/gpu:h100:8"},
    {NODE, "gpu:h100:8(S:0,1),shard:16", "gpu:h100:8(S:0,1),shard:16",
     "gres/gpu:h100=8,gres/shard=16", "gres/gpu:h100:8,gres/shard:16"},
    {NODE, "gpu:a100:2(S:0-1),gpu:v100:2(S:2-3,5)", "gpu:a100:2(S:0-1),gpu:v100:2(S:2-3,5)",
     "gres/gpu:a100=2,gres/gpu:v100=2", "gres/gpu:a100:2,gres/gpu:v100:2"},
    {NODE, "gpu:4(S:0)", "gpu:4(S:0)", "gres/gpu=4", "gres/gpu:4"},
    {NODE, "gpu(S:1)", "gpu:1(S:1)", "gres/gpu=1", "gres/gpu:1"},
    {NODE, "gpu:no_consume:4", "gpu:no_consume:4", "gres/gpu:no_consume=4",
     "gres/gpu:no_consume:4"},
    {NODE, "gpu:8", "gpu:8", "gres/gpu=8", "gres/gpu:8"},
    {GPUS, "2", "gpu:2", "gres/gpu=2", "gres/gpu:2"},
    {GPUS, "a100:2", "gpu:a100:2", "gres/gpu:a100=2", "gres/gpu:a100:2"},
    {GPUS, "a100", "gpu:a100:1", "gres/gpu:a100=1", "gres/gpu:a100:1"},
    {GPUS, "a100:2,v100:1", "gpu:a100:2,gpu:v100:1", "gres/gpu:a100=2,gres/gpu:v100=1",
     "gres/gpu:a100:2,gres/gpu:v100:1"},
};

static void test_gres_parse_ok(void **state)
{
    for (size_t i = 0; i < N_ELEMS(gres_ok); i++) {
        loom_gres_list_t l = LOOM_GRES_LIST_INIT, back = LOOM_GRES_LIST_INIT;
        loom_err_t err;
        loom_err_clear(&err);
        if (parse(gres_ok[i].form, gres_ok[i].in, &l, &err) != 0)
            fail_msg("'%s': %s", gres_ok[i].in, err.msg);
        loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT, c = LOOM_SBUF_INIT;
        loom_gres_fmt(&l, &a);
        loom_gres_fmt_tres(&l, &b);
        loom_gres_fmt_tres_per(&l, &c);
        if (strcmp(loom_sbuf_str(&a), gres_ok[i].fmt) ||
            strcmp(loom_sbuf_str(&b), gres_ok[i].tres) ||
            strcmp(loom_sbuf_str(&c), gres_ok[i].tres_per))
            fail_msg("'%s': got '%s' / '%s' / '%s'", gres_ok[i].in, loom_sbuf_str(&a),
                     loom_sbuf_str(&b), loom_sbuf_str(&c));
        /* The canonical print parses back to the same list. */
        if (l.n > 0) {
            assert_int_equal(
                parse(gres_ok[i].form == NODE ? NODE : REQ, loom_sbuf_str(&a), &back, NULL), 0);
            assert_true(loom_gres_list_equal(&l, &back));
        }
        loom_sbuf_free(&a);
        loom_sbuf_free(&b);
        loom_sbuf_free(&c);
        loom_gres_list_free(&l);
        loom_gres_list_free(&back);
    }
}

static void test_gres_fields(void **state)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    assert_int_equal(loom_gres_parse_node("gpu:h100:8(S:0-1),shard:16", &l, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[0].name, "gpu");
    assert_string_equal(l.v[0].type, "h100");
    assert_int_equal(l.v[0].count, 8);
    assert_string_equal(l.v[0].sockets, "0-1");
    assert_string_equal(l.v[1].name, "shard");
    assert_null(l.v[1].type);
    assert_int_equal(l.v[1].count, 16);
    assert_null(l.v[1].sockets);
    /* A second parse replaces the contents. */
    assert_int_equal(loom_gres_parse("gpu", &l, NULL), 0);
    assert_int_equal(l.n, 1);
    assert_null(l.v[0].type);
    assert_int_equal(l.v[0].count, 1);
    loom_gres_list_free(&l);
    loom_gres_list_free(&l); /* safe twice */
    loom_gres_list_free(NULL);
}

static void test_gres_counts(void **state)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    assert_int_equal(loom_gres_parse("gpu:a100:2,gpu:v100:3,gpu:1,shard:4", &l, NULL), 0);
    assert_int_equal(loom_gres_count(&l, "gpu"), 6);
    assert_int_equal(loom_gres_count(&l, "shard"), 4);
    assert_int_equal(loom_gres_count(&l, "mps"), 0);
    assert_int_equal(loom_gres_count_type(&l, "gpu", "a100"), 2);
    assert_int_equal(loom_gres_count_type(&l, "gpu", "v100"), 3);
    assert_int_equal(loom_gres_count_type(&l, "gpu", NULL), 1);
    assert_int_equal(loom_gres_count_type(&l, "gpu", "h100"), 0);
    assert_int_equal(loom_gres_count_type(&l, "shard", NULL), 4);
    loom_gres_list_free(&l);
}

static void test_gres_errors(void **state)
{
    static const struct {
        int form;
        const char *in, *why;
    } bad[] = {
        {REQ, "", "empty entry"},
        {REQ, ",", "empty entry"},
        {REQ, "gpu,", "empty entry"},
        {REQ, ",gpu", "empty entry"},
        {REQ, "gpu,,shard", "empty entry"},
        {REQ, ":2", "bad name"},
        {REQ, "2", "bad name"},
        {REQ, "2gpu:1", "bad name"},
        {REQ, "gpu:", "bad count"},
        {REQ, "gpu::2", "bad type"},
        {REQ, "gpu:a100:", "bad count"},
        {REQ, "gpu:a100:x", "bad count"},
        {REQ, "gpu:a100:-1", "bad count"},
        {REQ, "gpu:-1", "bad type"},
        {REQ, "gpu:1.5", "bad count"},
        {REQ, "gpu:2x", "bad count"},
        {REQ, "gpu:2kbb", "bad count"},
        {REQ, "gpu:a100:2:1", "too many fields"},
        {REQ, "gpu:a 100:1", "bad type"},
        {REQ, "gp u:1", "bad name"},
        {REQ, "gpu/a100:1", "bad name"},
        {REQ, "gres/gpu:1", "bad name"},
        {REQ, "gpu:9223372036854775808", "count too large"},
        {REQ, "gpu:99999999999999999999", "count too large"},
        {REQ, "gpu:9100000000000000k", "count too large"},
        {REQ, "gpu:2,gpu:3", "duplicate entry"},
        {REQ, "gpu:a100:2,GPU:a100:3", "duplicate entry"},
        {REQ, "gpu:1(S:0)", "bad count"}, /* no socket lists in requests */
        {REQ, " gpu", "bad name"},
        {REQ, "gpu ", "bad name"},
        {REQ, "gpu:1 ", "bad count"},
        {NODE, "gpu:2(S:)", "bad socket list"},
        {NODE, "gpu:2(S:0-)", "bad socket list"},
        {NODE, "gpu:2(S:,1)", "bad socket list"},
        {NODE, "gpu:2(S:a)", "bad socket list"},
        {NODE, "gpu:2(X:0)", "bad socket list"},
        {NODE, "gpu:2(S:0", "bad socket list"},
        {NODE, "gpu:2(S:0)x", "bad socket list"},
        {NODE, "gpu:2(S:0)(S:1)", "bad socket list"},
        {NODE, "gpu:2)", "bad count"},
        {NODE, "none", NULL}, /* "none" is for requests only: parsed as a name */
        {GPUS, "", "empty entry"},
        {GPUS, "gpu:a100:2", "too many fields"},
        {GPUS, "a100:x", "bad count"},
        {GPUS, "2,2", "duplicate entry"},
    };
    for (size_t i = 0; i < N_ELEMS(bad); i++) {
        loom_gres_list_t l = LOOM_GRES_LIST_INIT;
        loom_err_t err;
        loom_err_clear(&err);
        int rc = parse(bad[i].form, bad[i].in, &l, &err);
        if (!bad[i].why) {
            assert_int_equal(rc, 0);
            loom_gres_list_free(&l);
            continue;
        }
        if (rc != -LOOM_EINVAL_GRES)
            fail_msg("'%s' accepted", bad[i].in);
        assert_null(l.v);
        if (!strstr(err.msg, bad[i].in) || !strstr(err.msg, bad[i].why))
            fail_msg("'%s': message '%s'", bad[i].in, err.msg);
    }
}

static void test_gres_error_keeps_output(void **state)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    loom_err_t err;
    assert_int_equal(loom_gres_parse("gpu:2", &l, NULL), 0);
    assert_int_equal(loom_gres_parse("gpu:2,shard:x:y:z", &l, &err), -LOOM_EINVAL_GRES);
    assert_string_equal(err.msg,
                        "Invalid GRES specification 'gpu:2,shard:x:y:z' (too many fields at "
                        "'shard:x:y:z')");
    assert_int_equal(l.n, 1);
    assert_int_equal(l.v[0].count, 2);
    loom_gres_list_free(&l);
}

static const struct {
    const char *in, *fmt, *fmt_per;
} tres_ok[] = {
    {"cpu=8,mem=32G,node=2,billing=8,gres/gpu=4,gres/gpu:a100=4",
     "cpu=8,mem=32G,node=2,billing=8,gres/gpu=4,gres/gpu:a100=4",
     "cpu:8,mem:32G,node:2,billing:8,gres/gpu:4,gres/gpu:a100:4"},
    {"gres/gpu:a100=4,billing=8,gres/gpu=4,node=2,mem=32768,cpu=8",
     "cpu=8,mem=32G,node=2,billing=8,gres/gpu=4,gres/gpu:a100=4",
     "cpu:8,mem:32G,node:2,billing:8,gres/gpu:4,gres/gpu:a100:4"},
    {"gres/gpu:1,cpu=4", "cpu=4,gres/gpu=1", "cpu:4,gres/gpu:1"},
    {"gres/gpu:a100:2", "gres/gpu:a100=2", "gres/gpu:a100:2"},
    {"gres/gpu:a100", "gres/gpu:a100=1", "gres/gpu:a100:1"},
    {"gres/gpu", "gres/gpu=1", "gres/gpu:1"},
    {"gres:gpu:2", "gres/gpu=2", "gres/gpu:2"}, /* 22.05's TresPerNode */
    {"gres:gpu:a100:2", "gres/gpu:a100=2", "gres/gpu:a100:2"},
    {"cpu:4", "cpu=4", "cpu:4"},
    {"cpu", "cpu=1", "cpu:1"},
    {"CPU=2,Mem=1536", "cpu=2,mem=1536M", "cpu:2,mem:1536M"},
    {"mem=1T", "mem=1T", "mem:1T"},
    {"mem=0", "mem=0", "mem:0"},
    {"mem:100M", "mem=100M", "mem:100M"},
    {"license/matlab=2,gres/gpu=1,bb/datawarp=5,fs/lustre=1,license/abaqus@db=3",
     "gres/gpu=1,license/abaqus@db=3,license/matlab=2,bb/datawarp=5,fs/lustre=1",
     "gres/gpu:1,license/abaqus@db:3,license/matlab:2,bb/datawarp:5,fs/lustre:1"},
    {"pages=3,vmem=2,fs/disk=1,billing=5,node=4,energy=3,mem=2,cpu=1",
     "cpu=1,mem=2M,energy=3,node=4,billing=5,fs/disk=1,vmem=2,pages=3",
     "cpu:1,mem:2M,energy:3,node:4,billing:5,fs/disk:1,vmem:2,pages:3"},
    {"license/matlab:2", "license/matlab=2", "license/matlab:2"},
    {"license/matlab", "license/matlab=1", "license/matlab:1"},
    {"energy=2k", "energy=2048", "energy:2048"},
    {"gres/shard:1kb", "gres/shard=1000", "gres/shard:1000"},
};

static void test_tres_parse_ok(void **state)
{
    for (size_t i = 0; i < N_ELEMS(tres_ok); i++) {
        loom_tres_list_t l = LOOM_TRES_LIST_INIT, back = LOOM_TRES_LIST_INIT;
        loom_err_t err;
        loom_err_clear(&err);
        if (loom_tres_parse(tres_ok[i].in, &l, &err) != 0)
            fail_msg("'%s': %s", tres_ok[i].in, err.msg);
        loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
        loom_tres_fmt(&l, &a);
        loom_tres_fmt_per(&l, &b);
        if (strcmp(loom_sbuf_str(&a), tres_ok[i].fmt) ||
            strcmp(loom_sbuf_str(&b), tres_ok[i].fmt_per))
            fail_msg("'%s': got '%s' / '%s'", tres_ok[i].in, loom_sbuf_str(&a), loom_sbuf_str(&b));
        assert_int_equal(loom_tres_parse(loom_sbuf_str(&a), &back, NULL), 0);
        assert_true(loom_tres_list_equal(&l, &back));
        assert_int_equal(loom_tres_parse(loom_sbuf_str(&b), &back, NULL), 0);
        assert_true(loom_tres_list_equal(&l, &back));
        loom_sbuf_free(&a);
        loom_sbuf_free(&b);
        loom_tres_list_free(&l);
        loom_tres_list_free(&back);
    }
}

static void test_tres_errors(void **state)
{
    static const struct {
        const char *in, *why;
    } bad[] = {
        {"", "empty entry"},
        {"cpu=1,", "empty entry"},
        {"cpu=1,,mem=2", "empty entry"},
        {"=4", "bad type"},
        {"foo=4", "bad type"},
        {"gres=4", "bad type"},
        {"gres", "bad type"},
        {"gres:gpu=4", "bad type"},
        {"cpu=", "bad count"},
        {"cpu=x", "bad count"},
        {"cpu=-1", "bad count"},
        {"cpu=1.5", "bad count"},
        {"cpu=4:2", "bad count"},
        {"cpu:", "bad count"},
        {"cpu=99999999999999999999", "count too large"},
        {"mem=4X", "bad memory size"},
        {"mem=", "bad memory size"},
        {"mem=99999999999T", "bad memory size"},
        {"mem=1111111111111111111111111111111111111111111111111111111111111111111111",
         "bad memory size"},
        {"cpu/x=1", "bad name"},
        {"license/=1", "bad name"},
        {"license/a b=1", "bad name"},
        {"gres/=1", "bad name"},
        {"gres/gpu:=1", "bad name"},
        {"gres/gpu:a:b=1", "bad name"},
        {"gres/2=1", "bad name"},
        {"gres/gpu:a100:x", "bad count"},
        {"gres/gpu:1:2:3", "too many fields"},
        {"gres/", "bad name"},
        {"cpu=1,cpu=2", "duplicate entry"},
        {"cpu=1,CPU:2", "duplicate entry"},
        {"gres/gpu=1,gres/gpu:1", "duplicate entry"},
        {"gres/gpu:a100=1,gres:gpu:a100:1", "duplicate entry"},
        {"cpu=1 ", "bad count"},
        {" cpu=1", "bad type"},
        {"cpu-1", "bad type"},
    };
    for (size_t i = 0; i < N_ELEMS(bad); i++) {
        loom_tres_list_t l = LOOM_TRES_LIST_INIT;
        loom_err_t err;
        loom_err_clear(&err);
        if (loom_tres_parse(bad[i].in, &l, &err) != -LOOM_EINVAL_GRES)
            fail_msg("'%s' accepted", bad[i].in);
        assert_null(l.v);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("'%s': message '%s'", bad[i].in, err.msg);
    }
}

static void test_tres_lookup_and_add(void **state)
{
    loom_tres_list_t l = LOOM_TRES_LIST_INIT;
    assert_int_equal(loom_tres_parse("cpu=8,mem=4G,gres/gpu:a100=2", &l, NULL), 0);
    assert_int_equal(loom_tres_count(&l, "cpu", NULL), 8);
    assert_int_equal(loom_tres_count(&l, "mem", NULL), 4096);
    assert_int_equal(loom_tres_count(&l, "gres", "gpu:a100"), 2);
    assert_int_equal(loom_tres_count(&l, "gres", "gpu"), 0);
    assert_null(loom_tres_find(&l, "node", NULL));
    assert_non_null(loom_tres_find(&l, "cpu", NULL));
    loom_tres_add(&l, "node", NULL, 1);
    loom_tres_add(&l, "cpu", NULL, 2);
    loom_tres_add(&l, "billing", NULL, UINT64_MAX); /* saturates */
    loom_tres_add(&l, "billing", NULL, 5);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_tres_fmt(&l, &sb);
    assert_string_equal(loom_sbuf_str(&sb),
                        "cpu=10,mem=4G,node=1,billing=9223372036854775807,gres/gpu:a100=2");
    loom_sbuf_free(&sb);
    loom_tres_list_free(&l);
}

static void test_tres_add_gres(void **state)
{
    loom_gres_list_t g = LOOM_GRES_LIST_INIT;
    loom_tres_list_t t = LOOM_TRES_LIST_INIT;
    assert_int_equal(loom_gres_parse("gpu:a100:4,shard:2,gpu:v100:1", &g, NULL), 0);
    assert_int_equal(loom_tres_parse("cpu=8,node=2", &t, NULL), 0);
    loom_tres_add_gres(&t, &g);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_tres_fmt(&t, &sb);
    assert_string_equal(loom_sbuf_str(&sb),
                        "cpu=8,node=2,gres/gpu=5,gres/gpu:a100=4,gres/gpu:v100=1,gres/shard=2");
    loom_sbuf_free(&sb);
    loom_tres_list_free(&t);
    loom_gres_list_free(&g);
}

static void test_tres_error_keeps_output(void **state)
{
    loom_tres_list_t l = LOOM_TRES_LIST_INIT;
    loom_err_t err;
    assert_int_equal(loom_tres_parse("cpu=1", &l, NULL), 0);
    assert_int_equal(loom_tres_parse("cpu=2,mem=x", &l, &err), -LOOM_EINVAL_GRES);
    assert_string_equal(err.msg,
                        "Invalid TRES specification 'cpu=2,mem=x' (bad memory size at 'mem=x')");
    assert_int_equal(l.n, 1);
    assert_int_equal(l.v[0].count, 1);
    loom_tres_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gres_parse_ok),
        cmocka_unit_test(test_gres_fields),
        cmocka_unit_test(test_gres_counts),
        cmocka_unit_test(test_gres_errors),
        cmocka_unit_test(test_gres_error_keeps_output),
        cmocka_unit_test(test_tres_parse_ok),
        cmocka_unit_test(test_tres_errors),
        cmocka_unit_test(test_tres_lookup_and_add),
        cmocka_unit_test(test_tres_add_gres),
        cmocka_unit_test(test_tres_error_keeps_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

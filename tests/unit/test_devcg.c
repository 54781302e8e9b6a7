/* test_devcg.c - the devices-cgroup rules that confine a step to its GPUs. */
#include "common/devcg.h"
#include "common/devcg_bpf.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Four NVIDIA-like GPUs (c 195:0-3), one plain file (emulated), one GPU
 * sharing GPU 0's device. */
static const loom_devcg_gpu_t gpus4[] = {
    {0, 'c', 195, 0}, {1, 'c', 195, 1}, {2, 'c', 195, 2}, {3, 'c', 195, 3}};
static const loom_devcg_gpu_t mixed[] = {
    {0, 'c', 195, 0}, {1, 0, 0, 0}, {2, 'b', 8, 16}, {3, 'c', 195, 0}};

static void rules_text(const loom_devcg_gpu_t *g, size_t n, const uint32_t *allowed, size_t na,
                       loom_sbuf_t *out)
{
    loom_strv_t deny = LOOM_STRV_INIT;
    size_t added = loom_devcg_rules(g, n, allowed, na, &deny);
    assert_int_equal(added, deny.n);
    for (size_t i = 0; i < deny.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? ";" : "", deny.v[i]);
    loom_strv_free(&deny);
}

static void test_devcg_rules(void **state)
{
    static const uint32_t none[1] = {0}, one[] = {1}, two[] = {3, 0}, all[] = {0, 1, 2, 3},
                          alien[] = {7}, zero[] = {0}, three[] = {3};
    static const struct {
        const loom_devcg_gpu_t *gpus;
        size_t n;
        const uint32_t *allowed;
        size_t na;
        const char *want;
    } cases[] = {
        {gpus4, 4, one, 1, "c 195:0 rwm;c 195:2 rwm;c 195:3 rwm"},
        {gpus4, 4, two, 2, "c 195:1 rwm;c 195:2 rwm"},
        {gpus4, 4, all, 4, ""},
        {gpus4, 4, none, 0, "c 195:0 rwm;c 195:1 rwm;c 195:2 rwm;c 195:3 rwm"},
        {gpus4, 4, alien, 1, "c 195:0 rwm;c 195:1 rwm;c 195:2 rwm;c 195:3 rwm"},
        {gpus4, 0, one, 1, ""},
        /* plain files give no rule; a device shared with an allowed GPU is
         * never denied; a device shared by two denied GPUs is denied once */
        {mixed, 4, zero, 1, "b 8:16 rwm"},
        {mixed, 4, one, 1, "c 195:0 rwm;b 8:16 rwm"},
        {mixed, 4, none, 0, "c 195:0 rwm;b 8:16 rwm"},
        {mixed, 4, three, 1, "b 8:16 rwm"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        rules_text(cases[i].gpus, cases[i].n, cases[i].allowed, cases[i].na, &sb);
        if (strcmp(loom_sbuf_str(&sb), cases[i].want) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, loom_sbuf_str(&sb), cases[i].want);
        loom_sbuf_free(&sb);
    }
}

static void test_devcg_stat(void **state)
{
    loom_devcg_gpu_t g = {5, 'x', 1, 1};
    loom_devcg_stat("/dev/null", &g);
    assert_int_equal(g.kind, 'c');
    assert_int_equal(g.major, 1);
    assert_int_equal(g.minor, 3);
    assert_int_equal(g.index, 5);
    loom_devcg_stat("test_devcg.c", &g); /* cwd is tests/unit: a plain file */
    assert_int_equal(g.kind, 0);
    loom_devcg_stat("/nonexistent/gpu0", &g);
    assert_int_equal(g.kind, 0);
    loom_devcg_stat(NULL, &g);
    assert_int_equal(g.kind, 0);
}

/* A root without devices.deny (cgroup v2, or not a cgroup at all) is refused
 * and leaves the output untouched. */
static void test_devcg_confine_unsupported(void **state)
{
    loom_strv_t deny = LOOM_STRV_INIT;
    loom_strv_add(&deny, "c 195:1 rwm");
    loom_devcg_t *cg = (loom_devcg_t *)&deny;
    loom_err_t err = {0};
    int rc =
        loom_devcg_confine("/nonexistent-devices-root", "n1", 5, 0, &deny, getpid(), &cg, &err);
    assert_int_equal(rc, -ENOTSUP);
    assert_ptr_equal(cg, (loom_devcg_t *)&deny);
    assert_non_null(strstr(err.msg, "/nonexistent-devices-root"));
    loom_devcg_release(NULL);
    loom_strv_free(&deny);
}

static void test_devcg_bpf_parse(void **state)
{
    static const struct {
        const char *line;
        int rc;
        char kind;
        uint32_t major, minor;
    } cases[] = {
        {"c 195:1 rwm", 0, 'c', 195, 1},
        {"b 8:16 rwm", 0, 'b', 8, 16},
        {"c 1:3 mwr", 0, 'c', 1, 3},
        {"c 1:3", 0, 'c', 1, 3},
        {"c 4095:1048575 rwm", 0, 'c', 4095, 1048575},
        {"", -EINVAL, 0, 0, 0},
        {"c", -EINVAL, 0, 0, 0},
        {"c ", -EINVAL, 0, 0, 0},
        {"a *:* rwm", -EINVAL, 0, 0, 0},
        {"c 195:* rwm", -EINVAL, 0, 0, 0},
        {"x 1:3 rwm", -EINVAL, 0, 0, 0},
        {"c 1-3 rwm", -EINVAL, 0, 0, 0},
        {"c :3 rwm", -EINVAL, 0, 0, 0},
        {"c 1:", -EINVAL, 0, 0, 0},
        {"c -1:3 rwm", -EINVAL, 0, 0, 0},
        {"c +1:3 rwm", -EINVAL, 0, 0, 0},
        {"c 4096:0 rwm", -EINVAL, 0, 0, 0},
        {"c 1:1048576 rwm", -EINVAL, 0, 0, 0},
        {"c 99999999999999999999:0 rwm", -EINVAL, 0, 0, 0},
        {"c 1:3 r", -EINVAL, 0, 0, 0}, /* the filter denies all access: no partial rules */
        {"c 1:3 rwmx", -EINVAL, 0, 0, 0},
        {"c 1:3 rrw", -EINVAL, 0, 0, 0},
        {"c 1:3  rwm", -EINVAL, 0, 0, 0},
        {"c 1:3 rwm ", -EINVAL, 0, 0, 0},
        {"c  1:3 rwm", -EINVAL, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_devcg_dev_t d = {'z', 7, 7};
        loom_err_t err = {0};
        int rc = loom_devcg_bpf_parse(cases[i].line, &d, &err);
        if (rc != cases[i].rc)
            fail_msg("case %zu '%s': rc %d, want %d", i, cases[i].line, rc, cases[i].rc);
        if (rc < 0) {
            char quoted[64];
            snprintf(quoted, sizeof(quoted), "'%s'", cases[i].line);
            assert_non_null(strstr(err.msg, quoted));
            assert_int_equal(d.kind, 'z'); /* untouched */
            continue;
        }
        assert_int_equal(d.kind, cases[i].kind);
        assert_int_equal(d.major, cases[i].major);
        assert_int_equal(d.minor, cases[i].minor);
    }
}

/* Every jump lands inside the program; the three tests of each device skip
 * to the next device, its goto lands on "r0 = 0; exit". */
static void check_prog(const struct bpf_insn *prog, size_t len, const loom_devcg_dev_t *devs,
                       size_t n)
{
    const size_t deny = len - 2;
    for (size_t i = 0; i < len; i++) {
        uint8_t cls = BPF_CLASS(prog[i].code), op = BPF_OP(prog[i].code);
        if (cls != BPF_JMP || op == BPF_EXIT)
            continue;
        long to = (long)i + 1 + prog[i].off;
        if (to <= (long)i || to >= (long)len)
            fail_msg("insn %zu jumps to %ld (length %zu)", i, to, len);
    }
    for (size_t d = 0; d < n; d++) {
        size_t at = 4 + 4 * d;
        for (size_t t = 0; t < 3; t++) {
            assert_int_equal(prog[at + t].code, BPF_JMP | BPF_JNE | BPF_K);
            assert_int_equal(at + t + 1 + prog[at + t].off, at + 4);
        }
        assert_int_equal(prog[at].imm,
                         devs[d].kind == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
        assert_int_equal(prog[at + 1].imm, devs[d].major);
        assert_int_equal(prog[at + 2].imm, devs[d].minor);
        assert_int_equal(prog[at + 3].code, BPF_JMP | BPF_JA);
        assert_int_equal(at + 3 + 1 + prog[at + 3].off, deny);
    }
    size_t allow = 4 + 4 * n;
    assert_int_equal(prog[allow].imm, 1);
    assert_int_equal(prog[allow + 1].code, BPF_JMP | BPF_EXIT);
    if (n) {
        assert_int_equal(prog[deny].code, BPF_ALU64 | BPF_MOV | BPF_K);
        assert_int_equal(prog[deny].imm, 0);
    }
    assert_int_equal(prog[len - 1].code, BPF_JMP | BPF_EXIT);
}

static void test_devcg_bpf_build(void **state)
{
    static const loom_devcg_dev_t devs[] = {{'c', 195, 1}, {'b', 8, 16}, {'c', 4095, 1048575}};
    static const struct {
        size_t n, len;
    } cases[] = {{0, 6}, {1, 12}, {3, 20}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct bpf_insn prog[32];
        memset(prog, 0xAA, sizeof(prog));
        assert_int_equal(loom_devcg_bpf_len(cases[i].n), cases[i].len);
        assert_int_equal(loom_devcg_bpf_build(devs, cases[i].n, prog), cases[i].len);
        assert_int_equal(prog[cases[i].len].code, 0xAA); /* nothing written past it */
        check_prog(prog, cases[i].len, devs, cases[i].n);
    }
    /* the largest filter still reaches its deny block with a 16-bit offset */
    loom_devcg_dev_t *many = calloc(LOOM_DEVCG_BPF_MAX, sizeof(*many));
    for (size_t i = 0; i < LOOM_DEVCG_BPF_MAX; i++)
        many[i] = (loom_devcg_dev_t){'c', 195, (uint32_t)i};
    size_t len = loom_devcg_bpf_len(LOOM_DEVCG_BPF_MAX);
    struct bpf_insn *prog = calloc(len, sizeof(*prog));
    assert_int_equal(loom_devcg_bpf_build(many, LOOM_DEVCG_BPF_MAX, prog), len);
    check_prog(prog, len, many, LOOM_DEVCG_BPF_MAX);
    free(prog);
    free(many);
}

/* Refused before any system call: too many rules, a malformed one. */
static void test_devcg_bpf_attach_refused(void **state)
{
    loom_strv_t deny = LOOM_STRV_INIT;
    loom_err_t err = {0};
    for (int i = 0; i <= LOOM_DEVCG_BPF_MAX; i++) {
        char rule[32];
        snprintf(rule, sizeof(rule), "c 195:%d rwm", i);
        loom_strv_add(&deny, rule);
    }
    assert_int_equal(loom_devcg_bpf_attach("/nonexistent", &deny, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "257"));
    loom_strv_free(&deny);
    loom_strv_add(&deny, "c 195:0 rwm");
    loom_strv_add(&deny, "c 195:x rwm");
    assert_int_equal(loom_devcg_bpf_attach("/nonexistent", &deny, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'c 195:x rwm'"));
    loom_strv_free(&deny);
}

/* The real thing, as root: a cgroup2 hierarchy mounted on a temporary
 * directory (beside the host's v1 hierarchies), a job cgroup in it, a child
 * confined to a step without /dev/null (c 1:3). */
typedef struct v2fix {
    char dir[64];  /* the mount point ("" until made) */
    char job[128]; /* dir/test_devcg.<pid>: unique, as every cgroup2 mount is the same tree */
    bool mounted;
    pid_t child;
    int go; /* the pipe's write end: the child opens the devices once it reads a byte */
} v2fix_t;

static int v2_setup(void **state)
{
    v2fix_t *f = calloc(1, sizeof(*f));
    f->child = -1;
    f->go = -1;
    *state = f;
    return 0;
}

static void v2_write(const char *dir, const char *file, const char *value)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY);
    if (fd >= 0) {
        if (write(fd, value, strlen(value)) < 0)
            fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        close(fd);
    }
}

/* Undo whatever was done, failed test or not: nothing stays mounted. */
static int v2_teardown(void **state)
{
    v2fix_t *f = *state;
    if (f->go >= 0)
        close(f->go); /* the child reads EOF and exits */
    if (f->child > 0)
        waitpid(f->child, NULL, 0);
    if (f->mounted) {
        char me[32], step[160];
        snprintf(me, sizeof(me), "%d", (int)getpid());
        v2_write(f->dir, "cgroup.procs", me);
        snprintf(step, sizeof(step), "%s/step_1.0", f->job);
        rmdir(step);
        rmdir(f->job);
        umount2(f->dir, MNT_DETACH);
    }
    if (f->dir[0])
        rmdir(f->dir);
    free(f);
    return 0;
}

/* The child: wait for the go, then try the devices. Exit code: bit 0 set
 * when /dev/null was not refused with EPERM, bit 1 when /dev/zero failed,
 * 4 when no go came. */
static void v2_child(int go)
{
    char c;
    if (read(go, &c, 1) != 1)
        _exit(4);
    int rc = 0, fd = open("/dev/null", O_RDONLY);
    if (fd >= 0 || errno != EPERM)
        rc |= 1;
    fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        rc |= 2;
    _exit(rc);
}

static void v2_start_child(v2fix_t *f)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    f->child = fork();
    assert_true(f->child >= 0);
    if (f->child == 0) {
        close(p[1]);
        v2_child(p[0]);
    }
    close(p[0]);
    f->go = p[1];
}

static void test_devcg_v2_enforced(void **state)
{
    v2fix_t *f = *state;
    if (geteuid() != 0)
        skip(); /* mount, cgroups and bpf need root */
    snprintf(f->dir, sizeof(f->dir), "/tmp/loom-devcg-XXXXXX");
    if (!mkdtemp(f->dir)) {
        f->dir[0] = '\0';
        skip();
    }
    if (mount("none", f->dir, "cgroup2", 0, NULL) < 0)
        skip(); /* no cgroup2 here */
    f->mounted = true;
    snprintf(f->job, sizeof(f->job), "%s/test_devcg.%d", f->dir, (int)getpid());
    assert_int_equal(mkdir(f->job, 0755), 0);
    v2_start_child(f);

    loom_strv_t deny = LOOM_STRV_INIT;
    loom_strv_add(&deny, "c 1:3 rwm");
    loom_devcg_t *cg = NULL;
    loom_err_t err = {0};
    int rc = loom_devcg_confine(f->job, "n1", 1, 0, &deny, f->child, &cg, &err);
    loom_strv_free(&deny);
    if (rc < 0)
        fail_msg("confine: %d %s", rc, err.msg);

    char procs[192], want[32], got[64] = "";
    snprintf(procs, sizeof(procs), "%s/step_1.0/cgroup.procs", f->job);
    FILE *fp = fopen(procs, "r");
    assert_non_null(fp);
    assert_non_null(fgets(got, sizeof(got), fp));
    fclose(fp);
    snprintf(want, sizeof(want), "%d\n", (int)f->child);
    assert_string_equal(got, want);

    assert_int_equal(write(f->go, "g", 1), 1);
    int status = 0;
    assert_int_equal(waitpid(f->child, &status, 0), f->child);
    f->child = -1;
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    /* the test process was never in the step: "back" puts it in the job */
    loom_devcg_release(cg);
    char step[160];
    snprintf(step, sizeof(step), "%s/step_1.0", f->job);
    assert_int_equal(access(step, F_OK), -1);
    assert_int_equal(errno, ENOENT);
}

/* A malformed rule on a v2 directory: the error names it and no step
 * cgroup is left. */
static void test_devcg_v2_bad_rule(void **state)
{
    v2fix_t *f = *state;
    if (geteuid() != 0)
        skip();
    snprintf(f->dir, sizeof(f->dir), "/tmp/loom-devcg-XXXXXX");
    if (!mkdtemp(f->dir)) {
        f->dir[0] = '\0';
        skip();
    }
    if (mount("none", f->dir, "cgroup2", 0, NULL) < 0)
        skip();
    f->mounted = true;
    snprintf(f->job, sizeof(f->job), "%s/test_devcg.%d", f->dir, (int)getpid());
    assert_int_equal(mkdir(f->job, 0755), 0);
    loom_strv_t deny = LOOM_STRV_INIT;
    loom_strv_add(&deny, "c 1:3 rwm");
    loom_strv_add(&deny, "c 1:3 r");
    loom_devcg_t *cg = (loom_devcg_t *)&deny;
    loom_err_t err = {0};
    assert_int_equal(loom_devcg_confine(f->job, "n1", 2, 5, &deny, getpid(), &cg, &err), -EINVAL);
    loom_strv_free(&deny);
    assert_ptr_equal(cg, (loom_devcg_t *)&deny);
    assert_non_null(strstr(err.msg, "'c 1:3 r'"));
    char step[160];
    snprintf(step, sizeof(step), "%s/step_2.5", f->job);
    assert_int_equal(access(step, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devcg_rules),
        cmocka_unit_test(test_devcg_stat),
        cmocka_unit_test(test_devcg_confine_unsupported),
        cmocka_unit_test(test_devcg_bpf_parse),
        cmocka_unit_test(test_devcg_bpf_build),
        cmocka_unit_test(test_devcg_bpf_attach_refused),
        cmocka_unit_test_setup_teardown(test_devcg_v2_enforced, v2_setup, v2_teardown),
        cmocka_unit_test_setup_teardown(test_devcg_v2_bad_rule, v2_setup, v2_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

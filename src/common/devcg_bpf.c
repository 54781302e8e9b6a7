/*
 * devcg_bpf.c - the eBPF device filter of a step's cgroup v2 directory.
 * See devcg_bpf.h.
 */
#include "common/devcg_bpf.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEVCG_BPF_MAJOR_MAX 0xFFFu   /* 12 bits */
#define DEVCG_BPF_MINOR_MAX 0xFFFFFu /* 20 bits */
#define DEVCG_BPF_HEAD      4        /* the three loads and the mask */
#define DEVCG_BPF_PER_DEV   4
#define DEVCG_BPF_LOG       8192 /* verifier log bytes kept when a load fails */

/* A decimal number in [0, max] at *p; advances *p past it. */
static int devcg_bpf_num(const char **p, unsigned long max, uint32_t *out)
{
    if (!isdigit((unsigned char)**p))
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long v = strtoul(*p, &end, 10);
    if (errno || v > max)
        return -EINVAL;
    *out = (uint32_t)v;
    *p = end;
    return 0;
}

/* "" or " " and r, w and m once each, in any order. */
static bool devcg_bpf_access(const char *p)
{
    if (!*p)
        return true;
    return p[0] == ' ' && strlen(p + 1) == 3 && strchr(p + 1, 'r') && strchr(p + 1, 'w') &&
           strchr(p + 1, 'm');
}

int loom_devcg_bpf_parse(const char *line, loom_devcg_dev_t *d, loom_err_t *err)
{
    loom_devcg_dev_t v = {line[0], 0, 0};
    const char *p = line;
    bool ok = (v.kind == 'c' || v.kind == 'b') && line[1] == ' ';
    if (ok) {
        p += 2;
        ok = devcg_bpf_num(&p, DEVCG_BPF_MAJOR_MAX, &v.major) == 0 && *p == ':';
    }
    if (ok) {
        p++;
        ok = devcg_bpf_num(&p, DEVCG_BPF_MINOR_MAX, &v.minor) == 0 && devcg_bpf_access(p);
    }
    if (!ok)
        return loom_errf(err, -EINVAL, "bad device rule '%s' (want 'c|b MAJOR:MINOR rwm')", line);
    *d = v;
    return 0;
}

static struct bpf_insn devcg_bpf_insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off,
                                      int32_t imm)
{
    struct bpf_insn in = {.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
    return in;
}

size_t loom_devcg_bpf_len(size_t n)
{
    /* no device: no deny block (the verifier refuses unreachable code) */
    return DEVCG_BPF_HEAD + DEVCG_BPF_PER_DEV * n + (n ? 4 : 2);
}

/* r0 = ret; exit */
static size_t devcg_bpf_ret(struct bpf_insn *prog, size_t k, int32_t ret)
{
    prog[k++] = devcg_bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, ret);
    prog[k++] = devcg_bpf_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return k;
}

size_t loom_devcg_bpf_build(const loom_devcg_dev_t *devs, size_t n, struct bpf_insn *prog)
{
    const uint8_t ldw = BPF_LDX | BPF_MEM | BPF_W, jne = BPF_JMP | BPF_JNE | BPF_K;
    const size_t deny = loom_devcg_bpf_len(n) - 2;
    size_t k = 0;
    prog[k++] = devcg_bpf_insn(ldw, BPF_REG_2, BPF_REG_1,
                               offsetof(struct bpf_cgroup_dev_ctx, access_type), 0);
    prog[k++] = devcg_bpf_insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF);
    prog[k++] =
        devcg_bpf_insn(ldw, BPF_REG_3, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, major), 0);
    prog[k++] =
        devcg_bpf_insn(ldw, BPF_REG_4, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, minor), 0);
    for (size_t i = 0; i < n; i++) {
        int32_t type = devs[i].kind == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
        /* a mismatch skips the rest of this device's four instructions */
        prog[k++] = devcg_bpf_insn(jne, BPF_REG_2, 0, 3, type);
        prog[k++] = devcg_bpf_insn(jne, BPF_REG_3, 0, 2, (int32_t)devs[i].major);
        prog[k++] = devcg_bpf_insn(jne, BPF_REG_4, 0, 1, (int32_t)devs[i].minor);
        prog[k] = devcg_bpf_insn(BPF_JMP | BPF_JA, 0, 0, (int16_t)(deny - k - 1), 0);
        k++;
    }
    k = devcg_bpf_ret(prog, k, 1);
    if (n)
        k = devcg_bpf_ret(prog, k, 0);
    return k;
}

static int devcg_bpf_sys(int cmd, union bpf_attr *a)
{
    return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/* Load the program; log (when not NULL) receives the verifier's log. */
static int devcg_bpf_load(const struct bpf_insn *prog, size_t len, char *log, size_t logsz)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    a.expected_attach_type = BPF_CGROUP_DEVICE;
    a.insns = (uint64_t)(uintptr_t)prog;
    a.insn_cnt = (uint32_t)len;
    a.license = (uint64_t)(uintptr_t) "GPL";
    memcpy(a.prog_name, "loom_devcg", sizeof("loom_devcg"));
    if (log) {
        a.log_level = 1;
        a.log_buf = (uint64_t)(uintptr_t)log;
        a.log_size = (uint32_t)logsz;
    }
    int fd = devcg_bpf_sys(BPF_PROG_LOAD, &a);
    return fd < 0 ? -errno : fd;
}

/* The end of the verifier's log (where it says what it refused), one line. */
static const char *devcg_bpf_logtail(char *log)
{
    size_t n = strlen(log);
    while (n && (log[n - 1] == '\n' || log[n - 1] == ' '))
        log[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (log[i] == '\n')
            log[i] = ' ';
    return n > 200 ? log + n - 200 : log;
}

static int devcg_bpf_load_err(const struct bpf_insn *prog, size_t len, loom_err_t *err)
{
    int fd = devcg_bpf_load(prog, len, NULL, 0);
    if (fd >= 0)
        return fd;
    char *log = loom_xcalloc(1, DEVCG_BPF_LOG);
    int again = devcg_bpf_load(prog, len, log, DEVCG_BPF_LOG); /* only to read why */
    if (again >= 0)
        close(again);
    loom_errf(err, fd, "cannot load the device filter: %s%s%s", strerror(-fd),
              *log ? "; verifier: " : "", devcg_bpf_logtail(log));
    free(log);
    return fd;
}

static int devcg_bpf_attach_fd(int prog_fd, const char *dir)
{
    int cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg < 0)
        return -errno;
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.target_fd = (uint32_t)cg;
    a.attach_bpf_fd = (uint32_t)prog_fd;
    a.attach_type = BPF_CGROUP_DEVICE;
    a.attach_flags = BPF_F_ALLOW_MULTI;
    int rc = devcg_bpf_sys(BPF_PROG_ATTACH, &a) < 0 ? -errno : 0;
    close(cg);
    return rc;
}

/* Parse all lines into devs; 0 or -EINVAL naming the bad one. */
static int devcg_bpf_parse_all(const loom_strv_t *deny, loom_devcg_dev_t *devs, loom_err_t *err)
{
    for (size_t i = 0; i < deny->n; i++) {
        int rc = loom_devcg_bpf_parse(deny->v[i], &devs[i], err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int loom_devcg_bpf_attach(const char *dir, const loom_strv_t *deny, loom_err_t *err)
{
    if (deny->n > LOOM_DEVCG_BPF_MAX)
        return loom_errf(err, -E2BIG,
                         "too many device rules for the device filter: %zu (at most %d)", deny->n,
                         LOOM_DEVCG_BPF_MAX);
    loom_devcg_dev_t *devs = loom_xcalloc(deny->n + 1, sizeof(*devs));
    int rc = devcg_bpf_parse_all(deny, devs, err);
    if (rc < 0) {
        free(devs);
        return rc;
    }
    size_t len = loom_devcg_bpf_len(deny->n);
    struct bpf_insn *prog = loom_xcalloc(len, sizeof(*prog));
    loom_devcg_bpf_build(devs, deny->n, prog);
    int fd = devcg_bpf_load_err(prog, len, err);
    rc = fd;
    if (fd >= 0) {
        rc = devcg_bpf_attach_fd(fd, dir);
        close(fd); /* the attachment keeps the program */
        if (rc < 0)
            loom_errf(err, rc, "cannot attach the device filter to %s: %s", dir, strerror(-rc));
    }
    free(prog);
    free(devs);
    return rc < 0 ? rc : 0;
}

/*
 * devcg_bpf.h - the eBPF device filter that confines a job step to its GPUs
 * on cgroup v2 hosts, where the devices controller is gone and the kernel
 * asks a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the cgroup instead
 * (as runc, crun and systemd do). Used by devcg.c; no libbpf: the program is
 * built here as raw instructions and loaded with the bpf(2) system call.
 *
 * Entry points:
 *  - loom_devcg_bpf_parse(): one deny line of loom_devcg_rules(),
 *    "c MAJ:MIN rwm" or "b MAJ:MIN rwm", into a device (pure);
 *  - loom_devcg_bpf_len(), loom_devcg_bpf_build(): the program (pure). Shape:
 *      r2 = ctx->access_type & 0xFFFF (the device type); r3 = major; r4 = minor
 *      per device: if r2 != type, r3 != major or r4 != minor: next device;
 *                   else goto deny
 *      r0 = 1; exit                  (allow: every other device)
 *      deny: r0 = 0; exit            (only when there are devices)
 *  - loom_devcg_bpf_attach(): parse, build, load and attach the program to
 *    a cgroup v2 directory (BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI, so filters
 *    of the cgroups above still apply); root only.
 * Invariants: a filter denies any access to the devices listed and allows
 * everything else; at most LOOM_DEVCG_BPF_MAX devices; majors fit 12 bits and
 * minors 20 bits (Linux's dev_t), so the 32-bit immediates compare exactly.
 */
#ifndef LOOM_COMMON_DEVCG_BPF_H
#define LOOM_COMMON_DEVCG_BPF_H

#include "common/err.h"
#include "common/strv.h"

#include <stddef.h>
#include <stdint.h>

#define LOOM_DEVCG_BPF_MAX 256 /* devices one filter may deny */

struct bpf_insn; /* <linux/bpf.h> */

/* One denied device. */
typedef struct loom_devcg_dev {
    char kind; /* 'c' or 'b' */
    uint32_t major, minor;
} loom_devcg_dev_t;

/* Parse a deny line ("c 195:1 rwm"; the access must be all of rwm, since the
 * filter denies every access). -EINVAL naming the line when malformed. */
int loom_devcg_bpf_parse(const char *line, loom_devcg_dev_t *d, loom_err_t *err);

/* The number of instructions of a filter for n devices. */
size_t loom_devcg_bpf_len(size_t n);

/* Write the filter for devs[0..n) into prog (room for loom_devcg_bpf_len(n)
 * instructions); returns the count written. */
size_t loom_devcg_bpf_build(const loom_devcg_dev_t *devs, size_t n, struct bpf_insn *prog);

/* Deny the devices of the deny lines to the cgroup v2 directory dir: build,
 * load and attach the filter (the attachment holds it; no fd is kept).
 * -E2BIG over LOOM_DEVCG_BPF_MAX lines, -EINVAL for a malformed line, the
 * system call's -errno otherwise (with the verifier's log when it refused). */
int loom_devcg_bpf_attach(const char *dir, const loom_strv_t *deny, loom_err_t *err);

#endif

/*
 * err.h - Loom's error codes and the error-text buffer.
 *
 * Functions return 0 (or a count) on success and a negative code on failure:
 * -errno for POSIX errors (below 1000), -LOOM_E* for Loom's own (1000 and up).
 * Where Loom mirrors a Slurm error, loom_strerror() gives Slurm's wording, so
 * clients print exactly what a Slurm client prints.
 *
 * User-facing detail goes into an optional loom_err_t filled by loom_errf():
 *
 *     return loom_errf(err, -LOOM_EPARSE, "bad hostlist '%s'", expr);
 *
 * loom_errf() returns its code argument, ignores a NULL buffer, and writes
 * only the buffer: callers keep the "no side effects on failure" rule.
 */
#ifndef LOOM_ERR_H
#define LOOM_ERR_H

#include <stddef.h>

enum {
    LOOM_EBASE = 1000,
    /* Generic Loom errors. */
    LOOM_EPARSE = 1000, /* input text did not parse */
    LOOM_ERANGE,        /* a value out of its bounds */
    LOOM_ETOOBIG,       /* a size or count over its limit */
    LOOM_ECONFIG,       /* invalid configuration */
    LOOM_EINTERNAL,     /* a bug: should not happen */
    LOOM_EUSAGE,        /* command-line usage: unknown option, missing argument */
    /* Wire protocol (docs/proto/rpc.md §Errors). */
    LOOM_EPROTO = 1100, /* malformed message */
    LOOM_EFRAME_TOOBIG, /* frame over the configured maximum */
    LOOM_EFRAME_TRUNC,  /* connection closed inside a frame */
    LOOM_EMSG_TYPE,     /* unknown message type */
    LOOM_EMSG_VERSION,  /* protocol version outside the window */
    LOOM_EAUTH,         /* authentication failed */
    LOOM_EPERM,         /* authenticated but not allowed */
    LOOM_ECONNECT,      /* cannot reach the daemon */
    LOOM_ETIMEDOUT,     /* no reply in time */
    /* Mirrors of Slurm's errors, with Slurm's wording (CLI_SPEC §0.10). */
    LOOM_EINVAL_PARTITION = 2000,
    LOOM_ENODE_CONFIG, /* Requested node configuration is not available */
    LOOM_EINVAL_JOBID,
    LOOM_EQOS_POLICY,
    LOOM_EINVAL_ACCOUNT,
    LOOM_EINVAL_QOS,
    LOOM_EINVAL_TIME,
    LOOM_EINVAL_GRES,
    LOOM_EINVAL_NODECOUNT,
    LOOM_EINVAL_DEPEND,
    LOOM_EALREADY_DONE,
    LOOM_EACCESS,
    LOOM_EINVAL_NODENAME,
    LOOM_EDISABLED, /* Job is no longer pending execution / not allowed now */
    LOOM_EINVAL_TASKS,
    LOOM_EINVAL_MEM,
    LOOM_EINVAL_ARRAY,
    LOOM_EJOB_LIMIT,  /* too many jobs (MaxJobCount) */
    LOOM_EPENDING,    /* job is pending execution */
    LOOM_ECONSTRAINT, /* invalid feature specification */
    LOOM_EPART_TIME,  /* partition time limit */
    LOOM_EPART_NODES, /* partition node limit */
    LOOM_EINVAL_LICENSE,
    LOOM_EINVAL_BEGIN,
    LOOM_ENOT_SUPPORTED,
    LOOM_ETOO_MANY_CPUS, /* More processors requested than permitted */
    LOOM_ENODES_BUSY,    /* Requested nodes are busy (a step must wait) */
    LOOM_ESTEP_LAUNCH,   /* a step's tasks could not be launched on a node */
    LOOM_EPART_GROUP,    /* User's group not permitted to use this partition (AllowGroups) */
    LOOM_EJOB_FINISHED,  /* Job has already finished (hold, release, update of an ended job) */
    LOOM_EINVAL_RESV,    /* Requested reservation is invalid */
    LOOM_EJOB_SUSPENDED, /* suspend of a job already suspended */
    LOOM_ENOT_SUSPENDED, /* resume of a job that is not suspended */
    LOOM_EBATCH_ONLY,    /* requeue of a salloc/srun allocation */
    LOOM_EJOB_HELD,      /* a priority given to a held job (release it first) */
    LOOM_EPRIO_RESET,    /* a user lowering a priority: change nice instead */
    LOOM_EUSER_ID,       /* another user's job held, released or updated: "Invalid user id" */
    LOOM_EEND
};

/* The error-text buffer: a message a human can read, naming what was wrong. */
typedef struct loom_err {
    int code;      /* the code last set, 0 if none */
    char msg[512]; /* NUL-terminated */
} loom_err_t;

/* Fill err (when not NULL) and return code. */
int loom_errf(loom_err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix an existing message: "prefix: old message". Returns err->code. */
int loom_err_prefix(loom_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear the buffer. Accepts NULL. */
void loom_err_clear(loom_err_t *err);

/* Text for a code (negative or positive accepted); static storage, never NULL. */
const char *loom_strerror(int code);

/* The symbolic name of a code ("LOOM_EPARSE", "ENOENT"), used on the wire. */
const char *loom_errname(int code);

/* Inverse of loom_errname; returns 0 when the name is unknown. */
int loom_errcode(const char *name);

#endif

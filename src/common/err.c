/*
 * err.c - error codes, their texts (Slurm's wording where mirrored) and the
 * error-text buffer. See err.h.
 */
#include "common/err.h"
#include "common/sbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int code;
    const char *name;
    const char *text;
} err_entry_t;

/* One table; loom_strerror, loom_errname and loom_errcode all read it. */
static const err_entry_t err_table[] = {
    {LOOM_EPARSE, "LOOM_EPARSE", "Parse error"},
    {LOOM_ERANGE, "LOOM_ERANGE", "Value out of range"},
    {LOOM_ETOOBIG, "LOOM_ETOOBIG", "Size limit exceeded"},
    {LOOM_ECONFIG, "LOOM_ECONFIG", "Invalid configuration"},
    {LOOM_EINTERNAL, "LOOM_EINTERNAL", "Internal error"},
    {LOOM_EUSAGE, "LOOM_EUSAGE", "Invalid command line usage"},
    {LOOM_EPROTO, "LOOM_EPROTO", "Malformed message"},
    {LOOM_EFRAME_TOOBIG, "LOOM_EFRAME_TOOBIG", "Message too large"},
    {LOOM_EFRAME_TRUNC, "LOOM_EFRAME_TRUNC", "Message truncated"},
    {LOOM_EMSG_TYPE, "LOOM_EMSG_TYPE", "Unknown message type"},
    {LOOM_EMSG_VERSION, "LOOM_EMSG_VERSION", "Protocol version not supported"},
    {LOOM_EAUTH, "LOOM_EAUTH", "Protocol authentication error"},
    {LOOM_EPERM, "LOOM_EPERM", "Access/permission denied"},
    {LOOM_ECONNECT, "LOOM_ECONNECT", "Unable to contact slurm controller (connect failure)"},
    {LOOM_ETIMEDOUT, "LOOM_ETIMEDOUT", "Socket timed out on send/recv operation"},
    {LOOM_EINVAL_PARTITION, "LOOM_EINVAL_PARTITION", "Invalid partition name specified"},
    {LOOM_ENODE_CONFIG, "LOOM_ENODE_CONFIG", "Requested node configuration is not available"},
    {LOOM_EINVAL_JOBID, "LOOM_EINVAL_JOBID", "Invalid job id specified"},
    {LOOM_EQOS_POLICY, "LOOM_EQOS_POLICY",
     "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"},
    {LOOM_EINVAL_ACCOUNT, "LOOM_EINVAL_ACCOUNT",
     "Invalid account or account/partition combination specified"},
    {LOOM_EINVAL_QOS, "LOOM_EINVAL_QOS", "Invalid qos specification"},
    {LOOM_EINVAL_TIME, "LOOM_EINVAL_TIME",
     "Requested time limit is invalid (missing or exceeds some limit)"},
    {LOOM_EINVAL_GRES, "LOOM_EINVAL_GRES", "Invalid generic resource (gres) specification"},
    {LOOM_EINVAL_NODECOUNT, "LOOM_EINVAL_NODECOUNT", "Node count specification invalid"},
    {LOOM_EINVAL_DEPEND, "LOOM_EINVAL_DEPEND", "Job dependency problem"},
    {LOOM_EALREADY_DONE, "LOOM_EALREADY_DONE", "Job/step already completing or completed"},
    {LOOM_EACCESS, "LOOM_EACCESS", "Access/permission denied"},
    {LOOM_EINVAL_NODENAME, "LOOM_EINVAL_NODENAME", "Invalid node name specified"},
    {LOOM_EDISABLED, "LOOM_EDISABLED", "Job is no longer pending execution"},
    {LOOM_EINVAL_TASKS, "LOOM_EINVAL_TASKS", "Task count specification invalid"},
    {LOOM_EINVAL_MEM, "LOOM_EINVAL_MEM", "Memory required by task is not available"},
    {LOOM_EINVAL_ARRAY, "LOOM_EINVAL_ARRAY", "Invalid job array specification"},
    {LOOM_EJOB_LIMIT, "LOOM_EJOB_LIMIT",
     "Slurm temporarily unable to accept job, sleeping and retrying"},
    {LOOM_EPENDING, "LOOM_EPENDING", "Job is pending execution"},
    {LOOM_ECONSTRAINT, "LOOM_ECONSTRAINT", "Invalid feature specification"},
    {LOOM_EPART_TIME, "LOOM_EPART_TIME",
     "Requested time limit is invalid (missing or exceeds some limit)"},
    {LOOM_EPART_NODES, "LOOM_EPART_NODES", "Node count specification invalid"},
    {LOOM_EINVAL_LICENSE, "LOOM_EINVAL_LICENSE", "Invalid license specification"},
    {LOOM_EINVAL_BEGIN, "LOOM_EINVAL_BEGIN", "Invalid time specified"},
    {LOOM_ENOT_SUPPORTED, "LOOM_ENOT_SUPPORTED", "Requested operation is presently disabled"},
    {LOOM_ETOO_MANY_CPUS, "LOOM_ETOO_MANY_CPUS", "More processors requested than permitted"},
    {LOOM_ENODES_BUSY, "LOOM_ENODES_BUSY", "Requested nodes are busy"},
    {LOOM_ESTEP_LAUNCH, "LOOM_ESTEP_LAUNCH", "Task launch failed"},
    {LOOM_EPART_GROUP, "LOOM_EPART_GROUP", "User's group not permitted to use this partition"},
    {LOOM_EJOB_FINISHED, "LOOM_EJOB_FINISHED", "Job has already finished"},
    {LOOM_EINVAL_RESV, "LOOM_EINVAL_RESV", "Requested reservation is invalid"},
    {LOOM_EJOB_SUSPENDED, "LOOM_EJOB_SUSPENDED",
     "Job is current suspended, requested operation disabled"},
    {LOOM_ENOT_SUSPENDED, "LOOM_ENOT_SUSPENDED", "Job is not suspended"},
    {LOOM_EBATCH_ONLY, "LOOM_EBATCH_ONLY", "Only batch jobs are accepted or processed"},
    {LOOM_EJOB_HELD, "LOOM_EJOB_HELD", "Job is in held state, pending scheduler release"},
    {LOOM_EPRIO_RESET, "LOOM_EPRIO_RESET",
     "Changes to job priority are not persistent, change nice instead"},
    {LOOM_EUSER_ID, "LOOM_EUSER_ID", "Invalid user id"},
};

static const err_entry_t *err_find(int code)
{
    if (code < 0)
        code = -code;
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (err_table[i].code == code)
            return &err_table[i];
    return NULL;
}

int loom_errf(loom_err_t *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int loom_err_prefix(loom_err_t *err, const char *fmt, ...)
{
    if (!err)
        return 0;
    char prefix[256];
    char old[sizeof(err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s: %s", prefix, old);
    size_t n = sb.len < sizeof(err->msg) - 1 ? sb.len : sizeof(err->msg) - 1;
    memcpy(err->msg, loom_sbuf_str(&sb), n);
    err->msg[n] = '\0';
    loom_sbuf_free(&sb);
    return err->code;
}

void loom_err_clear(loom_err_t *err)
{
    if (!err)
        return;
    err->code = 0;
    err->msg[0] = '\0';
}

const char *loom_strerror(int code)
{
    if (code == 0)
        return "No error";
    const err_entry_t *e = err_find(code);
    if (e)
        return e->text;
    int pos = code < 0 ? -code : code;
    if (pos < LOOM_EBASE)
        return strerror(pos);
    return "Unknown error";
}

const char *loom_errname(int code)
{
    if (code == 0)
        return "OK";
    const err_entry_t *e = err_find(code);
    if (e)
        return e->name;
    int pos = code < 0 ? -code : code;
    if (pos < LOOM_EBASE) {
        const char *n = strerrorname_np(pos);
        if (n)
            return n;
    }
    return "LOOM_EUNKNOWN";
}

int loom_errcode(const char *name)
{
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (strcmp(err_table[i].name, name) == 0)
            return -err_table[i].code;
    for (int e = 1; e < 200; e++) {
        const char *n = strerrorname_np(e);
        if (n && strcmp(n, name) == 0)
            return -e;
    }
    return 0;
}

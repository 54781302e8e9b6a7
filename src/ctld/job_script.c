/* job_script.c - job scripts and environments in files, not in memory. See job_script.h. */
#include "ctld/job_script.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/job_array.h"
#include "ctld/job_mgr.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOB_SCRIPT_DIR    "scripts"
#define JOB_SCRIPT_PREFIX "job."

uint32_t ctld_job_script_owner(const ctld_job_t *job)
{
    return job->array_job_id ? job->array_job_id : job->id;
}

static void job_script_dir(const ctld_t *c, char *out, size_t size)
{
    snprintf(out, size, "%s/" JOB_SCRIPT_DIR, c->conf->state_save_location);
}

static void job_script_path(const ctld_t *c, uint32_t owner, char *out, size_t size)
{
    snprintf(out, size, "%s/" JOB_SCRIPT_DIR "/" JOB_SCRIPT_PREFIX "%u",
             c->conf->state_save_location, (unsigned)owner);
}

/* Description members that job fields hold (job_desc.c reads them into the
 * job at submission; the controller never reads them from job->desc). */
static const char *const job_script_kept_elsewhere[] = {
    "name",           "current_working_directory",
    "work_dir",       "standard_output",
    "std_out",        "output",
    "standard_error", "std_err",
    "error",          "standard_input",
    "std_in",         "input",
    "submit_host",    "alloc_sid",
    "submit_line",    "hold",
    "comment",        "mail_type",
    "mail_user",
};

json_t *ctld_job_script_desc(const json_t *desc)
{
    if (!json_is_object(desc))
        return NULL;
    json_t *kept = json_copy((json_t *)desc);
    for (size_t i = 0; i < sizeof(job_script_kept_elsewhere) / sizeof(*job_script_kept_elsewhere);
         i++)
        json_object_del(kept, job_script_kept_elsewhere[i]);
    if (json_object_size(kept))
        return kept;
    json_decref(kept);
    return NULL;
}

/* The file's text (malloc'd): one JSON object and a newline. */
static char *job_script_text(const char *script, const json_t *env, const json_t *desc, size_t *len)
{
    json_t *o = json_pack("{s:s, s:O}", "script", script ? script : "", "env",
                          json_is_array(env) ? env : json_array());
    if (o && json_is_object(desc))
        json_object_set(o, "desc", (json_t *)desc);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body)
        return NULL;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, body);
    loom_sbuf_addc(&sb, '\n');
    free(body);
    *len = sb.len;
    return loom_sbuf_detach(&sb);
}

static int job_script_write_file(const char *path, const char *text, size_t len)
{
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0;) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno != EINTR)
            rc = -errno;
        else if (n > 0)
            off += (size_t)n;
    }
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* Write text to the owner's file, creating the directory when missing. */
static int job_script_put(const ctld_t *c, uint32_t owner, const char *text, size_t len,
                          loom_err_t *err)
{
    char dir[PATH_MAX], path[PATH_MAX];
    job_script_dir(c, dir, sizeof(dir));
    job_script_path(c, owner, path, sizeof(path));
    int rc = job_script_write_file(path, text, len);
    if (rc == -ENOENT && (mkdir(dir, 0700) == 0 || errno == EEXIST))
        rc = job_script_write_file(path, text, len);
    if (rc < 0)
        return loom_errf(err, rc, "cannot write the batch script file %s: %s", path, strerror(-rc));
    return 0;
}

int ctld_job_script_save(const ctld_t *c, uint32_t owner, const char *script, const json_t *env,
                         const json_t *desc, loom_err_t *err)
{
    size_t len = 0;
    char *text = job_script_text(script, env, desc, &len);
    if (!text)
        return loom_errf(err, -LOOM_EINTERNAL, "job %u: cannot encode its script", owner);
    int rc = job_script_put(c, owner, text, len, err);
    free(text);
    return rc;
}

void ctld_job_script_replayed(const ctld_t *c, uint32_t owner, const json_t *rec)
{
    const json_t *script = json_object_get(rec, "script"), *env = json_object_get(rec, "env");
    if (!json_is_string(script) && !env)
        return;
    size_t len = 0;
    char *text =
        job_script_text(json_string_value(script), env, json_object_get(rec, "desc"), &len);
    char path[PATH_MAX];
    job_script_path(c, owner, path, sizeof(path));
    struct stat st;
    loom_err_t err = {0};
    if (text && (stat(path, &st) < 0 || (size_t)st.st_size != len) &&
        job_script_put(c, owner, text, len, &err) < 0)
        loom_error("job %u: %s", owner, err.msg);
    free(text);
}

int ctld_job_script_load(const ctld_t *c, const ctld_job_t *job, json_t *rec, loom_err_t *err)
{
    char path[PATH_MAX];
    job_script_path(c, ctld_job_script_owner(job), path, sizeof(path));
    json_error_t jerr;
    json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!o && access(path, F_OK) < 0)
        return loom_errf(err, -errno, "job %u: its batch script file %s cannot be read: %s",
                         job->id, path, strerror(errno));
    json_t *script = json_object_get(o, "script"), *env = json_object_get(o, "env");
    if (!json_is_string(script) || !json_is_array(env)) {
        int rc = loom_errf(err, -LOOM_EPARSE, "job %u: its batch script file %s is corrupt: %s",
                           job->id, path, o ? "no script or env" : jerr.text);
        json_decref(o);
        return rc;
    }
    json_object_set(rec, "script", script);
    json_object_set(rec, "env", env);
    if (json_is_object(json_object_get(o, "desc")))
        json_object_set(rec, "desc", json_object_get(o, "desc"));
    json_decref(o);
    return 0;
}

void ctld_job_script_purged(const ctld_t *c, const ctld_job_t *job)
{
    if (job->array && job->array->nrec > 1)
        return; /* other records of the array still use it */
    char path[PATH_MAX];
    job_script_path(c, ctld_job_script_owner(job), path, sizeof(path));
    if (unlink(path) < 0 && errno != ENOENT)
        loom_error("cannot remove %s: %s", path, strerror(errno));
}

/* "job.<n>" -> n; false for any other name (the tmp files included). */
static bool job_script_parse_name(const char *name, uint32_t *owner)
{
    size_t plen = strlen(JOB_SCRIPT_PREFIX);
    if (strncmp(name, JOB_SCRIPT_PREFIX, plen) != 0 || !name[plen])
        return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(name + plen, &end, 10);
    if (*end || errno || v == 0 || v > UINT32_MAX || name[plen] < '1' || name[plen] > '9')
        return false;
    *owner = (uint32_t)v;
    return true;
}

void ctld_job_script_sweep(const ctld_t *c)
{
    char dir[PATH_MAX];
    job_script_dir(c, dir, sizeof(dir));
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    size_t removed = 0;
    while ((de = readdir(d))) {
        uint32_t owner;
        bool tmp = strstr(de->d_name, ".tmp") != NULL;
        if (!tmp && (!job_script_parse_name(de->d_name, &owner) || ctld_job_find(c, owner) ||
                     ctld_array_find(c, owner)))
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        removed += unlink(path) == 0;
    }
    closedir(d);
    if (removed)
        loom_info("removed %zu batch script files no job uses", removed);
}

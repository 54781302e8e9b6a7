/*
 * loomd_gpus.c - the GPUs of this node (CLI_SPEC §13.1).
 *
 * From gres.conf beside slurm.conf (gresconf.h): the Name=gpu devices of this
 * node, one GPU per File= entry
 * in File order (that order gives the device indexes that
 * CUDA_VISIBLE_DEVICES carries), Count= GPUs without files, and Flags=
 * choosing the vendor variables. With AutoDetect=nvml, and when
 * libnvidia-ml.so.1 can be opened at run time, the devices NVML reports
 * replace the file lines (no build-time dependency on NVML). With neither,
 * the node's Gres=gpu count in slurm.conf gives GPUs without files.
 */
#include "noded/noded.h"

#include "common/gresconf.h"
#include "common/jobenv.h"
#include "common/log.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define GPUS_MAX 1024

static void gpus_add(loom_noded_t *n, const char *type, const char *file)
{
    if (n->ngpus >= GPUS_MAX)
        return;
    n->gpus = loom_xreallocarray(n->gpus, n->ngpus + 1, sizeof(*n->gpus));
    loom_noded_gpu_t *g = &n->gpus[n->ngpus];
    g->type = type && *type ? loom_xstrdup(type) : NULL;
    g->file = file ? loom_xstrdup(file) : NULL;
    g->index = (uint32_t)n->ngpus;
    n->ngpus++;
}

void loom_noded_gpus_free(loom_noded_t *n)
{
    for (size_t i = 0; i < n->ngpus; i++) {
        free(n->gpus[i].type);
        free(n->gpus[i].file);
    }
    free(n->gpus);
    n->gpus = NULL;
    n->ngpus = 0;
}

/* gres.conf Flags= to the vendor variables jobenv sets. */
static unsigned gpus_env_flags(unsigned f)
{
    unsigned out = 0;
    if (f & LOOM_GRESF_NVIDIA_GPU_ENV)
        out |= LOOM_JOBENV_GPU_CUDA;
    if (f & LOOM_GRESF_AMD_GPU_ENV)
        out |= LOOM_JOBENV_GPU_ROCR;
    if (f & LOOM_GRESF_INTEL_GPU_ENV)
        out |= LOOM_JOBENV_GPU_ZE;
    if (f & LOOM_GRESF_OPENCL_ENV)
        out |= LOOM_JOBENV_GPU_OPENCL;
    if (f & LOOM_GRESF_NO_GPU_ENV)
        out |= LOOM_JOBENV_GPU_NONE;
    return out;
}

/* The gpu devices gres.conf gives this node; *nvml when AutoDetect=nvml. */
static int gpus_from_file(loom_noded_t *n, const char *path, bool *nvml, loom_err_t *err)
{
    loom_gresconf_t *g = NULL;
    loom_gres_devlist_t devs = {0};
    loom_strv_t warnings = LOOM_STRV_INIT;
    int rc = loom_gresconf_load(path, &g, err);
    if (rc == 0)
        rc = loom_gresconf_node_devices(g, n->conf, n->me, &devs, &warnings, err);
    for (size_t i = 0; i < warnings.n; i++)
        loom_info("%s", warnings.v[i]);
    if (rc == 0) {
        *nvml = devs.autodetect == LOOM_GRES_AUTODETECT_NVML;
        for (size_t i = 0; i < devs.n; i++) {
            if (strcmp(devs.v[i].name, "gpu") != 0)
                continue;
            n->gpu_env |= gpus_env_flags(devs.v[i].line->flags);
            for (uint64_t k = 0; k < (devs.v[i].file ? 1 : devs.v[i].count); k++)
                gpus_add(n, devs.v[i].type, devs.v[i].file);
        }
        loom_gres_devlist_free(&devs);
    }
    loom_strv_free(&warnings);
    loom_gresconf_destroy(g);
    return rc;
}

/* ------------------------------------------------------------------- NVML */

typedef int (*nvml_init_f)(void);
typedef int (*nvml_count_f)(unsigned *);
typedef int (*nvml_handle_f)(unsigned, void **);
typedef int (*nvml_name_f)(void *, char *, unsigned);
typedef int (*nvml_minor_f)(void *, unsigned *);

/* "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3"; a configured type that
 * the name contains (h100) is used instead, as Slurm matches them. */
static void gpus_nvml_type(const char *name, const char *conf_type, char *out, size_t size)
{
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        out[i] = name[i] == ' ' ? '_' : (char)tolower((unsigned char)name[i]);
    out[i] = '\0';
    if (conf_type && strcasestr(out, conf_type))
        snprintf(out, size, "%s", conf_type);
}

static int gpus_nvml(loom_noded_t *n, const char *conf_type)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -ENOENT;
    nvml_init_f init = (nvml_init_f)dlsym(lib, "nvmlInit_v2");
    nvml_init_f shutdown = (nvml_init_f)dlsym(lib, "nvmlShutdown");
    nvml_count_f count = (nvml_count_f)dlsym(lib, "nvmlDeviceGetCount_v2");
    nvml_handle_f handle = (nvml_handle_f)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    nvml_name_f name = (nvml_name_f)dlsym(lib, "nvmlDeviceGetName");
    nvml_minor_f minor = (nvml_minor_f)dlsym(lib, "nvmlDeviceGetMinorNumber");
    unsigned c = 0;
    if (!init || !shutdown || !count || !handle || !name || !minor || init() != 0) {
        dlclose(lib);
        return -ENOENT;
    }
    if (count(&c) == 0) {
        for (unsigned i = 0; i < c && i < GPUS_MAX; i++) {
            void *h = NULL;
            char text[96] = "", type[96], file[64] = "";
            unsigned m = 0;
            if (handle(i, &h) != 0)
                continue;
            name(h, text, sizeof(text));
            if (minor(h, &m) == 0)
                snprintf(file, sizeof(file), "/dev/nvidia%u", m);
            gpus_nvml_type(text, conf_type, type, sizeof(type));
            gpus_add(n, type, file[0] ? file : NULL);
        }
    }
    shutdown();
    dlclose(lib);
    return (int)c;
}

/* The type of the node's Gres=gpu:<type>:N in slurm.conf, or NULL. */
static const char *gpus_conf_type(const loom_noded_t *n)
{
    const loom_gres_list_t *l = &n->me->cfg->gres;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, "gpu") == 0 && l->v[i].type)
            return l->v[i].type;
    return NULL;
}

int loom_noded_gpus_load(loom_noded_t *n, loom_err_t *err)
{
    char dir[PATH_MAX], path[PATH_MAX + 16];
    bool nvml = false;
    snprintf(dir, sizeof(dir), "%s", n->conf_path);
    snprintf(path, sizeof(path), "%s/gres.conf", dirname(dir));
    if (access(path, F_OK) == 0 && gpus_from_file(n, path, &nvml, err) < 0)
        return -LOOM_ECONFIG;
    const char *conf_type = gpus_conf_type(n);
    if (nvml) {
        loom_noded_gpu_t *from_file = n->gpus;
        size_t nfile = n->ngpus;
        n->gpus = NULL;
        n->ngpus = 0;
        if (gpus_nvml(n, conf_type) > 0) {
            for (size_t i = 0; i < nfile; i++) {
                free(from_file[i].type);
                free(from_file[i].file);
            }
            free(from_file);
        } else {
            loom_info("AutoDetect=nvml: libnvidia-ml.so.1 not usable; GPUs from gres.conf");
            loom_noded_gpus_free(n);
            n->gpus = from_file;
            n->ngpus = nfile;
        }
    }
    /* Gres=gpu:N in slurm.conf with no gres.conf devices: GPUs without files. */
    uint64_t want = loom_gres_count(&n->me->cfg->gres, "gpu");
    for (uint64_t i = n->ngpus; i < want && i < GPUS_MAX; i++)
        gpus_add(n, conf_type, NULL);
    if (n->ngpus)
        loom_info("%zu GPU(s), the first %s", n->ngpus,
                  n->gpus[0].file ? n->gpus[0].file : "without a device file");
    return 0;
}

/*
 * gresconf.h - gres.conf: loading, and each node's device list (CLI_SPEC §13.1).
 *
 * Entry points: loom_gresconf_load() / loom_gresconf_load_buffer() give a
 * loom_gresconf_t (loom_gresconf_destroy() frees it); loom_gresconf_check()
 * checks it against slurm.conf as a whole; loom_gresconf_node_devices() gives
 * one node's devices and checks them against the node's Gres= counts.
 *
 * Syntax: the slurm.conf lexer (conflex.h): '#' comments, '\' continuation,
 * quoted values, "Include <file>" (files only, relative to the including
 * file, at most LOOM_CONF_MAX_INCLUDE_DEPTH deep). A line is global, or scoped
 * to the nodes of its NodeName=<hostlist>. Keys (any case): Name, Type, File
 * (alias Files), MultipleFiles, Count (suffixes K M G T P, x1024), Cores
 * (alias CPUs; "0-31", "0-7,16-23"), Links (alias Link), Flags, AutoDetect
 * (nvml, rsmi, oneapi, nrt, nvidia, off), NodeName. A line with only
 * AutoDetect (and NodeName) sets detection for all nodes or for those nodes.
 * File= and MultipleFiles= take device paths with bracket ranges in the last
 * path component ("/dev/nvidia[0-7]", "/dev/tty[0-3]", comma lists); no device
 * needs to exist. Each File name is one device, in the order given (that is
 * the device index order).
 *
 * Which lines apply to a node (as Slurm resolves it): a line applies when it
 * is global or names the node, and the node's Gres= (slurm.conf) has an entry
 * of the same name whose type equals the line's Type (an untyped Gres= entry
 * takes lines of that name with any Type). So with the global lines
 * "Name=gpu Type=h100 File=..." and "Name=gpu Type=h200 File=...", an h100
 * node takes only the first. Node-scoped lines that apply to nothing are
 * reported as warnings; global ones are skipped silently.
 *
 * AutoDetect: Loom reads devices from the File= lines; when AutoDetect names
 * a library (nvml, ...) that the caller cannot use, the File= lines are the
 * fallback, as Slurm does without the library.
 */
#ifndef LOOM_GRESCONF_H
#define LOOM_GRESCONF_H

#include "common/conf.h"
#include "common/err.h"
#include "common/hostlist.h"
#include "common/strv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LOOM_GRES_AUTODETECT_UNSET = -1,
    LOOM_GRES_AUTODETECT_OFF = 0,
    LOOM_GRES_AUTODETECT_NVML,
    LOOM_GRES_AUTODETECT_RSMI,
    LOOM_GRES_AUTODETECT_ONEAPI,
    LOOM_GRES_AUTODETECT_NRT,
    LOOM_GRES_AUTODETECT_NVIDIA,
} loom_gres_autodetect_t;

/* Flags= bits. */
enum {
    LOOM_GRESF_COUNT_ONLY = 1u << 0,
    LOOM_GRESF_EXPLICIT = 1u << 1,
    LOOM_GRESF_ONE_SHARING = 1u << 2,
    LOOM_GRESF_ALL_SHARING = 1u << 3,
    LOOM_GRESF_NVIDIA_GPU_ENV = 1u << 4,
    LOOM_GRESF_AMD_GPU_ENV = 1u << 5,
    LOOM_GRESF_INTEL_GPU_ENV = 1u << 6,
    LOOM_GRESF_OPENCL_ENV = 1u << 7,
    LOOM_GRESF_NO_GPU_ENV = 1u << 8,
    LOOM_GRESF_ENV_UUID = 1u << 9,
};

typedef struct loom_gresconf_line {
    const char *file; /* owned by loom_gresconf_t.files */
    int lineno;
    char *nodes;                /* NodeName= as written; NULL for a global line */
    loom_hostlist_t *node_list; /* its names; NULL for a global line */
    char *name;                 /* Name=; NULL on an AutoDetect-only line */
    char *type;                 /* Type=; NULL when not given */
    char *file_expr;            /* File= (or MultipleFiles=) as written */
    loom_strv_t files;          /* File= expanded: one device each */
    bool multiple_files;        /* MultipleFiles=: all files make one device */
    uint64_t count;             /* Count=, else the number of devices, else 1 */
    bool count_set;
    char *cores;    /* Cores= as written, NULL when not given */
    char *links;    /* Links= as written */
    unsigned flags; /* LOOM_GRESF_* */
    int autodetect; /* this line's AutoDetect=, or UNSET */
} loom_gresconf_line_t;

typedef struct loom_gresconf {
    char *path;
    loom_strv_t files; /* every file read */
    int autodetect;    /* the global AutoDetect (OFF when not given) */
    loom_gresconf_line_t *lines;
    size_t n_lines;
} loom_gresconf_t;

int loom_gresconf_load(const char *path, loom_gresconf_t **out, loom_err_t *err);
/* From memory; an Include line is an error. */
int loom_gresconf_load_buffer(const char *name, const char *text, size_t len, loom_gresconf_t **out,
                              loom_err_t *err);
void loom_gresconf_destroy(loom_gresconf_t *g);

/* The name of an AutoDetect value ("nvml", "off"). */
const char *loom_gres_autodetect_name(int autodetect);

/* Checks against slurm.conf: every Name is in GresTypes, every NodeName names
 * slurm.conf nodes; node-scoped AutoDetect values agree. Appends
 * "<file>:<line>: ..." warnings to warnings (may be NULL). */
int loom_gresconf_check(const loom_gresconf_t *g, const loom_conf_t *conf, loom_strv_t *warnings,
                        loom_err_t *err);

/* One device (or one count-only pool) of a node. */
typedef struct loom_gres_dev {
    const char *name;  /* owned by the gres.conf line */
    const char *type;  /* the line's Type, else the node Gres= type; may be NULL */
    uint64_t index;    /* 0-based, per GRES name, in file order */
    const char *file;  /* device path; NULL for count-only (or "a,b" for MultipleFiles) */
    const char *cores; /* Cores= of the line, or NULL */
    uint64_t count;    /* 1 for a device, Count for a count-only line; shard/mps: per file */
    const loom_gresconf_line_t *line;
} loom_gres_dev_t;

typedef struct loom_gres_devlist {
    loom_gres_dev_t *v;
    size_t n;
    int autodetect; /* effective AutoDetect for the node */
    char **multi;   /* owned joined MultipleFiles strings */
    size_t n_multi;
} loom_gres_devlist_t;

/* The devices of node (a node of conf), in gres.conf order, checked against
 * its Gres= counts: a mismatch is an error naming the node, the GRES and both
 * counts; so are Cores outside the node's cores. Node-scoped lines that name
 * the node but apply to none of its GRES add a warning. On error *out is
 * untouched; free a result with loom_gres_devlist_free. */
int loom_gresconf_node_devices(const loom_gresconf_t *g, const loom_conf_t *conf,
                               const loom_conf_node_t *node, loom_gres_devlist_t *out,
                               loom_strv_t *warnings, loom_err_t *err);
void loom_gres_devlist_free(loom_gres_devlist_t *l);

#endif

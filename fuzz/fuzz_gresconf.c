/*
 * fuzz_gresconf.c - gres.conf from memory, resolved per node (src/common/
 * gresconf.c, CLI_SPEC §13.1).
 *
 * The input is a gres.conf, checked against seed 004's slurm.conf; or, when
 * it holds a line "%%", a slurm.conf before that line and a gres.conf after
 * it. Every node's device list is resolved; invariants (abort() if broken):
 * indexes run 0.. per GRES name, and the device counts of a successful
 * resolution add up to the node's Gres= counts.
 */
#include "common/conf.h"
#include "common/gresconf.h"
#include "common/xalloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char fuzz_gresconf_seed[] =
    "ClusterName=lambda-cluster\nSlurmctldHost=lambda-head-node\nGresTypes=gpu,mps,shard\n"
    "NodeName=DEFAULT CPUs=64 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=515000\n"
    "NodeName=lambda-gpu-[001-004] Gres=gpu:h100:8 Feature=h100\n"
    "NodeName=lambda-gpu-[005-008] Gres=gpu:h200:8,mps:400 Feature=h200\n"
    "NodeName=cpu1 Gres=gpu:2\n"
    "PartitionName=gpu Default=YES Nodes=ALL MaxTime=7-00:00:00 State=UP\n";

static void fuzz_gresconf_node(const loom_gresconf_t *g, const loom_conf_t *c,
                               const loom_conf_node_t *n)
{
    loom_gres_devlist_t dl;
    loom_strv_t warn = LOOM_STRV_INIT;
    loom_err_t err;
    if (loom_gresconf_node_devices(g, c, n, &dl, &warn, &err) == 0) {
        uint64_t have = 0, want = 0;
        bool overflow = false;
        for (size_t i = 0; i < dl.n; i++) {
            size_t same = 0;
            for (size_t j = 0; j < i; j++)
                same += strcasecmp(dl.v[j].name, dl.v[i].name) == 0;
            if (dl.v[i].index != same)
                abort();
            overflow |= __builtin_add_overflow(have, dl.v[i].count, &have);
        }
        for (size_t i = 0; i < n->cfg->gres.n; i++)
            overflow |= __builtin_add_overflow(want, n->cfg->gres.v[i].count, &want);
        if (!overflow && have != want)
            abort();
        loom_gres_devlist_free(&dl);
    }
    loom_strv_free(&warn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = loom_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    const char *conf_text = fuzz_gresconf_seed, *gres_text = text;
    size_t conf_len = sizeof(fuzz_gresconf_seed) - 1, gres_len = size;
    char *sep = strstr(text, "\n%%\n");
    if (sep) {
        conf_text = text;
        conf_len = (size_t)(sep - text) + 1;
        gres_text = sep + 4;
        gres_len = size - conf_len - 3;
    }
    loom_conf_t *c = NULL;
    loom_gresconf_t *g = NULL;
    loom_err_t err;
    if (loom_conf_load_buffer("fuzz-slurm.conf", conf_text, conf_len, &c, &err) == 0 &&
        loom_gresconf_load_buffer("fuzz-gres.conf", gres_text, gres_len, &g, &err) == 0 &&
        loom_gresconf_check(g, c, NULL, &err) == 0) {
        for (size_t i = 0; i < c->n_nodes && i < 64; i++)
            fuzz_gresconf_node(g, c, &c->nodes[i]);
    }
    loom_gresconf_destroy(g);
    loom_conf_destroy(c);
    free(text);
    return 0;
}

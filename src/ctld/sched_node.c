/* sched_node.c - topology, features and GPU affinity of the node model. See sched_node.h. */
#include "ctld/sched_node.h"
#include "common/rangeset.h"
#include "common/xalloc.h"
#include "ctld/node_attr.h"

#include <stdlib.h>

void ctld_sched_node_setup(const ctld_t *c, const ctld_node_t *n, loom_sched_node_t *sn)
{
    const loom_conf_nodecfg_t *cfg = n->cfg->cfg;
    unsigned cr = c->conf->select_type_parameters;
    bool whole = (cr & (LOOM_CR_CORE | LOOM_CR_SOCKET)) != 0;
    uint16_t sockets = (uint16_t)(cfg->sockets > 0 ? cfg->sockets : 1);
    uint16_t cores = (uint16_t)(cfg->cores_per_socket > 0 ? cfg->cores_per_socket : 0);
    uint16_t threads = (uint16_t)(cfg->threads_per_core > 0 ? cfg->threads_per_core : 1);
    loom_sched_node_set_topology(sn, sockets, cores, threads, whole);
    loom_sched_node_set_whole_sockets(sn, (cr & LOOM_CR_SOCKET) != 0); /* CR_Socket */
    const loom_strv_t *f = ctld_node_features(n);
    sn->features = (const char *const *)f->v;
    sn->nfeatures = f->n;
}

void ctld_sched_gres_cores(const ctld_node_t *n, loom_sched_node_t *sn, size_t g, const char *cores)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    if (!cores || loom_rangeset_parse(cores, 65535, &rs, NULL) < 0) {
        loom_rangeset_free(&rs);
        return;
    }
    uint32_t threads = sn->threads ? sn->threads : 1;
    size_t cap = 0, k = 0;
    uint32_t *ids = NULL;
    uint32_t core;
    for (int rc = loom_rangeset_first(&rs, &core); rc == 0;
         rc = loom_rangeset_next(&rs, core, &core))
        for (uint32_t t = 0; t < threads && core * threads + t < sn->cpus; t++) {
            if (k == cap) {
                cap = cap ? cap * 2 : 64;
                ids = loom_xreallocarray(ids, cap, sizeof(*ids));
            }
            ids[k++] = core * threads + t; /* Slurm's abstract CPU ids: core-major */
        }
    if (k)
        loom_sched_node_set_gres_cpus(sn, g, ids, k);
    free(ids);
    loom_rangeset_free(&rs);
}

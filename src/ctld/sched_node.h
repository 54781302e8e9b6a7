/*
 * sched_node.h - what the node model takes from slurm.conf and gres.conf
 * beyond CPUs, memory and GRES counts (CLI_SPEC §13, §13.1): sockets, cores
 * per socket and threads per core (whole-core allocation under CR_Core /
 * CR_Socket when ThreadsPerCore > 1), Features (for -C counts and brackets),
 * and each GPU's gres.conf Cores= as the CPU ids next to it (GPU affinity).
 *
 * Entry points: ctld_sched_node_setup (node_mgr.c, once per node),
 * ctld_sched_gres_cores (node_mgr.c, per gres.conf device with Cores=).
 */
#ifndef LOOM_CTLD_SCHED_NODE_H
#define LOOM_CTLD_SCHED_NODE_H

#include "ctld/ctld.h"

void ctld_sched_node_setup(const ctld_t *c, const ctld_node_t *n, loom_sched_node_t *sn);
/* GRES line g of sn is local to the cores of `cores` ("0-15,32-47"). */
void ctld_sched_gres_cores(const ctld_node_t *n, loom_sched_node_t *sn, size_t g,
                           const char *cores);

#endif

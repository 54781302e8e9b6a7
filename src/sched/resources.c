/* resources.c - the node model: nodes, GRES lines, applying and releasing
 * allocations. Placement is in select.c. See resources.h. */
#include "sched/resources.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t resources_words(uint32_t cpus)
{
    return ((size_t)cpus + 63) / 64;
}

void loom_sched_node_init(loom_sched_node_t *n, const char *name, uint32_t cpus, uint64_t mem_total)
{
    memset(n, 0, sizeof(*n));
    n->name = name;
    n->cpus = cpus > LOOM_SCHED_MAX_CPUS ? LOOM_SCHED_MAX_CPUS : cpus;
    n->cpu_bits = loom_xcalloc(resources_words(n->cpus) + 1, sizeof(uint64_t));
    n->cpu_share = loom_xcalloc(n->cpus + 1, 1);
    n->mem_total = mem_total;
    n->weight = 1;
    n->usable = true;
    n->sockets = 1;
    n->cores = (uint16_t)(n->cpus > UINT16_MAX ? UINT16_MAX : n->cpus);
    n->threads = 1;
    n->unit = 1;
}

void loom_sched_node_fini(loom_sched_node_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->ngres; i++)
        free(n->gres[i].cpu_mask);
    free(n->cpu_bits);
    free(n->cpu_share);
    free(n->gres);
    n->cpu_bits = NULL;
    n->cpu_share = NULL;
    n->gres = NULL;
    n->ngres = 0;
}

void loom_sched_node_set_topology(loom_sched_node_t *n, uint16_t sockets, uint16_t cores,
                                  uint16_t threads, bool whole_cores)
{
    if (sockets)
        n->sockets = sockets;
    if (cores)
        n->cores = cores;
    if (threads)
        n->threads = threads;
    /* Whole cores only make sense when the CPUs are exactly cores x threads. */
    n->whole_cores =
        whole_cores && n->threads > 1 && (uint32_t)n->sockets * n->cores * n->threads == n->cpus;
    n->unit = n->whole_cores ? n->threads : 1;
}

void loom_sched_node_set_whole_sockets(loom_sched_node_t *n, bool whole_sockets)
{
    uint32_t per_socket = (uint32_t)n->cores * n->threads;
    if (whole_sockets && per_socket > 1 && per_socket * n->sockets == n->cpus)
        n->unit = per_socket;
    else
        n->unit = n->whole_cores ? n->threads : 1;
}

static bool resources_same_kind(const loom_sched_gres_t *a, const char *name, const char *type)
{
    if (strcmp(a->name, name) != 0)
        return false;
    if (!a->type || !type)
        return !a->type && !type;
    return strcmp(a->type, type) == 0;
}

void loom_sched_node_add_gres(loom_sched_node_t *n, const char *name, const char *type, int index,
                              uint64_t count)
{
    uint32_t group = n->ngroups;
    for (size_t i = 0; i < n->ngres; i++)
        if (resources_same_kind(&n->gres[i], name, type))
            group = n->gres[i].group;
    if (group == n->ngroups) {
        if (n->ngroups < LOOM_SCHED_MAX_GROUPS)
            n->ngroups++;
        else
            group = LOOM_SCHED_MAX_GROUPS - 1;
    }
    n->gres = loom_xreallocarray(n->gres, n->ngres + 1, sizeof(*n->gres));
    n->gres[n->ngres++] = (loom_sched_gres_t){.name = name,
                                              .type = type,
                                              .index = index,
                                              .count = index >= 0 ? 1 : count,
                                              .group = group};
    n->group_count[group] += n->gres[n->ngres - 1].count;
    if (strcmp(name, "gpu") == 0)
        n->gpus += (uint32_t)(index >= 0 ? 1 : count);
}

void loom_sched_node_set_gres_cpus(loom_sched_node_t *n, size_t g, const uint32_t *cpu_ids,
                                   size_t ncpus)
{
    if (g >= n->ngres)
        return;
    loom_sched_gres_t *gr = &n->gres[g];
    free(gr->cpu_mask);
    gr->cpu_mask = loom_xcalloc(resources_words(n->cpus) + 1, sizeof(uint64_t));
    for (size_t i = 0; i < ncpus; i++)
        if (cpu_ids[i] < n->cpus)
            gr->cpu_mask[cpu_ids[i] / 64] |= (uint64_t)1 << (cpu_ids[i] % 64);
}

static bool resources_bit(const uint64_t *bits, uint32_t id)
{
    return (bits[id / 64] >> (id % 64)) & 1u;
}

bool loom_sched_node_cpu_used(const loom_sched_node_t *n, uint32_t id)
{
    return id < n->cpus && (resources_bit(n->cpu_bits, id) || n->cpu_share[id]);
}

uint32_t loom_sched_node_gpus_free(const loom_sched_node_t *n)
{
    return n->gpus - n->gpus_used;
}

uint64_t loom_sched_alloc_node_gpus(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na)
{
    uint64_t g = 0;
    for (size_t i = 0; i < na->ngres; i++)
        if (na->gres[i].gres < n->ngres && strcmp(n->gres[na->gres[i].gres].name, "gpu") == 0)
            g += na->gres[i].count;
    return g;
}

/* ---- apply / release ------------------------------------------------------ */

static bool resources_cpu_fits(const loom_sched_node_t *n, uint32_t id, uint32_t share_max)
{
    if (id >= n->cpus || resources_bit(n->cpu_bits, id))
        return false;
    if (share_max > 1)
        return n->cpu_share[id] < share_max && n->cpu_share[id] < UINT8_MAX;
    return n->cpu_share[id] == 0;
}

static bool resources_node_fits(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na,
                                const loom_sched_alloc_t *a)
{
    if (n->exclusive || (a->exclusive && n->njobs))
        return false;
    if (na->ncpus > n->cpus || na->mem > n->mem_total - n->mem_used)
        return false;
    for (uint32_t k = 0; k < na->ncpus; k++) {
        if (!resources_cpu_fits(n, na->cpu_ids[k], a->share_max))
            return false;
        if (k && na->cpu_ids[k] <= na->cpu_ids[k - 1])
            return false; /* ids must be ascending and distinct */
    }
    for (size_t g = 0; g < na->ngres; g++) {
        if (na->gres[g].gres >= n->ngres)
            return false;
        const loom_sched_gres_t *gr = &n->gres[na->gres[g].gres];
        if (na->gres[g].count > gr->count - gr->used)
            return false;
    }
    return true;
}

static void resources_mark_cpu(loom_sched_node_t *n, uint32_t id, bool shared, bool take)
{
    bool before = loom_sched_node_cpu_used(n, id);
    uint64_t bit = (uint64_t)1 << (id % 64);
    if (shared)
        n->cpu_share[id] = (uint8_t)(take ? n->cpu_share[id] + 1 : n->cpu_share[id] - 1);
    else if (take)
        n->cpu_bits[id / 64] |= bit;
    else
        n->cpu_bits[id / 64] &= ~bit;
    bool after = loom_sched_node_cpu_used(n, id);
    if (before != after)
        n->cpus_used = after ? n->cpus_used + 1 : n->cpus_used - 1;
}

static void resources_node_mark(loom_sched_node_t *n, const loom_sched_node_alloc_t *na,
                                const loom_sched_alloc_t *a, bool take)
{
    for (uint32_t k = 0; k < na->ncpus; k++)
        if (na->cpu_ids[k] < n->cpus)
            resources_mark_cpu(n, na->cpu_ids[k], a->share_max > 1, take);
    for (size_t g = 0; g < na->ngres; g++) {
        loom_sched_gres_t *gr = &n->gres[na->gres[g].gres];
        uint64_t c = na->gres[g].count;
        gr->used = take ? gr->used + c : gr->used - c;
        n->group_used[gr->group] =
            take ? n->group_used[gr->group] + c : n->group_used[gr->group] - c;
        if (strcmp(gr->name, "gpu") == 0)
            n->gpus_used = (uint32_t)(take ? n->gpus_used + c : n->gpus_used - c);
    }
    n->mem_used = take ? n->mem_used + na->mem : n->mem_used - na->mem;
    n->njobs = take ? n->njobs + 1 : n->njobs - 1;
    if (a->exclusive)
        n->exclusive = take;
}

int loom_sched_alloc_apply(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a)
{
    for (size_t i = 0; i < a->nnodes; i++) {
        if (a->nodes[i].node >= nnodes ||
            !resources_node_fits(&nodes[a->nodes[i].node], &a->nodes[i], a))
            return -ENOSPC;
        for (size_t j = 0; j < i; j++)
            if (a->nodes[j].node == a->nodes[i].node)
                return -ENOSPC;
    }
    for (size_t i = 0; i < a->nnodes; i++)
        resources_node_mark(&nodes[a->nodes[i].node], &a->nodes[i], a, true);
    return 0;
}

void loom_sched_alloc_release(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a)
{
    for (size_t i = 0; i < a->nnodes; i++)
        if (a->nodes[i].node < nnodes)
            resources_node_mark(&nodes[a->nodes[i].node], &a->nodes[i], a, false);
}

void loom_sched_alloc_fini(loom_sched_alloc_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nnodes; i++) {
        free(a->nodes[i].cpu_ids);
        free(a->nodes[i].gres);
    }
    free(a->nodes);
    memset(a, 0, sizeof(*a));
}

void loom_sched_alloc_copy(loom_sched_alloc_t *dst, const loom_sched_alloc_t *src)
{
    *dst = *src;
    dst->nodes = loom_xcalloc(src->nnodes ? src->nnodes : 1, sizeof(*dst->nodes));
    for (size_t i = 0; i < src->nnodes; i++) {
        const loom_sched_node_alloc_t *s = &src->nodes[i];
        loom_sched_node_alloc_t *d = &dst->nodes[i];
        *d = *s;
        d->cpu_ids = loom_xcalloc(s->ncpus ? s->ncpus : 1, sizeof(uint32_t));
        memcpy(d->cpu_ids, s->cpu_ids, s->ncpus * sizeof(uint32_t));
        d->gres = NULL;
        if (s->ngres) {
            d->gres = loom_xcalloc(s->ngres, sizeof(*d->gres));
            memcpy(d->gres, s->gres, s->ngres * sizeof(*d->gres));
        }
    }
}

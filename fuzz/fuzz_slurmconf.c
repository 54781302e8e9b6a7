/*
 * fuzz_slurmconf.c - slurm.conf from memory (src/common/conf*.c, CLI_SPEC §13).
 *
 * Loads the input with loom_conf_load_buffer() (Include is refused there, so
 * nothing is read from disk), prints an accepted config as `scontrol show
 * config` would, and checks the loader's invariants (abort() if broken):
 * unique node names, sorted in-range partition node lists, a derived
 * topology that is set and consistent, at most one Default partition.
 */
#include "common/conf.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_slurmconf_check(const loom_conf_t *c)
{
    size_t defaults = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        const loom_conf_node_t *n = &c->nodes[i];
        const loom_conf_nodecfg_t *cfg = n->cfg;
        if (loom_conf_find_node(c, n->name) != n || n->port < 1 || n->port > 65535)
            abort();
        if (cfg->cpus < 1 || cfg->sockets < 1 || cfg->cores_per_socket < 1 ||
            cfg->threads_per_core < 1 || cfg->boards < 1 || cfg->real_memory < 1)
            abort();
        if (cfg->cpus != cfg->sockets && cfg->cpus != cfg->sockets * cfg->cores_per_socket &&
            cfg->cpus != cfg->sockets * cfg->cores_per_socket * cfg->threads_per_core)
            abort();
    }
    for (size_t i = 0; i < c->n_parts; i++) {
        const loom_conf_part_t *p = &c->parts[i];
        defaults += p->is_default;
        for (size_t j = 0; j < p->n_nodes; j++)
            if (p->node_idx[j] >= c->n_nodes || (j && p->node_idx[j] <= p->node_idx[j - 1]))
                abort();
    }
    if (defaults > 1 || !c->cluster_name || c->n_ctld_hosts == 0 ||
        strlen(c->cluster_name) > LOOM_CONF_CLUSTER_NAME_MAX)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = loom_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    loom_conf_t *c = NULL;
    loom_err_t err;
    if (loom_conf_load_buffer("fuzz.conf", text, size, &c, &err) == 0) {
        fuzz_slurmconf_check(c);
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_conf_print(c, &sb);
        loom_sbuf_free(&sb);
        loom_conf_destroy(c);
    } else if (c != NULL || err.msg[0] == '\0') {
        abort(); /* an error leaves *out alone and says what was wrong */
    }
    free(text);
    return 0;
}

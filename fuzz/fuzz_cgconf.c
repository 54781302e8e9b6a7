/*
 * fuzz_cgconf.c - cgroup.conf from memory (src/common/cgconf.c).
 *
 * Invariants (abort() if broken): a failed parse leaves an error message; a
 * successful one round-trips through the JSON the node daemon hands its job
 * supervisors, and its memory limit never falls below MinRAMSpace.
 */
#include "common/cgconf.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_cgconf_check(loom_cgconf_t *c)
{
    c->task_cgroup = true;
    json_t *j = loom_cgconf_to_json(c);
    loom_cgconf_t back;
    loom_cgconf_init(&back);
    loom_cgconf_from_json(j, &back);
    if (strcmp(back.mountpoint, c->mountpoint) != 0 || strcmp(back.plugin, c->plugin) != 0 ||
        back.constrain_ram != c->constrain_ram || back.min_ram_mib != c->min_ram_mib)
        abort();
    uint64_t lim = loom_cgconf_ram_limit(&back, 1000, 4000);
    if (c->constrain_ram && lim < c->min_ram_mib)
        abort();
    loom_cgconf_free(&back);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = loom_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    loom_cgconf_t c;
    loom_cgconf_init(&c);
    loom_err_t err = {0};
    if (loom_cgconf_parse("fuzz-cgroup.conf", text, size, &c, &err) == 0)
        fuzz_cgconf_check(&c);
    else if (!err.msg[0])
        abort();
    loom_cgconf_free(&c);
    free(text);
    return 0;
}

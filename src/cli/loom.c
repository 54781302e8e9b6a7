/*
 * loom.c - the `loom` command: Loom's own tools, beside the Slurm-compatible
 * commands. A small dispatcher: `loom <command> [args]`, where each command
 * gets its argv with argv[0] set to the command's name and returns the exit
 * code.
 *
 * Commands: config (loom_config.c), up and down (loom_up.c), sweep
 * (loom_sweep.c), pipeline (loom_pipeline.c).
 * `loom --version` prints "loom <version> (slurm <version>)".
 */
#include "cli/loom_config.h"
#include "cli/loom_pipeline.h"
#include "cli/loom_sweep.h"
#include "cli/loom_up.h"
#include "common/log.h"

#include <stdio.h>
#include <string.h>

typedef int (*loom_cmd_f)(int argc, char **argv);

static const struct {
    const char *name;
    loom_cmd_f main;
    const char *help;
} loom_cmds[] = {
    {"config", loom_config_main, "config check [-f slurm.conf] [-g gres.conf]: check a config"},
    {"up", loom_up_main,
     "up [--dir DIR] [--nodes N] [--gpus-per-node G] ...: start a local cluster"},
    {"down", loom_down_main, "down [--dir DIR]: stop the local cluster started there"},
    {"sweep", loom_sweep_main,
     "sweep [sbatch options] NAME=v1,v2 ... COMMAND: a parameter sweep as one job array;\n"
     "    sweep status ID: its parameters against state, exit code and elapsed time"},
    {"pipeline", loom_pipeline_main,
     "pipeline FILE.json: named steps with their own resources as dependent jobs;\n"
     "    pipeline status|cancel NAME-OR-ID"},
};

static void loom_usage(FILE *fp)
{
    fprintf(fp, "Usage: loom <command> [options]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(loom_cmds) / sizeof(loom_cmds[0]); i++)
        fprintf(fp, "  %s\n", loom_cmds[i].help);
    fprintf(fp, "\n  loom --version    print the version\n  loom --help       this text\n");
}

int main(int argc, char **argv)
{
    loom_log_init("loom", LOOM_LOG_INFO, NULL, false);
    if (argc < 2) {
        loom_usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("loom %s (slurm %s)\n", LOOM_VERSION, LOOM_SLURM_VERSION);
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        loom_usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof(loom_cmds) / sizeof(loom_cmds[0]); i++)
        if (strcmp(cmd, loom_cmds[i].name) == 0)
            return loom_cmds[i].main(argc - 1, argv + 1);
    fprintf(stderr, "loom: error: unknown command '%s'\n", cmd);
    loom_usage(stderr);
    return 1;
}

/*
 * loom_config.h - `loom config check [-f slurm.conf] [-g gres.conf]`: load and
 * check slurm.conf and gres.conf (CLI_SPEC §13, §13.1) and print a summary:
 * the node groups (CPUs, S:C:T, memory, GRES with their device files,
 * features) and the partitions with their limits.
 *
 * Entry point: loom_config_main(argc, argv) with argv[0] == "config"; returns
 * the exit code: 0 when valid, 1 on an error ("loom: error: <file:line:
 * message>" on stderr) or a usage error. Warnings go to stderr as
 * "loom: warning: ...".
 */
#ifndef LOOM_CLI_LOOM_CONFIG_H
#define LOOM_CLI_LOOM_CONFIG_H

int loom_config_main(int argc, char **argv);

#endif

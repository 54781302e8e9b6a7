/*
 * loom_up.h - `loom up` / `loom down`: start and stop a local emulated cluster.
 * Both take the sub-command's argv (argv[0] is "up" or "down") and return the
 * process exit code.
 */
#ifndef LOOM_CLI_LOOM_UP_H
#define LOOM_CLI_LOOM_UP_H

int loom_up_main(int argc, char **argv);
int loom_down_main(int argc, char **argv);

#endif

/*
 * cgfs.h - reading and writing one cgroup control file ("<dir>/<file>"),
 * as the job cgroups (noded/cgroup.c) and the devices cgroups (devcg.c) do.
 *
 * Entry points: loom_cgfs_write, loom_cgfs_read_line, loom_cgfs_has.
 */
#ifndef LOOM_COMMON_CGFS_H
#define LOOM_COMMON_CGFS_H

#include <stdbool.h>
#include <stddef.h>

/* Write value to dir/file in one write(2). Returns 0 or -errno. */
int loom_cgfs_write(const char *dir, const char *file, const char *value);

/* The first line of dir/file without its newline into buf ("" when it
 * cannot be read). */
void loom_cgfs_read_line(const char *dir, const char *file, char *buf, size_t size);

/* Does dir/file exist? */
bool loom_cgfs_has(const char *dir, const char *file);

#endif

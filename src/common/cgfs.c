/*
 * cgfs.c - one cgroup control file. See cgfs.h.
 */
#include "common/cgfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CGFS_PATH_MAX (4096 + 64)

int loom_cgfs_write(const char *dir, const char *file, const char *value)
{
    char path[CGFS_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, value, strlen(value));
    int rc = n < 0 ? -errno : 0;
    close(fd);
    return rc;
}

void loom_cgfs_read_line(const char *dir, const char *file, char *buf, size_t size)
{
    char path[CGFS_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    buf[0] = '\0';
    FILE *fp = fopen(path, "re");
    if (!fp)
        return;
    if (!fgets(buf, (int)size, fp))
        buf[0] = '\0';
    fclose(fp);
    buf[strcspn(buf, "\n")] = '\0';
}

bool loom_cgfs_has(const char *dir, const char *file)
{
    char path[CGFS_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return access(path, F_OK) == 0;
}

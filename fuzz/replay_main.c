/*
 * replay_main.c - runs a fuzz target over a saved corpus, as a CTest test.
 *
 * Usage: replay_<name> DIR|FILE...  Every regular file is fed once to
 * LLVMFuzzerTestOneInput; a crash, sanitizer report or leak fails the test.
 * An empty or missing corpus directory fails too: a replay that runs nothing
 * cannot fail.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += n;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(fp);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int replay_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char full[4096];
        snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
        if (replay_path(full, count) != 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) != 0)
            rc = 1;
    printf("replayed %d inputs\n", count);
    return (rc || count == 0) ? 1 : 0;
}

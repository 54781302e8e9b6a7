/*
 * fuzz_acct_spool.c - loomctld's accounting spool read back after a crash
 * (src/ctld/acct_spool.c): torn, zero-filled or corrupt segment files and a
 * corrupt acked mark must neither crash the controller nor stop delivery.
 * Input: byte 0 sets the acked mark (0-7); the rest is split at 0x1e bytes
 * into up to four segment files spool.1, spool.11, spool.21, spool.31.
 * The spool is opened (scan), read batch by batch to the end with each batch
 * acknowledged (segments removed), and freed.
 */
#include "ctld/acct_spool.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return;
    if (size)
        fwrite(data, 1, size, fp);
    fclose(fp);
}

static void fuzz_rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char p[512];
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%.255s", dir, de->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Write the files under <top>/acct. */
static void fuzz_layout(const char *top, const uint8_t *data, size_t size)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/acct", top);
    if (mkdir(path, 0700) < 0)
        return;
    char acked[8];
    int n = snprintf(acked, sizeof(acked), "%d\n", size ? data[0] % 8 : 0);
    snprintf(path, sizeof(path), "%s/acct/acked", top);
    fuzz_write(path, (const uint8_t *)acked, (size_t)n);
    size_t pos = size ? 1 : 0;
    for (int seg = 0; seg < 4 && pos <= size; seg++) {
        const uint8_t *end = memchr(data + pos, 0x1e, size - pos);
        size_t len = end ? (size_t)(end - (data + pos)) : size - pos;
        snprintf(path, sizeof(path), "%s/acct/spool.%020d", top, 1 + 10 * seg);
        fuzz_write(path, data + pos, len);
        pos += len + 1;
        if (!end)
            break;
    }
}

/* Read everything due, batch by batch, acknowledging each. */
static void fuzz_drain(ctld_acct_spool_t *sp)
{
    for (int round = 0; round < 64; round++) {
        ctld_acct_read_t r;
        ctld_acct_spool_read_args(sp, &r);
        json_t *arr = json_array();
        uint64_t last = 0;
        int n = ctld_acct_spool_read(&r, arr, &last, NULL);
        json_decref(arr);
        if (n > 0)
            ctld_acct_spool_acked(sp, last, &r.pos);
        ctld_acct_spool_read_args_free(&r);
        if (n <= 0)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char top[] = "/tmp/loom-fuzz-acct-XXXXXX";
    if (size > 1 << 20 || !mkdtemp(top))
        return 0;
    fuzz_layout(top, data, size);
    ctld_acct_spool_t *sp = NULL;
    if (ctld_acct_spool_open(top, &sp, NULL) == 0) {
        fuzz_drain(sp);
        ctld_acct_spool_free(sp);
    }
    char acct[64];
    snprintf(acct, sizeof(acct), "%s/acct", top);
    fuzz_rm_dir(acct);
    rmdir(top);
    return 0;
}

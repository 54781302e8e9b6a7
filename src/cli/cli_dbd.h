/*
 * cli_dbd.h - what sacct and sacctmgr share: the loomdbd connection and
 * Slurm's print_fields layout (CLI_SPEC §8, §10; docs/proto/messages.md §6).
 *
 * loomdbd is found at $LOOM_DBD_ADDR when set, else the Unix socket
 * <StateSaveLocation>/loomdbd.sock, else the socket beside slurmdbd.conf's
 * SQLite StorageLoc (when that file is readable), else TCP
 * AccountingStorageHost:AccountingStoragePort (6819) signed with the key.
 *
 * print_fields: fixed columns, each followed by one space; a negative width
 * left-justifies; a string longer than its column is cut and ends in '+'
 * (numbers overflow instead); headers are cut without '+'; a dashes line
 * follows the header. Parsable: -p ends every field with the delimiter,
 * -P all but the last; no dashes line.
 *
 * Entry points: loom_dbd_call, loom_pf_header, loom_pf_cell, loom_pf_end.
 */
#ifndef LOOM_CLI_DBD_H
#define LOOM_CLI_DBD_H

#include "cli/cli_common.h"

#include <jansson.h>
#include <stdbool.h>

/* Send a dbd request (body members copied; body stays the caller's) and
 * return the reply's rc; *reply gets the reply when one came. The
 * connection is opened on first use and kept in *rpc (close it with
 * loom_rpc_close). */
int loom_dbd_call(loom_cli_t *cli, loom_rpc_t **rpc, const char *type, const json_t *body,
                  json_t **reply, loom_err_t *err);

typedef struct loom_pf {
    int parsable;      /* 0; 1: -p; 2: -P */
    const char *delim; /* "|" unless --delimiter */
    bool noheader;
} loom_pf_t;

typedef struct loom_pf_col {
    const char *header;
    int width; /* negative: left-justified */
} loom_pf_col_t;

void loom_pf_header(const loom_pf_t *pf, const loom_pf_col_t *cols, size_t n, loom_sbuf_t *out);
/* One field; number: a value that overflows its column instead of being cut. */
void loom_pf_cell(const loom_pf_t *pf, const char *val, int width, bool last, bool number,
                  loom_sbuf_t *out);

#endif

/*
 * acct_spool.h - loomctld's durable queue of accounting records for loomdbd
 * (docs/proto/messages.md §6.1; DESIGN.md §Controller state and durability).
 *
 * Layout, in <StateSaveLocation>/acct/:
 *   spool.<seq, 20 digits>  a segment: one line per record, the first holding
 *                           record <seq>: {"seq":N,"job":{...}} (or "step",
 *                           "cluster_tres"), exactly dbd.job's record form
 *   acked                   the highest seq loomdbd has stored ("N\n")
 *
 * Records are written through the state journal's second stream
 * (journal.h, aux): in the same group commit and fsync as the journal
 * entries that caused them, so a job whose submission was acknowledged has
 * its record on disk. Every run writes a new segment (never after a torn
 * line); a segment is rotated after CTLD_ACCT_SEG_RECORDS records, and
 * removed once every record in it is acknowledged (never the one being
 * written). Memory holds only the segment list and a read position: the
 * backlog lives on disk whatever its size.
 *
 * Sequence numbers increase strictly across runs: open() continues after the
 * highest seq found in the segments or in acked.
 *
 * Threads: everything runs on the loop thread except
 * ctld_acct_spool_read(), which reads files only through its arguments (the
 * sender calls it on libuv's thread pool).
 *
 * Entry points: ctld_acct_spool_open, _free, _add, _round_start,
 * _round_done, _read_args, _read, _acked.
 */
#ifndef LOOM_CTLD_ACCT_SPOOL_H
#define LOOM_CTLD_ACCT_SPOOL_H

#include "common/err.h"
#include "ctld/journal.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define CTLD_ACCT_SEG_RECORDS 10000
#define CTLD_ACCT_BATCH_MAX   10000              /* records per dbd.job (loomdbd's limit) */
#define CTLD_ACCT_BATCH_BYTES (8u * 1024 * 1024) /* well under loomdbd's frame limit */

typedef struct ctld_acct_spool ctld_acct_spool_t;

/* Where the sender reads next: a segment, a byte offset in it. */
typedef struct ctld_acct_pos {
    uint64_t seg;
    uint64_t off;
} ctld_acct_pos_t;

/* What one read needs, copied for the thread pool (free with _read_args_free). */
typedef struct ctld_acct_read {
    char *dir;
    uint64_t *segs; /* segment starts, ascending, from the read position on */
    size_t nsegs;
    uint64_t write_seg; /* the segment being written (a partial line there: stop) */
    ctld_acct_pos_t pos;
    uint64_t after; /* skip records up to this seq (acked) */
    uint64_t limit; /* read records up to this seq (durable) */
} ctld_acct_read_t;

/* Open (creating <state_dir>/acct): scan the segments and acked. */
int ctld_acct_spool_open(const char *state_dir, ctld_acct_spool_t **out, loom_err_t *err);
/* Accepts NULL. */
void ctld_acct_spool_free(ctld_acct_spool_t *sp);

/* Queue one record ({"seq":N, kind: rec}) on the journal's next round;
 * returns its seq. rec is borrowed. */
uint64_t ctld_acct_spool_add(ctld_acct_spool_t *sp, loom_journal_t *j, const char *kind,
                             const json_t *rec);

/* Journal hooks: a round is formed / done. */
void ctld_acct_spool_round_start(ctld_acct_spool_t *sp);
void ctld_acct_spool_round_done(ctld_acct_spool_t *sp, int status);

/* Highest seq added, durable, acknowledged. */
uint64_t ctld_acct_spool_last(const ctld_acct_spool_t *sp);
uint64_t ctld_acct_spool_durable(const ctld_acct_spool_t *sp);
uint64_t ctld_acct_spool_acked_seq(const ctld_acct_spool_t *sp);

/* The arguments of the next read (durable records after acked). */
void ctld_acct_spool_read_args(const ctld_acct_spool_t *sp, ctld_acct_read_t *r);
void ctld_acct_spool_read_args_free(ctld_acct_read_t *r);

/* Append to records (a JSON array) up to CTLD_ACCT_BATCH_MAX records (and
 * about CTLD_ACCT_BATCH_BYTES) with after < seq <= limit, in order; r->pos
 * moves past them and *last gets the highest seq read. Returns the count,
 * or < 0 when a segment cannot be read. Safe on any thread. */
int ctld_acct_spool_read(ctld_acct_read_t *r, json_t *records, uint64_t *last, loom_err_t *err);

/* loomdbd stored everything up to seq; pos is where the read that sent them
 * ended. Writes acked, removes segments no longer needed. */
void ctld_acct_spool_acked(ctld_acct_spool_t *sp, uint64_t seq, const ctld_acct_pos_t *pos);

#endif

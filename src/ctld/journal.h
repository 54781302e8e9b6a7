/*
 * journal.h - the controller's append-only state journal with group commit
 * and snapshots (DESIGN.md §Controller state and durability).
 *
 * Layout in the state directory (StateSaveLocation):
 *   snapshot.json            the whole state after entry S, one JSON object per
 *                            line: {"seq":S,"format":2}, then the caller's
 *                            records in order, then {"end":N} (N records).
 *                            (An older snapshot, {"seq":S,"state":{...}} on one
 *                            line, is still read: its state is one record.)
 *   journal.<seq, 20 digits> a segment: one JSON object per line, the first
 *                            line holding entry <seq>; entries carry "seq"
 * Entries are self-contained JSON objects with a strictly increasing "seq",
 * so the journal can later be replicated (Raft) as it is.
 *
 * Group commit. loom_journal_append() serializes an entry into the pending
 * buffer and returns its sequence number at once. At most one write+fsync
 * runs on libuv's thread pool at any time; when none runs, the pending
 * buffer is handed to one at the start of the next loop iteration (an idle
 * handle), so everything appended while handling one burst of input shares
 * one fsync, and everything appended while an fsync runs shares the next.
 * loom_journal_wait(seq) queues a callback that runs once every entry up to
 * seq is on disk: the controller sends a reply only then, which is the
 * durability promise ("a job id sbatch printed survives kill -9").
 *
 * Snapshots. loom_journal_snapshot() asks the caller for its full state (as
 * of the last appended entry S) one record at a time (a job, a node, ...)
 * and writes it to snapshot.tmp at once, a 1 MiB piece at a time: neither
 * the whole state nor its text is ever in memory; then, at the next batch
 * boundary, on the pool:
 * syncs the file system that holds it (syncfs: also every file the caller
 * wrote in the state directory without fsync, whose contents the older
 * entries carry), renames it over snapshot.json, fsyncs the directory, starts
 * segment S+1 and removes older segments. Entries appended meanwhile go to
 * the new segment.
 *
 * Preallocation. A segment grows by zero-filled extents (1 MiB first, then
 * as large as the segment so far, at most 16 MiB per step) written just
 * before the entries that need them, so most batches overwrite blocks that
 * already exist and their fdatasync writes data only, not the inode. The
 * entries of a segment therefore end at its first NUL byte; a segment closed
 * cleanly is trimmed to its last entry.
 *
 * Recovery. loom_journal_recover() reads the snapshot a record at a time (a
 * snapshot without its end line is corrupt) and replays, in order,
 * every later entry of every segment. The last line of a segment that is
 * incomplete or unparsable (a write torn by a crash, never acknowledged) is
 * ignored, as is everything from a segment's first NUL byte on; corruption anywhere else is an
 * error. New entries then go to a new segment (loom_journal_open), so nothing is ever appended
 * after torn bytes.
 *
 * The second stream (aux). A user of the journal may add bytes for other
 * files (loomctld's accounting spool, acct_spool.h) with loom_journal_aux_add:
 * they go in the next round, written and fdatasync'd beside that round's
 * entries (a second work item on the pool, so the two fdatasyncs overlap)
 * and before its waiters run, so a reply that waited for an entry also
 * waited for every aux byte added before the round began. The file stays
 * open across rounds and grows by zero-filled extents like a segment (cut
 * at a clean close): its readers stop at the first NUL. The before
 * hook runs on the loop thread as each round is formed (the place to add
 * what is due: coalesced records), the after hook once the round is done
 * with its status. A failed aux write fails the journal like any other.
 *
 * Errors. A failed write or fsync is passed to the waiters (status < 0) and
 * sticks: the journal accepts no further batch, and the controller must stop
 * (its memory is ahead of what is durable).
 *
 * Single-threaded: every function is called from the loop thread.
 */
#ifndef LOOM_CTLD_JOURNAL_H
#define LOOM_CTLD_JOURNAL_H

#include "common/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct loom_journal loom_journal_t;

/* Called once entries up to the waited seq are durable (status 0) or the
 * journal failed (status < 0). */
typedef void loom_journal_done_f(void *arg, int status);

/* Called for each record of the snapshot in order (entry == NULL, state set)
 * and then for each later entry in order (state == NULL). Return < 0 to stop
 * recovery. The json values are borrowed. */
typedef int loom_journal_replay_f(void *arg, const json_t *state, const json_t *entry);

typedef struct loom_journal_stats {
    uint64_t appended;       /* entries appended since open */
    uint64_t batches;        /* write+fsync rounds completed */
    uint64_t bytes;          /* bytes written to segments */
    uint64_t snapshots;      /* snapshots completed */
    uint64_t since_snapshot; /* entries appended since the last snapshot started */
    uint64_t last_seq;       /* last appended */
    uint64_t durable_seq;    /* last on disk */
} loom_journal_stats_t;

/* Rebuild state from dir (created 0755 when missing): calls fn for the
 * snapshot, then each later entry. *last_seq gets the last sequence number
 * seen (0 for an empty directory). */
int loom_journal_recover(const char *dir, loom_journal_replay_f *fn, void *arg, uint64_t *last_seq,
                         loom_err_t *err);

/* Open for appending: a new segment whose first entry will be next_seq
 * (recover's last_seq + 1). */
int loom_journal_open(uv_loop_t *loop, const char *dir, uint64_t next_seq, loom_journal_t **out,
                      loom_err_t *err);

/* Append entry (borrowed; the journal adds "seq"); returns its seq, or 0 when
 * the journal has failed. */
uint64_t loom_journal_append(loom_journal_t *j, const json_t *entry);

/* Run cb(arg, status) once entries up to seq are durable. Returns 1 when they
 * already are (cb is not called), 0 when queued, < 0 when the journal failed
 * (cb is not called). Waiters run in seq order. */
int loom_journal_wait(loom_journal_t *j, uint64_t seq, loom_journal_done_f *cb, void *arg);

/* Writes one snapshot record (borrowed; an object, not {"end":...}): 0 or < 0
 * once writing failed (the producer should stop then). */
typedef int loom_journal_put_f(void *put_arg, const json_t *rec);

/* Produces the state for a snapshot: put(put_arg, rec) once per record, in
 * the order recovery must see them. Returns 0, or < 0 to abandon it. */
typedef int loom_journal_state_f(void *arg, loom_journal_put_f *put, void *put_arg);

/* Write a snapshot of the state fn(arg, ...) produces (written to
 * snapshot.tmp now) covering every entry appended so far. -EBUSY when one is
 * already under way, -errno when snapshot.tmp cannot be written or fn's code
 * when it abandons (the journal goes on). */
int loom_journal_snapshot(loom_journal_t *j, loom_journal_state_f *fn, void *arg);

/* Called on the loop thread as a round is formed (journal.h, aux). */
typedef void loom_journal_hook_f(void *arg);

/* Hooks around each round (aux): before (may add aux bytes) and after
 * (status of the round). Either may be NULL. */
void loom_journal_set_hooks(loom_journal_t *j, loom_journal_hook_f *before,
                            loom_journal_done_f *after, void *arg);

/* Append len bytes to the file at path (created 0600 when missing) in the
 * next round. Ignored once the journal has failed. */
void loom_journal_aux_add(loom_journal_t *j, const char *path, const char *buf, size_t len);

/* True when nothing is pending or in flight. */
bool loom_journal_idle(const loom_journal_t *j);
const loom_journal_stats_t *loom_journal_stats(const loom_journal_t *j);

/* Flush what is pending synchronously when nothing is in flight, then close.
 * Waiters still queued are called with -ECANCELED. Accepts NULL. The loop must
 * run once more afterwards to release the handles (uv_close). */
void loom_journal_close(loom_journal_t *j);

#endif

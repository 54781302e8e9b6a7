/*
 * stepio.h - the I/O stream between srun and a step supervisor
 * (docs/proto/messages.md §7).
 *
 * Each loomstepd of a step opens one TCP connection to the srun that
 * launched it (the address comes with step.launch) and keeps it for the
 * step's life. On it both sides send small binary messages:
 *
 *   +-----------+------+-----------+------------------------+
 *   | length L  | type | rank      | payload (L - 5 bytes)  |
 *   | 4 B, BE   | 1 B  | 4 B, BE   |                        |
 *   +-----------+------+-----------+------------------------+
 *
 * Output bytes travel as they are (task output need not be UTF-8, so not
 * JSON); control messages carry a JSON object as payload. rank is a task's
 * global rank, or LOOM_STEPIO_ALL. The first message of a supervisor is
 * HELLO, whose io_key proves that it was launched for this step (srun got
 * the same random key from the controller); srun drops a connection whose
 * HELLO is missing or wrong.
 *
 * Entry points: loom_stepio_encode, loom_stepio_encode_json, loom_stepio_parse,
 * loom_stepio_json, loom_stepio_type_name.
 * Pure functions: no I/O.
 */
#ifndef LOOM_STEPIO_H
#define LOOM_STEPIO_H

#include "common/err.h"
#include "common/sbuf.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LOOM_STEPIO_HDR 9              /* length, type, rank */
#define LOOM_STEPIO_MAX (1024u * 1024) /* largest payload accepted */
#define LOOM_STEPIO_ALL 0xffffffffu    /* every task (of the receiving node) */

typedef enum {
    /* supervisor -> srun */
    LOOM_STEPIO_HELLO = 1,  /* {job_id, step_id, node_id, node, io_key, ranks:[..]} */
    LOOM_STEPIO_STDOUT = 2, /* bytes a task wrote to stdout */
    LOOM_STEPIO_STDERR = 3, /* bytes a task wrote to stderr */
    LOOM_STEPIO_EXIT = 4,   /* {status}: a task ended (wait status) */
    LOOM_STEPIO_NOTE = 5,   /* {msg, error}: a line for srun to print as "srun: ..." */
    LOOM_STEPIO_DONE = 6,   /* {}: every task here has ended and been reported */
    LOOM_STEPIO_PMI = 7,    /* {...}: PMI-2 traffic (fence contributions and results) */
    /* srun -> supervisor */
    LOOM_STEPIO_STDIN = 16,     /* bytes for a task's stdin (rank ALL: every task) */
    LOOM_STEPIO_STDIN_EOF = 17, /* no more stdin */
    LOOM_STEPIO_SIGNAL = 18,    /* {signal}: deliver to the tasks */
    LOOM_STEPIO_KILL = 19,      /* {reason, kill_wait}: end the step (CANCELLED line) */
    LOOM_STEPIO_WINSIZE = 20,   /* {rows, cols}: the terminal of a --pty step */
} loom_stepio_type_t;

/* One message; data points into the parsed buffer. */
typedef struct loom_stepio_msg {
    int type;
    uint32_t rank;
    const char *data;
    size_t len;
} loom_stepio_msg_t;

/* Append one message with len bytes of payload to out. */
void loom_stepio_encode(loom_sbuf_t *out, int type, uint32_t rank, const void *data, size_t len);
/* Append one message whose payload is obj's compact JSON text. */
void loom_stepio_encode_json(loom_sbuf_t *out, int type, uint32_t rank, const json_t *obj);

/* Cut the first message out of buf[0..len): returns the bytes it takes
 * (> 0, msg filled), 0 when more bytes are needed, or -LOOM_EPROTO (length
 * under 5 or payload over LOOM_STEPIO_MAX: the stream is broken). */
ssize_t loom_stepio_parse(const char *buf, size_t len, loom_stepio_msg_t *msg, loom_err_t *err);

/* The JSON object of a control message's payload (new reference), or NULL. */
json_t *loom_stepio_json(const loom_stepio_msg_t *msg);

/* "HELLO", "STDOUT", ... ("?" when unknown). */
const char *loom_stepio_type_name(int type);

#endif

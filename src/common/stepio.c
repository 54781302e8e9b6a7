/*
 * stepio.c - srun <-> step supervisor I/O messages. See stepio.h.
 */
#include "common/stepio.h"

#include <stdlib.h>
#include <string.h>

static void stepio_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t stepio_get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void loom_stepio_encode(loom_sbuf_t *out, int type, uint32_t rank, const void *data, size_t len)
{
    unsigned char hdr[LOOM_STEPIO_HDR];
    stepio_be32(hdr, (uint32_t)(len + 5));
    hdr[4] = (unsigned char)type;
    stepio_be32(hdr + 5, rank);
    loom_sbuf_addn(out, (const char *)hdr, sizeof(hdr));
    if (len)
        loom_sbuf_addn(out, data, len);
}

void loom_stepio_encode_json(loom_sbuf_t *out, int type, uint32_t rank, const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    loom_stepio_encode(out, type, rank, text ? text : "{}", text ? strlen(text) : 2);
    free(text);
}

ssize_t loom_stepio_parse(const char *buf, size_t len, loom_stepio_msg_t *msg, loom_err_t *err)
{
    if (len < 4)
        return 0;
    uint32_t n = stepio_get32((const unsigned char *)buf);
    if (n < 5 || n - 5 > LOOM_STEPIO_MAX)
        return loom_errf(err, -LOOM_EPROTO, "bad step I/O message length %u", (unsigned)n);
    if (len < 4 + (size_t)n)
        return 0;
    msg->type = (unsigned char)buf[4];
    msg->rank = stepio_get32((const unsigned char *)buf + 5);
    msg->data = buf + LOOM_STEPIO_HDR;
    msg->len = n - 5;
    return (ssize_t)(4 + (size_t)n);
}

json_t *loom_stepio_json(const loom_stepio_msg_t *msg)
{
    json_t *v = json_loadb(msg->data, msg->len, JSON_REJECT_DUPLICATES, NULL);
    if (v && !json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

const char *loom_stepio_type_name(int type)
{
    static const struct {
        int type;
        const char *name;
    } names[] = {
        {LOOM_STEPIO_HELLO, "HELLO"},
        {LOOM_STEPIO_STDOUT, "STDOUT"},
        {LOOM_STEPIO_STDERR, "STDERR"},
        {LOOM_STEPIO_EXIT, "EXIT"},
        {LOOM_STEPIO_NOTE, "NOTE"},
        {LOOM_STEPIO_DONE, "DONE"},
        {LOOM_STEPIO_PMI, "PMI"},
        {LOOM_STEPIO_STDIN, "STDIN"},
        {LOOM_STEPIO_STDIN_EOF, "STDIN_EOF"},
        {LOOM_STEPIO_SIGNAL, "SIGNAL"},
        {LOOM_STEPIO_KILL, "KILL"},
        {LOOM_STEPIO_WINSIZE, "WINSIZE"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].type == type)
            return names[i].name;
    return "?";
}

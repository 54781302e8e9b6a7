/*
 * munge.c - munge-authenticated frames. See munge.h.
 */
#include "common/munge.h"

#include "common/frame.h"
#include "common/xalloc.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#ifdef LOOM_HAVE_MUNGE
#include <munge.h>
#endif

#define MUNGE_DIGEST 32

struct loom_munge {
#ifdef LOOM_HAVE_MUNGE
    munge_ctx_t ctx;
#endif
    int unused;
};

bool loom_munge_available(void)
{
#ifdef LOOM_HAVE_MUNGE
    return true;
#else
    return false;
#endif
}

char *loom_munge_socket(const char *authinfo)
{
    const char *p = authinfo ? strstr(authinfo, "socket=") : NULL;
    if (!p)
        return NULL;
    p += 7;
    size_t n = strcspn(p, ", ");
    return n ? loom_xstrndup(p, n) : NULL;
}

bool loom_munge_frame_is(const char *body, size_t len)
{
    const char *nul = memchr(body, '\0', len);
    size_t plen = strlen(LOOM_MUNGE_PREFIX);
    return nul && (size_t)(body + len - nul - 1) > plen &&
           memcmp(nul + 1, LOOM_MUNGE_PREFIX, plen) == 0;
}

static int munge_digest(const void *text, size_t len, unsigned char out[MUNGE_DIGEST])
{
    unsigned int n = 0;
    if (EVP_Digest(text, len, out, &n, EVP_sha256(), NULL) != 1 || n != MUNGE_DIGEST)
        return -LOOM_EINTERNAL;
    return 0;
}

#ifdef LOOM_HAVE_MUNGE

int loom_munge_open(const char *socket, loom_munge_t **out, loom_err_t *err)
{
    loom_munge_t *m = loom_xcalloc(1, sizeof(*m));
    m->ctx = munge_ctx_create();
    if (!m->ctx) {
        free(m);
        return loom_errf(err, -LOOM_EINTERNAL, "munge: cannot create a context");
    }
    if (socket && munge_ctx_set(m->ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
        loom_errf(err, -LOOM_ECONFIG, "munge: bad socket %s: %s", socket,
                  munge_ctx_strerror(m->ctx));
        munge_ctx_destroy(m->ctx);
        free(m);
        return err ? err->code : -LOOM_ECONFIG;
    }
    *out = m;
    return 0;
}

void loom_munge_close(loom_munge_t *m)
{
    if (!m)
        return;
    munge_ctx_destroy(m->ctx);
    free(m);
}

int loom_munge_frame_encode(loom_munge_t *m, const json_t *msg, loom_sbuf_t *out, loom_err_t *err)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    unsigned char digest[MUNGE_DIGEST];
    char *cred = NULL;
    if (!text)
        return loom_errf(err, -LOOM_EPROTO, "munge: message is not JSON");
    size_t tlen = strlen(text);
    int rc = munge_digest(text, tlen, digest);
    munge_err_t e = rc == 0 ? munge_encode(&cred, m->ctx, digest, sizeof(digest)) : EMUNGE_SNAFU;
    if (e != EMUNGE_SUCCESS) {
        free(text);
        return loom_errf(err, -LOOM_EAUTH, "munge: cannot encode a credential: %s",
                         munge_strerror(e));
    }
    size_t n = tlen + 1 + strlen(cred);
    unsigned char hdr[LOOM_FRAME_HDR] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                                         (unsigned char)(n >> 8), (unsigned char)n};
    loom_sbuf_addn(out, (const char *)hdr, sizeof(hdr));
    loom_sbuf_addn(out, text, tlen);
    loom_sbuf_addc(out, '\0');
    loom_sbuf_add(out, cred);
    free(text);
    free(cred);
    return 0;
}

int loom_munge_frame_decode(loom_munge_t *m, const char *body, size_t len, json_t **msg,
                            uint32_t *uid, uint32_t *gid, loom_err_t *err)
{
    const char *nul = memchr(body, '\0', len);
    if (!nul || !loom_munge_frame_is(body, len))
        return loom_errf(err, -LOOM_EPROTO, "not a munge frame");
    size_t tlen = (size_t)(nul - body), clen = len - tlen - 1;
    char *cred = loom_xstrndup(nul + 1, clen);
    void *payload = NULL;
    int plen = 0;
    uid_t u;
    gid_t g;
    munge_err_t e = munge_decode(cred, m->ctx, &payload, &plen, &u, &g);
    free(cred);
    unsigned char digest[MUNGE_DIGEST];
    int rc = 0;
    if (e != EMUNGE_SUCCESS)
        rc = loom_errf(err, -LOOM_EAUTH, "munge: credential refused: %s", munge_strerror(e));
    else if (munge_digest(body, tlen, digest) < 0 || plen != MUNGE_DIGEST ||
             memcmp(payload, digest, MUNGE_DIGEST) != 0)
        rc = loom_errf(err, -LOOM_EAUTH, "munge: the credential is for another message");
    free(payload);
    if (rc < 0)
        return rc;
    json_error_t jerr;
    json_t *v = json_loadb(body, tlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(v) || json_object_get(v, "auth")) {
        json_decref(v);
        return loom_errf(err, -LOOM_EPROTO, "munge frame: not a JSON object (%s)", jerr.text);
    }
    *msg = v;
    *uid = (uint32_t)u;
    *gid = (uint32_t)g;
    return 0;
}

#else /* no libmunge */

int loom_munge_open(const char *socket, loom_munge_t **out, loom_err_t *err)
{
    (void)socket;
    (void)out;
    return loom_errf(err, -LOOM_ENOT_SUPPORTED, "Loom was built without munge");
}

void loom_munge_close(loom_munge_t *m)
{
    free(m);
}

int loom_munge_frame_encode(loom_munge_t *m, const json_t *msg, loom_sbuf_t *out, loom_err_t *err)
{
    (void)munge_digest;
    return loom_errf(err, -LOOM_ENOT_SUPPORTED, "Loom was built without munge");
}

int loom_munge_frame_decode(loom_munge_t *m, const char *body, size_t len, json_t **msg,
                            uint32_t *uid, uint32_t *gid, loom_err_t *err)
{
    return loom_errf(err, -LOOM_ENOT_SUPPORTED, "Loom was built without munge");
}

#endif

/*
 * munge.c - munge-authenticated frames. See munge.h.
 *
 * libmunge is loaded with dlopen by loom_munge_open, not linked: only a
 * command that talks TCP without the cluster key (or a daemon with
 * AuthType=auth/munge) needs it, and every other command starts without it.
 */
#include "common/munge.h"

#include "common/frame.h"
#include "common/sha256.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

#ifdef LOOM_HAVE_MUNGE
#include <dlfcn.h>
#include <munge.h>

/* libmunge's ABI (munge 0.5.x); the soname the linker would have recorded. */
#define MUNGE_SONAME "libmunge.so.2"

/* The libmunge functions munge.c calls, resolved from one dlopen handle. */
typedef struct munge_lib {
    void *dl;
    __typeof__(&munge_ctx_create) ctx_create;
    __typeof__(&munge_ctx_destroy) ctx_destroy;
    __typeof__(&munge_ctx_set) ctx_set;
    __typeof__(&munge_ctx_strerror) ctx_strerror;
    __typeof__(&munge_encode) encode;
    __typeof__(&munge_decode) decode;
    __typeof__(&munge_strerror) strerror;
} munge_lib_t;
#endif

#define MUNGE_DIGEST LOOM_SHA256_SIZE

struct loom_munge {
#ifdef LOOM_HAVE_MUNGE
    munge_lib_t lib;
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
    return loom_sha256(text, len, out, NULL);
}

#ifdef LOOM_HAVE_MUNGE

/* dlsym one symbol into *slot; false when missing. */
static bool munge_sym(void *dl, const char *name, void *slot)
{
    void *f = dlsym(dl, name);
    memcpy(slot, &f, sizeof(f)); /* object to function pointer, as POSIX allows */
    return f != NULL;
}

static int munge_lib_load(munge_lib_t *lib, loom_err_t *err)
{
    lib->dl = dlopen(MUNGE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib->dl)
        return loom_errf(err, -LOOM_ENOT_SUPPORTED, "munge: cannot load %s: %s", MUNGE_SONAME,
                         dlerror());
    if (munge_sym(lib->dl, "munge_ctx_create", &lib->ctx_create) &&
        munge_sym(lib->dl, "munge_ctx_destroy", &lib->ctx_destroy) &&
        munge_sym(lib->dl, "munge_ctx_set", &lib->ctx_set) &&
        munge_sym(lib->dl, "munge_ctx_strerror", &lib->ctx_strerror) &&
        munge_sym(lib->dl, "munge_encode", &lib->encode) &&
        munge_sym(lib->dl, "munge_decode", &lib->decode) &&
        munge_sym(lib->dl, "munge_strerror", &lib->strerror))
        return 0;
    dlclose(lib->dl);
    lib->dl = NULL;
    return loom_errf(err, -LOOM_ENOT_SUPPORTED, "munge: %s lacks a munge_* function", MUNGE_SONAME);
}

int loom_munge_open(const char *socket, loom_munge_t **out, loom_err_t *err)
{
    loom_munge_t *m = loom_xcalloc(1, sizeof(*m));
    int rc = munge_lib_load(&m->lib, err);
    if (rc < 0) {
        free(m);
        return rc;
    }
    m->ctx = m->lib.ctx_create();
    if (!m->ctx)
        rc = loom_errf(err, -LOOM_EINTERNAL, "munge: cannot create a context");
    else if (socket && m->lib.ctx_set(m->ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS)
        rc = loom_errf(err, -LOOM_ECONFIG, "munge: bad socket %s: %s", socket,
                       m->lib.ctx_strerror(m->ctx));
    if (rc < 0) {
        loom_munge_close(m);
        return rc;
    }
    *out = m;
    return 0;
}

void loom_munge_close(loom_munge_t *m)
{
    if (!m)
        return;
    if (m->ctx)
        m->lib.ctx_destroy(m->ctx);
    dlclose(m->lib.dl);
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
    munge_err_t e = rc == 0 ? m->lib.encode(&cred, m->ctx, digest, sizeof(digest)) : EMUNGE_SNAFU;
    if (e != EMUNGE_SUCCESS) {
        free(text);
        return loom_errf(err, -LOOM_EAUTH, "munge: cannot encode a credential: %s",
                         m->lib.strerror(e));
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
    munge_err_t e = m->lib.decode(cred, m->ctx, &payload, &plen, &u, &g);
    free(cred);
    unsigned char digest[MUNGE_DIGEST];
    int rc = 0;
    if (e != EMUNGE_SUCCESS)
        rc = loom_errf(err, -LOOM_EAUTH, "munge: credential refused: %s", m->lib.strerror(e));
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

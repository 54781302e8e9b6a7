/*
 * jsonread.c - the fast reader of jsonread.h: one pass of recursive descent
 * over the text, strings without escapes handed to jansson in place. Every
 * doubt returns NULL (the caller asks json_loadb), so the grammar below only
 * needs to be right for what it accepts.
 */
#include "common/jsonread.h"

#include "common/sbuf.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JSONREAD_MAX_DEPTH  512 /* jansson allows 2048: deeper goes to it */
#define JSONREAD_MAX_DIGITS 18  /* fits int64 without a range check */
#define JSONREAD_MAX_REAL   64  /* longer reals go to jansson */

typedef struct jsonread {
    const char *p, *end;
    int depth;
    loom_sbuf_t scratch; /* a string with escapes, unescaped */
} jsonread_t;

static json_t *jsonread_value(jsonread_t *r);

static void jsonread_ws(jsonread_t *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

static bool jsonread_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int jsonread_hex(char c)
{
    if (jsonread_is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* \uXXXX for 1..0x7f (the rest, NUL and surrogates included, go to jansson). */
static int jsonread_u(jsonread_t *r)
{
    if (r->end - r->p < 5)
        return -1;
    int v = 0;
    for (int i = 1; i <= 4; i++) {
        int h = jsonread_hex(r->p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    r->p += 5;
    return v >= 1 && v < 0x80 ? v : -1;
}

/* One escape after the backslash at r->p, appended to the scratch. */
static bool jsonread_escape(jsonread_t *r)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (r->p + 1 >= r->end)
        return false;
    const char *e = r->p[1] ? strchr(from, r->p[1]) : NULL;
    if (e) {
        loom_sbuf_addc(&r->scratch, to[e - from]);
        r->p += 2;
        return true;
    }
    if (r->p[1] != 'u')
        return false;
    r->p++;
    int c = jsonread_u(r);
    if (c < 0)
        return false;
    loom_sbuf_addc(&r->scratch, (char)c);
    return true;
}

/* Skip plain ASCII string characters: not '"', '\\', control or non-ASCII. */
static const char *jsonread_plain(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' &&
           *p != '\\')
        p++;
    return p;
}

/* The string after the opening quote at r->p: in place when it has no
 * escape, else unescaped into the scratch. False on anything else. */
static bool jsonread_string(jsonread_t *r, const char **s, size_t *n)
{
    const char *start = ++r->p;
    r->p = jsonread_plain(r->p, r->end);
    if (r->p < r->end && *r->p == '"') {
        *s = start;
        *n = (size_t)(r->p++ - start);
        return true;
    }
    loom_sbuf_reset(&r->scratch);
    loom_sbuf_addn(&r->scratch, start, (size_t)(r->p - start));
    while (r->p < r->end && *r->p == '\\') {
        if (!jsonread_escape(r))
            return false;
        const char *q = jsonread_plain(r->p, r->end);
        loom_sbuf_addn(&r->scratch, r->p, (size_t)(q - r->p));
        r->p = q;
    }
    if (r->p >= r->end || *r->p != '"')
        return false;
    r->p++;
    *s = r->scratch.buf ? r->scratch.buf : "";
    *n = r->scratch.len;
    return true;
}

static const char *jsonread_digits(const char *p, const char *end)
{
    while (p < end && jsonread_is_digit(*p))
        p++;
    return p;
}

/* A real number's text (already checked against the grammar) by strtod, as
 * jansson converts it; NULL on overflow or a locale that strtod reads
 * differently. */
static json_t *jsonread_real(const char *s, size_t n)
{
    char buf[JSONREAD_MAX_REAL + 1], *endp;
    if (n > JSONREAD_MAX_REAL)
        return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    double v = strtod(buf, &endp);
    if (endp != buf + n || (errno == ERANGE && isinf(v)))
        return NULL;
    return json_real(v);
}

static json_t *jsonread_int(const char *s, const char *e)
{
    bool neg = *s == '-';
    if (neg)
        s++;
    if (e - s > JSONREAD_MAX_DIGITS)
        return NULL;
    json_int_t v = 0;
    for (; s < e; s++)
        v = v * 10 + (*s - '0');
    return json_integer(neg ? -v : v);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as jansson's lexer reads it. */
static json_t *jsonread_number(jsonread_t *r)
{
    const char *s = r->p, *p = s + (*s == '-');
    if (p >= r->end || !jsonread_is_digit(*p))
        return NULL;
    p = *p == '0' ? p + 1 : jsonread_digits(p, r->end);
    if (p < r->end && jsonread_is_digit(*p))
        return NULL; /* a leading zero */
    const char *int_end = p;
    if (p < r->end && *p == '.') {
        const char *q = jsonread_digits(p + 1, r->end);
        if (q == p + 1)
            return NULL;
        p = q;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < r->end && (*p == '+' || *p == '-'))
            p++;
        const char *q = jsonread_digits(p, r->end);
        if (q == p)
            return NULL;
        p = q;
    }
    r->p = p;
    return p == int_end ? jsonread_int(s, p) : jsonread_real(s, (size_t)(p - s));
}

static json_t *jsonread_literal(jsonread_t *r, const char *word, json_t *v)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return NULL;
    r->p += n;
    return v;
}

/* After a member or element: true at ',' (consumed), false at the closer. */
static int jsonread_next(jsonread_t *r, char closer)
{
    jsonread_ws(r);
    if (r->p < r->end && *r->p == ',') {
        r->p++;
        jsonread_ws(r);
        return 1;
    }
    if (r->p < r->end && *r->p == closer) {
        r->p++;
        return 0;
    }
    return -1;
}

/* One "key": value member into obj; false on bad text or a duplicate key. */
static bool jsonread_member(jsonread_t *r, json_t *obj)
{
    const char *k;
    size_t kn;
    if (r->p >= r->end || *r->p != '"' || !jsonread_string(r, &k, &kn))
        return false;
    /* The key may live in the scratch, which the value's string reuses. */
    char small[64], *key = kn < sizeof(small) ? small : malloc(kn + 1);
    if (!key)
        return false;
    memcpy(key, k, kn);
    key[kn] = '\0';
    jsonread_ws(r);
    json_t *v = NULL;
    if (r->p < r->end && *r->p == ':') {
        r->p++;
        jsonread_ws(r);
        v = jsonread_value(r);
    }
    size_t before = json_object_size(obj);
    bool ok = v && json_object_setn_new_nocheck(obj, key, kn, v) == 0 &&
              json_object_size(obj) == before + 1;
    if (key != small)
        free(key);
    return ok;
}

/* One element into the array. */
static bool jsonread_element(jsonread_t *r, json_t *arr)
{
    json_t *v = jsonread_value(r);
    return v && json_array_append_new(arr, v) == 0;
}

/* The object or array at r->p: members or elements separated by ',' up to
 * its closer. */
static json_t *jsonread_container(jsonread_t *r)
{
    if (++r->depth > JSONREAD_MAX_DEPTH)
        return NULL;
    bool is_obj = *r->p == '{';
    char closer = is_obj ? '}' : ']';
    json_t *c = is_obj ? json_object() : json_array();
    r->p++;
    jsonread_ws(r);
    int more = 1;
    if (r->p < r->end && *r->p == closer) {
        r->p++;
        more = 0;
    }
    while (more > 0 && (is_obj ? jsonread_member(r, c) : jsonread_element(r, c)))
        more = jsonread_next(r, closer);
    r->depth--;
    if (more != 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static json_t *jsonread_value(jsonread_t *r)
{
    if (r->p >= r->end)
        return NULL;
    const char *s;
    size_t n;
    switch (*r->p) {
    case '{':
    case '[':
        return jsonread_container(r);
    case '"':
        return jsonread_string(r, &s, &n) ? json_stringn_nocheck(s, n) : NULL;
    case 't':
        return jsonread_literal(r, "true", json_true());
    case 'f':
        return jsonread_literal(r, "false", json_false());
    case 'n':
        return jsonread_literal(r, "null", json_null());
    default:
        return jsonread_number(r);
    }
}

json_t *loom_json_read(const char *text, size_t len)
{
    jsonread_t r = {.p = text, .end = text + len};
    loom_sbuf_init(&r.scratch);
    jsonread_ws(&r);
    json_t *v = NULL;
    if (r.p < r.end && (*r.p == '{' || *r.p == '['))
        v = jsonread_value(&r);
    jsonread_ws(&r);
    if (v && r.p != r.end) {
        json_decref(v);
        v = NULL;
    }
    loom_sbuf_free(&r.scratch);
    return v;
}

json_t *loom_json_loadb(const char *text, size_t len, json_error_t *err)
{
    json_t *v = loom_json_read(text, len);
    return v ? v : json_loadb(text, len, JSON_REJECT_DUPLICATES, err);
}

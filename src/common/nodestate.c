/*
 * nodestate.c - node state names. See nodestate.h and
 * docs/proto/node-states.md.
 */
#include "common/nodestate.h"

#include <string.h>
#include <strings.h>

static const char *const nodestate_bases[LOOM_NODE_BASE_COUNT] = {
    [LOOM_NODE_UNKNOWN] = "UNKNOWN",     [LOOM_NODE_DOWN] = "DOWN",   [LOOM_NODE_IDLE] = "IDLE",
    [LOOM_NODE_ALLOCATED] = "ALLOCATED", [LOOM_NODE_MIXED] = "MIXED", [LOOM_NODE_FUTURE] = "FUTURE",
};

/* The complete form's flag names, in its order. */
static const struct {
    uint32_t flag;
    const char *name;
} nodestate_flags[] = {
    {LOOM_NODE_F_CLOUD, "CLOUD"},
    {LOOM_NODE_F_COMPLETING, "COMPLETING"},
    {LOOM_NODE_F_DRAIN, "DRAIN"},
    {LOOM_NODE_F_INVALID_REG, "INVALID_REG"},
    {LOOM_NODE_F_FAIL, "FAIL"},
    {LOOM_NODE_F_MAINT, "MAINTENANCE"},
    {LOOM_NODE_F_POWER_DOWN, "POWER_DOWN"},
    {LOOM_NODE_F_POWERED_DOWN, "POWERED_DOWN"},
    {LOOM_NODE_F_REBOOT_REQUESTED, "REBOOT_REQUESTED"},
    {LOOM_NODE_F_REBOOT_ISSUED, "REBOOT_ISSUED"},
    {LOOM_NODE_F_RESERVED, "RESERVED"},
    {LOOM_NODE_F_NO_RESPOND, "NOT_RESPONDING"},
    {LOOM_NODE_F_PLANNED, "PLANNED"},
    {LOOM_NODE_F_POWERING_UP, "POWERING_UP"},
    {LOOM_NODE_F_POWERING_DOWN, "POWERING_DOWN"},
};

#define NODESTATE_NFLAGS (sizeof(nodestate_flags) / sizeof(nodestate_flags[0]))

/* sinfo's suffix characters, first match wins (node-states.md §2). */
static const struct {
    uint32_t flag;
    char c;
} nodestate_suffixes[] = {
    {LOOM_NODE_F_MAINT, '$'},
    {LOOM_NODE_F_REBOOT_ISSUED, '^'},
    {LOOM_NODE_F_REBOOT_REQUESTED, '@'},
    {LOOM_NODE_F_POWERING_UP, '#'},
    {LOOM_NODE_F_POWERING_DOWN, '%'},
    {LOOM_NODE_F_POWERED_DOWN, '~'},
    {LOOM_NODE_F_POWER_DOWN, '!'},
    {LOOM_NODE_F_NO_RESPOND, '*'},
};

#define NODESTATE_NSUFFIXES (sizeof(nodestate_suffixes) / sizeof(nodestate_suffixes[0]))

const char *loom_node_base_name(uint32_t state)
{
    loom_node_base_t b = loom_node_base(state);
    return b < LOOM_NODE_BASE_COUNT ? nodestate_bases[b] : "INVALID";
}

void loom_node_state_complete(uint32_t state, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_node_base_name(state));
    for (size_t i = 0; i < NODESTATE_NFLAGS; i++)
        if (state & nodestate_flags[i].flag)
            loom_sbuf_addf(out, "+%s", nodestate_flags[i].name);
}

void loom_node_state_list(uint32_t state, loom_strv_t *out)
{
    loom_strv_add(out, loom_node_base_name(state));
    for (size_t i = 0; i < NODESTATE_NFLAGS; i++)
        if (state & nodestate_flags[i].flag)
            loom_strv_add(out, nodestate_flags[i].name);
}

/* ---- sinfo names ---- */

typedef enum { SFX_NONE, SFX_STAR, SFX_BOOT, SFX_ALL } nodestate_sfx_t;

typedef struct {
    const char *lng, *cmp;
    nodestate_sfx_t sfx;
} nodestate_word_t;

/* The word sinfo prints, by the first rule that matches. */
static nodestate_word_t nodestate_word(uint32_t s)
{
    loom_node_base_t b = loom_node_base(s);
    bool busy = b == LOOM_NODE_ALLOCATED || b == LOOM_NODE_MIXED;
    bool comp = s & LOOM_NODE_F_COMPLETING;
    if (s & LOOM_NODE_F_INVALID_REG)
        return (nodestate_word_t){"inval", "inval", SFX_NONE};
    if ((s & LOOM_NODE_F_MAINT) && !(s & LOOM_NODE_F_DRAIN) && !busy && b != LOOM_NODE_DOWN)
        return (nodestate_word_t){"maint", "maint", SFX_STAR};
    if ((s & (LOOM_NODE_F_REBOOT_REQUESTED | LOOM_NODE_F_REBOOT_ISSUED)) && !busy)
        return (nodestate_word_t){"reboot", "boot", SFX_BOOT};
    if (s & LOOM_NODE_F_DRAIN)
        return (comp || busy) ? (nodestate_word_t){"draining", "drng", SFX_ALL}
                              : (nodestate_word_t){"drained", "drain", SFX_ALL};
    if (s & LOOM_NODE_F_FAIL)
        return (comp || b == LOOM_NODE_ALLOCATED) ? (nodestate_word_t){"failing", "failg", SFX_STAR}
                                                  : (nodestate_word_t){"fail", "fail", SFX_STAR};
    if (b == LOOM_NODE_DOWN)
        return (nodestate_word_t){"down", "down", SFX_ALL};
    if (b == LOOM_NODE_ALLOCATED)
        return (nodestate_word_t){"allocated", "alloc", SFX_ALL};
    if (comp)
        return (nodestate_word_t){"completing", "comp", SFX_ALL};
    switch (b) {
    case LOOM_NODE_IDLE:
        return (nodestate_word_t){"idle", "idle", SFX_ALL};
    case LOOM_NODE_MIXED:
        return (nodestate_word_t){"mixed", "mix", SFX_ALL};
    case LOOM_NODE_FUTURE:
        return (nodestate_word_t){"future", "futr", SFX_ALL};
    case LOOM_NODE_UNKNOWN:
        return (nodestate_word_t){"unknown", "unk", SFX_STAR};
    default:
        return (nodestate_word_t){"?", "?", SFX_NONE};
    }
}

static char nodestate_suffix(uint32_t s)
{
    for (size_t i = 0; i < NODESTATE_NSUFFIXES; i++)
        if (s & nodestate_suffixes[i].flag)
            return nodestate_suffixes[i].c;
    return '\0';
}

void loom_node_state_sinfo(uint32_t state, bool compact, loom_sbuf_t *out)
{
    nodestate_word_t w = nodestate_word(state);
    loom_node_base_t b = loom_node_base(state);
    char c = '\0';
    if (w.sfx == SFX_STAR || w.sfx == SFX_BOOT)
        c = (state & LOOM_NODE_F_NO_RESPOND) ? '*' : '\0';
    if (w.sfx == SFX_BOOT && (state & LOOM_NODE_F_REBOOT_ISSUED))
        c = '^';
    if (w.sfx == SFX_ALL)
        c = nodestate_suffix(state);
    if (w.sfx == SFX_ALL && !c && b == LOOM_NODE_ALLOCATED && (state & LOOM_NODE_F_COMPLETING))
        c = '+';
    if (w.sfx == SFX_ALL && !c && b == LOOM_NODE_MIXED && (state & LOOM_NODE_F_PLANNED))
        c = '-';
    if (w.sfx == SFX_ALL && !c && b == LOOM_NODE_IDLE && !(state & LOOM_NODE_F_COMPLETING)) {
        if (state & LOOM_NODE_F_RESERVED)
            w = (nodestate_word_t){"reserved", "resv", SFX_NONE};
        else if (state & LOOM_NODE_F_PLANNED)
            w = (nodestate_word_t){"planned", "plnd", SFX_NONE};
    }
    loom_sbuf_add(out, compact ? w.cmp : w.lng);
    if (c)
        loom_sbuf_addc(out, c);
}

/* ---- parsing ---- */

/* Words sinfo prints (and -t accepts), with the state each stands for. */
static const struct {
    const char *word;
    uint32_t state;
} nodestate_words[] = {
    {"idle", LOOM_NODE_IDLE},
    {"alloc", LOOM_NODE_ALLOCATED},
    {"allocated", LOOM_NODE_ALLOCATED},
    {"mix", LOOM_NODE_MIXED},
    {"mixed", LOOM_NODE_MIXED},
    {"down", LOOM_NODE_DOWN},
    {"drain", LOOM_NODE_IDLE | LOOM_NODE_F_DRAIN},
    {"drained", LOOM_NODE_IDLE | LOOM_NODE_F_DRAIN},
    {"drng", LOOM_NODE_ALLOCATED | LOOM_NODE_F_DRAIN},
    {"draining", LOOM_NODE_ALLOCATED | LOOM_NODE_F_DRAIN},
    {"comp", LOOM_NODE_IDLE | LOOM_NODE_F_COMPLETING},
    {"completing", LOOM_NODE_IDLE | LOOM_NODE_F_COMPLETING},
    {"resv", LOOM_NODE_IDLE | LOOM_NODE_F_RESERVED},
    {"reserved", LOOM_NODE_IDLE | LOOM_NODE_F_RESERVED},
    {"maint", LOOM_NODE_IDLE | LOOM_NODE_F_MAINT},
    {"unk", LOOM_NODE_UNKNOWN},
    {"unknown", LOOM_NODE_UNKNOWN},
    {"futr", LOOM_NODE_FUTURE},
    {"future", LOOM_NODE_FUTURE},
    {"fail", LOOM_NODE_IDLE | LOOM_NODE_F_FAIL},
    {"failg", LOOM_NODE_ALLOCATED | LOOM_NODE_F_FAIL},
    {"failing", LOOM_NODE_ALLOCATED | LOOM_NODE_F_FAIL},
    {"plnd", LOOM_NODE_IDLE | LOOM_NODE_F_PLANNED},
    {"planned", LOOM_NODE_IDLE | LOOM_NODE_F_PLANNED},
    {"inval", LOOM_NODE_UNKNOWN | LOOM_NODE_F_INVALID_REG},
    {"boot", LOOM_NODE_IDLE | LOOM_NODE_F_REBOOT_REQUESTED},
    {"reboot", LOOM_NODE_IDLE | LOOM_NODE_F_REBOOT_REQUESTED},
    {"no_respond", LOOM_NODE_F_NO_RESPOND},
};

#define NODESTATE_NWORDS (sizeof(nodestate_words) / sizeof(nodestate_words[0]))

static bool nodestate_eq(const char *name, const char *tok, size_t len)
{
    return strlen(name) == len && strncasecmp(name, tok, len) == 0;
}

static int nodestate_flag_byname(const char *tok, size_t len, uint32_t *flag)
{
    for (size_t i = 0; i < NODESTATE_NFLAGS; i++)
        if (nodestate_eq(nodestate_flags[i].name, tok, len)) {
            *flag = nodestate_flags[i].flag;
            return 0;
        }
    return -1;
}

static int nodestate_word_byname(const char *tok, size_t len, uint32_t *state)
{
    for (size_t i = 0; i < NODESTATE_NWORDS; i++)
        if (nodestate_eq(nodestate_words[i].word, tok, len)) {
            *state = nodestate_words[i].state;
            return 0;
        }
    return -1;
}

/* One word: a sinfo word, a flag name, or a sinfo word with a suffix. */
static int nodestate_parse_word(const char *tok, size_t len, uint32_t *state)
{
    if (nodestate_word_byname(tok, len, state) == 0 || nodestate_flag_byname(tok, len, state) == 0)
        return 0;
    static const char sfx[] = "$^@#%~!*+-";
    static const uint32_t sfx_flag[] = {
        LOOM_NODE_F_MAINT,       LOOM_NODE_F_REBOOT_ISSUED, LOOM_NODE_F_REBOOT_REQUESTED,
        LOOM_NODE_F_POWERING_UP, LOOM_NODE_F_POWERING_DOWN, LOOM_NODE_F_POWERED_DOWN,
        LOOM_NODE_F_POWER_DOWN,  LOOM_NODE_F_NO_RESPOND,    LOOM_NODE_F_COMPLETING,
        LOOM_NODE_F_PLANNED,
    };
    const char *c = len > 1 ? strchr(sfx, tok[len - 1]) : NULL;
    uint32_t base;
    if (!c || !*c || nodestate_word_byname(tok, len - 1, &base) < 0)
        return -1;
    *state = base | sfx_flag[c - sfx];
    return 0;
}

/* "BASE+FLAG+FLAG". */
static int nodestate_parse_complete(const char *s, uint32_t *state)
{
    const char *plus = strchr(s, '+');
    uint32_t st = LOOM_NODE_BASE_COUNT;
    for (uint32_t b = 0; b < LOOM_NODE_BASE_COUNT; b++)
        if (nodestate_eq(nodestate_bases[b], s, (size_t)(plus - s)))
            st = b;
    if (st == LOOM_NODE_BASE_COUNT)
        return -1;
    while (plus) {
        const char *tok = plus + 1;
        plus = strchr(tok, '+');
        size_t len = plus ? (size_t)(plus - tok) : strlen(tok);
        uint32_t f;
        if (nodestate_flag_byname(tok, len, &f) < 0)
            return -1;
        st |= f;
    }
    *state = st;
    return 0;
}

int loom_node_state_parse(const char *s, uint32_t *state, loom_err_t *err)
{
    uint32_t st;
    if (nodestate_parse_word(s, strlen(s), &st) == 0 ||
        (strchr(s, '+') && nodestate_parse_complete(s, &st) == 0)) {
        *state = st;
        return 0;
    }
    return loom_errf(err, -LOOM_EPARSE, "Invalid node state specified: %s", s);
}

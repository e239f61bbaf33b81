/*
 * config.c: the kn_conf object: one slot per catalog key holding the
 * user's canonical value and whether it was set by the user or derived
 * by kn_conf_finalize; set/get/dup/destroy/dump, the typed getters of
 * config.h, and the "did you mean" suggestion for unknown keys.
 * Validation of a single value is catalog.c's; cross-key rules are
 * finalize.c's; the .properties reader is properties.c's.
 */
#include "config/config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"

typedef enum { SLOT_DEFAULT = 0, SLOT_USER, SLOT_DERIVED } slot_state;

typedef struct kn_conf_slot {
    char *val; /* owned; NULL = null (when state != SLOT_DEFAULT) */
    unsigned char state;
} kn_conf_slot;

struct kn_conf {
    kn_client_type type;
    size_t nslots;
    kn_conf_slot *slots;
    /* kn_conf_set_log_cb: not a Kafka key, copied by kn_conf_dup */
    kn_log_cb *log_fn;
    void *log_opaque;
    int log_level; /* -1: the process default */
    /* kn_conf_set_oauthbearer_token_cb, copied by kn_conf_dup */
    kn_oauthbearer_token_cb *token_fn;
    void *token_opaque;
};

static const char *client_name(kn_client_type t) {
    return t == KN_CLIENT_PRODUCER ? "producer" : t == KN_CLIENT_CONSUMER ? "consumer" : "admin client";
}

static int valid_type(kn_client_type t) {
    return t == KN_CLIENT_PRODUCER || t == KN_CLIENT_CONSUMER || t == KN_CLIENT_ADMIN;
}

kn_conf *kn_conf_new(kn_client_type type) {
    if (!valid_type(type))
        return NULL;
    kn_conf *conf = kn_calloc(1, sizeof(*conf));
    if (!conf)
        return NULL;
    conf->type = type;
    conf->log_level = -1;
    conf->nslots = kn_conf_key_count();
    conf->slots = kn_calloc(conf->nslots, sizeof(*conf->slots));
    if (!conf->slots) {
        kn_free(conf);
        return NULL;
    }
    return conf;
}

void kn_conf_destroy(kn_conf *conf) {
    if (!conf)
        return;
    for (size_t i = 0; i < conf->nslots; i++)
        kn_free(conf->slots[i].val);
    kn_free(conf->slots);
    kn_free(conf);
}

kn_conf *kn_conf_dup(const kn_conf *src) {
    if (!src)
        return NULL;
    kn_conf *conf = kn_conf_new(src->type);
    if (!conf)
        return NULL;
    conf->log_fn = src->log_fn;
    conf->log_opaque = src->log_opaque;
    conf->log_level = src->log_level;
    conf->token_fn = src->token_fn;
    conf->token_opaque = src->token_opaque;
    for (size_t i = 0; i < src->nslots; i++) {
        conf->slots[i].state = src->slots[i].state;
        if (src->slots[i].val && !(conf->slots[i].val = kn_strdup(src->slots[i].val))) {
            kn_conf_destroy(conf);
            return NULL;
        }
    }
    return conf;
}

kn_client_type kn_conf_client_type(const kn_conf *conf) { return conf->type; }

int kn_conf_set_log_cb(kn_conf *conf, int max_level, kn_log_cb *fn, void *opaque) {
    if (!conf || max_level < -1 || max_level > KN_LOG_DEBUG)
        return KN_ERR__INVALID_ARG;
    conf->log_fn = fn;
    conf->log_opaque = fn ? opaque : NULL;
    conf->log_level = max_level;
    return KN_OK;
}

int kn_conf_set_oauthbearer_token_cb(kn_conf *conf, kn_oauthbearer_token_cb *fn, void *opaque) {
    if (!conf)
        return KN_ERR__INVALID_ARG;
    conf->token_fn = fn;
    conf->token_opaque = fn ? opaque : NULL;
    return KN_OK;
}

kn_oauthbearer_token_cb *kn_conf_oauthbearer_token_cb(const kn_conf *conf, void **opaque) {
    *opaque = conf->token_opaque;
    return conf->token_fn;
}

kn_log_cb *kn_conf_log_cb(const kn_conf *conf, int *max_level, void **opaque) {
    *max_level = conf->log_level;
    *opaque = conf->log_opaque;
    return conf->log_fn;
}

/* Slot of key if it exists for this client type, else -1. */
static long slot_of(const kn_conf *conf, const char *key) {
    long i = kn_conf_key_find(key);
    if (i < 0 || !(kn_conf_key_at((size_t)i)->clients & conf->type))
        return -1;
    return i;
}

/* Effective value of slot i (default if not set); NULL = null. */
static const char *slot_value(const kn_conf *conf, size_t i) {
    const kn_conf_slot *s = &conf->slots[i];
    if (s->state != SLOT_DEFAULT)
        return s->val;
    return kn_conf_key_default(kn_conf_key_at(i), conf->type);
}

/* ---- "did you mean": Damerau-Levenshtein (optimal string alignment),
 * so a swapped pair of letters costs one edit. ---- */

static size_t edit_distance(const char *a, const char *b, size_t cap) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 128 || lb > 128)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    size_t rows[3][129];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (prev[j - 1] + cost < v)
                v = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < v)
                v = prev2[j - 2] + 1;
            cur[j] = v;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

static int unknown_key_error(const kn_conf *conf, const char *key, char *errstr, size_t size) {
    long other = kn_conf_key_find(key);
    if (other >= 0) {
        unsigned clients = kn_conf_key_at((size_t)other)->clients;
        char owners[64] = "";
        static const kn_client_type all[] = {KN_CLIENT_PRODUCER, KN_CLIENT_CONSUMER, KN_CLIENT_ADMIN};
        for (size_t j = 0; j < 3; j++)
            if (clients & all[j])
                snprintf(owners + strlen(owners), sizeof(owners) - strlen(owners), "%s%s",
                         owners[0] ? " and " : "", client_name(all[j]));
        kn_errstr_set(errstr, size, "unknown configuration key \"%s\" for a%s %s: %s is a%s %s setting", key,
                      conf->type == KN_CLIENT_ADMIN ? "n" : "", client_name(conf->type), key,
                      (clients & KN_CLIENT_PRODUCER) || (clients & KN_CLIENT_CONSUMER) ? "" : "n", owners);
        return KN_ERR__CONFIG;
    }
    /* Allow about one edit per four characters, at least two. Keys of
     * this client type first; failing that, a near key of another type
     * is still worth naming. */
    size_t klen = strlen(key);
    size_t cap = klen / 4 > 2 ? klen / 4 : 2;
    const kn_conf_key *best[2] = {NULL, NULL};
    size_t best_d[2] = {cap + 1, cap + 1};
    for (size_t i = 0; i < conf->nslots; i++) {
        const kn_conf_key *k = kn_conf_key_at(i);
        int other_type = !(k->clients & conf->type);
        size_t d = edit_distance(key, k->name, cap);
        if (d < best_d[other_type]) {
            best_d[other_type] = d;
            best[other_type] = k;
        }
    }
    const char *an = conf->type == KN_CLIENT_ADMIN ? "n" : "";
    if (best[0])
        kn_errstr_set(errstr, size, "unknown configuration key \"%s\" for a%s %s (did you mean \"%s\"?)", key, an,
                      client_name(conf->type), best[0]->name);
    else if (best[1])
        kn_errstr_set(errstr, size,
                      "unknown configuration key \"%s\" for a%s %s (\"%s\" is close, but it is not a %s setting)",
                      key, an, client_name(conf->type), best[1]->name, client_name(conf->type));
    else
        kn_errstr_set(errstr, size, "unknown configuration key \"%s\" for a%s %s", key, an, client_name(conf->type));
    return KN_ERR__CONFIG;
}

int kn_conf_set(kn_conf *conf, const char *key, const char *value, char *errstr, size_t errstr_size) {
    if (!conf || !key) {
        kn_errstr_set(errstr, errstr_size, "kn_conf_set: NULL %s", conf ? "key" : "conf");
        return KN_ERR__INVALID_ARG;
    }
    long i = slot_of(conf, key);
    if (i < 0)
        return unknown_key_error(conf, key, errstr, errstr_size);
    kn_conf_slot *s = &conf->slots[i];
    if (!value) {
        kn_free(s->val);
        s->val = NULL;
        s->state = SLOT_DEFAULT;
        return KN_OK;
    }
    char *canon;
    int err = kn_conf_key_validate(kn_conf_key_at((size_t)i), value, &canon, errstr, errstr_size);
    if (err == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "out of memory setting %s", key);
    if (err)
        return err;
    kn_free(s->val);
    s->val = canon;
    s->state = SLOT_USER;
    return KN_OK;
}

int kn_conf_derive(kn_conf *conf, const char *key, const char *value) {
    long i = slot_of(conf, key);
    assert(i >= 0);
    if (i < 0)
        return KN_ERR__INVALID_ARG;
    char *copy = NULL;
    if (value && !(copy = kn_strdup(value)))
        return KN_ERR__NOMEM;
    kn_free(conf->slots[i].val);
    conf->slots[i].val = copy;
    conf->slots[i].state = SLOT_DERIVED;
    return KN_OK;
}

int kn_conf_get(const kn_conf *conf, const char *key, char *buf, size_t *sizep) {
    long i = conf && key ? slot_of(conf, key) : -1;
    if (i < 0 || !sizep)
        return i < 0 ? KN_ERR__CONFIG : KN_ERR__INVALID_ARG;
    const char *v = slot_value(conf, (size_t)i);
    size_t cap = *sizep;
    if (!v) {
        *sizep = 0;
        if (buf && cap)
            buf[0] = 0;
        return KN_ERR__NOT_FOUND;
    }
    size_t need = strlen(v) + 1;
    *sizep = need;
    if (buf && cap) {
        size_t n = need <= cap ? need - 1 : cap - 1;
        memcpy(buf, v, n);
        buf[n] = 0;
    }
    return KN_OK;
}

int kn_conf_is_set(const kn_conf *conf, const char *key) {
    long i = slot_of(conf, key);
    assert(i >= 0);
    return i >= 0 && conf->slots[i].state == SLOT_USER;
}

int kn_conf_dump(const kn_conf *conf,
                 void (*fn)(const char *key, const char *value, int is_default, void *opaque), void *opaque) {
    if (!conf || !fn)
        return KN_ERR__INVALID_ARG;
    /* The generated table is sorted; the extra keys are merged in so the
     * caller sees one name order. */
    size_t ng = kn_conf_catalog_count, ne = kn_conf_extra_count;
    size_t gi = 0, ei = 0;
    while (gi < ng || ei < ne) {
        size_t slot;
        if (gi < ng && (ei >= ne || strcmp(kn_conf_catalog[gi].name, kn_conf_extra_keys[ei].name) < 0))
            slot = gi++;
        else
            slot = ng + ei++;
        const kn_conf_key *k = kn_conf_key_at(slot);
        if (!(k->clients & conf->type))
            continue;
        const char *v = slot_value(conf, slot);
        if (v && k->type == KN_CONF_PASSWORD)
            v = "[hidden]";
        fn(k->name, v, conf->slots[slot].state != SLOT_USER, opaque);
    }
    return KN_OK;
}

/* ---- typed getters ---- */

/* The key's slot for a getter that accepts the given types, or -1
 * (asserting: a wrong key or type is a bug in the caller). */
static long getter_slot(const kn_conf *conf, const char *key, unsigned type_mask) {
    long i = slot_of(conf, key);
    assert(i >= 0 && "configuration key unknown for this client type");
    if (i < 0)
        return -1;
    unsigned t = kn_conf_key_at((size_t)i)->type;
    assert((type_mask & (1u << t)) && "configuration getter of the wrong type");
    if (!(type_mask & (1u << t)))
        return -1;
    return i;
}

#define T(x) (1u << (x))

int64_t kn_conf_get_int(const kn_conf *conf, const char *key) {
    long i = getter_slot(conf, key, T(KN_CONF_SHORT) | T(KN_CONF_INT) | T(KN_CONF_LONG));
    const char *v = i >= 0 ? slot_value(conf, (size_t)i) : NULL;
    int64_t out = 0;
    if (v && kn_conf_parse_int(v, INT64_MIN, INT64_MAX, &out) != KN_OK)
        out = 0;
    return out;
}

int kn_conf_get_bool(const kn_conf *conf, const char *key) {
    long i = getter_slot(conf, key, T(KN_CONF_BOOLEAN));
    const char *v = i >= 0 ? slot_value(conf, (size_t)i) : NULL;
    return v && kn_conf_parse_bool(v) == 1;
}

double kn_conf_get_double(const kn_conf *conf, const char *key) {
    long i = getter_slot(conf, key, T(KN_CONF_DOUBLE));
    const char *v = i >= 0 ? slot_value(conf, (size_t)i) : NULL;
    double out = 0;
    if (v && kn_conf_parse_double(v, &out) != KN_OK)
        out = 0;
    return out;
}

const char *kn_conf_get_str(const kn_conf *conf, const char *key) {
    long i = getter_slot(conf, key, T(KN_CONF_STRING) | T(KN_CONF_PASSWORD) | T(KN_CONF_CLASS));
    return i >= 0 ? slot_value(conf, (size_t)i) : NULL;
}

int kn_conf_get_list(const kn_conf *conf, const char *key, char ***items, int *count) {
    *items = NULL;
    *count = 0;
    long i = getter_slot(conf, key, T(KN_CONF_LIST));
    if (i < 0)
        return KN_ERR__INVALID_ARG;
    const char *v = slot_value(conf, (size_t)i);
    /* Values are canonical: items trimmed, joined by single commas. */
    int n = 0;
    if (v && *v) {
        n = 1;
        for (const char *p = v; *p; p++)
            n += *p == ',';
    }
    char **out = kn_calloc((size_t)n + 1, sizeof(*out));
    if (!out)
        return KN_ERR__NOMEM;
    const char *p = v;
    for (int j = 0; j < n; j++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!(out[j] = kn_strndup(p, len))) {
            kn_conf_list_free(out, j);
            return KN_ERR__NOMEM;
        }
        p += len + 1;
    }
    *items = out;
    *count = n;
    return KN_OK;
}

void kn_conf_list_free(char **items, int count) {
    if (!items)
        return;
    for (int j = 0; j < count; j++)
        kn_free(items[j]);
    kn_free(items);
}

/*
 * collect.c: builds one PushTelemetry payload on the network thread:
 * visits the client's metrics (its source) and the registered
 * application metrics, keeps those whose telemetry name starts with one
 * of the subscription's prefixes, turns Sums into deltas when the
 * subscription asks for delta temporality (the ledger keeps the last
 * value pushed), encodes OTLP and compresses.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codec/codec.h"
#include "error.h"
#include "kn_alloc.h"
#include "telemetry/app_metric.h"
#include "telemetry/otlp.h"
#include "telemetry/telemetry_int.h"

/* Caps well above what a client's metrics take (a few KiB); the broker
 * judges telemetry.max.bytes itself (TELEMETRY_TOO_LARGE). */
#define KNT_PAYLOAD_MAX (8u << 20)
#define KNT_MAX_ATTRS 16

typedef struct collect_ctx {
    knt *t;
    const knt_sub *sub;
    knt_otlp otlp;
    uint64_t now_ns;
} collect_ctx;

static uint64_t unix_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool selected(const knt_sub *sub, const char *name) {
    if (sub->all)
        return true;
    for (int i = 0; i < sub->n_prefixes; i++)
        if (strncmp(name, sub->prefixes[i], strlen(sub->prefixes[i])) == 0)
            return true;
    return false;
}

static knt_ledger_entry *ledger_find(knt *t, const char *key) {
    for (size_t i = 0; i < t->n_ledger; i++)
        if (strcmp(t->ledger[i].key, key) == 0)
            return &t->ledger[i];
    if (t->n_ledger == t->cap_ledger) {
        size_t cap = t->cap_ledger ? t->cap_ledger * 2 : 32;
        knt_ledger_entry *l = kn_realloc(t->ledger, cap * sizeof *l);
        if (!l)
            return NULL;
        t->ledger = l;
        t->cap_ledger = cap;
    }
    char *k = kn_strdup(key);
    if (!k)
        return NULL;
    knt_ledger_entry *e = &t->ledger[t->n_ledger++];
    e->key = k;
    e->last = 0;
    e->last_ns = t->start_ns;
    return e;
}

void knt_ledger_reset(knt *t) {
    for (size_t i = 0; i < t->n_ledger; i++)
        kn_free(t->ledger[i].key);
    kn_free(t->ledger);
    t->ledger = NULL;
    t->n_ledger = t->cap_ledger = 0;
}

static void visit(void *opaque, const kn_metric_view *m) {
    collect_ctx *cx = opaque;
    char name[256];
    if (!m || !m->group || !m->name || !knt_otlp_name(name, sizeof name, m->group, m->name))
        return;
    if (!selected(cx->sub, name))
        return;
    /* Attributes: the tags, keys in snake_case, without client_id (the
     * broker knows it from the request, as Java leaves it out). */
    kn_metric_tag attrs[KNT_MAX_ATTRS];
    char keys[KNT_MAX_ATTRS][64];
    size_t n = 0;
    char key[512];
    int kl = snprintf(key, sizeof key, "%s", name);
    for (size_t i = 0; i < m->n_tags && n < KNT_MAX_ATTRS; i++) {
        if (!m->tags[i].key || !m->tags[i].value ||
            !knt_otlp_tag_key(keys[n], sizeof keys[n], m->tags[i].key) ||
            strcmp(keys[n], "client_id") == 0)
            continue;
        attrs[n].key = keys[n];
        attrs[n].value = m->tags[i].value;
        if (kl >= 0 && (size_t)kl < sizeof key)
            kl += snprintf(key + kl, sizeof key - (size_t)kl, "\x1f%s=%s", keys[n], m->tags[i].value);
        n++;
    }
    knt_point p = {
        .name = name,
        .description = m->description,
        .attrs = attrs,
        .n_attrs = n,
        .value = m->value,
        .sum = m->kind == KN_METRIC_SUM,
        .temporality = cx->sub->delta ? KNT_TEMPORALITY_DELTA : KNT_TEMPORALITY_CUMULATIVE,
        .start_ns = cx->t->start_ns,
        .time_ns = cx->now_ns,
    };
    if (p.sum && cx->sub->delta) {
        knt_ledger_entry *e = ledger_find(cx->t, key);
        if (!e)
            return; /* out of memory: skip the point rather than send a wrong delta */
        p.value = m->value - e->last;
        p.start_ns = e->last_ns;
        e->last = m->value;
        e->last_ns = cx->now_ns;
    }
    knt_otlp_add(&cx->otlp, &p);
}

int knt_collect(knt *t, const knt_sub *sub, uint8_t **out, size_t *len, int8_t *ctype) {
    collect_ctx cx = {.t = t, .sub = sub, .now_ns = unix_ns()};
    knt_otlp_begin(&cx.otlp, t->resource, t->n_resource, KNT_PAYLOAD_MAX);
    if (t->source)
        t->source(t->client, visit, &cx);
    /* Application metrics: their views are read under the lock that
     * guards the list (registration may run on the application thread). */
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n_app; i++) {
        kn_metric_view v;
        knt_app_metric_view(t->app[i], &v);
        visit(&cx, &v);
    }
    pthread_mutex_unlock(&t->lock);
    uint8_t *raw;
    size_t raw_len;
    int err = knt_otlp_finish(&cx.otlp, &raw, &raw_len);
    if (err)
        return err;
    *ctype = KN_CODEC_NONE;
    const kn_codec *codec = sub->compression ? kn_codec_get(sub->compression) : NULL;
    if (codec) {
        kn_wr w;
        kn_wr_init(&w, raw_len / 2 + 64, KNT_PAYLOAD_MAX);
        char es[128];
        if (codec->compress(raw, raw_len, codec->level_default, &w, es, sizeof es) == 0 && !w.err) {
            kn_free(raw);
            *out = kn_wr_detach(&w, len);
            *ctype = (int8_t)codec->id;
            return 0;
        }
        kn_wr_free(&w); /* send it uncompressed rather than not at all */
    }
    *out = raw;
    *len = raw_len;
    return 0;
}

/*
 * app_metric.c: the public kn_app_metric object (see app_metric.h and
 * include/kafka_native_telemetry.h).
 */
#include "telemetry/app_metric.h"

#include <string.h>

#include "error.h"
#include "kn_alloc.h"

static uint64_t to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

kn_app_metric *kn_app_metric_new(const char *group, const char *name, const char *description,
                                 int kind) {
    if (!group || !*group || !name || !*name ||
        (kind != KN_APP_METRIC_GAUGE && kind != KN_APP_METRIC_SUM)) {
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    kn_app_metric *m = kn_calloc(1, sizeof *m);
    if (!m)
        goto nomem;
    atomic_init(&m->refs, 1);
    atomic_init(&m->bits, to_bits(0.0));
    atomic_init(&m->frozen, false);
    m->kind = kind;
    m->group = kn_strdup(group);
    m->name = kn_strdup(name);
    m->description = description ? kn_strdup(description) : NULL;
    if (!m->group || !m->name || (description && !m->description))
        goto nomem;
    kn_set_last_error(KN_OK);
    return m;
nomem:
    if (m)
        knt_app_metric_release(m);
    kn_set_last_error(KN_ERR__NOMEM);
    return NULL;
}

int kn_app_metric_add_tag(kn_app_metric *m, const char *key, const char *value) {
    if (!m || !key || !*key || !value)
        return KN_ERR__INVALID_ARG;
    if (atomic_load(&m->frozen))
        return KN_ERR__STATE;
    kn_metric_tag *t = kn_realloc(m->tags, (m->n_tags + 1) * sizeof *t);
    if (!t)
        return KN_ERR__NOMEM;
    m->tags = t;
    char *k = kn_strdup(key), *v = kn_strdup(value);
    if (!k || !v) {
        kn_free(k);
        kn_free(v);
        return KN_ERR__NOMEM;
    }
    t[m->n_tags].key = k;
    t[m->n_tags].value = v;
    m->n_tags++;
    return KN_OK;
}

void kn_app_metric_set(kn_app_metric *m, double value) {
    if (m)
        atomic_store(&m->bits, to_bits(value));
}

void kn_app_metric_add(kn_app_metric *m, double delta) {
    if (!m)
        return;
    uint_fast64_t old = atomic_load(&m->bits);
    while (!atomic_compare_exchange_weak(&m->bits, &old, to_bits(from_bits(old) + delta)))
        ;
}

double kn_app_metric_value(const kn_app_metric *m) {
    return m ? from_bits(atomic_load(&((kn_app_metric *)m)->bits)) : 0.0;
}

void kn_app_metric_destroy(kn_app_metric *m) {
    if (m)
        knt_app_metric_release(m);
}

void knt_app_metric_retain(kn_app_metric *m) {
    atomic_store(&m->frozen, true);
    atomic_fetch_add(&m->refs, 1);
}

void knt_app_metric_release(kn_app_metric *m) {
    if (atomic_fetch_sub(&m->refs, 1) != 1)
        return;
    for (size_t i = 0; i < m->n_tags; i++) {
        kn_free((char *)m->tags[i].key);
        kn_free((char *)m->tags[i].value);
    }
    kn_free(m->tags);
    kn_free(m->group);
    kn_free(m->name);
    kn_free(m->description);
    kn_free(m);
}

void knt_app_metric_view(const kn_app_metric *m, kn_metric_view *out) {
    out->group = m->group;
    out->name = m->name;
    out->description = m->description;
    out->tags = m->tags;
    out->n_tags = m->n_tags;
    out->value = kn_app_metric_value(m);
    out->kind = m->kind == KN_APP_METRIC_SUM ? KN_METRIC_SUM : KN_METRIC_GAUGE;
}

/*
 * metrics.c: the metrics registry (metrics.h): sensors found by
 * (definition, tags) through a small chained hash, gauge providers, and
 * the visit that snapshots both into views.
 */
#include "metrics/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "kafka_native.h"
#include "kn_alloc.h"
#include "metrics/wstat.h"

#define KNM_BUCKETS 64
#define KNM_PROVIDERS 8
#define KNM_GROUPS 8

struct knm_sensor {
    knm_sensor *next;  /* creation order */
    knm_sensor *hnext; /* hash chain */
    const knm_sensor_def *def;
    const char *group; /* resolved, owned by the registry */
    char *tag1, *tag2; /* owned */
    bool hidden;
    kn_wstat st;
};

struct kn_metrics {
    pthread_mutex_t lock;
    char *kind;
    char *client_id;
    int64_t window_ms;
    int nsamples;
    knm_sensor *head, **tail;
    knm_sensor *buckets[KNM_BUCKETS];
    struct {
        knm_provider_fn *fn;
        void *opaque;
    } prov[KNM_PROVIDERS];
    int nprov;
    /* Resolved group names ("-metrics" -> "producer-metrics"). */
    struct {
        const char *suffix;
        char *name;
    } groups[KNM_GROUPS];
    int ngroups;
};

/* One view being collected: tags kept inline (client-id + two). */
typedef struct knm_item {
    kn_metric_view v;
    kn_metric_tag tags[3];
} knm_item;

struct knm_snap {
    kn_metrics *m;
    knm_item *items;
    size_t n, cap;
    kn_arena strings;
    bool oom;
};

int64_t knm_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

kn_metrics *knm_new(const char *kind, const char *client_id, int64_t window_ms, int nsamples) {
    kn_metrics *m = kn_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->kind = kn_strdup(kind ? kind : "client");
    m->client_id = kn_strdup(client_id ? client_id : "");
    if (!m->kind || !m->client_id) {
        kn_free(m->kind);
        kn_free(m->client_id);
        kn_free(m);
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    m->window_ms = window_ms;
    m->nsamples = nsamples;
    m->tail = &m->head;
    return m;
}

void knm_destroy(kn_metrics *m) {
    if (!m)
        return;
    for (knm_sensor *s = m->head, *next; s; s = next) {
        next = s->next;
        kn_free(s->tag1);
        kn_free(s->tag2);
        kn_free(s);
    }
    for (int i = 0; i < m->ngroups; i++)
        kn_free(m->groups[i].name);
    pthread_mutex_destroy(&m->lock);
    kn_free(m->kind);
    kn_free(m->client_id);
    kn_free(m);
}

/* m->lock held. */
static const char *group_locked(kn_metrics *m, const char *group) {
    if (!group || group[0] != '-')
        return group;
    for (int i = 0; i < m->ngroups; i++)
        if (strcmp(m->groups[i].suffix, group) == 0)
            return m->groups[i].name;
    if (m->ngroups == KNM_GROUPS)
        return group;
    size_t n = strlen(m->kind) + strlen(group) + 1;
    char *name = kn_malloc(n);
    if (!name)
        return group;
    snprintf(name, n, "%s%s", m->kind, group);
    m->groups[m->ngroups].suffix = group;
    m->groups[m->ngroups].name = name;
    m->ngroups++;
    return name;
}

const char *knm_group(kn_metrics *m, const char *group) {
    pthread_mutex_lock(&m->lock);
    const char *g = group_locked(m, group);
    pthread_mutex_unlock(&m->lock);
    return g;
}

static uint32_t hash_str(uint32_t h, const char *s) {
    if (!s)
        return h * 31u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static bool str_eq(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

knm_sensor *knm_sensor_get(kn_metrics *m, const knm_sensor_def *def, const char *tag1,
                           const char *tag2) {
    if (!m || !def)
        return NULL;
    uint32_t h = hash_str(hash_str(2166136261u ^ (uint32_t)(uintptr_t)def, tag1), tag2);
    knm_sensor **bucket = &m->buckets[h % KNM_BUCKETS];
    pthread_mutex_lock(&m->lock);
    for (knm_sensor *s = *bucket; s; s = s->hnext)
        if (s->def == def && str_eq(s->tag1, tag1) && str_eq(s->tag2, tag2)) {
            pthread_mutex_unlock(&m->lock);
            return s;
        }
    knm_sensor *s = kn_calloc(1, sizeof *s);
    if (s && tag1 && !(s->tag1 = kn_strdup(tag1)))
        goto oom;
    if (s && tag2 && !(s->tag2 = kn_strdup(tag2)))
        goto oom;
    if (!s)
        goto oom;
    s->def = def;
    s->group = group_locked(m, def->group);
    kn_wstat_init(&s->st, m->window_ms, m->nsamples, knm_now_ms());
    s->hnext = *bucket;
    *bucket = s;
    *m->tail = s;
    m->tail = &s->next;
    pthread_mutex_unlock(&m->lock);
    return s;
oom:
    if (s) {
        kn_free(s->tag1);
        kn_free(s);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

void knm_record(kn_metrics *m, knm_sensor *s, double v, int64_t now) {
    if (!m || !s)
        return;
    pthread_mutex_lock(&m->lock);
    kn_wstat_record(&s->st, v, now);
    pthread_mutex_unlock(&m->lock);
}

void knm_sensor_hide(kn_metrics *m, knm_sensor *s, bool hidden) {
    if (!m || !s)
        return;
    pthread_mutex_lock(&m->lock);
    s->hidden = hidden;
    pthread_mutex_unlock(&m->lock);
}

int knm_provider_add(kn_metrics *m, knm_provider_fn *fn, void *opaque) {
    if (!m)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&m->lock);
    int rc = KN_ERR__NOMEM;
    if (m->nprov < KNM_PROVIDERS) {
        m->prov[m->nprov].fn = fn;
        m->prov[m->nprov].opaque = opaque;
        m->nprov++;
        rc = 0;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* ---- snapshot ------------------------------------------------------ */

static knm_item *snap_add(knm_snap *snap) {
    if (snap->oom)
        return NULL;
    if (snap->n == snap->cap) {
        size_t cap = snap->cap ? snap->cap * 2 : 64;
        knm_item *items = kn_realloc(snap->items, cap * sizeof *items);
        if (!items) {
            snap->oom = true;
            return NULL;
        }
        snap->items = items;
        snap->cap = cap;
    }
    knm_item *it = &snap->items[snap->n++];
    memset(it, 0, sizeof *it);
    return it;
}

static void add_tag(knm_snap *snap, knm_item *it, const char *k, const char *v, bool copy) {
    if (!k || !v)
        return;
    const char *val = copy ? kn_arena_strdup(&snap->strings, v) : v;
    if (!val) {
        snap->oom = true;
        return;
    }
    it->tags[it->v.n_tags].key = k;
    it->tags[it->v.n_tags].value = val;
    it->v.n_tags++;
}

void knm_emit(knm_snap *snap, const char *group, const char *name, const char *description,
              kn_metric_kind kind, double value, const char *k1, const char *v1, const char *k2,
              const char *v2) {
    knm_item *it = snap_add(snap);
    if (!it)
        return;
    it->v.group = group;
    it->v.name = name;
    it->v.description = description;
    it->v.kind = kind;
    it->v.value = value;
    add_tag(snap, it, "client-id", snap->m->client_id, false);
    add_tag(snap, it, k1, v1, true);
    add_tag(snap, it, k2, v2, true);
}

static double stat_value(kn_wstat *w, knm_stat stat, int64_t now) {
    switch (stat) {
    case KNM_RATE:
        return kn_wstat_rate(w, now);
    case KNM_COUNT_RATE:
        return kn_wstat_count_rate(w, now);
    case KNM_COUNT_PER_HOUR:
        return kn_wstat_count_rate(w, now) * 3600.0;
    case KNM_TOTAL:
        return w->total;
    case KNM_COUNT_TOTAL:
        return (double)w->total_count;
    case KNM_AVG:
        return kn_wstat_avg(w, now);
    case KNM_MAX:
        return kn_wstat_max(w, now);
    case KNM_MIN:
        return kn_wstat_min(w, now);
    case KNM_VALUE:
        return w->last;
    }
    return 0;
}

/* m->lock held: the sensors' metrics. Tag values point into the
 * sensors, which outlive the visit. */
static void snap_sensors(kn_metrics *m, knm_snap *snap, int64_t now) {
    for (knm_sensor *s = m->head; s; s = s->next) {
        if (s->hidden)
            continue;
        for (int i = 0; i < s->def->nstats; i++) {
            const knm_stat_def *sd = &s->def->stats[i];
            knm_item *it = snap_add(snap);
            if (!it)
                return;
            it->v.group = s->group;
            it->v.name = sd->name;
            it->v.description = sd->description;
            it->v.kind = sd->stat == KNM_TOTAL || sd->stat == KNM_COUNT_TOTAL ? KN_METRIC_SUM
                                                                              : KN_METRIC_GAUGE;
            it->v.value = stat_value(&s->st, sd->stat, now);
            add_tag(snap, it, "client-id", m->client_id, false);
            add_tag(snap, it, s->def->tag1, s->tag1, false);
            add_tag(snap, it, s->def->tag2, s->tag2, false);
        }
    }
}

int knm_visit(kn_metrics *m, kn_metric_visit_fn fn, void *ctx) {
    if (!m || !fn)
        return KN_ERR__INVALID_ARG;
    knm_snap snap = {.m = m};
    kn_arena_init(&snap.strings, 4096);
    int64_t now = knm_now_ms();
    pthread_mutex_lock(&m->lock);
    snap_sensors(m, &snap, now);
    int nprov = m->nprov;
    knm_provider_fn *fns[KNM_PROVIDERS];
    void *ops[KNM_PROVIDERS];
    for (int i = 0; i < nprov; i++) {
        fns[i] = m->prov[i].fn;
        ops[i] = m->prov[i].opaque;
    }
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < nprov && !snap.oom; i++)
        fns[i](ops[i], &snap, now);
    int rc = 0;
    if (snap.oom) {
        rc = KN_ERR__NOMEM;
    } else {
        for (size_t i = 0; i < snap.n; i++) {
            knm_item *it = &snap.items[i];
            it->v.tags = it->tags;
            fn(ctx, &it->v);
        }
    }
    kn_free(snap.items);
    kn_arena_destroy(&snap.strings);
    return rc;
}

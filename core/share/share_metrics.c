/*
 * share_metrics.c: the share consumer's metrics (share_metrics.h) and
 * their walk: the network metrics of "consumer-share-metrics" and
 * "consumer-share-node-metrics" (core/wire/net_metrics.c), Java's
 * "consumer-share-fetch-manager-metrics" fed by share_fetch.c and poll,
 * and the poll metrics of "consumer-share-metrics". Java's
 * consumer-share-coordinator-metrics (heartbeats) are not kept yet.
 */
#include "share/share_metrics.h"

#include "consumer/records.h"
#include "metrics/metrics.h"
#include "share/share_int.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define FM "consumer-share-fetch-manager-metrics"
#define SM "consumer-share-metrics"

static const knm_stat_def fetch_stats[] = {
    {"fetch-latency-avg", "The average time taken for a fetch request.", KNM_AVG},
    {"fetch-latency-max", "The max time taken for any fetch request.", KNM_MAX},
    {"fetch-rate", "The number of fetch requests per second.", KNM_COUNT_RATE},
    {"fetch-total", "The total number of fetch requests.", KNM_COUNT_TOTAL},
};
static const knm_stat_def fetch_size_stats[] = {
    {"fetch-size-avg", "The average number of bytes fetched per request", KNM_AVG},
    {"fetch-size-max", "The maximum number of bytes fetched per request", KNM_MAX},
};
static const knm_stat_def throttle_stats[] = {
    {"fetch-throttle-time-avg", "The average throttle time in ms", KNM_AVG},
    {"fetch-throttle-time-max", "The maximum throttle time in ms", KNM_MAX},
};
static const knm_stat_def records_stats[] = {
    {"records-per-request-avg", "The average number of records in each request", KNM_AVG},
    {"records-per-request-max", "The maximum number of records in a request.", KNM_MAX},
    {"records-consumed-rate", "The average number of records consumed per second", KNM_RATE},
    {"records-consumed-total", "The total number of records consumed", KNM_TOTAL},
};
static const knm_stat_def bytes_stats[] = {
    {"bytes-consumed-rate", "The average number of bytes consumed per second", KNM_RATE},
    {"bytes-consumed-total", "The total number of bytes consumed", KNM_TOTAL},
};
static const knm_stat_def acks_sent_stats[] = {
    {"acknowledgements-send-rate", "The average number of record acknowledgements sent per second.",
     KNM_RATE},
    {"acknowledgements-send-total", "The total number of record acknowledgements sent.", KNM_TOTAL},
};
static const knm_stat_def acks_failed_stats[] = {
    {"acknowledgements-error-rate",
     "The average number of record acknowledgements that resulted in errors per second.", KNM_RATE},
    {"acknowledgements-error-total", "The total number of record acknowledgements that resulted in errors.",
     KNM_TOTAL},
};
static const knm_stat_def poll_stats[] = {
    {"time-between-poll-avg", "The average delay between invocations of poll() in milliseconds.", KNM_AVG},
    {"time-between-poll-max", "The max delay between invocations of poll() in milliseconds.", KNM_MAX},
};
static const knm_stat_def poll_idle_stats[] = {
    {"poll-idle-ratio-avg",
     "The average fraction of time the consumer's poll() is idle as opposed to waiting for the user code to "
     "process records.",
     KNM_AVG},
};

#define DEF(n, g) static const knm_sensor_def def_##n = {g, NULL, NULL, n##_stats, N(n##_stats)}
DEF(fetch, FM);
DEF(fetch_size, FM);
DEF(throttle, FM);
DEF(records, FM);
DEF(bytes, FM);
DEF(acks_sent, FM);
DEF(acks_failed, FM);
DEF(poll, SM);
DEF(poll_idle, SM);

/* sc->lock: the poll clock. */
static void provide(void *opaque, knm_snap *snap, int64_t now_ms) {
    kn_share_consumer *sc = opaque;
    pthread_mutex_lock(&sc->lock);
    int64_t last = sc->metrics.last_poll_ms;
    pthread_mutex_unlock(&sc->lock);
    /* Whole seconds, as Java's (TimeUnit.SECONDS.convert). */
    knm_emit(snap, SM, "last-poll-seconds-ago", "The number of seconds since the last poll() invocation.",
             KN_METRIC_GAUGE, last > 0 ? (double)((now_ms - last) / 1000) : -1, NULL, NULL, NULL, NULL);
}

int kns_metrics_init(kn_share_consumer *sc, kn_metrics *m) {
    kns_metrics *km = &sc->metrics;
    km->m = m;
    km->fetch = knm_sensor_get(m, &def_fetch, NULL, NULL);
    km->fetch_size = knm_sensor_get(m, &def_fetch_size, NULL, NULL);
    km->throttle = knm_sensor_get(m, &def_throttle, NULL, NULL);
    km->records = knm_sensor_get(m, &def_records, NULL, NULL);
    km->bytes = knm_sensor_get(m, &def_bytes, NULL, NULL);
    km->acks_sent = knm_sensor_get(m, &def_acks_sent, NULL, NULL);
    km->acks_failed = knm_sensor_get(m, &def_acks_failed, NULL, NULL);
    km->poll = knm_sensor_get(m, &def_poll, NULL, NULL);
    km->poll_idle = knm_sensor_get(m, &def_poll_idle, NULL, NULL);
    if (!km->fetch || !km->fetch_size || !km->throttle || !km->records || !km->bytes || !km->acks_sent ||
        !km->acks_failed || !km->poll || !km->poll_idle)
        return KN_ERR__NOMEM;
    return knm_provider_add(m, provide, sc);
}

void kns_metrics_fetch(kn_share_consumer *sc, int64_t latency_us, size_t bytes, int32_t throttle_ms,
                       int64_t now_ms) {
    kns_metrics *km = &sc->metrics;
    knm_record(km->m, km->fetch, (double)latency_us / 1000.0, now_ms);
    knm_record(km->m, km->fetch_size, (double)bytes, now_ms);
    if (throttle_ms >= 0)
        knm_record(km->m, km->throttle, throttle_ms, now_ms);
}

void kns_metrics_ack_throttle(kn_share_consumer *sc, int32_t throttle_ms, int64_t now_ms) {
    if (throttle_ms >= 0)
        knm_record(sc->metrics.m, sc->metrics.throttle, throttle_ms, now_ms);
}

void kns_metrics_acks_sent(kn_share_consumer *sc, int64_t count, int64_t now_ms) {
    if (count > 0)
        knm_record(sc->metrics.m, sc->metrics.acks_sent, (double)count, now_ms);
}

void kns_metrics_acks_failed(kn_share_consumer *sc, int64_t count, int64_t now_ms) {
    if (count > 0)
        knm_record(sc->metrics.m, sc->metrics.acks_failed, (double)count, now_ms);
}

void kns_metrics_poll_start(kn_share_consumer *sc, int64_t now_ms) {
    kns_metrics *km = &sc->metrics;
    km->poll_start_ms = now_ms;
    km->since_last_ms = km->last_poll_ms > 0 ? now_ms - km->last_poll_ms : 0;
    knm_record(km->m, km->poll, (double)km->since_last_ms, now_ms);
    km->last_poll_ms = now_ms;
}

void kns_metrics_poll_end(kn_share_consumer *sc, const kn_records *out, int64_t now_ms) {
    kns_metrics *km = &sc->metrics;
    int64_t in_poll = now_ms - km->poll_start_ms, cycle = in_poll + km->since_last_ms;
    knm_record(km->m, km->poll_idle, cycle > 0 ? (double)in_poll / (double)cycle : 0.0, now_ms);
    if (!out || out->count == 0)
        return;
    int64_t bytes = 0;
    for (size_t i = 0; i < out->count; i++) {
        const knc_rec *r = &out->recs[i];
        bytes += (r->key_len > 0 ? r->key_len : 0) + (r->value_len > 0 ? r->value_len : 0);
    }
    knm_record(km->m, km->records, (double)out->count, now_ms);
    knm_record(km->m, km->bytes, (double)bytes, now_ms);
}

int kn_share_consumer_metrics(kn_share_consumer *sc, kn_metric_visit_fn fn, void *ctx) {
    if (!sc || !fn)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&sc->lock);
    kn_metrics *m = sc->client ? knw_client_metrics(sc->client) : NULL;
    pthread_mutex_unlock(&sc->lock);
    if (!m)
        return KN_ERR__CLOSED;
    return knm_visit(m, fn, ctx);
}

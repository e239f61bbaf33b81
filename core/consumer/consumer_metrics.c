/*
 * consumer_metrics.c: the consumer's metrics as Java's FetchMetricsRegistry,
 * ConsumerCoordinator and KafkaConsumer name them (consumer_metrics.h).
 * Fed by the fetcher (fetch.c), poll (consumer.c), commits (offsets.c)
 * and the group (group/); records-lag per partition and
 * assigned-partitions are read from the assignment when looked at.
 */
#include "consumer/consumer_metrics.h"

#include <stdio.h>

#include "consumer/consumer_int.h"
#include "consumer/records.h"
#include "kn_alloc.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define FM "consumer-fetch-manager-metrics"
#define CM "consumer-coordinator-metrics"

static const knm_stat_def fetch_stats[] = {
    {"fetch-latency-avg", "The average time taken for a fetch request, in ms", KNM_AVG},
    {"fetch-latency-max", "The max time taken for any fetch request, in ms", KNM_MAX},
    {"fetch-rate", "The number of fetch requests per second", KNM_COUNT_RATE},
    {"fetch-total", "The total number of fetch requests", KNM_COUNT_TOTAL},
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
    {"records-consumed-rate", "The average number of records consumed per second", KNM_RATE},
    {"records-consumed-total", "The total number of records consumed", KNM_TOTAL},
    {"records-per-request-avg", "The average number of records returned per poll", KNM_AVG},
};
static const knm_stat_def bytes_stats[] = {
    {"bytes-consumed-rate", "The average number of bytes (keys and values) consumed per second", KNM_RATE},
    {"bytes-consumed-total", "The total number of bytes (keys and values) consumed", KNM_TOTAL},
};
static const knm_stat_def topic_records_stats[] = {
    {"records-consumed-rate", "The average number of records consumed per second for a topic", KNM_RATE},
    {"records-consumed-total", "The total number of records consumed for a topic", KNM_TOTAL},
};
static const knm_stat_def topic_bytes_stats[] = {
    {"bytes-consumed-rate", "The average number of bytes consumed per second for a topic", KNM_RATE},
    {"bytes-consumed-total", "The total number of bytes consumed for a topic", KNM_TOTAL},
};
static const knm_stat_def lag_stats[] = {
    {"records-lag-max", "The maximum lag in terms of number of records for any partition in this window",
     KNM_MAX},
};
static const knm_stat_def lead_stats[] = {
    {"records-lead-min", "The minimum lead in terms of number of records for any partition in this window",
     KNM_MIN},
};
static const knm_stat_def poll_stats[] = {
    {"time-between-poll-avg", "The average delay between invocations of poll(), in ms", KNM_AVG},
    {"time-between-poll-max", "The max delay between invocations of poll(), in ms", KNM_MAX},
};
static const knm_stat_def commit_stats[] = {
    {"commit-latency-avg", "The average time taken for a commit request, in ms", KNM_AVG},
    {"commit-latency-max", "The max time taken for a commit request, in ms", KNM_MAX},
    {"commit-rate", "The number of commit calls per second", KNM_COUNT_RATE},
    {"commit-total", "The total number of commit calls", KNM_COUNT_TOTAL},
};
static const knm_stat_def heartbeat_stats[] = {
    {"heartbeat-response-time-max", "The max time taken to receive a response to a heartbeat request, in ms",
     KNM_MAX},
    {"heartbeat-rate", "The number of heartbeats per second", KNM_COUNT_RATE},
    {"heartbeat-total", "The total number of heartbeats", KNM_COUNT_TOTAL},
};
static const knm_stat_def rebalance_stats[] = {
    {"rebalance-latency-avg", "The average time taken for a group to complete a rebalance, in ms", KNM_AVG},
    {"rebalance-latency-max", "The max time taken for a group to complete a rebalance, in ms", KNM_MAX},
    {"rebalance-latency-total", "The total number of milliseconds spent in rebalances", KNM_TOTAL},
    {"rebalance-total", "The total number of rebalance events", KNM_COUNT_TOTAL},
    {"rebalance-rate-per-hour", "The number of rebalance events per hour", KNM_COUNT_PER_HOUR},
};
static const knm_stat_def failed_rebalance_stats[] = {
    {"failed-rebalance-total", "The total number of failed rebalance events", KNM_COUNT_TOTAL},
    {"failed-rebalance-rate-per-hour", "The number of failed rebalance events per hour", KNM_COUNT_PER_HOUR},
};

#define DEF(n, g, t) static const knm_sensor_def def_##n = {g, t, NULL, n##_stats, N(n##_stats)}
DEF(fetch, FM, NULL);
DEF(fetch_size, FM, NULL);
DEF(throttle, FM, NULL);
DEF(records, FM, NULL);
DEF(bytes, FM, NULL);
DEF(topic_records, FM, "topic");
DEF(topic_bytes, FM, "topic");
DEF(lag, FM, NULL);
DEF(lead, FM, NULL);
DEF(poll, "consumer-metrics", NULL);
DEF(commit, CM, NULL);
DEF(heartbeat, CM, NULL);
DEF(rebalance, CM, NULL);
DEF(failed_rebalance, CM, NULL);

static double secs_ago(int64_t then_ms, int64_t now_ms) {
    return then_ms > 0 ? (double)(now_ms - then_ms) / 1000.0 : -1;
}

/* c->lock: the assignment's lag and the group's clocks. */
static void provide(void *opaque, knm_snap *snap, int64_t now_ms) {
    kn_consumer *c = opaque;
    pthread_mutex_lock(&c->lock);
    knc_metrics *km = &c->metrics;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        int64_t bound = c->cfg.read_committed ? p->last_stable_offset : p->high_watermark;
        if (p->state != KNC_POS_VALID || bound < 0)
            continue;
        char part[16];
        snprintf(part, sizeof part, "%d", (int)p->partition);
        knm_emit(snap, FM, "records-lag", "The latest lag of the partition", KN_METRIC_GAUGE,
                 (double)(bound - p->position), "topic", p->topic, "partition", part);
    }
    knm_emit(snap, CM, "assigned-partitions", "The number of partitions currently assigned to this consumer",
             KN_METRIC_GAUGE, (double)knc_table_count(&c->table), NULL, NULL, NULL, NULL);
    knm_emit(snap, CM, "last-heartbeat-seconds-ago",
             "The number of seconds since the last coordinator heartbeat was sent (-1: none yet)",
             KN_METRIC_GAUGE, secs_ago(km->last_heartbeat_ms, now_ms), NULL, NULL, NULL, NULL);
    knm_emit(snap, CM, "last-rebalance-seconds-ago",
             "The number of seconds since the last successful rebalance event (-1: none yet)",
             KN_METRIC_GAUGE, secs_ago(km->last_rebalance_ms, now_ms), NULL, NULL, NULL, NULL);
    knm_emit(snap, "consumer-metrics", "last-poll-seconds-ago",
             "The number of seconds since the last poll() invocation (-1: none yet)", KN_METRIC_GAUGE,
             secs_ago(km->last_poll_ms, now_ms), NULL, NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
}

int knc_metrics_init(kn_consumer *c, kn_metrics *m) {
    knc_metrics *km = &c->metrics;
    km->m = m;
    km->fetch = knm_sensor_get(m, &def_fetch, NULL, NULL);
    km->fetch_size = knm_sensor_get(m, &def_fetch_size, NULL, NULL);
    km->throttle = knm_sensor_get(m, &def_throttle, NULL, NULL);
    km->records = knm_sensor_get(m, &def_records, NULL, NULL);
    km->bytes = knm_sensor_get(m, &def_bytes, NULL, NULL);
    km->lag = knm_sensor_get(m, &def_lag, NULL, NULL);
    km->lead = knm_sensor_get(m, &def_lead, NULL, NULL);
    km->poll = knm_sensor_get(m, &def_poll, NULL, NULL);
    km->commit = knm_sensor_get(m, &def_commit, NULL, NULL);
    km->heartbeat = knm_sensor_get(m, &def_heartbeat, NULL, NULL);
    km->rebalance = knm_sensor_get(m, &def_rebalance, NULL, NULL);
    km->failed_rebalance = knm_sensor_get(m, &def_failed_rebalance, NULL, NULL);
    if (!km->fetch || !km->fetch_size || !km->throttle || !km->records || !km->bytes || !km->lag ||
        !km->lead || !km->poll || !km->commit || !km->heartbeat || !km->rebalance || !km->failed_rebalance)
        return KN_ERR__NOMEM;
    return knm_provider_add(m, provide, c);
}

void knc_metrics_fetch(kn_consumer *c, int64_t latency_us, size_t bytes, int32_t throttle_ms,
                       int64_t now_ms) {
    knc_metrics *km = &c->metrics;
    knm_record(km->m, km->fetch, (double)latency_us / 1000.0, now_ms);
    knm_record(km->m, km->fetch_size, (double)bytes, now_ms);
    if (throttle_ms >= 0)
        knm_record(km->m, km->throttle, throttle_ms, now_ms);
}

void knc_metrics_partition(kn_consumer *c, int64_t lag, int64_t next, int64_t log_start,
                           int64_t now_ms) {
    knc_metrics *km = &c->metrics;
    knm_record(km->m, km->lag, (double)(lag > 0 ? lag : 0), now_ms);
    if (log_start >= 0)
        knm_record(km->m, km->lead, (double)(next - log_start), now_ms);
}

void knc_metrics_poll(kn_consumer *c, const kn_records *out, int64_t now_ms) {
    knc_metrics *km = &c->metrics;
    if (km->last_poll_ms > 0)
        knm_record(km->m, km->poll, (double)(now_ms - km->last_poll_ms), now_ms);
    km->last_poll_ms = now_ms;
    if (!out || out->count == 0)
        return;
    /* Records and bytes in all and per topic were counted as the records
     * were added (records.c): no second pass over them here. */
    knm_record(km->m, km->records, (double)out->count, now_ms);
    knm_record(km->m, km->bytes, (double)out->bytes, now_ms);
    for (size_t t = 0; t < out->topic_count; t++) {
        const int64_t *tc = out->topic_counts + 2 * t;
        if (!tc[0])
            continue;
        knm_record(km->m, knm_sensor_get(km->m, &def_topic_records, out->topics[t], NULL),
                   (double)tc[0], now_ms);
        knm_record(km->m, knm_sensor_get(km->m, &def_topic_bytes, out->topics[t], NULL),
                   (double)tc[1], now_ms);
    }
}

void knc_metrics_commit(kn_consumer *c, int64_t latency_us, int64_t now_ms) {
    knm_record(c->metrics.m, c->metrics.commit, (double)latency_us / 1000.0, now_ms);
}

void knc_metrics_heartbeat(kn_consumer *c, int64_t latency_us, bool ok, int64_t now_ms) {
    knm_record(c->metrics.m, c->metrics.heartbeat, (double)latency_us / 1000.0, now_ms);
    if (ok)
        c->metrics.last_heartbeat_ms = now_ms;
}

void knc_metrics_rebalance(kn_consumer *c, int64_t latency_ms, int64_t now_ms) {
    knm_record(c->metrics.m, c->metrics.rebalance, (double)(latency_ms > 0 ? latency_ms : 0), now_ms);
    c->metrics.last_rebalance_ms = now_ms;
}

void knc_metrics_rebalance_failed(kn_consumer *c, int64_t now_ms) {
    knm_record(c->metrics.m, c->metrics.failed_rebalance, 1, now_ms);
}

int kn_consumer_metrics(kn_consumer *c, kn_metric_visit_fn fn, void *ctx) {
    if (!c || !fn)
        return KN_ERR__INVALID_ARG;
    if (kn_consumer_forked(c))
        return KN_ERR__FORKED;
    pthread_mutex_lock(&c->lock);
    kn_metrics *m = c->client ? c->metrics.m : NULL;
    pthread_mutex_unlock(&c->lock);
    if (!m)
        return KN_ERR__CLOSED;
    return knm_visit(m, fn, ctx);
}

/*
 * net_metrics.c: the network metrics every Kafka client reports, named
 * as Java's Selector names them: in "<kind>-metrics" the client's bytes,
 * requests and responses (rates, totals, sizes) and its connections; in
 * "<kind>-node-metrics" (tag node-id "node-<id>") the same per broker
 * plus request-latency-avg/max.
 *
 * Recording runs on the network thread (request.c, conn.c); the
 * connection-count gauge is read under client->lock from any thread.
 */
#include <stdio.h>
#include <string.h>

#include "wire/wire_int.h"

static const knm_stat_def sent_stats[] = {
    {"outgoing-byte-rate", "The number of outgoing bytes sent per second", KNM_RATE},
    {"outgoing-byte-total", "The total number of outgoing bytes sent", KNM_TOTAL},
    {"request-rate", "The number of requests sent per second", KNM_COUNT_RATE},
    {"request-total", "The total number of requests sent", KNM_COUNT_TOTAL},
    {"request-size-avg", "The average size of the requests sent, in bytes", KNM_AVG},
    {"request-size-max", "The largest request sent, in bytes", KNM_MAX},
};
static const knm_stat_def recv_stats[] = {
    {"incoming-byte-rate", "The number of bytes read off the sockets per second", KNM_RATE},
    {"incoming-byte-total", "The total number of bytes read off the sockets", KNM_TOTAL},
    {"response-rate", "The number of responses received per second", KNM_COUNT_RATE},
    {"response-total", "The total number of responses received", KNM_COUNT_TOTAL},
};
static const knm_stat_def latency_stats[] = {
    {"request-latency-avg", "The average time from sending a request to its response, in ms", KNM_AVG},
    {"request-latency-max", "The longest time from sending a request to its response, in ms", KNM_MAX},
};
static const knm_stat_def created_stats[] = {
    {"connection-creation-rate", "The number of new connections established per second", KNM_COUNT_RATE},
    {"connection-creation-total", "The total number of new connections established", KNM_COUNT_TOTAL},
};
static const knm_stat_def closed_stats[] = {
    {"connection-close-rate", "The number of connections closed per second", KNM_COUNT_RATE},
    {"connection-close-total", "The total number of connections closed", KNM_COUNT_TOTAL},
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
static const knm_sensor_def def_sent = {"-metrics", NULL, NULL, sent_stats, N(sent_stats)};
static const knm_sensor_def def_recv = {"-metrics", NULL, NULL, recv_stats, N(recv_stats)};
static const knm_sensor_def def_created = {"-metrics", NULL, NULL, created_stats, N(created_stats)};
static const knm_sensor_def def_closed = {"-metrics", NULL, NULL, closed_stats, N(closed_stats)};
static const knm_sensor_def def_node_sent = {"-node-metrics", "node-id", NULL, sent_stats, N(sent_stats)};
static const knm_sensor_def def_node_recv = {"-node-metrics", "node-id", NULL, recv_stats, N(recv_stats)};
static const knm_sensor_def def_node_lat = {"-node-metrics", "node-id", NULL, latency_stats,
                                            N(latency_stats)};

/* client->lock: the connections past their handshakes. */
static void provide(void *opaque, knm_snap *snap, int64_t now_ms) {
    knw_client *c = opaque;
    (void)now_ms;
    int n = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->conn_count; i++)
        if (atomic_load(&c->conns[i]->ready))
            n++;
    pthread_mutex_unlock(&c->lock);
    knm_emit(snap, knm_group(c->metrics, "-metrics"), "connection-count",
             "The current number of active connections", KN_METRIC_GAUGE, n, NULL, NULL, NULL, NULL);
}

/* Java's group prefix for a client kind. */
static const char *group_prefix(const char *kind) {
    if (!strcmp(kind, "admin"))
        return "admin-client";
    if (!strcmp(kind, "share-consumer"))
        return "consumer-share";
    return kind;
}

int knw_net_metrics_init(knw_client *c) {
    c->metrics = knm_new(group_prefix(c->set.kind), c->set.client_id, c->set.metrics_window_ms,
                         c->set.metrics_num_samples);
    if (!c->metrics)
        return KN_ERR__NOMEM;
    c->m_sent = knm_sensor_get(c->metrics, &def_sent, NULL, NULL);
    c->m_recv = knm_sensor_get(c->metrics, &def_recv, NULL, NULL);
    c->m_created = knm_sensor_get(c->metrics, &def_created, NULL, NULL);
    c->m_closed = knm_sensor_get(c->metrics, &def_closed, NULL, NULL);
    if (!c->m_sent || !c->m_recv || !c->m_created || !c->m_closed)
        return KN_ERR__NOMEM;
    return knm_provider_add(c->metrics, provide, c);
}

/* Network thread: the connection's node sensors, made on first use
 * (a missing one only loses that broker's numbers). */
static void node_sensors(knw_conn *conn) {
    if (conn->m_sent)
        return;
    char id[32];
    snprintf(id, sizeof id, "node-%d", (int)conn->node_id);
    kn_metrics *m = conn->client->metrics;
    conn->m_sent = knm_sensor_get(m, &def_node_sent, id, NULL);
    conn->m_recv = knm_sensor_get(m, &def_node_recv, id, NULL);
    conn->m_lat = knm_sensor_get(m, &def_node_lat, id, NULL);
}

void knw_net_sent(knw_conn *conn, size_t len, int64_t now_ms) {
    knw_client *c = conn->client;
    node_sensors(conn);
    knm_record(c->metrics, c->m_sent, (double)len, now_ms);
    knm_record(c->metrics, conn->m_sent, (double)len, now_ms);
}

void knw_net_received(knw_conn *conn, size_t len, int64_t latency_us, int64_t now_ms) {
    knw_client *c = conn->client;
    node_sensors(conn);
    knm_record(c->metrics, c->m_recv, (double)len, now_ms);
    knm_record(c->metrics, conn->m_recv, (double)len, now_ms);
    knm_record(c->metrics, conn->m_lat, (double)latency_us / 1000.0, now_ms);
}

void knw_net_connection(knw_client *c, bool created, int64_t now_ms) {
    knm_record(c->metrics, created ? c->m_created : c->m_closed, 1, now_ms);
}

kn_metrics *knw_client_metrics(knw_client *c) { return c ? c->metrics : NULL; }

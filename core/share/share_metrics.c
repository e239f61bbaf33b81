/*
 * share_metrics.c: the share consumer's metrics: for now the network
 * metrics every client has, in "consumer-share-metrics" and
 * "consumer-share-node-metrics" (core/wire/net_metrics.c); Java's
 * consumer-share-fetch-manager and -coordinator groups are not kept yet.
 */
#include "metrics/metrics.h"
#include "share/share_int.h"

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

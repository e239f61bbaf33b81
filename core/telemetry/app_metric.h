/*
 * app_metric.h: application metrics (KIP-1076) as the telemetry
 * collector reads them. A kn_app_metric is reference counted: the
 * application holds one reference (kn_app_metric_new .. _destroy) and
 * each client it is registered with holds one, so either side may go
 * first. Its name, group and tags are fixed once registered; the value
 * is one atomic double.
 */
#ifndef KNT_APP_METRIC_H
#define KNT_APP_METRIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kafka_native.h"
#include "metrics/metric_view.h"

struct kn_app_metric {
    atomic_int refs;
    atomic_uint_fast64_t bits; /* the double's bits */
    atomic_bool frozen;        /* registered once: tags may not change */
    char *group, *name, *description;
    kn_metric_tag *tags; /* owned keys and values */
    size_t n_tags;
    int kind;
};

/* Takes one more reference (registration). */
void knt_app_metric_retain(kn_app_metric *m);
/* Drops one; frees the metric at zero. */
void knt_app_metric_release(kn_app_metric *m);
/* The metric as a view (borrowed strings, valid while referenced). */
void knt_app_metric_view(const kn_app_metric *m, kn_metric_view *out);

#endif

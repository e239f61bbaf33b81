/*
 * lk_metrics.h: the Kafka-named metrics methods shared by every client
 * userdata (lk_metrics.c).
 */
#ifndef LK_METRICS_H
#define LK_METRICS_H

#include <stdbool.h>

#include "lk.h"

typedef int lk_metrics_walk_fn(void *client, kn_metric_visit_fn fn, void *ctx);

/* The method body: arguments from index 2 (kafka_metrics: [group];
 * kafka_metric (single): group, name[, tags]). Pushes the list (or the
 * value or nil) and returns 1, or nil, message, code on failure. */
int lk_metrics_push(lua_State *L, lk_metrics_walk_fn *walk, void *client, bool single);

#endif

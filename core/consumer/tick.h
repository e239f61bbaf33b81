/*
 * tick.h: the consumer's network-thread scheduler (tick.c): each tick
 * plans resets, validations, commits and Fetches under c->lock and
 * sends them after it.
 */
#ifndef KN_CONSUMER_TICK_H
#define KN_CONSUMER_TICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/consumer_int.h"

/* tick.c: the fetch-buffer budget (bytes of raw responses held by
 * buffered slices plus the max_bytes of Fetches in flight), derived
 * from max.partition.fetch.bytes. */
size_t knc_fetch_budget(int max_partition_fetch_bytes);
/* tick.c: the network-thread ticker (ListOffsets for unpositioned
 * partitions, then Fetch per leader). Takes c->lock itself. */
int knc_fetcher_tick(knw_client *client, int64_t now_ms, void *opaque);

#endif

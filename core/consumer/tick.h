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

/* tick.c: the network-thread ticker (ListOffsets for unpositioned
 * partitions, then Fetch per leader). Takes c->lock itself. The one
 * function that plans with every piece: the table (who to fetch), the
 * nodes (who is busy), the fetch buffer (how much), the offsets (what
 * to commit) and the settings; each piece through its own functions. */
int knc_fetcher_tick(knw_client *client, int64_t now_ms, void *opaque);

#endif

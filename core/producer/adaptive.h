/*
 * adaptive.h: the adaptive partitioner's input (adaptive.c), gathered
 * on the sender's thread for the partitioner (partitioner.h,
 * knp_sticky_load_stats).
 */
#ifndef KN_PRODUCER_ADAPTIVE_H
#define KN_PRODUCER_ADAPTIVE_H

#include <stdint.h>

#include "producer/sender_state.h"

/* acc.lock held. Java's adaptive partitioning input: queue depth per
 * partition with a leader whose broker keeps up. */
void knp_adaptive_update(knp_sender *s, int64_t now_ms);

#endif

/*
 * node.h: the per-broker fetch state (node.c): for each broker the
 * consumer fetches from, its one Fetch in flight (and the bytes it
 * reserved of the fetch-buffer budget), its backoff and its fetch
 * session (session.h). Held by value in struct kn_consumer (c->nodes),
 * guarded by c->lock; tick.c plans with it, fetch.c answers into it.
 */
#ifndef KN_CONSUMER_NODE_H
#define KN_CONSUMER_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/session.h"

typedef struct knc_node {
    int32_t node_id;
    bool fetch_inflight;
    int32_t inflight_bytes; /* the in-flight Fetch's max_bytes (budget reservation) */
    int64_t sent_ms;        /* when the in-flight Fetch was sent */
    bool overdue_warned;    /* the in-flight Fetch was reported as overdue */
    int64_t backoff_until_ms;
    knc_session session;
    int64_t window_listed; /* this tick: backlog bytes listed for it (window.h) */
} knc_node;

typedef struct knc_nodes {
    knc_node *items;
    size_t count, cap;
} knc_nodes;

/* The fetch state of broker node_id, created on first use. NULL on
 * allocation failure. Valid until the next knc_nodes_get. */
knc_node *knc_nodes_get(knc_nodes *t, int32_t node_id);
static inline size_t knc_nodes_count(const knc_nodes *t) { return t->count; }
static inline knc_node *knc_nodes_at(const knc_nodes *t, size_t i) { return &t->items[i]; }
/* The bytes the Fetches in flight reserved of the fetch-buffer budget. */
int64_t knc_nodes_inflight_bytes(const knc_nodes *t);
/* Starts a tick's window (window.h): nothing listed for any broker. */
void knc_nodes_window_reset(knc_nodes *t);
/* Frees every broker's state and session. */
void knc_nodes_free(knc_nodes *t);

#endif

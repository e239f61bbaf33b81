/*
 * node.c: the per-broker fetch state table (node.h), a small array
 * searched linearly: a consumer fetches from a handful of brokers.
 */
#include <string.h>

#include "consumer/node.h"
#include "kn_alloc.h"

knc_node *knc_nodes_get(knc_nodes *t, int32_t node_id) {
    for (size_t i = 0; i < t->count; i++)
        if (t->items[i].node_id == node_id)
            return &t->items[i];
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        knc_node *n = kn_realloc(t->items, cap * sizeof(*n));
        if (!n)
            return NULL;
        t->items = n;
        t->cap = cap;
    }
    knc_node *n = &t->items[t->count++];
    memset(n, 0, sizeof(*n));
    n->node_id = node_id;
    return n;
}

int64_t knc_nodes_inflight_bytes(const knc_nodes *t) {
    int64_t inflight = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->items[i].fetch_inflight)
            inflight += t->items[i].inflight_bytes;
    return inflight;
}

void knc_nodes_window_reset(knc_nodes *t) {
    for (size_t i = 0; i < t->count; i++)
        t->items[i].window_listed = 0;
}

void knc_nodes_free(knc_nodes *t) {
    for (size_t i = 0; i < t->count; i++)
        knc_session_reset(&t->items[i].session);
    kn_free(t->items);
    t->items = NULL;
    t->count = t->cap = 0;
}

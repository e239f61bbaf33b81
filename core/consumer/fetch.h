/*
 * fetch.h: the Fetch request of one broker (fetch.c): its plan (session,
 * max_bytes), its answer (buffered slices, the error policy), and KIP-392
 * read replicas. The per-broker state it plans and answers into is
 * node.h; the fetch buffer it fills, fetched.h.
 */
#ifndef KN_CONSUMER_FETCH_H
#define KN_CONSUMER_FETCH_H

#include <stdint.h>

#include "consumer/consumer_int.h"
#include "consumer/request.h"

/* KIP-392: the broker p is fetched from: the read replica its leader
 * named, while fresh, online and a replica; else the leader (-1 when
 * unknown, *epoch -1 too). */
int32_t knc_fetch_node(const knw_metadata *md, const knc_part *p, int64_t now_ms, int32_t *epoch);
/* Fills req's Fetch body for node (req's broker): its session decides
 * which partitions are listed and which are forgotten. 0 or
 * KN_ERR__NOMEM. */
int knc_fill_fetch(const knc_config *cfg, knc_node *node, const knw_metadata *md, knc_req *req,
                   int max_wait_ms, int32_t max_bytes);
/* Sends the Fetch (no lock held); the answer (or failure) completes
 * through the callback, which frees req. The answer takes the whole
 * consumer (req->c): it moves partitions (the table), their broker's
 * session and backoff (nodes), the held bytes (fbuf), stats and
 * metrics, under c->lock, and signals poll. */
void knc_fetch_send(knw_client *client, knc_req *req);

#endif

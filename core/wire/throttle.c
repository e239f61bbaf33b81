/*
 * throttle.c: client quotas seen from the client (KIP-219).
 *
 * A broker over a client's quota (produce / fetch bytes, request time,
 * controller mutations) answers at once with throttle_time_ms and mutes
 * its side of the connection for that long. Like Java's NetworkClient,
 * the connection then sends nothing new until the time is up (requests
 * wait in its queue; bytes already queued still go out): a request sent
 * meanwhile would only sit in the broker's socket buffer, against its
 * timeout. Versions older than the API's KIP-219 version (kp_api
 * throttle_from, from the schemas) were delayed by the broker itself:
 * nothing more to wait. Every response that carries the field feeds the
 * per-API throttle statistics the clients' stats report (Java's
 * produce-throttle-time-avg/max, fetch-throttle-time-avg/max).
 *
 * Network thread only, except knw_throttle_stats (any thread).
 */
#include "wire/wire_int.h"

void knw_throttle_note(knw_client *c, knw_conn *conn, const knw_req *r, const void *body, int64_t now_ms) {
    const kp_api *api = r->api;
    if (api->throttle_from < 0 || r->api_key < 0 || r->api_key > KP_API_KEY_MAX)
        return;
    int32_t ms = *(const int32_t *)(const void *)((const char *)body + api->throttle_offset);
    if (ms < 0)
        ms = 0; /* never trust the wire: a negative wait is none */
    knw_stats_atomic *s = &c->stats;
    atomic_fetch_add(&s->throttle_sum_ms[r->api_key], ms);
    atomic_fetch_add(&s->throttle_n[r->api_key], 1);
    if (ms > atomic_load(&s->throttle_max_ms[r->api_key]))
        atomic_store(&s->throttle_max_ms[r->api_key], ms); /* one writer: this thread */
    if (ms == 0 || r->version < api->throttle_from)
        return;
    if (now_ms + ms > conn->throttle_until_ms) {
        conn->throttle_until_ms = now_ms + ms;
        char nb[128];
        kn_log(&c->log, KN_LOG_DEBUG, "%s: %s v%d throttled %d ms by a quota: sending nothing until then",
               knw_conn_name(conn, nb, sizeof nb), api->name, r->version, (int)ms);
    }
}

void knw_throttle_stats(knw_client *c, int16_t api_key, int64_t *avg_ms, int64_t *max_ms) {
    *avg_ms = *max_ms = 0;
    if (!c || api_key < 0 || api_key > KP_API_KEY_MAX)
        return;
    knw_stats_atomic *s = &c->stats;
    int64_t n = atomic_load(&s->throttle_n[api_key]);
    if (n > 0)
        *avg_ms = atomic_load(&s->throttle_sum_ms[api_key]) / n;
    *max_ms = atomic_load(&s->throttle_max_ms[api_key]);
}

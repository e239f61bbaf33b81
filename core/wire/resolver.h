/*
 * resolver.h: host name resolution off the network thread.
 *
 * getaddrinfo can block for seconds (a slow or dead DNS server); on the
 * network thread that would stall heartbeats and fetches to every
 * broker. So a client resolves names on its own resolver thread
 * (started at the first name that needs it, joined by
 * knw_resolver_destroy) and the network thread only ever:
 *   - resolves numeric addresses inline (never blocks),
 *   - reads a small cache of answers, each kept KNW_DNS_CACHE_TTL_MS
 *     (30 s: the JVM's default networkaddress.cache.ttl, which the Java
 *     client lives with), dropped early when every address of an answer
 *     failed to connect (a moved broker is found on the next attempt),
 *   - queues a lookup and collects answers (knw_resolver_collect) after
 *     the resolver thread wakes the loop.
 * Every address of an answer is kept, IPv4 first (client.dns.lookup =
 * use_all_dns_ips); resolve_canonical_bootstrap_servers_only is applied
 * to bootstrap.servers when the client is built (dns.h).
 *
 * Ownership: the resolver owns its queues, its cache and the thread.
 * The cache, ids and knw_resolver_lookup/collect/forget belong to the
 * network thread; lock guards the two queues between the threads.
 */
#ifndef KNW_RESOLVER_H
#define KNW_RESOLVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "wire/dns.h"
#include "wire/loop.h"

#define KNW_DNS_CACHE_TTL_MS 30000
#define KNW_DNS_CACHE_MAX 64 /* entries; the oldest goes first */

/* A blocking resolver: knw_dns_resolve by default; tests inject one
 * (knw_settings.resolve_fn). Same contract as knw_dns_resolve. Runs on
 * the resolver thread. */
typedef int knw_resolve_fn(const char *host, int port, knw_addrs *out, char *errstr, size_t errstr_size,
                           void *opaque);

typedef struct knw_dns_job {
    struct knw_dns_job *next;
    uint64_t id;
    char *host; /* owned */
    int port;
    int err;
    char errstr[200];
    knw_addrs addrs; /* the answer (owned until collected) */
} knw_dns_job;

typedef struct knw_dns_entry {
    char *host; /* owned */
    int port;
    knw_addrs addrs;
    int64_t expires_ms;
} knw_dns_entry;

typedef struct knw_resolver {
    knw_resolve_fn *fn;
    void *fn_opaque;
    knw_loop *loop; /* woken when an answer is ready */

    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool started, stop;
    knw_dns_job *todo, *todo_tail; /* guarded by lock */
    knw_dns_job *done, *done_tail; /* guarded by lock */

    /* network thread only */
    uint64_t next_id;
    knw_dns_entry cache[KNW_DNS_CACHE_MAX];
    int cache_count;
    int64_t lookups; /* names given to the resolver thread (tests) */
} knw_resolver;

void knw_resolver_init(knw_resolver *r, knw_resolve_fn *fn, void *fn_opaque, knw_loop *loop);
/* Stops and joins the thread (waiting for a lookup in progress: no
 * library thread outlives its client), frees queues and cache. */
void knw_resolver_destroy(knw_resolver *r);

/* Network thread. Returns 0 with *out filled (numeric or cached), a
 * negative error with errstr, or KNW_RESOLVE_PENDING with *id set: the
 * answer comes later through knw_resolver_collect. */
#define KNW_RESOLVE_PENDING 1
int knw_resolver_lookup(knw_resolver *r, const char *host, int port, int64_t now_ms, knw_addrs *out,
                        uint64_t *id, char *errstr, size_t errstr_size);
/* Network thread: takes the finished lookups (a list the caller frees
 * with knw_dns_job_free) after caching the successful ones. */
knw_dns_job *knw_resolver_collect(knw_resolver *r, int64_t now_ms);
void knw_dns_job_free(knw_dns_job *job);
/* Network thread: forgets the cached answer for host:port. */
void knw_resolver_forget(knw_resolver *r, const char *host, int port);

#endif

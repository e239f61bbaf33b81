/*
 * resolver.c: the per-client resolver thread, its job queues and the
 * network thread's answer cache (see resolver.h).
 */
#include "wire/resolver.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"

static int default_resolve(const char *host, int port, knw_addrs *out, char *errstr, size_t errstr_size,
                           void *opaque) {
    (void)opaque;
    return knw_dns_resolve(host, port, out, errstr, errstr_size);
}

void knw_resolver_init(knw_resolver *r, knw_resolve_fn *fn, void *fn_opaque, knw_loop *loop) {
    memset(r, 0, sizeof *r);
    r->fn = fn ? fn : default_resolve;
    r->fn_opaque = fn_opaque;
    r->loop = loop;
    r->next_id = 1;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
}

void knw_dns_job_free(knw_dns_job *job) {
    while (job) {
        knw_dns_job *next = job->next;
        kn_free(job->host);
        knw_addrs_free(&job->addrs);
        kn_free(job);
        job = next;
    }
}

static void *resolver_main(void *arg) {
    knw_resolver *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->stop && !r->todo)
            pthread_cond_wait(&r->cond, &r->lock);
        if (r->stop)
            break;
        knw_dns_job *job = r->todo;
        r->todo = job->next;
        if (!r->todo)
            r->todo_tail = NULL;
        job->next = NULL;
        pthread_mutex_unlock(&r->lock);
        /* The only place a lookup may block, on this thread alone. */
        job->err = r->fn(job->host, job->port, &job->addrs, job->errstr, sizeof job->errstr, r->fn_opaque);
        if (job->err && !job->errstr[0])
            snprintf(job->errstr, sizeof job->errstr, "resolve %s:%d: %s", job->host, job->port,
                     kn_err_name(job->err));
        pthread_mutex_lock(&r->lock);
        if (r->done_tail)
            r->done_tail->next = job;
        else
            r->done = job;
        r->done_tail = job;
        knw_loop_wake(r->loop);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

void knw_resolver_destroy(knw_resolver *r) {
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (r->started) {
        pthread_join(r->thread, NULL);
        r->started = false;
    }
    knw_dns_job_free(r->todo);
    knw_dns_job_free(r->done);
    r->todo = r->todo_tail = r->done = r->done_tail = NULL;
    for (int i = 0; i < r->cache_count; i++) {
        kn_free(r->cache[i].host);
        knw_addrs_free(&r->cache[i].addrs);
    }
    r->cache_count = 0;
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
}

static int addrs_copy(knw_addrs *dst, const knw_addrs *src) {
    dst->addrs = kn_calloc((size_t)src->count ? (size_t)src->count : 1, sizeof *dst->addrs);
    if (!dst->addrs) {
        dst->count = 0;
        return KN_ERR__NOMEM;
    }
    memcpy(dst->addrs, src->addrs, (size_t)src->count * sizeof *dst->addrs);
    dst->count = src->count;
    return 0;
}

static knw_dns_entry *cache_find(knw_resolver *r, const char *host, int port) {
    for (int i = 0; i < r->cache_count; i++)
        if (r->cache[i].port == port && !strcmp(r->cache[i].host, host))
            return &r->cache[i];
    return NULL;
}

static void cache_drop(knw_resolver *r, knw_dns_entry *e) {
    kn_free(e->host);
    knw_addrs_free(&e->addrs);
    *e = r->cache[--r->cache_count];
}

/* Keeps a copy of a fresh answer; a full cache drops its oldest. */
static void cache_put(knw_resolver *r, const char *host, int port, const knw_addrs *addrs, int64_t now_ms) {
    knw_dns_entry *e = cache_find(r, host, port);
    if (e)
        cache_drop(r, e);
    if (r->cache_count == KNW_DNS_CACHE_MAX) {
        knw_dns_entry *oldest = &r->cache[0];
        for (int i = 1; i < r->cache_count; i++)
            if (r->cache[i].expires_ms < oldest->expires_ms)
                oldest = &r->cache[i];
        cache_drop(r, oldest);
    }
    knw_dns_entry n = {kn_strdup(host), port, {NULL, 0}, now_ms + KNW_DNS_CACHE_TTL_MS};
    if (!n.host || addrs_copy(&n.addrs, addrs)) {
        kn_free(n.host);
        return; /* not cached: the next attempt asks again */
    }
    r->cache[r->cache_count++] = n;
}

void knw_resolver_forget(knw_resolver *r, const char *host, int port) {
    knw_dns_entry *e = cache_find(r, host, port);
    if (e)
        cache_drop(r, e);
}

/* An IP literal needs no lookup: getaddrinfo with AI_NUMERICHOST never
 * blocks. Returns 0 with out filled, or -1 if host is a name. */
static int numeric(const char *host, int port, knw_addrs *out) {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    if (getaddrinfo(host, portstr, &hints, &res) != 0 || !res)
        return -1;
    int rc = 0;
    if (res->ai_addrlen > sizeof(struct sockaddr_storage) ||
        !(out->addrs = kn_calloc(1, sizeof *out->addrs))) {
        rc = KN_ERR__NOMEM;
    } else {
        memcpy(&out->addrs[0].sa, res->ai_addr, res->ai_addrlen);
        out->addrs[0].len = res->ai_addrlen;
        out->addrs[0].family = res->ai_family;
        out->count = 1;
    }
    freeaddrinfo(res);
    return rc;
}

int knw_resolver_lookup(knw_resolver *r, const char *host, int port, int64_t now_ms, knw_addrs *out,
                        uint64_t *id, char *errstr, size_t errstr_size) {
    out->addrs = NULL;
    out->count = 0;
    int rc = numeric(host, port, out);
    if (rc >= 0) {
        if (rc)
            kn_errstr_set(errstr, errstr_size, "resolve %s:%d: out of memory", host, port);
        return rc;
    }
    knw_dns_entry *e = cache_find(r, host, port);
    if (e && e->expires_ms > now_ms) {
        if (addrs_copy(out, &e->addrs)) {
            kn_errstr_set(errstr, errstr_size, "resolve %s:%d: out of memory", host, port);
            return KN_ERR__NOMEM;
        }
        return 0;
    }
    if (e)
        cache_drop(r, e);
    knw_dns_job *job = kn_calloc(1, sizeof *job);
    if (!job || !(job->host = kn_strdup(host))) {
        kn_free(job);
        kn_errstr_set(errstr, errstr_size, "resolve %s:%d: out of memory", host, port);
        return KN_ERR__NOMEM;
    }
    job->port = port;
    job->id = r->next_id++;
    pthread_mutex_lock(&r->lock);
    if (!r->started) {
        int prc = pthread_create(&r->thread, NULL, resolver_main, r);
        if (prc) {
            pthread_mutex_unlock(&r->lock);
            knw_dns_job_free(job);
            kn_errstr_set(errstr, errstr_size, "resolve %s:%d: cannot start the resolver thread: %s", host,
                          port, strerror(prc));
            return KN_ERR__RESOLVE;
        }
        pthread_setname_np(r->thread, "kn-resolve");
        r->started = true;
    }
    if (r->todo_tail)
        r->todo_tail->next = job;
    else
        r->todo = job;
    r->todo_tail = job;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    r->lookups++;
    *id = job->id;
    return KNW_RESOLVE_PENDING;
}

knw_dns_job *knw_resolver_collect(knw_resolver *r, int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    knw_dns_job *jobs = r->done;
    r->done = r->done_tail = NULL;
    pthread_mutex_unlock(&r->lock);
    for (knw_dns_job *j = jobs; j; j = j->next)
        if (!j->err)
            cache_put(r, j->host, j->port, &j->addrs, now_ms);
    return jobs;
}

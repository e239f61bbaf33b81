/*
 * bodybuf.c: response body buffers and the cache of large ones (see
 * bodybuf.h).
 *
 * Each body carries a 16-byte header in front of it with its capacity,
 * so knw_body_free needs only the pointer (bodies are freed from many
 * places: the consumer's record buffers, failed decodes, the frame
 * reader's reset). Large capacities are rounded up to KNW_BODY_CACHE_MIN
 * so responses of nearly the same size (Fetches capped by the same
 * max_bytes) fit each other's spares.
 *
 * Under AddressSanitizer a cached spare is poisoned whole and a reused
 * one is poisoned past the requested length, so a read beyond a body or
 * after its free is still reported as it would be with plain malloc.
 */
#include "wire/bodybuf.h"

#include <pthread.h>
#include <string.h>

#include "kn_alloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define KNW_BODY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KNW_BODY_ASAN 1
#endif
#endif
#ifdef KNW_BODY_ASAN
#include <sanitizer/asan_interface.h>
#define body_poison(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define body_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define body_poison(p, n)   ((void)(p), (void)(n))
#define body_unpoison(p, n) ((void)(p), (void)(n))
#endif

/* 16 bytes keep the body as aligned as malloc's own blocks. */
typedef struct body_hdr {
    size_t cap;
    size_t pad;
} body_hdr;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static body_hdr *cache[KNW_BODY_CACHE_SLOTS];
static size_t cache_count;
static size_t cache_holders; /* live clients (knw_body_cache_hold) */

static uint8_t *body_of(body_hdr *h) { return (uint8_t *)(h + 1); }
static body_hdr *hdr_of(uint8_t *body) { return (body_hdr *)body - 1; }

/* The cached spare that fits len most tightly, taken out of the cache;
 * NULL when none is large enough. */
static body_hdr *cache_take(size_t len) {
    body_hdr *h = NULL;
    pthread_mutex_lock(&cache_lock);
    size_t best = cache_count;
    for (size_t i = 0; i < cache_count; i++)
        if (cache[i]->cap >= len && (best == cache_count || cache[i]->cap < cache[best]->cap))
            best = i;
    if (best < cache_count) {
        h = cache[best];
        cache[best] = cache[--cache_count];
    }
    pthread_mutex_unlock(&cache_lock);
    return h;
}

uint8_t *knw_body_alloc(size_t len) {
    if (len == 0 || len > (size_t)-1 / 2)
        return NULL;
    size_t cap = len;
    if (len >= KNW_BODY_CACHE_MIN) {
        body_hdr *h = cache_take(len);
        if (h) {
            body_unpoison(body_of(h), len);
            return body_of(h);
        }
        cap = (len + KNW_BODY_CACHE_MIN - 1) / KNW_BODY_CACHE_MIN * KNW_BODY_CACHE_MIN;
    }
    body_hdr *h = kn_malloc(sizeof *h + cap);
    if (!h)
        return NULL;
    h->cap = cap;
    h->pad = 0;
    body_poison(body_of(h) + len, cap - len);
    return body_of(h);
}

void knw_body_free(uint8_t *body) {
    if (!body)
        return;
    body_hdr *h = hdr_of(body);
    if (h->cap >= KNW_BODY_CACHE_MIN) {
        /* Poisoned before it is published: once in the cache another
         * thread may take and unpoison it at any moment. */
        body_poison(body_of(h), h->cap);
        body_hdr *drop = h;
        pthread_mutex_lock(&cache_lock);
        if (cache_holders == 0) {
            /* No client left to reuse it. */
        } else if (cache_count < KNW_BODY_CACHE_SLOTS) {
            cache[cache_count++] = h;
            drop = NULL;
        } else {
            /* Full: keep the larger spares, they fit more responses. */
            size_t small = 0;
            for (size_t i = 1; i < cache_count; i++)
                if (cache[i]->cap < cache[small]->cap)
                    small = i;
            if (cache[small]->cap < h->cap) {
                drop = cache[small];
                cache[small] = h;
            }
        }
        pthread_mutex_unlock(&cache_lock);
        if (!drop)
            return;
        body_unpoison(body_of(drop), drop->cap);
        h = drop;
    }
    kn_free(h);
}

void knw_body_cache_hold(void) {
    pthread_mutex_lock(&cache_lock);
    cache_holders++;
    pthread_mutex_unlock(&cache_lock);
}

void knw_body_cache_release(void) {
    body_hdr *spare[KNW_BODY_CACHE_SLOTS];
    pthread_mutex_lock(&cache_lock);
    size_t n = 0;
    if (cache_holders > 0 && --cache_holders > 0) {
        pthread_mutex_unlock(&cache_lock);
        return;
    }
    n = cache_count;
    memcpy(spare, cache, n * sizeof *spare);
    cache_count = 0;
    pthread_mutex_unlock(&cache_lock);
    for (size_t i = 0; i < n; i++) {
        body_unpoison(body_of(spare[i]), spare[i]->cap);
        kn_free(spare[i]);
    }
}

void knw_body_cache_stats(size_t *count, size_t *bytes) {
    pthread_mutex_lock(&cache_lock);
    size_t total = 0;
    for (size_t i = 0; i < cache_count; i++)
        total += cache[i]->cap;
    if (count)
        *count = cache_count;
    if (bytes)
        *bytes = total;
    pthread_mutex_unlock(&cache_lock);
}

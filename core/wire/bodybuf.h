/*
 * bodybuf.h: the buffers response bodies are received into.
 *
 * A response body is one allocation of exactly its frame size (frame.h)
 * that lives as long as anything points into it: for a Fetch, until the
 * application has drained every record of it, on another thread. Large
 * bodies (a Fetch carries up to megabytes) come and go several times a
 * second; given straight to malloc, each free leaves the allocator with
 * a hole or a raised mmap threshold, and the process keeps pages that
 * no live response uses (measured: peak RSS 7.8 to 13.9 MiB for the same
 * 6 MiB of live Fetch data, run to run). Large bodies therefore go
 * through a small cache: a freed one is kept, pages still resident, for
 * the next response to reuse, so the resident set follows the live
 * bodies (bounded by the consumer's fetch-buffer budget) plus at most
 * KNW_BODY_CACHE_SLOTS spares, and no page is faulted in twice.
 *
 * Thread-safe: bodies are allocated on the network thread and usually
 * freed on the application's.
 */
#ifndef KNW_BODYBUF_H
#define KNW_BODYBUF_H

#include <stddef.h>
#include <stdint.h>

/* Bodies at least this large are cached on free; smaller ones are
 * plain heap blocks (the allocator reuses those well by itself). */
#define KNW_BODY_CACHE_MIN (256u * 1024u)
/* Spare large bodies kept: one Fetch in flight while one drains needs
 * two; more would only hold memory. */
#define KNW_BODY_CACHE_SLOTS 2

/* A body of len bytes (len > 0), or NULL when out of memory. Free it
 * with knw_body_free, never kn_free. */
uint8_t *knw_body_alloc(size_t len);
/* Frees (or caches) a body from knw_body_alloc. NULL is a no-op. */
void knw_body_free(uint8_t *body);
/* The cache keeps spares only while a client exists: every
 * knw_client holds it from creation to destruction. The last release
 * returns every spare to the allocator, and bodies freed after it (a
 * consumer's records outliving its client) go straight back too, so a
 * process with no client keeps none and nothing is left at exit. */
void knw_body_cache_hold(void);
void knw_body_cache_release(void);
/* How many spares the cache holds and their total capacity (tests). */
void knw_body_cache_stats(size_t *count, size_t *bytes);

#endif

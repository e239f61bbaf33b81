/*
 * kn_alloc.c: the allocator indirection (see kn_alloc.h).
 */
#include "kn_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"

static void *(*kn_malloc_fn)(size_t) = malloc;
static void *(*kn_realloc_fn)(void *, size_t) = realloc;
static void (*kn_free_fn)(void *) = free;

void kn_set_allocator(const kn_allocator *a) {
    kn_malloc_fn = a && a->malloc_fn ? a->malloc_fn : malloc;
    kn_realloc_fn = a && a->realloc_fn ? a->realloc_fn : realloc;
    kn_free_fn = a && a->free_fn ? a->free_fn : free;
}

void *kn_malloc(size_t size) { return kn_malloc_fn(size ? size : 1); }

void *kn_calloc(size_t n, size_t size) {
    if (size && n > (size_t)-1 / size)
        return NULL;
    size_t total = n * size;
    void *p = kn_malloc_fn(total ? total : 1);
    if (p)
        memset(p, 0, total);
    return p;
}

void *kn_realloc(void *ptr, size_t size) { return kn_realloc_fn(ptr, size ? size : 1); }

void kn_free(void *ptr) {
    if (ptr)
        kn_free_fn(ptr);
}

char *kn_strndup(const char *s, size_t len) {
    char *d = kn_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *kn_strdup(const char *s) { return s ? kn_strndup(s, strlen(s)) : NULL; }

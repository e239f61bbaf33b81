/*
 * arena.c: chunked bump allocation (see arena.h). Large requests get a
 * chunk of their own so a big array does not waste the current chunk.
 */
#include "arena.h"

#include <stdint.h>
#include <string.h>

#include "kn_alloc.h"

struct kn_arena_chunk {
    kn_arena_chunk *next;
    size_t used;
    size_t size;
    max_align_t data[];
};

void kn_arena_init(kn_arena *a, size_t chunk_size) {
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 4096;
    a->total = 0;
}

void *kn_arena_alloc(kn_arena *a, size_t size) {
    const size_t align = sizeof(max_align_t);
    size = (size + align - 1) & ~(align - 1);
    if (size == 0)
        size = align;
    kn_arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t csize = size > a->chunk_size / 2 ? size : a->chunk_size;
        kn_arena_chunk *n = kn_malloc(sizeof(*n) + csize);
        if (!n)
            return NULL;
        n->used = 0;
        n->size = csize;
        a->total += csize;
        if (c && size > a->chunk_size / 2) {
            /* Dedicated chunk: keep the current one at the head. */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            a->head = n;
        }
        c = n;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

void *kn_arena_calloc(kn_arena *a, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size)
        return NULL;
    return kn_arena_alloc(a, n * size);
}

void kn_arena_destroy(kn_arena *a) {
    kn_arena_chunk *c = a->head;
    while (c) {
        kn_arena_chunk *next = c->next;
        kn_free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}

char *kn_arena_strdup(kn_arena *a, const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *d = kn_arena_alloc(a, n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

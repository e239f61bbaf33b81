/*
 * arena.h: a bump allocator for decoded protocol messages. A decoded
 * response's arrays and structs all live in one arena and are freed
 * together with kn_arena_destroy(); strings and byte slices are not
 * copied but point into the raw response buffer, which the owner keeps
 * alive alongside the arena.
 */
#ifndef KN_ARENA_H
#define KN_ARENA_H
#include <stddef.h>

typedef struct kn_arena_chunk kn_arena_chunk;
typedef struct kn_arena {
    kn_arena_chunk *head;
    size_t chunk_size;
    size_t total;
} kn_arena;

void kn_arena_init(kn_arena *a, size_t chunk_size);
/* Zeroed memory aligned for any type, or NULL on allocation failure.
 * Owned by the arena. */
void *kn_arena_alloc(kn_arena *a, size_t size);
/* n zeroed elements of size each, NULL on overflow or failure. */
void *kn_arena_calloc(kn_arena *a, size_t n, size_t size);
/* A NUL-terminated copy of s in the arena; NULL for a NULL s or on
 * allocation failure. */
char *kn_arena_strdup(kn_arena *a, const char *s);
/* Frees every chunk; the arena may be reused after kn_arena_init. */
void kn_arena_destroy(kn_arena *a);

#endif

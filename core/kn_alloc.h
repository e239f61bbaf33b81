/*
 * kn_alloc.h: every allocation in the library goes through these, so a
 * test can swap the allocator (kn_set_allocator) and inject failures.
 * All return NULL on failure; callers handle it (KN_ERR__NOMEM).
 */
#ifndef KN_ALLOC_H
#define KN_ALLOC_H
#include <stddef.h>

void *kn_malloc(size_t size);
void *kn_calloc(size_t n, size_t size);
void *kn_realloc(void *ptr, size_t size);
void kn_free(void *ptr);
/* Returns a NUL-terminated copy owned by the caller (kn_free). */
char *kn_strdup(const char *s);
/* Copies len bytes and adds a NUL; owned by the caller (kn_free). */
char *kn_strndup(const char *s, size_t len);

#endif

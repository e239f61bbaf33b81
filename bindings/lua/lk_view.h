/*
 * lk_view.h: zero-copy record views (lk_view.c): a poll's records, the
 * core's own record struct array, read in place by LuaJIT's FFI
 * (batch:view()), kept alive by reference counting so a view never
 * outlives the fetched bytes it points into.
 *
 * Threads: the caller's (lua_State) thread only; the counts are plain
 * ints (the LuaJIT collector runs finalizers on that thread too).
 */
#ifndef LK_VIEW_H
#define LK_VIEW_H

#include <stdint.h>

#include "consumer/records.h"
#include "lk.h"

/* One record as the FFI sees it is core's knc_rec itself
 * (consumer/records.h), read in place: struct kafka_native_view_rec in
 * lk_view.lua mirrors it, and every field offset is checked there
 * against the values lk_view.c passes (lk_view_layout), so a change to
 * knc_rec fails loudly on the first view instead of reading the wrong
 * bytes. No per-record copy: a view costs the same for 1 record or
 * 10,000. */

/* The view itself: Lua-GC-owned memory (ffi.new), filled by attach and
 * zeroed by release. */
typedef struct lk_view {
    const knc_rec *recs;
    const char *const *topics;
    void *block; /* the lk_vblock referenced, NULL once released */
    int32_t n;
    int32_t topic_count;
} lk_view;

/* The records of one poll, shared by the batch and its views: freed
 * (the kn_records with it) when the last reference goes. */
typedef struct lk_vblock lk_vblock;

/* Takes ownership of recs (one reference, the caller's). NULL on
 * allocation failure: recs stays the caller's. */
lk_vblock *lk_vblock_new(kn_records *recs);
/* Drops one reference (NULL: no-op). */
void lk_vblock_release(lk_vblock *vb);

/* Pushes a new view holding one more reference on vb (vb stays valid
 * for the caller). Raises when LuaJIT's ffi is missing, naming the PUC
 * alternative. */
void lk_view_push(lua_State *L, lk_vblock *vb);

#endif

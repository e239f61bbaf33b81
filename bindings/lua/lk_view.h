/*
 * lk_view.h: zero-copy record views (lk_view.c): a poll's records laid
 * out as a plain C struct array that LuaJIT's FFI reads directly
 * (batch:view()), kept alive by reference counting so a view never
 * outlives the fetched bytes it points into.
 *
 * Threads: the caller's (lua_State) thread only; the counts are plain
 * ints (the LuaJIT collector runs finalizers on that thread too).
 */
#ifndef LK_VIEW_H
#define LK_VIEW_H

#include <stdint.h>

#include "lk.h"

/* One record as the FFI sees it (struct kafka_native_view_rec in
 * lk_view.lua; the layout is checked there against lk_view_layout). */
typedef struct lk_view_rec {
    int64_t offset;
    int64_t timestamp;
    const char *key;   /* NULL: null key */
    const char *value; /* NULL: null value */
    int32_t key_len;   /* -1: null */
    int32_t value_len; /* -1: null */
    int32_t partition;
    int32_t leader_epoch;
    int32_t header_count;
    uint16_t topic_idx; /* index into the view's topics */
    uint8_t timestamp_type;
    uint8_t reserved;
} lk_view_rec;

/* The view itself: Lua-GC-owned memory (ffi.new), filled by attach and
 * zeroed by release. */
typedef struct lk_view {
    const lk_view_rec *recs;
    const char *const *topics;
    void *block; /* the lk_vblock referenced, NULL once released */
    int32_t n;
    int32_t topic_count;
} lk_view;

/* The records of one poll as an lk_view_rec array, shared by the batch
 * and its views: freed (with the kn_records) when the last reference
 * goes. */
typedef struct lk_vblock lk_vblock;

/* Builds the array over recs and takes ownership of recs (one reference,
 * the caller's). NULL on allocation failure: recs stays the caller's. */
lk_vblock *lk_vblock_new(kn_records *recs);
/* Drops one reference (NULL: no-op). */
void lk_vblock_release(lk_vblock *vb);

/* Pushes a new view holding one more reference on vb (vb stays valid
 * for the caller). Raises when LuaJIT's ffi is missing, naming the PUC
 * alternative. */
void lk_view_push(lua_State *L, lk_vblock *vb);

#endif

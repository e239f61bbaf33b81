/*
 * lk_view.c: the C half of batch:view(), the zero-copy LuaJIT FFI view
 * of a poll's records. Owns the lk_vblock (record struct array + the
 * kn_records it points into, reference counted) and the three functions
 * the FFI calls through pointers (attach, release, header); the Lua half
 * is lk_view.lua, embedded as lk_view_lua.h and run once per lua_State.
 *
 * Lifetime rule (why references, not a generation counter): a kn_records
 * already survives later polls and the consumer's close (core keeps the
 * fetched buffers reference counted), so the only way a view's bytes can
 * go away is its own batch being closed or collected. The batch and
 * each view hold one reference on the block; the bytes are freed when
 * the last one goes. A generation check would have to run on every
 * field read inside the FFI loop; a reference costs nothing per record.
 *
 * The function pointers reach the FFI as lightuserdata, so no symbol
 * has to be exported from the module (only luaopen_kafka_native is).
 */
#include <stddef.h>
#include <string.h>

#include "kn_alloc.h"
#include "lk_view.h"
#include "lk_view_lua.h"

_Static_assert(sizeof(lk_view_rec) == 56, "lk_view_rec layout is part of the FFI contract");
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers travel as lightuserdata");

struct lk_vblock {
    int refs;
    kn_records *recs; /* owned */
    int32_t n;
    int32_t topic_count;
    const char **topics; /* borrowed from recs */
    lk_view_rec arr[];
};

/* Index of topic in vb->topics, appending it when new; -1 on NOMEM. */
static int lk_vblock_topic(lk_vblock *vb, const char *topic, size_t *cap) {
    for (int32_t t = vb->topic_count; t > 0; t--)
        if (vb->topics[t - 1] == topic || strcmp(vb->topics[t - 1], topic) == 0)
            return t - 1;
    if ((size_t)vb->topic_count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        const char **n = (const char **)kn_realloc((void *)vb->topics, ncap * sizeof(*n));
        if (!n)
            return -1;
        vb->topics = n;
        *cap = ncap;
    }
    vb->topics[vb->topic_count] = topic;
    return vb->topic_count++;
}

static void lk_vblock_free(lk_vblock *vb) {
    kn_free((void *)vb->topics);
    kn_free(vb);
}

lk_vblock *lk_vblock_new(kn_records *recs) {
    size_t n = kn_records_count(recs);
    if (n > INT32_MAX)
        return NULL;
    /* Not calloc: every field is written below, and zeroing first would
     * double the memory traffic of the one pass this costs per record. */
    lk_vblock *vb = (lk_vblock *)kn_malloc(sizeof(*vb) + n * sizeof(lk_view_rec));
    if (!vb)
        return NULL;
    vb->topics = NULL;
    vb->topic_count = 0;
    size_t cap = 0;
    const char *last = NULL;
    int tidx = 0;
    for (size_t i = 0; i < n; i++) {
        lk_view_rec *r = &vb->arr[i];
        const char *topic = kn_records_topic(recs, i);
        if (topic != last) {
            tidx = lk_vblock_topic(vb, topic, &cap);
            if (tidx < 0 || tidx > UINT16_MAX) {
                lk_vblock_free(vb);
                return NULL;
            }
            last = topic;
        }
        size_t len;
        r->offset = kn_records_offset(recs, i);
        r->timestamp = kn_records_timestamp(recs, i);
        r->key = (const char *)kn_records_key(recs, i, &len);
        r->key_len = r->key ? (int32_t)len : -1;
        r->value = (const char *)kn_records_value(recs, i, &len);
        r->value_len = r->value ? (int32_t)len : -1;
        r->partition = kn_records_partition(recs, i);
        r->leader_epoch = kn_records_leader_epoch(recs, i);
        r->header_count = (int32_t)kn_records_header_count(recs, i);
        r->topic_idx = (uint16_t)tidx;
        r->timestamp_type = (uint8_t)kn_records_timestamp_type(recs, i);
        r->reserved = 0;
    }
    vb->refs = 1;
    vb->recs = recs;
    vb->n = (int32_t)n;
    return vb;
}

void lk_vblock_release(lk_vblock *vb) {
    if (!vb || --vb->refs > 0)
        return;
    kn_records_free(vb->recs);
    lk_vblock_free(vb);
}

/* FFI: fills v from block and takes one reference. */
static void lk_view_attach(lk_view *v, void *block) {
    lk_vblock *vb = (lk_vblock *)block;
    vb->refs++;
    v->block = vb;
    v->recs = vb->arr;
    v->n = vb->n;
    v->topics = vb->topics;
    v->topic_count = vb->topic_count;
}

/* FFI (view:close() and the collector's finalizer): drops v's reference
 * and zeroes it; idempotent. */
static void lk_view_release(lk_view *v) {
    lk_vblock *vb = (lk_vblock *)v->block;
    v->block = NULL;
    v->recs = NULL;
    v->topics = NULL;
    v->n = 0;
    v->topic_count = 0;
    lk_vblock_release(vb);
}

/* FFI: header h of record i (0-based, checked). Returns 0, or -1 when
 * either is out of range or v is released. */
static int lk_view_header(const lk_view *v, int32_t i, int32_t h, const char **key, int32_t *key_len,
                          const char **value, int32_t *value_len) {
    const lk_vblock *vb = (const lk_vblock *)v->block;
    if (!vb || i < 0 || i >= vb->n || h < 0)
        return -1;
    size_t kl, vl;
    const void *val;
    if (kn_records_header(vb->recs, (size_t)i, (size_t)h, key, &kl, &val, &vl) != KN_OK)
        return -1;
    *key_len = (int32_t)kl;
    *value = (const char *)val;
    *value_len = val ? (int32_t)vl : -1;
    return 0;
}

/* Registry key of the cached constructor (its address is unique). */
static const char lk_view_ctor_key = 0;

static void lk_set_field_int(lua_State *L, const char *k, size_t v) {
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, k);
}

static void *lk_fn_ptr(void (*fn)(void)) {
    void *p;
    memcpy(&p, &fn, sizeof p);
    return p;
}

/* Pushes the constructor, running lk_view.lua the first time. */
static void lk_view_ctor(lua_State *L) {
    lua_pushlightuserdata(L, (void *)&lk_view_ctor_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_isfunction(L, -1))
        return;
    lua_pop(L, 1);
    if (luaL_loadbuffer(L, (const char *)lk_view_lua, sizeof(lk_view_lua), "=kafka_native.view") != LUA_OK)
        lua_error(L);
    /* Function pointers travel as lightuserdata (POSIX: same size). */
    lua_pushlightuserdata(L, lk_fn_ptr((void (*)(void))lk_view_attach));
    lua_pushlightuserdata(L, lk_fn_ptr((void (*)(void))lk_view_release));
    lua_pushlightuserdata(L, lk_fn_ptr((void (*)(void))lk_view_header));
    lua_createtable(L, 0, 5);
    lk_set_field_int(L, "rec_size", sizeof(lk_view_rec));
    lk_set_field_int(L, "value_len", offsetof(lk_view_rec, value_len));
    lk_set_field_int(L, "topic_idx", offsetof(lk_view_rec, topic_idx));
    lk_set_field_int(L, "view_size", sizeof(lk_view));
    lk_set_field_int(L, "view_n", offsetof(lk_view, n));
    lua_call(L, 4, 1); /* raises without ffi: the message names the PUC form */
    lua_pushlightuserdata(L, (void *)&lk_view_ctor_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

void lk_view_push(lua_State *L, lk_vblock *vb) {
    lk_view_ctor(L);
    lua_pushlightuserdata(L, vb);
    lua_call(L, 1, 1);
}

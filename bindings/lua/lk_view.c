/*
 * lk_view.c: the C half of batch:view(), the zero-copy LuaJIT FFI view
 * of a poll's records. Owns the lk_vblock (the poll's kn_records,
 * reference counted; the view reads its knc_rec array in place, see
 * lk_view.h) and the three functions the FFI calls through pointers
 * (attach, release, header); the Lua half is lk_view.lua, embedded as
 * lk_view_lua.h and run once per lua_State.
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
#include <stdint.h>
#include <string.h>

#include "kn_alloc.h"
#include "lk_view.h"
#include "lk_view_lua.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers travel as lightuserdata");

struct lk_vblock {
    int refs;
    kn_records *recs; /* owned */
};

lk_vblock *lk_vblock_new(kn_records *recs) {
    if (kn_records_count(recs) > INT32_MAX)
        return NULL;
    lk_vblock *vb = (lk_vblock *)kn_malloc(sizeof(*vb));
    if (!vb)
        return NULL;
    vb->refs = 1;
    vb->recs = recs;
    return vb;
}

void lk_vblock_release(lk_vblock *vb) {
    if (!vb || --vb->refs > 0)
        return;
    kn_records_free(vb->recs);
    kn_free(vb);
}

/* FFI: fills v from block and takes one reference. */
static void lk_view_attach(lk_view *v, void *block) {
    lk_vblock *vb = (lk_vblock *)block;
    const kn_records *recs = vb->recs;
    vb->refs++;
    v->block = vb;
    v->recs = recs ? recs->recs : NULL;
    v->n = (int32_t)kn_records_count(recs);
    v->topics = recs ? (const char *const *)recs->topics : NULL;
    v->topic_count = recs ? (int32_t)recs->topic_count : 0;
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
    if (!vb || i < 0 || (size_t)i >= kn_records_count(vb->recs) || h < 0)
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
    /* Every field of knc_rec the FFI names, and the struct's size. */
    lua_createtable(L, 0, 16);
    lk_set_field_int(L, "sizeof", sizeof(knc_rec));
    lk_set_field_int(L, "offset", offsetof(knc_rec, offset));
    lk_set_field_int(L, "timestamp", offsetof(knc_rec, timestamp));
    lk_set_field_int(L, "key", offsetof(knc_rec, key));
    lk_set_field_int(L, "value", offsetof(knc_rec, value));
    lk_set_field_int(L, "key_len", offsetof(knc_rec, key_len));
    lk_set_field_int(L, "value_len", offsetof(knc_rec, value_len));
    lk_set_field_int(L, "header_count", offsetof(knc_rec, header_count));
    lk_set_field_int(L, "partition", offsetof(knc_rec, partition));
    lk_set_field_int(L, "leader_epoch", offsetof(knc_rec, leader_epoch));
    lk_set_field_int(L, "topic_idx", offsetof(knc_rec, topic_idx));
    lk_set_field_int(L, "timestamp_type", offsetof(knc_rec, ts_type));
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

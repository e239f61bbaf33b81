/*
 * lk_partitioner.c: the producer's `partitioner` option, a Lua function
 * that chooses the partition of a record sent without one (Java's
 * Partitioner): fn(topic, key, value, partition_count) -> partition,
 * with key and value as they go on the wire (after the serializers;
 * nil for null).
 *
 * The library calls its partitioner hook (kn_producer_hooks) inside
 * kn_producer_send, on the caller's thread, with no library lock held.
 * As for the rebalance listener (lk_group.c), lk_partitioner_enter,
 * called by send just before the C call, records the running lua_State
 * and pushes the protected trampoline and the Lua function with stack
 * room reserved, so the hook itself only copies slots and lua_pcall()s:
 * nothing can raise across the library's C frames. A Lua error (or a
 * result that is not an integer) is kept on send's stack; the hook
 * returns -1, the library refuses the record (no report will follow),
 * and send returns nil, message, "_CALLBACK". An integer out of range is
 * the library's own check: "_INVALID_ARG" naming the value.
 *
 * While the function runs, the producer's methods raise (the library
 * forbids send / poll / flush / close from inside its hooks), so a
 * closure that captured its producer cannot re-enter it.
 */
#include "lk.h"

/* Slots send keeps for the hook: trampoline, function, argument copies,
 * the kept error, and slack. */
#define LK_PARTITIONER_STACK 8

/* Protected: (pt lightuserdata, fn) -> stores fn's answer in pt->result. */
static int lk_partitioner_run(lua_State *L) {
    lk_partitioner *pt = (lk_partitioner *)lua_touserdata(L, 1);
    lua_settop(L, 2);
    lua_pushstring(L, pt->topic);
    if (pt->key)
        lua_pushlstring(L, (const char *)pt->key, pt->key_len);
    else
        lua_pushnil(L);
    if (pt->value)
        lua_pushlstring(L, (const char *)pt->value, pt->value_len);
    else
        lua_pushnil(L);
    lua_pushinteger(L, pt->count);
    if (lk_pcall(L, 4, 1) != LUA_OK)
        return lua_error(L); /* the message with its traceback */
    lua_Integer part;
    if (!lk_get_integer(L, -1, &part))
        return luaL_error(L, "partitioner returned a %s, not a partition number", luaL_typename(L, -1));
    /* Out of int32 range: -1 makes the library name the bad value. */
    pt->result = (part < 0 || part > 0x7fffffff) ? -1 : (int32_t)part;
    return 0;
}

int32_t lk_partitioner_cb(const char *topic, const void *key, size_t key_len, const void *value,
                          size_t value_len, int32_t partition_count, void *opaque) {
    lk_partitioner *pt = (lk_partitioner *)opaque;
    lua_State *L = pt->L;
    if (L == NULL)
        return -1; /* not inside send: cannot happen, refuse the record */
    pt->topic = topic;
    pt->key = key;
    pt->key_len = key_len;
    pt->value = value;
    pt->value_len = value_len;
    pt->count = partition_count;
    pt->result = -1;
    /* Only slot copies (room reserved by lk_partitioner_enter): no raise. */
    lua_pushvalue(L, pt->fn_idx);
    lua_pushlightuserdata(L, pt);
    lua_pushvalue(L, pt->fn_idx + 1);
    pt->running = 1;
    int status = lua_pcall(L, 2, 0, 0);
    pt->running = 0;
    if (status == LUA_OK)
        return pt->result;
    if (pt->err_idx == 0)
        pt->err_idx = lua_gettop(L); /* kept for lk_partitioner_leave */
    else
        lua_pop(L, 1);
    return -1;
}

void lk_partitioner_enter(lua_State *L, lk_partitioner *pt, int uv) {
    luaL_checkstack(L, LK_PARTITIONER_STACK, "partitioner");
    lua_pushcfunction(L, lk_partitioner_run);
    pt->fn_idx = lua_gettop(L);
    lua_getfield(L, uv, "partitioner");
    pt->err_idx = 0;
    pt->L = L;
}

int lk_partitioner_leave(lua_State *L, lk_partitioner *pt) {
    int err_idx = pt->err_idx;
    int base = pt->fn_idx;
    pt->L = NULL;
    pt->err_idx = 0;
    if (err_idx) {
        lua_pushvalue(L, err_idx);
        lua_replace(L, base); /* the message takes the trampoline's slot */
        lua_settop(L, base);
        return base;
    }
    lua_settop(L, base - 1);
    return 0;
}

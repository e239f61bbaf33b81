/*
 * lk_callback.c: the one way the module calls Lua code (lk_pcall, a
 * lua_pcall with a traceback handler), and the C-memory guard the
 * producer and consumer use while they build Lua values.
 *
 * Why one trampoline: a Lua error inside a callback (delivery report,
 * deserializer, interceptor, commit callback) must never longjmp across
 * the C frames of the call that ran it; it becomes the message of a
 * nil, message, "_CALLBACK" return instead, with the client still usable.
 *
 * Why a guard: C memory held while Lua values are built (a kn_records, a
 * kn_topic_partition_list) is anchored in a userdata whose __gc frees it,
 * so a Lua allocation error raised midway cannot leak it. (lk_admin.c has
 * its own private copy of the same idea.)
 */
#include <string.h>

#include "lk.h"

#define LK_CGUARD_MT "kafka_native.cguard"

/* Message handler: appends a traceback to string errors. */
static int lk_traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        /* A non-string error object: say what it was. */
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
#if LUA_VERSION_NUM >= 502 || defined(LUA_LJDIR)
    luaL_traceback(L, L, msg, 1);
#else
    lua_getglobal(L, "debug");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "traceback");
        if (lua_isfunction(L, -1)) {
            lua_pushstring(L, msg);
            lua_pushinteger(L, 2);
            lua_call(L, 2, 1);
            return 1;
        }
    }
    lua_pushstring(L, msg);
#endif
    return 1;
}

int lk_pcall(lua_State *L, int nargs, int nresults) {
    int base = lua_gettop(L) - nargs; /* the function's slot */
    lua_pushcfunction(L, lk_traceback);
    lua_insert(L, base);
    int status = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return status;
}

static int lk_cguard_gc(lua_State *L) {
    lk_cguard *g = (lk_cguard *)luaL_checkudata(L, 1, LK_CGUARD_MT);
    lk_cguard_release(g);
    return 0;
}

lk_cguard *lk_cguard_push(lua_State *L, void (*destroy)(void *ptr)) {
    lk_cguard *g = (lk_cguard *)lua_newuserdata(L, sizeof(*g));
    memset(g, 0, sizeof(*g));
    g->destroy = destroy;
    luaL_getmetatable(L, LK_CGUARD_MT);
    lua_setmetatable(L, -2);
    return g;
}

void lk_cguard_release(lk_cguard *g) {
    if (g->ptr) {
        void *p = g->ptr;
        g->ptr = NULL;
        g->destroy(p);
    }
}

void lk_callback_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_CGUARD_MT)) {
        lua_pushcfunction(L, lk_cguard_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
}

/*
 * compat.h: the Lua C API differences between 5.1/LuaJIT, 5.3 and 5.4,
 * smoothed over in one place so every lk_*.c file is written once against
 * the 5.3/5.4 API.
 *
 * Back-ported to 5.1/LuaJIT: luaL_setfuncs, lua_rawlen, luaL_testudata
 * (LuaJIT 2.1 has these three), luaL_newlib, lua_setuservalue /
 * lua_getuservalue (function environments on 5.1), lua_isinteger
 * (a number with an integral value). lk_newuserdata hides 5.4's extra
 * user-value argument. Nothing here allocates or keeps state.
 */
#ifndef LK_COMPAT_H
#define LK_COMPAT_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#if LUA_VERSION_NUM < 502

#ifndef LUA_OK
#define LUA_OK 0
#endif

#define lua_rawlen(L, i) lua_objlen((L), (i))

/* LuaJIT's luaconf.h defines LUA_LJDIR; luajit.h is not always on the
 * include path, so LUAJIT_VERSION cannot be relied on. */
#if !defined(LUA_LJDIR)
/* LuaJIT 2.1 ships luaL_setfuncs, luaL_newlib and luaL_testudata; PUC
 * 5.1 has none of them. */
#define luaL_newlibtable(L, l) lua_createtable((L), 0, (int)(sizeof(l) / sizeof((l)[0]) - 1))
#define luaL_newlib(L, l)      (luaL_newlibtable((L), (l)), luaL_setfuncs((L), (l), 0))

/* Registers l into the table on top of the stack below nup upvalues. */
static inline void lk_compat_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
    luaL_checkstack(L, nup + 1, "too many upvalues");
    for (; l->name != NULL; l++) {
        for (int i = 0; i < nup; i++)
            lua_pushvalue(L, -nup);
        lua_pushcclosure(L, l->func, nup);
        lua_setfield(L, -(nup + 2), l->name);
    }
    lua_pop(L, nup);
}
#define luaL_setfuncs(L, l, nup) lk_compat_setfuncs((L), (l), (nup))

static inline void *luaL_testudata(lua_State *L, int ud, const char *tname) {
    void *p = lua_touserdata(L, ud);
    if (p == NULL || !lua_getmetatable(L, ud))
        return NULL;
    luaL_getmetatable(L, tname);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? p : NULL;
}
#endif

/* 5.1 userdata have an environment table instead of a user value. */
static inline void lk_compat_setuservalue(lua_State *L, int idx) { lua_setfenv(L, idx); }
static inline void lk_compat_getuservalue(lua_State *L, int idx) { lua_getfenv(L, idx); }
#define lua_setuservalue(L, idx) lk_compat_setuservalue((L), (idx))
#define lua_getuservalue(L, idx) lk_compat_getuservalue((L), (idx))

static inline int lk_compat_isinteger(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TNUMBER)
        return 0;
    lua_Number n = lua_tonumber(L, idx);
    return n == (lua_Number)(long long)n;
}
#define lua_isinteger(L, idx) lk_compat_isinteger((L), (idx))

#endif /* LUA_VERSION_NUM < 502 */

/* A full userdata of size bytes (zeroed by the caller), one user value. */
static inline void *lk_newuserdata(lua_State *L, size_t size) {
#if LUA_VERSION_NUM >= 504
    return lua_newuserdatauv(L, size, 1);
#else
    return lua_newuserdata(L, size);
#endif
}

#endif

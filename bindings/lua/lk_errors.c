/*
 * lk_errors.c: the module's error conventions: runtime failures come
 * back as nil, message, code-name; arguments and option tables are read
 * with checks that raise on wrong types (those are programming errors).
 */
#include <stdio.h>
#include <unistd.h>

#include "lk.h"

int lk_push_error(lua_State *L, int code, const char *message) {
    lua_pushnil(L);
    lua_pushstring(L, (message && *message) ? message : kn_err_message(code));
    lua_pushstring(L, kn_err_name(code));
    return 3;
}

void lk_check_opt_table(lua_State *L, int idx) {
    if (!lua_isnoneornil(L, idx))
        luaL_checktype(L, idx, LUA_TTABLE);
}

int lk_get_integer(lua_State *L, int idx, lua_Integer *out) {
    if (lua_isinteger(L, idx)) {
        *out = lua_tointeger(L, idx);
        return 1;
    }
    if (lua_type(L, idx) != LUA_TNUMBER)
        return 0;
    /* 5.3+: 3.0 is a float; accept any integral value in range. */
    lua_Number n = lua_tonumber(L, idx);
    if (!(n >= -9007199254740992.0 && n <= 9007199254740992.0) || n != (lua_Number)(long long)n)
        return 0;
    *out = (lua_Integer)n;
    return 1;
}

lua_Integer lk_opt_int_field(lua_State *L, int idx, const char *key, lua_Integer def) {
    if (lua_isnoneornil(L, idx))
        return def;
    lua_getfield(L, idx, key);
    lua_Integer v = def;
    if (!lua_isnil(L, -1)) {
        if (!lk_get_integer(L, -1, &v)) {
            char msg[128];
            snprintf(msg, sizeof(msg), "option '%s' must be an integer", key);
            return luaL_argerror(L, idx, msg);
        }
    }
    lua_pop(L, 1);
    return v;
}

int lk_opt_bool_field(lua_State *L, int idx, const char *key, int def) {
    if (lua_isnoneornil(L, idx))
        return def;
    lua_getfield(L, idx, key);
    int v = def;
    if (!lua_isnil(L, -1)) {
        if (!lua_isboolean(L, -1)) {
            char msg[128];
            snprintf(msg, sizeof(msg), "option '%s' must be a boolean", key);
            return luaL_argerror(L, idx, msg);
        }
        v = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

int lk_timeout_arg(lua_State *L, int idx, int def) {
    lua_Integer t = def;
    if (!lua_isnoneornil(L, idx) && !lk_get_integer(L, idx, &t))
        return luaL_argerror(L, idx, "timeout_ms (integer) expected");
    /* Clamp to what the C API takes: -1 (wait forever) .. INT32_MAX. */
    if (t > 0x7fffffff)
        t = 0x7fffffff;
    if (t < -1)
        t = -1;
    return (int)t;
}

void lk_forked_collected(const char *what) {
    fprintf(stderr,
            "kafka_native: a %s created before a fork (in another process than %ld) was collected "
            "here: left alone, not flushed or closed (create clients after the fork)\n",
            what, (long)getpid());
}

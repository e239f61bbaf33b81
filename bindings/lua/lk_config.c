/*
 * lk_config.c: a client configuration from Lua. Either a table of Kafka
 * property names (values converted to the string Kafka would read) or
 * the path of a Java .properties file. Validation is the C config
 * module's (kn_conf_set): this file only converts Lua values, so the
 * Lua and C surfaces accept exactly the same settings.
 */
#include <stdio.h>
#include <string.h>

#include "lk.h"

int lk_conf_value(lua_State *L, char *buf, size_t size) {
    lua_Integer i;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (len >= size || strlen(s) != len)
            return 0;
        memcpy(buf, s, len + 1);
        return 1;
    }
    case LUA_TBOOLEAN:
        snprintf(buf, size, "%s", lua_toboolean(L, -1) ? "true" : "false");
        return 1;
    case LUA_TNUMBER:
        /* Integral numbers print without a fraction ("5000", not
         * "5000.0"): Kafka's int and long parsers reject "5000.0". */
        if (lk_get_integer(L, -1, &i))
            snprintf(buf, size, "%lld", (long long)i);
        else
            snprintf(buf, size, "%.17g", (double)lua_tonumber(L, -1));
        return 1;
    case LUA_TTABLE: {
        /* A list: Kafka's LIST type is comma separated. */
        size_t n = lua_rawlen(L, -1), off = 0;
        buf[0] = '\0';
        for (size_t k = 1; k <= n; k++) {
            lua_rawgeti(L, -1, (int)k);
            char item[1024];
            int ok = lua_type(L, -1) != LUA_TTABLE && lk_conf_value(L, item, sizeof(item));
            lua_pop(L, 1);
            if (!ok)
                return 0;
            size_t len = strlen(item);
            if (off + len + 2 > size)
                return 0;
            if (k > 1)
                buf[off++] = ',';
            memcpy(buf + off, item, len + 1);
            off += len;
        }
        return 1;
    }
    default:
        return 0;
    }
}

kn_conf *lk_conf_from_arg(lua_State *L, int idx, int kind, char *errstr, size_t errstr_size, int *errp) {
    int t = lua_type(L, idx);
    if (t != LUA_TTABLE && t != LUA_TSTRING)
        luaL_argerror(L, idx, "config table or .properties path expected");

    /* Check every key and value before allocating anything, so a raise
     * cannot leak the conf. Values are converted again below. */
    char value[8192];
    if (t == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, idx) != 0) {
            if (lua_type(L, -2) != LUA_TSTRING)
                luaL_argerror(L, idx, "config keys must be strings");
            if (!lk_conf_value(L, value, sizeof(value))) {
                lua_pushfstring(L,
                                "config value for '%s' must be a string, number, boolean "
                                "or list of those",
                                lua_tostring(L, -2));
                luaL_argerror(L, idx, lua_tostring(L, -1));
            }
            lua_pop(L, 1);
        }
    }

    kn_conf *conf = kn_conf_new((kn_client_type)kind);
    if (!conf) {
        *errp = KN_ERR__NOMEM;
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    int err = KN_OK;
    if (t == LUA_TSTRING) {
        err = kn_conf_load_properties(conf, lua_tostring(L, idx), errstr, errstr_size);
    } else {
        lua_pushnil(L);
        while (lua_next(L, idx) != 0) {
            lk_conf_value(L, value, sizeof(value));
            /* lua_tostring on a string key does not change the key. */
            err = kn_conf_set(conf, lua_tostring(L, -2), value, errstr, errstr_size);
            lua_pop(L, 1);
            if (err) {
                lua_pop(L, 1);
                break;
            }
        }
    }
    if (err) {
        kn_conf_destroy(conf);
        *errp = err;
        return NULL;
    }
    return conf;
}

/*
 * lk_admin_scram.c: admin:describe_user_scram_credentials and
 * admin:alter_user_scram_credentials.
 *
 * Mechanisms are "SCRAM-SHA-256" / "SCRAM-SHA-512". describe({users} or
 * nil) -> { [user] = { credentials = { { mechanism =, iterations = },
 * ... } } or { error =, code =, message = } }; alter({ { user =,
 * mechanism =, password =, iterations =, salt = }, -- upsert
 * { user =, mechanism =, delete = true } }) -> { [user] = {} or
 * { error = ... } }. Passwords are salted in C and never kept.
 */
#include <stdbool.h>
#include <string.h>

#include "lk_admin.h"

static void lk_free_scram(void *p) { kn_scram_credentials_destroy((kn_scram_credentials *)p); }

static int lk_mechanism(const char *s) {
    if (s && strcmp(s, "SCRAM-SHA-256") == 0)
        return KN_SCRAM_SHA_256;
    if (s && strcmp(s, "SCRAM-SHA-512") == 0)
        return KN_SCRAM_SHA_512;
    return 0;
}

static void lk_push_scram(lua_State *L, const kn_scram_credentials *c, int with_credentials) {
    lua_newtable(L);
    for (size_t i = 0; i < kn_scram_credentials_count(c); i++) {
        lua_createtable(L, 0, 3);
        int err = kn_scram_credentials_error(c, i);
        if (err) {
            lk_set_error(L, err, kn_scram_credentials_error_message(c, i));
        } else if (with_credentials) {
            size_t n = kn_scram_credentials_mechanism_count(c, i);
            lua_createtable(L, (int)n, 0);
            for (size_t k = 0; k < n; k++) {
                lua_createtable(L, 0, 2);
                int m = kn_scram_credentials_mechanism(c, i, k);
                lk_set_str(L, "mechanism",
                           m == KN_SCRAM_SHA_256   ? "SCRAM-SHA-256"
                           : m == KN_SCRAM_SHA_512 ? "SCRAM-SHA-512"
                                                   : "UNKNOWN");
                lk_set_int(L, "iterations", kn_scram_credentials_iterations(c, i, k));
                lua_rawseti(L, -2, (int)(k + 1));
            }
            lua_setfield(L, -2, "credentials");
        }
        lua_setfield(L, -2, kn_scram_credentials_user(c, i));
    }
}

static int lk_admin_describe_user_scram_credentials(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n = 0;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        n = lua_rawlen(L, 2);
    }
    const char **users = (const char **)lua_newuserdata(L, (n ? n : 1) * sizeof(*users));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 2, "array of user names expected");
        users[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    lk_guard *g = lk_guard_push(L, lk_free_scram, 0);
    char errstr[512] = "";
    kn_scram_credentials *c = NULL;
    int err = kn_admin_describe_user_scram_credentials(la->admin, n ? users : NULL, n, timeout_ms, &c, errstr,
                                                       sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = c;
    lk_push_scram(L, c, 1);
    lk_guard_release(g);
    return 1;
}

static int lk_admin_alter_user_scram_credentials(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n = lua_rawlen(L, 2);
    kn_scram_op *ops = (kn_scram_op *)lua_newuserdata(L, (n ? n : 1) * sizeof(*ops));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        if (!lua_istable(L, -1))
            return luaL_argerror(L, 2, "array of { user =, mechanism =, password =, iterations = } expected");
        int t = lua_gettop(L);
        lua_getfield(L, t, "user");
        lua_getfield(L, t, "mechanism");
        lua_getfield(L, t, "password");
        lua_getfield(L, t, "iterations");
        lua_getfield(L, t, "salt");
        lua_getfield(L, t, "delete");
        kn_scram_op *op = &ops[i];
        memset(op, 0, sizeof(*op));
        lua_Integer it = 4096;
        op->user = lua_type(L, t + 1) == LUA_TSTRING ? lua_tostring(L, t + 1) : NULL;
        op->mechanism = lk_mechanism(lua_type(L, t + 2) == LUA_TSTRING ? lua_tostring(L, t + 2) : NULL);
        bool del = lua_toboolean(L, t + 6);
        if (!op->user || !op->mechanism)
            return luaL_argerror(L, 2,
                                 "each change needs 'user' and 'mechanism' (SCRAM-SHA-256 or SCRAM-SHA-512)");
        if (!del &&
            (lua_type(L, t + 3) != LUA_TSTRING ||
             (!lua_isnil(L, t + 4) && (!lk_get_integer(L, t + 4, &it) || it <= 0 || it > 0x7fffffff)) ||
             (!lua_isnil(L, t + 5) && lua_type(L, t + 5) != LUA_TSTRING)))
            return luaL_argerror(L, 2,
                                 "an upsert needs 'password' (string), optional 'iterations' (> 0), 'salt'");
        if (!del) {
            size_t salt_len = 0;
            op->password = lua_tostring(L, t + 3); /* values of the argument: alive */
            op->iterations = (int32_t)it;
            op->salt = (const uint8_t *)lua_tolstring(L, t + 5, &salt_len);
            op->salt_len = salt_len;
        }
        lua_settop(L, t - 1);
    }
    lk_guard *g = lk_guard_push(L, lk_free_scram, 0);
    char errstr[512] = "";
    kn_scram_credentials *c = NULL;
    int err =
        kn_admin_alter_user_scram_credentials(la->admin, ops, n, timeout_ms, &c, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = c;
    lk_push_scram(L, c, 0);
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_scram_methods[] = {
    {"describe_user_scram_credentials", lk_admin_describe_user_scram_credentials},
    {"alter_user_scram_credentials", lk_admin_alter_user_scram_credentials},
    {NULL, NULL},
};

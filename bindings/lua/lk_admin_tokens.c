/*
 * lk_admin_tokens.c: admin:create_delegation_token,
 * admin:describe_delegation_tokens, admin:renew_delegation_token and
 * admin:expire_delegation_token.
 *
 * A token is { token_id =, hmac = (the raw bytes), hmac_base64 = (the
 * SCRAM password), owner =, requester =, issue_ms =, expiry_ms =,
 * max_ms =, renewers = { "User:x", ... } }.
 *   create_delegation_token([{ renewers =, owner =, max_lifetime_ms =,
 *     timeout_ms = }]) -> token;
 *   describe_delegation_tokens([owners [, options]]) -> { token, ... };
 *   renew_delegation_token(hmac, period_ms [, options]),
 *   expire_delegation_token(hmac, period_ms [, options]) -> the new
 *     expiry timestamp.
 * Broker errors are nil, message, code.
 */
#include "lk_admin.h"

static void lk_free_tokens(void *p) { kn_delegation_tokens_destroy((kn_delegation_tokens *)p); }

static void lk_push_token(lua_State *L, const kn_delegation_tokens *t, size_t i) {
    lua_createtable(L, 0, 9);
    lk_set_str(L, "token_id", kn_delegation_tokens_id(t, i));
    size_t len = 0;
    const uint8_t *h = kn_delegation_tokens_hmac(t, i, &len);
    lua_pushlstring(L, (const char *)h, len);
    lua_setfield(L, -2, "hmac");
    lk_set_str(L, "hmac_base64", kn_delegation_tokens_hmac_base64(t, i));
    lk_set_str(L, "owner", kn_delegation_tokens_owner(t, i));
    lk_set_str(L, "requester", kn_delegation_tokens_requester(t, i));
    lk_set_int(L, "issue_ms", kn_delegation_tokens_issue_ms(t, i));
    lk_set_int(L, "expiry_ms", kn_delegation_tokens_expiry_ms(t, i));
    lk_set_int(L, "max_ms", kn_delegation_tokens_max_ms(t, i));
    size_t n = kn_delegation_tokens_renewer_count(t, i);
    lua_createtable(L, (int)n, 0);
    for (size_t r = 0; r < n; r++) {
        lua_pushstring(L, kn_delegation_tokens_renewer(t, i, r));
        lua_rawseti(L, -2, (int)(r + 1));
    }
    lua_setfield(L, -2, "renewers");
}

static int lk_admin_create_delegation_token(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    size_t n = 0;
    const char **renewers = NULL, *owner = NULL;
    lua_Integer max_lifetime = -1;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        int top = lua_gettop(L);
        lua_getfield(L, 2, "renewers");
        if (!lua_isnil(L, top + 1)) {
            n = lk_check_strings(L, top + 1, "renewers: array of principals (\"User:name\") expected");
            renewers = lk_strings(L, top + 1, n);
        }
        lua_getfield(L, 2, "owner");
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 2, "owner must be a principal string (\"User:name\")");
        owner = lua_tostring(L, -1); /* a value of the argument: alive */
        lua_getfield(L, 2, "max_lifetime_ms");
        if (!lua_isnil(L, -1) && (!lk_get_integer(L, -1, &max_lifetime) || max_lifetime <= 0))
            return luaL_argerror(L, 2, "max_lifetime_ms must be a positive integer");
    }
    lk_guard *g = lk_guard_push(L, lk_free_tokens, 0);
    char errstr[512] = "";
    kn_delegation_tokens *t = NULL;
    int err = kn_admin_create_delegation_token(la->admin, renewers, n, owner, (int64_t)max_lifetime,
                                               timeout_ms, &t, errstr, sizeof(errstr));
    if (err == KN_ERR__INVALID_ARG)
        return luaL_argerror(L, 2, errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = t;
    lk_push_token(L, t, 0);
    lk_guard_release(g);
    return 1;
}

static int lk_admin_describe_delegation_tokens(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n = 0;
    const char **owners = NULL;
    if (!lua_isnoneornil(L, 2)) {
        n = lk_check_strings(L, 2, "array of owner principals (\"User:name\") expected");
        owners = lk_strings(L, 2, n);
    }
    lk_guard *g = lk_guard_push(L, lk_free_tokens, 0);
    char errstr[512] = "";
    kn_delegation_tokens *t = NULL;
    int err =
        kn_admin_describe_delegation_tokens(la->admin, owners, n, timeout_ms, &t, errstr, sizeof(errstr));
    if (err == KN_ERR__INVALID_ARG)
        return luaL_argerror(L, 2, errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = t;
    lua_createtable(L, (int)kn_delegation_tokens_count(t), 0);
    for (size_t i = 0; i < kn_delegation_tokens_count(t); i++) {
        lk_push_token(L, t, i);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

static int lk_token_period(lua_State *L, bool renew) {
    lk_admin *la = lk_admin_check(L);
    size_t len = 0;
    const char *hmac = luaL_checklstring(L, 2, &len);
    lua_Integer period;
    if (!lk_get_integer(L, 3, &period))
        return luaL_argerror(L, 3, "period_ms (integer) expected");
    int timeout_ms = lk_timeout_opt(L, 4);
    char errstr[512] = "";
    int64_t expiry = -1;
    int err = renew ? kn_admin_renew_delegation_token(la->admin, (const uint8_t *)hmac, len, (int64_t)period,
                                                      timeout_ms, &expiry, errstr, sizeof(errstr))
                    : kn_admin_expire_delegation_token(la->admin, (const uint8_t *)hmac, len, (int64_t)period,
                                                       timeout_ms, &expiry, errstr, sizeof(errstr));
    if (err == KN_ERR__INVALID_ARG)
        return luaL_argerror(L, 2, errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushinteger(L, (lua_Integer)expiry);
    return 1;
}

static int lk_admin_renew_delegation_token(lua_State *L) { return lk_token_period(L, true); }
static int lk_admin_expire_delegation_token(lua_State *L) { return lk_token_period(L, false); }

const luaL_Reg lk_admin_token_methods[] = {
    {"create_delegation_token", lk_admin_create_delegation_token},
    {"describe_delegation_tokens", lk_admin_describe_delegation_tokens},
    {"renew_delegation_token", lk_admin_renew_delegation_token},
    {"expire_delegation_token", lk_admin_expire_delegation_token},
    {NULL, NULL},
};

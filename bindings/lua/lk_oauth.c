/*
 * lk_oauth.c: the `oauthbearer_token` option of kafka_native.producer,
 * consumer and admin: a Lua function that supplies SASL OAUTHBEARER
 * tokens, `function() return token, lifetime_ms, principal, extensions
 * end` (lifetime_ms: expiry in ms since the epoch, as Java's
 * OAuthBearerToken; extensions: a table of string keys and values).
 *
 * The library calls its token callback (kn_conf_set_oauthbearer_token_cb)
 * on the application's thread only, inside the client's blocking calls
 * (send, poll, flush, commit, the admin calls), never on the network
 * thread. Those calls are made from Lua, so the Lua state is idle in C
 * at that moment; the function runs on a Lua thread of its own, made
 * when the client is built and anchored in the client's uservalue, via
 * the module's pcall trampoline (lk_pcall): a Lua error or a garbage
 * return never unwinds through the library's frames; it becomes the
 * callback's error, and the client fails with "_AUTHENTICATION" naming
 * `oauthbearer_token` and the reason.
 *
 * Owns: lk_oauth, a userdata in the uservalue, whose fixed buffers hold
 * what the callback hands over until the library has copied it (right
 * after the callback returns); the token buffer is cleared on the next
 * call.
 */
#include <stdio.h>
#include <string.h>

#include "lk.h"

#define LK_OAUTH_TOKEN_MAX 16384
#define LK_OAUTH_EXT_MAX   32
#define LK_OAUTH_EXT_BYTES 8192

typedef struct lk_oauth {
    lua_State *T; /* the function's own thread; the function at its index 1 */
    char token[LK_OAUTH_TOKEN_MAX + 1];
    char principal[256];
    char ext_bytes[LK_OAUTH_EXT_BYTES];
    const char *ext[2 * LK_OAUTH_EXT_MAX];
} lk_oauth;

/* Copies the string at idx of T into buf; 0, or -1 if it does not fit. */
static int lk_oauth_copy(lua_State *T, int idx, char *buf, size_t size) {
    size_t len;
    const char *s = lua_tolstring(T, idx, &len);
    if (len + 1 > size || memchr(s, 0, len))
        return -1;
    memcpy(buf, s, len + 1);
    return 0;
}

static int lk_oauth_cb(kn_oauthbearer_token *out, char *errstr, size_t n, void *opaque) {
    lk_oauth *o = (lk_oauth *)opaque;
    lua_State *T = o->T;
    memset(o->token, 0, sizeof o->token);
    lua_settop(T, 1);
    lua_pushvalue(T, 1);
    if (lk_pcall(T, 0, 4) != LUA_OK) {
        snprintf(errstr, n, "oauthbearer_token raised: %s", lua_tostring(T, -1) ? lua_tostring(T, -1) : "?");
        lua_settop(T, 1);
        return -1;
    }
    int rc = -1;
    lua_Integer lifetime = 0;
    if (lua_type(T, 2) != LUA_TSTRING) {
        snprintf(errstr, n, "oauthbearer_token returned a %s, not a token string", luaL_typename(T, 2));
    } else if (lk_oauth_copy(T, 2, o->token, sizeof o->token)) {
        snprintf(errstr, n, "oauthbearer_token returned a token over %d bytes or with a NUL byte", LK_OAUTH_TOKEN_MAX);
    } else if (lua_type(T, 3) != LUA_TNUMBER || !lk_get_integer(T, 3, &lifetime)) {
        snprintf(errstr, n, "oauthbearer_token returned a %s as lifetime_ms, not an integer (ms since the epoch)",
                 luaL_typename(T, 3));
    } else if (!lua_isnil(T, 4) &&
               (lua_type(T, 4) != LUA_TSTRING || lk_oauth_copy(T, 4, o->principal, sizeof o->principal))) {
        snprintf(errstr, n, "oauthbearer_token returned a %s as principal, not a string (under 256 bytes)",
                 luaL_typename(T, 4));
    } else if (!lua_isnil(T, 5) && !lua_istable(T, 5)) {
        snprintf(errstr, n, "oauthbearer_token returned a %s as extensions, not a table", luaL_typename(T, 5));
    } else {
        rc = 0;
        size_t pairs = 0, used = 0;
        if (lua_istable(T, 5)) {
            lua_pushnil(T);
            while (rc == 0 && lua_next(T, 5)) {
                size_t kl, vl;
                if (lua_type(T, -2) != LUA_TSTRING || lua_type(T, -1) != LUA_TSTRING) {
                    snprintf(errstr, n, "oauthbearer_token returned an extension that is not a string key and "
                                        "string value");
                    rc = -1;
                    break;
                }
                const char *k = lua_tolstring(T, -2, &kl), *v = lua_tolstring(T, -1, &vl);
                if (pairs == LK_OAUTH_EXT_MAX || used + kl + vl + 2 > sizeof o->ext_bytes) {
                    snprintf(errstr, n, "oauthbearer_token returned more than %d extensions or %d bytes of them",
                             LK_OAUTH_EXT_MAX, LK_OAUTH_EXT_BYTES);
                    rc = -1;
                    break;
                }
                memcpy(o->ext_bytes + used, k, kl + 1);
                o->ext[2 * pairs] = o->ext_bytes + used;
                used += kl + 1;
                memcpy(o->ext_bytes + used, v, vl + 1);
                o->ext[2 * pairs + 1] = o->ext_bytes + used;
                used += vl + 1;
                pairs++;
                lua_pop(T, 1);
            }
        }
        if (rc == 0) {
            out->token = o->token;
            out->lifetime_ms = (int64_t)lifetime;
            out->principal = lua_isnil(T, 4) ? NULL : o->principal;
            out->extensions = pairs ? o->ext : NULL;
            out->extension_count = pairs;
        }
    }
    lua_settop(T, 1);
    return rc;
}

void lk_oauth_check_opts(lua_State *L, int opts) {
    if (lua_isnoneornil(L, opts))
        return;
    lua_getfield(L, opts, "oauthbearer_token");
    if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
        luaL_argerror(L, opts, "option 'oauthbearer_token' must be a function");
    lua_pop(L, 1);
}

int lk_oauth_setup(lua_State *L, int opts, int uv, kn_conf *conf) {
    if (lua_isnoneornil(L, opts))
        return KN_OK;
    lua_getfield(L, opts, "oauthbearer_token");
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return KN_OK;
    }
    lk_oauth *o = (lk_oauth *)lk_newuserdata(L, sizeof(*o));
    memset(o, 0, sizeof(*o));
    lua_setfield(L, uv, "oauthbearer_token_state");
    o->T = lua_newthread(L);
    lua_setfield(L, uv, "oauthbearer_token_thread");
    lua_xmove(L, o->T, 1); /* the function, at T's index 1 */
    return kn_conf_set_oauthbearer_token_cb(conf, lk_oauth_cb, o);
}

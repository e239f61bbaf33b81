/*
 * lk_confdump.c: kafka_native.config(kind, config), the effective
 * configuration a client of that kind would be built with: every key of
 * the kind with its value after the library's validation and cross-key
 * rules (kn_conf_finalize: Java's idempotence / acks adjustments, ...),
 * from kn_conf_dump. A debugging aid: what did my table turn into, what
 * are the defaults.
 */
#include <string.h>

#include "lk.h"

static void lk_confdump_free(void *p) { kn_conf_destroy((kn_conf *)p); }

/* kn_conf_dump's callback: sets t[key] = {value =, default = bool} on
 * the table on top (opaque: the lua_State). It raises only on out of
 * memory; kn_conf_dump holds no memory or lock while it iterates, and
 * the conf is guarded, so that raise leaks nothing. */
static void lk_confdump_entry(const char *key, const char *value, int is_default, void *opaque) {
    lua_State *L = (lua_State *)opaque;
    lua_createtable(L, 0, 2);
    if (value) {
        lua_pushstring(L, value);
        lua_setfield(L, -2, "value");
    }
    lua_pushboolean(L, is_default);
    lua_setfield(L, -2, "default");
    lua_setfield(L, -2, key);
}

/* kafka_native.config(kind, config) -> { [key] = { value = "...",
 * default = bool }, ... } (value nil for a null value, passwords
 * "[hidden]"), or nil, message, "_CONFIG". kind: "producer", "consumer"
 * or "admin"; config as the constructors take it. */
int lk_config_dump(lua_State *L) {
    static const char *const kinds[] = {"producer", "consumer", "admin", NULL};
    static const int types[] = {KN_CLIENT_PRODUCER, KN_CLIENT_CONSUMER, KN_CLIENT_ADMIN};
    int k = luaL_checkoption(L, 1, NULL, kinds);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    char errstr[512] = "";
    int err = KN_OK;
    lk_cguard *g = lk_cguard_push(L, lk_confdump_free); /* 3 */
    kn_conf *conf = lk_conf_from_arg(L, 2, types[k], errstr, sizeof errstr, &err);
    if (!conf)
        return lk_push_error(L, err, errstr);
    g->ptr = conf;
    err = kn_conf_finalize(conf, errstr, sizeof errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    lua_newtable(L);
    kn_conf_dump(conf, lk_confdump_entry, L);
    lk_cguard_release(g);
    return 1;
}

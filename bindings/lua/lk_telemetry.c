/*
 * lk_telemetry.c: client telemetry (KIP-714) in Lua: the application
 * metric userdata (kafka.app_metric{...}, KIP-1076) and the shared
 * bodies of the clients' client_instance_id,
 * register_metric_for_subscription and unregister_metric_from_subscription
 * methods (each client file binds them to its handle).
 *
 * A kn_app_metric is reference counted in C: the userdata holds the
 * application's reference (dropped by __gc) and each client it is
 * registered with holds one, so a collected metric userdata never
 * leaves a client with a dangling pointer.
 */
#include <string.h>

#include "kafka_native.h"
#include "lk.h"

#define LK_APP_METRIC_MT "kafka_native.app_metric"

typedef struct lk_app_metric {
    kn_app_metric *m; /* NULL once collected */
} lk_app_metric;

static lk_app_metric *lk_app_metric_check(lua_State *L, int idx) {
    return (lk_app_metric *)luaL_checkudata(L, idx, LK_APP_METRIC_MT);
}

/* kafka.app_metric{group=, name=, description=, kind="gauge"|"sum", tags={k=v}} */
static int lk_app_metric_new(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "group");
    const char *group = luaL_optstring(L, -1, NULL);
    lua_getfield(L, 1, "name");
    const char *name = luaL_optstring(L, -1, NULL);
    lua_getfield(L, 1, "description");
    const char *description = luaL_optstring(L, -1, NULL);
    lua_getfield(L, 1, "kind");
    const char *kind = luaL_optstring(L, -1, "gauge");
    if (!group || !*group)
        return luaL_argerror(L, 1, "group (a non-empty string) is required");
    if (!name || !*name)
        return luaL_argerror(L, 1, "name (a non-empty string) is required");
    int k;
    if (!strcmp(kind, "gauge"))
        k = KN_APP_METRIC_GAUGE;
    else if (!strcmp(kind, "sum"))
        k = KN_APP_METRIC_SUM;
    else
        return luaL_argerror(L, 1, "kind must be \"gauge\" or \"sum\"");
    lk_app_metric *lm = (lk_app_metric *)lua_newuserdata(L, sizeof *lm);
    lm->m = NULL;
    luaL_getmetatable(L, LK_APP_METRIC_MT);
    lua_setmetatable(L, -2);
    lm->m = kn_app_metric_new(group, name, description, k);
    if (!lm->m)
        return luaL_error(L, "app_metric: %s", kn_err_message(kn_last_error()));
    lua_getfield(L, 1, "tags");
    if (!lua_isnil(L, -1)) {
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                return luaL_argerror(L, 1, "tags must map strings to strings");
            if (kn_app_metric_add_tag(lm->m, lua_tostring(L, -2), lua_tostring(L, -1)))
                return luaL_error(L, "app_metric: out of memory");
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    return 1;
}

static kn_app_metric *lk_app_metric_live(lua_State *L, int idx) {
    lk_app_metric *lm = lk_app_metric_check(L, idx);
    if (!lm->m)
        luaL_error(L, "app_metric is destroyed");
    return lm->m;
}

static int lk_app_metric_set(lua_State *L) {
    kn_app_metric_set(lk_app_metric_live(L, 1), luaL_checknumber(L, 2));
    lua_settop(L, 1);
    return 1;
}

static int lk_app_metric_add(lua_State *L) {
    kn_app_metric_add(lk_app_metric_live(L, 1), luaL_optnumber(L, 2, 1));
    lua_settop(L, 1);
    return 1;
}

static int lk_app_metric_value(lua_State *L) {
    lua_pushnumber(L, kn_app_metric_value(lk_app_metric_live(L, 1)));
    return 1;
}

static int lk_app_metric_gc(lua_State *L) {
    lk_app_metric *lm = lk_app_metric_check(L, 1);
    kn_app_metric_destroy(lm->m);
    lm->m = NULL;
    return 0;
}

static const luaL_Reg lk_app_metric_methods[] = {
    {"set", lk_app_metric_set},
    {"add", lk_app_metric_add},
    {"value", lk_app_metric_value},
    {NULL, NULL},
};

void lk_telemetry_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_APP_METRIC_MT)) {
        lua_pushcfunction(L, lk_app_metric_gc);
        lua_setfield(L, -2, "__gc");
        lua_newtable(L);
        luaL_setfuncs(L, lk_app_metric_methods, 0);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

int lk_telemetry_app_metric_new(lua_State *L) { return lk_app_metric_new(L); }

int lk_telemetry_instance_id(lua_State *L, lk_client_kind kind, void *handle) {
    /* Java's clientInstanceId takes a Duration; omitted here it is
     * default.api.timeout.ms's default. */
    lua_Integer t = 60000;
    if (!lua_isnoneornil(L, 2) && !lk_get_integer(L, 2, &t))
        return luaL_argerror(L, 2, "timeout_ms must be an integer");
    if (t > 0x7fffffff)
        t = 0x7fffffff;
    char id[KN_CLIENT_INSTANCE_ID_SIZE], es[512] = "";
    int rc;
    if (kind == LK_CLIENT_PRODUCER)
        rc = kn_producer_client_instance_id(handle, (int)(t < -1 ? -1 : t), id, sizeof id, es, sizeof es);
    else if (kind == LK_CLIENT_CONSUMER)
        rc = kn_consumer_client_instance_id(handle, (int)(t < -1 ? -1 : t), id, sizeof id, es, sizeof es);
    else
        rc = kn_admin_client_instance_id(handle, (int)(t < -1 ? -1 : t), id, sizeof id, es, sizeof es);
    if (rc)
        return lk_push_error(L, rc, es);
    lua_pushstring(L, id);
    return 1;
}

int lk_telemetry_register_metric(lua_State *L, lk_client_kind kind, void *handle, int add) {
    kn_app_metric *m = lk_app_metric_live(L, 2);
    int rc;
    if (kind == LK_CLIENT_PRODUCER)
        rc = add ? kn_producer_register_metric_for_subscription(handle, m)
                 : kn_producer_unregister_metric_from_subscription(handle, m);
    else if (kind == LK_CLIENT_CONSUMER)
        rc = add ? kn_consumer_register_metric_for_subscription(handle, m)
                 : kn_consumer_unregister_metric_from_subscription(handle, m);
    else
        rc = add ? kn_admin_register_metric_for_subscription(handle, m)
                 : kn_admin_unregister_metric_from_subscription(handle, m);
    if (rc)
        return lk_push_error(L, rc, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

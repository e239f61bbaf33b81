/*
 * lk_admin_offsets.c: admin:list_offsets, Java's listOffsets in Lua.
 *
 * In: { [topic] = { [partition] = spec } } with spec "earliest",
 * "latest", "max_timestamp", "earliest_local", "latest_tiered" or a
 * timestamp in ms. Out: { [topic] = { [partition] = { offset =,
 * timestamp =, leader_epoch = } or { error =, code =, message = } } }.
 */
#include <string.h>

#include "kafka_native_consumer.h"
#include "lk_admin.h"

static const struct {
    const char *name;
    int64_t spec;
} lk_specs[] = {
    {"earliest", KN_OFFSET_SPEC_EARLIEST},           {"latest", KN_OFFSET_SPEC_LATEST},
    {"max_timestamp", KN_OFFSET_SPEC_MAX_TIMESTAMP}, {"earliest_local", KN_OFFSET_SPEC_EARLIEST_LOCAL},
    {"latest_tiered", KN_OFFSET_SPEC_LATEST_TIERED},
};

/* The spec at the top of the stack; raises on anything else. */
static int64_t lk_spec(lua_State *L) {
    lua_Integer ts;
    if (lua_type(L, -1) == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);
        for (size_t i = 0; i < sizeof(lk_specs) / sizeof(lk_specs[0]); i++)
            if (strcmp(s, lk_specs[i].name) == 0)
                return lk_specs[i].spec;
    } else if (lk_get_integer(L, -1, &ts) && ts >= 0) {
        return ts;
    }
    return luaL_argerror(
        L, 2,
        "a partition's spec is earliest, latest, max_timestamp, earliest_local, latest_tiered "
        "or a timestamp (ms, >= 0)");
}

static void lk_free_tplist(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }
static void lk_free_offset_results(void *p) { kn_offset_results_destroy((kn_offset_results *)p); }

/* Walks arg 2, checking (l NULL) or filling l. */
static int lk_walk_specs(lua_State *L, kn_topic_partition_list *l) {
    int err = KN_OK;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, 2, "{ [topic] = { [partition] = spec } } expected");
        const char *topic = lua_tostring(L, -2);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lua_Integer p;
            if (!lk_get_integer(L, -2, &p) || p < 0 || p > 0x7fffffff)
                luaL_argerror(L, 2, "partitions are integers >= 0");
            int64_t spec = lk_spec(L);
            if (l && !err) {
                int k = kn_topic_partition_list_add(l, topic, (int32_t)p);
                if (k == KN_ERR__INVALID_ARG)
                    luaL_argerror(L, 2, "topic names must not be empty");
                if (k < 0)
                    err = k;
                else
                    kn_topic_partition_list_set_offset(l, (size_t)k, spec);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return err;
}

/* admin:list_offsets(specs, {isolation_level=, timeout_ms=}) */
static int lk_admin_list_offsets(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = 0;
    lua_settop(L, 3);
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "isolation_level");
        if (!lua_isnil(L, -1)) {
            const char *iso = lua_tostring(L, -1);
            if (lua_type(L, -1) != LUA_TSTRING ||
                (strcmp(iso, "read_committed") && strcmp(iso, "read_uncommitted")))
                return luaL_argerror(L, 3, "isolation_level is read_committed or read_uncommitted");
            flags = strcmp(iso, "read_committed") == 0 ? KN_ADMIN_READ_COMMITTED : 0;
        }
        lua_pop(L, 1);
    }
    lk_walk_specs(L, NULL);
    lk_guard *lg = lk_guard_push(L, lk_free_tplist, 0);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    lg->ptr = l;
    if (!l || lk_walk_specs(L, l))
        return luaL_error(L, "out of memory");
    lk_guard *g = lk_guard_push(L, lk_free_offset_results, 0);
    char errstr[512] = "";
    kn_offset_results *res = NULL;
    int err = kn_admin_list_offsets(la->admin, l, flags, timeout_ms, &res, errstr, sizeof(errstr));
    lk_guard_release(lg);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lua_newtable(L);
    for (size_t i = 0; i < kn_offset_results_count(res); i++) {
        const char *t = kn_offset_results_topic(res, i);
        lua_getfield(L, -1, t);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setfield(L, -3, t);
        }
        lua_createtable(L, 0, 3);
        int perr = kn_offset_results_error(res, i);
        if (perr) {
            lk_set_str(L, "error", kn_err_name(perr));
            lk_set_int(L, "code", perr);
            lk_set_str(L, "message", kn_offset_results_error_message(res, i));
        } else {
            if (kn_offset_results_offset(res, i) >= 0)
                lk_set_int(L, "offset", kn_offset_results_offset(res, i));
            if (kn_offset_results_timestamp(res, i) >= 0)
                lk_set_int(L, "timestamp", kn_offset_results_timestamp(res, i));
            if (kn_offset_results_leader_epoch(res, i) >= 0)
                lk_set_int(L, "leader_epoch", kn_offset_results_leader_epoch(res, i));
        }
        lua_rawseti(L, -2, (int)kn_offset_results_partition(res, i));
        lua_pop(L, 1);
    }
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_offset_methods[] = {
    {"list_offsets", lk_admin_list_offsets},
    {NULL, NULL},
};

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

static void lk_free_offset_results(void *p) { kn_offset_results_destroy((kn_offset_results *)p); }

static void lk_offset_fields(lua_State *L, const kn_offset_results *res, size_t i) {
    if (kn_offset_results_offset(res, i) >= 0)
        lk_set_int(L, "offset", kn_offset_results_offset(res, i));
    if (kn_offset_results_timestamp(res, i) >= 0)
        lk_set_int(L, "timestamp", kn_offset_results_timestamp(res, i));
    if (kn_offset_results_leader_epoch(res, i) >= 0)
        lk_set_int(L, "leader_epoch", kn_offset_results_leader_epoch(res, i));
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
    lk_guard *lg = lk_offsets_arg(L, "{ [topic] = { [partition] = spec } } expected",
                                  "partitions are integers >= 0", lk_spec);
    lk_guard *g = lk_guard_push(L, lk_free_offset_results, 0);
    char errstr[512] = "";
    kn_offset_results *res = NULL;
    int err = kn_admin_list_offsets(la->admin, (kn_topic_partition_list *)lg->ptr, flags, timeout_ms, &res,
                                    errstr, sizeof(errstr));
    lk_guard_release(lg);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lk_push_offset_results(L, res, lk_offset_fields);
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_offset_methods[] = {
    {"list_offsets", lk_admin_list_offsets},
    {NULL, NULL},
};

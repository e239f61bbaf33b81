/*
 * lk_admin_cluster.c: admin:describe_features and
 * admin:describe_metadata_quorum.
 *
 * describe_features() -> { finalized_epoch =, finalized = { [name] = {
 * min_level =, max_level = } }, supported = { [name] = { min_version =,
 * max_version = } } }; describe_metadata_quorum() -> { leader_id =,
 * leader_epoch =, high_watermark =, voters = { {replica_id =,
 * log_end_offset =, last_fetch_ms =, last_caught_up_ms =}, ... },
 * observers = { ... } }.
 * update_features({ { feature =, max_version_level =, upgrade_type =
 * ("upgrade", "safe_downgrade", "unsafe_downgrade") }, ... } [, {
 * validate_only =, timeout_ms = }]) and unregister_broker(id) -> true or
 * nil, message, code; list_config_resources([types]) -> { { type =
 * ("topic", "client_metrics", ...), name = }, ... }.
 */
#include <string.h>

#include "lk_admin.h"

static void lk_free_features(void *p) { kn_features_destroy((kn_features *)p); }
static void lk_free_quorum(void *p) { kn_quorum_info_destroy((kn_quorum_info *)p); }

static int lk_admin_describe_features(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    lk_guard *g = lk_guard_push(L, lk_free_features, 0);
    char errstr[512] = "";
    kn_features *f = NULL;
    int err = kn_admin_describe_features(la->admin, timeout_ms, &f, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = f;
    lua_createtable(L, 0, 3);
    lk_set_int(L, "finalized_epoch", kn_features_finalized_epoch(f));
    lua_newtable(L);
    for (size_t i = 0; i < kn_features_finalized_count(f); i++) {
        lua_createtable(L, 0, 2);
        lk_set_int(L, "min_level", kn_features_finalized_min_level(f, i));
        lk_set_int(L, "max_level", kn_features_finalized_max_level(f, i));
        lua_setfield(L, -2, kn_features_finalized_name(f, i));
    }
    lua_setfield(L, -2, "finalized");
    lua_newtable(L);
    for (size_t i = 0; i < kn_features_supported_count(f); i++) {
        lua_createtable(L, 0, 2);
        lk_set_int(L, "min_version", kn_features_supported_min_version(f, i));
        lk_set_int(L, "max_version", kn_features_supported_max_version(f, i));
        lua_setfield(L, -2, kn_features_supported_name(f, i));
    }
    lua_setfield(L, -2, "supported");
    lk_guard_release(g);
    return 1;
}

static void lk_push_replicas(lua_State *L, const kn_quorum_info *q, int observer) {
    size_t n = kn_quorum_info_replica_count(q, observer);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lk_set_int(L, "replica_id", kn_quorum_info_replica_id(q, observer, i));
        lk_set_int(L, "log_end_offset", kn_quorum_info_replica_log_end_offset(q, observer, i));
        lk_set_int(L, "last_fetch_ms", kn_quorum_info_replica_last_fetch_ms(q, observer, i));
        lk_set_int(L, "last_caught_up_ms", kn_quorum_info_replica_last_caught_up_ms(q, observer, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
}

static int lk_admin_describe_metadata_quorum(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    lk_guard *g = lk_guard_push(L, lk_free_quorum, 0);
    char errstr[512] = "";
    kn_quorum_info *q = NULL;
    int err = kn_admin_describe_metadata_quorum(la->admin, timeout_ms, &q, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = q;
    lua_createtable(L, 0, 5);
    lk_set_int(L, "leader_id", kn_quorum_info_leader_id(q));
    lk_set_int(L, "leader_epoch", kn_quorum_info_leader_epoch(q));
    lk_set_int(L, "high_watermark", kn_quorum_info_high_watermark(q));
    lk_push_replicas(L, q, 0);
    lua_setfield(L, -2, "voters");
    lk_push_replicas(L, q, 1);
    lua_setfield(L, -2, "observers");
    lk_guard_release(g);
    return 1;
}

static int lk_admin_update_features(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = lk_opt_bool_field(L, 3, "validate_only", 0) ? KN_ADMIN_VALIDATE_ONLY : 0;
    static const char shape[] =
        "array of { feature =, max_version_level =, upgrade_type = (\"upgrade\", \"safe_downgrade\", "
        "\"unsafe_downgrade\") } expected";
    size_t n = lua_rawlen(L, 2);
    kn_feature_update *u = (kn_feature_update *)lua_newuserdata(L, (n ? n : 1) * sizeof(*u));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        if (!lua_istable(L, -1))
            return luaL_argerror(L, 2, shape);
        lua_getfield(L, -1, "feature");
        lua_getfield(L, -2, "max_version_level");
        lua_getfield(L, -3, "upgrade_type");
        lua_Integer level;
        const char *type = lua_isnil(L, -1) ? "upgrade" : lua_tostring(L, -1);
        int t = !type                               ? -1
                : !strcmp(type, "upgrade")          ? KN_FEATURE_UPGRADE
                : !strcmp(type, "safe_downgrade")   ? KN_FEATURE_SAFE_DOWNGRADE
                : !strcmp(type, "unsafe_downgrade") ? KN_FEATURE_UNSAFE_DOWNGRADE
                                                    : -1;
        if (lua_type(L, -3) != LUA_TSTRING || !lk_get_integer(L, -2, &level) || level < 0 || level > 0x7fff ||
            t < 0)
            return luaL_argerror(L, 2, shape);
        u[i].feature = lua_tostring(L, -3); /* a value of the argument: alive */
        u[i].max_version_level = (int16_t)level;
        u[i].upgrade_type = t;
        lua_pop(L, 4);
    }
    char errstr[512] = "";
    int err = kn_admin_update_features(la->admin, u, n, flags, timeout_ms, errstr, sizeof(errstr));
    if (err == KN_ERR__INVALID_ARG)
        return luaL_argerror(L, 2, errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

static int lk_admin_unregister_broker(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    lua_Integer id;
    if (!lk_get_integer(L, 2, &id) || id < 0 || id > 0x7fffffff)
        return luaL_argerror(L, 2, "broker id (integer >= 0) expected");
    int timeout_ms = lk_timeout_opt(L, 3);
    char errstr[512] = "";
    int err = kn_admin_unregister_broker(la->admin, (int32_t)id, timeout_ms, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

static void lk_free_cres(void *p) { kn_config_resource_list_destroy((kn_config_resource_list *)p); }

static int lk_admin_list_config_resources(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n = 0;
    int8_t *types = NULL;
    if (!lua_isnoneornil(L, 2)) {
        n = lk_check_strings(L, 2, "array of resource type names expected");
        types = (int8_t *)lua_newuserdata(L, n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, 2, (int)(i + 1));
            int t = kn_config_resource_type_from_name(lua_tostring(L, -1));
            if (t < 0)
                return luaL_argerror(
                    L, 2, "unknown resource type (topic, broker, broker_logger, client_metrics, group)");
            types[i] = (int8_t)t;
            lua_pop(L, 1);
        }
    }
    lk_guard *g = lk_guard_push(L, lk_free_cres, 0);
    char errstr[512] = "";
    kn_config_resource_list *l = NULL;
    int err = kn_admin_list_config_resources(la->admin, types, n, timeout_ms, &l, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = l;
    lua_createtable(L, (int)kn_config_resource_list_count(l), 0);
    for (size_t i = 0; i < kn_config_resource_list_count(l); i++) {
        lua_createtable(L, 0, 2);
        const char *tn = kn_config_resource_type_name(kn_config_resource_list_type(l, i));
        lk_set_str(L, "type", tn ? tn : "unknown");
        lk_set_str(L, "name", kn_config_resource_list_name(l, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_cluster_methods[] = {
    {"describe_features", lk_admin_describe_features},
    {"describe_metadata_quorum", lk_admin_describe_metadata_quorum},
    {"update_features", lk_admin_update_features},
    {"unregister_broker", lk_admin_unregister_broker},
    {"list_config_resources", lk_admin_list_config_resources},
    {NULL, NULL},
};

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
 */
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

const luaL_Reg lk_admin_cluster_methods[] = {
    {"describe_features", lk_admin_describe_features},
    {"describe_metadata_quorum", lk_admin_describe_metadata_quorum},
    {NULL, NULL},
};

/*
 * lk_admin_streams.c: what the admin userdata says of streams groups
 * beyond the common group shape, and the KRaft voter methods.
 *
 * A streams group (describe_streams_groups) also has topology_epoch and
 * subtopologies = { { id =, source_topics = {...},
 * repartition_sink_topics = {...}, state_changelog_topics = {...},
 * repartition_source_topics = {...}, topic_info = { [internal topic] =
 * { partitions =, replication_factor =, configs = { [key] = value } } }
 * }, ... }; each member process_id, topology_epoch, is_classic,
 * rack_id, user_endpoint = { host =, port = } (nil when none),
 * client_tags = { [key] = value }, tasks = { active =, standby =,
 * warmup =, target_active =, target_standby =, target_warmup = }, each
 * { [subtopology id] = { partition, ... } }, and task_offsets /
 * task_end_offsets = { [subtopology id] = { [partition] = offset } }.
 *
 * add_raft_voter(voter_id, directory_id, { {name=, host=, port=}, ... }
 * [, {cluster_id=, timeout_ms=}]) and remove_raft_voter(voter_id,
 * directory_id [, {cluster_id=, timeout_ms=}]) -> true or nil, message,
 * code.
 */
#include <string.h>

#include "lk_admin.h"

/* topic_info = { [name] = { partitions =, replication_factor =, configs
 * = { [key] = value } } } of a subtopology's internal topics. */
static void lk_push_topic_info(lua_State *L, const kn_group_descriptions *d, size_t i, size_t s) {
    lua_newtable(L);
    for (int k = KN_SUBTOPOLOGY_STATE_CHANGELOG; k <= KN_SUBTOPOLOGY_REPARTITION_SOURCE; k++)
        for (size_t t = 0; t < kn_group_descriptions_subtopology_topic_count(d, i, s, k); t++) {
            lua_createtable(L, 0, 3);
            lk_set_int(L, "partitions", kn_group_descriptions_subtopology_topic_partitions(d, i, s, k, t));
            lk_set_int(L, "replication_factor",
                       kn_group_descriptions_subtopology_topic_replication_factor(d, i, s, k, t));
            lua_newtable(L);
            for (size_t c = 0; c < kn_group_descriptions_subtopology_topic_config_count(d, i, s, k, t); c++) {
                const char *value = NULL;
                const char *key = kn_group_descriptions_subtopology_topic_config(d, i, s, k, t, c, &value);
                lk_set_str(L, key, value);
            }
            lua_setfield(L, -2, "configs");
            lua_setfield(L, -2, kn_group_descriptions_subtopology_topic(d, i, s, k, t));
        }
    lua_setfield(L, -2, "topic_info");
}

/* { [subtopology id] = { [partition] = offset } } */
static void lk_push_task_offsets(lua_State *L, const kn_topic_partition_list *l) {
    lua_newtable(L);
    for (size_t k = 0; k < kn_topic_partition_list_count(l); k++) {
        lk_push_topic_table(L, kn_topic_partition_list_topic(l, k));
        lua_pushinteger(L, (lua_Integer)kn_topic_partition_list_offset(l, k));
        lua_rawseti(L, -2, (int)kn_topic_partition_list_partition(l, k));
        lua_pop(L, 1);
    }
}

void lk_push_streams_group_fields(lua_State *L, const kn_group_descriptions *d, size_t i) {
    static const char *const kinds[4] = {"source_topics", "repartition_sink_topics", "state_changelog_topics",
                                         "repartition_source_topics"};
    if (kn_group_descriptions_topology_epoch(d, i) >= 0)
        lk_set_int(L, "topology_epoch", kn_group_descriptions_topology_epoch(d, i));
    size_t ns = kn_group_descriptions_subtopology_count(d, i);
    lua_createtable(L, (int)ns, 0);
    for (size_t s = 0; s < ns; s++) {
        lua_createtable(L, 0, 5);
        lk_set_str(L, "id", kn_group_descriptions_subtopology_id(d, i, s));
        for (int k = 0; k < 4; k++) {
            size_t nt = kn_group_descriptions_subtopology_topic_count(d, i, s, k);
            lua_createtable(L, (int)nt, 0);
            for (size_t t = 0; t < nt; t++) {
                lua_pushstring(L, kn_group_descriptions_subtopology_topic(d, i, s, k, t));
                lua_rawseti(L, -2, (int)(t + 1));
            }
            lua_setfield(L, -2, kinds[k]);
        }
        lk_push_topic_info(L, d, i, s);
        lua_rawseti(L, -2, (int)(s + 1));
    }
    lua_setfield(L, -2, "subtopologies");
}

void lk_push_streams_member_fields(lua_State *L, const kn_group_descriptions *d, size_t i, size_t m) {
    static const char *const kinds[6] = {"active",        "standby",        "warmup",
                                         "target_active", "target_standby", "target_warmup"};
    lk_set_str(L, "process_id", kn_group_descriptions_member_process_id(d, i, m));
    lua_createtable(L, 0, 6);
    for (int k = 0; k < 6; k++) {
        lk_push_assignment(L, kn_group_descriptions_member_tasks(d, i, m, k));
        lua_setfield(L, -2, kinds[k]);
    }
    lua_setfield(L, -2, "tasks");
    lk_set_int(L, "topology_epoch", kn_group_descriptions_member_topology_epoch(d, i, m));
    lua_pushboolean(L, kn_group_descriptions_member_is_classic(d, i, m));
    lua_setfield(L, -2, "is_classic");
    lk_set_str(L, "rack_id", kn_group_descriptions_member_rack(d, i, m));
    int port = 0;
    const char *host = kn_group_descriptions_member_user_endpoint(d, i, m, &port);
    if (host) {
        lua_createtable(L, 0, 2);
        lk_set_str(L, "host", host);
        lk_set_int(L, "port", port);
        lua_setfield(L, -2, "user_endpoint");
    }
    lua_newtable(L);
    for (size_t k = 0; k < kn_group_descriptions_member_client_tag_count(d, i, m); k++) {
        const char *value = NULL;
        const char *key = kn_group_descriptions_member_client_tag(d, i, m, k, &value);
        lk_set_str(L, key, value);
    }
    lua_setfield(L, -2, "client_tags");
    lk_push_task_offsets(L, kn_group_descriptions_member_task_offsets(d, i, m, KN_TASK_OFFSETS));
    lua_setfield(L, -2, "task_offsets");
    lk_push_task_offsets(L, kn_group_descriptions_member_task_offsets(d, i, m, KN_TASK_END_OFFSETS));
    lua_setfield(L, -2, "task_end_offsets");
}

/* ---- KRaft voters ---------------------------------------------------- */

static int32_t lk_voter_id(lua_State *L) {
    lua_Integer id;
    if (!lk_get_integer(L, 2, &id) || id < 0 || id > 0x7fffffff)
        luaL_argerror(L, 2, "voter id (integer >= 0) expected");
    return (int32_t)id;
}

/* The cluster_id option (a string) of the options table at idx, or NULL. */
static const char *lk_cluster_id_opt(lua_State *L, int idx) {
    if (!lua_istable(L, idx))
        return NULL;
    lua_getfield(L, idx, "cluster_id");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
        luaL_argerror(L, idx, "'cluster_id' must be a string");
    const char *s = lua_tostring(L, -1); /* a value of the options table: alive */
    lua_pop(L, 1);
    return s;
}

static int lk_admin_add_raft_voter(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int32_t id = lk_voter_id(L);
    const char *dir = luaL_checkstring(L, 3);
    luaL_checktype(L, 4, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 5);
    const char *cluster_id = lk_cluster_id_opt(L, 5);
    size_t n = (size_t)lua_rawlen(L, 4);
    if (n == 0 || n > 64)
        return luaL_argerror(L, 4, "1 to 64 endpoints { name =, host =, port = } expected");
    kn_raft_voter_endpoint *eps = (kn_raft_voter_endpoint *)lua_newuserdata(L, n * sizeof(*eps));
    for (size_t k = 0; k < n; k++) {
        lua_rawgeti(L, 4, (int)(k + 1));
        lua_Integer port = -1;
        if (!lua_istable(L, -1))
            return luaL_argerror(L, 4, "endpoints must be tables { name =, host =, port = }");
        lua_getfield(L, -1, "name");
        lua_getfield(L, -2, "host");
        lua_getfield(L, -3, "port");
        if (lua_type(L, -3) != LUA_TSTRING || lua_type(L, -2) != LUA_TSTRING || !lk_get_integer(L, -1, &port) ||
            port < 0 || port > 65535)
            return luaL_argerror(L, 4, "each endpoint needs name and host strings and a port 0-65535");
        eps[k].name = lua_tostring(L, -3); /* values of the argument table: alive */
        eps[k].host = lua_tostring(L, -2);
        eps[k].port = (int)port;
        lua_pop(L, 4);
    }
    char errstr[512] = "";
    int err = kn_admin_add_raft_voter(la->admin, id, dir, eps, n, cluster_id, timeout_ms, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

static int lk_admin_remove_raft_voter(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int32_t id = lk_voter_id(L);
    const char *dir = luaL_checkstring(L, 3);
    int timeout_ms = lk_timeout_opt(L, 4);
    const char *cluster_id = lk_cluster_id_opt(L, 4);
    char errstr[512] = "";
    int err = kn_admin_remove_raft_voter(la->admin, id, dir, cluster_id, timeout_ms, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

const luaL_Reg lk_admin_raft_methods[] = {
    {"add_raft_voter", lk_admin_add_raft_voter},
    {"remove_raft_voter", lk_admin_remove_raft_voter},
    {NULL, NULL},
};

/*
 * lk_admin_reassign.c: admin:elect_leaders,
 * admin:alter_partition_reassignments and
 * admin:list_partition_reassignments.
 *
 *   elect_leaders("preferred" or "unclean", { [topic] = { p, ... } } or
 *     nil (every partition)) -> { [topic] = { [p] = {} or { error = ... } } };
 *   alter_partition_reassignments({ [topic] = { [p] = { broker, ... } or
 *     false (cancel) } }) -> the same shape;
 *   list_partition_reassignments({ [topic] = { p, ... } } or nil) ->
 *     { [topic] = { [p] = { replicas =, adding =, removing = } } }.
 */
#include <string.h>

#include "lk_admin.h"

static void lk_free_tplist_(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }
static void lk_free_reassignments(void *p) { kn_reassignments_destroy((kn_reassignments *)p); }

static int lk_admin_elect_leaders(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    const char *type = luaL_checkstring(L, 2);
    int election = !strcmp(type, "preferred") ? KN_ELECTION_PREFERRED
                   : !strcmp(type, "unclean") ? KN_ELECTION_UNCLEAN
                                              : -1;
    if (election < 0)
        return luaL_argerror(L, 2, "\"preferred\" or \"unclean\" expected");
    int timeout_ms = lk_timeout_opt(L, 4);
    kn_topic_partition_list *parts = lua_isnoneornil(L, 3) ? NULL : lk_partitions_arg(L, 3, false);
    lk_guard *g = lk_guard_push(L, lk_free_tplist_, 0);
    char errstr[512] = "";
    kn_topic_partition_list *res = NULL;
    int err = kn_admin_elect_leaders(la->admin, election, parts, timeout_ms, &res, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lk_push_partition_items(L, res, false);
    lk_guard_release(g);
    return 1;
}

static int lk_admin_alter_partition_reassignments(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    static const char shape[] = "{ [topic] = { [partition] = { broker, ... } or false } } expected";
    /* count, then fill: every value stays in the argument table */
    size_t n = 0, nids = 0;
    for (int pass = 0; pass < 2; pass++) {
        kn_reassignment *v = NULL;
        int32_t *ids = NULL;
        if (pass) {
            v = (kn_reassignment *)lua_newuserdata(L, (n ? n : 1) * sizeof(*v));
            ids = (int32_t *)lua_newuserdata(L, (nids ? nids : 1) * sizeof(*ids));
            n = nids = 0;
        }
        lua_pushnil(L);
        while (lua_next(L, 2)) {
            if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1))
                return luaL_argerror(L, 2, shape);
            const char *topic = lua_tostring(L, -2);
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_Integer p;
                if (!lk_get_integer(L, -2, &p) || p < 0 || p > 0x7fffffff ||
                    !(lua_istable(L, -1) || (lua_isboolean(L, -1) && !lua_toboolean(L, -1))))
                    return luaL_argerror(L, 2, shape);
                size_t k = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0;
                if (pass) {
                    v[n].topic = topic;
                    v[n].partition = (int32_t)p;
                    v[n].replicas = lua_istable(L, -1) ? &ids[nids] : NULL;
                    v[n].replica_count = k;
                }
                for (size_t r = 1; r <= k; r++) {
                    lua_Integer b;
                    lua_rawgeti(L, -1, (int)r);
                    if (!lk_get_integer(L, -1, &b) || b < 0 || b > 0x7fffffff)
                        return luaL_argerror(L, 2, shape);
                    if (pass)
                        ids[nids + r - 1] = (int32_t)b;
                    lua_pop(L, 1);
                }
                n++;
                nids += k;
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        if (pass) {
            lk_guard *g = lk_guard_push(L, lk_free_tplist_, 0);
            char errstr[512] = "";
            kn_topic_partition_list *res = NULL;
            int err = kn_admin_alter_partition_reassignments(la->admin, v, n, timeout_ms, &res, errstr,
                                                             sizeof(errstr));
            if (err == KN_ERR__INVALID_ARG)
                return luaL_argerror(L, 2, errstr);
            if (err)
                return lk_push_error(L, err, errstr);
            g->ptr = res;
            lk_push_partition_items(L, res, false);
            lk_guard_release(g);
        }
    }
    return 1;
}

static void lk_push_ids(lua_State *L, const kn_reassignments *r, size_t i, int which, const char *key) {
    size_t n = 0;
    const int32_t *ids = kn_reassignments_replicas(r, i, which, &n);
    lua_createtable(L, (int)n, 0);
    for (size_t k = 0; k < n; k++) {
        lua_pushinteger(L, ids[k]);
        lua_rawseti(L, -2, (int)(k + 1));
    }
    lua_setfield(L, -2, key);
}

static int lk_admin_list_partition_reassignments(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    kn_topic_partition_list *parts = lua_isnoneornil(L, 2) ? NULL : lk_partitions_arg(L, 2, false);
    lk_guard *g = lk_guard_push(L, lk_free_reassignments, 0);
    char errstr[512] = "";
    kn_reassignments *r = NULL;
    int err = kn_admin_list_partition_reassignments(la->admin, parts, timeout_ms, &r, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = r;
    lua_newtable(L);
    for (size_t i = 0; i < kn_reassignments_count(r); i++) {
        lk_push_topic_table(L, kn_reassignments_topic(r, i));
        lua_createtable(L, 0, 3);
        lk_push_ids(L, r, i, 0, "replicas");
        lk_push_ids(L, r, i, 1, "adding");
        lk_push_ids(L, r, i, 2, "removing");
        lua_rawseti(L, -2, (int)kn_reassignments_partition(r, i));
        lua_pop(L, 1);
    }
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_reassign_methods[] = {
    {"elect_leaders", lk_admin_elect_leaders},
    {"alter_partition_reassignments", lk_admin_alter_partition_reassignments},
    {"list_partition_reassignments", lk_admin_list_partition_reassignments},
    {NULL, NULL},
};

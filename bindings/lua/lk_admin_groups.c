/*
 * lk_admin_groups.c: the admin userdata's group methods: list_groups;
 * describe_consumer_groups, list_consumer_group_offsets,
 * alter_consumer_group_offsets, delete_consumer_group_offsets,
 * delete_consumer_groups and remove_members_from_consumer_group; their
 * share-group (describe_share_groups, list/alter/delete_share_group_offsets,
 * delete_share_groups) and streams-group (describe_streams_groups,
 * list/alter/delete_streams_group_offsets, delete_streams_groups)
 * counterparts, whose streams-only fields lk_admin_streams.c pushes.
 *
 * Partitions are written { [topic] = { p, ... } } (or, for offsets,
 * { [topic] = { [p] = offset | {offset=, leader_epoch=, metadata=} } }),
 * and come back keyed by topic then partition number. A group or an
 * item that failed alone is { error =, code =, message = }; a call that
 * failed as a whole returns nil, message, code. Argument shapes are
 * checked before C memory is taken; C objects held while Lua values are
 * built sit in guards.
 */
#include <stdbool.h>
#include <string.h>

#include "kafka_native_consumer.h"
#include "lk_admin.h"

static void lk_free_tplist(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }
static void lk_free_group_results(void *p) { kn_group_results_destroy((kn_group_results *)p); }
static void lk_free_group_list(void *p) { kn_group_list_destroy((kn_group_list *)p); }
static void lk_free_group_desc(void *p) { kn_group_descriptions_destroy((kn_group_descriptions *)p); }
static void lk_free_group_offsets(void *p) { kn_group_offsets_destroy((kn_group_offsets *)p); }

/* An entry's error fields, with the code's own message when the broker
 * sent none. */
static void lk_error_fields(lua_State *L, int err, const char *message) {
    lk_set_error(L, err, message ? message : kn_err_message(err));
}

/* ---- partition tables ------------------------------------------------ */

static int lk_is_partition(lua_State *L, int idx, lua_Integer *p) {
    return lk_get_integer(L, idx, p) && *p >= 0 && *p <= 0x7fffffff;
}

/* Walks { [topic] = { p, ... } } (offsets false) or { [topic] = { [p] =
 * offset | {offset=, leader_epoch=, metadata=} } } (offsets true) at idx:
 * raises on a wrong shape; with l, adds the entries to it. Returns KN_OK
 * or KN_ERR__NOMEM. */
static int lk_walk_partitions(lua_State *L, int idx, bool offsets, kn_topic_partition_list *l) {
    const char *shape = offsets
                            ? "{ [topic] = { [partition] = offset or {offset=, leader_epoch=, metadata=} } }"
                            : "{ [topic] = { partition, ... } }";
    luaL_checktype(L, idx, LUA_TTABLE);
    int err = KN_OK;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, idx, shape);
        const char *topic = lua_tostring(L, -2);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lua_Integer p = 0, off = 0, epoch = -1;
            const char *metadata = NULL;
            bool ok;
            if (!offsets) {
                ok = lk_is_partition(L, -1, &p);
            } else if (lua_type(L, -1) == LUA_TTABLE) {
                ok = lk_is_partition(L, -2, &p);
                lua_getfield(L, -1, "offset");
                ok = ok && lk_get_integer(L, -1, &off);
                lua_getfield(L, -2, "leader_epoch");
                ok = ok && (lua_isnil(L, -1) || lk_get_integer(L, -1, &epoch));
                lua_getfield(L, -3, "metadata");
                ok = ok && (lua_isnil(L, -1) || lua_type(L, -1) == LUA_TSTRING);
                metadata = lua_tostring(L, -1); /* a value of the argument table: alive */
                lua_pop(L, 3);
            } else {
                ok = lk_is_partition(L, -2, &p) && lk_get_integer(L, -1, &off);
            }
            if (!ok)
                luaL_argerror(L, idx, shape);
            if (l && !err) {
                int k = kn_topic_partition_list_add(l, topic, (int32_t)p);
                if (k == KN_ERR__INVALID_ARG)
                    luaL_argerror(L, idx, "topic names must not be empty");
                if (k < 0) {
                    err = k;
                } else if (offsets) {
                    kn_topic_partition_list_set_offset(l, (size_t)k, off);
                    kn_topic_partition_list_set_leader_epoch(l, (size_t)k, (int32_t)epoch);
                    err = kn_topic_partition_list_set_metadata(l, (size_t)k, metadata);
                }
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return err;
}

/* A guarded list from the partition table at idx (pushes the guard). */
kn_topic_partition_list *lk_partitions_arg(lua_State *L, int idx, bool offsets) {
    lk_walk_partitions(L, idx, offsets, NULL);
    lk_guard *g = lk_guard_push(L, lk_free_tplist, 0);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    if (!l || lk_walk_partitions(L, idx, offsets, l)) {
        kn_topic_partition_list_destroy(l);
        luaL_error(L, "out of memory");
    }
    g->ptr = l;
    return l;
}

/* Pushes { [topic] = { p, ... } } (partitions in list order). */
void lk_push_assignment(lua_State *L, const kn_topic_partition_list *l) {
    lua_newtable(L);
    for (size_t i = 0; i < kn_topic_partition_list_count(l); i++) {
        lk_push_topic_table(L, kn_topic_partition_list_topic(l, i));
        lua_pushinteger(L, kn_topic_partition_list_partition(l, i));
        lua_rawseti(L, -2, (int)lua_rawlen(L, -2) + 1);
        lua_pop(L, 1);
    }
}

/* Pushes { [topic] = { [p] = item } } where item is the entry's error
 * fields or, without error, {offset=, leader_epoch=, metadata=} (with
 * offsets; offset nil when none is committed) or {}. */
void lk_push_partition_items(lua_State *L, const kn_topic_partition_list *l, bool offsets) {
    lua_newtable(L);
    for (size_t i = 0; i < kn_topic_partition_list_count(l); i++) {
        lk_push_topic_table(L, kn_topic_partition_list_topic(l, i));
        lua_createtable(L, 0, 3);
        int err = kn_topic_partition_list_err(l, i);
        if (err) {
            lk_error_fields(L, err, NULL);
        } else if (offsets) {
            int64_t off = kn_topic_partition_list_offset(l, i);
            if (off >= 0)
                lk_set_int(L, "offset", off);
            if (kn_topic_partition_list_leader_epoch(l, i) >= 0)
                lk_set_int(L, "leader_epoch", kn_topic_partition_list_leader_epoch(l, i));
            lk_set_str(L, "metadata", kn_topic_partition_list_metadata(l, i));
        }
        lua_rawseti(L, -2, (int)kn_topic_partition_list_partition(l, i));
        lua_pop(L, 1);
    }
}

/* ---- delete_consumer_groups / remove_members ------------------------- */

static void lk_push_group_results(lua_State *L, const kn_group_results *res) {
    size_t n = kn_group_results_count(res);
    lua_createtable(L, 0, (int)n);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 3);
        if (kn_group_results_error(res, i))
            lk_error_fields(L, kn_group_results_error(res, i), kn_group_results_error_message(res, i));
        lua_setfield(L, -2, kn_group_results_name(res, i));
    }
}

/* admin:delete_consumer_groups({groups}, {timeout_ms=}) -> group -> {} or
 * {error=...}; delete_share_groups and delete_streams_groups are the same
 * DeleteGroups call under Java's names. */
static int lk_admin_delete_consumer_groups(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_strings(L, 2, "array of group ids expected");
    int timeout_ms = lk_timeout_opt(L, 3);
    const char **groups = lk_strings(L, 2, n);
    lk_guard *g = lk_guard_push(L, lk_free_group_results, 0);
    char errstr[512] = "";
    kn_group_results *res = NULL;
    int err = kn_admin_delete_consumer_groups(la->admin, groups, n, timeout_ms, &res, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lk_push_group_results(L, res);
    lk_guard_release(g);
    return 1;
}

/* admin:remove_members_from_consumer_group(group, {instance ids} | nil,
 *   {reason=, timeout_ms=}) -> member -> {} or {error=...}; nil: all */
static int lk_admin_remove_members(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    const char *group = luaL_checkstring(L, 2);
    size_t n =
        lua_isnoneornil(L, 3) ? 0 : lk_check_strings(L, 3, "array of group.instance.id values expected");
    if (!lua_isnoneornil(L, 3) && n == 0)
        return luaL_argerror(L, 3, "name at least one member, or nil for all");
    int timeout_ms = lk_timeout_opt(L, 4);
    lua_settop(L, 4);
    if (lua_istable(L, 4))
        lua_getfield(L, 4, "reason");
    else
        lua_pushnil(L);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
        return luaL_argerror(L, 4, "'reason' must be a string");
    const char *reason = lua_tostring(L, -1);
    const char **ids = n ? lk_strings(L, 3, n) : NULL;
    lk_guard *g = lk_guard_push(L, lk_free_group_results, 0);
    char errstr[512] = "";
    kn_group_results *res = NULL;
    int err = kn_admin_remove_members_from_consumer_group(la->admin, group, ids, n, reason, timeout_ms, &res,
                                                          errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lk_push_group_results(L, res);
    lk_guard_release(g);
    return 1;
}

/* ---- list_groups ----------------------------------------------------- */

/* admin:list_groups({types=, states=, timeout_ms=}) -> array of
 * {group_id=, protocol_type=, state=, type=} by id; a broker that
 * failed: the array's error/code/message fields */
static int lk_admin_list_groups(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    lua_settop(L, 2);
    size_t nt = 0, ns = 0;
    const char **types = NULL, **states = NULL;
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "types");  /* 3 */
        lua_getfield(L, 2, "states"); /* 4 */
        if (!lua_isnil(L, 3))
            types = lk_strings(L, 3, nt = lk_check_strings(L, 3, "'types' must be an array of strings"));
        if (!lua_isnil(L, 4))
            states = lk_strings(L, 4, ns = lk_check_strings(L, 4, "'states' must be an array of strings"));
    }
    lk_guard *g = lk_guard_push(L, lk_free_group_list, 0);
    char errstr[512] = "";
    kn_group_list *list = NULL;
    int err =
        kn_admin_list_groups(la->admin, types, nt, states, ns, timeout_ms, &list, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = list;
    size_t n = kn_group_list_count(list);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lk_set_str(L, "group_id", kn_group_list_group_id(list, i));
        lk_set_str(L, "protocol_type", kn_group_list_protocol_type(list, i));
        lk_set_str(L, "state", kn_group_list_state(list, i));
        lk_set_str(L, "type", kn_group_list_type(list, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    if (kn_group_list_error(list))
        lk_error_fields(L, kn_group_list_error(list), kn_group_list_error_message(list));
    lk_guard_release(g);
    return 1;
}

/* ---- describe_consumer_groups ---------------------------------------- */

static void lk_push_member(lua_State *L, const kn_group_descriptions *d, size_t i, size_t m) {
    lua_createtable(L, 0, 7);
    lk_set_str(L, "member_id", kn_group_descriptions_member_id(d, i, m));
    lk_set_str(L, "instance_id", kn_group_descriptions_member_instance_id(d, i, m));
    lk_set_str(L, "client_id", kn_group_descriptions_member_client_id(d, i, m));
    lk_set_str(L, "host", kn_group_descriptions_member_host(d, i, m));
    if (kn_group_descriptions_member_epoch(d, i, m) >= 0)
        lk_set_int(L, "member_epoch", kn_group_descriptions_member_epoch(d, i, m));
    lk_push_assignment(L, kn_group_descriptions_member_assignment(d, i, m));
    lua_setfield(L, -2, "assignment");
    const kn_topic_partition_list *target = kn_group_descriptions_member_target_assignment(d, i, m);
    if (target) {
        lk_push_assignment(L, target);
        lua_setfield(L, -2, "target_assignment");
    }
}

/* admin:describe_consumer_groups({groups}, {authorized_operations=,
 *   timeout_ms=}) -> group -> {state=, type=, assignor=, simple=,
 *   coordinator=, group_epoch=, assignment_epoch=, members={...}} */
enum { LK_GROUPS_CONSUMER, LK_GROUPS_CLASSIC, LK_GROUPS_SHARE, LK_GROUPS_STREAMS };

static int lk_describe_groups(lua_State *L, int kind) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_strings(L, 2, "array of group ids expected");
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags =
        lk_opt_bool_field(L, 3, "authorized_operations", 0) ? KN_ADMIN_GROUP_AUTHORIZED_OPERATIONS : 0;
    const char **groups = lk_strings(L, 2, n);
    lk_guard *g = lk_guard_push(L, lk_free_group_desc, 0);
    char errstr[512] = "";
    kn_group_descriptions *d = NULL;
    int (*fn)(kn_admin *, const char *const *, size_t, int, int, kn_group_descriptions **, char *, size_t) =
        kind == LK_GROUPS_CLASSIC   ? kn_admin_describe_classic_groups
        : kind == LK_GROUPS_SHARE   ? kn_admin_describe_share_groups
        : kind == LK_GROUPS_STREAMS ? kn_admin_describe_streams_groups
                                    : kn_admin_describe_consumer_groups;
    int err = fn(la->admin, groups, n, flags, timeout_ms, &d, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    size_t count = kn_group_descriptions_count(d);
    lua_createtable(L, 0, (int)count);
    for (size_t i = 0; i < count; i++) {
        lua_createtable(L, 0, 10);
        lk_set_str(L, "group_id", kn_group_descriptions_group_id(d, i));
        int gerr = kn_group_descriptions_error(d, i);
        if (gerr) {
            lk_error_fields(L, gerr, kn_group_descriptions_error_message(d, i));
        } else {
            lk_set_str(L, "state", kn_group_descriptions_state(d, i));
            lk_set_str(L, "type", kn_group_descriptions_type(d, i));
            lk_set_str(L, "assignor", kn_group_descriptions_assignor(d, i));
            lua_pushboolean(L, kn_group_descriptions_is_simple(d, i));
            lua_setfield(L, -2, "simple");
            lk_set_str(L, "protocol_type", kn_group_descriptions_protocol_type(d, i));
            lk_set_int(L, "coordinator", kn_group_descriptions_coordinator(d, i));
            if (kn_group_descriptions_group_epoch(d, i) >= 0) {
                lk_set_int(L, "group_epoch", kn_group_descriptions_group_epoch(d, i));
                lk_set_int(L, "assignment_epoch", kn_group_descriptions_assignment_epoch(d, i));
            }
            if (kn_group_descriptions_authorized_operations(d, i) != INT32_MIN)
                lk_set_int(L, "authorized_operations", kn_group_descriptions_authorized_operations(d, i));
            size_t nm = kn_group_descriptions_member_count(d, i);
            lua_createtable(L, (int)nm, 0);
            for (size_t m = 0; m < nm; m++) {
                lk_push_member(L, d, i, m);
                if (kind == LK_GROUPS_STREAMS)
                    lk_push_streams_member_fields(L, d, i, m);
                lua_rawseti(L, -2, (int)(m + 1));
            }
            lua_setfield(L, -2, "members");
            if (kind == LK_GROUPS_STREAMS)
                lk_push_streams_group_fields(L, d, i);
        }
        lua_setfield(L, -2, kn_group_descriptions_group_id(d, i));
    }
    lk_guard_release(g);
    return 1;
}

/* ---- offsets --------------------------------------------------------- */

/* Adds lag = to each partition item of group i's offsets table (at the
 * top) that has one (share groups). */
static void lk_add_lags(lua_State *L, const kn_group_offsets *o, size_t i) {
    const kn_topic_partition_list *l = kn_group_offsets_partitions(o, i);
    for (size_t k = 0; k < kn_topic_partition_list_count(l); k++) {
        int64_t lag = kn_group_offsets_lag(o, i, k);
        if (lag < 0 || kn_topic_partition_list_err(l, k))
            continue;
        lua_getfield(L, -1, kn_topic_partition_list_topic(l, k));
        lua_rawgeti(L, -1, (int)kn_topic_partition_list_partition(l, k));
        lk_set_int(L, "lag", lag);
        lua_pop(L, 2);
    }
}

/* admin:list_consumer_group_offsets({"g1", g2 = {[topic] = {p...}}},
 *   {require_stable=, timeout_ms=}) -> group -> {offsets = {[topic] =
 *   {[p] = {offset=, leader_epoch=, metadata=} or {error=...}}}} or
 *   {error=...} */
static int lk_list_group_offsets(lua_State *L, bool share) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = lk_opt_bool_field(L, 3, "require_stable", 0) ? KN_ADMIN_REQUIRE_STABLE : 0;
    lua_settop(L, 3);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        bool whole = lua_type(L, -2) == LUA_TNUMBER && lua_type(L, -1) == LUA_TSTRING;
        if (!whole) {
            if (lua_type(L, -2) != LUA_TSTRING)
                luaL_argerror(L, 2, "group ids, or group id = { [topic] = { partition, ... } }");
            lk_walk_partitions(L, lua_gettop(L), false, NULL);
        }
        n++;
        lua_pop(L, 1);
    }
    kn_group_offsets_spec *specs = (kn_group_offsets_spec *)lua_newuserdata(L, (n ? n : 1) * sizeof(*specs));
    lua_newtable(L); /* 5: anchors the partition-list guards */
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        if (lua_type(L, -2) == LUA_TNUMBER) {
            specs[k].group = lua_tostring(L, -1);
            specs[k++].partitions = NULL;
        } else {
            specs[k].group = lua_tostring(L, -2);
            specs[k++].partitions = lk_partitions_arg(L, lua_gettop(L), false);
            lua_rawseti(L, 5, (int)k); /* the guard */
        }
        lua_pop(L, 1);
    }
    lk_guard *g = lk_guard_push(L, lk_free_group_offsets, 0);
    char errstr[512] = "";
    kn_group_offsets *o = NULL;
    int err = share ? kn_admin_list_share_group_offsets(la->admin, specs, n, timeout_ms, &o, errstr, sizeof(errstr))
                    : kn_admin_list_consumer_group_offsets(la->admin, specs, n, flags, timeout_ms, &o, errstr,
                                                           sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = o;
    lua_createtable(L, 0, (int)kn_group_offsets_count(o));
    for (size_t i = 0; i < kn_group_offsets_count(o); i++) {
        lua_createtable(L, 0, 1);
        if (kn_group_offsets_error(o, i)) {
            lk_error_fields(L, kn_group_offsets_error(o, i), kn_group_offsets_error_message(o, i));
        } else {
            lk_push_partition_items(L, kn_group_offsets_partitions(o, i), true);
            if (share)
                lk_add_lags(L, o, i);
            lua_setfield(L, -2, "offsets");
        }
        lua_setfield(L, -2, kn_group_offsets_group(o, i));
    }
    lk_guard_release(g);
    return 1;
}

/* The one-group offsets calls: a group error fails the call. */
static int lk_one_group(lua_State *L, bool commit, bool share) {
    lk_admin *la = lk_admin_check(L);
    const char *group = luaL_checkstring(L, 2);
    int timeout_ms = lk_timeout_opt(L, 4);
    lua_settop(L, 4);
    kn_topic_partition_list *l = lk_partitions_arg(L, 3, commit); /* 5: its guard */
    lk_guard *g = lk_guard_push(L, lk_free_group_offsets, 0);
    char errstr[512] = "";
    kn_group_offsets *o = NULL;
    int err = commit && share ? kn_admin_alter_share_group_offsets(la->admin, group, l, timeout_ms, &o, errstr,
                                                                   sizeof(errstr))
              : commit ? kn_admin_alter_consumer_group_offsets(la->admin, group, l, timeout_ms, &o, errstr,
                                                             sizeof(errstr))
                     : kn_admin_delete_consumer_group_offsets(la->admin, group, l, timeout_ms, &o, errstr,
                                                              sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = o;
    if (kn_group_offsets_error(o, 0)) {
        lua_pushnil(L);
        lua_pushstring(L, kn_group_offsets_error_message(o, 0));
        lua_pushstring(L, kn_err_name(kn_group_offsets_error(o, 0)));
        lk_guard_release(g);
        return 3;
    }
    lk_push_partition_items(L, kn_group_offsets_partitions(o, 0), false);
    lk_guard_release(g);
    return 1;
}

/* admin:alter_consumer_group_offsets(group, {[topic] = {[p] = offset |
 *   {offset=, leader_epoch=, metadata=}}}, {timeout_ms=}) ->
 *   {[topic] = {[p] = {} or {error=...}}}, or nil, msg, code */
static int lk_admin_alter_consumer_group_offsets(lua_State *L) { return lk_one_group(L, true, false); }

/* admin:delete_consumer_group_offsets(group, {[topic] = {p, ...}},
 *   {timeout_ms=}) -> {[topic] = {[p] = {} or {error=...}}}, or nil, msg, code */
static int lk_admin_delete_consumer_group_offsets(lua_State *L) { return lk_one_group(L, false, false); }

static int lk_admin_list_consumer_group_offsets(lua_State *L) { return lk_list_group_offsets(L, false); }

static int lk_admin_describe_consumer_groups(lua_State *L) { return lk_describe_groups(L, LK_GROUPS_CONSUMER); }

/* admin:describe_classic_groups: the same shape, DescribeGroups only,
 * any protocol type (protocol_type = "consumer", "connect", "", ...). */
static int lk_admin_describe_classic_groups(lua_State *L) { return lk_describe_groups(L, LK_GROUPS_CLASSIC); }

/* ---- share groups ---------------------------------------------------- */

/* admin:describe_share_groups: describe_consumer_groups' shape, type
 * "share", members without instance id or target assignment. */
static int lk_admin_describe_share_groups(lua_State *L) { return lk_describe_groups(L, LK_GROUPS_SHARE); }

/* admin:list_share_group_offsets({"g1", g2 = {[topic] = {p...}}},
 *   {timeout_ms=}) -> group -> {offsets = {[topic] = {[p] = {offset=
 *   (nil: no start offset), leader_epoch=, lag=} or {error=...}}}} */
static int lk_admin_list_share_group_offsets(lua_State *L) { return lk_list_group_offsets(L, true); }

/* admin:alter_share_group_offsets(group, {[topic] = {[p] = start offset}},
 *   {timeout_ms=}) -> {[topic] = {[p] = {} or {error=...}}}, or nil, msg, code */
static int lk_admin_alter_share_group_offsets(lua_State *L) { return lk_one_group(L, true, true); }

/* admin:delete_share_group_offsets(group, {topics}, {timeout_ms=}) ->
 *   topic -> {} or {error=...} (a group error on every topic) */
static int lk_admin_delete_share_group_offsets(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    const char *group = luaL_checkstring(L, 2);
    size_t n = lk_check_strings(L, 3, "array of topic names expected");
    int timeout_ms = lk_timeout_opt(L, 4);
    const char **topics = lk_strings(L, 3, n);
    lk_guard *g = lk_guard_push(L, lk_free_group_results, 0);
    char errstr[512] = "";
    kn_group_results *res = NULL;
    int err = kn_admin_delete_share_group_offsets(la->admin, group, topics, n, timeout_ms, &res, errstr,
                                                  sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lk_push_group_results(L, res);
    lk_guard_release(g);
    return 1;
}

/* ---- streams groups -------------------------------------------------- */

/* admin:describe_streams_groups: describe_consumer_groups' shape, type
 * "streams", plus topology_epoch, subtopologies and, per member,
 * process_id and tasks (lk_admin_streams.c). */
static int lk_admin_describe_streams_groups(lua_State *L) { return lk_describe_groups(L, LK_GROUPS_STREAMS); }

const luaL_Reg lk_admin_group_methods[] = {
    {"describe_classic_groups", lk_admin_describe_classic_groups},
    {"list_groups", lk_admin_list_groups},
    {"describe_consumer_groups", lk_admin_describe_consumer_groups},
    {"list_consumer_group_offsets", lk_admin_list_consumer_group_offsets},
    {"alter_consumer_group_offsets", lk_admin_alter_consumer_group_offsets},
    {"delete_consumer_group_offsets", lk_admin_delete_consumer_group_offsets},
    {"delete_consumer_groups", lk_admin_delete_consumer_groups},
    {"remove_members_from_consumer_group", lk_admin_remove_members},
    {"describe_share_groups", lk_admin_describe_share_groups},
    {"list_share_group_offsets", lk_admin_list_share_group_offsets},
    {"alter_share_group_offsets", lk_admin_alter_share_group_offsets},
    {"delete_share_group_offsets", lk_admin_delete_share_group_offsets},
    {"delete_share_groups", lk_admin_delete_consumer_groups},
    {"describe_streams_groups", lk_admin_describe_streams_groups},
    /* Java runs these through its consumer-group handlers; so do we. */
    {"list_streams_group_offsets", lk_admin_list_consumer_group_offsets},
    {"alter_streams_group_offsets", lk_admin_alter_consumer_group_offsets},
    {"delete_streams_group_offsets", lk_admin_delete_consumer_group_offsets},
    {"delete_streams_groups", lk_admin_delete_consumer_groups},
    {NULL, NULL},
};

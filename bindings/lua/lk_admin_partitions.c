/*
 * lk_admin_partitions.c: admin:create_partitions,
 * admin:delete_records and admin:describe_log_dirs.
 *
 * create_partitions({ [topic] = count | { count =, assignments = {
 * {broker, ...}, ... } } }, {validate_only=, timeout_ms=}) -> topic ->
 * {} or {error=...}; delete_records({ [topic] = { [partition] = offset
 * } }, {timeout_ms=}) -> { [topic] = { [partition] = { low_watermark = }
 * or {error=...} } } (offset -1: before the high watermark).
 * describe_replica_log_dirs({ { topic =, partition =, broker = }, ... })
 * and alter_replica_log_dirs({ { topic =, partition =, broker =, dir = },
 * ... }) -> one entry per distinct replica, in order: { topic =,
 * partition =, broker =, current_dir =, current_lag =, future_dir =,
 * future_lag = } (describe; nil dirs when none) or with error fields.
 */
#include <string.h>

#include "kafka_native_consumer.h"
#include "lk_admin.h"

static void lk_free_topic_results(void *p) { kn_topic_results_destroy((kn_topic_results *)p); }
static void lk_free_offset_results(void *p) { kn_offset_results_destroy((kn_offset_results *)p); }

static const char lk_cp_shape[] =
    "{ [topic] = count or { count =, assignments = { {broker, ...}, ... } } } expected";

/* Checks one spec value at the top (raising); returns its rows and
 * replicas per row through *rowsp / *replicasp. */
static lua_Integer lk_cp_check(lua_State *L, size_t *rowsp, size_t *replicasp) {
    lua_Integer count;
    *rowsp = *replicasp = 0;
    if (lk_get_integer(L, -1, &count))
        return count;
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_argerror(L, 2, lk_cp_shape);
    lua_getfield(L, -1, "count");
    if (!lk_get_integer(L, -1, &count))
        luaL_argerror(L, 2, lk_cp_shape);
    lua_getfield(L, -2, "assignments");
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, 2, lk_cp_shape);
        *rowsp = lua_rawlen(L, -1);
        for (size_t r = 1; r <= *rowsp; r++) {
            lua_rawgeti(L, -1, (int)r);
            size_t len = lua_type(L, -1) == LUA_TTABLE ? lua_rawlen(L, -1) : 0;
            if (len == 0 || (r > 1 && len != *replicasp))
                luaL_argerror(
                    L, 2, "assignments: one non-empty array of broker ids per new partition, all as long");
            *replicasp = len;
            for (size_t b = 1; b <= len; b++) {
                lua_Integer id;
                lua_rawgeti(L, -1, (int)b);
                if (!lk_get_integer(L, -1, &id) || id < 0 || id > 0x7fffffff)
                    luaL_argerror(L, 2, "assignments: broker ids are integers >= 0");
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 2);
    return count;
}

static int lk_admin_create_partitions(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = lk_opt_bool_field(L, 3, "validate_only", 0) ? KN_ADMIN_VALIDATE_ONLY : 0;
    lua_settop(L, 3);
    size_t n = 0, ids = 0, rows, replicas;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        lua_Integer count = lk_cp_check(L, &rows, &replicas);
        if (lua_type(L, -2) != LUA_TSTRING || count < 0 || count > 0x7fffffff)
            luaL_argerror(L, 2, lk_cp_shape);
        n++;
        ids += rows * replicas;
        lua_pop(L, 1);
    }
    kn_new_partitions *specs = (kn_new_partitions *)lua_newuserdata(L, (n ? n : 1) * sizeof(*specs));
    int32_t *id_buf = (int32_t *)lua_newuserdata(L, (ids ? ids : 1) * sizeof(*id_buf));
    size_t k = 0, used = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        kn_new_partitions *s = &specs[k++];
        memset(s, 0, sizeof(*s));
        s->total_count = (int32_t)lk_cp_check(L, &rows, &replicas);
        s->topic = lua_tostring(L, -2); /* a key of the argument: alive */
        if (rows) {
            s->assignments = id_buf + used;
            s->assignment_count = rows;
            s->replicas = replicas;
            lua_getfield(L, -1, "assignments");
            for (size_t r = 1; r <= rows; r++) {
                lua_rawgeti(L, -1, (int)r);
                for (size_t b = 1; b <= replicas; b++) {
                    lua_Integer id = 0;
                    lua_rawgeti(L, -1, (int)b);
                    lk_get_integer(L, -1, &id);
                    id_buf[used++] = (int32_t)id;
                    lua_pop(L, 1);
                }
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lk_guard *g = lk_guard_push(L, lk_free_topic_results, 0);
    char errstr[512] = "";
    kn_topic_results *res = NULL;
    int err =
        kn_admin_create_partitions(la->admin, specs, n, flags, timeout_ms, &res, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lua_createtable(L, 0, (int)kn_topic_results_count(res));
    for (size_t i = 0; i < kn_topic_results_count(res); i++) {
        lua_createtable(L, 0, 3);
        int terr = kn_topic_results_error(res, i);
        if (terr)
            lk_set_error(L, terr, kn_topic_results_error_message(res, i));
        lua_setfield(L, -2, kn_topic_results_name(res, i));
    }
    lk_guard_release(g);
    return 1;
}

static const char lk_before_shape[] =
    "{ [topic] = { [partition] = offset } } expected (offset -1: high watermark)";

/* An offset to delete before, at the top; raises on anything else. */
static int64_t lk_before_offset(lua_State *L) {
    lua_Integer off;
    if (!lk_get_integer(L, -1, &off) || off < -1)
        luaL_argerror(L, 2, lk_before_shape);
    return off;
}

static void lk_low_watermark_fields(lua_State *L, const kn_offset_results *res, size_t i) {
    lk_set_int(L, "low_watermark", kn_offset_results_offset(res, i));
}

static int lk_admin_delete_records(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    lua_settop(L, 3);
    lk_guard *lg = lk_offsets_arg(L, lk_before_shape, lk_before_shape, lk_before_offset);
    lk_guard *g = lk_guard_push(L, lk_free_offset_results, 0);
    char errstr[512] = "";
    kn_offset_results *res = NULL;
    int err = kn_admin_delete_records(la->admin, (kn_topic_partition_list *)lg->ptr, timeout_ms, &res, errstr,
                                      sizeof(errstr));
    lk_guard_release(lg);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = res;
    lk_push_offset_results(L, res, lk_low_watermark_fields);
    lk_guard_release(g);
    return 1;
}

static void lk_free_log_dirs(void *p) { kn_log_dirs_destroy((kn_log_dirs *)p); }

/* admin:describe_log_dirs({broker ids}, {timeout_ms=}) -> { [broker] =
 * { [path] = { total_bytes=, usable_bytes=, error=, replicas = { [topic]
 * = { [p] = { size=, offset_lag=, future= } } } } } or {error=...} } */
static int lk_admin_describe_log_dirs(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n = lua_rawlen(L, 2);
    int32_t *ids = (int32_t *)lua_newuserdata(L, (n ? n : 1) * sizeof(*ids));
    for (size_t i = 0; i < n; i++) {
        lua_Integer id;
        lua_rawgeti(L, 2, (int)(i + 1));
        if (!lk_get_integer(L, -1, &id) || id < 0 || id > 0x7fffffff)
            return luaL_argerror(L, 2, "array of broker ids expected");
        ids[i] = (int32_t)id;
        lua_pop(L, 1);
    }
    lk_guard *g = lk_guard_push(L, lk_free_log_dirs, 0);
    char errstr[512] = "";
    kn_log_dirs *d = NULL;
    int err = kn_admin_describe_log_dirs(la->admin, ids, n, timeout_ms, &d, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    lua_newtable(L);
    for (size_t b = 0; b < kn_log_dirs_broker_count(d); b++) {
        lua_newtable(L);
        int berr = kn_log_dirs_broker_error(d, b);
        if (berr)
            lk_set_error(L, berr, kn_log_dirs_broker_error_message(d, b));
        for (size_t i = 0; i < kn_log_dirs_dir_count(d, b); i++) {
            lua_createtable(L, 0, 4);
            if (kn_log_dirs_dir_error(d, b, i)) {
                lk_set_str(L, "error", kn_err_name(kn_log_dirs_dir_error(d, b, i)));
                lk_set_int(L, "code", kn_log_dirs_dir_error(d, b, i));
            }
            if (kn_log_dirs_dir_total_bytes(d, b, i) >= 0)
                lk_set_int(L, "total_bytes", kn_log_dirs_dir_total_bytes(d, b, i));
            if (kn_log_dirs_dir_usable_bytes(d, b, i) >= 0)
                lk_set_int(L, "usable_bytes", kn_log_dirs_dir_usable_bytes(d, b, i));
            lua_newtable(L);
            for (size_t r = 0; r < kn_log_dirs_replica_count(d, b, i); r++) {
                lk_push_topic_table(L, kn_log_dirs_replica_topic(d, b, i, r));
                lua_createtable(L, 0, 3);
                lk_set_int(L, "size", kn_log_dirs_replica_size(d, b, i, r));
                lk_set_int(L, "offset_lag", kn_log_dirs_replica_offset_lag(d, b, i, r));
                lua_pushboolean(L, kn_log_dirs_replica_is_future(d, b, i, r));
                lua_setfield(L, -2, "future");
                lua_rawseti(L, -2, (int)kn_log_dirs_replica_partition(d, b, i, r));
                lua_pop(L, 1);
            }
            lua_setfield(L, -2, "replicas");
            lua_setfield(L, -2, kn_log_dirs_dir_path(d, b, i));
        }
        lua_rawseti(L, -2, (int)kn_log_dirs_broker_id(d, b));
    }
    lk_guard_release(g);
    return 1;
}

static void lk_free_rdirs(void *p) { kn_replica_log_dirs_destroy((kn_replica_log_dirs *)p); }

static int lk_replica_dirs(lua_State *L, bool alter) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    const char *shape = alter ? "array of { topic =, partition =, broker =, dir = } expected"
                              : "array of { topic =, partition =, broker = } expected";
    size_t n = lua_rawlen(L, 2);
    kn_replica_dir *v = (kn_replica_dir *)lua_newuserdata(L, (n ? n : 1) * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        if (!lua_istable(L, -1))
            return luaL_argerror(L, 2, shape);
        lua_getfield(L, -1, "topic");
        lua_getfield(L, -2, "partition");
        lua_getfield(L, -3, "broker");
        lua_getfield(L, -4, "dir");
        lua_Integer p, b;
        if (lua_type(L, -4) != LUA_TSTRING || !lk_get_integer(L, -3, &p) || !lk_get_integer(L, -2, &b) ||
            p < 0 || p > 0x7fffffff || b < 0 || b > 0x7fffffff || (alter && lua_type(L, -1) != LUA_TSTRING))
            return luaL_argerror(L, 2, shape);
        v[i].topic = lua_tostring(L, -4); /* values of the argument: alive */
        v[i].partition = (int32_t)p;
        v[i].broker = (int32_t)b;
        v[i].dir = alter ? lua_tostring(L, -1) : NULL;
        lua_pop(L, 5);
    }
    lk_guard *g = lk_guard_push(L, lk_free_rdirs, 0);
    char errstr[512] = "";
    kn_replica_log_dirs *d = NULL;
    int err =
        alter ? kn_admin_alter_replica_log_dirs(la->admin, v, n, timeout_ms, &d, errstr, sizeof(errstr))
              : kn_admin_describe_replica_log_dirs(la->admin, v, n, timeout_ms, &d, errstr, sizeof(errstr));
    if (err == KN_ERR__INVALID_ARG)
        return luaL_argerror(L, 2, errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    lua_createtable(L, (int)kn_replica_log_dirs_count(d), 0);
    for (size_t i = 0; i < kn_replica_log_dirs_count(d); i++) {
        lua_createtable(L, 0, 7);
        lk_set_str(L, "topic", kn_replica_log_dirs_topic(d, i));
        lk_set_int(L, "partition", kn_replica_log_dirs_partition(d, i));
        lk_set_int(L, "broker", kn_replica_log_dirs_broker(d, i));
        int rerr = kn_replica_log_dirs_error(d, i);
        if (rerr) {
            lk_set_error(L, rerr, kn_replica_log_dirs_error_message(d, i));
        } else if (!alter) {
            lk_set_str(L, "current_dir", kn_replica_log_dirs_current_dir(d, i));
            if (kn_replica_log_dirs_current_dir(d, i))
                lk_set_int(L, "current_lag", kn_replica_log_dirs_current_lag(d, i));
            lk_set_str(L, "future_dir", kn_replica_log_dirs_future_dir(d, i));
            if (kn_replica_log_dirs_future_dir(d, i))
                lk_set_int(L, "future_lag", kn_replica_log_dirs_future_lag(d, i));
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

static int lk_admin_describe_replica_log_dirs(lua_State *L) { return lk_replica_dirs(L, false); }
static int lk_admin_alter_replica_log_dirs(lua_State *L) { return lk_replica_dirs(L, true); }

const luaL_Reg lk_admin_partition_methods[] = {
    {"describe_replica_log_dirs", lk_admin_describe_replica_log_dirs},
    {"alter_replica_log_dirs", lk_admin_alter_replica_log_dirs},
    {"describe_log_dirs", lk_admin_describe_log_dirs},
    {"create_partitions", lk_admin_create_partitions},
    {"delete_records", lk_admin_delete_records},
    {NULL, NULL},
};

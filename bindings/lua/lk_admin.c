/*
 * lk_admin.c: the admin client userdata (kafka_native.admin(config)).
 *
 * The userdata holds only the kn_admin pointer; it is created zeroed
 * (closed) before anything is allocated, so a failed constructor leaves
 * nothing behind but garbage. close(), __gc and __close share one
 * idempotent path; any other method on a closed handle raises
 * "admin client is closed".
 *
 * Argument tables are checked completely (raising on a wrong shape)
 * before any C memory is allocated; C memory held while Lua values are
 * built sits in a guard userdata whose __gc frees it, so a raise (out of
 * memory) can never leak. Runtime failures of a whole call
 * return nil, message, code; per-topic failures are fields of the result.
 * This file has the handle and the topic/cluster methods; each further
 * family of methods has its own lk_admin_<family>.c (lk_admin.h).
 */
#include <stdio.h>
#include <string.h>

#include "kafka_native_admin.h"
#include "lk.h"
#include "lk_metrics.h"
#include "lk_admin.h"

lk_admin *lk_admin_check(lua_State *L) {
    lk_admin *la = (lk_admin *)luaL_checkudata(L, 1, LK_ADMIN_MT);
    if (la->admin == NULL)
        luaL_error(L, "admin client is closed");
    if (kn_admin_forked(la->admin))
        luaL_error(L, LK_FORKED_MSG);
    return la;
}

/* The one close path; run_lua: hand the last log records to the log
 * function (never from __gc). */
static void lk_admin_close_ud(lua_State *L, lk_admin *la, int run_lua) {
    if (la->admin && kn_admin_forked(la->admin)) {
        la->admin = NULL; /* the parent's: left alone */
        la->logq = NULL;
        lk_forked_collected("admin client");
        return;
    }
    int collected = !run_lua && la->admin;
    if (la->admin) {
        kn_admin_destroy(la->admin); /* joins its thread: no request waits */
        la->admin = NULL;
    }
    if (collected)
        lk_log_collected(la->logq, "admin client collected without close()");
    if (la->logq && run_lua) {
        lua_getuservalue(L, 1);
        lk_log_deliver(L, la->logq, lua_gettop(L));
        lua_pop(L, 1);
    }
    kn_log_queue_destroy(la->logq);
    la->logq = NULL;
}

/* close() and __close (5.4 passes the error as a 2nd argument). */
static int lk_admin_close(lua_State *L) {
    lk_admin *la = (lk_admin *)luaL_checkudata(L, 1, LK_ADMIN_MT);
    if (la->admin && kn_admin_forked(la->admin))
        return luaL_error(L, LK_FORKED_MSG);
    lk_admin_close_ud(L, la, 1);
    return 0;
}

static int lk_admin_gc(lua_State *L) {
    lk_admin_close_ud(L, (lk_admin *)luaL_checkudata(L, 1, LK_ADMIN_MT), 0);
    return 0;
}

/* Every admin method runs through this closure (upvalue 1: the method):
 * after the call, the log records it caused reach options.log on this
 * thread. Errors raised by the method propagate unchanged. */
static int lk_admin_logged(lua_State *L) {
    int n = lua_gettop(L);
    lua_pushvalue(L, 1);                   /* n + 1: self, kept */
    lua_pushvalue(L, lua_upvalueindex(1)); /* n + 2: the method */
    for (int i = 1; i <= n; i++)
        lua_pushvalue(L, i);
    lua_call(L, n, LUA_MULTRET);
    int nres = lua_gettop(L) - (n + 1);
    lk_admin *la = (lk_admin *)luaL_testudata(L, n + 1, LK_ADMIN_MT);
    if (la && la->logq && kn_log_queue_count(la->logq)) {
        lua_getuservalue(L, n + 1);
        lk_log_deliver(L, la->logq, lua_gettop(L));
        lua_pop(L, 1);
    }
    return nres;
}

static int lk_admin_tostring(lua_State *L) {
    lk_admin *la = (lk_admin *)luaL_checkudata(L, 1, LK_ADMIN_MT);
    if (la->admin)
        lua_pushfstring(L, "kafka_native.admin (%p)", (void *)la);
    else
        lua_pushliteral(L, "kafka_native.admin (closed)");
    return 1;
}

int lk_admin_new(lua_State *L) {
    luaL_checkany(L, 1);
    lk_check_opt_table(L, 2);
    lua_settop(L, 2);
    lk_log_check_opts(L, 2);
    lk_oauth_check_opts(L, 2);
    lk_admin *la = (lk_admin *)lk_newuserdata(L, sizeof(*la));
    memset(la, 0, sizeof(*la));
    luaL_getmetatable(L, LK_ADMIN_MT);
    lua_setmetatable(L, -2);
    lua_createtable(L, 0, 1);
    lua_setuservalue(L, -2);

    char errstr[512] = "";
    int err = KN_OK;
    kn_conf *conf = lk_conf_from_arg(L, 1, KN_CLIENT_ADMIN, errstr, sizeof(errstr), &err);
    if (!conf)
        return lk_push_error(L, err, errstr);
    lua_getuservalue(L, 3);
    err = lk_log_setup(L, 2, lua_gettop(L), conf, &la->logq);
    if (!err)
        err = lk_oauth_setup(L, 2, lua_gettop(L), conf);
    lua_pop(L, 1);
    if (err) {
        kn_conf_destroy(conf);
        return lk_push_error(L, err, NULL);
    }
    la->admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    if (!la->admin)
        return lk_push_error(L, kn_last_error(), errstr);
    return 1;
}

/* ---- guards ------------------------------------------------------------
 * C memory a method holds while it builds Lua values (topic specs,
 * result objects) is anchored in a guard userdata on the stack: if a Lua
 * allocation raises midway, the guard's __gc frees it, so no error path
 * leaks and no C frame is jumped over holding memory. */

#define LK_GUARD_MT "kafka_native.guard"

static int lk_guard_gc(lua_State *L) {
    lk_guard *g = (lk_guard *)luaL_checkudata(L, 1, LK_GUARD_MT);
    if (g->ptr) {
        g->destroy(g->ptr);
        g->ptr = NULL;
    }
    return 0;
}

/* Pushes an empty guard that will call destroy on whatever ptr it gets,
 * with `extra` zeroed bytes after it (lk_guard_extra) for data that must
 * live exactly as long as the guard. */
lk_guard *lk_guard_push(lua_State *L, void (*destroy)(void *ptr), size_t extra) {
    lk_guard *g = (lk_guard *)lua_newuserdata(L, sizeof(*g) + extra);
    memset(g, 0, sizeof(*g) + extra);
    g->destroy = destroy;
    luaL_getmetatable(L, LK_GUARD_MT);
    lua_setmetatable(L, -2);
    return g;
}

void *lk_guard_extra(lk_guard *g) { return g + 1; }

/* Frees the guarded object now (the normal path). */
void lk_guard_release(lk_guard *g) {
    if (g->ptr) {
        g->destroy(g->ptr);
        g->ptr = NULL;
    }
}

static void lk_free_topic_results(void *p) { kn_topic_results_destroy((kn_topic_results *)p); }
static void lk_free_topic_list(void *p) { kn_topic_list_destroy((kn_topic_list *)p); }
static void lk_free_descriptions(void *p) { kn_topic_descriptions_destroy((kn_topic_descriptions *)p); }
static void lk_free_cluster(void *p) { kn_cluster_description_destroy((kn_cluster_description *)p); }

/* The kn_new_topic specs of one create_topics call, kept in the extra
 * bytes of their guard. */
typedef struct lk_new_topics {
    size_t n;
    kn_new_topic *items[];
} lk_new_topics;

static void lk_free_new_topics(void *p) {
    lk_new_topics *nts = (lk_new_topics *)p;
    for (size_t i = 0; i < nts->n; i++) {
        kn_new_topic_destroy(nts->items[i]);
        nts->items[i] = NULL;
    }
}

/* timeout_ms option (default -1: default.api.timeout.ms). */
int lk_timeout_opt(lua_State *L, int idx) {
    lk_check_opt_table(L, idx);
    lua_Integer t = lk_opt_int_field(L, idx, "timeout_ms", -1);
    if (t > 0x7fffffff)
        t = 0x7fffffff;
    return (int)t;
}

size_t lk_check_strings(lua_State *L, int idx, const char *what) {
    luaL_checktype(L, idx, LUA_TTABLE);
    size_t n = lua_rawlen(L, idx);
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, (int)i);
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(L, idx, what);
        lua_pop(L, 1);
    }
    return n;
}

const char **lk_strings(lua_State *L, int idx, size_t n) {
    const char **out = (const char **)lua_newuserdata(L, (n ? n : 1) * sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, idx, (int)(i + 1));
        out[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    return out;
}

/* Topic names: empty ones are the library's to judge (they fail their
 * own entry, as in Java). */
static size_t lk_check_names(lua_State *L, int idx) {
    return lk_check_strings(L, idx, "array of topic names expected");
}

void lk_set_str(lua_State *L, const char *key, const char *value) {
    if (value) {
        lua_pushstring(L, value);
        lua_setfield(L, -2, key);
    }
}

void lk_set_int(lua_State *L, const char *key, lua_Integer value) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, key);
}

void lk_set_error(lua_State *L, int err, const char *message) {
    lk_set_str(L, "error", kn_err_name(err));
    lk_set_int(L, "code", err);
    lk_set_str(L, "message", message);
}

void lk_push_topic_table(lua_State *L, const char *topic) {
    lua_getfield(L, -1, topic);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, topic);
    }
}

static void lk_free_tplist(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }

/* Walks the table at 2, checking (l NULL) or filling l. Returns KN_OK
 * or the list's error (out of memory). */
static int lk_walk_offsets(lua_State *L, const char *shape, const char *bad_partition,
                           lk_offset_value_fn value, kn_topic_partition_list *l) {
    int err = KN_OK;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, 2, shape);
        const char *topic = lua_tostring(L, -2);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lua_Integer p;
            if (!lk_get_integer(L, -2, &p) || p < 0 || p > 0x7fffffff)
                luaL_argerror(L, 2, bad_partition);
            int64_t off = value(L);
            if (l && !err) {
                int k = kn_topic_partition_list_add(l, topic, (int32_t)p);
                if (k == KN_ERR__INVALID_ARG)
                    luaL_argerror(L, 2, "topic names must not be empty");
                if (k < 0)
                    err = k;
                else
                    kn_topic_partition_list_set_offset(l, (size_t)k, off);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return err;
}

lk_guard *lk_offsets_arg(lua_State *L, const char *shape, const char *bad_partition,
                         lk_offset_value_fn value) {
    lk_walk_offsets(L, shape, bad_partition, value, NULL);
    lk_guard *lg = lk_guard_push(L, lk_free_tplist, 0);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    lg->ptr = l;
    if (!l || lk_walk_offsets(L, shape, bad_partition, value, l))
        luaL_error(L, "out of memory");
    return lg;
}

void lk_push_offset_results(lua_State *L, const kn_offset_results *res,
                            void (*ok_fields)(lua_State *L, const kn_offset_results *res, size_t i)) {
    lua_newtable(L);
    for (size_t i = 0; i < kn_offset_results_count(res); i++) {
        lk_push_topic_table(L, kn_offset_results_topic(res, i));
        lua_createtable(L, 0, 3);
        int perr = kn_offset_results_error(res, i);
        if (perr)
            lk_set_error(L, perr, kn_offset_results_error_message(res, i));
        else
            ok_fields(L, res, i);
        lua_rawseti(L, -2, (int)kn_offset_results_partition(res, i));
        lua_pop(L, 1);
    }
}

/* Pushes name -> {error=, code=, message=, topic_id=, ...}. */
static void lk_push_topic_results(lua_State *L, const kn_topic_results *res, int with_counts) {
    size_t n = kn_topic_results_count(res);
    lua_createtable(L, 0, (int)n);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        int err = kn_topic_results_error(res, i);
        if (err) {
            lk_set_error(L, err, kn_topic_results_error_message(res, i));
        } else {
            lk_set_str(L, "topic_id", kn_topic_results_topic_id(res, i));
            if (with_counts && kn_topic_results_partitions(res, i) >= 0) {
                lk_set_int(L, "partitions", kn_topic_results_partitions(res, i));
                lk_set_int(L, "replication_factor", kn_topic_results_replication_factor(res, i));
            }
        }
        lua_setfield(L, -2, kn_topic_results_name(res, i));
    }
}

/* ---- create_topics -------------------------------------------------- */

/* Raises unless the topic spec at the top of the stack is well formed. */
static void lk_check_new_topic(lua_State *L, int argidx) {
    char value[1024];
    lua_Integer v;
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_argerror(L, argidx, "array of topic tables expected");
    lua_getfield(L, -1, "name");
    if (lua_type(L, -1) != LUA_TSTRING)
        luaL_argerror(L, argidx, "topic 'name' (string) expected");
    lua_pop(L, 1);
    static const char *const int_fields[] = {"partitions", "replication_factor"};
    for (int f = 0; f < 2; f++) {
        lua_getfield(L, -1, int_fields[f]);
        if (!lua_isnil(L, -1) &&
            (!lk_get_integer(L, -1, &v) || v < -1 || v > (f == 0 ? 0x7fffffff : 0x7fff))) {
            lua_pushfstring(L, "topic '%s' must be an integer", int_fields[f]);
            luaL_argerror(L, argidx, lua_tostring(L, -1));
        }
        lua_pop(L, 1);
    }
    lua_getfield(L, -1, "configs");
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, argidx, "topic 'configs' must be a table");
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            if (lua_type(L, -2) != LUA_TSTRING || !lk_conf_value(L, value, sizeof(value)))
                luaL_argerror(L, argidx,
                              "topic 'configs' must map names to strings, numbers "
                              "or booleans");
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "replica_assignment");
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, argidx, "topic 'replica_assignment' must be a table");
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            int ok = lk_get_integer(L, -2, &v) && v >= 0 && v <= 0x7fffffff && lua_type(L, -1) == LUA_TTABLE;
            for (size_t b = 1; ok && b <= lua_rawlen(L, -1); b++) {
                lua_rawgeti(L, -1, (int)b);
                ok = lk_get_integer(L, -1, &v) && v >= 0 && v <= 0x7fffffff;
                lua_pop(L, 1);
            }
            if (!ok)
                luaL_argerror(L, argidx,
                              "topic 'replica_assignment' must map partition "
                              "numbers to arrays of broker ids");
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

static lua_Integer lk_field_int(lua_State *L, const char *key, lua_Integer def) {
    lua_Integer v = def;
    lua_getfield(L, -1, key);
    if (!lua_isnil(L, -1))
        lk_get_integer(L, -1, &v);
    lua_pop(L, 1);
    return v;
}

/* Builds the kn_new_topic for the (checked) spec at the top of the
 * stack into *slot (guarded by the caller, so a raise cannot leak it).
 * Returns 0 or KN_ERR__NOMEM. */
static int lk_build_new_topic(lua_State *L, kn_new_topic **slot) {
    char value[1024];
    int32_t partitions = (int32_t)lk_field_int(L, "partitions", -1);
    int16_t replication_factor = (int16_t)lk_field_int(L, "replication_factor", -1);
    lua_getfield(L, -1, "name");
    kn_new_topic *nt = kn_new_topic_new(lua_tostring(L, -1), partitions, replication_factor);
    lua_pop(L, 1);
    if (!nt)
        return KN_ERR__NOMEM;
    *slot = nt;
    int err = KN_OK;
    lua_getfield(L, -1, "configs");
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lk_conf_value(L, value, sizeof(value));
            if (!err)
                err = kn_new_topic_set_config(nt, lua_tostring(L, -2), value);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    lua_getfield(L, -1, "replica_assignment");
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lua_Integer part = 0, id = 0;
            lk_get_integer(L, -2, &part);
            size_t nb = lua_rawlen(L, -1);
            int32_t *ids = (int32_t *)lua_newuserdata(L, (nb ? nb : 1) * sizeof(*ids));
            for (size_t b = 0; b < nb; b++) {
                lua_rawgeti(L, -2, (int)(b + 1));
                lk_get_integer(L, -1, &id);
                ids[b] = (int32_t)id;
                lua_pop(L, 1);
            }
            if (!err)
                err = kn_new_topic_set_replica_assignment(nt, (int32_t)part, ids, nb);
            lua_pop(L, 2);
        }
    }
    lua_pop(L, 1);
    return err;
}

/* admin:create_topics({ {name=, partitions=, replication_factor=,
 *   configs={...}, replica_assignment={[0]={1,2}}}, ... },
 *   {timeout_ms=, validate_only=}) -> name -> result, or nil, msg, code */
static int lk_admin_create_topics(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = lk_opt_bool_field(L, 3, "validate_only", 0) ? KN_ADMIN_VALIDATE_ONLY : 0;
    size_t n = lua_rawlen(L, 2);
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, (int)i);
        lk_check_new_topic(L, 2);
        lua_pop(L, 1);
    }

    lk_guard *spec_guard =
        lk_guard_push(L, lk_free_new_topics, sizeof(lk_new_topics) + n * sizeof(kn_new_topic *));
    lk_new_topics *nts = (lk_new_topics *)lk_guard_extra(spec_guard);
    nts->n = n;
    spec_guard->ptr = nts;
    int err = KN_OK;
    for (size_t i = 0; i < n && !err; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        err = lk_build_new_topic(L, &nts->items[i]);
        lua_pop(L, 1);
    }
    lk_guard *res_guard = lk_guard_push(L, lk_free_topic_results, 0);
    char errstr[512] = "";
    kn_topic_results *res = NULL;
    if (!err)
        err =
            kn_admin_create_topics(la->admin, nts->items, n, flags, timeout_ms, &res, errstr, sizeof(errstr));
    res_guard->ptr = res;
    lk_guard_release(spec_guard);
    if (err)
        return lk_push_error(L, err, errstr);
    lk_push_topic_results(L, res, 1);
    lk_guard_release(res_guard);
    return 1;
}

/* admin:delete_topics({names}, {timeout_ms=}) -> name -> result */
static int lk_admin_delete_topics(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_names(L, 2);
    int timeout_ms = lk_timeout_opt(L, 3);
    const char **names = lk_strings(L, 2, n);
    lk_guard *guard = lk_guard_push(L, lk_free_topic_results, 0);
    char errstr[512] = "";
    kn_topic_results *res = NULL;
    int err = kn_admin_delete_topics(la->admin, names, n, timeout_ms, &res, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    guard->ptr = res;
    lk_push_topic_results(L, res, 0);
    lk_guard_release(guard);
    return 1;
}

/* admin:list_topics({internal=false, timeout_ms=}) -> array of
 * {name=, topic_id=, internal=} sorted by name */
static int lk_admin_list_topics(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    int flags = lk_opt_bool_field(L, 2, "internal", 0) ? KN_ADMIN_LIST_INTERNAL : 0;
    lk_guard *guard = lk_guard_push(L, lk_free_topic_list, 0);
    char errstr[512] = "";
    kn_topic_list *list = NULL;
    int err = kn_admin_list_topics(la->admin, flags, timeout_ms, &list, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    guard->ptr = list;
    size_t n = kn_topic_list_count(list);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 3);
        lk_set_str(L, "name", kn_topic_list_name(list, i));
        lk_set_str(L, "topic_id", kn_topic_list_topic_id(list, i));
        lua_pushboolean(L, kn_topic_list_is_internal(list, i));
        lua_setfield(L, -2, "internal");
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(guard);
    return 1;
}

static void lk_push_int_array(lua_State *L, const int32_t *ids, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, ids[i]);
        lua_rawseti(L, -2, (int)(i + 1));
    }
}

static void lk_push_partition(lua_State *L, const kn_partition_info *pi) {
    size_t n;
    const int32_t *ids;
    lua_createtable(L, 0, 7);
    lk_set_int(L, "partition", kn_partition_info_id(pi));
    lk_set_int(L, "leader", kn_partition_info_leader(pi));
    lk_set_int(L, "leader_epoch", kn_partition_info_leader_epoch(pi));
    if (kn_partition_info_error(pi))
        lk_set_str(L, "error", kn_err_name(kn_partition_info_error(pi)));
    ids = kn_partition_info_replicas(pi, &n);
    lk_push_int_array(L, ids, n);
    lua_setfield(L, -2, "replicas");
    ids = kn_partition_info_isr(pi, &n);
    lk_push_int_array(L, ids, n);
    lua_setfield(L, -2, "isr");
    ids = kn_partition_info_offline(pi, &n);
    lk_push_int_array(L, ids, n);
    lua_setfield(L, -2, "offline");
}

/* admin:describe_topics({names}, {timeout_ms=}) -> name -> {name=,
 * topic_id=, internal=, partitions={ {partition=, leader=, ...}, ...}}
 * or name -> {error=, code=, message=} */
static int lk_admin_describe_topics(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_names(L, 2);
    int timeout_ms = lk_timeout_opt(L, 3);
    const char **names = lk_strings(L, 2, n);
    lk_guard *guard = lk_guard_push(L, lk_free_descriptions, 0);
    char errstr[512] = "";
    kn_topic_descriptions *desc = NULL;
    int err = kn_admin_describe_topics(la->admin, names, n, timeout_ms, &desc, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    guard->ptr = desc;
    size_t count = kn_topic_descriptions_count(desc);
    lua_createtable(L, 0, (int)count);
    for (size_t i = 0; i < count; i++) {
        lua_createtable(L, 0, 4);
        lk_set_str(L, "name", kn_topic_descriptions_name(desc, i));
        int terr = kn_topic_descriptions_error(desc, i);
        if (terr) {
            lk_set_error(L, terr, kn_topic_descriptions_error_message(desc, i));
        } else {
            lk_set_str(L, "topic_id", kn_topic_descriptions_topic_id(desc, i));
            lua_pushboolean(L, kn_topic_descriptions_is_internal(desc, i));
            lua_setfield(L, -2, "internal");
            size_t np = kn_topic_descriptions_partition_count(desc, i);
            lua_createtable(L, (int)np, 0);
            for (size_t p = 0; p < np; p++) {
                lk_push_partition(L, kn_topic_descriptions_partition(desc, i, p));
                lua_rawseti(L, -2, (int)(p + 1));
            }
            lua_setfield(L, -2, "partitions");
        }
        lua_setfield(L, -2, kn_topic_descriptions_name(desc, i));
    }
    lk_guard_release(guard);
    return 1;
}

/* admin:describe_cluster({timeout_ms=}) -> {cluster_id=, controller_id=,
 * brokers={ {id=, host=, port=, rack=}, ... }} */
static int lk_admin_describe_cluster(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    lk_guard *guard = lk_guard_push(L, lk_free_cluster, 0);
    char errstr[512] = "";
    kn_cluster_description *cd = NULL;
    int err = kn_admin_describe_cluster(la->admin, timeout_ms, &cd, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    guard->ptr = cd;
    lua_createtable(L, 0, 3);
    lk_set_str(L, "cluster_id", kn_cluster_description_cluster_id(cd));
    lk_set_int(L, "controller_id", kn_cluster_description_controller_id(cd));
    size_t n = kn_cluster_description_broker_count(cd);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lk_set_int(L, "id", kn_cluster_description_broker_id(cd, i));
        lk_set_str(L, "host", kn_cluster_description_broker_host(cd, i));
        lk_set_int(L, "port", kn_cluster_description_broker_port(cd, i));
        lk_set_str(L, "rack", kn_cluster_description_broker_rack(cd, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lua_setfield(L, -2, "brokers");
    lk_guard_release(guard);
    return 1;
}

/* admin:wait_for_topics({names}, timeout_ms) -> true, or nil, msg, code */
static int lk_admin_wait_for_topics(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_names(L, 2);
    lua_Integer timeout_ms = -1;
    if (!lua_isnoneornil(L, 3) && !lk_get_integer(L, 3, &timeout_ms))
        return luaL_argerror(L, 3, "timeout_ms (integer) expected");
    if (timeout_ms > 0x7fffffff)
        timeout_ms = 0x7fffffff;
    const char **names = lk_strings(L, 2, n);
    char errstr[512] = "";
    int err = kn_admin_wait_for_topics(la->admin, names, n, (int)timeout_ms, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

static int lk_admin_instance_id(lua_State *L) {
    return lk_telemetry_instance_id(L, LK_CLIENT_ADMIN, lk_admin_check(L)->admin);
}

static int lk_admin_register_metric(lua_State *L) {
    return lk_telemetry_register_metric(L, LK_CLIENT_ADMIN, lk_admin_check(L)->admin, 1);
}

static int lk_admin_unregister_metric(lua_State *L) {
    return lk_telemetry_register_metric(L, LK_CLIENT_ADMIN, lk_admin_check(L)->admin, 0);
}

/* admin:kafka_metrics([group]) / :kafka_metric(group, name[, tags]):
 * Kafka-named metrics (lk_metrics.c, docs/metrics.md). */
static int lk_admin_walk(void *h, kn_metric_visit_fn fn, void *ctx) { return kn_admin_metrics(h, fn, ctx); }
static int lk_admin_kafka_metrics(lua_State *L) {
    return lk_metrics_push(L, lk_admin_walk, lk_admin_check(L)->admin, false);
}
static int lk_admin_kafka_metric(lua_State *L) {
    return lk_metrics_push(L, lk_admin_walk, lk_admin_check(L)->admin, true);
}

static const luaL_Reg lk_admin_methods[] = {
    {"client_instance_id", lk_admin_instance_id},
    {"register_metric_for_subscription", lk_admin_register_metric},
    {"unregister_metric_from_subscription", lk_admin_unregister_metric},
    {"create_topics", lk_admin_create_topics},
    {"delete_topics", lk_admin_delete_topics},
    {"list_topics", lk_admin_list_topics},
    {"describe_topics", lk_admin_describe_topics},
    {"describe_cluster", lk_admin_describe_cluster},
    {"kafka_metrics", lk_admin_kafka_metrics},
    {"kafka_metric", lk_admin_kafka_metric},
    {"wait_for_topics", lk_admin_wait_for_topics},
    {"close", lk_admin_close},
    {NULL, NULL},
};

static const luaL_Reg lk_admin_meta[] = {
    {"__gc", lk_admin_gc},
#if LUA_VERSION_NUM >= 504
    {"__close", lk_admin_close},
#endif
    {"__tostring", lk_admin_tostring},
    {NULL, NULL},
};

void lk_admin_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_GUARD_MT)) {
        lua_pushcfunction(L, lk_guard_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, LK_ADMIN_MT)) {
        luaL_setfuncs(L, lk_admin_meta, 0);
        lua_createtable(L, 0, (int)(sizeof lk_admin_methods / sizeof lk_admin_methods[0]));
        const luaL_Reg *const families[] = {lk_admin_methods,           lk_admin_config_methods,
                                            lk_admin_group_methods,     lk_admin_offset_methods,
                                            lk_admin_partition_methods, lk_admin_cluster_methods,
                                            lk_admin_quota_methods,     lk_admin_scram_methods,
                                            lk_admin_acl_methods,       lk_admin_txn_methods,
                                            lk_admin_token_methods,     lk_admin_reassign_methods,
                                            lk_admin_raft_methods};
        for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
            for (const luaL_Reg *m = families[f]; m->name; m++) {
                lua_pushcfunction(L, m->func);
                lua_pushcclosure(L, lk_admin_logged, 1);
                lua_setfield(L, -2, m->name);
            }
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "kafka_native.admin");
        lua_setfield(L, -2, "__name");
    }
    lua_pop(L, 1);
}

/*
 * lk_admin_txn.c: admin:describe_transactions, admin:fence_producers,
 * admin:list_transactions, admin:describe_producers and
 * admin:abort_transaction.
 *
 *   describe_transactions({ id, ... }) -> { [id] = { state =,
 *     producer_id =, producer_epoch =, timeout_ms =, start_time_ms = (nil
 *     when no transaction is open), coordinator =, partitions = { [topic]
 *     = { p, ... } } } or { error =, code =, message = } };
 *   fence_producers({ id, ... } [, { transaction_timeout_ms =, timeout_ms
 *     = }]) -> { [id] = { producer_id =, producer_epoch = } or { error = ... } };
 *   list_transactions([{ states =, producer_ids =, duration_ms =,
 *     pattern =, timeout_ms = }]) -> { { transactional_id =, producer_id
 *     =, state = }, ... } sorted by id (error =, code =, message = on the
 *     array when a broker failed);
 *   describe_producers({ [topic] = { p, ... } }) -> { [topic] = { [p] =
 *     { producers = { { producer_id =, producer_epoch =, last_sequence =,
 *     last_timestamp =, coordinator_epoch =, txn_start_offset = }, ... } }
 *     or { error = ... } } } (-1 values left out);
 *   abort_transaction({ topic =, partition =, producer_id =,
 *     producer_epoch =, coordinator_epoch = }) -> true or nil, message, code.
 */
#include <string.h>

#include "lk_admin.h"

static void lk_free_txn(void *p) { kn_txn_descriptions_destroy((kn_txn_descriptions *)p); }
static void lk_free_txn_list(void *p) { kn_txn_list_destroy((kn_txn_list *)p); }
static void lk_free_pstates(void *p) { kn_producer_states_destroy((kn_producer_states *)p); }

static void lk_set_opt_int(lua_State *L, const char *key, int64_t v) {
    if (v >= 0)
        lk_set_int(L, key, (lua_Integer)v);
}

static void lk_push_txn(lua_State *L, const kn_txn_descriptions *d, int full) {
    lua_newtable(L);
    for (size_t i = 0; i < kn_txn_descriptions_count(d); i++) {
        lua_createtable(L, 0, 8);
        int err = kn_txn_descriptions_error(d, i);
        if (err) {
            lk_set_error(L, err, kn_txn_descriptions_error_message(d, i));
        } else {
            lk_set_int(L, "producer_id", kn_txn_descriptions_producer_id(d, i));
            lk_set_int(L, "producer_epoch", kn_txn_descriptions_producer_epoch(d, i));
            if (full) {
                lk_set_str(L, "state", kn_txn_descriptions_state(d, i));
                lk_set_int(L, "timeout_ms", kn_txn_descriptions_timeout_ms(d, i));
                lk_set_opt_int(L, "start_time_ms", kn_txn_descriptions_start_time_ms(d, i));
                lk_set_int(L, "coordinator", kn_txn_descriptions_coordinator(d, i));
                lk_push_assignment(L, kn_txn_descriptions_partitions(d, i));
                lua_setfield(L, -2, "partitions");
            }
        }
        lua_setfield(L, -2, kn_txn_descriptions_id(d, i));
    }
}

static int lk_admin_describe_transactions(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_strings(L, 2, "array of transactional ids expected");
    int timeout_ms = lk_timeout_opt(L, 3);
    const char **ids = lk_strings(L, 2, n);
    lk_guard *g = lk_guard_push(L, lk_free_txn, 0);
    char errstr[512] = "";
    kn_txn_descriptions *d = NULL;
    int err = kn_admin_describe_transactions(la->admin, ids, n, timeout_ms, &d, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    lk_push_txn(L, d, 1);
    lk_guard_release(g);
    return 1;
}

static int lk_admin_fence_producers(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    size_t n = lk_check_strings(L, 2, "array of transactional ids expected");
    int timeout_ms = lk_timeout_opt(L, 3);
    lua_Integer txn_timeout = 0;
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "transaction_timeout_ms");
        if (!lua_isnil(L, -1) &&
            (!lk_get_integer(L, -1, &txn_timeout) || txn_timeout <= 0 || txn_timeout > 0x7fffffff))
            return luaL_argerror(L, 3, "transaction_timeout_ms must be a positive integer");
        lua_pop(L, 1);
    }
    const char **ids = lk_strings(L, 2, n);
    lk_guard *g = lk_guard_push(L, lk_free_txn, 0);
    char errstr[512] = "";
    kn_txn_descriptions *d = NULL;
    int err =
        kn_admin_fence_producers(la->admin, ids, n, (int)txn_timeout, timeout_ms, &d, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    lk_push_txn(L, d, 0);
    lk_guard_release(g);
    return 1;
}

static int lk_admin_list_transactions(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 2);
    kn_txn_list_filter f;
    memset(&f, 0, sizeof(f));
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        int top = lua_gettop(L);
        lua_getfield(L, 2, "states");
        if (!lua_isnil(L, -1)) {
            f.state_count = lk_check_strings(L, top + 1, "states: array of state names expected");
            f.states = lk_strings(L, top + 1, f.state_count);
        }
        lua_getfield(L, 2, "producer_ids");
        int pidx = lua_gettop(L);
        if (!lua_isnil(L, pidx)) {
            if (!lua_istable(L, pidx))
                return luaL_argerror(L, 2, "producer_ids: array of integers expected");
            size_t n = lua_rawlen(L, pidx);
            int64_t *pids = (int64_t *)lua_newuserdata(L, (n ? n : 1) * sizeof(*pids));
            for (size_t i = 0; i < n; i++) {
                lua_Integer v;
                lua_rawgeti(L, pidx, (int)(i + 1));
                if (!lk_get_integer(L, -1, &v))
                    return luaL_argerror(L, 2, "producer_ids: array of integers expected");
                pids[i] = v;
                lua_pop(L, 1);
            }
            f.producer_ids = pids;
            f.producer_id_count = n;
        }
        lua_getfield(L, 2, "duration_ms");
        lua_Integer dur = 0;
        if (!lua_isnil(L, -1) && (!lk_get_integer(L, -1, &dur) || dur < 0))
            return luaL_argerror(L, 2, "duration_ms must be an integer >= 0");
        f.duration_ms = dur;
        lua_getfield(L, 2, "pattern");
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 2, "pattern must be a string");
        f.id_pattern = lua_tostring(L, -1); /* a value of the argument: alive */
    }
    lk_guard *g = lk_guard_push(L, lk_free_txn_list, 0);
    char errstr[512] = "";
    kn_txn_list *l = NULL;
    int err = kn_admin_list_transactions(la->admin, &f, timeout_ms, &l, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = l;
    lua_createtable(L, (int)kn_txn_list_count(l), 3);
    for (size_t i = 0; i < kn_txn_list_count(l); i++) {
        lua_createtable(L, 0, 3);
        lk_set_str(L, "transactional_id", kn_txn_list_id(l, i));
        lk_set_int(L, "producer_id", kn_txn_list_producer_id(l, i));
        lk_set_str(L, "state", kn_txn_list_state(l, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    if (kn_txn_list_error(l))
        lk_set_error(L, kn_txn_list_error(l), kn_txn_list_error_message(l));
    lk_guard_release(g);
    return 1;
}

static int lk_admin_describe_producers(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    kn_topic_partition_list *parts = lk_partitions_arg(L, 2, false);
    lk_guard *g = lk_guard_push(L, lk_free_pstates, 0);
    char errstr[512] = "";
    kn_producer_states *s = NULL;
    int err = kn_admin_describe_producers(la->admin, parts, timeout_ms, &s, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = s;
    lua_newtable(L);
    for (size_t i = 0; i < kn_producer_states_count(s); i++) {
        lk_push_topic_table(L, kn_producer_states_topic(s, i));
        lua_createtable(L, 0, 3);
        int perr = kn_producer_states_error(s, i);
        if (perr) {
            lk_set_error(L, perr, kn_producer_states_error_message(s, i));
        } else {
            size_t n = kn_producer_states_producer_count(s, i);
            lua_createtable(L, (int)n, 0);
            for (size_t k = 0; k < n; k++) {
                lua_createtable(L, 0, 6);
                lk_set_int(L, "producer_id", kn_producer_states_producer_id(s, i, k));
                lk_set_int(L, "producer_epoch", kn_producer_states_producer_epoch(s, i, k));
                lk_set_int(L, "last_sequence", kn_producer_states_last_sequence(s, i, k));
                lk_set_opt_int(L, "last_timestamp", kn_producer_states_last_timestamp(s, i, k));
                lk_set_opt_int(L, "coordinator_epoch", kn_producer_states_coordinator_epoch(s, i, k));
                lk_set_opt_int(L, "txn_start_offset", kn_producer_states_txn_start_offset(s, i, k));
                lua_rawseti(L, -2, (int)(k + 1));
            }
            lua_setfield(L, -2, "producers");
        }
        lua_rawseti(L, -2, (int)kn_producer_states_partition(s, i));
        lua_pop(L, 1);
    }
    lk_guard_release(g);
    return 1;
}

static int lk_admin_abort_transaction(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    static const char *const keys[] = {"partition", "producer_id", "producer_epoch", "coordinator_epoch"};
    lua_Integer v[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
        lua_getfield(L, 2, keys[k]);
        if (!lk_get_integer(L, -1, &v[k]))
            return luaL_argerror(L, 2,
                                 "{ topic =, partition =, producer_id =, producer_epoch =, "
                                 "coordinator_epoch = } expected");
        lua_pop(L, 1);
    }
    lua_getfield(L, 2, "topic");
    const char *topic = lua_tostring(L, -1);
    if (lua_type(L, -1) != LUA_TSTRING || v[0] < 0 || v[0] > 0x7fffffff || v[2] < 0 || v[2] > 0x7fff)
        return luaL_argerror(L, 2, "topic (string), partition and producer_epoch (>= 0) expected");
    char errstr[512] = "";
    int err = kn_admin_abort_transaction(la->admin, topic, (int32_t)v[0], (int64_t)v[1], (int16_t)v[2],
                                         (int32_t)v[3], timeout_ms, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

const luaL_Reg lk_admin_txn_methods[] = {
    {"describe_transactions", lk_admin_describe_transactions},
    {"fence_producers", lk_admin_fence_producers},
    {"list_transactions", lk_admin_list_transactions},
    {"describe_producers", lk_admin_describe_producers},
    {"abort_transaction", lk_admin_abort_transaction},
    {NULL, NULL},
};

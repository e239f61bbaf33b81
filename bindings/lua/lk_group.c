/*
 * lk_group.c: the consumer's group methods (subscribe,
 * subscribe_pattern, subscribe_regex, unsubscribe, subscription, group_metadata,
 * enforce_rebalance; add_assignor is in lk_assignor.c), the rebalance
 * listener bridge (which Lua assignors share), and the group counters
 * of consumer:metrics().
 *
 * The listener table ({on_assigned=, on_revoked=, on_lost=}) lives in
 * the consumer's uservalue under "listener" (not in the registry: a
 * listener closure that captures its consumer would otherwise keep it
 * alive forever); it is dropped by unsubscribe and close.
 *
 * How the listener reaches Lua: the library calls lk_group_listener
 * inside kn_consumer_poll / _unsubscribe (and close, through
 * unsubscribe) on the caller's thread. lk_group_enter, called by those
 * Lua methods just before the C call, records the running lua_State
 * and pushes the protected trampoline (lk_group_run) onto that call's
 * stack with room reserved, so the callback itself only copies stack
 * slots and lua_pcall()s: nothing can raise across the library's C
 * frames. The trampoline builds the partitions list and runs the Lua
 * function through lk_pcall. A Lua error is left on the call's stack
 * (the first one only), the callback returns KN_ERR__CALLBACK so the
 * rebalance step still completes, and lk_group_leave hands the message
 * to the method, which returns nil, message, "_CALLBACK".
 *
 * Outside those calls (g->L NULL: __gc, lua_close) the listener is not
 * run: no Lua code runs during garbage collection. Inside a listener,
 * the calls that would run it again (poll, unsubscribe, close) return
 * nil, message, "_STATE"; everything else (commit, position, seek,
 * committed, pause, ...) works.
 */
#include <string.h>

#include "kafka_native.h"
#include "lk.h"

/* Stack slots a running call keeps for the listener: the two
 * trampolines (listener, Lua assignor), their two arguments, the kept
 * error, and slack. */
#define LK_GROUP_STACK 9

static void lk_group_free_tpl(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }
static void lk_group_free_gm(void *p) { kn_group_metadata_destroy((kn_group_metadata *)p); }

static const char *const lk_group_events[] = {"on_assigned", "on_revoked", "on_lost"};

/* Protected: (g lightuserdata, consumer) -> runs listener[event]. */
static int lk_group_run(lua_State *L) {
    lk_group *g = (lk_group *)lua_touserdata(L, 1);
    const char *name = g->ev == KN_REBALANCE_ASSIGNED  ? lk_group_events[0]
                       : g->ev == KN_REBALANCE_REVOKED ? lk_group_events[1]
                                                       : lk_group_events[2];
    lua_settop(L, 2);
    lua_getuservalue(L, 2); /* 3 */
    lua_getfield(L, 3, "listener");
    if (!lua_istable(L, 4))
        return 0;
    lua_getfield(L, 4, name); /* 5 */
    if (lua_isnil(L, 5))
        return 0;
    lua_pushvalue(L, 2);
    if (g->parts)
        lk_tpl_push(L, g->parts, 0);
    else
        lua_createtable(L, 0, 0);
    if (lk_pcall(L, 2, 0) != LUA_OK)
        return lua_error(L); /* the message with its traceback */
    return 0;
}

/* The library's kn_rebalance_cb (caller's thread, inside the C call). */
static int lk_group_listener(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                             void *opaque) {
    (void)c;
    lk_group *g = (lk_group *)opaque;
    lua_State *L = g->L;
    if (L == NULL)
        return 0; /* __gc / lua_close: no Lua code */
    g->ev = ev;
    g->parts = parts;
    g->in_listener++;
    /* Only slot copies (room reserved by lk_group_enter): no raise. */
    lua_pushvalue(L, g->fn_idx);
    lua_pushlightuserdata(L, g);
    lua_pushvalue(L, 1); /* every method that runs the listener has the consumer at 1 */
    int status = lua_pcall(L, 2, 0, 0);
    g->in_listener--;
    g->parts = NULL;
    if (status == LUA_OK)
        return 0;
    if (g->err_idx == 0)
        g->err_idx = lua_gettop(L); /* kept for lk_group_leave */
    else
        lua_pop(L, 1); /* later errors of the same call are dropped */
    return KN_ERR__CALLBACK;
}

int lk_group_busy(lua_State *L, lk_group *g, const char *what) {
    if (!g->in_listener)
        return 0;
    lua_pushnil(L);
    lua_pushfstring(L, "%s cannot run inside a rebalance listener", what);
    lua_pushstring(L, kn_err_name(KN_ERR__STATE));
    return 3;
}

void lk_group_enter(lua_State *L, lk_group *g, lk_group_call *saved) {
    luaL_checkstack(L, LK_GROUP_STACK, "rebalance listener");
    saved->L = g->L;
    saved->fn_idx = g->fn_idx;
    saved->err_idx = g->err_idx;
    saved->top = lua_gettop(L);
    lua_pushcfunction(L, lk_group_run);
    g->fn_idx = lua_gettop(L);
    lua_pushcfunction(L, lk_assignor_run); /* fn_idx + 1 (lk_assignor.c) */
    g->L = L;
    g->err_idx = 0;
}

int lk_group_leave(lua_State *L, lk_group *g, const lk_group_call *saved) {
    int err_idx = g->err_idx;
    g->L = saved->L;
    g->fn_idx = saved->fn_idx;
    g->err_idx = saved->err_idx;
    if (err_idx) {
        lua_pushvalue(L, err_idx);
        lua_replace(L, saved->top + 1); /* the error message takes the trampoline's slot */
        lua_settop(L, saved->top + 1);
        return saved->top + 1;
    }
    lua_settop(L, saved->top);
    return 0;
}

/* Sets uservalue.listener to the value on top (popped). */
static void lk_group_set_listener(lua_State *L) {
    lua_getuservalue(L, 1);
    lua_insert(L, -2);
    lua_setfield(L, -2, "listener");
    lua_pop(L, 1);
}

/* Raises unless the argument at idx is nil or a table whose only
 * fields are on_assigned / on_revoked / on_lost functions. */
static void lk_group_check_listener(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int known = 0;
        for (int i = 0; i < 3 && !known; i++)
            known = lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), lk_group_events[i]) == 0;
        if (!known) {
            if (lua_type(L, -2) == LUA_TSTRING)
                lua_pushfstring(L, "listener: unknown field '%s' (on_assigned, on_revoked, on_lost)",
                                lua_tostring(L, -2));
            else
                lua_pushfstring(L, "listener: unexpected %s key (on_assigned, on_revoked, on_lost)",
                                luaL_typename(L, -2));
            luaL_argerror(L, idx, lua_tostring(L, -1));
        }
        if (!lua_isfunction(L, -1)) {
            lua_pushfstring(L, "listener.%s must be a function", lua_tostring(L, -2));
            luaL_argerror(L, idx, lua_tostring(L, -1));
        }
        lua_pop(L, 1);
    }
}

/* The result of a subscribe call; on failure the previous listener (at
 * idx) is put back. */
static int lk_group_subscribed(lua_State *L, int idx, int err) {
    if (err) {
        lua_pushvalue(L, idx); /* the previous listener */
        lk_group_set_listener(L);
        return lk_push_error(L, err, NULL);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* Pushes the current uservalue.listener (kept to restore on failure),
 * then stores the one at arg. Returns the saved one's index. */
static int lk_group_swap_listener(lua_State *L, int arg) {
    lua_getuservalue(L, 1);
    lua_getfield(L, -1, "listener");
    lua_remove(L, -2);
    int saved = lua_gettop(L);
    lua_pushvalue(L, arg);
    lk_group_set_listener(L);
    return saved;
}

/* consumer:subscribe({topic, ...} [, listener]) -> true, or nil,
 * message, code ("_STATE": no group.id, or partitions assigned by hand). */
static int lk_group_subscribe(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_group_check_listener(L, 3);
    lua_settop(L, 3);
    size_t n = lua_rawlen(L, 2);
    if (n == 0)
        return luaL_argerror(L, 2, "a non-empty list of topic names expected");
    /* The pointer array is a userdata: collected even if a check raises. */
    const char **topics = (const char **)lua_newuserdata(L, n * sizeof(*topics)); /* 4 */
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        if (lua_type(L, -1) != LUA_TSTRING || lua_rawlen(L, -1) == 0) {
            lua_pushfstring(L, "topics[%d] must be a non-empty string", (int)(i + 1));
            return luaL_argerror(L, 2, lua_tostring(L, -1));
        }
        topics[i] = lua_tostring(L, -1); /* anchored by the topics table */
        lua_pop(L, 1);
    }
    int saved = lk_group_swap_listener(L, 3);
    return lk_group_subscribed(L, saved, kn_consumer_subscribe(c, topics, n, lk_group_listener, g));
}

/* consumer:subscribe_pattern(regex [, listener]) -> true, or nil,
 * message, code ("_INVALID_ARG": not a POSIX extended regex). */
static int lk_group_subscribe_pattern(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    const char *regex = luaL_checkstring(L, 2);
    if (*regex == '\0')
        return luaL_argerror(L, 2, "a non-empty regex expected");
    lk_group_check_listener(L, 3);
    lua_settop(L, 3);
    int saved = lk_group_swap_listener(L, 3);
    int err = kn_consumer_subscribe_pattern(c, regex, lk_group_listener, g);
    if (err == KN_ERR__INVALID_ARG) {
        lua_pushvalue(L, saved);
        lk_group_set_listener(L);
        lua_pushfstring(L, "subscribe_pattern: \"%s\" is not a valid POSIX extended regex", regex);
        return lk_push_error(L, err, lua_tostring(L, -1));
    }
    return lk_group_subscribed(L, saved, err);
}

/* consumer:subscribe_regex(regex [, listener]) -> true, or nil,
 * message, code ("_UNSUPPORTED" under group.protocol=classic). The
 * broker matches the regex (RE2J, KIP-848); one it rejects fails poll
 * with "INVALID_REGULAR_EXPRESSION". */
static int lk_group_subscribe_regex(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    const char *regex = luaL_checkstring(L, 2);
    if (*regex == '\0')
        return luaL_argerror(L, 2, "a non-empty regex expected");
    lk_group_check_listener(L, 3);
    lua_settop(L, 3);
    int saved = lk_group_swap_listener(L, 3);
    int err = kn_consumer_subscribe_regex(c, regex, lk_group_listener, g);
    if (err == KN_ERR__UNSUPPORTED) {
        lua_pushvalue(L, saved);
        lk_group_set_listener(L);
        /* Java's UnsupportedOperationException message. */
        return lk_push_error(L, err,
                             "Subscribe to RE2/J pattern is not supported when using the CLASSIC "
                             "protocol defined in config group.protocol");
    }
    return lk_group_subscribed(L, saved, err);
}

/* consumer:unsubscribe() -> true, or nil, message, code. Runs
 * on_revoked (or on_lost) for the owned partitions, then leaves the
 * group; a listener error is returned after the member has left. */
static int lk_group_unsubscribe(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    int busy = lk_group_busy(L, g, "unsubscribe");
    if (busy)
        return busy;
    lua_settop(L, 1);
    lk_group_call call;
    lk_group_enter(L, g, &call);
    int err = kn_consumer_unsubscribe(c);
    int msg = lk_group_leave(L, g, &call);
    lua_pushnil(L);
    lk_group_set_listener(L);
    if (msg)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, msg));
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

int lk_group_close(lua_State *L, lk_group *g, kn_consumer *c) {
    lk_group_call call;
    lk_group_enter(L, g, &call);
    /* Leaving here, before the handle is marked closed, lets on_revoked
     * still commit through the consumer. */
    kn_consumer_unsubscribe(c);
    int msg = lk_group_leave(L, g, &call);
    lua_pushnil(L);
    lk_group_set_listener(L);
    return msg;
}

/* consumer:subscription() -> {topic, ...} (empty when not subscribed;
 * for a pattern, the topics it matches now). */
static int lk_group_subscription(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    lk_cguard *guard = lk_cguard_push(L, lk_group_free_tpl);
    kn_topic_partition_list *list = kn_consumer_subscription(c);
    guard->ptr = list;
    size_t n = list ? kn_topic_partition_list_count(list) : 0;
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, kn_topic_partition_list_topic(list, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_cguard_release(guard);
    return 1;
}

/* consumer:group_metadata() -> {group_id=, generation=, member_id=,
 * group_instance_id=} (generation -1 and member_id "" outside a group;
 * group_instance_id nil for a dynamic member), or nil, message, "_STATE"
 * without group.id. */
static int lk_group_metadata(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    lk_cguard *guard = lk_cguard_push(L, lk_group_free_gm);
    kn_group_metadata *gm = kn_consumer_group_metadata(c);
    if (!gm)
        return lk_push_error(L, KN_ERR__STATE, "group_metadata needs group.id");
    guard->ptr = gm;
    lua_createtable(L, 0, 4);
    lua_pushstring(L, kn_group_metadata_group_id(gm));
    lua_setfield(L, -2, "group_id");
    lua_pushinteger(L, kn_group_metadata_generation(gm));
    lua_setfield(L, -2, "generation");
    lua_pushstring(L, kn_group_metadata_member_id(gm));
    lua_setfield(L, -2, "member_id");
    if (kn_group_metadata_group_instance_id(gm)) {
        lua_pushstring(L, kn_group_metadata_group_instance_id(gm));
        lua_setfield(L, -2, "group_instance_id");
    }
    lk_cguard_release(guard);
    return 1;
}

/* consumer:enforce_rebalance([reason]) -> true, or nil, message, code
 * ("_STATE" when not subscribed, "_UNSUPPORTED" under
 * group.protocol=consumer). */
static int lk_group_enforce_rebalance(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    const char *reason = luaL_optstring(L, 2, NULL);
    int err = kn_consumer_enforce_rebalance(c, reason);
    if (err == KN_ERR__STATE)
        return lk_push_error(L, err, "enforce_rebalance: the consumer is not subscribed");
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

static void lk_group_set_int(lua_State *L, const char *key, int64_t v) {
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, key);
}

void lk_group_metrics(lua_State *L, const kn_consumer_stats *st) {
    lk_group_set_int(L, "rebalances", st->rebalances);
    lk_group_set_int(L, "rebalances_failed", st->rebalances_failed);
    lk_group_set_int(L, "partitions_revoked", st->partitions_revoked);
    lk_group_set_int(L, "partitions_lost", st->partitions_lost);
    lk_group_set_int(L, "join_latency_ms_last", st->join_latency_ms_last);
    lk_group_set_int(L, "join_latency_ms_total", st->join_latency_ms_total);
}

/* one method per line */
/* clang-format off */
const luaL_Reg lk_group_methods[] = {
    {"subscribe", lk_group_subscribe},
    {"subscribe_pattern", lk_group_subscribe_pattern},
    {"subscribe_regex", lk_group_subscribe_regex},
    {"unsubscribe", lk_group_unsubscribe},
    {"subscription", lk_group_subscription},
    {"group_metadata", lk_group_metadata},
    {"enforce_rebalance", lk_group_enforce_rebalance},
    {"add_assignor", lk_assignor_add},
    {NULL, NULL},
};
/* clang-format on */

/*
 * lk_consumer.c: the consumer userdata (kafka_native.consumer(config,
 * opts)): assignment, poll and the records() loop, seeks, pause/resume,
 * commits, offset queries (committed, beginning / end offsets,
 * offsets_for_times, lag), metrics.
 *
 * Callbacks (opts.key_deserializer, value_deserializer, on_consume,
 * on_commit, and commit_async's callback) run on the caller's thread
 * through lk_pcall, only from poll, commit, commit_async's later polls
 * and close. Library commit callbacks (called inside kn_consumer_poll /
 * commit_sync / close) only link an lk_commit_ev, allocated when the
 * commit was queued, onto this consumer's queue; the Lua callbacks run
 * after the C call has returned.
 *
 * A callback that raises inside poll makes poll return nil, message,
 * "_CALLBACK" and rewinds every partition of that poll to its first
 * record (kn_consumer_seek), so the next poll returns those records
 * again: nothing is skipped. Commit events behind the failing one stay
 * queued.
 *
 * Group methods and the rebalance listener are in lk_group.c; poll
 * and close bracket their C call with lk_group_enter / _leave.
 *
 * Lua values the consumer owns (the opts functions, per-commit callbacks
 * referenced with luaL_ref) live in its uservalue table. Lifetimes as in
 * lk_admin.c; __gc runs no Lua code.
 */
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "kn_alloc.h"
#include "lk.h"
#include "lk_metrics.h"

#define LK_CONSUMER_MT "kafka_native.consumer"

struct lk_consumer;

/* One commit whose Lua callbacks have not run yet. */
typedef struct lk_commit_ev {
    struct lk_commit_ev *next;
    struct lk_consumer *lc;
    int ref; /* callback in the uservalue, or LUA_NOREF */
    int err;
    kn_topic_partition_list *offsets; /* the library's result (copy), may be NULL */
} lk_commit_ev;

typedef struct lk_consumer {
    kn_consumer *c;            /* NULL once closed */
    lk_commit_ev *head, *tail; /* finished commits, callbacks not run */
    int has_deser, has_on_consume, has_on_commit;
    lk_ready ready;     /* readiness socket (ready_listen / ready_accept) */
    kn_log_queue *logq; /* options.log's queue, or NULL */
    lk_group group;     /* subscribe state (lk_group.c) */
} lk_consumer;

static lk_consumer *lk_consumer_check(lua_State *L) {
    lk_consumer *lc = (lk_consumer *)luaL_checkudata(L, 1, LK_CONSUMER_MT);
    if (lc->c == NULL)
        luaL_error(L, "consumer is closed");
    if (kn_consumer_forked(lc->c))
        luaL_error(L, LK_FORKED_MSG);
    return lc;
}

static void lk_free_records(void *p) { kn_records_free((kn_records *)p); }
static void lk_free_tpl(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }

static void lk_commit_ev_free(lk_commit_ev *ev) {
    kn_topic_partition_list_destroy(ev->offsets);
    kn_free(ev);
}

/* Library callback (caller's thread): queue the finished commit. */
static void lk_commit_cb(kn_consumer *c, int err, const kn_topic_partition_list *offsets, void *opaque) {
    (void)c;
    lk_commit_ev *ev = (lk_commit_ev *)opaque;
    lk_consumer *lc = ev->lc;
    ev->err = err;
    ev->offsets = offsets ? kn_topic_partition_list_copy(offsets) : NULL;
    ev->next = NULL;
    if (lc->tail)
        lc->tail->next = ev;
    else
        lc->head = ev;
    lc->tail = ev;
}

static void lk_push_err_or_nil(lua_State *L, int err) {
    if (err)
        lua_pushstring(L, kn_err_name(err));
    else
        lua_pushnil(L);
}

/* Calls the function at fn (if it is one) with (table at tbl, err).
 * Returns LUA_OK, or an error status with the message on top. */
static int lk_call_commit_fn(lua_State *L, int fn, int tbl, int err) {
    if (!lua_isfunction(L, fn))
        return LUA_OK;
    lua_pushvalue(L, fn);
    lua_pushvalue(L, tbl);
    lk_push_err_or_nil(L, err);
    return lk_pcall(L, 2, 0);
}

/* Runs queued commit events, oldest first: on_commit(offsets, err) then
 * the commit's own callback. Returns LUA_OK, or the status of the first
 * callback that raised with its message on top (later events stay
 * queued). uv: stack index of the uservalue table. */
static int lk_consumer_run_events(lua_State *L, lk_consumer *lc, int uv) {
    while (lc->head) {
        lk_commit_ev *ev = lc->head;
        int top = lua_gettop(L);
        /* Build first: an out-of-memory raise leaves the event queued. */
        if (ev->offsets)
            lk_tpl_push(L, ev->offsets, LK_TPL_OFFSETS | LK_TPL_ERRORS);
        else
            lua_createtable(L, 0, 0);
        if (ev->ref != LUA_NOREF)
            lua_rawgeti(L, uv, ev->ref);
        else
            lua_pushnil(L);
        lua_getfield(L, uv, "on_commit");
        int err = ev->err;
        lc->head = ev->next;
        if (!lc->head)
            lc->tail = NULL;
        if (ev->ref != LUA_NOREF)
            luaL_unref(L, uv, ev->ref);
        lk_commit_ev_free(ev);
        int status = lk_call_commit_fn(L, top + 3, top + 1, err);
        if (status == LUA_OK)
            status = lk_call_commit_fn(L, top + 2, top + 1, err);
        if (status != LUA_OK) {
            lua_replace(L, top + 1);
            lua_settop(L, top + 1);
            return status;
        }
        lua_settop(L, top);
    }
    return LUA_OK;
}

static void lk_consumer_discard(lk_consumer *lc) {
    while (lc->head) {
        lk_commit_ev *ev = lc->head;
        lc->head = ev->next;
        lk_commit_ev_free(ev);
    }
    lc->tail = NULL;
}

/* Checks the topic-partition array at idx and pushes a guard holding
 * the list built from it; returns the list, or NULL with *err set. */
static kn_topic_partition_list *lk_tpl_arg(lua_State *L, int idx, int with_offsets, int *err) {
    lk_tpl_check(L, idx, with_offsets);
    lk_cguard *g = lk_cguard_push(L, lk_free_tpl);
    kn_topic_partition_list *list = kn_topic_partition_list_new();
    if (!list) {
        *err = KN_ERR__NOMEM;
        return NULL;
    }
    g->ptr = list;
    *err = lk_tpl_fill(L, idx, list, with_offsets);
    return *err ? NULL : list;
}

/* ---- lifetime ---------------------------------------------------------- */

kn_consumer *lk_consumer_group_check(lua_State *L, lk_group **gp) {
    lk_consumer *lc = lk_consumer_check(L);
    *gp = &lc->group;
    return lc->c;
}

/* The one close path; run_lua: run the rebalance listener and the
 * queued commit callbacks (never from __gc). Returns the values pushed
 * (0 without run_lua). */
static int lk_consumer_shutdown(lua_State *L, lk_consumer *lc, int timeout_ms, int run_lua) {
    int group_err = 0;
    if (lc->c && kn_consumer_forked(lc->c)) {
        /* The parent's consumer: nothing to commit or leave from here,
         * no thread to join; its queues are the parent's. */
        lc->c = NULL;
        lc->head = lc->tail = NULL;
        lc->logq = NULL;
        lk_forked_collected("consumer");
        return 0;
    }
    int collected = !run_lua && lc->c;
    if (lc->c && run_lua)
        group_err = lk_group_close(L, &lc->group, lc->c);
    if (lc->c) {
        kn_consumer *c = lc->c;
        lc->c = NULL;
        lk_ready_close(&lc->ready, c);
        /* queues every commit event still due (_CLOSED when unanswered) */
        kn_consumer_close(c, timeout_ms);
        kn_consumer_destroy(c);
    }
    if (!run_lua) {
        size_t dropped = 0;
        for (lk_commit_ev *ev = lc->head; ev; ev = ev->next)
            dropped++;
        lk_consumer_discard(lc);
        if (collected)
            lk_log_collected(lc->logq,
                             "consumer collected without close(): closed at once (no commit, no "
                             "LeaveGroup); %zu commit callback(s) not run",
                             dropped);
        kn_log_queue_destroy(lc->logq);
        lc->logq = NULL;
        return 0;
    }
    lua_getuservalue(L, 1);
    int uv = lua_gettop(L);
    /* The network thread is gone: these are the last records. */
    lk_log_deliver(L, lc->logq, uv);
    kn_log_queue_destroy(lc->logq);
    lc->logq = NULL;
    int failed = 0;
    while (lc->head) {
        if (lk_consumer_run_events(L, lc, uv) != LUA_OK) {
            if (!failed) {
                failed = 1;
                lua_insert(L, uv + 1);
            } else {
                lua_pop(L, 1);
            }
        }
    }
    if (failed)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, uv + 1));
    if (group_err)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, group_err));
    lua_pushboolean(L, 1);
    return 1;
}

/* consumer:close([timeout_ms]) -> true, or nil, message, "_CALLBACK".
 * timeout_ms (default 30 s, as Java's) bounds the final commit, the
 * LeaveGroup and the wait for unanswered commits. */
static int lk_consumer_close(lua_State *L) {
    lk_consumer *lc = (lk_consumer *)luaL_checkudata(L, 1, LK_CONSUMER_MT);
    if (lc->c && kn_consumer_forked(lc->c))
        return luaL_error(L, LK_FORKED_MSG);
    int busy = lk_group_busy(L, &lc->group, "close");
    if (busy)
        return busy;
    int timeout_ms = lk_timeout_arg(L, 2, -1);
    lua_settop(L, 1);
    return lk_consumer_shutdown(L, lc, timeout_ms, 1);
}

#if LUA_VERSION_NUM >= 504
static int lk_consumer_close_scope(lua_State *L) {
    lk_consumer *lc = (lk_consumer *)luaL_checkudata(L, 1, LK_CONSUMER_MT);
    if (lc->group.in_listener)
        return 0; /* its poll is still running: __gc closes it later */
    lua_settop(L, 1);
    lk_consumer_shutdown(L, lc, -1, 1);
    return 0;
}
#endif

/* Never waits on the network (a finalizer runs at any allocation):
 * close with timeout 0. */
static int lk_consumer_gc(lua_State *L) {
    lk_consumer_shutdown(L, (lk_consumer *)luaL_checkudata(L, 1, LK_CONSUMER_MT), 0, 0);
    return 0;
}

static int lk_consumer_tostring(lua_State *L) {
    lk_consumer *lc = (lk_consumer *)luaL_checkudata(L, 1, LK_CONSUMER_MT);
    if (lc->c)
        lua_pushfstring(L, "kafka_native.consumer (%p)", (void *)lc);
    else
        lua_pushliteral(L, "kafka_native.consumer (closed)");
    return 1;
}

static const char *const lk_consumer_fn_opts[] = {"key_deserializer", "value_deserializer", "on_consume",
                                                  "on_commit"};

/* kafka_native.consumer(config [, {key_deserializer=, value_deserializer=,
 * on_consume=, on_commit=}]) */
int lk_consumer_new(lua_State *L) {
    luaL_checkany(L, 1);
    lk_check_opt_table(L, 2);
    lua_settop(L, 2);
    for (int i = 0; i < 4 && !lua_isnil(L, 2); i++) {
        lua_getfield(L, 2, lk_consumer_fn_opts[i]);
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1)) {
            lua_pushfstring(L, "option '%s' must be a function", lk_consumer_fn_opts[i]);
            return luaL_argerror(L, 2, lua_tostring(L, -1));
        }
        lua_pop(L, 1);
    }
    lk_log_check_opts(L, 2);
    lk_oauth_check_opts(L, 2);
    lk_consumer *lc = (lk_consumer *)lk_newuserdata(L, sizeof(*lc));
    memset(lc, 0, sizeof(*lc));
    lk_ready_init(&lc->ready);
    luaL_getmetatable(L, LK_CONSUMER_MT);
    lua_setmetatable(L, -2);
    lua_createtable(L, 0, 4);
    for (int i = 0; i < 4 && !lua_isnil(L, 2); i++) {
        lua_getfield(L, 2, lk_consumer_fn_opts[i]);
        if (lua_isfunction(L, -1)) {
            if (i < 2)
                lc->has_deser = 1;
            else if (i == 2)
                lc->has_on_consume = 1;
            else
                lc->has_on_commit = 1;
        }
        lua_setfield(L, -2, lk_consumer_fn_opts[i]);
    }
    lua_setuservalue(L, -2);

    char errstr[512] = "";
    int err = KN_OK;
    kn_conf *conf = lk_conf_from_arg(L, 1, KN_CLIENT_CONSUMER, errstr, sizeof(errstr), &err);
    if (!conf)
        return lk_push_error(L, err, errstr);
    lua_getuservalue(L, 3);
    err = lk_log_setup(L, 2, lua_gettop(L), conf, &lc->logq);
    if (!err)
        err = lk_oauth_setup(L, 2, lua_gettop(L), conf);
    lua_pop(L, 1);
    if (err) {
        kn_conf_destroy(conf);
        return lk_push_error(L, err, NULL);
    }
    lc->c = kn_consumer_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    if (!lc->c)
        return lk_push_error(L, kn_last_error(), errstr);
    return 1;
}

/* ---- poll -------------------------------------------------------------- */

/* Seeks every partition of recs back to its first record in recs. */
static void lk_consumer_rewind(lk_consumer *lc, const kn_records *recs) {
    if (lc->c == NULL)
        return;
    size_t n = kn_records_count(recs);
    for (size_t i = 0; i < n; i++) {
        const char *t = kn_records_topic(recs, i);
        int32_t part = kn_records_partition(recs, i);
        int first = 1;
        if (i > 0 && kn_records_partition(recs, i - 1) == part &&
            strcmp(kn_records_topic(recs, i - 1), t) == 0)
            continue; /* same run */
        for (size_t j = 0; j < i && first; j++)
            first = !(kn_records_partition(recs, j) == part && strcmp(kn_records_topic(recs, j), t) == 0);
        if (first)
            kn_consumer_seek(lc->c, t, part, kn_records_offset(recs, i));
    }
}

/* Runs the deserializers over the record array at arr (uv: the
 * uservalue). Returns LUA_OK or an error status with the message on
 * top. */
static int lk_consumer_deserialize(lua_State *L, int uv, int arr) {
    static const char *const fields[] = {"key", "value"};
    size_t n = lua_rawlen(L, arr);
    for (int f = 0; f < 2; f++) {
        lua_getfield(L, uv, lk_consumer_fn_opts[f]);
        int fn = lua_gettop(L);
        if (!lua_isfunction(L, fn)) {
            lua_pop(L, 1);
            continue;
        }
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, arr, (int)i);
            int rec = lua_gettop(L);
            lua_getfield(L, rec, fields[f]);
            if (lua_isnil(L, -1)) { /* nil stays nil */
                lua_pop(L, 2);
                continue;
            }
            lua_pushvalue(L, fn);
            lua_insert(L, -2);
            lua_pushvalue(L, rec);
            int status = lk_pcall(L, 2, 1);
            if (status != LUA_OK)
                return status;
            lua_setfield(L, rec, fields[f]);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return LUA_OK;
}

/* consumer:poll([timeout_ms]) -> array of records (empty after a
 * timeout), or nil, message, code. Default timeout 0. With batch: the
 * same poll, returned as a batch (lk_batch.c): raw (no table per record)
 * unless a deserializer or on_consume needs the record tables. */
static int lk_consumer_poll_as(lua_State *L, int batch) {
    lk_consumer *lc = lk_consumer_check(L);
    int timeout_ms = lk_timeout_arg(L, 2, 0);
    int busy = lk_group_busy(L, &lc->group, "poll");
    if (busy)
        return busy;
    lua_settop(L, 1);
    lua_getuservalue(L, 1);                            /* 2 */
    lk_cguard *g = lk_cguard_push(L, lk_free_records); /* 3 */
    char errstr[512] = "";
    kn_records *recs = NULL;
    if (lc->head)
        timeout_ms = 0; /* commit callbacks are due: run them without waiting, as the library does */
    lk_ready_rearm(&lc->ready);
    lk_group_call call;
    lk_group_enter(L, &lc->group, &call);
    int err = kn_consumer_poll(lc->c, timeout_ms, &recs, errstr, sizeof(errstr));
    int listener_err = lk_group_leave(L, &lc->group, &call); /* 4 when set */
    if (listener_err) {
        /* The rebalance step completed; records (if any) come again. */
        if (recs)
            lk_consumer_rewind(lc, recs);
        kn_records_free(recs);
        lk_log_deliver(L, lc->logq, 2);
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, listener_err));
    }
    lk_log_deliver(L, lc->logq, 2);
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = recs;
    int raw = batch && !lc->has_deser && !lc->has_on_consume;
    if (raw)
        lk_batch_push_raw(L, g); /* 4: owns recs from here */
    else
        lk_records_push(L, recs); /* 4 */
    int status = lk_consumer_run_events(L, lc, 2);
    if (status == LUA_OK && lc->has_deser)
        status = lk_consumer_deserialize(L, 2, 4);
    if (status == LUA_OK && lc->has_on_consume) {
        lua_getfield(L, 2, "on_consume");
        lua_pushvalue(L, 4);
        status = lk_pcall(L, 1, 1);
        if (status == LUA_OK) {
            if (lua_type(L, -1) == LUA_TTABLE) {
                lua_replace(L, 4);
            } else {
                lua_pushliteral(L, "on_consume must return a table of records");
                status = LUA_ERRRUN;
            }
        }
    }
    if (status != LUA_OK) {
        lk_consumer_rewind(lc, recs);
        lk_cguard_release(g);
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    }
    lk_cguard_release(g);
    lua_settop(L, 4);
    if (batch && !raw)
        lk_batch_push_tables(L, 4);
    return 1;
}
static int lk_consumer_poll(lua_State *L) { return lk_consumer_poll_as(L, 0); }

/* consumer:poll_batch([timeout_ms]) -> batch, or nil, message, code. */
static int lk_consumer_poll_batch(lua_State *L) { return lk_consumer_poll_as(L, 1); }

/* The records() iterator: upvalues consumer, timeout, current batch,
 * next index. Ends (nil) when a poll returns no records; raises when a
 * poll fails (a for loop cannot carry nil, message, code). */
static int lk_records_iter(lua_State *L) {
    lua_Integer idx = lua_tointeger(L, lua_upvalueindex(4));
    if (lua_istable(L, lua_upvalueindex(3)) && (size_t)idx <= lua_rawlen(L, lua_upvalueindex(3))) {
        lua_pushinteger(L, idx + 1);
        lua_replace(L, lua_upvalueindex(4));
        lua_rawgeti(L, lua_upvalueindex(3), (int)idx);
        return 1;
    }
    lua_settop(L, 0);
    lua_pushcfunction(L, lk_consumer_poll);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_call(L, 2, 3);
    if (lua_isnil(L, 1))
        return luaL_error(L, "poll failed: %s (%s)", lua_tostring(L, 2), lua_tostring(L, 3));
    lua_settop(L, 1);
    if (lua_rawlen(L, 1) == 0)
        return 0;
    lua_pushvalue(L, 1);
    lua_replace(L, lua_upvalueindex(3));
    lua_pushinteger(L, 2);
    lua_replace(L, lua_upvalueindex(4));
    lua_rawgeti(L, 1, 1);
    return 1;
}

/* consumer:records([timeout_ms]) -> iterator for a generic for. */
static int lk_consumer_records(lua_State *L) {
    lk_consumer_check(L);
    int timeout_ms = lk_timeout_arg(L, 2, 0);
    lua_settop(L, 1);
    lua_pushinteger(L, timeout_ms);
    lua_pushnil(L);
    lua_pushinteger(L, 1);
    lua_pushcclosure(L, lk_records_iter, 4);
    return 1;
}

/* ---- assignment, positions, pause ------------------------------------- */

static int lk_push_ok_or_error(lua_State *L, int err) {
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

/* consumer:assign({ {topic=, partition=, offset=?}, ... }) -> true, or
 * nil, message, code. An entry's offset (integer, "beginning", "end")
 * is applied with seek after the assignment. */
static int lk_consumer_assign(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    lua_settop(L, 2);
    int err;
    kn_topic_partition_list *list = lk_tpl_arg(L, 2, 1, &err);
    if (!list)
        return lk_push_error(L, err, NULL);
    err = kn_consumer_assign(lc->c, list);
    for (size_t i = 0; !err && i < kn_topic_partition_list_count(list); i++) {
        int64_t off = kn_topic_partition_list_offset(list, i);
        if (off != KN_OFFSET_INVALID)
            err = kn_consumer_seek(lc->c, kn_topic_partition_list_topic(list, i),
                                   kn_topic_partition_list_partition(list, i), off);
    }
    return lk_push_ok_or_error(L, err);
}

/* Pushes a library-owned list result (guarded while it is converted). */
static int lk_push_owned_tpl(lua_State *L, kn_topic_partition_list *list, int flags) {
    if (!list)
        return lk_push_error(L, KN_ERR__NOMEM, NULL);
    lk_cguard *g = lk_cguard_push(L, lk_free_tpl);
    g->ptr = list;
    lk_tpl_push(L, list, flags);
    lk_cguard_release(g);
    return 1;
}

/* consumer:assignment() -> { {topic=, partition=, offset=position|nil} } */
static int lk_consumer_assignment(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    return lk_push_owned_tpl(L, kn_consumer_assignment(lc->c), LK_TPL_OFFSETS);
}

/* consumer:paused() -> { {topic=, partition=} } */
static int lk_consumer_paused(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    return lk_push_owned_tpl(L, kn_consumer_paused(lc->c), 0);
}

/* consumer:partitions_for(topic [, timeout_ms]) -> { {topic=, partition=} } */
static int lk_consumer_partitions_for(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    const char *topic = luaL_checkstring(L, 2);
    int timeout_ms = lk_timeout_arg(L, 3, -1);
    kn_topic_partition_list *list = NULL;
    int err = kn_consumer_partitions_for(lc->c, topic, timeout_ms, &list);
    if (err)
        return lk_push_error(L, err, NULL);
    return lk_push_owned_tpl(L, list, 0);
}

/* Arguments 2 and 3 of the per-partition methods: topic (string) and
 * partition (integer >= 0); raises a Lua argument error otherwise. */
static const char *lk_topic_partition_args(lua_State *L, int32_t *partition) {
    const char *topic = luaL_checkstring(L, 2);
    lua_Integer part;
    if (!lk_get_integer(L, 3, &part) || part < 0 || part > 0x7fffffff)
        luaL_argerror(L, 3, "partition (integer >= 0) expected");
    *partition = (int32_t)part;
    return topic;
}

/* consumer:seek(topic, partition, offset) with offset an integer >= 0,
 * "beginning" or "end" -> true, or nil, message, code. */
static int lk_consumer_seek(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    int32_t part;
    const char *topic = lk_topic_partition_args(L, &part);
    int64_t off;
    if (!lk_offset_value(L, 4, &off))
        return luaL_argerror(L, 4, "offset (integer >= 0, \"beginning\" or \"end\") expected");
    return lk_push_ok_or_error(L, kn_consumer_seek(lc->c, topic, part, off));
}

/* seek_to_beginning / seek_to_end / pause / resume: (tps or nil for
 * seeks: every assigned partition). */
static int lk_consumer_tpl_call(lua_State *L, int (*fn)(kn_consumer *, const kn_topic_partition_list *),
                                int nil_ok) {
    lk_consumer *lc = lk_consumer_check(L);
    lua_settop(L, 2);
    if (nil_ok && lua_isnil(L, 2))
        return lk_push_ok_or_error(L, fn(lc->c, NULL));
    int err;
    kn_topic_partition_list *list = lk_tpl_arg(L, 2, 0, &err);
    if (!list)
        return lk_push_error(L, err, NULL);
    return lk_push_ok_or_error(L, fn(lc->c, list));
}
static int lk_consumer_seek_to_beginning(lua_State *L) {
    return lk_consumer_tpl_call(L, kn_consumer_seek_to_beginning, 1);
}
static int lk_consumer_seek_to_end(lua_State *L) {
    return lk_consumer_tpl_call(L, kn_consumer_seek_to_end, 1);
}
static int lk_consumer_pause(lua_State *L) { return lk_consumer_tpl_call(L, kn_consumer_pause, 0); }
static int lk_consumer_resume(lua_State *L) { return lk_consumer_tpl_call(L, kn_consumer_resume, 0); }

/* consumer:position(topic, partition [, timeout_ms]) -> offset, or nil,
 * message, code. */
static int lk_consumer_position(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    int32_t part;
    const char *topic = lk_topic_partition_args(L, &part);
    int timeout_ms = lk_timeout_arg(L, 4, -1);
    int64_t off = 0;
    int err = kn_consumer_position(lc->c, topic, part, timeout_ms, &off);
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushinteger(L, (lua_Integer)off);
    return 1;
}

/* committed / beginning_offsets / end_offsets: (tps [, timeout_ms]) ->
 * the entries with offset (nil when none), leader_epoch, metadata,
 * error. A partial failure still returns the entries (see error). */
static int lk_consumer_query(lua_State *L, int (*fn)(kn_consumer *, kn_topic_partition_list *, int)) {
    lk_consumer *lc = lk_consumer_check(L);
    int timeout_ms = lk_timeout_arg(L, 3, -1);
    lua_settop(L, 2);
    int err;
    kn_topic_partition_list *list = lk_tpl_arg(L, 2, 0, &err);
    if (!list)
        return lk_push_error(L, err, NULL);
    err = fn(lc->c, list, timeout_ms);
    if (err && err != KN_ERR__PARTIAL)
        return lk_push_error(L, err, NULL);
    lk_tpl_push(L, list, LK_TPL_OFFSETS | LK_TPL_ERRORS);
    return 1;
}
static int lk_consumer_committed(lua_State *L) { return lk_consumer_query(L, kn_consumer_committed); }
static int lk_consumer_beginning_offsets(lua_State *L) {
    return lk_consumer_query(L, kn_consumer_beginning_offsets);
}
static int lk_consumer_end_offsets(lua_State *L) { return lk_consumer_query(L, kn_consumer_end_offsets); }

/* consumer:offsets_for_times({ {topic=, partition=, timestamp=}, ... }
 * [, timeout_ms]) -> the entries with offset: the earliest offset whose
 * timestamp is at or after `timestamp` (ms since the epoch), nil when
 * there is none; error per entry when one failed. */
static int lk_consumer_offsets_for_times(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    int timeout_ms = lk_timeout_arg(L, 3, -1);
    lua_settop(L, 2);
    size_t n = lk_tpl_check(L, 2, 0);
    for (size_t i = 1; i <= n; i++) {
        lua_Integer ts;
        lua_rawgeti(L, 2, (int)i);
        lua_getfield(L, -1, "timestamp");
        if (!lk_get_integer(L, -1, &ts) || ts < 0)
            return luaL_argerror(L, 2, "entry 'timestamp' (integer >= 0, ms since the epoch) expected");
        lua_pop(L, 2);
    }
    int err;
    kn_topic_partition_list *list = lk_tpl_arg(L, 2, 0, &err);
    if (!list)
        return lk_push_error(L, err, NULL);
    for (size_t i = 0; i < n; i++) {
        lua_Integer ts = 0;
        lua_rawgeti(L, 2, (int)(i + 1));
        lua_getfield(L, -1, "timestamp");
        lk_get_integer(L, -1, &ts);
        lua_pop(L, 2);
        kn_topic_partition_list_set_offset(list, i, (int64_t)ts);
    }
    err = kn_consumer_offsets_for_times(lc->c, list, timeout_ms);
    if (err && err != KN_ERR__PARTIAL)
        return lk_push_error(L, err, NULL);
    lk_tpl_push(L, list, LK_TPL_OFFSETS | LK_TPL_ERRORS);
    return 1;
}

/* consumer:lag(topic, partition) -> the partition's lag from the last
 * Fetch response (no request), or nil, message, code ("_NOT_FOUND"
 * before the first response, "_STATE" when not assigned). */
static int lk_consumer_lag(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    int32_t part;
    const char *topic = lk_topic_partition_args(L, &part);
    int64_t lag = 0;
    int err = kn_consumer_lag(lc->c, topic, part, &lag);
    if (err == KN_ERR__NOT_FOUND)
        return lk_push_error(L, err, "lag: no fetch response for the partition yet (or it has no position)");
    if (err == KN_ERR__STATE)
        return lk_push_error(L, err, "lag: the partition is not assigned");
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushinteger(L, (lua_Integer)lag);
    return 1;
}

/* consumer:read_replica(topic, partition) -> the broker id the partition
 * is fetched from when its leader named a read replica (KIP-392), or
 * -1 while fetched from the leader; nil, message, "_STATE" when not
 * assigned. */
static int lk_consumer_read_replica(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    int32_t part;
    const char *topic = lk_topic_partition_args(L, &part);
    int32_t node = -1;
    int err = kn_consumer_read_replica(lc->c, topic, part, &node);
    if (err == KN_ERR__STATE)
        return lk_push_error(L, err, "read_replica: the partition is not assigned");
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushinteger(L, (lua_Integer)node);
    return 1;
}

/* ---- commits ----------------------------------------------------------- */

/* Queues an asynchronous commit of list (NULL: the positions) with the
 * function at cb_idx (0: none). Returns KN_OK or an error (nothing
 * queued, no callback will run). */
static int lk_consumer_queue_async(lua_State *L, lk_consumer *lc, const kn_topic_partition_list *list,
                                   int cb_idx) {
    int ref = LUA_NOREF;
    lua_getuservalue(L, 1);
    if (cb_idx) {
        lua_pushvalue(L, cb_idx);
        ref = luaL_ref(L, -2); /* may raise: nothing allocated yet */
    }
    lk_commit_ev *ev = (lk_commit_ev *)kn_calloc(1, sizeof(*ev));
    int err = KN_ERR__NOMEM;
    if (ev) {
        ev->lc = lc;
        ev->ref = ref;
        err = kn_consumer_commit_async(lc->c, list, lk_commit_cb, ev);
    }
    if (err) {
        if (ref != LUA_NOREF)
            luaL_unref(L, -1, ref);
        kn_free(ev);
    }
    lua_pop(L, 1);
    return err;
}

/* consumer:commit([offsets | {sync=true, offsets=, timeout_ms=}]) ->
 * true, or nil, message, code [, offsets with per-entry errors].
 * Without offsets commits every positioned partition's position. */
static int lk_consumer_commit(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    lk_check_opt_table(L, 2);
    lua_settop(L, 2);
    int sync = 1, timeout_ms = -1;
    if (lua_istable(L, 2) && lua_rawlen(L, 2) > 0) {
        lua_pushvalue(L, 2); /* 3: the offsets */
    } else {
        sync = lk_opt_bool_field(L, 2, "sync", 1);
        lua_Integer t = lk_opt_int_field(L, 2, "timeout_ms", -1);
        timeout_ms = t > 0x7fffffff ? 0x7fffffff : t < -1 ? -1 : (int)t;
        if (lua_istable(L, 2))
            lua_getfield(L, 2, "offsets");
        else
            lua_pushnil(L);
        if (!lua_isnil(L, 3) && !lua_istable(L, 3))
            return luaL_argerror(L, 2, "option 'offsets' must be a table");
    }
    kn_topic_partition_list *list = NULL;
    int err;
    if (!lua_isnil(L, 3)) {
        list = lk_tpl_arg(L, 3, 1, &err); /* guard at 4 */
        if (!list)
            return lk_push_error(L, err, NULL);
    } else {
        lua_pushnil(L); /* 4 */
    }
    if (!sync)
        return lk_push_ok_or_error(L, lk_consumer_queue_async(L, lc, list, 0));

    /* What on_commit sees when committing positions: the positions. */
    if (!list && lc->has_on_commit) {
        lk_cguard *g = lk_cguard_push(L, lk_free_tpl);
        g->ptr = kn_consumer_assignment(lc->c);
        if (g->ptr)
            lk_tpl_push(L, (kn_topic_partition_list *)g->ptr, LK_TPL_OFFSETS);
        else
            lua_createtable(L, 0, 0);
        lk_cguard_release(g);
        lua_replace(L, 4);
    }
    err = kn_consumer_commit_sync(lc->c, list, timeout_ms);
    if (list) {
        lk_tpl_push(L, list, LK_TPL_OFFSETS | LK_TPL_ERRORS);
        lua_replace(L, 4);
    }
    lua_settop(L, 4);
    lua_getuservalue(L, 1); /* 5 */
    lk_log_deliver(L, lc->logq, 5);
    int status = lk_consumer_run_events(L, lc, 5);
    if (status == LUA_OK && lc->has_on_commit) {
        lua_getfield(L, 5, "on_commit");
        status = lk_call_commit_fn(L, lua_gettop(L), 4, err);
    }
    if (status != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (err) {
        lk_push_error(L, err, NULL);
        if (!list)
            return 3;
        lua_pushvalue(L, 4);
        return 4;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* consumer:commit_async([offsets [, callback(offsets, err)]]) -> true,
 * or nil, message, code. callback and on_commit run from a later poll,
 * commit or close. */
static int lk_consumer_commit_async(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    lk_check_opt_table(L, 2);
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TFUNCTION);
    lua_settop(L, 3);
    kn_topic_partition_list *list = NULL;
    int err;
    if (!lua_isnil(L, 2)) {
        list = lk_tpl_arg(L, 2, 1, &err);
        if (!list)
            return lk_push_error(L, err, NULL);
    }
    return lk_push_ok_or_error(L, lk_consumer_queue_async(L, lc, list, lua_isnil(L, 3) ? 0 : 3));
}

/* consumer:wakeup(): the poll that waits (or the next one) returns nil,
 * message, "_WAKEUP". With a readiness socket, a byte is sent on it as
 * well, so an event loop waiting there (instead of in poll) wakes up and
 * its next poll(0) returns "_WAKEUP". */
static int lk_consumer_wakeup(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    kn_consumer_wakeup(lc->c); /* also fires the readiness hook (lk_ready.c) */
    return 0;
}

/* consumer:ready_listen([dir]) -> path, or nil, message, code.
 * Listens on a fresh Unix socket in dir (default $TMPDIR or /tmp) for
 * the one connection ready_accept takes (see lk_ready.c). */
static int lk_consumer_ready_listen(lua_State *L) {
    return lk_ready_push_listen(L, &lk_consumer_check(L)->ready, 2);
}

/* consumer:ready_accept() -> true, or nil, message, code: takes the
 * connection made to ready_listen's path (and removes the path); from
 * then on a byte arrives on it whenever poll has something new. */
static int lk_consumer_ready_accept(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    char errstr[256] = "";
    int err = lk_ready_accept(&lc->ready, lc->c, errstr, sizeof errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

static void lk_set_int(lua_State *L, const char *key, int64_t v) {
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, key);
}

/* consumer:metrics() -> plain table of counters. */
static int lk_consumer_metrics(lua_State *L) {
    lk_consumer *lc = lk_consumer_check(L);
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(lc->c, &st);
    lua_createtable(L, 0, 15);
    lk_set_int(L, "polls", st.polls);
    lk_set_int(L, "records", st.records);
    lk_set_int(L, "record_bytes", st.record_bytes);
    lk_set_int(L, "fetch_requests", st.fetch_requests);
    lk_set_int(L, "fetch_errors", st.fetch_errors);
    lk_set_int(L, "fetch_incremental", st.fetch_incremental);
    lk_set_int(L, "fetch_read_replica", st.fetch_read_replica);
    lk_set_int(L, "fetch_latency_us_total", st.fetch_latency_us_total);
    lk_set_int(L, "fetch_latency_us_max", st.fetch_latency_us_max);
    lk_set_int(L, "fetch_response_bytes", st.fetch_response_bytes);
    lk_set_int(L, "buffered_bytes", st.buffered_bytes);
    lk_set_int(L, "buffered_partitions", st.buffered_partitions);
    lk_set_int(L, "commits", st.commits);
    lk_set_int(L, "commit_errors", st.commit_errors);
    lk_set_int(L, "validations", st.validations);
    lk_set_int(L, "truncations", st.truncations);
    lk_set_int(L, "connects", st.connects);
    lk_set_int(L, "connect_failures", st.connect_failures);
    lk_set_int(L, "reauthentications", st.reauthentications);
    lk_set_int(L, "fetch_throttle_time_avg_ms", st.fetch_throttle_time_avg_ms);
    lk_set_int(L, "fetch_throttle_time_max_ms", st.fetch_throttle_time_max_ms);
    lk_group_metrics(L, &st);
    return 1;
}

static int lk_consumer_instance_id(lua_State *L) {
    return lk_telemetry_instance_id(L, LK_CLIENT_CONSUMER, lk_consumer_check(L)->c);
}

static int lk_consumer_register_metric(lua_State *L) {
    return lk_telemetry_register_metric(L, LK_CLIENT_CONSUMER, lk_consumer_check(L)->c, 1);
}

static int lk_consumer_unregister_metric(lua_State *L) {
    return lk_telemetry_register_metric(L, LK_CLIENT_CONSUMER, lk_consumer_check(L)->c, 0);
}

/* consumer:kafka_metrics([group]) / :kafka_metric(group, name[, tags]):
 * Kafka-named metrics (lk_metrics.c, docs/metrics.md). */
static int lk_consumer_walk(void *h, kn_metric_visit_fn fn, void *ctx) { return kn_consumer_metrics(h, fn, ctx); }
static int lk_consumer_kafka_metrics(lua_State *L) {
    return lk_metrics_push(L, lk_consumer_walk, lk_consumer_check(L)->c, false);
}
static int lk_consumer_kafka_metric(lua_State *L) {
    return lk_metrics_push(L, lk_consumer_walk, lk_consumer_check(L)->c, true);
}

static const luaL_Reg lk_consumer_methods[] = {
    {"client_instance_id", lk_consumer_instance_id},
    {"register_metric_for_subscription", lk_consumer_register_metric},
    {"unregister_metric_from_subscription", lk_consumer_unregister_metric},
    {"assign", lk_consumer_assign},
    {"assignment", lk_consumer_assignment},
    {"partitions_for", lk_consumer_partitions_for},
    {"poll", lk_consumer_poll},
    {"poll_batch", lk_consumer_poll_batch},
    {"records", lk_consumer_records},
    {"seek", lk_consumer_seek},
    {"seek_to_beginning", lk_consumer_seek_to_beginning},
    {"seek_to_end", lk_consumer_seek_to_end},
    {"position", lk_consumer_position},
    {"pause", lk_consumer_pause},
    {"resume", lk_consumer_resume},
    {"paused", lk_consumer_paused},
    {"commit", lk_consumer_commit},
    {"commit_async", lk_consumer_commit_async},
    {"committed", lk_consumer_committed},
    {"beginning_offsets", lk_consumer_beginning_offsets},
    {"end_offsets", lk_consumer_end_offsets},
    {"offsets_for_times", lk_consumer_offsets_for_times},
    {"lag", lk_consumer_lag},
    {"read_replica", lk_consumer_read_replica},
    {"wakeup", lk_consumer_wakeup},
    {"ready_listen", lk_consumer_ready_listen},
    {"ready_accept", lk_consumer_ready_accept},
    {"metrics", lk_consumer_metrics},
    {"kafka_metrics", lk_consumer_kafka_metrics},
    {"kafka_metric", lk_consumer_kafka_metric},
    {"close", lk_consumer_close},
    {NULL, NULL},
};

static const luaL_Reg lk_consumer_meta[] = {
    {"__gc", lk_consumer_gc},
#if LUA_VERSION_NUM >= 504
    {"__close", lk_consumer_close_scope},
#endif
    {"__tostring", lk_consumer_tostring},
    {NULL, NULL},
};

void lk_consumer_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_CONSUMER_MT)) {
        luaL_setfuncs(L, lk_consumer_meta, 0);
        luaL_newlib(L, lk_consumer_methods);
        luaL_setfuncs(L, lk_group_methods, 0);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "kafka_native.consumer");
        lua_setfield(L, -2, "__name");
    }
    lua_pop(L, 1);
}

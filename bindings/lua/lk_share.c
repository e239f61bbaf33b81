/*
 * lk_share.c: the share consumer userdata (kafka_native.share_consumer,
 * KIP-932 share groups) over include/kafka_native_share.h.
 *
 * Records are the consumer's record tables (lk_records.c) plus a
 * delivery_count field, with a metatable of this consumer's: it answers
 * record:accept(), record:release(), record:reject() and record:renew()
 * (explicit acknowledgement mode; renew: KIP-1222 lock renewal), and
 * falls back to the plain record metatable
 * for the lazily built fields. That metatable (and the methods bound to
 * the consumer) live in the consumer's uservalue.
 *
 * The acknowledgement-commit callback (options.on_acknowledge) is
 * queued by the C callback and run after the C call returns, through
 * the one pcall trampoline: no Lua error crosses the library's frames.
 * Lifetimes as lk_consumer.c: close() and __close share one path, __gc
 * closes with timeout 0 and runs no Lua.
 */
#include <stdlib.h>
#include <string.h>

#include "kafka_native_share.h"
#include "kn_alloc.h"
#include "lk.h"
#include "lk_metrics.h"

#define LK_SHARE_MT "kafka_native.share_consumer"

typedef struct lk_ack_ev {
    struct lk_ack_ev *next;
    char *topic;
    int32_t partition;
    int64_t *offsets;
    size_t count;
    int err;
} lk_ack_ev;

typedef struct lk_share {
    kn_share_consumer *sc; /* NULL once closed */
    lk_ack_ev *head, *tail;
    kn_log_queue *logq;
    lk_ready ready; /* readiness socket (ready_listen / ready_accept) */
} lk_share;

static lk_share *lk_share_check(lua_State *L) {
    lk_share *ls = (lk_share *)luaL_checkudata(L, 1, LK_SHARE_MT);
    if (!ls->sc)
        luaL_error(L, "share consumer is closed");
    return ls;
}

static void lk_ack_ev_free(lk_ack_ev *ev) {
    kn_free(ev->topic);
    kn_free(ev->offsets);
    kn_free(ev);
}

/* Library callback, application thread inside a share consumer call:
 * queue it for Lua. */
static void lk_share_ack_cb(kn_share_consumer *sc, const char *topic, int32_t partition,
                            const int64_t *offsets, size_t count, int err, void *opaque) {
    (void)sc;
    lk_share *ls = opaque;
    lk_ack_ev *ev = kn_calloc(1, sizeof(*ev));
    if (!ev)
        return;
    ev->topic = kn_strdup(topic);
    ev->offsets = kn_malloc((count ? count : 1) * sizeof(int64_t));
    if (!ev->topic || !ev->offsets) {
        lk_ack_ev_free(ev);
        return;
    }
    memcpy(ev->offsets, offsets, count * sizeof(int64_t));
    ev->count = count;
    ev->partition = partition;
    ev->err = err;
    if (ls->tail)
        ls->tail->next = ev;
    else
        ls->head = ev;
    ls->tail = ev;
}

/* Runs uservalue.on_acknowledge(topic, partition, offsets, err) for
 * every queued answer (dropped when there is no function). Returns
 * LUA_OK or the first error status with its message on top. uv: the
 * uservalue's stack index. */
static int lk_share_run_events(lua_State *L, lk_share *ls, int uv) {
    int status = LUA_OK;
    while (ls->head) {
        lk_ack_ev *ev = ls->head;
        ls->head = ev->next;
        if (!ls->head)
            ls->tail = NULL;
        int top = lua_gettop(L);
        lua_getfield(L, uv, "on_acknowledge");
        if (lua_isfunction(L, -1) && status == LUA_OK) {
            lua_pushstring(L, ev->topic);
            lua_pushinteger(L, ev->partition);
            lua_createtable(L, (int)ev->count, 0);
            for (size_t i = 0; i < ev->count; i++) {
                lua_pushinteger(L, (lua_Integer)ev->offsets[i]);
                lua_rawseti(L, -2, (int)i + 1);
            }
            if (ev->err)
                lua_pushstring(L, kn_err_name(ev->err));
            else
                lua_pushnil(L);
            status = lk_pcall(L, 4, 0);
            if (status != LUA_OK) {
                lua_replace(L, top + 1);
                lua_settop(L, top + 1);
                lk_ack_ev_free(ev);
                continue;
            }
        }
        lua_settop(L, status == LUA_OK ? top : top);
        lk_ack_ev_free(ev);
    }
    return status;
}

static int lk_share_type(lua_State *L, int idx) {
    static const char *const names[] = {"accept", "release", "reject", "renew", NULL};
    return luaL_checkoption(L, idx, "accept", names) + KN_SHARE_ACCEPT;
}

/* Acknowledges the record table at rec on ls. Pushes the result. */
static int lk_share_ack_record(lua_State *L, lk_share *ls, int rec, int type) {
    luaL_checktype(L, rec, LUA_TTABLE);
    lua_getfield(L, rec, "topic");
    lua_getfield(L, rec, "partition");
    lua_getfield(L, rec, "offset");
    const char *topic = lua_tostring(L, -3);
    lua_Integer part, off;
    if (!topic || !lk_get_integer(L, -2, &part) || !lk_get_integer(L, -1, &off))
        return luaL_argerror(L, rec, "a record of this share consumer's poll expected");
    int err = kn_share_consumer_acknowledge_offset(ls->sc, topic, (int32_t)part, (int64_t)off, type);
    lua_pop(L, 3);
    if (err == KN_ERR__STATE)
        return lk_push_error(
            L, err,
            "record not acknowledgeable: share.acknowledgement.mode is implicit, or the record "
            "is not one this member holds from its last poll");
    if (err == KN_ERR__UNSUPPORTED_VERSION)
        return lk_push_error(L, err,
                             "lock renewal (KIP-1222) needs ShareAcknowledge v2 on the record's leader "
                             "(Kafka 4.2+)");
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

/* share_consumer:acknowledge(record [, "accept"|"release"|"reject"|"renew"]) */
static int lk_share_acknowledge(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    int type = lk_share_type(L, 3);
    return lk_share_ack_record(L, ls, 2, type);
}

/* record:accept() etc.: upvalue 1 is the share consumer. */
static int lk_share_record_method(lua_State *L, int type) {
    lk_share *ls = (lk_share *)luaL_checkudata(L, lua_upvalueindex(1), LK_SHARE_MT);
    if (!ls->sc)
        return luaL_error(L, "share consumer is closed");
    return lk_share_ack_record(L, ls, 1, type);
}
static int lk_share_record_accept(lua_State *L) { return lk_share_record_method(L, KN_SHARE_ACCEPT); }
static int lk_share_record_release(lua_State *L) { return lk_share_record_method(L, KN_SHARE_RELEASE); }
static int lk_share_record_reject(lua_State *L) { return lk_share_record_method(L, KN_SHARE_REJECT); }
static int lk_share_record_renew(lua_State *L) { return lk_share_record_method(L, KN_SHARE_RENEW); }

/* __index of a share record: upvalue 1 the methods table, 2 the plain
 * record metatable's __index. */
static int lk_share_record_index(lua_State *L) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1))
        return 1;
    lua_pop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(2));
    if (!lua_isfunction(L, -1))
        return 0;
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    return 1;
}

/* Builds this consumer's record metatable into uv.record_mt (the
 * consumer userdata at ud). */
static void lk_share_record_mt(lua_State *L, int ud, int uv) {
    lua_createtable(L, 0, 2); /* the metatable */
    lua_createtable(L, 0, 4); /* methods */
    static const struct {
        const char *name;
        lua_CFunction fn;
    } m[] = {{"accept", lk_share_record_accept},
             {"release", lk_share_record_release},
             {"reject", lk_share_record_reject},
             {"renew", lk_share_record_renew}};
    for (int i = 0; i < 4; i++) {
        lua_pushvalue(L, ud);
        lua_pushcclosure(L, m[i].fn, 1);
        lua_setfield(L, -2, m[i].name);
    }
    luaL_getmetatable(L, "kafka_native.record");
    if (lua_istable(L, -1))
        lua_getfield(L, -1, "__index");
    else
        lua_pushnil(L);
    lua_remove(L, -2);
    lua_pushcclosure(L, lk_share_record_index, 2);
    lua_setfield(L, -2, "__index");
    lua_setfield(L, uv, "record_mt");
}

static void lk_share_free_records(void *p) { kn_records_free((kn_records *)p); }

/* share_consumer:poll([timeout_ms]) -> array of records, or nil, message, code */
static int lk_share_poll(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    int timeout_ms = lk_timeout_arg(L, 2, 0);
    lua_settop(L, 1);
    lua_getuservalue(L, 1);                                  /* 2 */
    lk_cguard *g = lk_cguard_push(L, lk_share_free_records); /* 3 */
    char errstr[512] = "";
    kn_records *recs = NULL;
    if (ls->head)
        timeout_ms = 0;
    lk_ready_rearm(&ls->ready);
    int err = kn_share_consumer_poll(ls->sc, timeout_ms, &recs, errstr, sizeof errstr);
    lk_log_deliver(L, ls->logq, 2);
    g->ptr = recs;
    int status = lk_share_run_events(L, ls, 2);
    if (status != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (err)
        return lk_push_error(L, err, errstr);
    lk_records_push(L, recs);        /* 4 */
    lua_getfield(L, 2, "record_mt"); /* 5 */
    size_t n = kn_records_count(recs);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 4, (int)i + 1);
        lua_pushliteral(L, "delivery_count");
        lua_pushinteger(L, kn_records_delivery_count(recs, i));
        lua_rawset(L, -3);
        lua_pushvalue(L, 5);
        lua_setmetatable(L, -2);
        lua_pop(L, 1);
    }
    lk_cguard_release(g);
    lua_settop(L, 4);
    return 1;
}

/* share_consumer:subscribe({topic, ...}) -> true or nil, message, code */
static int lk_share_subscribe(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = lua_rawlen(L, 2);
    if (n == 0 || n > 10000)
        return luaL_argerror(L, 2, "a non-empty array of topic names expected");
    const char **topics = lua_newuserdata(L, n * sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 2, "topic names must be strings");
        topics[i] = lua_tostring(L, -1);
        lua_pop(L, 1); /* the array keeps the string alive */
    }
    int err = kn_share_consumer_subscribe(ls->sc, topics, n);
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

static int lk_share_unsubscribe(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    int err = kn_share_consumer_unsubscribe(ls->sc);
    lua_getuservalue(L, 1);
    int status = lk_share_run_events(L, ls, lua_gettop(L));
    if (status != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

static void lk_share_free_tpl(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }

/* share_consumer:commit_sync([timeout_ms]) -> array of {topic=,
 * partition=, error=} (error nil on success), or nil, message, code,
 * that array */
static int lk_share_commit_sync(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    int timeout_ms = lk_timeout_arg(L, 2, -1);
    lua_settop(L, 1);
    lua_getuservalue(L, 1);                              /* 2 */
    lk_cguard *g = lk_cguard_push(L, lk_share_free_tpl); /* 3 */
    kn_topic_partition_list *res = NULL;
    char errstr[512] = "";
    int err = kn_share_consumer_commit_sync(ls->sc, timeout_ms, &res, errstr, sizeof errstr);
    g->ptr = res;
    int status = lk_share_run_events(L, ls, 2);
    if (status != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (!err) {
        if (res)
            lk_tpl_push(L, res, LK_TPL_ERRORS);
        else
            lua_createtable(L, 0, 0);
        return 1;
    }
    lk_push_error(L, err, errstr);
    if (res)
        lk_tpl_push(L, res, LK_TPL_ERRORS);
    else
        lua_pushnil(L);
    return 4;
}

static int lk_share_commit_async(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    int err = kn_share_consumer_commit_async(ls->sc);
    if (err)
        return lk_push_error(L, err, NULL);
    lua_pushboolean(L, 1);
    return 1;
}

static int lk_share_wakeup(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    kn_share_consumer_wakeup(ls->sc);
    return 0;
}

/* share_consumer:member() -> member id, member epoch */
static int lk_share_member(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    char id[64];
    int32_t epoch = kn_share_consumer_member(ls->sc, id, sizeof id);
    lua_pushstring(L, id);
    lua_pushinteger(L, epoch);
    return 2;
}

/* The library's readiness hook (network thread, or wakeup's caller). */
static void lk_share_ready_cb(kn_share_consumer *sc, void *opaque) {
    (void)sc;
    lk_ready_signal((lk_ready *)opaque);
}

/* share_consumer:ready_listen([dir]) -> path, or nil, message, code:
 * as consumer:ready_listen (docs/openresty.md). */
static int lk_share_ready_listen(lua_State *L) {
    return lk_ready_push_listen(L, &lk_share_check(L)->ready, 2);
}

/* share_consumer:ready_accept() -> true, or nil, message, code: from then
 * on a byte arrives on the connection whenever poll has something new
 * (records landed, an acknowledgement answer, an error, wakeup). */
static int lk_share_ready_accept(lua_State *L) {
    lk_share *ls = lk_share_check(L);
    char errstr[256] = "";
    int err = lk_ready_take(&ls->ready, errstr, sizeof errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    kn_share_consumer_set_ready_cb(ls->sc, lk_share_ready_cb, &ls->ready);
    lua_pushboolean(L, 1);
    return 1;
}

/* The one close path; run_lua false from __gc (timeout 0, no Lua). */
static int lk_share_shutdown(lua_State *L, lk_share *ls, int timeout_ms, int run_lua) {
    int collected = !run_lua && ls->sc;
    if (ls->sc) {
        kn_share_consumer *sc = ls->sc;
        ls->sc = NULL;
        kn_share_consumer_set_ready_cb(sc, NULL, NULL); /* not running after this */
        lk_ready_close(&ls->ready, NULL);
        kn_share_consumer_close(sc, timeout_ms);
        kn_share_consumer_destroy(sc);
    }
    if (!run_lua) {
        while (ls->head) {
            lk_ack_ev *ev = ls->head;
            ls->head = ev->next;
            lk_ack_ev_free(ev);
        }
        ls->tail = NULL;
        if (collected)
            lk_log_collected(ls->logq, "share consumer collected without close(): closed at once "
                                       "(its records are released when the connection drops)");
        kn_log_queue_destroy(ls->logq);
        ls->logq = NULL;
        return 0;
    }
    lua_getuservalue(L, 1);
    int uv = lua_gettop(L);
    lk_log_deliver(L, ls->logq, uv);
    kn_log_queue_destroy(ls->logq);
    ls->logq = NULL;
    int status = lk_share_run_events(L, ls, uv);
    if (status != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    lua_pushboolean(L, 1);
    return 1;
}

/* share_consumer:close([timeout_ms]) -> true, or nil, message, "_CALLBACK" */
static int lk_share_close(lua_State *L) {
    lk_share *ls = (lk_share *)luaL_checkudata(L, 1, LK_SHARE_MT);
    int timeout_ms = lk_timeout_arg(L, 2, -1);
    lua_settop(L, 1);
    return lk_share_shutdown(L, ls, timeout_ms, 1);
}

#if LUA_VERSION_NUM >= 504
static int lk_share_close_scope(lua_State *L) {
    lua_settop(L, 1);
    lk_share_shutdown(L, (lk_share *)luaL_checkudata(L, 1, LK_SHARE_MT), -1, 1);
    return 0;
}
#endif

static int lk_share_gc(lua_State *L) {
    lk_share_shutdown(L, (lk_share *)luaL_checkudata(L, 1, LK_SHARE_MT), 0, 0);
    return 0;
}

static int lk_share_tostring(lua_State *L) {
    lk_share *ls = (lk_share *)luaL_checkudata(L, 1, LK_SHARE_MT);
    if (ls->sc)
        lua_pushfstring(L, "kafka_native.share_consumer (%p)", (void *)ls);
    else
        lua_pushliteral(L, "kafka_native.share_consumer (closed)");
    return 1;
}

/* kafka_native.share_consumer(config [, {on_acknowledge=, log=, log_level=}]) */
int lk_share_new(lua_State *L) {
    luaL_checkany(L, 1);
    lk_check_opt_table(L, 2);
    lua_settop(L, 2);
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "on_acknowledge");
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
            return luaL_argerror(L, 2, "option 'on_acknowledge' must be a function");
        lua_pop(L, 1);
    }
    lk_log_check_opts(L, 2);
    lk_share *ls = (lk_share *)lk_newuserdata(L, sizeof(*ls)); /* 3 */
    memset(ls, 0, sizeof(*ls));
    lk_ready_init(&ls->ready);
    luaL_getmetatable(L, LK_SHARE_MT);
    lua_setmetatable(L, 3);
    lua_createtable(L, 0, 3); /* 4: the uservalue */
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "on_acknowledge");
        lua_setfield(L, 4, "on_acknowledge");
    }
    lk_share_record_mt(L, 3, 4);
    lua_pushvalue(L, 4);
    lua_setuservalue(L, 3);
    char errstr[512] = "";
    int err = KN_OK;
    kn_conf *conf = lk_conf_from_arg(L, 1, KN_CLIENT_CONSUMER, errstr, sizeof errstr, &err);
    if (!conf)
        return lk_push_error(L, err, errstr);
    err = lk_log_setup(L, 2, 4, conf, &ls->logq);
    if (err) {
        kn_conf_destroy(conf);
        return lk_push_error(L, err, NULL);
    }
    ls->sc = kn_share_consumer_new(conf, errstr, sizeof errstr);
    kn_conf_destroy(conf);
    if (!ls->sc)
        return lk_push_error(L, KN_ERR__CONFIG, errstr);
    kn_share_consumer_set_ack_commit_cb(ls->sc, lk_share_ack_cb, ls);
    lua_settop(L, 3);
    return 1;
}


/* share:kafka_metrics([group]) / :kafka_metric(group, name[, tags]):
 * Kafka-named metrics (lk_metrics.c, docs/metrics.md). */
static int lk_share_walk(void *h, kn_metric_visit_fn fn, void *ctx) { return kn_share_consumer_metrics(h, fn, ctx); }
static int lk_share_kafka_metrics(lua_State *L) {
    return lk_metrics_push(L, lk_share_walk, lk_share_check(L)->sc, false);
}
static int lk_share_kafka_metric(lua_State *L) {
    return lk_metrics_push(L, lk_share_walk, lk_share_check(L)->sc, true);
}

static const luaL_Reg lk_share_methods[] = {
    {"kafka_metrics", lk_share_kafka_metrics},
    {"kafka_metric", lk_share_kafka_metric},
    {"subscribe", lk_share_subscribe},
    {"unsubscribe", lk_share_unsubscribe},
    {"poll", lk_share_poll},
    {"acknowledge", lk_share_acknowledge},
    {"commit_sync", lk_share_commit_sync},
    {"commit_async", lk_share_commit_async},
    {"wakeup", lk_share_wakeup},
    {"member", lk_share_member},
    {"ready_listen", lk_share_ready_listen},
    {"ready_accept", lk_share_ready_accept},
    {"close", lk_share_close},
    {NULL, NULL},
};

void lk_share_register(lua_State *L) {
    luaL_newmetatable(L, LK_SHARE_MT);
    lua_createtable(L, 0, 10);
    luaL_setfuncs(L, lk_share_methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lk_share_gc);
    lua_setfield(L, -2, "__gc");
#if LUA_VERSION_NUM >= 504
    lua_pushcfunction(L, lk_share_close_scope);
    lua_setfield(L, -2, "__close");
#endif
    lua_pushcfunction(L, lk_share_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
}

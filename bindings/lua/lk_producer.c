/*
 * lk_producer.c: the producer userdata (kafka_native.producer(config,
 * {on_delivery = fn})).
 *
 * Delivery reports: the library serves reports inside
 * kn_producer_poll/flush/close by calling lk_producer_dr, which only
 * links the record's lk_report (allocated at send, so the callback never
 * allocates) onto this producer's queue. After the C call returns,
 * lk_producer_drain runs the Lua callbacks, oldest first, each through
 * lk_pcall (as are the optional key/value serializers, from send). A
 * report is unlinked just before its callback runs, so when
 * a callback raises, the call returns nil, message, "_CALLBACK" and the
 * reports behind it stay queued for the next poll: none is lost.
 *
 * Lua values the producer owns (the default on_delivery, per-record
 * callbacks referenced with luaL_ref) live in its uservalue table, not
 * in the registry: nothing leaks when the userdata is collected.
 *
 * Lifetimes as in lk_admin.c: created zeroed (closed); close(), __close
 * and __gc share lk_producer_shutdown; __gc runs no Lua code (queued
 * reports are freed without their callbacks).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "kn_alloc.h"
#include "lk.h"
#include "lk_metrics.h"
#if defined(LUA_LJDIR)
#include "lk_send_lua.h" /* lk_send.lua: the FFI half of send */
#endif

#define LK_PRODUCER_MT "kafka_native.producer"

/* A copy of a record's key, value and headers, kept with its report
 * under the failed_records option so a failed record's callback can
 * re-queue or spill it. One allocation: the headers array, then the
 * bytes it points into. */
typedef struct lk_rec_copy {
    int32_t key_len, value_len; /* -1: null */
    size_t header_count;
    const char *key, *value;
    kn_header headers[]; /* then the header keys/values, key, value */
} lk_rec_copy;

/* One accepted record whose Lua callback has not run yet. */
typedef struct lk_report {
    struct lk_report *next;
    int ref; /* per-record callback in the uservalue table, or LUA_NOREF */
    int err;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    char *errstr;       /* kn_malloc'd detail, NULL when none */
    lk_rec_copy *copy;  /* failed_records: the record's bytes, else NULL */
    char topic[];       /* the record's topic, NUL-terminated */
} lk_report;

typedef struct lk_producer {
    kn_producer *p;         /* NULL once closed */
    lk_report *head, *tail; /* served by the library, not yet by Lua */
    int has_default_cb;     /* uservalue.on_delivery is a function */
    int has_serializer;     /* uservalue.key_ or value_serializer is one */
    int has_on_send;        /* uservalue.on_send is a function */
    int has_on_ack;         /* uservalue.on_acknowledgement is one */
    int has_partitioner;    /* uservalue.partitioner is a function */
    lk_partitioner part;    /* its bridge (lk_partitioner.c) */
    kn_log_queue *logq;     /* options.log's queue, or NULL */
    int failed_records;     /* options.failed_records: reports of failures carry the record */
    int64_t queued;         /* reports in head..tail */
    lk_ready ready;         /* readiness socket (ready_listen / ready_accept) */
    int ffi_send;           /* send(topic, value) may take the FFI path: no Lua hook to run */
    int send_err;           /* the FFI path's last failure, for lk_producer_send_error */
    char send_errstr[512];
} lk_producer;

/* The library forbids re-entering a producer from its hooks. */
static void lk_producer_not_in_hook(lua_State *L, lk_producer *lp) {
    if (lp->part.running)
        luaL_error(L, "producer methods cannot run inside its partitioner");
}

static lk_producer *lk_producer_check(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    if (lp->p == NULL)
        luaL_error(L, "producer is closed");
    if (kn_producer_forked(lp->p))
        luaL_error(L, LK_FORKED_MSG);
    lk_producer_not_in_hook(L, lp);
    return lp;
}

kn_producer *lk_producer_check_open(lua_State *L) { return lk_producer_check(L)->p; }

static void lk_report_free(lk_report *r) {
    kn_free(r->errstr);
    kn_free(r->copy);
    kn_free(r);
}

/* Copies rec's key, value and headers into one allocation (NULL when
 * out of memory). */
static lk_rec_copy *lk_rec_copy_new(const kn_record_out *rec) {
    size_t bytes = rec->key_len + rec->value_len;
    for (size_t i = 0; i < rec->header_count; i++)
        bytes += strlen(rec->headers[i].key) + 1 + rec->headers[i].value_len;
    lk_rec_copy *c = (lk_rec_copy *)kn_malloc(sizeof(*c) + rec->header_count * sizeof(kn_header) + bytes + 1);
    if (!c)
        return NULL;
    char *at = (char *)&c->headers[rec->header_count];
    c->header_count = rec->header_count;
    for (size_t i = 0; i < rec->header_count; i++) {
        const kn_header *h = &rec->headers[i];
        size_t kl = strlen(h->key) + 1;
        memcpy(at, h->key, kl);
        c->headers[i].key = at;
        at += kl;
        c->headers[i].value = h->value ? at : NULL;
        c->headers[i].value_len = h->value_len;
        if (h->value_len)
            memcpy(at, h->value, h->value_len);
        at += h->value_len;
    }
    c->key_len = rec->key ? (int32_t)rec->key_len : -1;
    c->key = at;
    if (rec->key_len)
        memcpy(at, rec->key, rec->key_len);
    at += rec->key_len;
    c->value_len = rec->value ? (int32_t)rec->value_len : -1;
    c->value = at;
    if (rec->value_len)
        memcpy(at, rec->value, rec->value_len);
    return c;
}

/* Whether sending the same record again may succeed: the library's
 * retriable errors, plus a delivery timeout and a full buffer (the
 * broker or the buffer may be back), as Java's TimeoutException is a
 * RetriableException. */
static int lk_report_retriable(int err) {
    return kn_err_is_retriable(err) || err == KN_ERR__MSG_TIMED_OUT || err == KN_ERR__QUEUE_FULL;
}

/* Library callback (caller's thread, inside poll/flush/close): queue
 * the report. Allocates only the error detail; without memory for it,
 * the report keeps its code and loses the detail. */
static void lk_producer_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    lk_producer *lp = (lk_producer *)opaque;
    lk_report *r = (lk_report *)kn_delivery_opaque(d);
    r->next = NULL;
    r->err = kn_delivery_error(d);
    r->partition = kn_delivery_partition(d);
    r->offset = kn_delivery_offset(d);
    r->timestamp = kn_delivery_timestamp(d);
    const char *es = kn_delivery_errstr(d);
    r->errstr = (r->err && es && *es) ? kn_strdup(es) : NULL;
    if (lp->tail)
        lp->tail->next = r;
    else
        lp->head = r;
    lp->tail = r;
    lp->queued++;
}

static void lk_set_int(lua_State *L, const char *key, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
}

/* Sets key, value and headers ({key, value} pairs, as a consumer
 * record's) of the report table on top from a record copy. */
static void lk_rec_copy_push(lua_State *L, const lk_rec_copy *c) {
    if (c->key_len >= 0) {
        lua_pushlstring(L, c->key, (size_t)c->key_len);
        lua_setfield(L, -2, "key");
    }
    if (c->value_len >= 0) {
        lua_pushlstring(L, c->value, (size_t)c->value_len);
        lua_setfield(L, -2, "value");
    }
    lua_createtable(L, (int)c->header_count, 0);
    for (size_t i = 0; i < c->header_count; i++) {
        lua_createtable(L, 2, 0);
        lua_pushstring(L, c->headers[i].key);
        lua_rawseti(L, -2, 1);
        if (c->headers[i].value) {
            lua_pushlstring(L, (const char *)c->headers[i].value, c->headers[i].value_len);
            lua_rawseti(L, -2, 2);
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lua_setfield(L, -2, "headers");
}

/* Runs the Lua callbacks of queued reports, oldest first (uv: stack
 * index of the uservalue table). Returns LUA_OK when the queue is empty,
 * or the status of the first callback that raised with its message on
 * top of the stack (the reports behind it stay queued). *served counts
 * the callbacks run. */
static int lk_producer_drain(lua_State *L, lk_producer *lp, int uv, lua_Integer *served) {
    while (lp->head) {
        lk_report *r = lp->head;
        /* Function and report table first: if building them raises
         * (out of memory), the report is still queued. */
        if (r->ref != LUA_NOREF)
            lua_rawgeti(L, uv, r->ref);
        else
            lua_getfield(L, uv, "on_delivery");
        lua_createtable(L, 0, 6);
        lua_pushstring(L, r->topic);
        lua_setfield(L, -2, "topic");
        lk_set_int(L, "partition", r->partition);
        lk_set_int(L, "offset", (lua_Integer)r->offset);
        lk_set_int(L, "timestamp", (lua_Integer)r->timestamp);
        if (r->err) {
            lua_pushstring(L, kn_err_name(r->err));
            lua_setfield(L, -2, "error");
            lua_pushstring(L, r->errstr ? r->errstr : kn_err_message(r->err));
            lua_setfield(L, -2, "message");
            lua_pushboolean(L, lk_report_retriable(r->err));
            lua_setfield(L, -2, "retriable");
            if (r->copy)
                lk_rec_copy_push(L, r->copy);
        }
        lp->head = r->next;
        if (!lp->head)
            lp->tail = NULL;
        lp->queued--;
        if (r->ref != LUA_NOREF)
            luaL_unref(L, uv, r->ref);
        lk_report_free(r);
        /* Stack: callback, report. The interceptor sees every report
         * first; when it raises, the record's callback still runs (a
         * broken interceptor must not eat reports) and the call returns
         * the interceptor's error. */
        int status = LUA_OK;
        if (lp->has_on_ack) {
            lua_getfield(L, uv, "on_acknowledgement");
            lua_pushvalue(L, -2);
            status = lk_pcall(L, 1, 0);
            if (status != LUA_OK)
                lua_insert(L, -3); /* message, callback, report */
        }
        if (!lua_isfunction(L, -2)) {
            lua_pop(L, 2);
        } else {
            int cb_status = lk_pcall(L, 1, 0);
            if (cb_status != LUA_OK) {
                if (status == LUA_OK)
                    status = cb_status;
                else
                    lua_pop(L, 1); /* the interceptor's error comes first */
            }
        }
        (*served)++;
        if (status != LUA_OK)
            return status;
    }
    return LUA_OK;
}

/* Frees queued reports without running Lua (for __gc). */
static void lk_producer_discard(lk_producer *lp) {
    while (lp->head) {
        lk_report *r = lp->head;
        lp->head = r->next;
        lk_report_free(r);
    }
    lp->tail = NULL;
    lp->queued = 0;
}

/* The one close path. run_lua: serve the remaining reports' callbacks
 * (never from __gc). Returns the number of values pushed: 1 (true) or
 * 3 (nil, message, code). */
static int lk_producer_shutdown(lua_State *L, lk_producer *lp, int timeout_ms, int run_lua) {
    int rc = KN_OK;
    int64_t left = 0;
    if (lp->p && kn_producer_forked(lp->p)) {
        /* The parent's producer: its reports and log queue belong to
         * threads that are not here. Nothing to flush, nobody to join. */
        lp->p = NULL;
        lp->head = lp->tail = NULL;
        lp->logq = NULL;
        lk_forked_collected("producer");
        return 0;
    }
    int collected = !run_lua && lp->p;
    if (lp->p) {
        kn_producer *p = lp->p;
        lp->p = NULL;
        lk_ready_close_producer(&lp->ready, p);
        left = kn_producer_outstanding(p);
        rc = kn_producer_close(p, timeout_ms);
        kn_producer_destroy(p);
    }
    if (!run_lua) {
        lk_producer_discard(lp);
        if (collected)
            lk_log_collected(lp->logq,
                             "producer collected without close(): closed at once; %lld undelivered "
                             "record(s) failed with _CLOSED, their callbacks not run",
                             (long long)left);
        kn_log_queue_destroy(lp->logq);
        lp->logq = NULL;
        return 0;
    }
    lua_getuservalue(L, 1);
    int uv = lua_gettop(L);
    /* The network thread is gone: these are the last records. */
    lk_log_deliver(L, lp->logq, uv);
    kn_log_queue_destroy(lp->logq);
    lp->logq = NULL;
    int cb_failed = 0;
    lua_Integer served = 0;
    /* Every report is delivered; the first callback error is kept. */
    while (lp->head) {
        if (lk_producer_drain(L, lp, uv, &served) != LUA_OK) {
            if (!cb_failed) {
                cb_failed = 1;
                lua_insert(L, uv + 1);
            } else {
                lua_pop(L, 1);
            }
        }
    }
    if (cb_failed)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, uv + 1));
    if (rc)
        return lk_push_error(L, rc, "records were still outstanding when the close timeout expired");
    lua_pushboolean(L, 1);
    return 1;
}

/* producer:close([timeout_ms]) -> true, or nil, message, code.
 * Flushes up to timeout_ms (default: no limit, bounded by
 * delivery.timeout.ms), fails the rest, runs every remaining callback. */
static int lk_producer_close(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    if (lp->p && kn_producer_forked(lp->p))
        return luaL_error(L, LK_FORKED_MSG);
    lk_producer_not_in_hook(L, lp);
    int timeout_ms = lk_timeout_arg(L, 2, -1);
    return lk_producer_shutdown(L, lp, timeout_ms, 1);
}

#if LUA_VERSION_NUM >= 504
/* __close (5.4 passes the error, if any, as argument 2: ignored). */
static int lk_producer_close_scope(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    lk_producer_shutdown(L, lp, -1, 1);
    return 0;
}
#endif

/* A finalizer runs at any allocation (in nginx: in whichever request
 * allocates), so it never waits on the network: close with timeout 0. */
static int lk_producer_gc(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    lk_producer_shutdown(L, lp, 0, 0);
    return 0;
}

static int lk_producer_tostring(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    if (lp->p)
        lua_pushfstring(L, "kafka_native.producer (%p)", (void *)lp);
    else
        lua_pushliteral(L, "kafka_native.producer (closed)");
    return 1;
}

static const char *const lk_producer_fn_opts[] = {"on_delivery", "key_serializer",     "value_serializer",
                                                  "on_send",     "on_acknowledgement", "partitioner"};
#define LK_PRODUCER_FN_OPTS 6

/* kafka_native.producer(config [, {on_delivery=, key_serializer=,
 * value_serializer=, on_send=, on_acknowledgement=, partitioner=, log=,
 * log_level=}]) */
int lk_producer_new(lua_State *L) {
    luaL_checkany(L, 1);
    lk_check_opt_table(L, 2);
    lua_settop(L, 2);
    for (int i = 0; i < LK_PRODUCER_FN_OPTS && !lua_isnil(L, 2); i++) {
        lua_getfield(L, 2, lk_producer_fn_opts[i]);
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1)) {
            lua_pushfstring(L, "option '%s' must be a function", lk_producer_fn_opts[i]);
            return luaL_argerror(L, 2, lua_tostring(L, -1));
        }
        lua_pop(L, 1);
    }
    lk_log_check_opts(L, 2);
    lk_oauth_check_opts(L, 2);
    lk_producer *lp = (lk_producer *)lk_newuserdata(L, sizeof(*lp));
    memset(lp, 0, sizeof(*lp));
    lk_ready_init(&lp->ready);
    lp->failed_records = lk_opt_bool_field(L, 2, "failed_records", 0);
    luaL_getmetatable(L, LK_PRODUCER_MT);
    lua_setmetatable(L, -2);
    lua_createtable(L, 0, LK_PRODUCER_FN_OPTS + 1);
    for (int i = 0; i < LK_PRODUCER_FN_OPTS && !lua_isnil(L, 2); i++) {
        lua_getfield(L, 2, lk_producer_fn_opts[i]);
        if (lua_isfunction(L, -1)) {
            if (i == 0)
                lp->has_default_cb = 1;
            else if (i < 3)
                lp->has_serializer = 1;
            else if (i == 3)
                lp->has_on_send = 1;
            else if (i == 4)
                lp->has_on_ack = 1;
            else
                lp->has_partitioner = 1;
        }
        lua_setfield(L, -2, lk_producer_fn_opts[i]);
    }
    lua_setuservalue(L, -2);

    char errstr[512] = "";
    int err = KN_OK;
    kn_conf *conf = lk_conf_from_arg(L, 1, KN_CLIENT_PRODUCER, errstr, sizeof(errstr), &err);
    if (!conf)
        return lk_push_error(L, err, errstr);
    /* No Lua runs inside the library's send without these hooks (the
     * OAUTHBEARER token function is called from it, so it counts). */
    int has_oauth = 0;
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "oauthbearer_token");
        has_oauth = lua_isfunction(L, -1);
        lua_pop(L, 1);
    }
    lp->ffi_send = !lp->has_on_send && !lp->has_serializer && !lp->has_partitioner && !has_oauth;
    lua_getuservalue(L, 3);
    err = lk_log_setup(L, 2, lua_gettop(L), conf, &lp->logq);
    if (!err)
        err = lk_oauth_setup(L, 2, lua_gettop(L), conf);
    lua_pop(L, 1);
    if (err) {
        kn_conf_destroy(conf);
        return lk_push_error(L, err, NULL);
    }
    kn_producer_hooks hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.size = sizeof hooks;
    hooks.partitioner = lk_partitioner_cb;
    hooks.partitioner_opaque = &lp->part;
    lp->p = kn_producer_new_with_hooks(conf, NULL, lp, lp->has_partitioner ? &hooks : NULL, errstr,
                                       sizeof(errstr));
    kn_conf_destroy(conf);
    if (!lp->p)
        return lk_push_error(L, kn_last_error(), errstr);
    return 1;
}

/* Raises unless the value at idx is nil or a string; returns the bytes
 * (NULL for nil). */
static const char *lk_opt_bytes(lua_State *L, int idx, size_t *len, int argidx, const char *what) {
    *len = 0;
    if (lua_isnil(L, idx))
        return NULL;
    if (lua_type(L, idx) != LUA_TSTRING) {
        lua_pushfstring(L, "%s must be a string or nil", what);
        luaL_argerror(L, argidx, lua_tostring(L, -1));
    }
    return lua_tolstring(L, idx, len);
}

/* Reads the headers table at the top of the stack into a Lua-owned
 * array: the array part as {key, value} pairs in order, then string
 * keys mapped to string values. Strings stay owned by the table, which
 * the caller's options table keeps alive. Raises on a wrong shape.
 * Leaves the array userdata on the stack above the table. */
static kn_header *lk_read_headers(lua_State *L, size_t *count) {
    int t = lua_gettop(L);
    size_t na = lua_rawlen(L, t), n = na;
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        lua_Integer k;
        int in_array = lk_get_integer(L, -2, &k) && k >= 1 && (size_t)k <= na;
        if (!in_array) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                luaL_argerror(L, 4, "'headers' must map strings to strings or be an array of {key, value}");
            n++;
        }
        lua_pop(L, 1);
    }
    kn_header *h = (kn_header *)lua_newuserdata(L, (n ? n : 1) * sizeof(*h));
    for (size_t i = 0; i < na; i++) {
        lua_rawgeti(L, t, (int)(i + 1));
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, 4, "'headers' array entries must be {key, value}");
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        if (lua_type(L, -2) != LUA_TSTRING || (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING))
            luaL_argerror(L, 4, "a header is {key (string), value (string or nil)}");
        /* The entry table (anchored by the headers table) owns both. */
        h[i].key = lua_tostring(L, -2);
        h[i].value = lua_isnil(L, -1) ? NULL : lua_tolstring(L, -1, &h[i].value_len);
        if (!h[i].value)
            h[i].value_len = 0;
        lua_pop(L, 3);
    }
    size_t i = na;
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        lua_Integer k;
        if (!(lk_get_integer(L, -2, &k) && k >= 1 && (size_t)k <= na)) {
            h[i].key = lua_tostring(L, -2);
            h[i].value = lua_tolstring(L, -1, &h[i].value_len);
            i++;
        }
        lua_pop(L, 1);
    }
    *count = n;
    return h;
}

/* Runs the serializer named `name` (in the uservalue at index 6) on the
 * value at slot, with the topic (index 2) as second argument, replacing
 * the value with its result. nil values are not serialized. Returns
 * LUA_OK, or an error status with the message on top. */
static int lk_serialize(lua_State *L, const char *name, int slot) {
    if (lua_isnil(L, slot))
        return LUA_OK;
    lua_getfield(L, 6, name);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return LUA_OK;
    }
    lua_pushvalue(L, slot);
    lua_pushvalue(L, 2);
    int status = lk_pcall(L, 2, 1);
    if (status != LUA_OK)
        return status;
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING) {
        lua_pushfstring(L, "%s returned a %s, not a string or nil", name, luaL_typename(L, -1));
        return LUA_ERRRUN;
    }
    lua_replace(L, slot);
    return LUA_OK;
}

/* The on_send interceptor (send's stack: 1 producer, 2 topic, 3 value,
 * 4 options or nil): calls it with the record as a table {topic=,
 * value=, key=, partition=, timestamp=, headers=} before serializers
 * and partitioner, as Java's ProducerInterceptor.onSend, and puts the
 * returned record's fields back into slots 2..4 (keeping the options'
 * on_delivery). Returns LUA_OK, or an error status with the message on
 * top. */
static int lk_on_send(lua_State *L) {
    static const char *const fields[] = {"key", "partition", "timestamp", "headers"};
    lua_getuservalue(L, 1);
    lua_getfield(L, -1, "on_send");
    lua_createtable(L, 0, 6);
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "topic");
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "value");
    for (int i = 0; i < 4 && !lua_isnil(L, 4); i++) {
        lua_getfield(L, 4, fields[i]);
        lua_setfield(L, -2, fields[i]);
    }
    int status = lk_pcall(L, 1, 1);
    if (status != LUA_OK)
        return status;
    if (lua_type(L, -1) != LUA_TTABLE) {
        lua_pushfstring(L, "on_send returned a %s, not a record table", luaL_typename(L, -1));
        return LUA_ERRRUN;
    }
    int rec = lua_gettop(L);
    lua_createtable(L, 0, 5); /* the new options */
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, rec, fields[i]);
        lua_setfield(L, -2, fields[i]);
    }
    if (!lua_isnil(L, 4)) {
        lua_getfield(L, 4, "on_delivery");
        lua_setfield(L, -2, "on_delivery");
    }
    lua_replace(L, 4);
    lua_getfield(L, rec, "value");
    lua_replace(L, 3);
    lua_getfield(L, rec, "topic");
    lua_replace(L, 2);
    return LUA_OK;
}

/* The part of a send that needs no Lua, shared by send and its FFI fast
 * path (lk_producer_send_ffi): allocates the record's report when a
 * Lua callback will want one (ref: the per-record on_delivery's
 * reference, or LUA_NOREF), then hands the record to the library.
 * topic_len: the topic's length, or SIZE_MAX when not known (measured
 * only if a report needs the name: most sends keep none). 
 * Returns KN_OK, or an error with errstr filled ("" for out of memory)
 * and nothing kept: ref stays the caller's to release. */
static inline int lk_producer_enqueue(lk_producer *lp, kn_record_out *rec, size_t topic_len, int ref, char *errstr,
                               size_t errsize) {
    lk_report *r = NULL;
    if (ref != LUA_NOREF || lp->has_default_cb || lp->has_on_ack) {
        if (topic_len == SIZE_MAX)
            topic_len = strlen(rec->topic);
        r = (lk_report *)kn_malloc(sizeof(*r) + topic_len + 1);
        if (!r) {
            errstr[0] = '\0';
            return KN_ERR__NOMEM;
        }
        memset(r, 0, sizeof(*r));
        r->ref = ref;
        if (lp->failed_records && !(r->copy = lk_rec_copy_new(rec))) {
            kn_free(r);
            errstr[0] = '\0';
            return KN_ERR__NOMEM;
        }
        memcpy(r->topic, rec->topic, topic_len + 1);
        rec->dr = lk_producer_dr;
        rec->opaque = r;
    }
    int err = kn_producer_send(lp->p, rec, errstr, errsize);
    if (err && r)
        lk_report_free(r);
    return err;
}

/* producer:send(topic, value [, {key=, partition=, headers=, timestamp=,
 * on_delivery=}]) -> true, or nil, message, code (and, on a
 * transactional producer, the kind of lk_txn.c). With the producer's
 * key_serializer / value_serializer, key and value may be any Lua value
 * (nil is never serialized); a serializer that raises or returns
 * something else than a string or nil makes send return nil, message,
 * "_CALLBACK" with nothing sent. Never waits for the
 * broker (only, like Java, up to max.block.ms for a full buffer or a
 * topic's first metadata). */
static int lk_producer_send(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    if (lua_type(L, 2) != LUA_TSTRING)
        return luaL_argerror(L, 2, "topic (string) expected");
    lk_check_opt_table(L, 4);
    lua_settop(L, 4);
    if (lp->has_on_send) {
        int status = lk_on_send(L);
        if (status != LUA_OK)
            return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
        lua_settop(L, 4);
        if (lua_type(L, 2) != LUA_TSTRING)
            return lk_push_error(L, KN_ERR__CALLBACK, "on_send returned a record without a topic (string)");
    }
    if (lua_isnil(L, 4))
        lua_pushnil(L);
    else
        lua_getfield(L, 4, "key"); /* 5: the key, then its serialized form */
    lua_getuservalue(L, 1);        /* 6 */
    if (lp->has_serializer) {
        int status = lk_serialize(L, "value_serializer", 3);
        if (status == LUA_OK)
            status = lk_serialize(L, "key_serializer", 5);
        if (status != LUA_OK)
            return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    }
    size_t topic_len;
    rec.topic = lua_tolstring(L, 2, &topic_len);
    rec.value = lk_opt_bytes(L, 3, &rec.value_len, 3, "value");
    rec.key = lk_opt_bytes(L, 5, &rec.key_len, 4, "'key'");
    int per_record_cb = 0;
    if (!lua_isnil(L, 4)) {
        lua_Integer part = lk_opt_int_field(L, 4, "partition", KN_PARTITION_ANY);
        if (part < KN_PARTITION_ANY || part > 0x7fffffff)
            return luaL_argerror(L, 4, "'partition' out of range");
        rec.partition = (int32_t)part;
        rec.timestamp = (int64_t)lk_opt_int_field(L, 4, "timestamp", 0);
        lua_getfield(L, 4, "on_delivery");
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
            return luaL_argerror(L, 4, "'on_delivery' must be a function");
        per_record_cb = lua_isfunction(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, 4, "headers"); /* 7 */
        if (!lua_isnil(L, -1)) {
            if (lua_type(L, -1) != LUA_TTABLE)
                return luaL_argerror(L, 4, "'headers' must be a table");
            rec.headers = lk_read_headers(L, &rec.header_count); /* 8 */
        }
    }

    int in_part = lp->has_partitioner && rec.partition == KN_PARTITION_ANY;
    if (in_part)
        lk_partitioner_enter(L, &lp->part, 6); /* may raise: nothing allocated yet */
    int ref = LUA_NOREF;
    if (per_record_cb) {
        lua_getfield(L, 4, "on_delivery");
        ref = luaL_ref(L, 6); /* may raise: nothing allocated yet */
    }
    char errstr[512];
    errstr[0] = '\0'; /* not "" (that zeroes all 512 bytes, per record) */
    int err = lk_producer_enqueue(lp, &rec, topic_len, ref, errstr, sizeof(errstr));
    int part_err = in_part ? lk_partitioner_leave(L, &lp->part) : 0;
    if (err) {
        if (ref != LUA_NOREF)
            luaL_unref(L, 6, ref);
        if (part_err) /* the record was refused because the Lua function failed */
            return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, part_err));
        lk_push_error(L, err, errstr);
        if (!kn_producer_transaction_state(lp->p))
            return 3;
        lk_txn_push_send_kind(L, lp->p, err); /* "abortable", "fatal", ... */
        return 4;
    }
    lua_pushboolean(L, 1);
    return 1;
}

#if defined(LUA_LJDIR)
/* LuaJIT's FFI fast path of producer:send(topic, value) (lk_send.lua):
 * the same send without a lua_CFunction call, which LuaJIT cannot
 * compile (each one ends a trace and runs through the interpreter, a
 * good part of a record's cost in a request handler's send loop).
 * ud is the producer userdata's payload (lk_send.lua checked its
 * metatable), topic and value Lua strings. Returns 0 when the record
 * was accepted; 1 when this producer or call needs the full send
 * (closed, forked, inside its partitioner, a Lua hook that send would
 * run), with nothing attempted; 2 when the send failed, its error kept
 * for lk_producer_send_error. Never calls Lua (an FFI call must not
 * re-enter the VM) and never raises. */
static int lk_producer_send_ffi(void *ud, const char *topic, const char *value, size_t value_len) {
    lk_producer *lp = (lk_producer *)ud;
    if (!lp->ffi_send || lp->p == NULL || lp->part.running || kn_producer_forked(lp->p))
        return 1;
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.value = value;
    rec.value_len = value_len;
    lp->send_errstr[0] = '\0';
    lp->send_err = lk_producer_enqueue(lp, &rec, SIZE_MAX, LUA_NOREF, lp->send_errstr, sizeof lp->send_errstr);
    return lp->send_err ? 2 : 0;
}

/* The results of a send the FFI path refused (its return 2): nil,
 * message, code, and on a transactional producer the kind, as send. */
static int lk_producer_send_error(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    lk_push_error(L, lp->send_err, lp->send_errstr);
    if (lp->p == NULL || !kn_producer_transaction_state(lp->p))
        return 3;
    lk_txn_push_send_kind(L, lp->p, lp->send_err);
    return 4;
}
#endif

int lk_producer_serve(lua_State *L) {
    lk_producer *lp = (lk_producer *)luaL_checkudata(L, 1, LK_PRODUCER_MT);
    int top = lua_gettop(L);
    lua_getuservalue(L, 1);
    lk_log_deliver(L, lp->logq, top + 1);
    lua_Integer served = 0;
    int status = lk_producer_drain(L, lp, top + 1, &served);
    if (status != LUA_OK) {
        lua_remove(L, top + 1); /* the message stays on top */
        return status;
    }
    lua_settop(L, top);
    return LUA_OK;
}

/* producer:poll([timeout_ms]) -> number of callbacks run, or nil,
 * message, "_CALLBACK". Waits up to timeout_ms (default 0) for a report
 * when none is queued. */
static int lk_producer_poll(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    int timeout_ms = lk_timeout_arg(L, 2, 0);
    lua_settop(L, 1);
    lua_getuservalue(L, 1);
    lua_Integer served = 0;
    if (lk_producer_drain(L, lp, 2, &served) != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (lp->p == NULL) /* a callback closed it */
        goto done;
    lk_ready_rearm(&lp->ready); /* reports queued from now on signal again */
    int prc = kn_producer_poll(lp->p, served > 0 ? 0 : timeout_ms);
    lk_log_deliver(L, lp->logq, 2);
    if (lk_producer_drain(L, lp, 2, &served) != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (prc < 0 && served == 0) {
        /* Authentication failed: nothing will ever be delivered. */
        char es[512];
        kn_producer_fatal_error(lp->p, es, sizeof es);
        return lk_push_error(L, prc, es);
    }
done:
    lua_pushinteger(L, served);
    return 1;
}

/* producer:flush([timeout_ms]) -> true, or nil, message, code
 * ("_TIMED_OUT" with records outstanding, "_CALLBACK"). */
static int lk_producer_flush(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    int timeout_ms = lk_timeout_arg(L, 2, -1);
    lua_settop(L, 1);
    lua_getuservalue(L, 1);
    int rc = kn_producer_flush(lp->p, timeout_ms);
    lk_log_deliver(L, lp->logq, 2);
    lua_Integer served = 0;
    if (lk_producer_drain(L, lp, 2, &served) != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    if (rc == KN_ERR__TIMED_OUT)
        return lk_push_error(L, rc, "records still outstanding after the flush timeout");
    if (rc) {
        char es[512];
        kn_producer_fatal_error(lp->p, es, sizeof es);
        return lk_push_error(L, rc, es);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* producer:fd() -> a descriptor readable while reports are queued, or
 * nil when the platform has none. */
static int lk_producer_fd(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    int fd = kn_producer_fd(lp->p);
    if (fd < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, fd);
    return 1;
}

/* producer:outstanding() -> records accepted by send whose delivery
 * callback has not run yet (in the library or queued here): cheap, no
 * table, for "is a reporter still needed" checks. */
static int lk_producer_outstanding(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    lua_pushinteger(L, (lua_Integer)(kn_producer_outstanding(lp->p) + lp->queued));
    return 1;
}

/* producer:ready_listen([dir]) -> path, or nil, message, code: as the
 * consumer's (lk_ready.c); the byte says delivery reports are queued. */
static int lk_producer_ready_listen(lua_State *L) {
    return lk_ready_push_listen(L, &lk_producer_check(L)->ready, 2);
}

/* producer:ready_accept() -> true, or nil, message, code. */
static int lk_producer_ready_accept(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    char errstr[256] = "";
    int err = lk_ready_accept_producer(&lp->ready, lp->p, errstr, sizeof errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushboolean(L, 1);
    return 1;
}

/* producer:metrics() -> plain table of counters. */
static int lk_producer_metrics(lua_State *L) {
    lk_producer *lp = lk_producer_check(L);
    kn_producer_stats st = {.size = sizeof st};
    kn_producer_get_stats(lp->p, &st);
    lua_createtable(L, 0, 19);
    lk_set_int(L, "records_sent", (lua_Integer)st.records_sent);
    lk_set_int(L, "records_failed", (lua_Integer)st.records_failed);
    lk_set_int(L, "bytes_sent", (lua_Integer)st.bytes_sent);
    lk_set_int(L, "batches_sent", (lua_Integer)st.batches_sent);
    lk_set_int(L, "requests_sent", (lua_Integer)st.requests_sent);
    lk_set_int(L, "retries", (lua_Integer)st.retries);
    lk_set_int(L, "buffer_bytes", (lua_Integer)st.buffer_bytes);
    lk_set_int(L, "request_latency_avg_us", (lua_Integer)st.request_latency_avg_us);
    lk_set_int(L, "request_latency_max_us", (lua_Integer)st.request_latency_max_us);
    lk_set_int(L, "connects", (lua_Integer)st.connects);
    lk_set_int(L, "connect_failures", (lua_Integer)st.connect_failures);
    lk_set_int(L, "reauthentications", (lua_Integer)st.reauthentications);
    lk_set_int(L, "producer_id", (lua_Integer)st.producer_id);
    lk_set_int(L, "producer_epoch", (lua_Integer)st.producer_epoch);
    lk_set_int(L, "transaction_version", (lua_Integer)st.transaction_version);
    lk_set_int(L, "txn_add_partitions_requests", (lua_Integer)st.txn_add_partitions_requests);
    lk_set_int(L, "txn_add_offsets_requests", (lua_Integer)st.txn_add_offsets_requests);
    lk_set_int(L, "produce_throttle_time_avg_ms", (lua_Integer)st.produce_throttle_time_avg_ms);
    lk_set_int(L, "produce_throttle_time_max_ms", (lua_Integer)st.produce_throttle_time_max_ms);
    lk_set_int(L, "outstanding", (lua_Integer)kn_producer_outstanding(lp->p));
    lk_set_int(L, "reports_queued", (lua_Integer)lp->queued);
    return 1;
}

static int lk_producer_instance_id(lua_State *L) {
    return lk_telemetry_instance_id(L, LK_CLIENT_PRODUCER, lk_producer_check_open(L));
}

static int lk_producer_register_metric(lua_State *L) {
    return lk_telemetry_register_metric(L, LK_CLIENT_PRODUCER, lk_producer_check_open(L), 1);
}

static int lk_producer_unregister_metric(lua_State *L) {
    return lk_telemetry_register_metric(L, LK_CLIENT_PRODUCER, lk_producer_check_open(L), 0);
}

/* producer:kafka_metrics([group]) / :kafka_metric(group, name[, tags]):
 * Kafka-named metrics (lk_metrics.c, docs/metrics.md). */
static int lk_producer_walk(void *h, kn_metric_visit_fn fn, void *ctx) { return kn_producer_metrics(h, fn, ctx); }
static int lk_producer_kafka_metrics(lua_State *L) {
    return lk_metrics_push(L, lk_producer_walk, lk_producer_check(L)->p, false);
}
static int lk_producer_kafka_metric(lua_State *L) {
    return lk_metrics_push(L, lk_producer_walk, lk_producer_check(L)->p, true);
}

static const luaL_Reg lk_producer_methods[] = {
    {"client_instance_id", lk_producer_instance_id},
    {"register_metric_for_subscription", lk_producer_register_metric},
    {"unregister_metric_from_subscription", lk_producer_unregister_metric},
    {"send", lk_producer_send},
    {"poll", lk_producer_poll},
    {"flush", lk_producer_flush},
    {"fd", lk_producer_fd},
    {"outstanding", lk_producer_outstanding},
    {"ready_listen", lk_producer_ready_listen},
    {"ready_accept", lk_producer_ready_accept},
    {"metrics", lk_producer_metrics},
    {"kafka_metrics", lk_producer_kafka_metrics},
    {"kafka_metric", lk_producer_kafka_metric},
    {"close", lk_producer_close},
    {NULL, NULL},
};

static const luaL_Reg lk_producer_meta[] = {
    {"__gc", lk_producer_gc},
#if LUA_VERSION_NUM >= 504
    {"__close", lk_producer_close_scope},
#endif
    {"__tostring", lk_producer_tostring},
    {NULL, NULL},
};

#if defined(LUA_LJDIR)
/* Replaces methods.send (the table on top, the metatable below it) by
 * lk_send.lua's wrapper, which takes the FFI path when it can. Without
 * the ffi module the C send stays: the chunk's error is dropped. */
static void lk_producer_ffi_send(lua_State *L) {
    int methods = lua_gettop(L);
    if (luaL_loadbuffer(L, (const char *)lk_send_lua, sizeof(lk_send_lua), "=kafka_native.send") != LUA_OK) {
        lua_settop(L, methods);
        return;
    }
    lua_pushvalue(L, methods);
    lua_pushvalue(L, methods - 1);
    void *fn;
    int (*send_ffi)(void *, const char *, const char *, size_t) = lk_producer_send_ffi;
    memcpy(&fn, &send_ffi, sizeof fn); /* POSIX: a function pointer fits a void * */
    lua_pushlightuserdata(L, fn);
    lua_pushcfunction(L, lk_producer_send);
    lua_pushcfunction(L, lk_producer_send_error);
    if (lua_pcall(L, 5, 0, 0) != LUA_OK)
        lua_settop(L, methods);
}
#endif

void lk_producer_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_PRODUCER_MT)) {
        luaL_setfuncs(L, lk_producer_meta, 0);
        luaL_newlib(L, lk_producer_methods);
        luaL_setfuncs(L, lk_txn_methods, 0);
#if defined(LUA_LJDIR)
        lk_producer_ffi_send(L);
#endif
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "kafka_native.producer");
        lua_setfield(L, -2, "__name");
    }
    lua_pop(L, 1);
}

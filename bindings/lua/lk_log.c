/*
 * lk_log.c: the `log = function(level, message)` and `log_level`
 * client options: library log records handed to a Lua function.
 *
 * Records are logged on the client's network thread, which must never
 * touch the lua_State, so the library's handler is kn_log_queue_push
 * into a bounded queue (LK_LOG_QUEUE records) owned by the client
 * userdata; the binding empties it on the caller's thread after the
 * calls that serve callbacks (poll, flush, commit, close, and every
 * admin call). When the queue was full, one WARN record says how many
 * were dropped.
 *
 * Why an error in the log function is not returned by the call that ran
 * it, unlike the other callbacks: logging is a side channel, and a
 * broken logger must not turn a successful poll into a failure (nor
 * drop its records). The error goes to stderr with its traceback.
 *
 * Without a log function, records go to stderr (the library's default);
 * log_level alone sets that threshold.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lk.h"
#include "log.h"

#define LK_LOG_QUEUE 1000

/* log_level option at idx: nil (-1), a name or a number 0..3. Raises
 * otherwise. */
static int lk_log_level_arg(lua_State *L, int opts) {
    static const char *const names[] = {"error", "warn", "info", "debug"};
    lua_getfield(L, opts, "log_level");
    int level = -2;
    lua_Integer n;
    if (lua_isnil(L, -1)) {
        level = -1;
    } else if (lua_type(L, -1) == LUA_TSTRING) {
        for (int i = 0; i < 4; i++)
            if (strcasecmp(lua_tostring(L, -1), names[i]) == 0)
                level = i;
    } else if (lk_get_integer(L, -1, &n) && n >= 0 && n <= 3) {
        level = (int)n;
    }
    lua_pop(L, 1);
    if (level == -2)
        luaL_argerror(L, opts, "option 'log_level' must be \"error\", \"warn\", \"info\" or \"debug\"");
    return level;
}

void lk_log_check_opts(lua_State *L, int opts) {
    if (lua_isnoneornil(L, opts))
        return;
    lua_getfield(L, opts, "log");
    if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
        luaL_argerror(L, opts, "option 'log' must be a function");
    lua_pop(L, 1);
    lk_log_level_arg(L, opts);
}

int lk_log_setup(lua_State *L, int opts, int uv, kn_conf *conf, kn_log_queue **qp) {
    *qp = NULL;
    if (lua_isnoneornil(L, opts))
        return KN_OK;
    int level = lk_log_level_arg(L, opts);
    lua_getfield(L, opts, "log");
    int has_fn = lua_isfunction(L, -1);
    lua_setfield(L, uv, "log");
    if (has_fn) {
        *qp = kn_log_queue_new(LK_LOG_QUEUE);
        if (!*qp)
            return KN_ERR__NOMEM;
    }
    return kn_conf_set_log_cb(conf, level, has_fn ? kn_log_queue_push : NULL, *qp);
}

/* Calls the log function at fn with (level name, message); a failure
 * is written to stderr. */
static void lk_log_call(lua_State *L, int fn, const char *level, const char *msg) {
    lua_pushvalue(L, fn);
    lua_pushstring(L, level);
    lua_pushstring(L, msg);
    if (lk_pcall(L, 2, 0) != LUA_OK) {
        fprintf(stderr, "kafka-native: the log function raised: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
}

void lk_log_deliver(lua_State *L, kn_log_queue *q, int uv) {
    if (!q || kn_log_queue_count(q) == 0) /* a full queue is never empty */
        return;
    int top = lua_gettop(L);
    lua_getfield(L, uv, "log");
    int fn = lua_gettop(L);
    int level;
    char buf[KN_LOG_MESSAGE_MAX];
    /* Only what is queued now: a log function that makes the client
     * log more cannot keep this loop going. */
    for (size_t n = kn_log_queue_count(q); n > 0 && kn_log_queue_pop(q, &level, buf, sizeof buf); n--) {
        if (lua_isfunction(L, fn))
            lk_log_call(L, fn, kn_log_level_name(level), buf);
    }
    uint64_t dropped = kn_log_queue_take_dropped(q);
    if (dropped && lua_isfunction(L, fn)) {
        snprintf(buf, sizeof buf, "%llu log records dropped: more than %d were waiting for a poll",
                 (unsigned long long)dropped, LK_LOG_QUEUE);
        lk_log_call(L, fn, "WARN", buf);
    }
    lua_settop(L, top);
}

void lk_log_collected(kn_log_queue *q, const char *fmt, ...) {
    char buf[KN_LOG_MESSAGE_MAX];
    int level;
    /* No Lua may run in a finalizer: stderr, the log that needs none,
     * gets what the log function would have (the close just made
     * included), then the line that says why. */
    while (q && kn_log_queue_pop(q, &level, buf, sizeof buf))
        kn_log(NULL, level, "%s", buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    kn_log(NULL, KN_LOG_WARN, "%s", buf);
}

/*
 * lk_txn.c: the producer's transaction methods (init_transactions,
 * begin_transaction, send_offsets_to_transaction, commit_transaction,
 * abort_transaction, transaction_state), added to the producer's method
 * table by lk_producer_register.
 *
 * Errors are nil, message, code, kind. kind tells the caller what it
 * may do next, read from the library's transaction state right after the
 * call failed (kn_producer_transaction_state), as Java's exception
 * classes do:
 *   "fatal"      the producer is unusable (fenced, ...): close it;
 *   "abortable"  only abort_transaction is allowed now;
 *   "retriable"  the same call may be repeated (it timed out, or the
 *                commit / abort was not confirmed yet);
 *   nil          the call was not valid now (wrong state, not
 *                transactional) and changed nothing.
 *
 * commit_transaction and abort_transaction flush, so delivery reports
 * are served inside them: their Lua callbacks run after the C call
 * returns (lk_producer_serve), exactly as for flush. A callback error is
 * returned as nil, message, "_CALLBACK" only when the transaction call
 * itself succeeded; otherwise the transaction error wins (what to do
 * next depends on it) and the reports behind the failing callback stay
 * queued for the next poll.
 */
#include <string.h>

#include "kafka_native.h"
#include "lk.h"

static void lk_txn_free_tpl(void *p) { kn_topic_partition_list_destroy((kn_topic_partition_list *)p); }
static void lk_txn_free_gm(void *p) { kn_group_metadata_destroy((kn_group_metadata *)p); }

/* Pushes s, or nil when s is NULL. */
static void lk_txn_push_opt(lua_State *L, const char *s) {
    if (s)
        lua_pushstring(L, s);
    else
        lua_pushnil(L);
}

/* What the caller may do after err (see the header comment). */
static const char *lk_txn_kind(kn_producer *p, int err) {
    const char *st = kn_producer_transaction_state(p);
    if (st && strcmp(st, "FATAL_ERROR") == 0)
        return "fatal";
    if (st && strcmp(st, "ABORTABLE_ERROR") == 0)
        return "abortable";
    if (err == KN_ERR__TIMED_OUT)
        return "retriable";
    if (st && (strcmp(st, "COMMITTING_TRANSACTION") == 0 || strcmp(st, "ABORTING_TRANSACTION") == 0))
        return "retriable";
    return NULL;
}

/* The result of a transaction call made with the producer at 1: serves
 * the delivery callbacks, then pushes true, or nil, message, code, kind. */
static int lk_txn_result(lua_State *L, kn_producer *p, int err, const char *errstr) {
    /* Before the callbacks: one of them may close the producer. */
    const char *kind = err ? lk_txn_kind(p, err) : NULL;
    int status = lk_producer_serve(L);
    if (err) {
        lk_push_error(L, err, errstr && *errstr ? errstr : NULL);
        lk_txn_push_opt(L, kind);
        return 4;
    }
    if (status != LUA_OK)
        return lk_push_error(L, KN_ERR__CALLBACK, lua_tostring(L, -1));
    lua_pushboolean(L, 1);
    return 1;
}

/* A transaction call whose one argument is [timeout_ms] (init, commit,
 * abort: the C calls share one signature). */
typedef int (*lk_txn_timed_fn)(kn_producer *p, int timeout_ms, char *errstr, size_t errstr_size);

static int lk_txn_timed(lua_State *L, lk_txn_timed_fn fn) {
    kn_producer *p = lk_producer_check_open(L);
    int timeout_ms = lk_timeout_arg(L, 2, -1);
    lua_settop(L, 1);
    char errstr[512] = "";
    int err = fn(p, timeout_ms, errstr, sizeof errstr);
    return lk_txn_result(L, p, err, errstr);
}

/* producer:init_transactions([timeout_ms]) -> true, or nil, message,
 * code, kind. Fences older producers with the same transactional.id. */
static int lk_txn_init(lua_State *L) { return lk_txn_timed(L, kn_producer_init_transactions); }

/* producer:begin_transaction() -> true, or nil, message, code, kind. */
static int lk_txn_begin(lua_State *L) {
    kn_producer *p = lk_producer_check_open(L);
    lua_settop(L, 1);
    char errstr[512] = "";
    int err = kn_producer_begin_transaction(p, errstr, sizeof errstr);
    return lk_txn_result(L, p, err, errstr);
}

/* Optional string field of the table at idx: NULL when absent; raises
 * when it is not a string. */
static const char *lk_txn_opt_str(lua_State *L, int idx, const char *key, int arg) {
    lua_getfield(L, idx, key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pushfstring(L, "group metadata '%s' must be a string", key);
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    const char *s = lua_tostring(L, -1);
    lua_pop(L, 1); /* anchored by the table */
    return s;
}

/* The group metadata argument at idx: what consumer:group_metadata()
 * returns ({group_id=, generation=, member_id=, group_instance_id=}),
 * or a group id string (generation -1, no member: the coordinator then
 * checks nothing, like Java's deprecated sendOffsetsToTransaction(map,
 * String)). Raises on a wrong shape; pushes a guard holding the result. */
static kn_group_metadata *lk_txn_gm_arg(lua_State *L, int idx) {
    const char *group = NULL, *member = NULL, *instance = NULL;
    lua_Integer generation = -1;
    if (lua_type(L, idx) == LUA_TSTRING) {
        group = lua_tostring(L, idx);
    } else if (lua_type(L, idx) == LUA_TTABLE) {
        group = lk_txn_opt_str(L, idx, "group_id", idx);
        member = lk_txn_opt_str(L, idx, "member_id", idx);
        instance = lk_txn_opt_str(L, idx, "group_instance_id", idx);
        generation = lk_opt_int_field(L, idx, "generation", -1);
        if (generation < -1 || generation > 0x7fffffff)
            luaL_argerror(L, idx, "group metadata 'generation' out of range");
    } else {
        luaL_argerror(L, idx, "group metadata (consumer:group_metadata() or a group id) expected");
    }
    if (!group || !*group)
        luaL_argerror(L, idx, "group metadata needs a non-empty 'group_id'");
    lk_cguard *g = lk_cguard_push(L, lk_txn_free_gm);
    g->ptr = kn_group_metadata_new(group, (int32_t)generation, member, instance);
    return (kn_group_metadata *)g->ptr;
}

/* producer:send_offsets_to_transaction(offsets, group_metadata
 * [, timeout_ms]) -> true, or nil, message, code, kind. offsets:
 * { {topic=, partition=, offset=, metadata=?, leader_epoch=?}, ... }, the
 * next offsets to read (as commit takes them); committed to the group
 * only if the transaction commits. */
static int lk_txn_send_offsets(lua_State *L) {
    kn_producer *p = lk_producer_check_open(L);
    lk_tpl_check(L, 2, 1);
    int timeout_ms = lk_timeout_arg(L, 4, -1);
    lua_settop(L, 3);
    kn_group_metadata *gm = lk_txn_gm_arg(L, 3);       /* guard at 4 */
    lk_cguard *g = lk_cguard_push(L, lk_txn_free_tpl); /* 5 */
    kn_topic_partition_list *list = kn_topic_partition_list_new();
    g->ptr = list;
    if (!gm || !list)
        return lk_push_error(L, KN_ERR__NOMEM, NULL);
    int err = lk_tpl_fill(L, 2, list, 1);
    if (err)
        return lk_push_error(L, err, NULL);
    char errstr[512] = "";
    err = kn_producer_send_offsets_to_transaction(p, list, gm, timeout_ms, errstr, sizeof errstr);
    lua_settop(L, 1); /* the guards free the list and the metadata */
    return lk_txn_result(L, p, err, errstr);
}

/* producer:commit_transaction([timeout_ms]) -> true, or nil, message,
 * code, kind. Flushes the transaction's records first (their callbacks
 * run here). */
static int lk_txn_commit(lua_State *L) { return lk_txn_timed(L, kn_producer_commit_transaction); }

/* producer:abort_transaction([timeout_ms]) -> true, or nil, message,
 * code, kind. Records not sent yet fail with "_STATE" (their callbacks
 * run here). */
static int lk_txn_abort(lua_State *L) { return lk_txn_timed(L, kn_producer_abort_transaction); }

/* producer:transaction_state() -> "READY", "IN_TRANSACTION",
 * "ABORTABLE_ERROR", "FATAL_ERROR", ... or nil without transactional.id. */
static int lk_txn_state(lua_State *L) {
    kn_producer *p = lk_producer_check_open(L);
    lk_txn_push_opt(L, kn_producer_transaction_state(p));
    return 1;
}

const luaL_Reg lk_txn_methods[] = {
    {"init_transactions", lk_txn_init},
    {"begin_transaction", lk_txn_begin},
    {"send_offsets_to_transaction", lk_txn_send_offsets},
    {"commit_transaction", lk_txn_commit},
    {"abort_transaction", lk_txn_abort},
    {"transaction_state", lk_txn_state},
    {NULL, NULL},
};

/* The kind of a failed send on a transactional producer (nil
 * otherwise), pushed as send's fourth result. */
void lk_txn_push_send_kind(lua_State *L, kn_producer *p, int err) {
    lk_txn_push_opt(L, kn_producer_transaction_state(p) ? lk_txn_kind(p, err) : NULL);
}

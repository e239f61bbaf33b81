/*
 * lk_batch.c: the batch userdata consumer:poll_batch returns: the
 * records of one poll, read by index (batch:value(i), batch:key(i), ...,
 * #batch, and the stateless iterator batch:each()) without a Lua table
 * per record.
 *
 * Two kinds, one interface:
 *  - raw (no deserializer, no on_consume): the batch owns the poll's
 *    kn_records and every accessor reads it directly; a Lua string is
 *    only made for the field asked for. The fetched buffers are freed by
 *    batch:close() (or __close on 5.4) or when the batch is collected.
 *  - tables (a deserializer or on_consume is set): poll_batch ran poll's
 *    whole path (record tables, deserializers, on_consume with its
 *    rewind on error) and the batch reads the resulting array, kept in
 *    its user value. Same results as poll, same cost.
 *
 * Raw batches also have the raw-bytes forms that make no Lua string per
 * record: batch:view() (LuaJIT FFI, lk_view.c), batch:value_lens(t) /
 * batch:key_lens(t) and batch:values_blob(t) / batch:keys_blob(t) (one
 * string per batch; PUC Lua). They raise on a tables batch, whose
 * values are what the deserializers and on_consume made of the bytes.
 *
 * Why this shape: per record, poll builds a table with seven fields
 * plus a metatable; a loop that reads only the value pays for all of it
 * in allocation and GC. Every accessor is a C closure whose first
 * upvalue is the batch metatable, so the type check is one
 * lua_getmetatable + lua_rawequal instead of a registry lookup by name.
 */
#include <string.h>

#include "lk.h"
#include "lk_view.h"

#define LK_BATCH_MT "kafka_native.batch"

typedef struct lk_batch {
    kn_records *recs; /* raw batch: owned (borrowed from vb once set); NULL for tables or once closed */
    lk_vblock *vb;    /* after the first view(): owns recs; one reference is the batch's */
    lua_Integer n;    /* records in the batch */
    int tables;       /* 1: the records are the array in the user value */
    int closed;
} lk_batch;

/* The batch at index 1, checked against the metatable in upvalue 1. */
static lk_batch *lk_batch_self(lua_State *L) {
    lk_batch *b = (lk_batch *)lua_touserdata(L, 1);
    if (b == NULL || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(1)))
        luaL_argerror(L, 1, "kafka_native.batch expected");
    lua_pop(L, 1);
    if (b->closed)
        luaL_error(L, "batch is closed");
    return b;
}

/* The batch at 1 and the 1-based record index at 2, checked; returns
 * the 0-based index. */
static size_t lk_batch_index(lua_State *L, lk_batch **bp) {
    lk_batch *b = lk_batch_self(L);
    lua_Integer i;
    if (!lk_get_integer(L, 2, &i))
        luaL_argerror(L, 2, "record index (integer) expected");
    if (i < 1 || i > b->n) {
        lua_pushfstring(L, "record index %d out of range 1..%d", (int)i, (int)b->n);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    *bp = b;
    return (size_t)(i - 1);
}

/* Tables batch: pushes field f of record i (0-based), via the record's
 * metatable (headers, timestamp_type defaults). */
static int lk_batch_table_field(lua_State *L, size_t i, const char *f) {
    lua_getuservalue(L, 1);
    lua_rawgeti(L, -1, (int)(i + 1));
    if (f == NULL)
        return 1; /* the record itself */
    if (!lua_istable(L, -1))
        return luaL_error(L, "batch record %d is not a table (on_consume result)", (int)(i + 1));
    lua_getfield(L, -1, f);
    return 1;
}

static void lk_push_bytes(lua_State *L, const void *p, size_t len) {
    if (p)
        lua_pushlstring(L, (const char *)p, len);
    else
        lua_pushnil(L);
}

/* The per-record accessors: batch:value(i), key, offset, partition,
 * topic, timestamp and headers (an array of {key, value}, a new table
 * per call on a raw batch). On a tables batch each reads the record
 * table's field of the same name. */
typedef enum {
    LK_BF_VALUE,
    LK_BF_KEY,
    LK_BF_OFFSET,
    LK_BF_PARTITION,
    LK_BF_TOPIC,
    LK_BF_TIMESTAMP,
    LK_BF_HEADERS
} lk_batch_field;

static const char *const lk_batch_field_names[] = {"value", "key",       "offset", "partition",
                                                    "topic", "timestamp", "headers"};

static int lk_batch_get(lua_State *L, lk_batch_field f) {
    lk_batch *b;
    size_t i = lk_batch_index(L, &b);
    if (b->tables)
        return lk_batch_table_field(L, i, lk_batch_field_names[f]);
    size_t len;
    const void *p;
    switch (f) {
    case LK_BF_VALUE: /* (two statements: len is set by the call) */
        p = kn_records_value(b->recs, i, &len);
        lk_push_bytes(L, p, len);
        break;
    case LK_BF_KEY:
        p = kn_records_key(b->recs, i, &len);
        lk_push_bytes(L, p, len);
        break;
    case LK_BF_OFFSET:
        lua_pushinteger(L, (lua_Integer)kn_records_offset(b->recs, i));
        break;
    case LK_BF_PARTITION:
        lua_pushinteger(L, kn_records_partition(b->recs, i));
        break;
    case LK_BF_TOPIC:
        lua_pushstring(L, kn_records_topic(b->recs, i));
        break;
    case LK_BF_TIMESTAMP:
        lua_pushinteger(L, (lua_Integer)kn_records_timestamp(b->recs, i));
        break;
    case LK_BF_HEADERS:
        lk_record_headers_push(L, b->recs, i);
        break;
    }
    return 1;
}

static int lk_batch_value(lua_State *L) { return lk_batch_get(L, LK_BF_VALUE); }
static int lk_batch_key(lua_State *L) { return lk_batch_get(L, LK_BF_KEY); }
static int lk_batch_offset(lua_State *L) { return lk_batch_get(L, LK_BF_OFFSET); }
static int lk_batch_partition(lua_State *L) { return lk_batch_get(L, LK_BF_PARTITION); }
static int lk_batch_topic(lua_State *L) { return lk_batch_get(L, LK_BF_TOPIC); }
static int lk_batch_timestamp(lua_State *L) { return lk_batch_get(L, LK_BF_TIMESTAMP); }
static int lk_batch_headers(lua_State *L) { return lk_batch_get(L, LK_BF_HEADERS); }

/* batch:record(i) -> the record table poll would have returned (built
 * now on a raw batch). */
static int lk_batch_record(lua_State *L) {
    lk_batch *b;
    size_t i = lk_batch_index(L, &b);
    if (b->tables)
        return lk_batch_table_field(L, i, NULL);
    lk_record_push(L, b->recs, i);
    return 1;
}

/* The table batch:values() and its kin fill: the caller's t (argument
 * 2) or a new one, left at index 2; a batch of Lua tables (b->tables)
 * also pushes them at index 3. */
static lk_batch *lk_batch_fill_target(lua_State *L) {
    lk_batch *b = lk_batch_self(L);
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_createtable(L, (int)b->n, 0);
    } else {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_settop(L, 2);
    }
    if (b->tables)
        lua_getuservalue(L, 1); /* 3 */
    return b;
}

/* batch:values([t]) / batch:keys([t]): t[i] = value (key) of record i
 * for i = 1..#batch, nil for a null one; t (reused across polls: the
 * entries past #batch are not touched) or a new table is returned. One
 * C call per poll instead of one per record: the loop over t stays in
 * the VM (and in LuaJIT's traces). */
static int lk_batch_fill(lua_State *L, const char *field,
                         const void *(*get)(const kn_records *, size_t, size_t *)) {
    lk_batch *b = lk_batch_fill_target(L);
    for (lua_Integer i = 0; i < b->n; i++) {
        if (b->tables) {
            lua_rawgeti(L, 3, (int)(i + 1));
            lua_getfield(L, -1, field);
            lua_remove(L, -2);
        } else {
            size_t len;
            const void *p = get(b->recs, (size_t)i, &len);
            lk_push_bytes(L, p, len);
        }
        lua_rawseti(L, 2, (int)(i + 1));
    }
    lua_settop(L, 2);
    return 1;
}
static int lk_batch_values(lua_State *L) { return lk_batch_fill(L, "value", kn_records_value); }
static int lk_batch_keys(lua_State *L) { return lk_batch_fill(L, "key", kn_records_key); }

/* batch:offsets([t]) / batch:partitions([t]): t[i] = offset (partition)
 * of record i, integers, for i = 1..#batch; the table reuse rule of
 * values(). With values_blob() they give a PUC Lua loop everything it
 * needs per record without one C call per record (batch:offset(i) is
 * one each). */
static int lk_batch_fill_ints(lua_State *L, const char *field, int partitions) {
    lk_batch *b = lk_batch_fill_target(L);
    for (lua_Integer i = 0; i < b->n; i++) {
        if (b->tables) {
            lua_rawgeti(L, 3, (int)(i + 1));
            lua_getfield(L, -1, field);
            lua_remove(L, -2);
        } else if (partitions) {
            lua_pushinteger(L, kn_records_partition(b->recs, (size_t)i));
        } else {
            lua_pushinteger(L, (lua_Integer)kn_records_offset(b->recs, (size_t)i));
        }
        lua_rawseti(L, 2, (int)(i + 1));
    }
    lua_settop(L, 2);
    return 1;
}
static int lk_batch_offsets(lua_State *L) { return lk_batch_fill_ints(L, "offset", 0); }
static int lk_batch_partitions(lua_State *L) { return lk_batch_fill_ints(L, "partition", 1); }

/* Raises on a tables batch: the raw-bytes forms (view, *_lens) would
 * bypass the deserializers and on_consume. */
static void lk_batch_check_raw(lua_State *L, const lk_batch *b, const char *what) {
    if (b->tables)
        luaL_error(L,
                   "batch:%s() reads raw record bytes: not available when the consumer has a "
                   "key_deserializer, value_deserializer or on_consume (use batch:value(i) or "
                   "batch:values())",
                   what);
}

/* batch:value_lens([t]) / batch:key_lens([t]): t[i] = the byte length of
 * record i's value (key), -1 for a null one; integers only, so no Lua
 * string is made (the PUC Lua fast path). Same table reuse rule as
 * values(). Raw batches only. total (may be NULL): the sum of the
 * non-null lengths. */
static int lk_batch_fill_lens(lua_State *L, const char *what,
                              const void *(*get)(const kn_records *, size_t, size_t *), size_t *total) {
    lk_batch *b = lk_batch_self(L);
    lk_batch_check_raw(L, b, what);
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_createtable(L, (int)b->n, 0);
    } else {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_settop(L, 2);
    }
    size_t sum = 0;
    for (lua_Integer i = 0; i < b->n; i++) {
        size_t len;
        const void *p = get(b->recs, (size_t)i, &len);
        lua_pushinteger(L, p ? (lua_Integer)len : -1);
        lua_rawseti(L, 2, (int)(i + 1));
        sum += len; /* 0 for null */
    }
    if (total)
        *total = sum;
    return 1;
}
static int lk_batch_value_lens(lua_State *L) {
    return lk_batch_fill_lens(L, "value_lens", kn_records_value, NULL);
}
static int lk_batch_key_lens(lua_State *L) { return lk_batch_fill_lens(L, "key_lens", kn_records_key, NULL); }

/* batch:values_blob([lens]) / batch:keys_blob([lens]) -> blob, lens:
 * every non-null value (key) of the batch end to end in one Lua string,
 * and lens filled as value_lens() (-1: null, no bytes in blob), so
 * record i's bytes are blob:sub(p, p + lens[i] - 1) where p is 1 + the
 * sum of the non-negative lens before i. One string per batch instead of
 * one per record: on PUC Lua each string (allocate, hash, intern,
 * collect) costs more than the C client's whole per-record work, and a
 * loop that parses or hashes the bytes with string.unpack / string.find
 * / string.byte at a position needs no string of its own. Raw batches
 * only. */
static int lk_batch_blob(lua_State *L, const char *what,
                         const void *(*get)(const kn_records *, size_t, size_t *)) {
    lk_batch *b = lk_batch_self(L);
    size_t total;
    lk_batch_fill_lens(L, what, get, &total); /* 2: lens; raises on a tables batch */
    luaL_Buffer B;
#if LUA_VERSION_NUM >= 502
    char *out = luaL_buffinitsize(L, &B, total);
    for (lua_Integer i = 0; i < b->n; i++) {
        size_t len;
        const void *p = get(b->recs, (size_t)i, &len);
        if (p && len) {
            memcpy(out, p, len);
            out += len;
        }
    }
    luaL_pushresultsize(&B, total);
#else
    luaL_buffinit(L, &B);
    for (lua_Integer i = 0; i < b->n; i++) {
        size_t len;
        const void *p = get(b->recs, (size_t)i, &len);
        if (p && len)
            luaL_addlstring(&B, (const char *)p, len);
    }
    luaL_pushresult(&B);
#endif
    lua_pushvalue(L, 2);
    return 2;
}
static int lk_batch_values_blob(lua_State *L) { return lk_batch_blob(L, "values_blob", kn_records_value); }
static int lk_batch_keys_blob(lua_State *L) { return lk_batch_blob(L, "keys_blob", kn_records_key); }

/* batch:view() -> a LuaJIT FFI view of the records (lk_view.c,
 * lk_view.lua): plain C structs read in place, valid until the view is
 * closed or collected, whatever happens to the batch or the consumer. */
static int lk_batch_view(lua_State *L) {
    lk_batch *b = lk_batch_self(L);
    lk_batch_check_raw(L, b, "view");
    if (!b->vb) {
        b->vb = lk_vblock_new(b->recs); /* takes recs over; b->recs stays a borrowed alias */
        if (!b->vb)
            return lk_push_error(L, KN_ERR__NOMEM, NULL);
    }
    lk_view_push(L, b->vb);
    return 1;
}

/* The generic-for step of batch:each(): (batch, i) -> i + 1, value, key,
 * or nothing past the end. One C call per record, no table. */
static int lk_batch_next(lua_State *L) {
    lk_batch *b = lk_batch_self(L);
    lua_Integer i = lua_tointeger(L, 2);
    lua_settop(L, 2);
    if (i < 0 || i >= b->n)
        return 0;
    if (b->tables) {
        lua_getuservalue(L, 1);          /* 3 */
        lua_rawgeti(L, 3, (int)(i + 1)); /* 4: the record table */
        lua_pushinteger(L, i + 1);
        lua_getfield(L, 4, "value");
        lua_getfield(L, 4, "key");
        return 3;
    }
    lua_pushinteger(L, i + 1);
    size_t len;
    const void *p = kn_records_value(b->recs, (size_t)i, &len);
    lk_push_bytes(L, p, len);
    p = kn_records_key(b->recs, (size_t)i, &len);
    lk_push_bytes(L, p, len);
    return 3;
}

/* batch:each() -> next, batch, 0 for `for i, value, key in batch:each()`. */
static int lk_batch_each(lua_State *L) {
    lk_batch_self(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, lk_batch_next, 1);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

static int lk_batch_len(lua_State *L) {
    lk_batch *b = (lk_batch *)luaL_checkudata(L, 1, LK_BATCH_MT);
    lua_pushinteger(L, b->closed ? 0 : b->n);
    return 1;
}

static void lk_batch_free(lk_batch *b) {
    if (b->vb)
        lk_vblock_release(b->vb); /* the bytes stay while a view holds them */
    else
        kn_records_free(b->recs);
    b->vb = NULL;
    b->recs = NULL;
    b->closed = 1;
}

/* batch:close(): frees the fetched buffers now; later reads raise. */
static int lk_batch_close(lua_State *L) {
    lk_batch_free((lk_batch *)luaL_checkudata(L, 1, LK_BATCH_MT));
    return 0;
}

static int lk_batch_tostring(lua_State *L) {
    lk_batch *b = (lk_batch *)luaL_checkudata(L, 1, LK_BATCH_MT);
    if (b->closed)
        lua_pushliteral(L, "kafka_native.batch (closed)");
    else
        lua_pushfstring(L, "kafka_native.batch (%d records)", (int)b->n);
    return 1;
}

static lk_batch *lk_batch_new(lua_State *L) {
    lk_batch *b = (lk_batch *)lk_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    luaL_getmetatable(L, LK_BATCH_MT);
    lua_setmetatable(L, -2);
    return b;
}

void lk_batch_push_raw(lua_State *L, lk_cguard *g) {
    lk_batch *b = lk_batch_new(L); /* may raise: g still owns the records */
    b->recs = (kn_records *)g->ptr;
    g->ptr = NULL;
    b->n = (lua_Integer)kn_records_count(b->recs);
}

void lk_batch_push_tables(lua_State *L, int arr) {
    lk_batch *b = lk_batch_new(L);
    b->tables = 1;
    b->n = (lua_Integer)lua_rawlen(L, arr);
    lua_pushvalue(L, arr);
    lua_setuservalue(L, -2);
}

/* one method per line */
/* clang-format off */
static const luaL_Reg lk_batch_methods[] = {
    {"value", lk_batch_value},
    {"key", lk_batch_key},
    {"offset", lk_batch_offset},
    {"partition", lk_batch_partition},
    {"topic", lk_batch_topic},
    {"timestamp", lk_batch_timestamp},
    {"headers", lk_batch_headers},
    {"record", lk_batch_record},
    {"each", lk_batch_each},
    {"values", lk_batch_values},
    {"keys", lk_batch_keys},
    {"value_lens", lk_batch_value_lens},
    {"key_lens", lk_batch_key_lens},
    {"values_blob", lk_batch_values_blob},
    {"keys_blob", lk_batch_keys_blob},
    {"offsets", lk_batch_offsets},
    {"partitions", lk_batch_partitions},
    {"view", lk_batch_view},
    {NULL, NULL},
};

static const luaL_Reg lk_batch_meta[] = {
    {"__len", lk_batch_len},
    {"__gc", lk_batch_close},
#if LUA_VERSION_NUM >= 504
    {"__close", lk_batch_close},
#endif
    {"__tostring", lk_batch_tostring},
    {NULL, NULL},
};
/* clang-format on */

void lk_batch_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_BATCH_MT)) {
        luaL_setfuncs(L, lk_batch_meta, 0);
        lua_createtable(L, 0, 18);
        lua_pushvalue(L, -2); /* upvalue: the metatable */
        luaL_setfuncs(L, lk_batch_methods, 1);
        lua_pushcfunction(L, lk_batch_close);
        lua_setfield(L, -2, "close");
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, LK_BATCH_MT);
        lua_setfield(L, -2, "__name");
    }
    lua_pop(L, 1);
}

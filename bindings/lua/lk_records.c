/*
 * lk_records.c: consumer data as Lua values: the records of one poll
 * (kn_records -> array of record tables) and topic-partition lists
 * (Lua arrays of {topic=, partition=, offset=, ...} <->
 * kn_topic_partition_list).
 *
 * Records are built for speed: each table is created with its final
 * size, field names are pushed once per poll and set with lua_rawset,
 * a topic string is pushed once per run of records from the same
 * topic (one Lua string per topic per poll, shared by the records), key,
 * value and header bytes are pushed once straight from the fetched
 * batches (no C copy). The common-case fields are left out: a record
 * without headers has no headers table until one is read, and
 * timestamp_type is only stored for LogAppendTime (the record
 * metatable's __index answers both; see lk_record_index). Nothing here allocates C memory: the caller
 * guards the kn_records and lists it passes in.
 */
#include <string.h>

#include "lk.h"

static void lk_set_int(lua_State *L, const char *key, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
}

#define LK_RECORD_MT "kafka_native.record"

/* Record fields, pushed once per poll and reused as keys (lua_rawset
 * with a key already on the stack skips interning the name for every
 * record). */
enum {
    F_TOPIC,
    F_PARTITION,
    F_OFFSET,
    F_TIMESTAMP,
    F_LEADER_EPOCH,
    F_KEY,
    F_VALUE,
    F_HEADERS,
    F_TSTYPE,
    F_N
};
static const char *const lk_record_fields[F_N] = {
    [F_TOPIC] = "topic",         [F_PARTITION] = "partition",       [F_OFFSET] = "offset",
    [F_TIMESTAMP] = "timestamp", [F_LEADER_EPOCH] = "leader_epoch", [F_KEY] = "key",
    [F_VALUE] = "value",         [F_HEADERS] = "headers",           [F_TSTYPE] = "timestamp_type",
};

/* __index of every record: the fields most loops never read are only
 * stored when they differ from the common case. A record without
 * headers gets its (empty, then stable) headers table on first read; a
 * missing timestamp_type is "CreateTime". */
static int lk_record_index(lua_State *L) {
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "headers") == 0) {
        lua_createtable(L, 0, 0);
        lua_pushvalue(L, 2);
        lua_pushvalue(L, -2);
        lua_rawset(L, 1);
        return 1;
    }
    if (k && strcmp(k, "timestamp_type") == 0) {
        lua_pushliteral(L, "CreateTime");
        return 1;
    }
    return 0;
}

void lk_records_register(lua_State *L) {
    if (luaL_newmetatable(L, LK_RECORD_MT)) {
        lua_pushcfunction(L, lk_record_index);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

static void lk_rawset_int(lua_State *L, int key, lua_Integer v) {
    lua_pushvalue(L, key);
    lua_pushinteger(L, v);
    lua_rawset(L, -3);
}

/* Pushes record i's headers as an array of {key, value} pairs (value
 * nil for a null header value). */
void lk_record_headers_push(lua_State *L, const kn_records *recs, size_t i) {
    size_t nh = kn_records_header_count(recs, i);
    lua_createtable(L, (int)nh, 0);
    for (size_t h = 0; h < nh; h++) {
        const char *hk;
        size_t hk_len, hv_len;
        const void *hv;
        if (kn_records_header(recs, i, h, &hk, &hk_len, &hv, &hv_len) != KN_OK)
            break;
        lua_createtable(L, 2, 0);
        lua_pushlstring(L, hk, hk_len);
        lua_rawseti(L, -2, 1);
        if (hv) {
            lua_pushlstring(L, (const char *)hv, hv_len);
            lua_rawseti(L, -2, 2);
        }
        lua_rawseti(L, -2, (int)(h + 1));
    }
}

/* Pushes the table of record i: keys + F_xxx hold the field names,
 * topic the record's topic string, mt the record metatable. */
static void lk_record_build(lua_State *L, const kn_records *recs, size_t i, int keys, int topic, int mt) {
    size_t nh = kn_records_header_count(recs, i);
    int log_append = kn_records_timestamp_type(recs, i) == KN_TIMESTAMP_LOG_APPEND_TIME;
    lua_createtable(L, 0, 7 + (nh > 0) + log_append);
    lua_pushvalue(L, keys + F_TOPIC);
    lua_pushvalue(L, topic);
    lua_rawset(L, -3);
    lk_rawset_int(L, keys + F_PARTITION, kn_records_partition(recs, i));
    lk_rawset_int(L, keys + F_OFFSET, (lua_Integer)kn_records_offset(recs, i));
    lk_rawset_int(L, keys + F_TIMESTAMP, (lua_Integer)kn_records_timestamp(recs, i));
    lk_rawset_int(L, keys + F_LEADER_EPOCH, kn_records_leader_epoch(recs, i));
    if (log_append) {
        lua_pushvalue(L, keys + F_TSTYPE);
        lua_pushliteral(L, "LogAppendTime");
        lua_rawset(L, -3);
    }
    size_t len;
    const void *bytes = kn_records_key(recs, i, &len);
    if (bytes) {
        lua_pushvalue(L, keys + F_KEY);
        lua_pushlstring(L, (const char *)bytes, len);
        lua_rawset(L, -3);
    }
    bytes = kn_records_value(recs, i, &len);
    if (bytes) {
        lua_pushvalue(L, keys + F_VALUE);
        lua_pushlstring(L, (const char *)bytes, len);
        lua_rawset(L, -3);
    }
    if (nh > 0) {
        lua_pushvalue(L, keys + F_HEADERS);
        lk_record_headers_push(L, recs, i);
        lua_rawset(L, -3);
    }
    lua_pushvalue(L, mt);
    lua_setmetatable(L, -2);
}

/* Pushes the field names (F_N values) then the record metatable;
 * returns the index of the first name. */
static int lk_record_keys_push(lua_State *L) {
    luaL_checkstack(L, F_N + 8, "building records");
    int keys = lua_gettop(L) + 1;
    for (int f = 0; f < F_N; f++)
        lua_pushstring(L, lk_record_fields[f]);
    luaL_getmetatable(L, LK_RECORD_MT);
    return keys;
}

void lk_record_push(lua_State *L, const kn_records *recs, size_t i) {
    int base = lua_gettop(L);
    int keys = lk_record_keys_push(L);
    int mt = keys + F_N;
    lua_pushstring(L, kn_records_topic(recs, i));
    lk_record_build(L, recs, i, keys, mt + 1, mt);
    lua_replace(L, base + 1);
    lua_settop(L, base + 1);
}

void lk_records_push(lua_State *L, const kn_records *recs) {
    size_t n = kn_records_count(recs);
    lua_createtable(L, (int)n, 0);
    int arr = lua_gettop(L);
    int keys = lk_record_keys_push(L); /* keys + F_xxx: the field's name */
    int mt = keys + F_N;
    lua_pushnil(L); /* the current topic's string */
    int topic_slot = mt + 1;
    const char *last_topic = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_records_topic(recs, i);
        if (last_topic == NULL || (topic != last_topic && strcmp(topic, last_topic) != 0)) {
            lua_pushstring(L, topic);
            lua_replace(L, topic_slot);
        }
        last_topic = topic;
        lk_record_build(L, recs, i, keys, topic_slot, mt);
        lua_rawseti(L, arr, (int)(i + 1));
    }
    lua_settop(L, arr);
}

int lk_offset_value(lua_State *L, int idx, int64_t *out) {
    lua_Integer v;
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        if (strcmp(s, "beginning") == 0) {
            *out = KN_OFFSET_BEGINNING;
            return 1;
        }
        if (strcmp(s, "end") == 0) {
            *out = KN_OFFSET_END;
            return 1;
        }
        return 0;
    }
    if (!lk_get_integer(L, idx, &v) || v < 0)
        return 0;
    *out = (int64_t)v;
    return 1;
}

size_t lk_tpl_check(lua_State *L, int idx, int with_offsets) {
    luaL_checktype(L, idx, LUA_TTABLE);
    size_t n = lua_rawlen(L, idx);
    for (size_t i = 1; i <= n; i++) {
        lua_Integer v;
        int64_t off;
        lua_rawgeti(L, idx, (int)i);
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, idx, "array of {topic=, partition=} tables expected");
        lua_getfield(L, -1, "topic");
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(L, idx, "entry 'topic' (string) expected");
        lua_getfield(L, -2, "partition");
        if (!lk_get_integer(L, -1, &v) || v < 0 || v > 0x7fffffff)
            luaL_argerror(L, idx, "entry 'partition' (integer >= 0) expected");
        lua_pop(L, 2);
        if (with_offsets) {
            lua_getfield(L, -1, "offset");
            if (!lua_isnil(L, -1) && !lk_offset_value(L, -1, &off))
                luaL_argerror(L, idx, "entry 'offset' must be an integer >= 0, \"beginning\" or \"end\"");
            lua_getfield(L, -2, "metadata");
            if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
                luaL_argerror(L, idx, "entry 'metadata' must be a string");
            lua_getfield(L, -3, "leader_epoch");
            if (!lua_isnil(L, -1) && (!lk_get_integer(L, -1, &v) || v < -1 || v > 0x7fffffff))
                luaL_argerror(L, idx, "entry 'leader_epoch' must be an integer");
            lua_pop(L, 3);
        }
        lua_pop(L, 1);
    }
    return n;
}

int lk_tpl_fill(lua_State *L, int idx, kn_topic_partition_list *list, int with_offsets) {
    size_t n = lua_rawlen(L, idx);
    for (size_t i = 1; i <= n; i++) {
        lua_Integer part = 0, epoch = -1;
        int64_t off;
        lua_rawgeti(L, idx, (int)i);
        lua_getfield(L, -1, "topic");
        lua_getfield(L, -2, "partition");
        lk_get_integer(L, -1, &part);
        int e = kn_topic_partition_list_add(list, lua_tostring(L, -2), (int32_t)part);
        lua_pop(L, 2);
        if (e < 0) {
            lua_pop(L, 1);
            return e;
        }
        if (with_offsets) {
            lua_getfield(L, -1, "offset");
            if (!lua_isnil(L, -1) && lk_offset_value(L, -1, &off))
                kn_topic_partition_list_set_offset(list, (size_t)e, off);
            lua_getfield(L, -2, "leader_epoch");
            if (!lua_isnil(L, -1) && lk_get_integer(L, -1, &epoch))
                kn_topic_partition_list_set_leader_epoch(list, (size_t)e, (int32_t)epoch);
            lua_getfield(L, -3, "metadata");
            int merr = lua_isnil(L, -1)
                           ? KN_OK
                           : kn_topic_partition_list_set_metadata(list, (size_t)e, lua_tostring(L, -1));
            lua_pop(L, 3);
            if (merr) {
                lua_pop(L, 1);
                return merr;
            }
        }
        lua_pop(L, 1);
    }
    return KN_OK;
}

void lk_tpl_push(lua_State *L, const kn_topic_partition_list *list, int flags) {
    size_t n = kn_topic_partition_list_count(list);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 6);
        lua_pushstring(L, kn_topic_partition_list_topic(list, i));
        lua_setfield(L, -2, "topic");
        lk_set_int(L, "partition", kn_topic_partition_list_partition(list, i));
        if (flags & LK_TPL_OFFSETS) {
            int64_t off = kn_topic_partition_list_offset(list, i);
            if (off != KN_OFFSET_INVALID)
                lk_set_int(L, "offset", (lua_Integer)off);
            int32_t epoch = kn_topic_partition_list_leader_epoch(list, i);
            if (epoch >= 0)
                lk_set_int(L, "leader_epoch", epoch);
            const char *md = kn_topic_partition_list_metadata(list, i);
            if (md) {
                lua_pushstring(L, md);
                lua_setfield(L, -2, "metadata");
            }
        }
        if (flags & LK_TPL_ERRORS) {
            int err = kn_topic_partition_list_err(list, i);
            if (err) {
                lua_pushstring(L, kn_err_name(err));
                lua_setfield(L, -2, "error");
            }
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
}

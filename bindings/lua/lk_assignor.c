/*
 * lk_assignor.c: custom partition assignors written in Lua
 * (consumer:add_assignor(name, fn [, {cooperative = true}]), Java's
 * ConsumerPartitionAssignor, classic protocol only).
 *
 * When this member leads the group and the coordinator chose `name`,
 * the library runs the assignor inside poll on the caller's thread
 * (kn_consumer_add_assignor's kn_assign_cb). fn receives
 *   { members = { { member_id =, group_instance_id =, topics = {...} }, ... },
 *     partition_counts = { [topic] = n, ... } }
 * and returns { [member_id] = { {topic =, partition =}, ... }, ... }.
 *
 * The bridge is the rebalance listener's (lk_group.c): the running
 * poll's lua_State and a protected trampoline (lk_assignor_run, pushed
 * by lk_group_enter next to the listener's) are on that call's stack,
 * so the C callback only copies slots and lua_pcall()s. A Lua error, a
 * result of the wrong shape, or a partition the library refuses (a
 * member, topic or partition that does not exist) fails the join with
 * KN_ERR__CALLBACK, and the poll returns nil, message, "_CALLBACK".
 *
 * The functions live in the consumer's uservalue ("assignors", by
 * index); each C registration's opaque is a small userdata kept there
 * too ("assignor_refs"), so both live as long as the consumer.
 */
#include <string.h>

#include "kafka_native.h"
#include "lk.h"

/* The opaque of one registration. */
typedef struct lk_assignor {
    lk_group *g;
    int index; /* in uservalue.assignors */
} lk_assignor;

/* Pushes uservalue[field] (of the consumer at 1), creating the table
 * when missing. */
static void lk_assignor_uv_table(lua_State *L, const char *field) {
    lua_getuservalue(L, 1);
    lua_getfield(L, -1, field);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, field);
    }
    lua_remove(L, -2);
}

/* Pushes the ctx table fn receives. */
static void lk_assignor_push_ctx(lua_State *L, const kn_assignor_ctx *ctx) {
    int32_t n = kn_assignor_ctx_member_count(ctx);
    lua_createtable(L, 0, 2);
    lua_createtable(L, n, 0); /* members */
    lua_newtable(L);          /* partition_counts */
    int members = lua_gettop(L) - 1, counts = lua_gettop(L);
    for (int32_t m = 0; m < n; m++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, kn_assignor_ctx_member_id(ctx, m));
        lua_setfield(L, -2, "member_id");
        if (kn_assignor_ctx_member_instance_id(ctx, m)) {
            lua_pushstring(L, kn_assignor_ctx_member_instance_id(ctx, m));
            lua_setfield(L, -2, "group_instance_id");
        }
        int32_t tn = kn_assignor_ctx_member_topic_count(ctx, m);
        lua_createtable(L, tn, 0);
        for (int32_t i = 0; i < tn; i++) {
            const char *topic = kn_assignor_ctx_member_topic(ctx, m, i);
            lua_pushstring(L, topic);
            lua_rawseti(L, -2, i + 1);
            lua_pushinteger(L, kn_assignor_ctx_partition_count(ctx, topic));
            lua_setfield(L, counts, topic);
        }
        lua_setfield(L, -2, "topics");
        lua_rawseti(L, members, m + 1);
    }
    lua_setfield(L, members - 1, "partition_counts");
    lua_setfield(L, members - 1, "members");
}

/* The member index of member_id, or -1. */
static int32_t lk_assignor_member(const kn_assignor_ctx *ctx, const char *member_id) {
    for (int32_t m = 0; m < kn_assignor_ctx_member_count(ctx); m++)
        if (strcmp(kn_assignor_ctx_member_id(ctx, m), member_id) == 0)
            return m;
    return -1;
}

/* Records the assignment table at idx into ctx; raises on a wrong shape
 * or a refused entry. */
static void lk_assignor_apply(lua_State *L, int idx, kn_assignor_ctx *ctx, const char *name) {
    if (!lua_istable(L, idx))
        luaL_error(L, "assignor '%s' returned a %s, not a table of member_id -> partitions", name,
                   luaL_typename(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int32_t m = lua_type(L, -2) == LUA_TSTRING ? lk_assignor_member(ctx, lua_tostring(L, -2)) : -1;
        if (m < 0)
            luaL_error(L, "assignor '%s': '%s' is not a member of the group", name,
                       lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2));
        if (!lua_istable(L, -1))
            luaL_error(L, "assignor '%s': the partitions of %s must be an array", name, lua_tostring(L, -2));
        size_t n = lua_rawlen(L, -1);
        for (size_t i = 1; i <= n; i++) {
            lua_Integer part = -1;
            lua_rawgeti(L, -1, (int)i);
            if (!lua_istable(L, -1))
                luaL_error(L, "assignor '%s': an entry for %s is not {topic=, partition=}", name,
                           lua_tostring(L, -3));
            lua_getfield(L, -1, "topic");
            lua_getfield(L, -2, "partition");
            if (lua_type(L, -2) != LUA_TSTRING || !lk_get_integer(L, -1, &part) || part < 0 ||
                part > 0x7fffffff)
                luaL_error(L, "assignor '%s': an entry for %s is not {topic=, partition=}", name,
                           lua_tostring(L, -5));
            if (kn_assignor_ctx_assign(ctx, m, lua_tostring(L, -2), (int32_t)part) != KN_OK)
                luaL_error(L, "assignor '%s': cannot give %s-%d to %s (no such topic or partition)", name,
                           lua_tostring(L, -2), (int)part, lua_tostring(L, -5));
            lua_pop(L, 3);
        }
        lua_pop(L, 1);
    }
}

/* Protected: (g lightuserdata, consumer) -> runs assignors[g->asg_index]. */
int lk_assignor_run(lua_State *L) {
    lk_group *g = (lk_group *)lua_touserdata(L, 1);
    lua_settop(L, 2);
    lua_getuservalue(L, 2); /* 3 */
    lua_getfield(L, 3, "assignors");
    lua_rawgeti(L, 4, g->asg_index); /* 5: fn */
    lua_getfield(L, 3, "assignor_names");
    lua_rawgeti(L, 6, g->asg_index); /* 7: name */
    const char *name = lua_tostring(L, 7);
    lua_pushvalue(L, 5);
    lk_assignor_push_ctx(L, g->asg_ctx);
    if (lk_pcall(L, 1, 1) != LUA_OK)
        return lua_error(L);
    lk_assignor_apply(L, lua_gettop(L), g->asg_ctx, name ? name : "?");
    return 0;
}

/* The library's kn_assign_cb (caller's thread, inside poll). */
static int lk_assignor_cb(kn_consumer *c, kn_assignor_ctx *ctx, void *opaque) {
    (void)c;
    lk_assignor *a = (lk_assignor *)opaque;
    lk_group *g = a->g;
    lua_State *L = g->L;
    if (L == NULL)
        return KN_ERR__STATE; /* not inside a call that may run Lua */
    g->asg_ctx = ctx;
    g->asg_index = a->index;
    g->in_listener++;
    /* Only slot copies (room reserved by lk_group_enter): no raise. */
    lua_pushvalue(L, g->fn_idx + 1);
    lua_pushlightuserdata(L, g);
    lua_pushvalue(L, 1);
    int status = lua_pcall(L, 2, 0, 0);
    g->in_listener--;
    g->asg_ctx = NULL;
    if (status == LUA_OK)
        return 0;
    if (g->err_idx == 0)
        g->err_idx = lua_gettop(L);
    else
        lua_pop(L, 1);
    return KN_ERR__CALLBACK;
}

/* consumer:add_assignor(name, fn [, {cooperative = bool}]) -> true, or
 * nil, message, code ("_STATE": no group.id, group.protocol=consumer,
 * or already subscribed; "_INVALID_ARG": the name is taken). */
int lk_assignor_add(lua_State *L) {
    lk_group *g;
    kn_consumer *c = lk_consumer_group_check(L, &g);
    const char *name = luaL_checkstring(L, 2);
    if (*name == '\0')
        return luaL_argerror(L, 2, "a non-empty assignor name expected");
    luaL_checktype(L, 3, LUA_TFUNCTION);
    lk_check_opt_table(L, 4);
    int cooperative = lk_opt_bool_field(L, 4, "cooperative", 0);
    lua_settop(L, 4);
    lk_assignor_uv_table(L, "assignors");      /* 5 */
    lk_assignor_uv_table(L, "assignor_names"); /* 6 */
    lk_assignor_uv_table(L, "assignor_refs");  /* 7 */
    int index = (int)lua_rawlen(L, 5) + 1;
    lk_assignor *a = (lk_assignor *)lua_newuserdata(L, sizeof(*a));
    a->g = g;
    a->index = index;
    lua_rawseti(L, 7, index);
    lua_pushvalue(L, 3);
    lua_rawseti(L, 5, index);
    lua_pushvalue(L, 2);
    lua_rawseti(L, 6, index);
    int err = kn_consumer_add_assignor(c, name, cooperative, lk_assignor_cb, a);
    if (err) {
        /* Not registered: forget it again (it was the last one added). */
        for (int t = 5; t <= 7; t++) {
            lua_pushnil(L);
            lua_rawseti(L, t, index);
        }
        if (err == KN_ERR__STATE)
            return lk_push_error(L, err,
                                 "add_assignor: needs group.id and group.protocol=classic, before subscribe");
        if (err == KN_ERR__INVALID_ARG) {
            lua_pushfstring(L, "add_assignor: an assignor named '%s' exists already", name);
            return lk_push_error(L, err, lua_tostring(L, -1));
        }
        return lk_push_error(L, err, NULL);
    }
    lua_pushboolean(L, 1);
    return 1;
}

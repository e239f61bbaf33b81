/*
 * lk_metrics.c: client:kafka_metrics([group]) and
 * client:kafka_metric(group, name[, tags]) for every client kind: the
 * Kafka-named metrics (kafka_native_metrics.h) as Lua values.
 *
 * kafka_metrics returns a list of { group =, name =, tags = { ["client-id"]
 * = ..., topic = ..., partition = ..., ["node-id"] = ... }, value =,
 * kind = "gauge" | "sum", description = }, one per metric, the shape a
 * graphing pipeline turns into labelled series; kafka_metric returns the
 * value of the first metric of that group and name whose tags include
 * the given ones, or nil.
 *
 * The library walks a snapshot it allocated: each view is turned into
 * Lua values inside its own protected call, so a Lua error (out of
 * memory) never jumps over the walk; the walk finishes, then the error
 * is raised.
 */
#include <string.h>

#include "lk.h"
#include "lk_metrics.h"

typedef struct lk_mwalk {
    lua_State *L;
    int out;     /* absolute index of the result list (caller's frame) */
    int filter;  /* absolute index of the arguments: group, name, tags */
    bool single; /* kafka_metric: stop at the first match */
    bool found;
    double value; /* kafka_metric: the match's value */
    lua_Integer n;
    int lua_err; /* a protected call failed: its message is kept */
} lk_mwalk;

/* Whether the string argument at idx is absent or equal to s. */
static bool arg_matches(lua_State *L, int idx, const char *s) {
    if (lua_isnoneornil(L, idx))
        return true;
    const char *want = lua_tostring(L, idx);
    return want && s && strcmp(want, s) == 0;
}

static bool tags_match(lua_State *L, int idx, const kn_metric_view *v) {
    if (lua_isnoneornil(L, idx))
        return true;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        const char *want = lua_tostring(L, -1); /* numbers match their text (partition 0) */
        bool ok = false;
        for (size_t i = 0; k && want && i < v->n_tags; i++)
            if (strcmp(v->tags[i].key, k) == 0 && strcmp(v->tags[i].value, want) == 0)
                ok = true;
        lua_pop(L, 1);
        if (!ok) {
            lua_pop(L, 1);
            return false;
        }
    }
    return true;
}

/* In a protected call: (walk, view, list, group, name, tags): appends
 * the view to list or records it as the match. */
static int lk_metric_one(lua_State *L) {
    lk_mwalk *w = lua_touserdata(L, 1);
    const kn_metric_view *v = lua_touserdata(L, 2);
    if (!arg_matches(L, 4, v->group))
        return 0;
    if (w->single) {
        if (arg_matches(L, 5, v->name) && tags_match(L, 6, v)) {
            w->value = v->value;
            w->found = true;
        }
        return 0;
    }
    lua_createtable(L, 0, 6);
    lua_pushstring(L, v->group);
    lua_setfield(L, -2, "group");
    lua_pushstring(L, v->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, v->description ? v->description : "");
    lua_setfield(L, -2, "description");
    lua_pushstring(L, v->kind == KN_METRIC_SUM ? "sum" : "gauge");
    lua_setfield(L, -2, "kind");
    lua_pushnumber(L, (lua_Number)v->value);
    lua_setfield(L, -2, "value");
    lua_createtable(L, 0, (int)v->n_tags);
    for (size_t i = 0; i < v->n_tags; i++) {
        lua_pushstring(L, v->tags[i].value);
        lua_setfield(L, -2, v->tags[i].key);
    }
    lua_setfield(L, -2, "tags");
    lua_rawseti(L, 3, (int)++w->n);
    return 0;
}

static void lk_metric_visit(void *ctx, const kn_metric_view *v) {
    lk_mwalk *w = ctx;
    lua_State *L = w->L;
    if (w->lua_err || (w->single && w->found))
        return;
    lua_pushcfunction(L, lk_metric_one);
    lua_pushlightuserdata(L, w);
    lua_pushlightuserdata(L, (void *)v);
    lua_pushvalue(L, w->out);
    for (int i = 0; i < 3; i++)
        lua_pushvalue(L, w->filter + i);
    if (lua_pcall(L, 6, 0, 0) != 0)
        w->lua_err = 1; /* the message stays on the stack */
}

int lk_metrics_push(lua_State *L, lk_metrics_walk_fn *walk, void *client, bool single) {
    /* Arguments from index 2: group[, name[, tags]]. */
    if (single) {
        luaL_checkstring(L, 2);
        luaL_checkstring(L, 3);
        if (!lua_isnoneornil(L, 4))
            luaL_checktype(L, 4, LUA_TTABLE);
    } else if (!lua_isnoneornil(L, 2)) {
        luaL_checkstring(L, 2);
    }
    lua_settop(L, 4);
    lk_mwalk w = {.L = L, .filter = 2, .single = single};
    lua_newtable(L);
    w.out = lua_gettop(L);
    int rc = walk(client, lk_metric_visit, &w);
    if (w.lua_err)
        return lua_error(L); /* the walk is over: nothing of it is held */
    if (rc != 0)
        return lk_push_error(L, rc, NULL);
    if (single) {
        if (w.found)
            lua_pushnumber(L, (lua_Number)w.value);
        else
            lua_pushnil(L);
    } else {
        lua_pushvalue(L, w.out);
    }
    return 1;
}

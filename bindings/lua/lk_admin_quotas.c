/*
 * lk_admin_quotas.c: admin:describe_client_quotas and
 * admin:alter_client_quotas.
 *
 * An entity is a table { user = "alice", ["client-id"] = "app" }; the
 * name false is the type's default entity (Java's null). Filters are
 * { type =, name = } (exact), { type =, default = true } or { type = }
 * (any). describe returns an array of { entity =, values = { [key] =
 * number } }; alter takes an array of { entity =, set = { [key] = number
 * }, remove = { key, ... } } and returns, in the same order, { entity =
 * } or { entity =, error =, code =, message = }.
 */
#include <string.h>

#include "lk_admin.h"

static void lk_free_quotas(void *p) { kn_quota_descriptions_destroy((kn_quota_descriptions *)p); }

static void lk_push_entity(lua_State *L, const kn_quota_descriptions *d, size_t i) {
    lua_newtable(L);
    for (size_t p = 0; p < kn_quota_descriptions_part_count(d, i); p++) {
        const char *name = kn_quota_descriptions_part_name(d, i, p);
        if (name)
            lua_pushstring(L, name);
        else
            lua_pushboolean(L, 0);
        lua_setfield(L, -2, kn_quota_descriptions_part_type(d, i, p));
    }
}

/* admin:describe_client_quotas({filters}, {strict=, timeout_ms=}) */
static int lk_admin_describe_client_quotas(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int strict = lk_opt_bool_field(L, 3, "strict", 0);
    size_t n = lua_rawlen(L, 2);
    kn_quota_filter *f = (kn_quota_filter *)lua_newuserdata(L, (n ? n : 1) * sizeof(*f));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        if (!lua_istable(L, -1))
            return luaL_argerror(L, 2, "array of { type =, name = | default = true } expected");
        lua_getfield(L, -1, "type");
        lua_getfield(L, -2, "name");
        lua_getfield(L, -3, "default");
        if (lua_type(L, -3) != LUA_TSTRING || (!lua_isnil(L, -2) && lua_type(L, -2) != LUA_TSTRING))
            return luaL_argerror(L, 2, "a filter needs a 'type' string and an optional 'name' string");
        f[i].type = lua_tostring(L, -3); /* values of the argument table: alive */
        f[i].match = lua_tostring(L, -2);
        f[i].match_type = f[i].match             ? KN_QUOTA_MATCH_EXACT
                          : lua_toboolean(L, -1) ? KN_QUOTA_MATCH_DEFAULT
                                                 : KN_QUOTA_MATCH_ANY;
        lua_pop(L, 4);
    }
    lk_guard *g = lk_guard_push(L, lk_free_quotas, 0);
    char errstr[512] = "";
    kn_quota_descriptions *d = NULL;
    int err =
        kn_admin_describe_client_quotas(la->admin, f, n, strict, timeout_ms, &d, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    size_t count = kn_quota_descriptions_count(d);
    lua_createtable(L, (int)count, 0);
    for (size_t i = 0; i < count; i++) {
        lua_createtable(L, 0, 2);
        lk_push_entity(L, d, i);
        lua_setfield(L, -2, "entity");
        lua_newtable(L);
        for (size_t v = 0; v < kn_quota_descriptions_value_count(d, i); v++) {
            lua_pushnumber(L, kn_quota_descriptions_value(d, i, v));
            lua_setfield(L, -2, kn_quota_descriptions_value_key(d, i, v));
        }
        lua_setfield(L, -2, "values");
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

/* Fills e from the entity table at idx (raising on a wrong shape). */
static void lk_entity_arg(lua_State *L, int idx, kn_quota_entity *e) {
    memset(e, 0, sizeof(*e));
    if (!lua_istable(L, idx))
        luaL_argerror(L, 2, "'entity' must be a table like { user = \"alice\" }");
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || n == KN_QUOTA_ENTITY_MAX ||
            !(lua_type(L, -1) == LUA_TSTRING || (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1))))
            luaL_argerror(L, 2, "an entity maps up to 3 types to a name (or false: the default)");
        e->types[n] = lua_tostring(L, -2);
        e->names[n++] = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        lua_pop(L, 1);
    }
    if (!n)
        luaL_argerror(L, 2, "an entity needs at least one type");
}

/* admin:alter_client_quotas({ {entity=, set=, remove=}, ... }, {validate_only=, timeout_ms=}) */
static int lk_admin_alter_client_quotas(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = lk_opt_bool_field(L, 3, "validate_only", 0) ? KN_ADMIN_VALIDATE_ONLY : 0;
    lua_settop(L, 3);
    size_t n = lua_rawlen(L, 2), nops = 0;
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, (int)i);
        if (!lua_istable(L, -1))
            return luaL_argerror(L, 2, "array of { entity =, set =, remove = } expected");
        lua_getfield(L, -1, "set");
        if (!lua_isnil(L, -1)) {
            luaL_checktype(L, -1, LUA_TTABLE);
            lua_pushnil(L);
            while (lua_next(L, -2) != 0) {
                if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TNUMBER)
                    luaL_argerror(L, 2, "'set' maps quota keys to numbers");
                nops++;
                lua_pop(L, 1);
            }
        }
        lua_getfield(L, -2, "remove");
        if (!lua_isnil(L, -1)) {
            luaL_checktype(L, -1, LUA_TTABLE);
            for (size_t k = 1; k <= lua_rawlen(L, -1); k++) {
                lua_rawgeti(L, -1, (int)k);
                if (lua_type(L, -1) != LUA_TSTRING)
                    luaL_argerror(L, 2, "'remove' is an array of quota keys");
                lua_pop(L, 1);
                nops++;
            }
        }
        lua_pop(L, 3);
    }
    kn_quota_op *ops = (kn_quota_op *)lua_newuserdata(L, (nops ? nops : 1) * sizeof(*ops)); /* 4 */
    size_t k = 0;
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, (int)i);
        int item = lua_gettop(L);
        kn_quota_entity e;
        lua_getfield(L, item, "entity");
        lk_entity_arg(L, lua_gettop(L), &e);
        lua_getfield(L, item, "set");
        if (lua_istable(L, -1)) {
            lua_pushnil(L);
            while (lua_next(L, -2) != 0) {
                ops[k].entity = e;
                ops[k].key = lua_tostring(L, -2);
                ops[k].value = (double)lua_tonumber(L, -1);
                ops[k++].remove = 0;
                lua_pop(L, 1);
            }
        }
        lua_getfield(L, item, "remove");
        if (lua_istable(L, -1))
            for (size_t r = 1; r <= lua_rawlen(L, -1); r++) {
                lua_rawgeti(L, -1, (int)r);
                ops[k].entity = e;
                ops[k].key = lua_tostring(L, -1); /* a value of the argument: alive */
                ops[k].value = 0;
                ops[k++].remove = 1;
                lua_pop(L, 1);
            }
        lua_settop(L, 4);
    }
    lk_guard *g = lk_guard_push(L, lk_free_quotas, 0);
    char errstr[512] = "";
    kn_quota_descriptions *d = NULL;
    int err = kn_admin_alter_client_quotas(la->admin, ops, k, flags, timeout_ms, &d, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = d;
    size_t count = kn_quota_descriptions_count(d);
    lua_createtable(L, (int)count, 0);
    for (size_t i = 0; i < count; i++) {
        lua_createtable(L, 0, 4);
        lk_push_entity(L, d, i);
        lua_setfield(L, -2, "entity");
        int qerr = kn_quota_descriptions_error(d, i);
        if (qerr) {
            lk_set_error(L, qerr, kn_quota_descriptions_error_message(d, i));
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_quota_methods[] = {
    {"describe_client_quotas", lk_admin_describe_client_quotas},
    {"alter_client_quotas", lk_admin_alter_client_quotas},
    {NULL, NULL},
};

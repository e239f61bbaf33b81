/*
 * lk_admin_configs.c: the admin userdata's config methods:
 * describe_configs, incremental_alter_configs and alter_configs.
 *
 * Resources are keyed by type then name on the way in and out, e.g.
 * { topic = {"orders"}, broker = {"1"} } in, and
 * { topic = { orders = { configs = {...} } }, broker = { ["1"] = ... } }
 * out; a failed resource is { error =, code =, message = }. Argument
 * shapes are checked before any C call (raising on a wrong one); every
 * string handed to C is anchored in a table on the stack for the call.
 */
#include <stdbool.h>
#include <string.h>

#include "lk_admin.h"

#define LK_CONFIG_VALUE_MAX 8192

static const char lk_types_msg[] =
    "resource type must be one of topic, broker, broker_logger, client_metrics, group";

/* A resource name at idx: a string, or an integer (a broker id). */
static int lk_is_name(lua_State *L, int idx) {
    lua_Integer v;
    return lua_type(L, idx) == LUA_TSTRING || (lua_type(L, idx) == LUA_TNUMBER && lk_get_integer(L, idx, &v));
}

/* Stores the string form of the value at idx in anchor[++*np] (anchor is
 * a table at stack index anchor) and returns it; NULL when the value is
 * no Kafka value or too long. */
static const char *lk_anchor(lua_State *L, int anchor, int idx, int *np) {
    char buf[LK_CONFIG_VALUE_MAX];
    lua_pushvalue(L, idx);
    int ok = lk_conf_value(L, buf, sizeof(buf));
    lua_pop(L, 1);
    if (!ok)
        return NULL;
    lua_pushstring(L, buf);
    const char *s = lua_tostring(L, -1);
    lua_rawseti(L, anchor, ++*np);
    return s;
}

/* Raises unless the key at -2 names a resource type; returns its number. */
static int8_t lk_type_key(lua_State *L, int argidx) {
    int type = lua_type(L, -2) == LUA_TSTRING ? kn_config_resource_type_from_name(lua_tostring(L, -2)) : -1;
    if (type < 0)
        luaL_argerror(L, argidx, lk_types_msg);
    return (int8_t)type;
}

/* Pushes out[type name] (the table of that type's resources), creating
 * it on first use. */
static void lk_push_type_table(lua_State *L, int out, int type) {
    const char *tn = kn_config_resource_type_name(type);
    if (!tn)
        tn = "unknown";
    lua_getfield(L, out, tn);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, out, tn);
    }
}

/* ---- describe_configs ------------------------------------------------ */

static void lk_free_descriptions(void *p) { kn_config_descriptions_destroy((kn_config_descriptions *)p); }

static void lk_push_entry(lua_State *L, const kn_config_entry *e) {
    lua_createtable(L, 0, 7);
    lk_set_str(L, "value", kn_config_entry_value(e));
    lk_set_str(L, "source", kn_config_source_name(kn_config_entry_source(e)));
    lk_set_str(L, "type", kn_config_type_name(kn_config_entry_type(e)));
    lua_pushboolean(L, kn_config_entry_is_sensitive(e));
    lua_setfield(L, -2, "sensitive");
    lua_pushboolean(L, kn_config_entry_is_read_only(e));
    lua_setfield(L, -2, "read_only");
    lk_set_str(L, "documentation", kn_config_entry_documentation(e));
    size_t ns = kn_config_entry_synonym_count(e);
    if (ns) {
        lua_createtable(L, (int)ns, 0);
        for (size_t s = 0; s < ns; s++) {
            lua_createtable(L, 0, 3);
            lk_set_str(L, "name", kn_config_entry_synonym_name(e, s));
            lk_set_str(L, "value", kn_config_entry_synonym_value(e, s));
            lk_set_str(L, "source", kn_config_source_name(kn_config_entry_synonym_source(e, s)));
            lua_rawseti(L, -2, (int)(s + 1));
        }
        lua_setfield(L, -2, "synonyms");
    }
}

/* admin:describe_configs({topic = {names}, broker = {ids}, ...},
 *   {synonyms=, documentation=, timeout_ms=})
 * -> {topic = {name = {configs = {key = {value=, source=, type=,
 *    sensitive=, read_only=, documentation=, synonyms=}}}}, ...} */
static int lk_admin_describe_configs(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = (lk_opt_bool_field(L, 3, "synonyms", 0) ? KN_ADMIN_CONFIG_SYNONYMS : 0) |
                (lk_opt_bool_field(L, 3, "documentation", 0) ? KN_ADMIN_CONFIG_DOCUMENTATION : 0);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        lk_type_key(L, 2);
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, 2, "each resource type maps to an array of names");
        size_t len = lua_rawlen(L, -1);
        for (size_t i = 1; i <= len; i++) {
            lua_rawgeti(L, -1, (int)i);
            if (!lk_is_name(L, -1))
                luaL_argerror(L, 2, "resource names must be strings (or broker ids)");
            lua_pop(L, 1);
        }
        n += len;
        lua_pop(L, 1);
    }
    lua_settop(L, 3);
    lua_newtable(L); /* 4: anchor */
    int anchored = 0;
    /* 5: the resource array */
    kn_config_resource *res = (kn_config_resource *)lua_newuserdata(L, (n ? n : 1) * sizeof(*res));
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        int8_t type = lk_type_key(L, 2);
        size_t len = lua_rawlen(L, -1);
        for (size_t i = 1; i <= len; i++) {
            lua_rawgeti(L, -1, (int)i);
            res[k].type = type;
            res[k++].name = lk_anchor(L, 4, lua_gettop(L), &anchored);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lk_guard *guard = lk_guard_push(L, lk_free_descriptions, 0);
    char errstr[512] = "";
    kn_config_descriptions *desc = NULL;
    int err = kn_admin_describe_configs(la->admin, res, n, flags, timeout_ms, &desc, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    guard->ptr = desc;
    lua_newtable(L);
    int out = lua_gettop(L);
    for (size_t i = 0; i < kn_config_descriptions_count(desc); i++) {
        lk_push_type_table(L, out, kn_config_descriptions_resource_type(desc, i));
        lua_createtable(L, 0, 1);
        int rerr = kn_config_descriptions_error(desc, i);
        if (rerr) {
            lk_set_error(L, rerr, kn_config_descriptions_error_message(desc, i));
        } else {
            size_t ne = kn_config_descriptions_entry_count(desc, i);
            lua_createtable(L, 0, (int)ne);
            for (size_t e = 0; e < ne; e++) {
                const kn_config_entry *entry = kn_config_descriptions_entry(desc, i, e);
                lk_push_entry(L, entry);
                lua_setfield(L, -2, kn_config_entry_name(entry));
            }
            lua_setfield(L, -2, "configs");
        }
        lua_setfield(L, -2, kn_config_descriptions_resource_name(desc, i));
        lua_pop(L, 1); /* the type table */
    }
    lk_guard_release(guard);
    return 1;
}

/* ---- incremental_alter_configs / alter_configs ----------------------- */

static void lk_free_config_results(void *p) { kn_config_results_destroy((kn_config_results *)p); }

static int lk_op_from_name(const char *name) {
    static const char *const ops[] = {"set", "delete", "append", "subtract"};
    for (int i = 0; name && i < 4; i++)
        if (strcmp(ops[i], name) == 0)
            return i;
    return -1;
}

/* Walks arg 2 ({type = {name = ops}}): checks its shape (raising) and,
 * when out is not NULL, fills out[] (strings anchored in the table at
 * anchor). Returns the number of kn_config_op it takes. legacy: ops are
 * a {key = value} map; otherwise an array of {op=, name=, value=}. */
static size_t lk_walk_alter(lua_State *L, bool legacy, kn_config_op *out, int anchor, int *anchored) {
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        int8_t type = lk_type_key(L, 2);
        if (lua_type(L, -1) != LUA_TTABLE)
            luaL_argerror(L, 2, "each resource type maps resource names to their changes");
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            if (!lk_is_name(L, -2) || lua_type(L, -1) != LUA_TTABLE)
                luaL_argerror(L, 2, "each resource name maps to a table of changes");
            const char *rname = out ? lk_anchor(L, anchor, lua_gettop(L) - 1, anchored) : NULL;
            size_t before = n;
            if (legacy) {
                lua_pushnil(L);
                while (lua_next(L, -2) != 0) {
                    char buf[LK_CONFIG_VALUE_MAX];
                    if (lua_type(L, -2) != LUA_TSTRING || !lk_conf_value(L, buf, sizeof(buf)))
                        luaL_argerror(L, 2, "configs must map names to strings, numbers or booleans");
                    if (out) {
                        kn_config_op *op = &out[n];
                        op->resource_type = type;
                        op->resource_name = rname;
                        op->op = KN_CONFIG_OP_SET;
                        op->name = lua_tostring(L, -2); /* a key of the argument table: alive */
                        op->value = lk_anchor(L, anchor, lua_gettop(L), anchored);
                    }
                    n++;
                    lua_pop(L, 1);
                }
                if (n == before) { /* no pairs: an empty config */
                    if (out)
                        out[n] = (kn_config_op){type, rname, KN_CONFIG_OP_SET, NULL, NULL};
                    n++;
                }
            } else {
                size_t len = lua_rawlen(L, -1);
                for (size_t i = 1; i <= len; i++) {
                    lua_rawgeti(L, -1, (int)i);
                    int top = lua_gettop(L);
                    if (lua_type(L, top) != LUA_TTABLE)
                        luaL_argerror(L, 2, "changes must be an array of {op=, name=, value=}");
                    lua_getfield(L, top, "op");
                    int opn = lua_type(L, -1) == LUA_TSTRING ? lk_op_from_name(lua_tostring(L, -1)) : -1;
                    lua_getfield(L, top, "name");
                    lua_getfield(L, top, "value");
                    char buf[LK_CONFIG_VALUE_MAX];
                    if (opn < 0)
                        luaL_argerror(L, 2, "change 'op' must be set, delete, append or subtract");
                    if (lua_type(L, top + 2) != LUA_TSTRING)
                        luaL_argerror(L, 2, "change 'name' (string) expected");
                    bool has_value = !lua_isnil(L, top + 3);
                    if (has_value && !lk_conf_value(L, buf, sizeof(buf)))
                        luaL_argerror(L, 2, "change 'value' must be a string, number, boolean or list");
                    if (!has_value && opn != KN_CONFIG_OP_DELETE)
                        luaL_argerror(L, 2, "change 'value' is required unless op is \"delete\"");
                    if (out) {
                        kn_config_op *op = &out[n];
                        op->resource_type = type;
                        op->resource_name = rname;
                        op->op = (int8_t)opn;
                        op->name = lk_anchor(L, anchor, top + 2, anchored);
                        op->value = has_value ? lk_anchor(L, anchor, top + 3, anchored) : NULL;
                    }
                    n++;
                    lua_settop(L, top - 1);
                }
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return n;
}

static int lk_alter(lua_State *L, bool legacy) {
    lk_admin *la = lk_admin_check(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int timeout_ms = lk_timeout_opt(L, 3);
    int flags = lk_opt_bool_field(L, 3, "validate_only", 0) ? KN_ADMIN_VALIDATE_ONLY : 0;
    lua_settop(L, 3);
    size_t n = lk_walk_alter(L, legacy, NULL, 0, NULL);
    lua_newtable(L); /* 4: anchor */
    int anchored = 0;
    kn_config_op *ops = (kn_config_op *)lua_newuserdata(L, (n ? n : 1) * sizeof(*ops)); /* 5 */
    lk_walk_alter(L, legacy, ops, 4, &anchored);
    lk_guard *guard = lk_guard_push(L, lk_free_config_results, 0);
    char errstr[512] = "";
    kn_config_results *res = NULL;
    int err = legacy
                  ? kn_admin_alter_configs(la->admin, ops, n, flags, timeout_ms, &res, errstr, sizeof(errstr))
                  : kn_admin_incremental_alter_configs(la->admin, ops, n, flags, timeout_ms, &res, errstr,
                                                       sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    guard->ptr = res;
    lua_newtable(L);
    int out = lua_gettop(L);
    for (size_t i = 0; i < kn_config_results_count(res); i++) {
        lk_push_type_table(L, out, kn_config_results_resource_type(res, i));
        lua_createtable(L, 0, 3);
        int rerr = kn_config_results_error(res, i);
        if (rerr)
            lk_set_error(L, rerr, kn_config_results_error_message(res, i));
        lua_setfield(L, -2, kn_config_results_resource_name(res, i));
        lua_pop(L, 1);
    }
    lk_guard_release(guard);
    return 1;
}

/* admin:incremental_alter_configs({topic = {name = { {op="set",
 *   name="retention.ms", value=1000}, {op="delete", name=...} }}},
 *   {validate_only=, timeout_ms=}) -> {topic = {name = {} or {error=...}}} */
static int lk_admin_incremental_alter_configs(lua_State *L) { return lk_alter(L, false); }

/* admin:alter_configs({topic = {name = {key = value, ...}}}, opts):
 * replaces each resource's whole dynamic config. Same result shape. */
static int lk_admin_alter_configs(lua_State *L) { return lk_alter(L, true); }

const luaL_Reg lk_admin_config_methods[] = {
    {"describe_configs", lk_admin_describe_configs},
    {"incremental_alter_configs", lk_admin_incremental_alter_configs},
    {"alter_configs", lk_admin_alter_configs},
    {NULL, NULL},
};

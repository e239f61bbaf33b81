/*
 * lk_admin_acls.c: admin:create_acls, admin:describe_acls and
 * admin:delete_acls.
 *
 * A binding or filter is a table { resource_type =, resource_name =,
 * pattern_type =, principal =, host =, operation =, permission = } with
 * Java's enum names as strings, any case ("topic", "prefixed",
 * "idempotent_write", "deny"); results name them in lower case.
 * Bindings default pattern_type to "literal" and host to "*"; filters
 * default every enum to "any" and leave a missing string matching
 * anything.
 *   create_acls({ binding, ... }) -> { { <binding>, [error =, code =,
 *     message =] }, ... } (one per distinct binding, in order);
 *   describe_acls(filter) -> { binding, ... } or nil, message, code;
 *   delete_acls({ filter, ... }) -> { { matches = { binding, ... } } or
 *     { error = ... }, ... } (one per distinct filter, in order).
 */
#include <ctype.h>
#include <string.h>

#include "lk_admin.h"

static void lk_free_acls(void *p) { kn_acl_results_destroy((kn_acl_results *)p); }

static const char *const lk_acl_fields[] = {"resource_type", "operation", "permission", "pattern_type"};
static const int lk_acl_kinds[] = {KN_ACL_ENUM_RESOURCE, KN_ACL_ENUM_OPERATION, KN_ACL_ENUM_PERMISSION,
                                   KN_ACL_ENUM_PATTERN};

/* Reads the table at idx (inside argument arg) into b; its strings stay
 * alive as long as the argument. Raises on a wrong field. */
static void lk_acl_read(lua_State *L, int arg, int idx, kn_acl_binding *b, int filter) {
    if (!lua_istable(L, idx))
        luaL_argerror(
            L, arg, filter ? "array of ACL filter tables expected" : "array of ACL binding tables expected");
    int8_t *slots[] = {&b->resource_type, &b->operation, &b->permission, &b->pattern_type};
    for (int f = 0; f < 4; f++) {
        lua_getfield(L, idx, lk_acl_fields[f]);
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int v = -1;
        if (s)
            v = kn_acl_enum_from_name(lk_acl_kinds[f], s);
        else if (lua_isnil(L, -1))
            v = filter ? 1 /* ANY */ : f == 3 ? KN_ACL_PATTERN_LITERAL : -1;
        if (v < 0) {
            lua_pushfstring(L, "%s: %s %s", lk_acl_fields[f], s ? "unknown value" : "missing or not a string",
                            s ? s : "");
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
        *slots[f] = (int8_t)v;
        lua_pop(L, 1);
    }
    const char *const sf[] = {"resource_name", "principal", "host"};
    const char **ss[] = {&b->resource_name, &b->principal, &b->host};
    for (int f = 0; f < 3; f++) {
        lua_getfield(L, idx, sf[f]);
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING) {
            lua_pushfstring(L, "%s must be a string", sf[f]);
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
        *ss[f] = lua_tostring(L, -1); /* a value of the argument: stays alive */
        if (!*ss[f] && !filter && f == 2)
            *ss[f] = "*";
        lua_pop(L, 1);
    }
}

static void lk_set_enum(lua_State *L, const char *key, int kind, int value) {
    char buf[32];
    const char *name = kn_acl_enum_name(kind, value);
    size_t i = 0;
    for (; name[i] && i < sizeof(buf) - 1; i++)
        buf[i] = (char)tolower((unsigned char)name[i]);
    buf[i] = '\0';
    lk_set_str(L, key, buf);
}

/* Sets the binding's fields on the table at the top. */
static void lk_acl_fields_set(lua_State *L, const kn_acl_binding *b) {
    lk_set_enum(L, "resource_type", KN_ACL_ENUM_RESOURCE, b->resource_type);
    lk_set_str(L, "resource_name", b->resource_name);
    lk_set_enum(L, "pattern_type", KN_ACL_ENUM_PATTERN, b->pattern_type);
    lk_set_str(L, "principal", b->principal);
    lk_set_str(L, "host", b->host);
    lk_set_enum(L, "operation", KN_ACL_ENUM_OPERATION, b->operation);
    lk_set_enum(L, "permission", KN_ACL_ENUM_PERMISSION, b->permission);
}

/* Pushes { binding, ... } of entry i, each with its own error if any. */
static void lk_push_bindings(lua_State *L, const kn_acl_results *r, size_t i) {
    size_t n = kn_acl_results_binding_count(r, i);
    lua_createtable(L, (int)n, 0);
    for (size_t b = 0; b < n; b++) {
        lua_createtable(L, 0, 7);
        lk_acl_fields_set(L, kn_acl_results_binding(r, i, b));
        int err = kn_acl_results_binding_error(r, i, b);
        if (err)
            lk_set_error(L, err, kn_acl_results_binding_error_message(r, i, b));
        lua_rawseti(L, -2, (int)(b + 1));
    }
}

/* The array argument 2 of bindings / filters, into a Lua-owned block. */
static kn_acl_binding *lk_acl_array(lua_State *L, int filter, size_t *np) {
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = lua_rawlen(L, 2);
    kn_acl_binding *v = (kn_acl_binding *)lua_newuserdata(L, (n ? n : 1) * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        memset(&v[i], 0, sizeof(v[i]));
        lk_acl_read(L, 2, lua_gettop(L), &v[i], filter);
        lua_pop(L, 1);
    }
    *np = n;
    return v;
}

static int lk_admin_create_acls(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n;
    kn_acl_binding *acls = lk_acl_array(L, 0, &n);
    lk_guard *g = lk_guard_push(L, lk_free_acls, 0);
    char errstr[512] = "";
    kn_acl_results *r = NULL;
    int err = kn_admin_create_acls(la->admin, acls, n, timeout_ms, &r, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = r;
    lua_createtable(L, (int)kn_acl_results_count(r), 0);
    for (size_t i = 0; i < kn_acl_results_count(r); i++) {
        lua_createtable(L, 0, 10);
        lk_acl_fields_set(L, kn_acl_results_binding(r, i, 0));
        if (kn_acl_results_error(r, i))
            lk_set_error(L, kn_acl_results_error(r, i), kn_acl_results_error_message(r, i));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

static int lk_admin_describe_acls(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    kn_acl_binding filter;
    memset(&filter, 0, sizeof(filter));
    if (lua_isnoneornil(L, 2)) {
        filter.resource_type = filter.pattern_type = filter.operation = filter.permission = 1; /* ANY */
    } else {
        luaL_checktype(L, 2, LUA_TTABLE);
        lk_acl_read(L, 2, 2, &filter, 1);
    }
    lk_guard *g = lk_guard_push(L, lk_free_acls, 0);
    char errstr[512] = "";
    kn_acl_results *r = NULL;
    int err = kn_admin_describe_acls(la->admin, &filter, timeout_ms, &r, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = r;
    lk_push_bindings(L, r, 0);
    lk_guard_release(g);
    return 1;
}

static int lk_admin_delete_acls(lua_State *L) {
    lk_admin *la = lk_admin_check(L);
    int timeout_ms = lk_timeout_opt(L, 3);
    size_t n;
    kn_acl_binding *filters = lk_acl_array(L, 1, &n);
    lk_guard *g = lk_guard_push(L, lk_free_acls, 0);
    char errstr[512] = "";
    kn_acl_results *r = NULL;
    int err = kn_admin_delete_acls(la->admin, filters, n, timeout_ms, &r, errstr, sizeof(errstr));
    if (err)
        return lk_push_error(L, err, errstr);
    g->ptr = r;
    lua_createtable(L, (int)kn_acl_results_count(r), 0);
    for (size_t i = 0; i < kn_acl_results_count(r); i++) {
        lua_createtable(L, 0, 3);
        if (kn_acl_results_error(r, i)) {
            lk_set_error(L, kn_acl_results_error(r, i), kn_acl_results_error_message(r, i));
        } else {
            lk_push_bindings(L, r, i);
            lua_setfield(L, -2, "matches");
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lk_guard_release(g);
    return 1;
}

const luaL_Reg lk_admin_acl_methods[] = {
    {"create_acls", lk_admin_create_acls},
    {"describe_acls", lk_admin_describe_acls},
    {"delete_acls", lk_admin_delete_acls},
    {NULL, NULL},
};

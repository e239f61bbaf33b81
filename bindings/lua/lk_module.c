/*
 * lk_module.c: luaopen_kafka_native, the module table: constructors
 * (admin, producer, consumer), version strings, error_name(),
 * error_message(), error_code(), error_is_retriable() and config()
 * (lk_confdump.c). Registers each object's metatable once per
 * lua_State.
 */
#include <string.h>

#include "lk.h"

/* kafka_native.error_name(code): Kafka's or the library's name for a
 * numeric code (e.g. 36 -> "TOPIC_ALREADY_EXISTS"). */
static int lk_error_name(lua_State *L) {
    lua_Integer code;
    if (!lk_get_integer(L, 1, &code))
        return luaL_argerror(L, 1, "error code (integer) expected");
    lua_pushstring(L, kn_err_name((int)code));
    return 1;
}

/* kafka_native.error_message(code): short description of a code. */
static int lk_error_message(lua_State *L) {
    lua_Integer code;
    if (!lk_get_integer(L, 1, &code))
        return luaL_argerror(L, 1, "error code (integer) expected");
    lua_pushstring(L, kn_err_message((int)code));
    return 1;
}

/* The numeric code of an error name as the binding returns it
 * ("TOPIC_ALREADY_EXISTS", "_TIMED_OUT"). Returns 1 with *code set, or
 * 0 for an unknown name. */
static int lk_code_of(const char *name, int *code) {
#define KN_KAFKA_ERR(c, n, flags)                                                                            \
    if (strcmp(name, #n) == 0) {                                                                             \
        *code = (c);                                                                                         \
        return 1;                                                                                            \
    }
#include "kafka_native_errors.def"
#undef KN_KAFKA_ERR
    if (name[0] != '_')
        return 0;
#define LK_OWN(c, n, msg)                                                                                    \
    if (strcmp(name + 1, #n) == 0) {                                                                         \
        *code = (c);                                                                                         \
        return 1;                                                                                            \
    }
    KN_OWN_ERRORS(LK_OWN)
#undef LK_OWN
    return 0;
}

/* The code at idx: an integer, or a name (raises for anything else or
 * an unknown name). */
static int lk_code_arg(lua_State *L, int idx) {
    lua_Integer code;
    int c;
    if (lua_type(L, idx) == LUA_TSTRING) {
        if (!lk_code_of(lua_tostring(L, idx), &c))
            return luaL_argerror(L, idx, lua_pushfstring(L, "unknown error name '%s'", lua_tostring(L, idx)));
        return c;
    }
    if (!lk_get_integer(L, idx, &code))
        return luaL_argerror(L, idx, "error code (integer) or name expected");
    return (int)code;
}

/* kafka_native.error_code(name): the numeric code of a name, or nil. */
static int lk_error_code(lua_State *L) {
    int code;
    if (lk_code_of(luaL_checkstring(L, 1), &code))
        lua_pushinteger(L, code);
    else
        lua_pushnil(L);
    return 1;
}

/* kafka_native.error_is_retriable(code or name): true when retrying the
 * same operation may succeed (kn_err_is_retriable). */
static int lk_error_is_retriable(lua_State *L) {
    lua_pushboolean(L, kn_err_is_retriable(lk_code_arg(L, 1)));
    return 1;
}

/* one constructor per line */
/* clang-format off */
static const luaL_Reg lk_module_funcs[] = {
    {"admin", lk_admin_new},
    {"producer", lk_producer_new},
    {"consumer", lk_consumer_new},
    {"share_consumer", lk_share_new},
    {"error_name", lk_error_name},
    {"error_message", lk_error_message},
    {"error_code", lk_error_code},
    {"error_is_retriable", lk_error_is_retriable},
    {"config", lk_config_dump},
    {"app_metric", lk_telemetry_app_metric_new},
    {NULL, NULL},
};
/* clang-format on */

#if defined(__GNUC__)
#define LK_EXPORT __attribute__((visibility("default")))
#else
#define LK_EXPORT
#endif

LK_EXPORT int luaopen_kafka_native(lua_State *L);

int luaopen_kafka_native(lua_State *L) {
    lk_admin_register(L);
    lk_callback_register(L);
    lk_telemetry_register(L);
    lk_producer_register(L);
    lk_consumer_register(L);
    lk_share_register(L);
    lk_records_register(L);
    lk_batch_register(L);
    luaL_newlib(L, lk_module_funcs);
    lua_pushliteral(L, KN_VERSION_STR);
    lua_setfield(L, -2, "version");
    lua_pushliteral(L, KN_SOFTWARE_NAME);
    lua_setfield(L, -2, "software_name");
    return 1;
}

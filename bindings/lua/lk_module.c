/*
 * lk_module.c: luaopen_kafka_native, the module table: constructors
 * (admin, producer, consumer), version strings and error_name(). Registers each object's
 * metatable once per lua_State.
 */
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

/* one constructor per line */
/* clang-format off */
static const luaL_Reg lk_module_funcs[] = {
    {"admin", lk_admin_new},
    {"producer", lk_producer_new},
    {"consumer", lk_consumer_new},
    {"error_name", lk_error_name},
    {"error_message", lk_error_message},
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
    lk_producer_register(L);
    lk_consumer_register(L);
    lk_records_register(L);
    lk_batch_register(L);
    luaL_newlib(L, lk_module_funcs);
    lua_pushliteral(L, KN_VERSION_STR);
    lua_setfield(L, -2, "version");
    lua_pushliteral(L, KN_SOFTWARE_NAME);
    lua_setfield(L, -2, "software_name");
    return 1;
}

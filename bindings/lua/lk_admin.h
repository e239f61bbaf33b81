/*
 * lk_admin.h: what the admin userdata's method families share. The
 * handle, its guards and small table helpers live in lk_admin.c; each
 * family (lk_admin_configs.c, ...) exports a luaL_Reg array that
 * lk_admin_register() adds to the admin metatable.
 */
#ifndef LK_ADMIN_H
#define LK_ADMIN_H

#include <stdbool.h>

#include "kafka_native_admin.h"
#include "kafka_native_consumer.h"
#include "lk.h"

#define LK_ADMIN_MT "kafka_native.admin"

typedef struct lk_admin {
    kn_admin *admin;    /* NULL once closed */
    kn_log_queue *logq; /* options.log's queue, or NULL */
} lk_admin;

/* Argument 1 as an open admin; raises "admin client is closed". */
lk_admin *lk_admin_check(lua_State *L);

/* C memory held while Lua values are built sits in a guard userdata
 * whose __gc frees it, so a raise never leaks (see lk_admin.c). */
typedef struct lk_guard {
    void *ptr; /* NULL once released */
    void (*destroy)(void *ptr);
} lk_guard;

/* Pushes an empty guard that will call destroy on whatever ptr it gets,
 * with `extra` zeroed bytes after it (lk_guard_extra). */
lk_guard *lk_guard_push(lua_State *L, void (*destroy)(void *ptr), size_t extra);
void *lk_guard_extra(lk_guard *g);
/* Frees the guarded object now (the normal path). */
void lk_guard_release(lk_guard *g);

/* The timeout_ms field of the options table at idx (-1 when absent). */
int lk_timeout_opt(lua_State *L, int idx);
/* t[key] = value on the table at the top (nothing for a NULL string). */
void lk_set_str(lua_State *L, const char *key, const char *value);
void lk_set_int(lua_State *L, const char *key, lua_Integer value);
/* error =, code = and message = (none for a NULL message) on the table
 * at the top: an entry that failed alone. */
void lk_set_error(lua_State *L, int err, const char *message);
/* Pushes t[topic] of the table t at the top, creating it when absent:
 * results keyed by topic then partition. */
void lk_push_topic_table(lua_State *L, const char *topic);

/* Raises (what) unless idx is an array of strings; returns its length. */
size_t lk_check_strings(lua_State *L, int idx, const char *what);
/* The strings of the (checked) array at idx, in a Lua-owned block it
 * pushes; the strings live as long as the table. */
const char **lk_strings(lua_State *L, int idx, size_t n);

/* Reads the value at the top of a { [topic] = { [partition] = value } }
 * walk: raises on a wrong one, else returns the entry's offset. */
typedef int64_t (*lk_offset_value_fn)(lua_State *L);
/* The { [topic] = { [partition] = value } } table at argument 2 as a
 * topic-partition list with offsets: checked first (raising shape for a
 * wrong table, bad_partition for a partition that is not an integer
 * >= 0), then filled. Pushes the list's guard and returns it (the list
 * is its ptr); raises "out of memory". */
lk_guard *lk_offsets_arg(lua_State *L, const char *shape, const char *bad_partition,
                         lk_offset_value_fn value);
/* Pushes { [topic] = { [partition] = item } } for res: item is the
 * entry's error fields or, without error, what ok_fields sets on it. */
void lk_push_offset_results(lua_State *L, const kn_offset_results *res,
                            void (*ok_fields)(lua_State *L, const kn_offset_results *res, size_t i));

/* The { [topic] = { p, ... } } table at idx (with offsets: { [topic] =
 * { [p] = offset or { offset =, leader_epoch =, metadata = } } }) as a
 * list held by a guard it pushes (lk_admin_groups.c); raises on a wrong
 * shape. */
kn_topic_partition_list *lk_partitions_arg(lua_State *L, int idx, bool offsets);
/* Pushes { [topic] = { p, ... } } for l, in list order. */
void lk_push_assignment(lua_State *L, const kn_topic_partition_list *l);
/* Pushes { [topic] = { [p] = item } }: item is {} or the entry's error
 * fields (with offsets: { offset =, leader_epoch =, metadata = }). */
void lk_push_partition_items(lua_State *L, const kn_topic_partition_list *l, bool offsets);

/* Streams groups' own fields (lk_admin_streams.c), set on the table at
 * the top: a group's topology_epoch and subtopologies, a member's
 * process_id and tasks. */
void lk_push_streams_group_fields(lua_State *L, const kn_group_descriptions *d, size_t i);
void lk_push_streams_member_fields(lua_State *L, const kn_group_descriptions *d, size_t i, size_t m);

/* Method families. */
extern const luaL_Reg lk_admin_config_methods[];
extern const luaL_Reg lk_admin_group_methods[];
extern const luaL_Reg lk_admin_offset_methods[];
extern const luaL_Reg lk_admin_partition_methods[];
extern const luaL_Reg lk_admin_cluster_methods[];
extern const luaL_Reg lk_admin_quota_methods[];
extern const luaL_Reg lk_admin_scram_methods[];
extern const luaL_Reg lk_admin_acl_methods[];
extern const luaL_Reg lk_admin_txn_methods[];
extern const luaL_Reg lk_admin_token_methods[];
extern const luaL_Reg lk_admin_reassign_methods[];
extern const luaL_Reg lk_admin_raft_methods[];

#endif

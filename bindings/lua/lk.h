/*
 * lk.h: what the files of the kafka_native Lua module share.
 *
 * One file per object: lk_module.c (luaopen_kafka_native, module
 * table), lk_errors.c (the nil, message, code convention), lk_config.c
 * (Lua table or .properties path -> kn_conf), lk_admin.c (the admin
 * userdata), lk_producer.c, lk_consumer.c + lk_records.c (consumer
 * records and topic-partition lists), lk_callback.c (the pcall
 * trampoline and the C-memory guard), lk_log.c (log handler option),
 * lk_ready.c (the clients' readiness socket), lk_group.c (the
 * consumer's group methods and rebalance listener), lk_txn.c (the
 * producer's transaction methods), lk_partitioner.c (the producer's
 * Lua partitioner), lk_assignor.c (custom assignors in Lua).
 *
 * Threads: every function here runs on the thread that owns the
 * lua_State; the library's network threads never see a lua_State.
 * No module globals: all state hangs off userdata.
 */
#ifndef LK_H
#define LK_H

#include <stdatomic.h>

#include "compat.h"
#include "kafka_native.h"

/* What every method of a client created in another process raises
 * (the process forked after creating it: nginx's master made it in
 * init_by_lua, a worker uses it). Its threads live in the parent only. */
#define LK_FORKED_MSG "created before fork: create clients in init_worker_by_lua"
/* __gc of such a client: writes one line to stderr and leaves the C
 * object alone (leaked: flushing or joining would wait forever on
 * threads that are not in this process). what: "producer", ... */
void lk_forked_collected(const char *what);

/* Pushes nil, message, code-name (kn_err_name(code)) and returns 3: the
 * runtime-error convention of every method. message NULL uses
 * kn_err_message(code). */
int lk_push_error(lua_State *L, int code, const char *message);

/* Builds a kn_conf of the given client kind from the argument at idx:
 * a table of Kafka properties (string, number and boolean values, or an
 * array of strings joined with ",") or the path of a .properties file.
 * Raises (luaL_argerror) when the argument has the wrong shape. Returns
 * the conf (caller owns: kn_conf_destroy) or NULL with errstr filled
 * and *errp set (KN_ERR__CONFIG, ...) when Kafka config rules reject it. */
kn_conf *lk_conf_from_arg(lua_State *L, int idx, int kind, char *errstr, size_t errstr_size, int *errp);

/* If the value at idx is a number with an integral value (5.3+ floats
 * like 3.0 included), stores it in *out and returns 1; else returns 0. */
int lk_get_integer(lua_State *L, int idx, lua_Integer *out);
/* Optional timeout_ms argument at idx (def when absent), clamped to
 * -1..INT32_MAX; raises on a non-integer. */
int lk_timeout_arg(lua_State *L, int idx, int def);
/* Converts the value at the top of the stack to the string Kafka would
 * read (booleans "true"/"false", integral numbers without a fraction,
 * arrays of scalars joined with ",") into buf. Returns 1, or 0 when the
 * value cannot be a Kafka value or does not fit. Never raises. */
int lk_conf_value(lua_State *L, char *buf, size_t size);
/* Reads optional integer field `key` of the options table at idx (which
 * may be none/nil): def when absent; raises when not an integer. */
lua_Integer lk_opt_int_field(lua_State *L, int idx, const char *key, lua_Integer def);
/* Same for a boolean field. */
int lk_opt_bool_field(lua_State *L, int idx, const char *key, int def);
/* Raises unless the argument at idx is a table or none/nil. */
void lk_check_opt_table(lua_State *L, int idx);

/* ---- lk_callback.c ---- */

/* Calls the function below the nargs arguments on top of the stack in
 * protected mode with a traceback handler: the one trampoline every
 * callback into Lua goes through. Returns LUA_OK with nresults values
 * pushed, or an error status with the message (and traceback) on top. */
int lk_pcall(lua_State *L, int nargs, int nresults);

/* A guard userdata holding C memory while Lua values are built: its
 * __gc calls destroy(ptr) unless released first. */
typedef struct lk_cguard {
    void *ptr; /* set by the caller once it owns something; NULL: nothing */
    void (*destroy)(void *ptr);
} lk_cguard;
/* Pushes an empty guard (may raise on out of memory: nothing to leak
 * yet). */
lk_cguard *lk_cguard_push(lua_State *L, void (*destroy)(void *ptr));
/* Frees the guarded object now (idempotent). */
void lk_cguard_release(lk_cguard *g);
void lk_callback_register(lua_State *L);

/* Producer (lk_producer.c) and consumer (lk_consumer.c, records built
 * by lk_records.c). */
void lk_producer_register(lua_State *L);
int lk_producer_new(lua_State *L);
void lk_consumer_register(lua_State *L);
int lk_consumer_new(lua_State *L);

/* ---- lk_telemetry.c: client telemetry (KIP-714) ---- */

typedef enum lk_client_kind { LK_CLIENT_PRODUCER, LK_CLIENT_CONSUMER, LK_CLIENT_ADMIN } lk_client_kind;
/* The app_metric metatable; kafka.app_metric{...}. */
void lk_telemetry_register(lua_State *L);
int lk_telemetry_app_metric_new(lua_State *L);
/* client:client_instance_id([timeout_ms]) for the open handle (the
 * client is argument 1): the id string, or nil, message, code. */
int lk_telemetry_instance_id(lua_State *L, lk_client_kind kind, void *handle);
/* client:(un)register_metric_for_subscription(metric) (argument 2):
 * true, or nil, message, code. add: 1 register, 0 unregister. */
int lk_telemetry_register_metric(lua_State *L, lk_client_kind kind, void *handle, int add);

/* lk_producer.c, for lk_txn.c: the open producer at argument 1 (raises
 * when closed); and, after a C call that may have served delivery
 * reports (the producer at 1), their Lua callbacks and the queued log
 * records. lk_producer_serve returns LUA_OK with the stack as it was, or
 * the status of the first callback that raised with its message pushed
 * (the reports behind it stay queued). */
kn_producer *lk_producer_check_open(lua_State *L);
int lk_producer_serve(lua_State *L);

/* ---- lk_partitioner.c: the producer's `partitioner` option ---- */

/* A producer's partitioner bridge (a field of its userdata; zeroed =
 * idle). The record fields are borrowed during one hook call. */
typedef struct lk_partitioner {
    lua_State *L; /* the running send's state; NULL outside send */
    int fn_idx;   /* that send's slot holding the trampoline (the Lua function is at +1) */
    int err_idx;  /* that send's slot holding the error message, 0: none */
    int running;  /* 1 while the Lua function runs */
    const char *topic;
    const void *key, *value;
    size_t key_len, value_len;
    int32_t count, result;
} lk_partitioner;
/* The library's kn_partitioner_cb; opaque is the lk_partitioner. */
int32_t lk_partitioner_cb(const char *topic, const void *key, size_t key_len, const void *value,
                          size_t value_len, int32_t partition_count, void *opaque);
/* Around kn_producer_send (uv: the stack index of the producer's
 * uservalue): enter pushes two slots (may raise: call it before taking
 * C resources); leave pops them and returns 0, or the stack index of
 * the first error message (left there). */
void lk_partitioner_enter(lua_State *L, lk_partitioner *pt, int uv);
int lk_partitioner_leave(lua_State *L, lk_partitioner *pt);

/* ---- lk_txn.c: the producer's transaction methods ---- */

extern const luaL_Reg lk_txn_methods[];
/* Pushes the kind ("fatal", "abortable", "retriable" or nil) of err,
 * returned by a call on the transactional producer p. */
void lk_txn_push_send_kind(lua_State *L, kn_producer *p, int err);

/* ---- lk_records.c ---- */

/* Registers the metatable every record table shares. */
void lk_records_register(lua_State *L);
/* Pushes an array of record tables ({topic, partition, offset,
 * timestamp, timestamp_type, leader_epoch, key, value, headers}) built
 * from recs (borrowed; the caller frees it, guarded). */
void lk_records_push(lua_State *L, const kn_records *recs);
/* Pushes the table of record i (0-based) of recs, as lk_records_push
 * builds it. */
void lk_record_push(lua_State *L, const kn_records *recs, size_t i);
/* Pushes record i's headers: an array of {key, value} pairs. */
void lk_record_headers_push(lua_State *L, const kn_records *recs, size_t i);
/* An offset argument at idx: an integer >= 0, "beginning" or "end".
 * Returns 1 with *out set, or 0 for anything else. Never raises. */
int lk_offset_value(lua_State *L, int idx, int64_t *out);
/* Raises unless the value at idx is an array of {topic=, partition=}
 * tables (with with_offsets: optional offset, metadata, leader_epoch).
 * Returns the array's length. */
size_t lk_tpl_check(lua_State *L, int idx, int with_offsets);
/* Appends the entries of the (checked) array at idx to list (owned and
 * guarded by the caller). Returns KN_OK or the first error
 * (KN_ERR__NOMEM, ...). */
int lk_tpl_fill(lua_State *L, int idx, kn_topic_partition_list *list, int with_offsets);
#define LK_TPL_OFFSETS 1 /* offset (nil when none), leader_epoch, metadata */
#define LK_TPL_ERRORS  2 /* error: code name, nil when none */
/* Pushes list (borrowed) as an array of {topic=, partition=, ...}. */
void lk_tpl_push(lua_State *L, const kn_topic_partition_list *list, int flags);

/* ---- lk_batch.c: consumer:poll_batch's batch userdata ---- */

void lk_batch_register(lua_State *L);
/* Pushes a raw batch that takes the kn_records out of g (g->ptr NULL
 * after; may raise before, leaving g the owner). */
void lk_batch_push_raw(lua_State *L, lk_cguard *g);
/* Pushes a batch over the record array at arr (an absolute index). */
void lk_batch_push_tables(lua_State *L, int arr);

/* ---- lk_ready.c: a client's readiness socket (OpenResty) ---- */

typedef struct lk_ready {
    int listen_fd;    /* listening until ready_accept, else -1 */
    int fd;           /* the accepted connection, else -1 */
    atomic_int armed; /* 1: a byte was written and no poll ran since */
    char dir[108];    /* its private 0700 directory while listening */
    char path[108];   /* sun_path while listening */
} lk_ready;
void lk_ready_init(lk_ready *r);
/* Binds and listens on a fresh Unix socket path in dir (r->path).
 * Returns KN_OK or an error with errstr filled. */
int lk_ready_listen(lk_ready *r, const char *dir, char *errstr, size_t errstr_size);
/* client:ready_listen([dir]) for any client: listens in the directory
 * at stack index dir_arg (default $TMPDIR or /tmp) and pushes r->path,
 * or nil, message, code. */
int lk_ready_push_listen(lua_State *L, lk_ready *r, int dir_arg);
/* Accepts the connection made to r->path by this process (SO_PEERCRED;
 * another process's is refused), removes the path and its directory and
 * installs the consumer's readiness hook. KN_ERR__STATE when nobody
 * (or another process) connected. */
int lk_ready_accept(lk_ready *r, kn_consumer *c, char *errstr, size_t errstr_size);
/* The same for a producer (its hook fires when reports are queued). */
int lk_ready_accept_producer(lk_ready *r, kn_producer *p, char *errstr, size_t errstr_size);
/* lk_ready_accept without installing a hook, for clients that install
 * their own (the share consumer's calls lk_ready_signal). */
int lk_ready_take(lk_ready *r, char *errstr, size_t errstr_size);
/* Writes the readiness byte unless one is pending (any thread). */
void lk_ready_signal(lk_ready *r);
/* Called before each poll drains: the next landing signals again. */
void lk_ready_rearm(lk_ready *r);
/* Removes the hook (c may be NULL once closed), closes, unlinks. */
void lk_ready_close(lk_ready *r, kn_consumer *c);
void lk_ready_close_producer(lk_ready *r, kn_producer *p);

/* ---- lk_log.c: the log / log_level client options ---- */

/* Raises unless the options table at opts (may be none/nil) has a valid
 * log (function) and log_level; call before allocating anything. */
void lk_log_check_opts(lua_State *L, int opts);
/* The `oauthbearer_token` option (lk_oauth.c): checked before the client
 * userdata exists; installed on conf with its state in the uservalue at
 * uv. */
void lk_oauth_check_opts(lua_State *L, int opts);
int lk_oauth_setup(lua_State *L, int opts, int uv, kn_conf *conf);
/* Stores options.log in the uservalue table at uv and installs the
 * handler on conf: with a log function, a new queue in *qp (owned by
 * the client: kn_log_queue_destroy after the client is closed).
 * Returns KN_OK or KN_ERR__NOMEM. */
int lk_log_setup(lua_State *L, int opts, int uv, kn_conf *conf, kn_log_queue **qp);
/* Runs uv.log(level, message) for the records queued now (q may be
 * NULL); keeps the stack as it was. */
void lk_log_deliver(lua_State *L, kn_log_queue *q, int uv);
/* __gc of a client never closed: writes the records still queued for
 * the log function to stderr (no Lua may run), then the printf-style
 * message ("... collected without close() ..."). q may be NULL. */
void lk_log_collected(kn_log_queue *q, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- lk_group.c: consumer groups and the rebalance listener ---- */

/* A consumer's group state (a field of its userdata; zeroed = idle). */
typedef struct lk_group {
    lua_State *L;          /* the state of the running poll / unsubscribe / close; NULL: listener not run */
    int fn_idx;            /* that call's stack slot holding the trampoline (the assignor's at +1) */
    int err_idx;           /* that call's slot holding the first listener error, 0: none */
    int in_listener;       /* > 0 while a Lua listener runs */
    kn_rebalance_event ev; /* the event being delivered */
    const kn_topic_partition_list *parts; /* its partitions (borrowed, during the call) */
    kn_assignor_ctx *asg_ctx;             /* a Lua assignor's input/output (borrowed, during the call) */
    int asg_index;                        /* which one (uservalue.assignors[i]) */
} lk_group;
/* What lk_group_enter saved, for lk_group_leave. */
typedef struct lk_group_call {
    lua_State *L;
    int fn_idx, err_idx, top;
} lk_group_call;

/* The group methods, added to the consumer's method table. */
extern const luaL_Reg lk_group_methods[];
/* lk_consumer.c: the open consumer at argument 1 (raises when closed)
 * and its group state. */
kn_consumer *lk_consumer_group_check(lua_State *L, lk_group **gp);
/* Around a C call that may run the listener (the consumer must be at
 * stack index 1): enter pushes one slot (may raise: call it before
 * taking C resources); leave pops it and returns 0, or the stack index
 * of the first listener error message (left there). */
void lk_group_enter(lua_State *L, lk_group *g, lk_group_call *saved);
int lk_group_leave(lua_State *L, lk_group *g, const lk_group_call *saved);
/* Inside a listener: pushes nil, "<what> cannot run inside a rebalance
 * listener", "_STATE" and returns 3; else returns 0. */
int lk_group_busy(lua_State *L, lk_group *g, const char *what);
/* close(): leaves the group with the listener still reachable (it may
 * commit through the consumer), then drops it. Returns 0 or the stack
 * index of a listener error message. */
int lk_group_close(lua_State *L, lk_group *g, kn_consumer *c);
/* Adds the group counters of st to the table on top. */
void lk_group_metrics(lua_State *L, const kn_consumer_stats *st);

/* ---- lk_assignor.c: custom assignors in Lua ---- */

/* consumer:add_assignor(name, fn [, opts]) (a group method). */
int lk_assignor_add(lua_State *L);
/* The protected trampoline lk_group_enter pushes at fn_idx + 1:
 * (g lightuserdata, consumer) runs the assignor g->asg_index. */
int lk_assignor_run(lua_State *L);

/* kafka_native.share_consumer(config [, opts]) (lk_share.c, KIP-932). */
void lk_share_register(lua_State *L);
int lk_share_new(lua_State *L);

/* kafka_native.config(kind, config) (lk_confdump.c). */
int lk_config_dump(lua_State *L);

/* Registers the admin metatable; pushes nothing. */
void lk_admin_register(lua_State *L);
/* kafka_native.admin(config) */
int lk_admin_new(lua_State *L);

#endif

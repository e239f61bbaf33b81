/*
 * wire.h: the per-client network layer (contract shared by the producer,
 * consumer and admin modules).
 *
 * Threads: a knw_client owns ONE background network thread running a
 * non-blocking event loop (poll(2) over every broker socket plus a wakeup
 * eventfd). That thread alone touches sockets, connection state, the
 * in-flight tables and the metadata cache writer side. Any thread may
 * call knw_send()/knw_call()/knw_metadata_*(): they hand work to the
 * network thread through a mutex-protected queue and wake it.
 *
 * Completion callbacks (knw_cb) run ON THE NETWORK THREAD: they must be
 * short, must not block, and must never call user code or a lua_State;
 * modules use them to move results onto their own queues, which the
 * application drains from poll().
 */
#ifndef KN_WIRE_H
#define KN_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "kafka_native.h"
#include "reader.h"
#include "writer.h"

typedef struct kn_conf kn_conf;
typedef struct knw_client knw_client;

/* Special destinations for knw_send(). Real node ids are >= 0. */
#define KNW_NODE_ANY (-1)        /* least-loaded connected broker (bootstrap ok) */
#define KNW_NODE_CONTROLLER (-2) /* the controller from the latest metadata */

/* A completed request, handed to the callback, which takes ownership
 * and frees it with knw_resp_free() (possibly later, on another thread:
 * e.g. the consumer keeps raw Fetch responses across polls). Read-only
 * for the callback (see KN_ERR__NOMEM under knw_send). */
typedef struct knw_resp {
    int err;            /* 0, or KN_ERR__TRANSPORT / _TIMED_OUT / _PROTOCOL /
                           _UNSUPPORTED_VERSION / _CLOSED / _ALL_BROKERS_DOWN */
    char errstr[256];   /* human detail when err != 0 */
    int16_t api_key;
    int16_t api_version; /* the version actually used */
    int32_t node_id;     /* the broker that answered (or was tried) */
    int64_t latency_us;  /* send to response */
    void *body;          /* decoded kp_<Api>Response, NULL if err */
    kn_arena arena;      /* owns body's arrays */
    uint8_t *raw;        /* raw response body bytes; body's slices point here */
    size_t raw_len;
} knw_resp;

/* Frees a response and everything it owns. NULL is a no-op. */
void knw_resp_free(knw_resp *resp);

typedef void knw_cb(knw_client *client, knw_resp *resp, void *opaque);

/* Creates the client and starts its network thread. conf is copied
 * (caller keeps ownership of its conf). client_kind is "producer",
 * "consumer" or "admin" (used in the default client.id). Returns NULL
 * with errstr filled on invalid configuration or resource failure. */
knw_client *knw_client_new(const kn_conf *conf, const char *client_kind, char *errstr,
                           size_t errstr_size);

/* Stops the network thread, fails every pending request with
 * KN_ERR__CLOSED (their callbacks run before this returns) and closes
 * all connections, but keeps the client readable (stats, logger, fatal
 * error): later requests complete at once with KN_ERR__CLOSED. The
 * public close calls use it, so a closed handle stays valid until its
 * destroy. Idempotent. */
void knw_client_stop(knw_client *client);
/* knw_client_stop, then frees everything. */
void knw_client_destroy(knw_client *client);

/* The client's logger (prefix e.g. "consumer-3", the handler given by
 * kn_conf_set_log_cb): every module logs through its client's, so the
 * application's log handler sees every line. Valid until
 * knw_client_destroy; NULL for a NULL client (kn_log then writes to
 * stderr). */
struct kn_logger *knw_client_logger(knw_client *client);

/* Sends a request. Every call completes EXACTLY ONCE, through cb (or,
 * with cb NULL, frees its response itself); there is no error return.
 * req is a kp_<Api>Request struct; it is encoded on the network thread
 * once the destination's API versions are known, at the highest version
 * both sides support that is <= max_version (-1 = no cap) and >=
 * min_version (-1 = our lowest); so req (and everything it points to)
 * must stay valid until cb runs. timeout_ms bounds the whole wait
 * (connect + queue + response); -1 uses request.timeout.ms.
 *
 * Where cb runs:
 * - a request knw_send queued: later, on the network thread (response,
 *   timeout, transport error, no version in common, encode error, or
 *   KN_ERR__CLOSED when knw_client_destroy fails what is pending);
 * - a request knw_send could not queue: on the calling thread, before
 *   knw_send returns, with KN_ERR__INVALID_ARG (bad arguments),
 *   KN_ERR__CLOSED (the client is closing: e.g. a callback run by
 *   knw_client_destroy that sends again) or KN_ERR__NOMEM.
 * So a caller must not hold a lock cb takes while calling knw_send, and
 * a cb must not resend on KN_ERR__CLOSED (it would recurse). Under
 * KN_ERR__NOMEM the response may be a shared read-only one (api_key
 * -1): read it, never write it, free it with knw_resp_free as usual. */
void knw_send(knw_client *client, int32_t node_id, int16_t api_key, int16_t min_version,
              int16_t max_version, const void *req, int timeout_ms, knw_cb *cb, void *opaque);

/* Like knw_send() without the cb: blocks the calling thread (never the
 * network thread: there it answers KN_ERR__STATE at once) until the
 * response arrives or the timeout passes. Always returns a response,
 * never NULL (check resp->err); the caller frees it (knw_resp_free). */
knw_resp *knw_call(knw_client *client, int32_t node_id, int16_t api_key, int16_t min_version,
                   int16_t max_version, const void *req, int timeout_ms);

/* Highest version of api_key usable with node_id (both sides), or -1
 * if unknown yet / unsupported. */
int16_t knw_api_version(knw_client *client, int32_t node_id, int16_t api_key);

/* ---- Metadata cache -------------------------------------------------
 * An immutable, reference-counted snapshot. A new snapshot replaces the
 * cache after every successful Metadata response; readers keep theirs
 * until they release it. */

typedef struct knw_broker {
    int32_t node_id;
    char *host;
    int32_t port;
    char *rack; /* NULL if none */
} knw_broker;

typedef struct knw_partition {
    int32_t partition;
    int16_t error;         /* Kafka error for this partition (e.g. LEADER_NOT_AVAILABLE) */
    int32_t leader;        /* -1 if none */
    int32_t leader_epoch;  /* -1 if unknown */
    int32_t *replicas;
    int32_t replica_count;
    int32_t *isr;
    int32_t isr_count;
    int32_t *offline;
    int32_t offline_count;
} knw_partition;

typedef struct knw_topic {
    char *name;
    kn_uuid topic_id;
    int16_t error; /* e.g. UNKNOWN_TOPIC_OR_PARTITION */
    bool is_internal;
    knw_partition *partitions; /* sorted by partition id, index == id */
    int32_t partition_count;
} knw_topic;

typedef struct knw_metadata {
    int refcnt;            /* atomic; use knw_metadata_retain/release */
    int64_t fetched_at_ms; /* monotonic ms */
    char *cluster_id;      /* NULL if unknown */
    int32_t controller_id; /* -1 if unknown */
    knw_broker *brokers;   /* sorted by node_id */
    int32_t broker_count;
    knw_topic *topics;     /* sorted by name */
    int32_t topic_count;
    bool all_topics;       /* true if this snapshot lists every topic */
    uint64_t topic_gen;    /* the registered-topic set it was asked for (see wait) */
} knw_metadata;

/* Current snapshot (retained: release it), or NULL before the first. */
knw_metadata *knw_metadata_get(knw_client *client);
void knw_metadata_retain(knw_metadata *md);
void knw_metadata_release(knw_metadata *md);
/* Lookups inside a snapshot (binary search); NULL if absent. */
const knw_topic *knw_metadata_topic(const knw_metadata *md, const char *name);
const knw_topic *knw_metadata_topic_by_id(const knw_metadata *md, const kn_uuid *id);
const knw_broker *knw_metadata_broker(const knw_metadata *md, int32_t node_id);

/* Declares topics this client cares about: they are included in every
 * metadata refresh (with all_topics false, the client only requests the
 * union of registered topics). Thread-safe. */
void knw_metadata_add_topics(knw_client *client, const char *const *topics, int count);
void knw_metadata_remove_topics(knw_client *client, const char *const *topics, int count);
/* Asks for a refresh soon (coalesced; rate-limited by retry.backoff.ms).
 * all_topics: request every topic (admin list, pattern subscription). */
void knw_metadata_request_refresh(knw_client *client, bool all_topics, const char *reason);
/* Blocks until a snapshot newer than the current one (or, if
 * min_fetched_at_ms > 0, one fetched at or after that time) exists, or
 * timeout. The snapshot returned was always requested after every topic
 * registered before the call (knw_metadata_add_topics), so it answers
 * for them. Returns it retained, or NULL with *err set. */
knw_metadata *knw_metadata_wait(knw_client *client, bool all_topics, int64_t min_fetched_at_ms,
                                int timeout_ms, int *err);

/* ---- Work on the network thread ------------------------------------
 * Modules (fetcher prefetch, producer sender, group heartbeats) run
 * their periodic work as tickers: fn is called on the network thread
 * after each round of I/O, and right away after knw_wakeup(); it returns
 * the number of ms until it next needs to run (-1: only when woken).
 * knw_send() may be called from a ticker or a knw_cb (it must not
 * deadlock there). */
typedef int knw_tick_fn(knw_client *client, int64_t now_ms, void *opaque);
/* Returns a ticker id >= 0, or a negative error. */
int knw_ticker_add(knw_client *client, knw_tick_fn *fn, void *opaque);
/* After this returns, fn is not running and will not run again. */
void knw_ticker_remove(knw_client *client, int ticker_id);
/* Wakes the network thread (any thread, async-signal-safe is not required). */
void knw_wakeup(knw_client *client);

/* Requests sent to node_id and not yet answered (network thread or any
 * thread; approximate when read off the network thread). */
int knw_inflight(knw_client *client, int32_t node_id);
/* Any thread: the finalized max version level of a cluster feature
 * (KIP-584, e.g. "transaction.version") in the newest feature set a
 * broker reported in its ApiVersions answer (v3+; Java's ApiVersions
 * keeps the one with the highest epoch the same way): 0 when that set
 * lacks the feature, -1 when no broker has reported a set yet. *epoch
 * (optional) gets the set's epoch (-1 none). Learnt when connections
 * are made: a change on the cluster shows on the next connection. */
int16_t knw_feature_level(knw_client *client, const char *name, int64_t *epoch);
/* True if a connection to node_id is up and past its handshakes. */
bool knw_node_ready(knw_client *client, int32_t node_id);

/* Forces one broker connection closed (tests, and modules that detect a
 * wedged connection); pending requests on it fail with _TRANSPORT. */
void knw_disconnect(knw_client *client, int32_t node_id);

/* Routes this client's log records to fn (called on the network thread
 * or the thread that logs; it must only queue the record). NULL restores
 * the stderr default. Declared in core/log.h: kn_log_fn. */
typedef void kn_log_fn(int level, const char *msg, void *opaque);
void knw_set_log_handler(knw_client *client, kn_log_fn *fn, void *opaque);

/* The client's fatal error, or 0: an authentication failure
 * (KN_ERR__AUTHENTICATION) ends the client as in Java: from then on
 * every request fails with it at once and no broker is contacted
 * again. errstr (optional) gets the reason (the broker's message).
 * Any thread. */
int knw_client_fatal(knw_client *client, char *errstr, size_t errstr_size);

/* Application thread, from the blocking calls' wait loops: runs the
 * OAUTHBEARER token callback when a connection waits for a token or a
 * refresh is due (oauth_store.h), then wakes the network thread. Call
 * it holding no client lock. A failing callback makes the client fail
 * with KN_ERR__AUTHENTICATION. Cheap when there is nothing to do. */
void knw_client_app_service(knw_client *client);
/* The longest a wait loop may sleep before calling
 * knw_client_app_service again: until deadline, or 100 ms while the
 * client has a token callback. */
int64_t knw_client_app_wait_until(knw_client *client, int64_t now_ms, int64_t deadline_ms);

/* Monotonic clock in ms / us used throughout the library. */
int64_t knw_now_ms(void);
int64_t knw_now_us(void);

/* Observable counters (for metrics and tests); a consistent copy. */
typedef struct knw_stats {
    int64_t connects;          /* successful TCP connects */
    int64_t connect_failures;
    int64_t disconnects;
    int64_t requests_sent;
    int64_t responses_received;
    int64_t request_timeouts;
    int64_t metadata_refreshes;
    int64_t protocol_errors;
    int64_t rebootstraps;
    int64_t bytes_sent;
    int64_t bytes_received;
    int64_t reauthentications; /* completed SASL re-authentications (KIP-368) */
} knw_stats;
void knw_get_stats(knw_client *client, knw_stats *out);
/* Any thread: the mean and largest throttle_time_ms (quota, KIP-219) of
 * the api_key responses so far, 0 if none (throttle.c). */
void knw_throttle_stats(knw_client *client, int16_t api_key, int64_t *avg_ms, int64_t *max_ms);

/* The client's metrics registry (metrics/metrics.h): the network
 * metrics are recorded by this layer, the modules add theirs. Valid
 * until knw_client_destroy; NULL for a NULL client. */
struct kn_metrics *knw_client_metrics(knw_client *client);

/* Any thread: the latest connection failure that waiting will not cure
 * (KN_ERR__SSL: certificate, protocol mismatch), while no broker is
 * ready; 0 otherwise. Lets a call that waits for metadata (a producer's
 * first send to a topic) fail with the reason instead of timing out. */
int knw_connect_error(knw_client *client, char *errstr, size_t errstr_size);

#endif

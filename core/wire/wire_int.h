/*
 * wire_int.h: the wire layer's private structures, shared by its .c
 * files (client.c, conn.c, request.c, metadata.c, settings.c).
 *
 * Ownership and threads: the knw_client owns every knw_conn and every
 * queued knw_req. Only the network thread reads or writes connection
 * state, request lists (except the submit queue) and in-flight tables.
 * client->lock guards: the submit queue, the stopping flag, the
 * current metadata snapshot pointer, the registered topic set, refresh
 * requests, the conns array itself (other threads look up negotiated
 * versions through it) and the tickers. Callbacks never run with
 * client->lock held.
 */
#ifndef KNW_WIRE_INT_H
#define KNW_WIRE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "log.h"
#include "metrics/metrics.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "wire/backoff.h"
#include "wire/dns.h"
#include "wire/frame.h"
#include "wire/inflight.h"
#include "wire/loop.h"
#include "wire/resolver.h"
#include "wire/sasl/sasl.h"
#include "wire/transport.h"
#include "wire/wire.h"

/* A connection's SASL exchange (conn_sasl.h). */
typedef struct knw_sasl_session knw_sasl_session;

/* ---- settings (settings.c) ---- */
typedef struct knw_settings {
    knw_hostport *bootstrap; /* owned */
    int bootstrap_count;
    char *client_id;    /* owned */
    bool dns_canonical; /* resolve_canonical_bootstrap_servers_only */
    int request_timeout_ms;
    int setup_timeout_ms, setup_timeout_max_ms;
    int reconnect_backoff_ms, reconnect_backoff_max_ms;
    int retry_backoff_ms, retry_backoff_max_ms;
    int64_t metadata_max_age_ms;
    int64_t metrics_window_ms; /* metrics.sample.window.ms (metrics/wstat.h) */
    int metrics_num_samples;   /* metrics.num.samples */
    bool rebootstrap; /* metadata.recovery.strategy=rebootstrap */
    int64_t rebootstrap_trigger_ms;
    int max_in_flight;
    int64_t connections_max_idle_ms;
    int send_buffer_bytes, receive_buffer_bytes;
    bool keepalive;
    bool allow_auto_topic_creation;
    size_t max_response_bytes; /* cap on one response frame */
    char kind[16];             /* "producer", "consumer", "admin" */
    kn_log_fn *log_fn;         /* kn_conf_set_log_cb; NULL: stderr */
    void *log_opaque;
    int log_level; /* -1: the process default */
    knw_sasl_conf *sasl; /* owned; NULL unless security.protocol is SASL_* */
    /* security.protocol: the transport (TLS for SSL and SASL_SSL). */
    bool tls;
    void *tls_ctx;        /* SSL_CTX (tls_ctx.h), one reference owned */
    bool tls_verify_host; /* ssl.endpoint.identification.algorithm=https */
    knw_resolve_fn *resolve_fn; /* NULL: getaddrinfo (tests inject one) */
    void *resolve_opaque;
} knw_settings;

/* Defaults as Java's for kind (bootstrap empty). */
void knw_settings_defaults(knw_settings *s, const char *kind);
/* Reads conf into s (s is overwritten; free with knw_settings_free).
 * Returns 0 or KN_ERR__CONFIG / _NOMEM with errstr. */
int knw_settings_from_conf(knw_settings *s, const kn_conf *conf, const char *kind, char *errstr,
                           size_t errstr_size);
/* Deep copy (for tests building settings by hand). */
int knw_settings_copy(knw_settings *dst, const knw_settings *src);
void knw_settings_free(knw_settings *s);
/* Sets s->bootstrap from a "h:p,h:p" list. */
int knw_settings_set_bootstrap(knw_settings *s, const char *list, char *errstr, size_t errstr_size);

/* Creates a client from ready settings (knw_client_new parses conf and
 * calls this; unit tests call it directly with short timeouts). s is
 * copied. */
knw_client *knw_client_new_settings(const knw_settings *s, char *errstr, size_t errstr_size);

/* ---- requests (request.c) ---- */
typedef struct knw_conn knw_conn;
typedef struct knw_req knw_req;

struct knw_req {
    knw_req *next, *prev;
    int32_t node_id; /* as given to knw_send */
    int16_t api_key, min_version, max_version, version;
    const kp_api *api;
    const void *body; /* caller's kp_<Api>Request */
    int64_t enqueued_us, sent_us;
    int64_t deadline_ms;
    knw_cb *cb;
    void *opaque;
    knw_conn *conn;   /* set once sent or queued on a connection */
    bool handshake;   /* the connection's own ApiVersions request */
    bool no_response; /* Produce with acks=0: done once written */
    bool timed_out;   /* in flight past its deadline: fails _TIMED_OUT */
    knw_resp *resp;   /* preallocated response (owned until completion) */
    int last_err;     /* why it has not been sent yet (connect error) */
    char last_errstr[200];
};

typedef struct knw_reqq {
    knw_req *head, *tail;
    int count;
} knw_reqq;

void knw_reqq_push(knw_reqq *q, knw_req *r);
void knw_reqq_unlink(knw_reqq *q, knw_req *r);
knw_req *knw_reqq_pop(knw_reqq *q);

/* A new request (min/max version unbounded); owned by the caller until
 * queued. NULL on allocation failure. */
knw_req *knw_req_new(knw_client *c, int32_t node_id, const kp_api *api, const void *body, int timeout_ms,
                     knw_cb *cb, void *opaque);
/* Frees a request that was never completed (no callback). */
void knw_req_free(knw_req *r);
/* Completes r: builds an error response (err != 0) or hands resp over,
 * runs the callback, frees r. */
void knw_req_fail(knw_client *c, knw_req *r, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void knw_req_done(knw_client *c, knw_req *r, knw_resp *resp);
/* Encodes r at its negotiated version on conn and queues the bytes.
 * Always consumes r: a request that cannot be sent (no common version,
 * encode error) is completed with that error. Returns 0. */
int knw_req_send(knw_client *c, knw_conn *conn, knw_req *r, int64_t now_ms);
/* Decodes one response frame for r (taken from the in-flight table).
 * Takes ownership of frame. On a decode failure returns
 * KN_ERR__PROTOCOL with errstr (r not completed); else completes r. */
int knw_req_handle_response(knw_client *c, knw_conn *conn, knw_req *r, uint8_t *frame, size_t len,
                            char *errstr, size_t errstr_size);

/* ---- quota throttling (throttle.c) ---- */
/* A decoded response: records its throttle_time_ms and, from the
 * version where the broker answers before throttling (KIP-219), mutes
 * conn until now + throttle (network thread). */
void knw_throttle_note(knw_client *c, knw_conn *conn, const knw_req *r, const void *body, int64_t now_ms);

/* ---- network metrics (net_metrics.c) ---- */
/* Creates c->metrics and the client-wide sensors: 0 or KN_ERR__NOMEM. */
int knw_net_metrics_init(knw_client *c);
/* Network thread: a request of len bytes queued on conn; a response of
 * len bytes after latency_us; a connection made or closed. */
void knw_net_sent(knw_conn *conn, size_t len, int64_t now_ms);
void knw_net_received(knw_conn *conn, size_t len, int64_t latency_us, int64_t now_ms);
void knw_net_connection(knw_client *c, bool created, int64_t now_ms);

/* ---- connections (conn.c) ---- */
typedef enum knw_conn_state {
    KNW_CS_DOWN = 0,    /* not connected, may connect at once */
    KNW_CS_RESOLVING,   /* waiting for the resolver thread's answer */
    KNW_CS_CONNECTING,  /* TCP connect in progress */
    KNW_CS_APIVERSIONS, /* connected, ApiVersions handshake in flight */
    KNW_CS_SASL,        /* SASL handshake/authentication in flight (sasl/) */
    KNW_CS_READY,
    KNW_CS_BACKOFF, /* closed; may reconnect at backoff_until_ms */
} knw_conn_state;

struct knw_conn {
    knw_client *client;
    int32_t node_id; /* broker id, or -1-index for bootstrap entries */
    bool bootstrap;
    bool retired; /* not a routing candidate; closed when idle */
    char *host;   /* owned */
    int port;
    knw_conn_state state;
    knw_transport tp;
    knw_addrs addrs; /* resolved at each connect attempt */
    uint64_t resolve_id; /* the lookup a RESOLVING connection waits for */
    int addr_idx;
    int64_t state_deadline_ms; /* connect/setup timeout or backoff end */
    int connect_failures;      /* consecutive, reset on READY */
    knw_rx rx;
    knw_txq tx;
    knw_iftab inflight;
    knw_reqq pending;                                           /* queued for this node, not yet sent */
    int16_t vmin[KP_API_KEY_MAX + 1], vmax[KP_API_KEY_MAX + 1]; /* -1 unsupported */
    int16_t hs_version;                                         /* ApiVersions version being tried */
    int64_t last_active_ms;
    int64_t ready_since_ms;
    /* KIP-219 (throttle.c): nothing new is sent before this (the broker
     * asked the client to wait out a quota); kept across reconnects. */
    int64_t throttle_until_ms;
    char last_err[200]; /* last connect/disconnect reason */
    int last_err_code;
    int poll_idx;                      /* index in the loop's pollfd set, or -1 */
    kp_ApiVersionsRequest hs_body;     /* body of the handshake request */
    _Atomic bool disconnect_requested; /* knw_disconnect */
    _Atomic int inflight_n;            /* mirror of inflight.count for other threads */
    _Atomic bool ready;
    knw_sasl_session *sasl; /* owned; NULL until SASL first runs */
    /* net_metrics.c: this broker's sensors (node-id tag), made on the
     * network thread at first use; they live in the client's registry. */
    knm_sensor *m_sent, *m_recv, *m_lat;
};

knw_conn *knw_conn_new(knw_client *c, int32_t node_id, bool bootstrap, const char *host, int port);
/* Fails everything on conn with err and frees it. */
void knw_conn_free(knw_conn *conn, int err, const char *why);
/* Starts a connection attempt (resolve + connect); a name the resolver
 * cache does not hold leaves the connection RESOLVING. */
void knw_conn_connect(knw_conn *conn, int64_t now_ms);
/* The resolver's answer for a RESOLVING conn: connects to *addrs
 * (taken over) or fails the attempt with err. */
void knw_conn_resolved(knw_conn *conn, int err, const char *errstr, knw_addrs *addrs, int64_t now_ms);
/* Closes (if open), fails in-flight requests with err (the first one,
 * whose response was being read, with first_err if non-zero) and goes
 * to BACKOFF. */
void knw_conn_close(knw_conn *conn, int first_err, int err, const char *why, int64_t now_ms);
/* Handles poll events for conn. */
void knw_conn_io(knw_conn *conn, short revents, int64_t now_ms);
/* Timers, sending queued requests, flushing; returns the next deadline
 * (ms, INT64_MAX for none). */
int64_t knw_conn_service(knw_conn *conn, int64_t now_ms);
/* poll(2) events wanted (0: not in the set). */
short knw_conn_events(knw_conn *conn);
/* SASL done (or not needed): the connection is READY. */
void knw_conn_ready(knw_conn *conn, int64_t now_ms);
/* An authentication failure: the client becomes fatal with err and why
 * (knw_client_set_fatal), the connection is closed. */
void knw_conn_auth_failed(knw_conn *conn, int err, const char *why, int64_t now_ms);
/* "broker 1 (127.0.0.1:9092)" / "broker -1 (host:port, bootstrap)". */
const char *knw_conn_name(const knw_conn *conn, char *buf, size_t size);
static inline bool knw_conn_has_slot(const knw_conn *conn) {
    return conn->state == KNW_CS_READY && !knw_iftab_full(&conn->inflight);
}

/* ---- metadata (metadata.c) ---- */
typedef struct knw_md_state {
    /* guarded by client->lock */
    knw_metadata *current;
    char **topics; /* registered topics (owned) */
    int topic_count, topic_cap;
    bool want;     /* a refresh was asked for */
    bool want_all; /* ... listing every topic */
    uint64_t topic_gen; /* bumped whenever a topic is registered */
    /* network thread only */
    bool in_flight;
    int failures; /* consecutive failed refreshes */
    int64_t next_allowed_ms;
    int64_t due_since_ms; /* a refresh has been due since (0: not due) */
    int64_t last_success_ms;
} knw_md_state;

/* Network thread: sends a Metadata request when due; returns the next
 * deadline. */
int64_t knw_md_tick(knw_client *c, int64_t now_ms);
/* Network thread: a broker connection dropped; refresh soon. */
void knw_md_on_disconnect(knw_client *c, knw_conn *conn);
void knw_md_destroy(knw_client *c);
/* Frees a snapshot whose refcount dropped to 0. */
void knw_md_free(knw_metadata *md);

/* ---- coordinators (coordinator.c; see coordinator.h) ---- */
typedef struct knw_coord_entry {
    int8_t key_type;
    char *key; /* owned */
    int32_t node;  /* -1 unknown */
    int64_t found_ms;
    bool inflight;
    int failures;
    int64_t retry_at_ms;
    int last_err;
    char last_errstr[200];
} knw_coord_entry;

#define KNW_COORD_MAX 64 /* keys per client (a consumer or producer uses one or two) */

typedef struct knw_coord_table {
    pthread_mutex_t lock; /* a leaf: see coordinator.h */
    pthread_cond_t cond;  /* an answer arrived */
    knw_coord_entry entries[KNW_COORD_MAX];
    int count;
    bool no_batch; /* a broker refused FindCoordinator v4+ */
    int64_t lookups, batched;
} knw_coord_table;

void knw_coord_init(knw_coord_table *t);
void knw_coord_destroy(knw_coord_table *t);
/* Network thread: node's connection dropped; forget it as a coordinator. */
void knw_coord_node_down(knw_client *c, int32_t node);

/* ---- tickers ---- */
typedef struct knw_ticker {
    knw_tick_fn *fn;
    void *opaque;
    int64_t next_ms; /* -1: only when woken */
    bool live;
} knw_ticker;

/* ---- the client (client.c) ---- */
typedef struct knw_stats_atomic {
    _Atomic int64_t connects, connect_failures, disconnects, requests_sent, responses_received,
        request_timeouts, metadata_refreshes, protocol_errors, rebootstraps, bytes_sent, bytes_received,
        reauthentications;
    /* throttle.c: throttle_time_ms of the responses, per API key (every
     * response that has the field counts, 0 included, like Java's
     * produce-throttle-time / fetch-throttle-time sensors). */
    _Atomic int64_t throttle_sum_ms[KP_API_KEY_MAX + 1], throttle_n[KP_API_KEY_MAX + 1],
        throttle_max_ms[KP_API_KEY_MAX + 1];
} knw_stats_atomic;

/* The cluster's finalized features (KIP-584), from the ApiVersions
 * answer (v3+) with the highest features epoch seen so far, as Java's
 * ApiVersions keeps them: under the client's lock. */
#define KNW_FEATURES_MAX 16
typedef struct knw_features {
    int64_t epoch; /* -1: no broker reported a feature set yet */
    int count;
    struct {
        char name[64];
        int16_t level; /* max_version_level */
    } items[KNW_FEATURES_MAX];
} knw_features;

/* Network thread: keeps resp's finalized features if their epoch is
 * newer than the ones held. */
void knw_features_update(knw_client *c, const kp_ApiVersionsResponse *resp);

struct knw_client {
    knw_settings set;
    struct knw_oauth_store *oauth; /* owned; the application's OAUTHBEARER token, or NULL */
    struct knw_krb *krb;           /* owned; GSSAPI's Kerberos login and thread, or NULL */
    struct knw_oauth_store *oidc_store;      /* owned; tokens from the token endpoint, or NULL */
    struct knw_oauth_refresher *oidc_thread; /* owned; keeps oidc_store fresh */
    kn_logger log;
    knw_loop loop;
    pthread_t thread;
    bool thread_started;

    pthread_mutex_t lock;
    pthread_cond_t cond; /* metadata arrivals, close */
    bool stopping;       /* no new work accepted */
    bool closed;         /* the network thread has finished */
    bool stopped;        /* knw_client_stop ran: no thread, no connections */
    knw_reqq submit;     /* from any thread to the network thread */

    /* tickers: the recursive tick_lock is held while they run so
     * knw_ticker_remove from another thread waits for a running tick */
    pthread_mutex_t tick_lock;
    knw_ticker *tickers;
    int ticker_count, ticker_cap;
    _Atomic bool woken; /* knw_wakeup: run tickers now */

    /* network thread (conns array also under lock for readers) */
    knw_conn **conns;
    int conn_count, conn_cap;
    knw_reqq unrouted;  /* waiting for a ready broker / metadata */
    bool use_bootstrap; /* route "any" requests through the bootstrap list */
    int rr;             /* round-robin start for connection choice */
    int64_t next_timeout_check_ms;
    knw_backoff reconnect_backoff, retry_backoff, setup_backoff;

    knw_md_state md;
    knw_resolver resolver; /* names off the network thread (resolver.h) */
    knw_coord_table coord; /* group and transaction coordinators */
    knw_stats_atomic stats;
    /* net_metrics.c: the registry (owned) and the client-wide network
     * sensors in it. */
    kn_metrics *metrics;
    knm_sensor *m_sent, *m_recv, *m_created, *m_closed;
    knw_features features; /* under lock */
    char last_connect_err[200]; /* network thread: latest connect failure */

    /* A fatal error (authentication failure): set once under lock,
     * fatal_err also read without it; every request then fails with it
     * and no connection is made again (knw_client_fatal). */
    _Atomic int fatal_err;
    char fatal_errstr[512];
    /* Under lock: the latest failure that waiting will not cure
     * (KN_ERR__SSL), reported while no broker is ready
     * (knw_connect_error). */
    int fatal_connect_err;
    char fatal_connect_errstr[256];
    bool fatal_connect_set; /* network thread's view: clear it once a broker is ready */
};

/* Network thread: makes the client fatal (first error wins), logs it,
 * wakes waiters; the loop then fails every request with it. */
void knw_client_set_fatal(knw_client *c, int err, const char *msg);

/* Network thread: finds the connection for a node id (not bootstrap). */
knw_conn *knw_client_conn_by_node(knw_client *c, int32_t node_id);
/* Network thread: adds/updates/retires node connections after a
 * metadata snapshot; re-activates bootstrap entries on rebootstrap. */
void knw_client_apply_brokers(knw_client *c, const knw_metadata *md);
void knw_client_rebootstrap(knw_client *c, const char *why);
/* Network thread: a connection failed with an error waiting will not
 * cure (KN_ERR__SSL): unless some broker is ready, the requests for
 * "any" broker fail with it now, and knw_connect_error reports it. */
void knw_client_connect_fatal(knw_client *c, int err, const char *why);
/* Network thread: queues an internal request (metadata refresh). */
void knw_client_enqueue(knw_client *c, knw_req *r);
/* True when the calling thread is the client's network thread. */
bool knw_on_network_thread(knw_client *c);
/* Makes the loop re-check request deadlines by at_ms. */
static inline void knw_client_deadline_hint(knw_client *c, int64_t at_ms) {
    if (at_ms < c->next_timeout_check_ms)
        c->next_timeout_check_ms = at_ms;
}

#define KNW_STAT_ADD(c, field, n) atomic_fetch_add(&(c)->stats.field, (int64_t)(n))

#endif

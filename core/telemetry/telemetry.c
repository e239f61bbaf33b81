/*
 * telemetry.c: the KIP-714 state machine (see telemetry.h): the ticker
 * that sends GetTelemetrySubscriptions and PushTelemetry to one broker
 * (the least-loaded one at first, then the one that answered, until it
 * fails), the answers' handling (Java's ClientTelemetryReporter error
 * table), the client instance id waiters and the terminating push.
 */
#include "telemetry/telemetry.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codec/codec.h"
#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_get_telemetry_subscriptions.h"
#include "proto/generated/kp_push_telemetry.h"
#include "proto/generated/kp_apis.h"
#include "telemetry/app_metric.h"
#include "telemetry/telemetry_int.h"

#define API_GET_SUBSCRIPTIONS KP_API_GET_TELEMETRY_SUBSCRIPTIONS
#define API_PUSH KP_API_PUSH_TELEMETRY
/* Java's ClientTelemetryReporter.DEFAULT_PUSH_INTERVAL_MS. */
#define DEFAULT_PUSH_INTERVAL_MS (5 * 60 * 1000)

/* One request in flight: owns the request struct (knw_send reads it
 * until the callback) and the payload. */
typedef struct knt_req {
    knt *t;
    bool terminating;
    kp_GetTelemetrySubscriptionsRequest get;
    kp_PushTelemetryRequest push;
    uint8_t *payload;
} knt_req;

void knt_uuid_str(const kn_uuid *id, char out[23]) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    /* 128 bits as 22 six-bit digits, most significant first; the last
     * digit holds the final 2 bits followed by 4 zero bits. */
    size_t o = 0;
    for (size_t bit = 0; bit < 132; bit += 6) {
        unsigned v = 0;
        for (size_t k = 0; k < 6; k++) {
            size_t b = bit + k;
            unsigned on = b < 128 ? (id->b[b / 8] >> (7 - b % 8)) & 1u : 0u;
            v = (v << 1) | on;
        }
        out[o++] = b64[v];
    }
    out[o] = '\0';
}

static void sub_free(knt_sub *s) {
    for (int i = 0; i < s->n_prefixes; i++)
        kn_free(s->prefixes[i]);
    kn_free(s->prefixes);
    memset(s, 0, sizeof *s);
}

static uint64_t unix_ns_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int add_resource(knt *t, const char *key, const char *value) {
    if (!value || !*value)
        return 0;
    char *v = kn_strdup(value);
    if (!v)
        return KN_ERR__NOMEM;
    t->resource[t->n_resource].key = key;
    t->resource[t->n_resource].value = v;
    t->n_resource++;
    return 0;
}

static int tick(knw_client *wire, int64_t now_ms, void *opaque);

int knt_new(knw_client *wire, const kn_conf *conf, const char *kind, knt_source_fn *source,
            void *client, knt **out) {
    *out = NULL;
    if (!kn_conf_get_bool(conf, "enable.metrics.push"))
        return 0;
    knt *t = kn_calloc(1, sizeof *t);
    if (!t)
        return KN_ERR__NOMEM;
    t->wire = wire;
    t->source = source;
    t->client = client;
    t->ticker = -1;
    t->enabled = true;
    t->state = KNT_SUB_NEEDED;
    t->node = KNW_NODE_ANY;
    t->start_ns = unix_ns_now();
    t->request_timeout_ms = kn_conf_get_int(conf, "request.timeout.ms");
    knw_backoff_init(&t->backoff, kn_conf_get_int(conf, "retry.backoff.ms"),
                     kn_conf_get_int(conf, "retry.backoff.max.ms"), 0.2);
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cond, &ca);
    pthread_condattr_destroy(&ca);
    /* Resource attributes as Java's ClientTelemetryProvider sets them. */
    int err = 0;
    if (strcmp(kind, "producer") == 0) {
        err = add_resource(t, "transactional_id", kn_conf_get_str(conf, "transactional.id"));
    } else if (strcmp(kind, "consumer") == 0) {
        err = add_resource(t, "group_id", kn_conf_get_str(conf, "group.id"));
        if (!err)
            err = add_resource(t, "group_instance_id", kn_conf_get_str(conf, "group.instance.id"));
        if (!err)
            err = add_resource(t, "client_rack", kn_conf_get_str(conf, "client.rack"));
    }
    if (!err) {
        t->ticker = knw_ticker_add(wire, tick, t);
        if (t->ticker < 0)
            err = KN_ERR__NOMEM;
    }
    if (err) {
        knt_destroy(t);
        return err;
    }
    knw_wakeup(wire); /* the first subscription request goes out at once */
    *out = t;
    return 0;
}

/* ---- answers (network thread) ----------------------------------------- */

/* Java's ClientTelemetryUtils.maybeFetchErrorIntervalMs: the wait
 * before asking for a subscription again, or -1 to stop for good. */
static int64_t error_interval(int16_t code, int32_t interval_ms) {
    switch (code) {
    case KN_ERR_UNKNOWN_SUBSCRIPTION_ID:
    case KN_ERR_UNSUPPORTED_COMPRESSION_TYPE:
        return 0;
    case KN_ERR_TELEMETRY_TOO_LARGE:
    case KN_ERR_THROTTLING_QUOTA_EXCEEDED:
        return interval_ms > 0 ? interval_ms : DEFAULT_PUSH_INTERVAL_MS;
    default: /* INVALID_REQUEST, INVALID_RECORD, UNSUPPORTED_VERSION, unknown */
        return -1;
    }
}

/* Under lock: telemetry stops for good (waiters are told). */
static void disable_locked(knt *t, int err, const char *why) {
    if (!t->enabled)
        return;
    t->enabled = false;
    t->disabled_err = err;
    kn_log(knw_client_logger(t->wire), err == KN_ERR__UNSUPPORTED_VERSION ? KN_LOG_DEBUG : KN_LOG_WARN,
           "client telemetry disabled: %s", why);
    pthread_cond_broadcast(&t->cond);
}

/* Under lock: a request failed on the way (not an error code). */
static void request_failed_locked(knt *t, const knw_resp *resp, int64_t now_ms) {
    if (resp->err == KN_ERR__UNSUPPORTED_VERSION) {
        /* The broker lacks the API (no telemetry plugin there): Java
         * stops quietly too. */
        disable_locked(t, KN_ERR__UNSUPPORTED_VERSION, "the broker does not support client telemetry");
        return;
    }
    /* Connection lost, timeout: another broker may do; back off. */
    t->node = KNW_NODE_ANY;
    t->next_at_ms = now_ms + knw_backoff_ms(&t->backoff, t->failures++, -1);
    t->state = KNT_SUB_NEEDED;
}

static int install_sub(knt *t, const kp_GetTelemetrySubscriptionsResponse *r, int64_t now_ms) {
    knt_sub s;
    memset(&s, 0, sizeof s);
    s.valid = true;
    s.instance_id = r->client_instance_id;
    s.id = r->subscription_id;
    s.push_interval_ms = r->push_interval_ms > 0 ? r->push_interval_ms : DEFAULT_PUSH_INTERVAL_MS;
    s.max_bytes = r->telemetry_max_bytes;
    s.delta = r->delta_temporality;
    /* The first accepted codec we have, in the broker's order of
     * preference; none if none. */
    for (int32_t i = 0; i < r->accepted_compression_types.count; i++) {
        int8_t c = r->accepted_compression_types.items[i];
        if (c > 0 && kn_codec_get(c)) {
            s.compression = c;
            break;
        }
    }
    int n = r->requested_metrics.count > 0 ? r->requested_metrics.count : 0;
    if (n == 1 && r->requested_metrics.items[0].len == 1 && r->requested_metrics.items[0].ptr[0] == '*')
        s.all = true;
    if (!s.all && n > 0) {
        s.prefixes = kn_calloc((size_t)n, sizeof *s.prefixes);
        if (!s.prefixes)
            return KN_ERR__NOMEM;
        for (int i = 0; i < n; i++) {
            kn_str p = r->requested_metrics.items[i];
            s.prefixes[i] = kn_strndup(p.ptr ? p.ptr : "", p.len > 0 ? (size_t)p.len : 0);
            if (!s.prefixes[i]) {
                s.n_prefixes = i;
                sub_free(&s);
                return KN_ERR__NOMEM;
            }
            if (p.len <= 0)
                s.all = true; /* an empty prefix matches every name */
        }
        s.n_prefixes = n;
    }
    bool first = !t->sub.valid;
    if (t->sub.valid && t->sub.delta != s.delta)
        knt_ledger_reset(t); /* Java resets its last-value ledger too */
    sub_free(&t->sub);
    t->sub = s;
    bool pushes = s.all || s.n_prefixes > 0;
    t->state = pushes ? KNT_PUSH_NEEDED : KNT_SUB_NEEDED;
    /* The first push waits a random 0.5..1.5 intervals (KIP-714), so
     * clients started together do not push together. */
    int64_t wait = s.push_interval_ms;
    if (first)
        wait = (int64_t)((0.5 + knw_rand01()) * (double)s.push_interval_ms + 0.5);
    t->next_at_ms = now_ms + wait;
    pthread_cond_broadcast(&t->cond);
    return 0;
}

static void on_get(knw_client *wire, knw_resp *resp, void *opaque) {
    (void)wire;
    knt_req *rq = opaque;
    knt *t = rq->t;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&t->lock);
    if (t->state == KNT_SUB_IN_PROGRESS) {
        t->state = KNT_SUB_NEEDED;
        if (resp->err) {
            if (resp->err != KN_ERR__CLOSED)
                request_failed_locked(t, resp, now);
        } else {
            const kp_GetTelemetrySubscriptionsResponse *r = resp->body;
            t->failures = 0;
            t->node = resp->node_id;
            if (r->error_code) {
                int64_t wait = error_interval(r->error_code, t->sub.valid ? t->sub.push_interval_ms : -1);
                if (wait < 0)
                    disable_locked(t, KN_ERR__FAIL, kn_err_name(r->error_code));
                t->next_at_ms = now + (wait < 0 ? 0 : wait);
            } else if (kn_uuid_is_zero(&r->client_instance_id)) {
                disable_locked(t, KN_ERR__PROTOCOL, "the broker assigned no client instance id");
            } else if (install_sub(t, r, now)) {
                t->next_at_ms = now + knw_backoff_ms(&t->backoff, t->failures++, -1);
            }
        }
    }
    pthread_mutex_unlock(&t->lock);
    bool wake = resp->err != KN_ERR__CLOSED;
    knw_resp_free(resp);
    kn_free(rq);
    if (wake) /* the ticker waits for a wake while a request is out */
        knw_wakeup(t->wire);
}

static void on_push(knw_client *wire, knw_resp *resp, void *opaque) {
    (void)wire;
    knt_req *rq = opaque;
    knt *t = rq->t;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&t->lock);
    if (rq->terminating) {
        t->state = KNT_TERMINATED;
        t->term_done = true;
        if (resp->err == 0 && ((kp_PushTelemetryResponse *)resp->body)->error_code)
            kn_log(knw_client_logger(t->wire), KN_LOG_DEBUG, "terminating telemetry push refused: %s",
                   kn_err_name(((kp_PushTelemetryResponse *)resp->body)->error_code));
        pthread_cond_broadcast(&t->cond);
    } else if (t->state == KNT_PUSH_IN_PROGRESS) {
        /* (A push answered after close began is ignored, as in Java.) */
        if (resp->err) {
            if (resp->err != KN_ERR__CLOSED)
                request_failed_locked(t, resp, now);
        } else {
            const kp_PushTelemetryResponse *r = resp->body;
            t->failures = 0;
            if (r->error_code) {
                /* UNKNOWN_SUBSCRIPTION_ID (the subscriptions changed):
                 * ask again at once; throttled or too large: after an
                 * interval; anything else: stop. */
                int64_t wait = error_interval(r->error_code, t->sub.push_interval_ms);
                t->state = KNT_SUB_NEEDED;
                if (wait < 0)
                    disable_locked(t, KN_ERR__FAIL, kn_err_name(r->error_code));
                t->next_at_ms = now + (wait < 0 ? 0 : wait);
            } else {
                t->state = KNT_PUSH_NEEDED;
                t->next_at_ms = now + t->sub.push_interval_ms;
            }
        }
    }
    pthread_mutex_unlock(&t->lock);
    bool wake = resp->err != KN_ERR__CLOSED;
    knw_resp_free(resp);
    kn_free(rq->payload);
    kn_free(rq);
    if (wake) /* the ticker waits for a wake while a request is out */
        knw_wakeup(t->wire);
}

/* ---- requests (network thread) ---------------------------------------- */

static void send_get(knt *t, int32_t node, kn_uuid id) {
    knt_req *rq = kn_calloc(1, sizeof *rq);
    if (!rq) {
        pthread_mutex_lock(&t->lock);
        t->state = KNT_SUB_NEEDED;
        t->next_at_ms = knw_now_ms() + knw_backoff_ms(&t->backoff, t->failures++, -1);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    rq->t = t;
    kp_GetTelemetrySubscriptionsRequest_init(&rq->get);
    rq->get.client_instance_id = id; /* zero at first: the broker assigns one */
    knw_send(t->wire, node, API_GET_SUBSCRIPTIONS, -1, -1, &rq->get, -1, on_get, rq);
}

/* Builds and sends a push of the current metrics. sub is the network
 * thread's own view of the subscription (only it replaces t->sub). */
static void send_push(knt *t, int32_t node, bool terminating) {
    const knt_sub *sub = &t->sub;
    knt_req *rq = kn_calloc(1, sizeof *rq);
    size_t len = 0;
    int8_t ctype = 0;
    int err = rq ? knt_collect(t, sub, &rq->payload, &len, &ctype) : KN_ERR__NOMEM;
    if (err) {
        kn_free(rq);
        pthread_mutex_lock(&t->lock);
        if (terminating) {
            t->term_done = true;
            t->state = KNT_TERMINATED;
            pthread_cond_broadcast(&t->cond);
        } else {
            /* Java: try again next interval. */
            t->state = KNT_PUSH_NEEDED;
            t->next_at_ms = knw_now_ms() + sub->push_interval_ms;
        }
        pthread_mutex_unlock(&t->lock);
        return;
    }
    rq->t = t;
    rq->terminating = terminating;
    kp_PushTelemetryRequest_init(&rq->push);
    rq->push.client_instance_id = sub->instance_id;
    rq->push.subscription_id = sub->id;
    rq->push.terminating = terminating;
    rq->push.compression_type = ctype;
    rq->push.metrics.ptr = rq->payload;
    rq->push.metrics.len = (int32_t)len;
    knw_send(t->wire, node, API_PUSH, -1, -1, &rq->push, -1, on_push, rq);
}

static int tick(knw_client *wire, int64_t now_ms, void *opaque) {
    (void)wire;
    knt *t = opaque;
    pthread_mutex_lock(&t->lock);
    if (!t->enabled) {
        if (t->state == KNT_TERM_NEEDED) { /* nothing will be sent: release close */
            t->term_done = true;
            pthread_cond_broadcast(&t->cond);
        }
        pthread_mutex_unlock(&t->lock);
        return -1;
    }
    enum knt_state st = t->state;
    int32_t node = t->node;
    int64_t wait = t->next_at_ms - now_ms;
    if (st == KNT_TERM_NEEDED) {
        t->state = KNT_TERM_IN_PROGRESS;
        pthread_mutex_unlock(&t->lock);
        send_push(t, node, true);
        return -1;
    }
    if ((st != KNT_SUB_NEEDED && st != KNT_PUSH_NEEDED) || t->closed) {
        pthread_mutex_unlock(&t->lock);
        return -1; /* a request is in flight: its answer moves on */
    }
    if (wait > 0) {
        pthread_mutex_unlock(&t->lock);
        return wait > INT32_MAX ? INT32_MAX : (int)wait;
    }
    kn_uuid id = t->sub.instance_id;
    t->state = st == KNT_SUB_NEEDED ? KNT_SUB_IN_PROGRESS : KNT_PUSH_IN_PROGRESS;
    pthread_mutex_unlock(&t->lock);
    if (st == KNT_SUB_NEEDED)
        send_get(t, node, id);
    else
        send_push(t, node, false);
    return -1;
}

/* ---- application thread ------------------------------------------------ */

static void abs_deadline(struct timespec *ts, int64_t deadline_ms) {
    ts->tv_sec = deadline_ms / 1000;
    ts->tv_nsec = (deadline_ms % 1000) * 1000000;
}

void knt_close(knt *t, int64_t deadline_ms) {
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (t->closed) {
        pthread_mutex_unlock(&t->lock);
        return;
    }
    t->closed = true;
    /* Java sends the terminating push only with a subscription that
     * pushes (a push is due or in flight). */
    bool push = t->enabled && (t->state == KNT_PUSH_NEEDED || t->state == KNT_PUSH_IN_PROGRESS);
    if (push) {
        t->state = KNT_TERM_NEEDED;
        t->term_done = false;
    } else {
        t->state = KNT_TERMINATED;
    }
    pthread_cond_broadcast(&t->cond); /* instance id waiters */
    pthread_mutex_unlock(&t->lock);
    if (push) {
        knw_wakeup(t->wire);
        struct timespec ts;
        abs_deadline(&ts, deadline_ms);
        pthread_mutex_lock(&t->lock);
        while (!t->term_done && knw_now_ms() < deadline_ms)
            pthread_cond_timedwait(&t->cond, &t->lock, &ts);
        pthread_mutex_unlock(&t->lock);
    }
    knw_ticker_remove(t->wire, t->ticker);
    t->ticker = -1;
}

void knt_destroy(knt *t) {
    if (!t)
        return;
    /* knt_close removed the ticker (the network client may be gone by
     * now); knt_new's own failure path has none either. */
    for (size_t i = 0; i < t->n_app; i++)
        knt_app_metric_release(t->app[i]);
    kn_free(t->app);
    for (size_t i = 0; i < t->n_resource; i++)
        kn_free((char *)t->resource[i].value);
    sub_free(&t->sub);
    knt_ledger_reset(t);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    kn_free(t);
}

int knt_instance_id(knt *t, int timeout_ms, char *out, size_t out_size, char *errstr,
                    size_t errstr_size) {
    if (!out || out_size < 23) {
        kn_errstr_set(errstr, errstr_size, "client_instance_id needs a buffer of %d bytes", 23);
        return KN_ERR__INVALID_ARG;
    }
    out[0] = '\0';
    if (timeout_ms < 0) {
        kn_errstr_set(errstr, errstr_size, "the timeout cannot be negative");
        return KN_ERR__INVALID_ARG;
    }
    if (!t) {
        kn_errstr_set(errstr, errstr_size,
                      "telemetry is not enabled: set enable.metrics.push to true");
        return KN_ERR__STATE;
    }
    int64_t deadline = knw_now_ms() + timeout_ms;
    struct timespec ts;
    abs_deadline(&ts, deadline);
    pthread_mutex_lock(&t->lock);
    while (!t->sub.valid && t->enabled && !t->closed && knw_now_ms() < deadline)
        pthread_cond_timedwait(&t->cond, &t->lock, &ts);
    int rc = KN_OK;
    if (t->sub.valid) {
        knt_uuid_str(&t->sub.instance_id, out);
    } else if (!t->enabled) {
        rc = t->disabled_err == KN_ERR__UNSUPPORTED_VERSION ? KN_ERR__UNSUPPORTED_VERSION : KN_ERR__STATE;
        kn_errstr_set(errstr, errstr_size, "client telemetry is disabled: %s",
                      rc == KN_ERR__UNSUPPORTED_VERSION ? "the brokers do not support it (KIP-714)"
                                                        : "the broker refused it");
    } else if (t->closed) {
        rc = KN_ERR__STATE;
        kn_errstr_set(errstr, errstr_size, "the client was closed before a client instance id was assigned");
    } else {
        rc = KN_ERR__TIMED_OUT;
        kn_errstr_set(errstr, errstr_size, "no client instance id within %d ms", timeout_ms);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int knt_register(knt *t, kn_app_metric *m) {
    if (!m)
        return KN_ERR__INVALID_ARG;
    if (!t)
        return KN_OK; /* telemetry disabled: accepted, never pushed (Java) */
    int rc = KN_OK;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n_app; i++)
        if (t->app[i] == m)
            goto done;
    if (t->n_app == t->cap_app) {
        size_t cap = t->cap_app ? t->cap_app * 2 : 8;
        kn_app_metric **a = kn_realloc(t->app, cap * sizeof *a);
        if (!a) {
            rc = KN_ERR__NOMEM;
            goto done;
        }
        t->app = a;
        t->cap_app = cap;
    }
    knt_app_metric_retain(m);
    t->app[t->n_app++] = m;
done:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int knt_unregister(knt *t, kn_app_metric *m) {
    if (!m)
        return KN_ERR__INVALID_ARG;
    if (!t)
        return KN_OK;
    kn_app_metric *drop = NULL;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n_app; i++) {
        if (t->app[i] == m) {
            drop = m;
            t->app[i] = t->app[--t->n_app];
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (drop)
        knt_app_metric_release(drop);
    return KN_OK;
}

/*
 * telemetry_int.h: the state shared by telemetry.c (state machine,
 * requests) and collect.c (payload building). See telemetry.h for the
 * threads.
 */
#ifndef KNT_TELEMETRY_INT_H
#define KNT_TELEMETRY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kafka_native.h"
#include "metrics/metric_view.h"
#include "wire/backoff.h"
#include "wire/wire.h"

/* (telemetry.h's, repeated so this header does not include it: the
 * two would be a cycle for tools/deps-graph.) */
typedef struct knt knt;

/* Java's ClientTelemetryState. */
enum knt_state {
    KNT_SUB_NEEDED,
    KNT_SUB_IN_PROGRESS,
    KNT_PUSH_NEEDED,
    KNT_PUSH_IN_PROGRESS,
    KNT_TERM_NEEDED,
    KNT_TERM_IN_PROGRESS,
    KNT_TERMINATED,
};

/* The subscription the broker gave (network thread writes, under lock). */
typedef struct knt_sub {
    bool valid;
    kn_uuid instance_id;
    int32_t id;
    int32_t push_interval_ms;
    int32_t max_bytes;
    bool delta;
    bool all;         /* "*" (or an empty prefix): every metric */
    char **prefixes;  /* owned; none and !all: push nothing */
    int n_prefixes;
    int8_t compression; /* the codec chosen among the accepted ones */
} knt_sub;

/* Last value pushed of a Sum, for delta temporality (network thread). */
typedef struct knt_ledger_entry {
    char *key; /* name + attributes */
    double last;
    uint64_t last_ns;
} knt_ledger_entry;

struct knt {
    knw_client *wire;
    void (*source)(void *client, kn_metric_visit_fn visit, void *ctx);
    void *client;
    int ticker;
    kn_metric_tag resource[4]; /* owned values; keys static */
    size_t n_resource;
    uint64_t start_ns; /* unix ns at creation: start of cumulative sums */
    knw_backoff backoff;
    int64_t request_timeout_ms;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* under lock */
    enum knt_state state;
    bool enabled;      /* false after an error retrying cannot cure */
    int disabled_err;  /* why (KN_ERR__UNSUPPORTED_VERSION, ...) */
    knt_sub sub;
    int64_t next_at_ms; /* when the next request of the state is due */
    int failures;       /* consecutive request failures (backoff) */
    int32_t node;       /* the broker telemetry sticks to, KNW_NODE_ANY */
    bool closed;        /* knt_close ran */
    bool term_done;     /* the terminating push was answered (or failed) */
    kn_app_metric **app; /* registered application metrics (one ref each) */
    size_t n_app, cap_app;
    /* network thread only */
    knt_ledger_entry *ledger;
    size_t n_ledger, cap_ledger;
};

/* collect.c: the OTLP payload of one push (network thread), compressed
 * with sub->compression when that works (*ctype says what was used).
 * Returns 0 with *out (kn_free) or an error. */
int knt_collect(knt *t, const knt_sub *sub, uint8_t **out, size_t *len, int8_t *ctype);
/* collect.c: frees the ledger (and forgets the values: a temporality
 * change restarts the deltas). */
void knt_ledger_reset(knt *t);

#endif

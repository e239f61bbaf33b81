/*
 * consumer_int.h: the consumer handle (struct kn_consumer) and the
 * functions the files of core/consumer/ call across each other (prefix
 * knc_). The pieces with their own header: records.h (knc_buf,
 * kn_records), fetched.h (buffered slices), position.h (the partition
 * state machine), drain.h (decoding), session.h (fetch sessions).
 *
 * Threads: everything in kn_consumer below its lock is guarded by it
 * (consumer.c, tick.c and the network callbacks take it).
 */
#ifndef KN_CONSUMER_INT_H
#define KN_CONSUMER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/metrics_state.h"
#include "consumer/drain.h"
#include "consumer/fetched.h"
#include "consumer/position.h"
#include "consumer/records.h"
#include "consumer/session.h"
#include "consumer/window.h"
#include "fork.h"
#include "kafka_native.h"
#include "proto/record_batch.h"
#include "reader.h"
#include "telemetry/telemetry.h"
#include "wire/wire.h"

/* ---- the consumer handle (consumer.c; tick.c runs its network side) --- */

typedef struct knc_node {
    int32_t node_id;
    bool fetch_inflight;
    int32_t inflight_bytes; /* the in-flight Fetch's max_bytes (budget reservation) */
    int64_t sent_ms;        /* when the in-flight Fetch was sent */
    bool overdue_warned;    /* the in-flight Fetch was reported as overdue */
    int64_t backoff_until_ms;
    knc_session session;
    int64_t window_listed; /* this tick: backlog bytes listed for it (window.h) */
} knc_node;

/* The consumer was created in another process (fork.h): the calls that
 * would take its locks or wait on its threads return `ret` instead. */
#define KNC_FORK_GUARD(c, ret)                        \
    do {                                              \
        if ((c) && kn_fork_changed(&(c)->fork))       \
            return ret;                               \
    } while (0)

/* The member identity the group publishes (group/: kng_publish, at
 * each change of state, member id or generation) and offsets.c reads:
 * the commit FIFO and OffsetFetch see only this, never the group's own
 * struct. Guarded by c->lock; the strings are borrowed (from
 * c->group_id and the group) and stay valid until the next publish. */
typedef struct knc_member {
    const char *group_id;    /* group.id (NULL without one): set once at creation, read without the lock */
    const char *member_id;   /* "" when not a member of a generation */
    const char *instance_id; /* group.instance.id while a member, else NULL */
    int32_t epoch;           /* classic generation / KIP-848 member epoch; -1 when not a member */
    bool subscribed;         /* the group runs (not IDLE): it needs the coordinator */
    bool identity_at_send;   /* KIP-848: a commit takes the identity when sent, not when queued */
} knc_member;

struct kn_consumer {
    kn_fork_stamp fork; /* the creating process (fork.h): another one may not use it */
    knw_client *client;
    int ticker_id;
    knt *telemetry; /* KIP-714 push; NULL with enable.metrics.push=false;
                     * its own lock (never taken under c->lock) */
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* signalled when data, positions or errors change */
    knc_part **parts;     /* the assignment, sorted by (topic, partition) */
    size_t part_count;
    uint64_t next_part_id;
    size_t drain_next; /* rotation: where the next poll starts draining */
    size_t fetch_next; /* rotation: which partition leads the next Fetch */
    knc_node *nodes;
    size_t node_count, node_cap;
    bool wakeup;
    bool closed;
    /* settings, read once */
    int max_poll_records;
    int fetch_max_wait_ms;
    int fetch_min_bytes;
    int fetch_max_bytes;
    int max_partition_fetch_bytes;
    /* The fetch-buffer budget (tick.c): raw response bytes held by
     * buffered slices plus the max_bytes of Fetches in flight stay
     * within fetch_budget, read-ahead included; see docs/consumer.md. */
    size_t fetch_budget;
    size_t fetch_held;
    knc_bpo fetch_bpo; /* raw bytes per offset fetched: sizes the Fetch window */
    int retry_backoff_ms;
    int metadata_max_age_ms; /* how long a preferred read replica holds (KIP-392) */
    int request_timeout_ms;
    int default_api_timeout_ms;
    knc_reset reset;
    int64_t reset_duration_ms; /* KNC_RESET_BY_DURATION */
    bool read_committed;
    char *rack; /* client.rack, owned */
    knc_drain_opts drain_opts;
    /* committed offsets (offsets.c); all NULL/-1 without group.id */
    char *group_id; /* owned */
    bool auto_commit;
    int auto_commit_interval_ms;
    int64_t next_auto_commit_ms;
    int32_t coord_id; /* the group coordinator, -1 unknown */
    bool offset_fetch_inflight;
    struct knc_commit *commit_head, *commit_tail; /* FIFO, head in flight */
    bool commit_inflight;
    int64_t commit_retry_at_ms;
    struct knc_commit *done_head, *done_tail; /* async commits whose callback is due */
    kn_consumer_stats stats; /* buffered_* are computed when read */
    knc_metrics metrics;     /* Kafka-named metrics (consumer_metrics.h) */
    /* group membership (core/consumer/group/); NULL without group.id */
    struct kng_group *grp;
    knc_member member; /* what the group publishes for offsets.c */
    int grp_ticker_id; /* -1 until the first subscribe */
    bool in_poll;      /* a poll is running: max.poll.interval.ms is met */
    /* kn_consumer_set_ready_cb: fn NULL for none; called with the lock held */
    kn_consumer_ready_cb *ready_fn;
    void *ready_opaque;
    /* close: set while close runs (its deadline) / once it has begun */
    int64_t close_deadline_ms; /* 0: not closing */
    bool closing;
    /* Re-entrancy (application thread only): user callbacks running now
     * (rebalance listener, commit callbacks, custom assignor). poll,
     * close, unsubscribe and destroy from inside one return
     * KN_ERR__STATE (destroy: logged, nothing freed) instead of
     * recursing into the step that runs it or freeing the consumer
     * under it. */
    int cb_depth;
};

/* tplist.c: kn_topic_partition_list_add without the partition >= 0
 * check (subscription lists name topics with partition -1). */
int knc_tplist_add_any(kn_topic_partition_list *list, const char *topic, int32_t partition);


/* The consumer's logger: its client's (NULL, stderr, once close has
 * destroyed the client). */
static inline struct kn_logger *knc_logger(const kn_consumer *c) {
    return c->client ? knw_client_logger(c->client) : NULL;
}

/* The backoff between two attempts of a blocking call (application
 * thread, no lock): waits retry.backoff.ms, cut to deadline_ms, and
 * returns early with KN_ERR__WAKEUP (consuming it) when
 * kn_consumer_wakeup is called, as Java's blocking calls throw
 * WakeupException. Returns 0 after the wait. */
int knc_backoff_wait(kn_consumer *c, int64_t deadline_ms);

/* Brackets a user callback (application thread). */
static inline void knc_cb_enter(kn_consumer *c) { c->cb_depth++; }
static inline void knc_cb_leave(kn_consumer *c) { c->cb_depth--; }

/* The one way a state change is announced (c->lock held, called by
 * every path that changes what poll would return: network callbacks
 * and application calls alike): wakes a waiting poll, and fires the
 * readiness hook when poll has something to do now (knc_poll_ready),
 * so an event loop that only polls when woken never misses a change. */
void knc_signal(kn_consumer *c);
/* Whether poll(0) would make progress now (c->lock held): records on an
 * unpaused, non-revoking partition, an unreported partition error, a
 * due commit callback, a rebalance step, or a pending wakeup. */
bool knc_poll_ready(const kn_consumer *c);
/* The timeout a blocking request made on behalf of the consumer may
 * use: want_ms (-1: default.api.timeout.ms), cut to what is left of the
 * close timeout while close runs (0 when it is spent). */
int knc_call_timeout(const kn_consumer *c, int want_ms);



#endif

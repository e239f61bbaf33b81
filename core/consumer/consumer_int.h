/*
 * consumer_int.h: the consumer handle (struct kn_consumer) and the
 * functions the files of core/consumer/ call across each other (prefix
 * knc_).
 *
 * The handle is made of pieces, each a struct held by value, defined in
 * the header of the file that owns it and reached by the other files
 * only through that file's functions:
 *   c->cfg      settings.h      settings, read once (read directly: immutable)
 *   c->table    assignment.h    the partition table and its rotations
 *   c->nodes    node.h          per-broker fetch state and sessions
 *   c->fbuf     fetched.h       the fetch-buffer budget
 *   c->offsets  offsets_state.h commit FIFO, auto-commit, coordinator, OffsetFetch
 *   c->app      here            wakeup, close, readiness hook, callback depth
 *   c->metrics  metrics_state.h Kafka-named metrics (consumer_metrics.h)
 *   c->grp      group/group.h   the group membership (through group/host.h)
 *   c->member   here            the identity the group publishes for offsets.c
 * c->stats is the one shared piece: plain counters every path adds to.
 * The partition itself (knc_part) is position.h; its buffered slices
 * fetched.h; decoding drain.h.
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

#include "consumer/assignment.h"
#include "consumer/metrics_state.h"
#include "consumer/node.h"
#include "consumer/offsets_state.h"
#include "consumer/drain.h"
#include "consumer/fetched.h"
#include "consumer/position.h"
#include "consumer/records.h"
#include "consumer/session.h"
#include "consumer/settings.h"
#include "consumer/window.h"
#include "fork.h"
#include "kafka_native.h"
#include "proto/record_batch.h"
#include "reader.h"
#include "telemetry/telemetry.h"
#include "wire/wire.h"

/* ---- the consumer handle (consumer.c; tick.c runs its network side) --- */

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
 * c->cfg.group_id and the group) and stay valid until the next publish. */
typedef struct knc_member {
    const char *group_id;    /* group.id (NULL without one): set once at creation, read without the lock */
    const char *member_id;   /* "" when not a member of a generation */
    const char *instance_id; /* group.instance.id while a member, else NULL */
    int32_t epoch;           /* classic generation / KIP-848 member epoch; -1 when not a member */
    bool subscribed;         /* the group runs (not IDLE): it needs the coordinator */
    bool identity_at_send;   /* KIP-848: a commit takes the identity when sent, not when queued */
} knc_member;

/* The application side's lifecycle (consumer.c owns it; the other
 * files read it through the accessors below). Guarded by c->lock,
 * except cb_depth and close_deadline_ms, which only the application
 * thread touches. */
typedef struct knc_app {
    bool wakeup;  /* kn_consumer_wakeup was called; the next blocking call takes it */
    bool closing; /* close has begun */
    bool closed;  /* close has stopped the network side */
    int64_t close_deadline_ms; /* while close runs: its deadline; 0 otherwise */
    bool in_poll; /* a poll is running: max.poll.interval.ms is met */
    /* kn_consumer_set_ready_cb: fn NULL for none; called with the lock held */
    kn_consumer_ready_cb *ready_fn;
    void *ready_opaque;
    /* Re-entrancy: user callbacks running now (rebalance listener,
     * commit callbacks, custom assignor). poll, close, unsubscribe and
     * destroy from inside one return KN_ERR__STATE (destroy: logged,
     * nothing freed) instead of recursing into the step that runs it or
     * freeing the consumer under it. */
    int cb_depth;
} knc_app;

struct kn_consumer {
    kn_fork_stamp fork; /* the creating process (fork.h): another one may not use it */
    knw_client *client;
    int ticker_id;
    knc_config cfg; /* settings, read once (settings.h): read without the lock */
    knt *telemetry; /* KIP-714 push; NULL with enable.metrics.push=false;
                     * its own lock (never taken under c->lock) */
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* signalled when data, positions or errors change */
    knc_table table;      /* the partition table (assignment.h) */
    knc_nodes nodes;      /* per-broker fetch state (node.h) */
    knc_fetchbuf fbuf;    /* the fetch-buffer budget (fetched.h) */
    knc_offsets offsets;  /* committed offsets (offsets_state.h, offsets.c) */
    knc_app app;          /* the application side's lifecycle (above) */
    kn_consumer_stats stats; /* buffered_* are computed when read */
    knc_metrics metrics;     /* Kafka-named metrics (consumer_metrics.h) */
    /* group membership (core/consumer/group/); NULL without group.id */
    struct kng_group *grp;
    knc_member member; /* what the group publishes for offsets.c */
    int grp_ticker_id; /* -1 until the first subscribe */
};

/* consumer.c: replaces the assignment (c->lock NOT held): kept
 * partitions keep their state, new ones start unpositioned, dropped
 * ones are freed with their buffers; the new topics' metadata is
 * requested. What kn_consumer_assign does, without the subscription
 * check. Returns 0, KN_ERR__INVALID_ARG (a duplicate), KN_ERR__NOMEM or
 * KN_ERR__CLOSED; the assignment is unchanged on error. */
int knc_set_assignment(kn_consumer *c, const kn_topic_partition_list *list);

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
static inline void knc_cb_enter(kn_consumer *c) { c->app.cb_depth++; }
static inline void knc_cb_leave(kn_consumer *c) { c->app.cb_depth--; }
/* Whether a user callback of this consumer is running (application
 * thread): re-entrant lifecycle calls are refused. */
static inline bool knc_in_callback(const kn_consumer *c) { return c->app.cb_depth > 0; }
/* Whether close has stopped the consumer (c->lock held, or a racy read
 * that only shortcuts a call the lock then checks again). */
static inline bool knc_closed(const kn_consumer *c) { return c->app.closed; }
/* Whether close has begun or ended (c->lock held). */
static inline bool knc_closing(const kn_consumer *c) { return c->app.closing || c->app.closed; }
/* Whether a poll is running (c->lock held): the group's
 * max.poll.interval.ms check. */
static inline bool knc_in_poll(const kn_consumer *c) { return c->app.in_poll; }
/* Takes a pending kn_consumer_wakeup (c->lock held): true once per
 * wakeup, for the blocking call that ends on it. */
static inline bool knc_take_wakeup(kn_consumer *c) {
    bool w = c->app.wakeup;
    c->app.wakeup = false;
    return w;
}

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

/*
 * group.h: consumer group membership (prefix kng_), shared by the files
 * of core/consumer/group/:
 *
 *  - subscription.c: what the member subscribes to (topic names, a
 *    POSIX ERE matched against live metadata, or a KIP-848 regex the
 *    broker matches) and the cluster view the
 *    leader hands to the assignor;
 *  - classic.c: the classic protocol on the network thread
 *    (JoinGroup / SyncGroup / Heartbeat / LeaveGroup, leader assignment),
 *    behind the ops table of protocol.h, as kip848.c is;
 *  - custom.c: application-defined assignors (kn_consumer_add_assignor);
 *  - kip848.c: the KIP-848 protocol on the network thread
 *    (ConsumerGroupHeartbeat and reconciliation toward the target);
 *  - rebalance.c: the application-thread half: the public subscribe /
 *    unsubscribe / enforce calls, and the parked transitions (revoke
 *    before an eager join, apply an assignment, drop lost partitions)
 *    that poll, close and unsubscribe run with the listener.
 *
 * Threads: every field of kng_group is guarded by the consumer's lock
 * (c->lock). The network thread never runs user code: whenever a
 * transition needs the application (the listener, a commit before a
 * revoke) it sets `app` and signals c->cond; poll runs the step
 * (rebalance.c) and moves the state machine on.
 */
#ifndef KN_CONSUMER_GROUP_H
#define KN_CONSUMER_GROUP_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "consumer/assignor/registry.h"
#include "consumer/consumer_int.h"
#include "consumer/group/host.h"
#include "consumer/group/protocol.h"
#include "consumer/offsets.h"

typedef enum kng_state {
    KNG_IDLE,      /* not subscribed */
    KNG_UNJOINED,  /* wants to (re)join once the coordinator is known */
    KNG_PREPARE,   /* app: revoke (eager) / commit before joining */
    KNG_JOINING,   /* JoinGroup in flight */
    KNG_SYNCING,   /* SyncGroup in flight */
    KNG_LEADER,    /* app: run a custom assignor, then SyncGroup */
    KNG_ASSIGNING, /* app: apply the assignment SyncGroup (or 848) gave */
    KNG_STABLE,    /* member of the generation, heartbeating */
    KNG_LOST,      /* app: drop every partition as lost, then rejoin */
    KNG_FATAL      /* stopped with an error poll reports */
} kng_state;

/* The auto-commit a revoking step waits for (Java's onJoinPrepare):
 * started by the step, answered on the network thread. */
typedef enum kng_revoke_commit {
    KNG_RC_NONE,
    KNG_RC_INFLIGHT, /* poll has nothing to do for the step until it answers */
    KNG_RC_DONE      /* answered: the step (of revoke_commit_state) goes on */
} kng_revoke_commit;

typedef struct kng_group {
    bool consumer_protocol; /* group.protocol=consumer (KIP-848) */
    const kng_ops *ops;     /* kng_848_ops or kng_classic_ops (protocol.h) */
    kng_state state;
    kn_rebalance_cb *cb;
    void *opaque;
    /* subscription: sorted topic names (for a pattern: the matches) */
    char **topics;
    int32_t topic_cnt;
    bool has_pattern;
    regex_t re;
    char *pattern;
    /* KIP-848 broker-side regex (RE2J, SubscribedTopicRegex): the broker
     * matches it; g->topics then holds the topics of the last target. */
    char *regex;
    bool regex_sent; /* the coordinator holds a regex: "" clears it */
    bool exclude_internal;
    int64_t next_pattern_refresh_ms;
    bool subscription_changed; /* the matched set moved: rejoin */
    /* assignors (classic) */
    kn_asg_list *asgs;
    bool cooperative;            /* every offered assignor supports COOPERATIVE */
    struct kng_custom **customs; /* custom.c */
    int32_t custom_cnt;
    void *leader_resp; /* KNG_LEADER: the JoinGroup answer (knw_resp) */
    void *leader_sync; /* ... and the SyncGroup being built */
    char *remote_assignor;
    /* identity */
    char *member_id; /* "" until the coordinator (or we, 848) give one */
    char *instance_id;
    int32_t generation; /* classic generation / 848 member epoch; -1 none */
    char *protocol_name;
    char *leader_id;
    char *rack;
    /* timing settings */
    int session_timeout_ms;
    int rebalance_timeout_ms; /* max.poll.interval.ms */
    int heartbeat_interval_ms;
    int metadata_max_age_ms;
    int64_t last_poll_ms;
    int64_t next_hb_ms;
    int64_t retry_at_ms;
    bool inflight;    /* JoinGroup / SyncGroup / 848 heartbeat in flight */
    bool hb_inflight; /* classic Heartbeat in flight */
    bool rejoin;      /* rejoin requested (heartbeat error, enforce, metadata) */
    char reason[160];
    bool poll_expired;
    bool prepared;         /* PREPARE ran: join without another revoke */
    int64_t md_wait_start; /* first join attempt waiting for topic metadata */
    /* the assignment the coordinator gave, waiting for the app (ASSIGNING) */
    kn_topic_partition_list *pending;
    /* the last assignment applied (sticky user data) */
    kn_topic_partition_list *last_assigned;
    /* leader: partition counts the assignment was computed from */
    char **asg_topics;
    int32_t *asg_counts;
    int32_t asg_topic_cnt;
    /* fatal error for poll */
    int fatal_err;
    char fatal_msg[256];
    /* KIP-848 */
    kn_topic_partition_list *acked; /* unused by classic */
    bool send_full;
    bool joined;               /* the coordinator knows us (epoch > 0) */
    bool assigned_once;        /* a target was reconciled since joining */
    struct kng_target *target; /* a target whose topic ids await metadata */
    bool target_unresolved;
    bool want_all_topics; /* resolve unknown topic ids */
    /* join latency */
    int64_t join_started_ms;
    /* the commit before a revoke, and the state whose step started it */
    kng_revoke_commit revoke_commit;
    kng_state revoke_commit_state;
} kng_group;

/* ---- subscription.c --------------------------------------------------- */

/* Replaces the topic list (copied, sorted, deduplicated). 0 or NOMEM. */
int kng_set_topics(kng_group *g, const char *const *topics, size_t count);
/* Re-matches the pattern against an all-topics snapshot; true when the
 * matched set changed (then g->topics holds the new set). */
bool kng_match_pattern(kng_group *g, const knw_metadata *md);
bool kng_subscribed_to(const kng_group *g, const char *topic);
/* Whether md has an entry (maybe an error) for every subscribed topic. */
bool kng_metadata_ready(const kng_group *g, const knw_metadata *md);
/* Whether a subscribed topic's partition count differs from what the
 * last assignment was computed from (leader check). */
bool kng_counts_changed(const kng_group *g, const knw_metadata *md);
/* Remembers the partition counts of topics (leader). */
void kng_remember_counts(kng_group *g, const knw_metadata *md, const char *const *topics, int32_t cnt);
/* Broker-side regex: g->topics becomes the topics of the target l. */
void kng_regex_topics(kng_group *g, const kn_topic_partition_list *l);
void kng_subscription_clear(kng_group *g);

/* ---- custom.c --------------------------------------------------------- */

void kng_custom_destroy(kng_group *g);

/* ---- shared helpers (rebalance.c) ------------------------------------ */

/* Moves to state s and wakes poll when s needs the application. */
void kng_set_state(kn_consumer *c, kng_state s);
/* The identity setters: every change of member id, generation or
 * state (kng_set_state) republishes c->member (consumer_int.h), the
 * one view of the member offsets.c has. */
/* Sets the member id (NULL or len <= 0: "", which never fails).
 * Returns 0 or KN_ERR__NOMEM (the old id kept). */
int kng_set_member_id(kn_consumer *c, const char *id, int32_t len);
/* Sets the generation (classic) / member epoch (KIP-848; set g->joined
 * first: an unjoined member publishes no epoch). */
void kng_set_generation(kn_consumer *c, int32_t generation);
/* Recomputes c->member from the group (c->lock held). */
void kng_publish(kn_consumer *c);
/* Stops the group with an error poll reports. */
void kng_fail(kn_consumer *c, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The group's network ticker (registered by subscribe). */
int kng_tick(knw_client *client, int64_t now_ms, void *opaque);

#endif

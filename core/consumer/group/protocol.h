/*
 * protocol.h: the membership protocol interface. rebalance.c (the
 * group's host half: state, the parked application steps, subscribe
 * and leave) runs a protocol only through these operations, so
 * classic.c (JoinGroup / SyncGroup / Heartbeat) and kip848.c
 * (ConsumerGroupHeartbeat) do not know of each other and a protocol is
 * chosen once, at creation (group.protocol).
 */
#ifndef KN_CONSUMER_GROUP_PROTOCOL_H
#define KN_CONSUMER_GROUP_PROTOCOL_H

#include <stdint.h>

#include "consumer/consumer_int.h"

struct kng_group;

typedef struct kng_ops {
    /* Network thread, c->lock held: plans the next request and sends
     * nothing; *next_ms is when to tick again. The plan (NULL: none)
     * goes to send after the lock is released, which consumes it. */
    void *(*tick)(kn_consumer *c, const knw_metadata *md, int64_t now_ms, int *next_ms);
    void (*send)(kn_consumer *c, knw_client *client, void *plan);
    /* Application thread, no lock, the group already IDLE: leaves the
     * group (blocking, within the call timeout) and forgets the member
     * identity. */
    void (*leave)(kn_consumer *c, const char *reason);
    /* KNG_LEADER, application thread, c->lock held (dropped while a
     * custom assignor runs): assigns and sends SyncGroup. Returns 0 or
     * the error poll returns. NULL: the protocol has no leader step. */
    int (*leader_step)(kn_consumer *c);
    /* Frees what the protocol keeps in the group (c->lock held or the
     * group being destroyed). */
    void (*destroy)(struct kng_group *g);
} kng_ops;

extern const kng_ops kng_classic_ops; /* classic.c */
extern const kng_ops kng_848_ops;     /* kip848.c */

#endif

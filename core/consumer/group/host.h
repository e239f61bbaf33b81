/*
 * host.h: what the consumer (the group's host) calls on its group
 * (core/consumer/group/): creation, the parked step poll runs, poll
 * bookkeeping, close. The member identity commits carry is not asked
 * for here: the group publishes it into c->member (consumer_int.h),
 * which is all offsets.c reads of the group. The group calls back into
 * the consumer through consumer_int.h, assignment.h and offsets.h: this
 * pair is the one module cycle the include graph allows
 * (tools/deps-graph).
 */
#ifndef KN_CONSUMER_GROUP_HOST_H
#define KN_CONSUMER_GROUP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka_native.h"

/* group/: creates c->grp when group.id is set (consumer construction). */
int kng_create(kn_consumer *c, const kn_conf *conf, char *errstr, size_t errstr_size);
/* group/rebalance.c, application thread, no lock: runs the parked group
 * step if any (listener included). Returns 0 or the error poll returns. */
int kng_serve(kn_consumer *c, char *errstr, size_t errstr_size);
/* c->lock held: whether poll has a group step to run / the member is
 * subscribed. */
bool kng_app_pending(const kn_consumer *c);
bool kng_subscribed(const kn_consumer *c);
/* Records a poll (max.poll.interval.ms), c->lock held. */
void kng_polled(kn_consumer *c, int64_t now_ms);
/* close: revoke, leave (dynamic), free. No lock. */
void kng_close(kn_consumer *c);
void kng_destroy(kn_consumer *c);

#endif

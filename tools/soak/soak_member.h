/*
 * soak_member.h: the group-member log shared by tools/soak's C members
 * (soak_reader.c, soak_txn.c). One line per event, each with a
 * CLOCK_REALTIME ms timestamp so the logs of all members merge:
 *
 *   <ts> <member> ASSIGNED|REVOKED|LOST <changed> OWN <owned after>
 *   <ts> <member> GEN <generation or epoch> <member id>
 *
 * Partition lists are "p,p" ("-" when empty). The listener writes its
 * line and flushes before the partitions are released, so a REVOKED /
 * LOST timestamp is a conservative end of ownership (the checker's
 * ownership check relies on it).
 */
#ifndef SOAK_MEMBER_H
#define SOAK_MEMBER_H

#include <stdio.h>

#include "kafka_native.h"

typedef struct soak_member {
    FILE *out;                      /* the member's log (not owned) */
    const char *id;                 /* the member's name in the log */
    kn_topic_partition_list *owned; /* the partitions owned now */
    int steps, seen_steps;          /* listener calls; those logged by GEN */
    int generation;                 /* after the latest step (-1 before) */
} soak_member;

long long soak_now_ms(void);
void soak_member_init(soak_member *m, FILE *out, const char *id);
void soak_member_free(soak_member *m);
/* The rebalance listener (opaque: the soak_member). */
int soak_member_on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                             void *opaque);
/* After a poll: a GEN line when the listener ran since the last one. */
void soak_member_after_poll(soak_member *m, kn_consumer *c);
/* kn_conf_set, naming the key on stderr on failure: 0 or -1. */
int soak_conf_set(kn_conf *conf, const char *id, const char *key, const char *value);

#endif

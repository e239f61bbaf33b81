/*
 * sticky_int.h: state shared by the sticky assignors' two builders
 * (sticky.c: member data, ownership conflicts, rack info, the constrained
 * builder used when all subscriptions are equal, the cooperative
 * adjustment; sticky_general.c: the general builder). Internal to
 * core/consumer/assignor/; the algorithm is Java's AbstractStickyAssignor.
 */
#ifndef KN_ASG_STICKY_INT_H
#define KN_ASG_STICKY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "consumer/assignor/asg_int.h"

/* A growable list of ints (members or global partitions); Java's
 * ArrayList/LinkedList operations the builders need. */
typedef struct stk_list {
    int32_t *v;
    int32_t n;
    int32_t cap;
} stk_list;

int stk_push(stk_list *l, int32_t x);
/* Removes the first occurrence of x; false when absent. */
bool stk_remove(stk_list *l, int32_t x);
void stk_remove_at(stk_list *l, int32_t i);
bool stk_contains(const stk_list *l, int32_t x);
void stk_list_free(stk_list *l);

typedef struct stk {
    asg_ctx ctx;
    stk_list *owned;    /* per member: owned partitions after conflicts (consumerToOwnedPartitions) */
    uint8_t *multi;     /* per partition: claimed by several members in one generation */
    stk_list *md_parts; /* per member: memberData partitions (active topics only) */
    bool *md_has_gen;
    int32_t *md_gen;
    int32_t max_gen;
    bool all_equal;
    /* rack info */
    bool rack_use;          /* consumerRacks/partitionRacks non-empty */
    int32_t *ncons_by_part; /* numConsumersByPartition, NULL when empty */
    stk_list *result;       /* per member: the assignment being built */
    int32_t *transfer;      /* constrained builder: partitionsTransferringOwnership (-1 none) */
    kn_arena arena;         /* decoded user data */
} stk;

/* Java RackInfo.racksMismatch. */
bool stk_racks_mismatch(const stk *s, int32_t m, int32_t g);
/* The member's rack when rack-aware assignment is on (consumerRacks). */
static inline const char *stk_crack(const stk *s, int32_t m) { return s->rack_use ? s->ctx.m_rack[m] : NULL; }

/* The general builder (sticky_general.c): fills s->result. Returns 0,
 * KN_ERR__NOMEM, or KN_ERR__FAIL where Java's assignor throws. */
int stk_general_build(stk *s, char *errstr, size_t errstr_size);

#endif

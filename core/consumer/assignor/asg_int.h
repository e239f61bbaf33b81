/*
 * asg_int.h: what the built-in assignors share: the input turned into
 * indices (asg_ctx), member orders as Java walks them, and the entry
 * points of each algorithm. Internal to core/consumer/assignor/.
 *
 * Partitions are numbered globally: topics that are both subscribed and
 * present in the cluster view with > 0 partitions ("active" topics, what
 * Java's partitionsPerTopic holds) are sorted by name, and partition p of
 * active topic t is t_base[t] + p, so the global order is Java's
 * (topic, partition) order.
 */
#ifndef KN_ASG_INT_H
#define KN_ASG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/assignor/assignor.h"

typedef struct asg_ctx {
    const kn_asg_input *in;
    int32_t nm;
    int32_t nt;
    int32_t *t_in;       /* active topic -> index in in->topics */
    const char **t_name; /* borrowed from in->topics */
    int32_t *t_cnt;      /* partition count */
    int32_t *t_base;     /* first global partition */
    uint32_t *t_hash;    /* Java String hash */
    int32_t np;          /* total partitions of active topics */
    int32_t *p_topic;    /* global partition -> active topic */
    uint8_t *sub;        /* nm x nt: member m subscribes active topic t */
    uint32_t *m_hash;    /* Java hash of each member id */
    int32_t *m_jorder;   /* members in Java HashMap order (the leader's subscriptions map) */
    int32_t *m_sorted;   /* members in MemberInfo order (instance ids first) */
    const char **m_rack; /* member rack, NULL when absent or empty */
} asg_ctx;

/* Builds ctx from in; ctx owns its arrays (asg_ctx_free). */
int asg_ctx_init(asg_ctx *ctx, const kn_asg_input *in, char *errstr, size_t errstr_size);
void asg_ctx_free(asg_ctx *ctx);

/* Active topic index of name, or -1. */
int32_t asg_topic_find(const asg_ctx *ctx, const char *name);
/* Global partition of (topic name, partition), or -1 when the topic is not
 * active or the partition is out of range. */
int32_t asg_part_find(const asg_ctx *ctx, const char *topic, int32_t partition);
static inline bool asg_subscribes(const asg_ctx *ctx, int32_t m, int32_t t) {
    return ctx->sub[(size_t)m * (size_t)ctx->nt + (size_t)t] != 0;
}
static inline int32_t asg_part_num(const asg_ctx *ctx, int32_t g) { return g - ctx->t_base[ctx->p_topic[g]]; }
/* Replica racks of global partition g, NULL when the view has none. */
const kn_asg_racks *asg_part_racks(const asg_ctx *ctx, int32_t g);
bool asg_racks_contain(const kn_asg_racks *r, const char *rack);

/* Appends global partition g to member m's output. 0 or KN_ERR__NOMEM. */
int asg_emit(const asg_ctx *ctx, kn_asg_output *out, int32_t m, int32_t g);
/* Sorts each member's partitions by (topic, partition). */
void asg_output_sort(kn_asg_output *out);

/* The algorithms (range.c, roundrobin.c, sticky.c). */
int asg_range_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                     size_t errstr_size);
int asg_roundrobin_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                          size_t errstr_size);
int asg_sticky_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                      size_t errstr_size);
int asg_coop_sticky_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                           size_t errstr_size);

#endif

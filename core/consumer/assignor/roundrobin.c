/*
 * roundrobin.c: the "roundrobin" assignor (Java RoundRobinAssignor, 4.x).
 *
 * All partitions of all subscribed topics, sorted by (topic, partition),
 * are dealt to the members in MemberInfo order as a circle; a member not
 * subscribed to the partition's topic is skipped (the circle moves on).
 */
#include "consumer/assignor/asg_int.h"

int asg_roundrobin_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                          size_t errstr_size) {
    asg_ctx ctx;
    int rc = asg_ctx_init(&ctx, in, errstr, errstr_size);
    if (rc)
        return rc;
    int32_t next = 0;
    for (int32_t g = 0; g < ctx.np && !rc; g++) {
        int32_t t = ctx.p_topic[g];
        /* an active topic always has a subscriber, so this ends */
        while (!asg_subscribes(&ctx, ctx.m_sorted[next], t))
            next = (next + 1) % ctx.nm;
        rc = asg_emit(&ctx, out, ctx.m_sorted[next], g);
        next = (next + 1) % ctx.nm;
    }
    asg_ctx_free(&ctx);
    return rc;
}

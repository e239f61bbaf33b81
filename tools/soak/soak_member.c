/*
 * soak_member.c: the group-member log of tools/soak's C members (see
 * soak_member.h): the rebalance listener's ASSIGNED / REVOKED / LOST
 * lines with the set owned after each step, and the generation after it.
 */
#include "soak_member.h"

#include <time.h>

long long soak_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void soak_member_init(soak_member *m, FILE *out, const char *id) {
    m->out = out;
    m->id = id;
    m->owned = kn_topic_partition_list_new();
    m->steps = m->seen_steps = 0;
    m->generation = -1;
}

void soak_member_free(soak_member *m) {
    kn_topic_partition_list_destroy(m->owned);
    m->owned = NULL;
}

static void print_list(FILE *out, const kn_topic_partition_list *l) {
    size_t n = l ? kn_topic_partition_list_count(l) : 0;
    if (!n)
        fputs("-", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? "," : "", (int)kn_topic_partition_list_partition(l, i));
}

int soak_member_on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                             void *opaque) {
    (void)c;
    soak_member *m = opaque;
    kn_topic_partition_list *next = kn_topic_partition_list_new();
    for (size_t i = 0; i < kn_topic_partition_list_count(m->owned); i++) {
        const char *t = kn_topic_partition_list_topic(m->owned, i);
        int32_t p = kn_topic_partition_list_partition(m->owned, i);
        if (ev == KN_REBALANCE_ASSIGNED || kn_topic_partition_list_find(parts, t, p) < 0)
            kn_topic_partition_list_add(next, t, p);
    }
    if (ev == KN_REBALANCE_ASSIGNED)
        for (size_t i = 0; i < kn_topic_partition_list_count(parts); i++)
            kn_topic_partition_list_add(next, kn_topic_partition_list_topic(parts, i),
                                        kn_topic_partition_list_partition(parts, i));
    fprintf(m->out, "%lld %s %s ", soak_now_ms(), m->id,
            ev == KN_REBALANCE_ASSIGNED  ? "ASSIGNED"
            : ev == KN_REBALANCE_REVOKED ? "REVOKED"
                                         : "LOST");
    print_list(m->out, parts);
    fputs(" OWN ", m->out);
    print_list(m->out, next);
    fputc('\n', m->out);
    fflush(m->out);
    kn_topic_partition_list_destroy(m->owned);
    m->owned = next;
    m->steps++;
    return 0;
}

void soak_member_after_poll(soak_member *m, kn_consumer *c) {
    if (m->steps == m->seen_steps)
        return;
    m->seen_steps = m->steps;
    kn_group_metadata *gm = kn_consumer_group_metadata(c);
    if (!gm)
        return;
    m->generation = (int)kn_group_metadata_generation(gm);
    const char *mid = kn_group_metadata_member_id(gm);
    fprintf(m->out, "%lld %s GEN %d %s\n", soak_now_ms(), m->id, m->generation, mid && *mid ? mid : "-");
    kn_group_metadata_destroy(gm);
}

int soak_conf_set(kn_conf *conf, const char *id, const char *key, const char *value) {
    char es[512];
    if (kn_conf_set(conf, key, value, es, sizeof es) != KN_OK) {
        fprintf(stderr, "%s: conf %s\n", id, es);
        return -1;
    }
    return 0;
}

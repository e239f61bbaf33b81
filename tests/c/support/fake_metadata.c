/*
 * fake_metadata.c: the one-topic, one-partition Metadata answer of the
 * consumer's fake-broker tests (see fake_metadata.h).
 */
#include "fake_metadata.h"

void kn_fake_metadata_one_partition(kp_MetadataResponse *r, kn_arena *a, const int *ports, int nbrokers,
                                    const kn_uuid *topic_id, int32_t leader_epoch) {
    kp_MetadataResponse_MetadataResponseBroker *b = kn_arena_calloc(a, (size_t)nbrokers, sizeof(*b));
    int32_t *reps = kn_arena_calloc(a, (size_t)nbrokers, sizeof(int32_t));
    for (int i = 0; i < nbrokers; i++) {
        b[i] = (kp_MetadataResponse_MetadataResponseBroker){i + 1, kn_str_c("127.0.0.1"), ports[i], {NULL, -1}};
        reps[i] = i + 1;
    }
    r->brokers.items = b;
    r->brokers.count = nbrokers;
    r->cluster_id = kn_str_c("fake-cluster");
    r->controller_id = 1;
    kp_MetadataResponse_MetadataResponseTopic *t = kn_arena_calloc(a, 1, sizeof(*t));
    kp_MetadataResponse_MetadataResponseTopic_init(t);
    t->name = kn_str_c("t");
    t->topic_id = *topic_id;
    kp_MetadataResponse_MetadataResponsePartition *p = kn_arena_calloc(a, 1, sizeof(*p));
    kp_MetadataResponse_MetadataResponsePartition_init(p);
    p->partition_index = 0;
    p->leader_id = 1;
    p->leader_epoch = leader_epoch;
    p->replica_nodes = (kp_int32_array){reps, nbrokers};
    p->isr_nodes = (kp_int32_array){reps, nbrokers};
    t->partitions.items = p;
    t->partitions.count = 1;
    r->topics.items = t;
    r->topics.count = 1;
}

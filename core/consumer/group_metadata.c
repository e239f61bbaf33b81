/*
 * group_metadata.c: kn_group_metadata, a consumer's group identity
 * (group id, generation or member epoch, member id, instance id) as a
 * small owned value. The consumer hands it out; a transactional producer
 * sends it with TxnOffsetCommit so the coordinator can fence zombies.
 */
#include "kafka_native_consumer.h"
#include "kn_alloc.h"

struct kn_group_metadata {
    char *group_id;
    char *member_id;
    char *group_instance_id; /* NULL: dynamic member */
    int32_t generation;
};

kn_group_metadata *kn_group_metadata_new(const char *group_id, int32_t generation,
                                         const char *member_id,
                                         const char *group_instance_id) {
    if (!group_id || !*group_id)
        return NULL;
    kn_group_metadata *gm = kn_calloc(1, sizeof *gm);
    if (!gm)
        return NULL;
    gm->generation = generation;
    gm->group_id = kn_strdup(group_id);
    gm->member_id = kn_strdup(member_id ? member_id : "");
    gm->group_instance_id = group_instance_id ? kn_strdup(group_instance_id) : NULL;
    if (!gm->group_id || !gm->member_id || (group_instance_id && !gm->group_instance_id)) {
        kn_group_metadata_destroy(gm);
        return NULL;
    }
    return gm;
}

kn_group_metadata *kn_group_metadata_copy(const kn_group_metadata *gm) {
    return gm ? kn_group_metadata_new(gm->group_id, gm->generation, gm->member_id,
                                      gm->group_instance_id)
              : NULL;
}

void kn_group_metadata_destroy(kn_group_metadata *gm) {
    if (!gm)
        return;
    kn_free(gm->group_id);
    kn_free(gm->member_id);
    kn_free(gm->group_instance_id);
    kn_free(gm);
}

const char *kn_group_metadata_group_id(const kn_group_metadata *gm) {
    return gm->group_id;
}

int32_t kn_group_metadata_generation(const kn_group_metadata *gm) {
    return gm->generation;
}

const char *kn_group_metadata_member_id(const kn_group_metadata *gm) {
    return gm->member_id;
}

const char *kn_group_metadata_group_instance_id(const kn_group_metadata *gm) {
    return gm->group_instance_id;
}

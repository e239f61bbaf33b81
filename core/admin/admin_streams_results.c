/*
 * admin_streams_results.c: the parts of kn_group_descriptions only a
 * streams group has beyond its subtopologies' names and its members'
 * tasks (admin_group_results.c): the internal topics' declared partition
 * count, replication factor and configs, and per member the rack,
 * topology epoch, user endpoint, client tags and task offsets that
 * StreamsGroupDescribe carries (Java's TopicInfo and
 * StreamsGroupMemberDescription). Everything is owned by the
 * descriptions object; kna_streams_member_free and kna_topic_infos_free
 * are its destroy's helpers.
 */
#include <string.h>

#include "admin/admin.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"

void kna_kvs_free(kna_kv *kv, size_t count) {
    for (size_t k = 0; kv && k < count; k++) {
        kn_free(kv[k].key);
        kn_free(kv[k].value);
    }
    kn_free(kv);
}

int kna_kvs_copy(kna_kv **out, size_t *count, const void *items, int32_t n, size_t stride, size_t key_off,
                 size_t value_off) {
    *out = NULL;
    *count = 0;
    if (n <= 0)
        return 0;
    if (!(*out = kn_calloc((size_t)n, sizeof(**out))))
        return KN_ERR__NOMEM;
    static const kn_str empty = {"", 0};
    for (int32_t k = 0; k < n; k++) {
        const char *item = (const char *)items + (size_t)k * stride;
        kn_str key, value;
        memcpy(&key, item + key_off, sizeof key);
        memcpy(&value, item + value_off, sizeof value);
        kna_kv *kv = &(*out)[(*count)++];
        /* Both are non-nullable in the schema: a null is read as "". */
        if (!kna_set_str(&kv->key, key.len < 0 ? empty : key) ||
            !kna_set_str(&kv->value, value.len < 0 ? empty : value))
            return KN_ERR__NOMEM;
    }
    return 0;
}

void kna_topic_infos_free(kna_topic_info *infos, size_t count) {
    for (size_t k = 0; infos && k < count; k++)
        kna_kvs_free(infos[k].configs, infos[k].config_count);
    kn_free(infos);
}

void kna_streams_member_free(kna_streams_member *sm) {
    if (!sm)
        return;
    kn_free(sm->rack);
    kn_free(sm->endpoint_host);
    kna_kvs_free(sm->tags, sm->tag_count);
    for (int k = 0; k < 2; k++)
        kn_topic_partition_list_destroy(sm->task_offsets[k]);
    kn_free(sm);
}

/* ---- accessors ------------------------------------------------------ */

static const kna_topic_info *kna_info_at(const kn_group_descriptions *d, size_t i, size_t s, int kind, size_t t) {
    if (!d || i >= d->count || s >= d->items[i].subtopology_count || kind < KN_SUBTOPOLOGY_STATE_CHANGELOG ||
        kind > KN_SUBTOPOLOGY_REPARTITION_SOURCE)
        return NULL;
    const kna_subtopology *st = &d->items[i].subtopologies[s];
    const kna_topic_info *infos = st->infos[kind - KN_SUBTOPOLOGY_STATE_CHANGELOG];
    return infos && t < st->topic_count[kind] ? &infos[t] : NULL;
}

int32_t kn_group_descriptions_subtopology_topic_partitions(const kn_group_descriptions *d, size_t i, size_t s,
                                                           int kind, size_t t) {
    const kna_topic_info *x = kna_info_at(d, i, s, kind, t);
    return x ? x->partitions : -1;
}

int32_t kn_group_descriptions_subtopology_topic_replication_factor(const kn_group_descriptions *d, size_t i,
                                                                   size_t s, int kind, size_t t) {
    const kna_topic_info *x = kna_info_at(d, i, s, kind, t);
    return x ? x->replication_factor : -1;
}

size_t kn_group_descriptions_subtopology_topic_config_count(const kn_group_descriptions *d, size_t i, size_t s,
                                                            int kind, size_t t) {
    const kna_topic_info *x = kna_info_at(d, i, s, kind, t);
    return x ? x->config_count : 0;
}

const char *kn_group_descriptions_subtopology_topic_config(const kn_group_descriptions *d, size_t i, size_t s,
                                                           int kind, size_t t, size_t c, const char **value) {
    const kna_topic_info *x = kna_info_at(d, i, s, kind, t);
    bool ok = x && c < x->config_count;
    if (value)
        *value = ok ? x->configs[c].value : NULL;
    return ok ? x->configs[c].key : NULL;
}

static const kna_streams_member *kna_sm(const kn_group_descriptions *d, size_t i, size_t m) {
    if (!d || i >= d->count || m >= d->items[i].member_count)
        return NULL;
    return d->items[i].members[m].streams;
}

const char *kn_group_descriptions_member_rack(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_streams_member *x = kna_sm(d, i, m);
    return x ? x->rack : NULL;
}

int32_t kn_group_descriptions_member_topology_epoch(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_streams_member *x = kna_sm(d, i, m);
    return x ? x->topology_epoch : -1;
}

int kn_group_descriptions_member_is_classic(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_streams_member *x = kna_sm(d, i, m);
    return x && x->is_classic;
}

const char *kn_group_descriptions_member_user_endpoint(const kn_group_descriptions *d, size_t i, size_t m,
                                                      int *port) {
    const kna_streams_member *x = kna_sm(d, i, m);
    if (!x || !x->endpoint_host)
        return NULL;
    if (port)
        *port = x->endpoint_port;
    return x->endpoint_host;
}

size_t kn_group_descriptions_member_client_tag_count(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_streams_member *x = kna_sm(d, i, m);
    return x ? x->tag_count : 0;
}

const char *kn_group_descriptions_member_client_tag(const kn_group_descriptions *d, size_t i, size_t m, size_t k,
                                                   const char **value) {
    const kna_streams_member *x = kna_sm(d, i, m);
    bool ok = x && k < x->tag_count;
    if (value)
        *value = ok ? x->tags[k].value : NULL;
    return ok ? x->tags[k].key : NULL;
}

const kn_topic_partition_list *kn_group_descriptions_member_task_offsets(const kn_group_descriptions *d, size_t i,
                                                                         size_t m, int kind) {
    const kna_streams_member *x = kna_sm(d, i, m);
    return x && (kind == KN_TASK_OFFSETS || kind == KN_TASK_END_OFFSETS) ? x->task_offsets[kind] : NULL;
}

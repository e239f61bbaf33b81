/*
 * admin_cluster_info.c: describe_features (ApiVersions v3+: finalized
 * and supported feature levels) and describe_metadata_quorum
 * (DescribeQuorum for __cluster_metadata, forwarded by the broker to the
 * active controller), both to any broker as Java sends them, with their
 * result objects (owned copies).
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_quorum.h"

/* ---- features -------------------------------------------------------- */

typedef struct kna_feature {
    char *name;
    int16_t min, max;
} kna_feature;

struct kn_features {
    int64_t epoch;
    kna_feature *finalized, *supported;
    size_t finalized_count, supported_count;
};

void kn_features_destroy(kn_features *f) {
    if (!f)
        return;
    for (size_t i = 0; i < f->finalized_count; i++)
        kn_free(f->finalized[i].name);
    for (size_t i = 0; i < f->supported_count; i++)
        kn_free(f->supported[i].name);
    kn_free(f->finalized);
    kn_free(f->supported);
    kn_free(f);
}

int64_t kn_features_finalized_epoch(const kn_features *f) { return f ? f->epoch : -1; }
size_t kn_features_finalized_count(const kn_features *f) { return f ? f->finalized_count : 0; }
size_t kn_features_supported_count(const kn_features *f) { return f ? f->supported_count : 0; }

static const kna_feature *kna_fin(const kn_features *f, size_t i) {
    return f && i < f->finalized_count ? &f->finalized[i] : NULL;
}

static const kna_feature *kna_sup(const kn_features *f, size_t i) {
    return f && i < f->supported_count ? &f->supported[i] : NULL;
}

const char *kn_features_finalized_name(const kn_features *f, size_t i) {
    const kna_feature *x = kna_fin(f, i);
    return x ? x->name : NULL;
}
int16_t kn_features_finalized_min_level(const kn_features *f, size_t i) {
    const kna_feature *x = kna_fin(f, i);
    return x ? x->min : -1;
}
int16_t kn_features_finalized_max_level(const kn_features *f, size_t i) {
    const kna_feature *x = kna_fin(f, i);
    return x ? x->max : -1;
}
const char *kn_features_supported_name(const kn_features *f, size_t i) {
    const kna_feature *x = kna_sup(f, i);
    return x ? x->name : NULL;
}
int16_t kn_features_supported_min_version(const kn_features *f, size_t i) {
    const kna_feature *x = kna_sup(f, i);
    return x ? x->min : -1;
}
int16_t kn_features_supported_max_version(const kn_features *f, size_t i) {
    const kna_feature *x = kna_sup(f, i);
    return x ? x->max : -1;
}

static int kna_feature_copy(kna_feature **out, size_t *countp, kn_str name, int16_t min, int16_t max,
                            size_t cap) {
    if (!*out && !(*out = kn_calloc(cap ? cap : 1, sizeof(**out))))
        return KN_ERR__NOMEM;
    bool ok = true;
    kna_feature *x = &(*out)[(*countp)++];
    x->name = kna_strdup_str(name.len < 0 ? (kn_str){"", 0} : name, &ok);
    x->min = min;
    x->max = max;
    return ok ? 0 : KN_ERR__NOMEM;
}

int kn_admin_describe_features(kn_admin *admin, int timeout_ms, kn_features **featuresp, char *errstr,
                               size_t errstr_size) {
    if (!admin || !featuresp) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_features: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *featuresp = NULL;
    kp_ApiVersionsRequest req;
    kp_ApiVersionsRequest_init(&req);
    req.client_software_name = (kn_str){"kafka-native", 12};
    req.client_software_version = (kn_str){"admin", 5};
    int err = 0;
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_API_VERSIONS, 3, -1, &req,
                              kna_deadline(admin, timeout_ms), "ApiVersions", &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_ApiVersionsResponse *body = resp->body;
    if (body->error_code) {
        err = body->error_code;
        kn_errstr_set(errstr, errstr_size, "ApiVersions: %s", kn_err_message(err));
        knw_resp_free(resp);
        return err;
    }
    kn_features *f = kn_calloc(1, sizeof(*f));
    err = f ? 0 : KN_ERR__NOMEM;
    if (f)
        f->epoch = body->finalized_features_epoch;
    for (int32_t i = 0; !err && i < body->finalized_features.count; i++) {
        const kp_ApiVersionsResponse_FinalizedFeatureKey *k = &body->finalized_features.items[i];
        err = kna_feature_copy(&f->finalized, &f->finalized_count, k->name, k->min_version_level,
                               k->max_version_level, (size_t)body->finalized_features.count);
    }
    for (int32_t i = 0; !err && i < body->supported_features.count; i++) {
        const kp_ApiVersionsResponse_SupportedFeatureKey *k = &body->supported_features.items[i];
        err = kna_feature_copy(&f->supported, &f->supported_count, k->name, k->min_version, k->max_version,
                               (size_t)body->supported_features.count);
    }
    knw_resp_free(resp);
    if (err) {
        kn_features_destroy(f);
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_features: out of memory");
        return err;
    }
    *featuresp = f;
    return KN_OK;
}

/* ---- metadata quorum -------------------------------------------------- */

typedef struct kna_replica_state {
    int32_t id;
    int64_t log_end_offset, last_fetch, last_caught_up;
} kna_replica_state;

struct kn_quorum_info {
    int32_t leader_id, leader_epoch;
    int64_t high_watermark;
    kna_replica_state *replicas[2];
    size_t count[2];
};

void kn_quorum_info_destroy(kn_quorum_info *q) {
    if (!q)
        return;
    kn_free(q->replicas[0]);
    kn_free(q->replicas[1]);
    kn_free(q);
}

int32_t kn_quorum_info_leader_id(const kn_quorum_info *q) { return q ? q->leader_id : -1; }
int32_t kn_quorum_info_leader_epoch(const kn_quorum_info *q) { return q ? q->leader_epoch : -1; }
int64_t kn_quorum_info_high_watermark(const kn_quorum_info *q) { return q ? q->high_watermark : -1; }
size_t kn_quorum_info_replica_count(const kn_quorum_info *q, int observer) {
    return q ? q->count[observer != 0] : 0;
}

static const kna_replica_state *kna_rs(const kn_quorum_info *q, int observer, size_t i) {
    return q && i < q->count[observer != 0] ? &q->replicas[observer != 0][i] : NULL;
}

int32_t kn_quorum_info_replica_id(const kn_quorum_info *q, int observer, size_t i) {
    return kna_rs(q, observer, i) ? kna_rs(q, observer, i)->id : -1;
}
int64_t kn_quorum_info_replica_log_end_offset(const kn_quorum_info *q, int observer, size_t i) {
    return kna_rs(q, observer, i) ? kna_rs(q, observer, i)->log_end_offset : -1;
}
int64_t kn_quorum_info_replica_last_fetch_ms(const kn_quorum_info *q, int observer, size_t i) {
    return kna_rs(q, observer, i) ? kna_rs(q, observer, i)->last_fetch : -1;
}
int64_t kn_quorum_info_replica_last_caught_up_ms(const kn_quorum_info *q, int observer, size_t i) {
    return kna_rs(q, observer, i) ? kna_rs(q, observer, i)->last_caught_up : -1;
}

static int kna_states_copy(kn_quorum_info *q, int k, const kp_DescribeQuorumResponse_ReplicaState_array *a) {
    if (a->count <= 0)
        return 0;
    if (!(q->replicas[k] = kn_calloc((size_t)a->count, sizeof(*q->replicas[k]))))
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < a->count; i++) {
        const kp_DescribeQuorumResponse_ReplicaState *s = &a->items[i];
        q->replicas[k][q->count[k]++] = (kna_replica_state){
            s->replica_id, s->log_end_offset, s->last_fetch_timestamp, s->last_caught_up_timestamp};
    }
    return 0;
}

int kn_admin_describe_metadata_quorum(kn_admin *admin, int timeout_ms, kn_quorum_info **infop, char *errstr,
                                      size_t errstr_size) {
    if (!admin || !infop) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_metadata_quorum: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *infop = NULL;
    kp_DescribeQuorumRequest_PartitionData part;
    kp_DescribeQuorumRequest_PartitionData_init(&part);
    part.partition_index = 0;
    kp_DescribeQuorumRequest_TopicData topic;
    kp_DescribeQuorumRequest_TopicData_init(&topic);
    topic.topic_name = (kn_str){"__cluster_metadata", 18};
    topic.partitions.items = &part;
    topic.partitions.count = 1;
    kp_DescribeQuorumRequest req;
    kp_DescribeQuorumRequest_init(&req);
    req.topics.items = &topic;
    req.topics.count = 1;
    int err = 0;
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_DESCRIBE_QUORUM, -1, -1, &req,
                              kna_deadline(admin, timeout_ms), "DescribeQuorum", &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_DescribeQuorumResponse *body = resp->body;
    const kp_DescribeQuorumResponse_PartitionData *pd = NULL;
    if (body->topics.count >= 1 && body->topics.items[0].partitions.count >= 1)
        pd = &body->topics.items[0].partitions.items[0];
    err = body->error_code ? body->error_code : pd ? pd->error_code : KN_ERR_UNKNOWN_SERVER_ERROR;
    if (err) {
        kn_errstr_set(errstr, errstr_size, "DescribeQuorum: %s",
                      pd ? kn_err_message(err) : "the response has no __cluster_metadata partition");
        knw_resp_free(resp);
        return err;
    }
    kn_quorum_info *q = kn_calloc(1, sizeof(*q));
    err = q ? 0 : KN_ERR__NOMEM;
    if (q) {
        q->leader_id = pd->leader_id;
        q->leader_epoch = pd->leader_epoch;
        q->high_watermark = pd->high_watermark;
        err = kna_states_copy(q, 0, &pd->current_voters);
        if (!err)
            err = kna_states_copy(q, 1, &pd->observers);
    }
    knw_resp_free(resp);
    if (err) {
        kn_quorum_info_destroy(q);
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_metadata_quorum: out of memory");
        return err;
    }
    *infop = q;
    return KN_OK;
}

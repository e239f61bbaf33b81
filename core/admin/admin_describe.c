/*
 * admin_describe.c: the read-only admin operations: list_topics,
 * describe_topics and wait_for_topics (a fresh Metadata request to any
 * broker, as Java's LeastLoadedNodeProvider does, never the shared
 * metadata cache, which holds only what this client registered), and
 * describe_cluster (DescribeCluster, or Metadata on a broker without it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_cluster.h"
#include "proto/generated/kp_metadata.h"

knw_resp *kna_metadata(kn_admin *admin, const char *const *names, size_t n, int64_t deadline, int *errp,
                       char *why, size_t why_size) {
    kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    req.allow_auto_topic_creation = false;
    kp_MetadataRequest_MetadataRequestTopic *topics = NULL;
    if (!names) {
        req.topics.count = -1; /* null: all topics */
    } else {
        topics = kn_calloc(n ? n : 1, sizeof(*topics));
        if (!topics) {
            *errp = KN_ERR__NOMEM;
            kn_errstr_set(why, why_size, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            kp_MetadataRequest_MetadataRequestTopic_init(&topics[i]);
            topics[i].name.ptr = names[i];
            topics[i].name.len = (int32_t)strlen(names[i]);
        }
        req.topics.items = topics;
        req.topics.count = (int32_t)n;
    }
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_METADATA, -1, -1, &req, deadline, "Metadata", errp,
                              why, why_size);
    kn_free(topics);
    return resp;
}

/* ---- list_topics ------------------------------------------------------- */

static int kna_list_cmp(const void *a, const void *b) {
    return strcmp(((const kna_list_entry *)a)->name, ((const kna_list_entry *)b)->name);
}

int kn_admin_list_topics(kn_admin *admin, int flags, int timeout_ms, kn_topic_list **listp, char *errstr,
                         size_t errstr_size) {
    if (!admin || !listp) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_list_topics: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *listp = NULL;
    char why[512] = "";
    int err = 0;
    knw_resp *resp = kna_metadata(admin, NULL, 0, kna_deadline(admin, timeout_ms), &err, why, sizeof(why));
    if (!resp) {
        kn_errstr_set(errstr, errstr_size, "list_topics: %s", why);
        return err;
    }
    const kp_MetadataResponse *md = resp->body;
    kn_topic_list *list = kn_calloc(1, sizeof(*list));
    if (!list || !(list->items = kn_calloc((size_t)md->topics.count + 1, sizeof(*list->items))))
        goto nomem;
    for (int32_t k = 0; k < md->topics.count; k++) {
        const kp_MetadataResponse_MetadataResponseTopic *t = &md->topics.items[k];
        /* Like Java: a topic the broker reports with an error (being
         * deleted, unauthorized) is not listed. */
        if (t->error_code != 0 || t->name.len <= 0)
            continue;
        if (t->is_internal && !(flags & KN_ADMIN_LIST_INTERNAL))
            continue;
        kna_list_entry *e = &list->items[list->count];
        bool ok = true;
        e->name = kna_strdup_str(t->name, &ok);
        if (!ok)
            goto nomem;
        e->has_id = kna_uuid_str(&t->topic_id, e->topic_id);
        e->is_internal = t->is_internal;
        list->count++;
    }
    qsort(list->items, list->count, sizeof(*list->items), kna_list_cmp);
    knw_resp_free(resp);
    *listp = list;
    return KN_OK;
nomem:
    kn_topic_list_destroy(list);
    knw_resp_free(resp);
    kn_errstr_set(errstr, errstr_size, "list_topics: out of memory");
    return KN_ERR__NOMEM;
}

/* ---- describe_topics --------------------------------------------------- */

static int kna_part_cmp(const void *a, const void *b) {
    int32_t x = ((const kn_partition_info *)a)->id, y = ((const kn_partition_info *)b)->id;
    return (x > y) - (x < y);
}

static int32_t *kna_copy_ids(const kp_int32_array *a, size_t *countp, bool *okp) {
    size_t n = a->count > 0 ? (size_t)a->count : 0;
    *countp = n;
    int32_t *ids = kn_malloc((n ? n : 1) * sizeof(*ids));
    if (!ids) {
        *okp = false;
        *countp = 0;
        return NULL;
    }
    if (n)
        memcpy(ids, a->items, n * sizeof(*ids));
    return ids;
}

/* Fills desc from the broker's answer for its topic. */
static bool kna_fill_desc(kna_topic_desc *d, const kp_MetadataResponse_MetadataResponseTopic *t) {
    bool ok = true;
    d->err = t->error_code;
    if (d->err)
        return true;
    d->has_id = kna_uuid_str(&t->topic_id, d->topic_id);
    d->is_internal = t->is_internal;
    size_t n = t->partitions.count > 0 ? (size_t)t->partitions.count : 0;
    d->partitions = kn_calloc(n ? n : 1, sizeof(*d->partitions));
    if (!d->partitions)
        return false;
    for (size_t p = 0; p < n; p++) {
        const kp_MetadataResponse_MetadataResponsePartition *mp = &t->partitions.items[p];
        kn_partition_info *pi = &d->partitions[p];
        d->partition_count++;
        pi->id = mp->partition_index;
        pi->err = mp->error_code;
        pi->leader = mp->leader_id;
        pi->leader_epoch = mp->leader_epoch;
        pi->replicas = kna_copy_ids(&mp->replica_nodes, &pi->replica_count, &ok);
        pi->isr = kna_copy_ids(&mp->isr_nodes, &pi->isr_count, &ok);
        pi->offline = kna_copy_ids(&mp->offline_replicas, &pi->offline_count, &ok);
    }
    qsort(d->partitions, d->partition_count, sizeof(*d->partitions), kna_part_cmp);
    return ok;
}

int kn_admin_describe_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                             kn_topic_descriptions **descp, char *errstr, size_t errstr_size) {
    if (!admin || !descp || (name_count && !names) || name_count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_topics: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    for (size_t k = 0; k < name_count; k++)
        if (!names[k]) {
            kn_errstr_set(errstr, errstr_size, "kn_admin_describe_topics: name %zu is NULL", k);
            return KN_ERR__INVALID_ARG;
        }
    int err = KN_ERR__NOMEM;
    char why[512] = "";
    knw_resp *resp = NULL;
    const char **ask = kn_calloc(name_count + 1, sizeof(*ask));
    kn_topic_descriptions *desc = kn_calloc(1, sizeof(*desc));
    if (!ask || !desc || !(desc->items = kn_calloc(name_count + 1, sizeof(*desc->items))))
        goto fail;
    /* One entry per distinct name; empty names are not representable. */
    size_t nask = 0;
    for (size_t k = 0; k < name_count; k++) {
        bool dup = false;
        for (size_t j = 0; j < desc->count && !dup; j++)
            dup = strcmp(desc->items[j].name, names[k]) == 0;
        if (dup)
            continue;
        kna_topic_desc *d = &desc->items[desc->count];
        if (!(d->name = kn_strdup(names[k])))
            goto fail;
        desc->count++;
        if (names[k][0] == '\0') {
            d->err = KN_ERR_INVALID_TOPIC_EXCEPTION;
            if (!(d->message = kn_strdup("The given topic name '' cannot be represented "
                                         "in a request.")))
                goto fail;
        } else {
            ask[nask++] = names[k];
        }
    }
    if (nask > 0) {
        resp = kna_metadata(admin, ask, nask, kna_deadline(admin, timeout_ms), &err, why, sizeof(why));
        if (!resp) {
            kn_errstr_set(errstr, errstr_size, "describe_topics: %s", why);
            goto out;
        }
        const kp_MetadataResponse *md = resp->body;
        for (size_t i = 0; i < desc->count; i++) {
            kna_topic_desc *d = &desc->items[i];
            if (d->err)
                continue;
            const kp_MetadataResponse_MetadataResponseTopic *t = NULL;
            for (int32_t k = 0; k < md->topics.count && !t; k++)
                if (kna_slice_is(md->topics.items[k].name, d->name))
                    t = &md->topics.items[k];
            if (!t) {
                d->err = KN_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            } else if (!kna_fill_desc(d, t)) {
                err = KN_ERR__NOMEM;
                goto fail;
            }
        }
    }
    knw_resp_free(resp);
    kn_free(ask);
    *descp = desc;
    return KN_OK;
fail:
    kn_errstr_set(errstr, errstr_size, "describe_topics: out of memory");
out:
    knw_resp_free(resp);
    kn_free(ask);
    kn_topic_descriptions_destroy(desc);
    return err;
}

/* ---- describe_cluster -------------------------------------------------- */

static int kna_broker_cmp(const void *a, const void *b) {
    int32_t x = ((const kna_broker *)a)->id, y = ((const kna_broker *)b)->id;
    return (x > y) - (x < y);
}

/* Adds one broker (strings copied). */
static bool kna_add_broker(kn_cluster_description *cd, int32_t id, kn_str host, int32_t port, kn_str rack) {
    bool ok = true;
    kna_broker *b = &cd->brokers[cd->broker_count++];
    b->id = id;
    b->port = port;
    b->host = kna_strdup_str(host, &ok);
    b->rack = kna_strdup_str(rack, &ok);
    return ok;
}

int kn_admin_describe_cluster(kn_admin *admin, int timeout_ms, kn_cluster_description **descp, char *errstr,
                              size_t errstr_size) {
    if (!admin || !descp) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_cluster: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    int64_t deadline = kna_deadline(admin, timeout_ms);
    char why[512] = "";
    int err = 0;
    bool ok = true;
    kn_cluster_description *cd = NULL;

    kp_DescribeClusterRequest req;
    kp_DescribeClusterRequest_init(&req);
    req.endpoint_type = 1; /* brokers */
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_DESCRIBE_CLUSTER, -1, -1, &req, deadline,
                              "DescribeCluster", &err, why, sizeof(why));
    bool via_metadata = !resp && err == KN_ERR__UNSUPPORTED_VERSION;
    if (via_metadata) {
        /* An empty (not null) topic list: brokers and controller only. */
        static const char *const none[1] = {NULL};
        resp = kna_metadata(admin, none, 0, deadline, &err, why, sizeof(why));
    }
    if (!resp) {
        kn_errstr_set(errstr, errstr_size, "describe_cluster: %s", why);
        return err;
    }
    if (!(cd = kn_calloc(1, sizeof(*cd))))
        goto nomem;
    if (!via_metadata) {
        const kp_DescribeClusterResponse *dc = resp->body;
        if (dc->error_code) {
            err = dc->error_code;
            if (dc->error_message.len >= 0)
                kn_errstr_set(errstr, errstr_size, "describe_cluster: %s: %.*s", kn_err_name(err),
                              (int)dc->error_message.len, dc->error_message.ptr);
            else
                kn_errstr_set(errstr, errstr_size, "describe_cluster: %s", kn_err_name(err));
            goto out;
        }
        cd->cluster_id = kna_strdup_str(dc->cluster_id, &ok);
        cd->controller_id = dc->controller_id;
        cd->brokers = kn_calloc((size_t)dc->brokers.count + 1, sizeof(*cd->brokers));
        if (!cd->brokers)
            goto nomem;
        for (int32_t k = 0; k < dc->brokers.count; k++) {
            const kp_DescribeClusterResponse_DescribeClusterBroker *b = &dc->brokers.items[k];
            ok = kna_add_broker(cd, b->broker_id, b->host, b->port, b->rack) && ok;
        }
    } else {
        const kp_MetadataResponse *md = resp->body;
        cd->cluster_id = kna_strdup_str(md->cluster_id, &ok);
        cd->controller_id = md->controller_id;
        cd->brokers = kn_calloc((size_t)md->brokers.count + 1, sizeof(*cd->brokers));
        if (!cd->brokers)
            goto nomem;
        for (int32_t k = 0; k < md->brokers.count; k++) {
            const kp_MetadataResponse_MetadataResponseBroker *b = &md->brokers.items[k];
            ok = kna_add_broker(cd, b->node_id, b->host, b->port, b->rack) && ok;
        }
    }
    if (!ok)
        goto nomem;
    qsort(cd->brokers, cd->broker_count, sizeof(*cd->brokers), kna_broker_cmp);
    knw_resp_free(resp);
    *descp = cd;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "describe_cluster: out of memory");
out:
    kn_cluster_description_destroy(cd);
    knw_resp_free(resp);
    return err;
}

/* ---- wait_for_topics --------------------------------------------------- */

/* NULL when every named topic is in md with all partitions led, else
 * the first one that is not (and why, in why). */
static const char *kna_not_ready(const kp_MetadataResponse *md, const char *const *names, size_t n, char *why,
                                 size_t why_size) {
    for (size_t i = 0; i < n; i++) {
        const kp_MetadataResponse_MetadataResponseTopic *t = NULL;
        for (int32_t k = 0; k < md->topics.count && !t; k++)
            if (kna_slice_is(md->topics.items[k].name, names[i]))
                t = &md->topics.items[k];
        if (!t) {
            kn_errstr_set(why, why_size, "not in metadata");
            return names[i];
        }
        if (t->error_code) {
            kn_errstr_set(why, why_size, "%s", kn_err_name(t->error_code));
            return names[i];
        }
        if (t->partitions.count <= 0) {
            kn_errstr_set(why, why_size, "no partitions yet");
            return names[i];
        }
        for (int32_t p = 0; p < t->partitions.count; p++) {
            const kp_MetadataResponse_MetadataResponsePartition *mp = &t->partitions.items[p];
            if (mp->error_code || mp->leader_id < 0) {
                kn_errstr_set(why, why_size, "partition %d has no leader (%s)", (int)mp->partition_index,
                              kn_err_name(mp->error_code));
                return names[i];
            }
        }
    }
    return NULL;
}

int kn_admin_wait_for_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                             char *errstr, size_t errstr_size) {
    if (!admin || (name_count && !names) || name_count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_wait_for_topics: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    for (size_t k = 0; k < name_count; k++)
        if (!names[k] || !names[k][0]) {
            kn_errstr_set(errstr, errstr_size, "kn_admin_wait_for_topics: name %zu is empty", k);
            return KN_ERR__INVALID_ARG;
        }
    if (name_count == 0)
        return KN_OK;
    int64_t deadline = kna_deadline(admin, timeout_ms);
    char why[512] = "", state[256] = "";
    const char *missing = NULL;
    char missing_name[256] = "";
    for (int attempt = 0;; attempt++) {
        int err = 0;
        knw_resp *resp = kna_metadata(admin, names, name_count, deadline, &err, why, sizeof(why));
        if (!resp) {
            if (err == KN_ERR__TIMED_OUT)
                break;
            kn_errstr_set(errstr, errstr_size, "wait_for_topics: %s", why);
            return err;
        }
        missing = kna_not_ready(resp->body, names, name_count, state, sizeof(state));
        if (missing)
            snprintf(missing_name, sizeof(missing_name), "%s", missing);
        knw_resp_free(resp);
        if (!missing)
            return KN_OK;
        if (kna_remaining(deadline) <= 0)
            break;
        /* Leaders appear within a few hundred ms of creation: poll at
         * retry.backoff.ms, growing to retry.backoff.max.ms. */
        kna_backoff(admin, attempt, deadline);
    }
    if (missing_name[0])
        kn_errstr_set(errstr, errstr_size, "wait_for_topics: timed out; topic '%s': %s", missing_name, state);
    else
        kn_errstr_set(errstr, errstr_size, "wait_for_topics: timed out (%s)", why);
    return KN_ERR__TIMED_OUT;
}

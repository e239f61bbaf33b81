/*
 * admin_topics.c: create_topics and delete_topics.
 *
 * Routing (Java's ControllerNodeProvider): the request goes to the
 * controller the metadata names; under KRaft that is any live broker,
 * which forwards to the quorum. A topic answered NOT_CONTROLLER (or
 * THROTTLING_QUOTA_EXCEEDED, which Java retries by default) is resent
 * after a metadata refresh and a backoff, until the deadline; only those
 * topics are resent, so one that already succeeded never comes back as
 * TOPIC_ALREADY_EXISTS. Every other per-topic error is final and stays
 * in that topic's entry.
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_create_topics.h"
#include "proto/generated/kp_delete_topics.h"

/* Per-topic errors that are resent rather than reported. */
static bool kna_topic_retriable(int err) {
    return err == KN_ERR_NOT_CONTROLLER || err == KN_ERR_THROTTLING_QUOTA_EXCEEDED;
}

/* Before resending: refresh metadata when the controller moved, then
 * back off. */
static void kna_before_retry(kn_admin *admin, bool refresh, int attempt, int64_t deadline_ms) {
    if (refresh) {
        int64_t asked = knw_now_ms();
        knw_metadata_request_refresh(admin->client, false, "admin: NOT_CONTROLLER");
        int err = 0;
        knw_metadata *md = knw_metadata_wait(admin->client, false, asked, kna_remaining(deadline_ms), &err);
        if (md)
            knw_metadata_release(md);
    }
    kna_backoff(admin, attempt, deadline_ms);
}

/* Index of the pending entry named (ptr, len), or -1. */
static ptrdiff_t kna_find_pending(const kn_topic_results *res, const bool *pending, kn_str name) {
    if (name.len < 0)
        return -1;
    for (size_t i = 0; i < res->count; i++)
        if (pending[i] && strlen(res->items[i].name) == (size_t)name.len &&
            memcmp(res->items[i].name, name.ptr, (size_t)name.len) == 0)
            return (ptrdiff_t)i;
    return -1;
}

/* Fills results with one entry per distinct name (first occurrence wins,
 * as in Java); map[k] gets the entry index of names[k] or -1 for a later
 * duplicate. Empty names fail their entry at once. */
static int kna_dedupe(kn_topic_results **resp, const char *const *names, size_t n, ptrdiff_t *map,
                      bool *pending) {
    size_t distinct = 0;
    for (size_t k = 0; k < n; k++) {
        map[k] = (ptrdiff_t)distinct;
        for (size_t j = 0; j < k; j++)
            if (map[j] >= 0 && strcmp(names[j], names[k]) == 0) {
                map[k] = -1;
                break;
            }
        if (map[k] >= 0)
            distinct++;
    }
    kn_topic_results *res = kna_topic_results_new(distinct);
    if (!res)
        return KN_ERR__NOMEM;
    for (size_t k = 0; k < n; k++) {
        if (map[k] < 0)
            continue;
        size_t i = (size_t)map[k];
        if (kna_topic_result_set_name(res, i, names[k], (int32_t)strlen(names[k]))) {
            kn_topic_results_destroy(res);
            return KN_ERR__NOMEM;
        }
        pending[i] = names[k][0] != '\0';
        if (!pending[i]) {
            static const char msg[] = "The given topic name '' cannot be represented in a request.";
            if (kna_topic_result_set_error(res, i, KN_ERR_INVALID_TOPIC_EXCEPTION, msg,
                                           (int32_t)strlen(msg))) {
                kn_topic_results_destroy(res);
                return KN_ERR__NOMEM;
            }
        }
    }
    *resp = res;
    return 0;
}

static size_t kna_count_pending(const bool *pending, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += pending[i];
    return c;
}

/* Gives every still-pending entry err (when a resend could not be made
 * or the broker left a topic out). */
static int kna_fail_pending(kn_topic_results *res, bool *pending, int err, const char *msg) {
    for (size_t i = 0; i < res->count; i++)
        if (pending[i]) {
            pending[i] = false;
            if (kna_topic_result_set_error(res, i, err, msg, (int32_t)strlen(msg)))
                return KN_ERR__NOMEM;
        }
    return 0;
}

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* ---- create_topics ----------------------------------------------------- */

/* Builds the request for the pending entries; arrays owned by the caller
 * through *bufp (one allocation). spec[i] is the kn_new_topic of entry i. */
static int kna_create_request(kp_CreateTopicsRequest *req, void **bufp, const kn_topic_results *res,
                              const bool *pending, kn_new_topic *const *spec, int validate_only,
                              int timeout_ms) {
    size_t n = kna_count_pending(pending, res->count), nconf = 0, nassign = 0;
    for (size_t i = 0; i < res->count; i++)
        if (pending[i]) {
            nconf += spec[i]->config_count;
            nassign += spec[i]->assignment_count;
        }
    size_t size = n * sizeof(kp_CreateTopicsRequest_CreatableTopic) +
                  nconf * sizeof(kp_CreateTopicsRequest_CreatableTopicConfig) +
                  nassign * sizeof(kp_CreateTopicsRequest_CreatableReplicaAssignment);
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    kp_CreateTopicsRequest_CreatableTopic *topics = (void *)buf;
    kp_CreateTopicsRequest_CreatableTopicConfig *configs = (void *)(topics + n);
    kp_CreateTopicsRequest_CreatableReplicaAssignment *assigns = (void *)(configs + nconf);

    kp_CreateTopicsRequest_init(req);
    req->topics.items = topics;
    req->topics.count = (int32_t)n;
    req->timeout_ms = timeout_ms;
    req->validate_only = validate_only != 0;
    size_t t = 0;
    for (size_t i = 0; i < res->count; i++) {
        if (!pending[i])
            continue;
        const kn_new_topic *nt = spec[i];
        kp_CreateTopicsRequest_CreatableTopic *ct = &topics[t++];
        kp_CreateTopicsRequest_CreatableTopic_init(ct);
        ct->name = kna_cstr(nt->name);
        ct->num_partitions = nt->partitions;
        ct->replication_factor = nt->replication_factor;
        ct->configs.items = configs;
        ct->configs.count = (int32_t)nt->config_count;
        for (size_t c = 0; c < nt->config_count; c++) {
            kp_CreateTopicsRequest_CreatableTopicConfig_init(&configs[c]);
            configs[c].name = kna_cstr(nt->configs[c].key);
            configs[c].value = kna_cstr(nt->configs[c].value);
        }
        configs += nt->config_count;
        ct->assignments.items = assigns;
        ct->assignments.count = (int32_t)nt->assignment_count;
        for (size_t a = 0; a < nt->assignment_count; a++) {
            kp_CreateTopicsRequest_CreatableReplicaAssignment_init(&assigns[a]);
            assigns[a].partition_index = nt->assignments[a].partition;
            assigns[a].broker_ids.items = nt->assignments[a].broker_ids;
            assigns[a].broker_ids.count = (int32_t)nt->assignments[a].broker_count;
        }
        assigns += nt->assignment_count;
    }
    *bufp = buf;
    return 0;
}

/* Records one response; returns whether a resend is wanted (and whether
 * it needs a metadata refresh) through *retryp / *refreshp. */
static int kna_create_absorb(kn_topic_results *res, bool *pending, const kp_CreateTopicsResponse *body,
                             bool *retryp, bool *refreshp) {
    for (int32_t k = 0; k < body->topics.count; k++) {
        const kp_CreateTopicsResponse_CreatableTopicResult *tr = &body->topics.items[k];
        ptrdiff_t idx = kna_find_pending(res, pending, tr->name);
        if (idx < 0)
            continue; /* a topic we did not ask for (or twice): ignore, like Java */
        size_t i = (size_t)idx;
        if (kna_topic_retriable(tr->error_code)) {
            *retryp = true;
            if (tr->error_code == KN_ERR_NOT_CONTROLLER)
                *refreshp = true;
            if (kna_topic_result_set_error(res, i, tr->error_code, tr->error_message.ptr,
                                           tr->error_message.len))
                return KN_ERR__NOMEM;
            continue; /* stays pending */
        }
        pending[i] = false;
        if (kna_topic_result_set_error(res, i, tr->error_code, tr->error_message.ptr, tr->error_message.len))
            return KN_ERR__NOMEM;
        if (tr->error_code == 0) {
            kna_topic_result *r = &res->items[i];
            r->has_id = kna_uuid_str(&tr->topic_id, r->topic_id);
            r->partitions = tr->num_partitions;
            r->replication_factor = tr->replication_factor;
        }
    }
    return 0;
}

/* What a per-topic controller call (create, delete) does after one round
 * of its retry loop. */
typedef enum kna_round { KNA_ROUND_AGAIN, KNA_ROUND_DONE, KNA_ROUND_FAIL, KNA_ROUND_NOMEM } kna_round;

/* got: a response came back and was absorbed (retry / refresh say what it
 * asked for); otherwise err / why say why the call failed. A failure on
 * the first attempt fails the whole call; a later one (after some topics
 * were answered) fails only the topics still pending. */
static kna_round kna_topic_round_end(kn_admin *admin, kn_topic_results *res, bool *pending, bool got,
                                     int attempt, int err, const char *why, bool retry, bool refresh,
                                     int64_t deadline) {
    if (!got) {
        if (attempt == 0)
            return KNA_ROUND_FAIL; /* nothing came back at all: the call failed */
        return kna_fail_pending(res, pending, err, why) ? KNA_ROUND_NOMEM : KNA_ROUND_DONE;
    }
    if (!retry) {
        /* The broker must answer for every topic; Java checks too. */
        return kna_fail_pending(res, pending, KN_ERR_UNKNOWN_SERVER_ERROR,
                                "The controller response did not contain a result for this topic")
                   ? KNA_ROUND_NOMEM
                   : KNA_ROUND_DONE;
    }
    kna_before_retry(admin, refresh, attempt, deadline);
    if (kna_remaining(deadline) <= 0) {
        /* Keep the last broker error as the message: it says why. */
        for (size_t i = 0; i < res->count; i++)
            if (pending[i]) {
                pending[i] = false;
                res->items[i].err = KN_ERR__TIMED_OUT;
            }
        return KNA_ROUND_DONE;
    }
    return KNA_ROUND_AGAIN;
}

int kn_admin_create_topics(kn_admin *admin, kn_new_topic *const *topics, size_t topic_count, int flags,
                           int timeout_ms, kn_topic_results **resultsp, char *errstr, size_t errstr_size) {
    if (!admin || !resultsp || (topic_count && !topics) || topic_count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_create_topics: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    for (size_t k = 0; k < topic_count; k++)
        if (!topics[k]) {
            kn_errstr_set(errstr, errstr_size, "kn_admin_create_topics: topic %zu is NULL", k);
            return KN_ERR__INVALID_ARG;
        }
    int64_t deadline = kna_deadline(admin, timeout_ms);
    char why[512] = "";
    int err = KN_ERR__NOMEM;
    kn_topic_results *res = NULL;
    const char **names = kn_calloc(topic_count + 1, sizeof(*names));
    ptrdiff_t *map = kn_calloc(topic_count + 1, sizeof(*map));
    bool *pending = kn_calloc(topic_count + 1, sizeof(*pending));
    kn_new_topic **spec = kn_calloc(topic_count + 1, sizeof(*spec));
    if (!names || !map || !pending || !spec)
        goto fail;
    for (size_t k = 0; k < topic_count; k++)
        names[k] = topics[k]->name;
    if ((err = kna_dedupe(&res, names, topic_count, map, pending)) != 0)
        goto fail;
    for (size_t k = 0; k < topic_count; k++)
        if (map[k] >= 0)
            spec[map[k]] = topics[k];

    for (int attempt = 0; kna_count_pending(pending, res->count) > 0; attempt++) {
        kp_CreateTopicsRequest req;
        void *buf = NULL;
        if ((err = kna_create_request(&req, &buf, res, pending, spec, flags & KN_ADMIN_VALIDATE_ONLY,
                                      kna_remaining(deadline))) != 0)
            goto fail;
        knw_resp *resp = kna_call(admin, KNW_NODE_CONTROLLER, KP_API_CREATE_TOPICS, -1, -1, &req, deadline,
                                  "CreateTopics", &err, why, sizeof(why));
        kn_free(buf);
        bool retry = false, refresh = false;
        if (resp) {
            err = kna_create_absorb(res, pending, resp->body, &retry, &refresh);
            knw_resp_free(resp);
            if (err)
                goto fail;
        }
        kna_round next = kna_topic_round_end(admin, res, pending, resp != NULL, attempt, err, why, retry,
                                             refresh, deadline);
        if (next == KNA_ROUND_FAIL)
            goto fail;
        if (next == KNA_ROUND_NOMEM)
            goto nomem;
        if (next == KNA_ROUND_DONE)
            break;
    }
    kn_free(names);
    kn_free(map);
    kn_free(pending);
    kn_free(spec);
    *resultsp = res;
    return KN_OK;

nomem:
    err = KN_ERR__NOMEM;
fail:
    if (err == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "kn_admin_create_topics: out of memory");
    else
        kn_errstr_set(errstr, errstr_size, "%s", why);
    kn_topic_results_destroy(res);
    kn_free(names);
    kn_free(map);
    kn_free(pending);
    kn_free(spec);
    return err;
}

/* ---- delete_topics ----------------------------------------------------- */

/* Builds a DeleteTopics request for the pending names: by name in the v6
 * topics array, or (legacy) the v1-5 topic_names array. */
static int kna_delete_request(kp_DeleteTopicsRequest *req, void **bufp, const kn_topic_results *res,
                              const bool *pending, bool legacy, int timeout_ms) {
    size_t n = kna_count_pending(pending, res->count);
    size_t elem = legacy ? sizeof(kn_str) : sizeof(kp_DeleteTopicsRequest_DeleteTopicState);
    char *buf = kn_calloc(n ? n : 1, elem);
    if (!buf)
        return KN_ERR__NOMEM;
    kp_DeleteTopicsRequest_init(req);
    req->timeout_ms = timeout_ms;
    size_t t = 0;
    if (legacy) {
        req->topic_names.items = (kn_str *)(void *)buf;
        req->topic_names.count = (int32_t)n;
    } else {
        req->topics.items = (kp_DeleteTopicsRequest_DeleteTopicState *)(void *)buf;
        req->topics.count = (int32_t)n;
    }
    for (size_t i = 0; i < res->count; i++) {
        if (!pending[i])
            continue;
        if (legacy)
            req->topic_names.items[t++] = kna_cstr(res->items[i].name);
        else {
            kp_DeleteTopicsRequest_DeleteTopicState_init(&req->topics.items[t]);
            req->topics.items[t++].name = kna_cstr(res->items[i].name);
        }
    }
    *bufp = buf;
    return 0;
}

static int kna_delete_absorb(kn_topic_results *res, bool *pending, const kp_DeleteTopicsResponse *body,
                             bool *retryp, bool *refreshp) {
    for (int32_t k = 0; k < body->responses.count; k++) {
        const kp_DeleteTopicsResponse_DeletableTopicResult *tr = &body->responses.items[k];
        ptrdiff_t idx = kna_find_pending(res, pending, tr->name);
        if (idx < 0)
            continue;
        size_t i = (size_t)idx;
        if (kna_topic_result_set_error(res, i, tr->error_code, tr->error_message.ptr, tr->error_message.len))
            return KN_ERR__NOMEM;
        if (kna_topic_retriable(tr->error_code)) {
            *retryp = true;
            if (tr->error_code == KN_ERR_NOT_CONTROLLER)
                *refreshp = true;
            continue;
        }
        pending[i] = false;
        if (tr->error_code == 0)
            res->items[i].has_id = kna_uuid_str(&tr->topic_id, res->items[i].topic_id);
    }
    return 0;
}

int kn_admin_delete_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                           kn_topic_results **resultsp, char *errstr, size_t errstr_size) {
    if (!admin || !resultsp || (name_count && !names) || name_count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_delete_topics: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    for (size_t k = 0; k < name_count; k++)
        if (!names[k]) {
            kn_errstr_set(errstr, errstr_size, "kn_admin_delete_topics: name %zu is NULL", k);
            return KN_ERR__INVALID_ARG;
        }
    int64_t deadline = kna_deadline(admin, timeout_ms);
    char why[512] = "";
    int err = KN_ERR__NOMEM;
    kn_topic_results *res = NULL;
    ptrdiff_t *map = kn_calloc(name_count + 1, sizeof(*map));
    bool *pending = kn_calloc(name_count + 1, sizeof(*pending));
    if (!map || !pending)
        goto fail;
    if ((err = kna_dedupe(&res, names, name_count, map, pending)) != 0)
        goto fail;

    /* v6 (by name inside topic states) first; a broker without it gets
     * the v1-5 name list. */
    bool legacy = false;
    for (int attempt = 0; kna_count_pending(pending, res->count) > 0; attempt++) {
        kp_DeleteTopicsRequest req;
        void *buf = NULL;
        if ((err = kna_delete_request(&req, &buf, res, pending, legacy, kna_remaining(deadline))) != 0)
            goto fail;
        knw_resp *resp = kna_call(admin, KNW_NODE_CONTROLLER, KP_API_DELETE_TOPICS, legacy ? -1 : 6,
                                  legacy ? 5 : -1, &req, deadline, "DeleteTopics", &err, why, sizeof(why));
        kn_free(buf);
        if (!resp && err == KN_ERR__UNSUPPORTED_VERSION && !legacy) {
            legacy = true;
            continue;
        }
        bool retry = false, refresh = false;
        if (resp) {
            err = kna_delete_absorb(res, pending, resp->body, &retry, &refresh);
            knw_resp_free(resp);
            if (err)
                goto fail;
        }
        kna_round next = kna_topic_round_end(admin, res, pending, resp != NULL, attempt, err, why, retry,
                                             refresh, deadline);
        if (next == KNA_ROUND_FAIL)
            goto fail;
        if (next == KNA_ROUND_NOMEM)
            goto nomem;
        if (next == KNA_ROUND_DONE)
            break;
    }
    kn_free(map);
    kn_free(pending);
    *resultsp = res;
    return KN_OK;

nomem:
    err = KN_ERR__NOMEM;
fail:
    if (err == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "kn_admin_delete_topics: out of memory");
    else
        kn_errstr_set(errstr, errstr_size, "%s", why);
    kn_topic_results_destroy(res);
    kn_free(map);
    kn_free(pending);
    return err;
}

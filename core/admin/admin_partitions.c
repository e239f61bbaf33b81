/*
 * admin_partitions.c: create_partitions (CreatePartitions).
 *
 * Routed as create_topics (Java's ControllerNodeProvider): to the
 * controller the metadata names, which under KRaft forwards to the
 * quorum; a topic answered NOT_CONTROLLER is resent after a metadata
 * refresh, THROTTLING_QUOTA_EXCEEDED after a backoff, and only those
 * topics are resent. Every other per-topic error is final.
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_create_partitions.h"

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Builds the request for the pending topics; arrays in *bufp. */
static int kna_cp_request(kp_CreatePartitionsRequest *req, void **bufp, const kn_topic_results *res,
                          const bool *pending, const kn_new_partitions *const *spec, int flags,
                          int timeout_ms) {
    size_t n = 0, rows = 0;
    for (size_t i = 0; i < res->count; i++)
        if (pending[i]) {
            n++;
            rows += spec[i]->assignments ? spec[i]->assignment_count : 0;
        }
    char *buf = kn_calloc(1, n * sizeof(kp_CreatePartitionsRequest_CreatePartitionsTopic) +
                                 rows * sizeof(kp_CreatePartitionsRequest_CreatePartitionsAssignment) + 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    kp_CreatePartitionsRequest_CreatePartitionsTopic *topics = (void *)buf;
    kp_CreatePartitionsRequest_CreatePartitionsAssignment *asg = (void *)(topics + n);
    kp_CreatePartitionsRequest_init(req);
    req->topics.items = topics;
    req->timeout_ms = timeout_ms;
    req->validate_only = (flags & KN_ADMIN_VALIDATE_ONLY) != 0;
    for (size_t i = 0; i < res->count; i++) {
        if (!pending[i])
            continue;
        const kn_new_partitions *np = spec[i];
        kp_CreatePartitionsRequest_CreatePartitionsTopic *t = &topics[req->topics.count++];
        kp_CreatePartitionsRequest_CreatePartitionsTopic_init(t);
        t->name = kna_cstr(np->topic);
        t->count = np->total_count;
        if (!np->assignments) {
            t->assignments.count = -1; /* null: the controller places them */
            continue;
        }
        t->assignments.items = asg;
        t->assignments.count = (int32_t)np->assignment_count;
        for (size_t r = 0; r < np->assignment_count; r++) {
            kp_CreatePartitionsRequest_CreatePartitionsAssignment_init(&asg[r]);
            asg[r].broker_ids.items = (int32_t *)(np->assignments + r * np->replicas);
            asg[r].broker_ids.count = (int32_t)np->replicas;
        }
        asg += np->assignment_count;
    }
    return 0;
}

int kn_admin_create_partitions(kn_admin *admin, const kn_new_partitions *specs, size_t count, int flags,
                               int timeout_ms, kn_topic_results **resultsp, char *errstr,
                               size_t errstr_size) {
    static const char fn[] = "kn_admin_create_partitions";
    if (!admin || !resultsp || (count && !specs) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!specs[k].topic || (specs[k].assignments && (!specs[k].replicas || specs[k].replicas > 0x7fff ||
                                                         specs[k].assignment_count > 0x7fffffff))) {
            kn_errstr_set(errstr, errstr_size, "%s: spec %zu (%s) is malformed", fn, k,
                          specs[k].topic ? specs[k].topic : "NULL topic");
            return KN_ERR__INVALID_ARG;
        }
    int64_t deadline = kna_deadline(admin, timeout_ms);
    char why[512] = "";
    int err = KN_ERR__NOMEM;
    const kn_new_partitions **spec = kn_calloc(count ? count : 1, sizeof(*spec));
    bool *pending = kn_calloc(count ? count : 1, sizeof(*pending));
    size_t n = 0;
    for (size_t k = 0; spec && k < count; k++) { /* a topic given twice: the first spec wins, as Java's map */
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strcmp(spec[j]->topic, specs[k].topic) == 0;
        if (!seen)
            spec[n++] = &specs[k];
    }
    kn_topic_results *res = spec && pending ? kna_topic_results_new(n) : NULL;
    if (!res)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (kna_topic_result_set_name(res, i, spec[i]->topic, (int32_t)strlen(spec[i]->topic)))
            goto fail;
        pending[i] = true;
    }
    for (int attempt = 0;; attempt++) {
        size_t left = 0;
        for (size_t i = 0; i < n; i++)
            left += pending[i];
        if (!left)
            break;
        kp_CreatePartitionsRequest req;
        void *buf = NULL;
        if ((err = kna_cp_request(&req, &buf, res, pending, spec, flags, kna_remaining(deadline))) != 0)
            goto fail;
        knw_resp *resp = kna_call(admin, KNW_NODE_CONTROLLER, KP_API_CREATE_PARTITIONS, -1, -1, &req,
                                  deadline, "CreatePartitions", &err, why, sizeof(why));
        kn_free(buf);
        if (!resp) {
            if (attempt == 0)
                goto fail; /* nothing answered: the call failed */
            for (size_t i = 0; i < n; i++)
                if (pending[i] && kna_topic_result_set_error(res, i, err, why, (int32_t)strlen(why)))
                    goto nomem;
            break;
        }
        bool retry = false, refresh = false;
        const kp_CreatePartitionsResponse *body = resp->body;
        for (int32_t k = 0; k < body->results.count; k++) {
            const kp_CreatePartitionsResponse_CreatePartitionsTopicResult *tr = &body->results.items[k];
            for (size_t i = 0; i < n; i++) {
                if (!pending[i] || tr->name.len < 0 || strlen(spec[i]->topic) != (size_t)tr->name.len ||
                    memcmp(spec[i]->topic, tr->name.ptr, (size_t)tr->name.len) != 0)
                    continue;
                if (kna_topic_result_set_error(res, i, tr->error_code, tr->error_message.ptr,
                                               tr->error_message.len)) {
                    knw_resp_free(resp);
                    goto nomem;
                }
                if (tr->error_code == KN_ERR_NOT_CONTROLLER ||
                    tr->error_code == KN_ERR_THROTTLING_QUOTA_EXCEEDED) {
                    retry = true;
                    refresh = refresh || tr->error_code == KN_ERR_NOT_CONTROLLER;
                } else {
                    pending[i] = false;
                }
            }
        }
        knw_resp_free(resp);
        if (!retry) {
            static const char missing[] = "The controller response did not contain a result for this topic";
            for (size_t i = 0; i < n; i++)
                if (pending[i]) {
                    pending[i] = false;
                    if (kna_topic_result_set_error(res, i, KN_ERR_UNKNOWN_SERVER_ERROR, missing,
                                                   (int32_t)sizeof(missing) - 1))
                        goto nomem;
                }
            break;
        }
        if (refresh) {
            int64_t asked = knw_now_ms();
            knw_metadata_request_refresh(admin->client, false, "admin: NOT_CONTROLLER");
            int merr = 0;
            knw_metadata *md = knw_metadata_wait(admin->client, false, asked, kna_remaining(deadline), &merr);
            if (md)
                knw_metadata_release(md);
        }
        kna_backoff(admin, attempt, deadline);
        if (kna_remaining(deadline) <= 0) {
            for (size_t i = 0; i < n; i++)
                if (pending[i])
                    res->items[i].err = KN_ERR__TIMED_OUT; /* the message is the last broker error */
            break;
        }
    }
    kn_free(spec);
    kn_free(pending);
    *resultsp = res;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
fail:
    if (err == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    else
        kn_errstr_set(errstr, errstr_size, "%s", why);
    kn_topic_results_destroy(res);
    kn_free(spec);
    kn_free(pending);
    return err;
}

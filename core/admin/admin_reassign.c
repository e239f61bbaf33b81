/*
 * admin_reassign.c: elect_leaders (ElectLeaders v1+),
 * alter_partition_reassignments and list_partition_reassignments, each
 * to the controller the metadata names (Java's ControllerNodeProvider;
 * a KRaft broker forwards them), resent after a metadata refresh while
 * the answer is NOT_CONTROLLER, and the result object kn_reassignments.
 * Per-partition outcomes are kn_topic_partition_list entries with their
 * error (the broker's messages are not kept).
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_alter_partition_reassignments.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_elect_leaders.h"
#include "proto/generated/kp_list_partition_reassignments.h"

typedef struct kna_reassign {
    char *topic;
    int32_t partition;
    int32_t *ids[3]; /* replicas, adding, removing */
    size_t counts[3];
} kna_reassign;

struct kn_reassignments {
    kna_reassign *items;
    size_t count;
};

void kn_reassignments_destroy(kn_reassignments *r) {
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        kn_free(r->items[i].topic);
        for (int w = 0; w < 3; w++)
            kn_free(r->items[i].ids[w]);
    }
    kn_free(r->items);
    kn_free(r);
}

size_t kn_reassignments_count(const kn_reassignments *r) { return r ? r->count : 0; }

const char *kn_reassignments_topic(const kn_reassignments *r, size_t i) {
    return r && i < r->count ? r->items[i].topic : NULL;
}

int32_t kn_reassignments_partition(const kn_reassignments *r, size_t i) {
    return r && i < r->count ? r->items[i].partition : -1;
}

const int32_t *kn_reassignments_replicas(const kn_reassignments *r, size_t i, int which, size_t *countp) {
    if (!r || i >= r->count || which < 0 || which > 2) {
        if (countp)
            *countp = 0;
        return NULL;
    }
    if (countp)
        *countp = r->items[i].counts[which];
    return r->items[i].ids[which];
}

/* ---- shared ------------------------------------------------------------------ */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* A whole-response error: the call's, with the broker's message. */
static int kna_top_error(int16_t code, kn_str msg, const char *what, char *errstr, size_t errstr_size) {
    if (msg.len > 0)
        kn_errstr_set(errstr, errstr_size, "%s: %.*s", what, (int)msg.len, msg.ptr);
    else
        kn_errstr_set(errstr, errstr_size, "%s: %s", what, kn_err_message(code));
    return code;
}

/* The distinct topics of parts, each with its partitions, as request
 * arrays: topics[k], parts[k] (pcount[k] long), all in one pool. */
typedef struct kna_tgroup {
    const char **topics;
    int32_t **parts;
    int32_t *pcount;
    int32_t *pool;
    size_t n;
} kna_tgroup;

static void kna_tgroup_free(kna_tgroup *g) {
    kn_free(g->topics);
    kn_free(g->parts);
    kn_free(g->pcount);
    kn_free(g->pool);
}

static int kna_tgroup_of(const kn_topic_partition_list *l, kna_tgroup *g) {
    size_t n = kn_topic_partition_list_count(l), cap = n ? n : 1;
    memset(g, 0, sizeof(*g));
    g->topics = kn_calloc(cap, sizeof(*g->topics));
    g->parts = kn_calloc(cap, sizeof(*g->parts));
    g->pcount = kn_calloc(cap, sizeof(*g->pcount));
    g->pool = kn_calloc(cap, sizeof(*g->pool));
    if (!g->topics || !g->parts || !g->pcount || !g->pool) {
        kna_tgroup_free(g);
        return KN_ERR__NOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = kn_topic_partition_list_topic(l, i);
        size_t k = 0;
        while (k < g->n && strcmp(g->topics[k], t) != 0)
            k++;
        if (k == g->n) {
            g->topics[g->n++] = t;
            g->parts[k] = &g->pool[used];
            for (size_t j = i; j < n; j++)
                used += strcmp(kn_topic_partition_list_topic(l, j), t) == 0;
        }
        int32_t p = kn_topic_partition_list_partition(l, i);
        bool seen = false;
        for (int32_t q = 0; q < g->pcount[k] && !seen; q++)
            seen = g->parts[k][q] == p;
        if (!seen)
            g->parts[k][g->pcount[k]++] = p;
    }
    return 0;
}

/* Adds (topic, partition) with err to out; 0 or KN_ERR__NOMEM. */
static int kna_tp_result(kn_topic_partition_list *out, kn_str topic, int32_t partition, int err) {
    bool ok = true;
    char *t = kna_strdup_str(topic, &ok);
    int k = t ? kn_topic_partition_list_add(out, t, partition) : -1;
    kn_free(t);
    if (k < 0)
        return KN_ERR__NOMEM;
    kn_topic_partition_list_set_err(out, (size_t)k, err);
    return 0;
}

/* ---- elect_leaders -------------------------------------------------------------- */

static int16_t kna_elect_top(const void *body) { return ((const kp_ElectLeadersResponse *)body)->error_code; }

int kn_admin_elect_leaders(kn_admin *admin, int election_type, const kn_topic_partition_list *parts,
                           int timeout_ms, kn_topic_partition_list **resultsp, char *errstr,
                           size_t errstr_size) {
    static const char fn[] = "kn_admin_elect_leaders";
    if (!admin || !resultsp ||
        (election_type != KN_ELECTION_PREFERRED && election_type != KN_ELECTION_UNCLEAN)) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument%s", fn,
                      admin && resultsp ? " (election type must be KN_ELECTION_PREFERRED or _UNCLEAN)" : "");
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    kna_tgroup g = {0};
    kp_ElectLeadersRequest_TopicPartitions *tp = NULL;
    int err = KN_ERR__NOMEM;
    if (parts && kna_tgroup_of(parts, &g))
        goto nomem;
    if (parts && !(tp = kn_calloc(g.n ? g.n : 1, sizeof(*tp))))
        goto nomem;
    for (size_t k = 0; k < g.n; k++) {
        kp_ElectLeadersRequest_TopicPartitions_init(&tp[k]);
        tp[k].topic = kna_cstr(g.topics[k]);
        tp[k].partitions = (kp_int32_array){g.parts[k], g.pcount[k]};
    }
    kp_ElectLeadersRequest req;
    kp_ElectLeadersRequest_init(&req);
    req.election_type = (int8_t)election_type;
    req.topic_partitions.items = tp;
    req.topic_partitions.count = parts ? (int32_t)g.n : -1; /* null: every partition */
    req.timeout_ms = timeout_ms >= 0 ? timeout_ms : admin->default_timeout_ms;
    knw_resp *resp = kna_controller_call(admin, KP_API_ELECT_LEADERS, 1, &req, timeout_ms, "ElectLeaders",
                                         kna_elect_top, &err, errstr, errstr_size);
    kn_free(tp);
    kna_tgroup_free(&g);
    if (!resp)
        return err;
    const kp_ElectLeadersResponse *body = resp->body;
    if (body->error_code) {
        kn_str none = {NULL, -1};
        err = kna_top_error(body->error_code, none, "ElectLeaders", errstr, errstr_size);
        knw_resp_free(resp);
        return err;
    }
    kn_topic_partition_list *out = kn_topic_partition_list_new();
    err = out ? 0 : KN_ERR__NOMEM;
    for (int32_t t = 0; !err && t < body->replica_election_results.count; t++) {
        const kp_ElectLeadersResponse_ReplicaElectionResult *r = &body->replica_election_results.items[t];
        for (int32_t p = 0; !err && p < r->partition_result.count; p++)
            err = kna_tp_result(out, r->topic, r->partition_result.items[p].partition_id,
                                r->partition_result.items[p].error_code);
    }
    knw_resp_free(resp);
    if (err) {
        kn_topic_partition_list_destroy(out);
        goto nomem;
    }
    *resultsp = out;
    return KN_OK;
nomem:
    kn_free(tp);
    kna_tgroup_free(&g);
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    return KN_ERR__NOMEM;
}

/* ---- alter_partition_reassignments ------------------------------------------------ */

static int16_t kna_alter_top(const void *body) {
    return ((const kp_AlterPartitionReassignmentsResponse *)body)->error_code;
}

int kn_admin_alter_partition_reassignments(kn_admin *admin, const kn_reassignment *changes, size_t count,
                                           int timeout_ms, kn_topic_partition_list **resultsp, char *errstr,
                                           size_t errstr_size) {
    static const char fn[] = "kn_admin_alter_partition_reassignments";
    if (!admin || !resultsp || (count && !changes) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++)
        if (!changes[i].topic || !changes[i].topic[0] || changes[i].partition < 0 ||
            (changes[i].replicas && !changes[i].replica_count) || changes[i].replica_count > 0x7fffffff) {
            kn_errstr_set(errstr, errstr_size,
                          "%s: change %zu needs a topic, a partition >= 0 and replicas "
                          "(NULL to cancel, never empty)",
                          fn, i);
            return KN_ERR__INVALID_ARG;
        }
    *resultsp = NULL;
    /* topics in first-appearance order, each change under its topic */
    kp_AlterPartitionReassignmentsRequest_ReassignableTopic *tt = kn_calloc(count ? count : 1, sizeof(*tt));
    kp_AlterPartitionReassignmentsRequest_ReassignablePartition *pp =
        kn_calloc(count ? count : 1, sizeof(*pp));
    int err = KN_ERR__NOMEM;
    if (!tt || !pp)
        goto nomem;
    size_t nt = 0, used = 0;
    for (size_t i = 0; i < count; i++) {
        size_t k = 0;
        while (k < nt && strcmp(tt[k].name.ptr, changes[i].topic) != 0)
            k++;
        if (k < nt)
            continue;
        kp_AlterPartitionReassignmentsRequest_ReassignableTopic_init(&tt[nt]);
        tt[nt].name = kna_cstr(changes[i].topic);
        tt[nt].partitions.items = &pp[used];
        for (size_t j = i; j < count; j++) {
            if (strcmp(changes[j].topic, changes[i].topic) != 0)
                continue;
            kp_AlterPartitionReassignmentsRequest_ReassignablePartition *p = &pp[used++];
            kp_AlterPartitionReassignmentsRequest_ReassignablePartition_init(p);
            p->partition_index = changes[j].partition;
            p->replicas = changes[j].replicas ? (kp_int32_array){(int32_t *)changes[j].replicas,
                                                                 (int32_t)changes[j].replica_count}
                                              : (kp_int32_array){NULL, -1}; /* null: cancel */
            tt[nt].partitions.count++;
        }
        nt++;
    }
    kp_AlterPartitionReassignmentsRequest req;
    kp_AlterPartitionReassignmentsRequest_init(&req);
    req.timeout_ms = timeout_ms >= 0 ? timeout_ms : admin->default_timeout_ms;
    req.topics.items = tt;
    req.topics.count = (int32_t)nt;
    knw_resp *resp =
        kna_controller_call(admin, KP_API_ALTER_PARTITION_REASSIGNMENTS, -1, &req, timeout_ms,
                            "AlterPartitionReassignments", kna_alter_top, &err, errstr, errstr_size);
    kn_free(tt);
    kn_free(pp);
    tt = NULL;
    pp = NULL;
    if (!resp)
        return err;
    const kp_AlterPartitionReassignmentsResponse *body = resp->body;
    if (body->error_code) {
        err = kna_top_error(body->error_code, body->error_message, "AlterPartitionReassignments", errstr,
                            errstr_size);
        knw_resp_free(resp);
        return err;
    }
    kn_topic_partition_list *out = kn_topic_partition_list_new();
    err = out ? 0 : KN_ERR__NOMEM;
    for (int32_t t = 0; !err && t < body->responses.count; t++) {
        const kp_AlterPartitionReassignmentsResponse_ReassignableTopicResponse *r = &body->responses.items[t];
        for (int32_t p = 0; !err && p < r->partitions.count; p++)
            err = kna_tp_result(out, r->name, r->partitions.items[p].partition_index,
                                r->partitions.items[p].error_code);
    }
    knw_resp_free(resp);
    if (err) {
        kn_topic_partition_list_destroy(out);
        goto nomem;
    }
    *resultsp = out;
    return KN_OK;
nomem:
    kn_free(tt);
    kn_free(pp);
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    return KN_ERR__NOMEM;
}

/* ---- list_partition_reassignments ---------------------------------------------------- */

static int16_t kna_list_top(const void *body) {
    return ((const kp_ListPartitionReassignmentsResponse *)body)->error_code;
}

static int32_t *kna_ids_copy(const kp_int32_array *a, size_t *countp, bool *okp) {
    *countp = a->count > 0 ? (size_t)a->count : 0;
    if (!*countp)
        return NULL;
    int32_t *v = kn_malloc(*countp * sizeof(*v));
    if (!v) {
        *okp = false;
        *countp = 0;
        return NULL;
    }
    memcpy(v, a->items, *countp * sizeof(*v));
    return v;
}

int kn_admin_list_partition_reassignments(kn_admin *admin, const kn_topic_partition_list *parts,
                                          int timeout_ms, kn_reassignments **listp, char *errstr,
                                          size_t errstr_size) {
    static const char fn[] = "kn_admin_list_partition_reassignments";
    if (!admin || !listp) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *listp = NULL;
    kna_tgroup g = {0};
    kp_ListPartitionReassignmentsRequest_ListPartitionReassignmentsTopics *tp = NULL;
    if (parts && (kna_tgroup_of(parts, &g) || !(tp = kn_calloc(g.n ? g.n : 1, sizeof(*tp))))) {
        kna_tgroup_free(&g);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < g.n; k++) {
        kp_ListPartitionReassignmentsRequest_ListPartitionReassignmentsTopics_init(&tp[k]);
        tp[k].name = kna_cstr(g.topics[k]);
        tp[k].partition_indexes = (kp_int32_array){g.parts[k], g.pcount[k]};
    }
    kp_ListPartitionReassignmentsRequest req;
    kp_ListPartitionReassignmentsRequest_init(&req);
    req.timeout_ms = timeout_ms >= 0 ? timeout_ms : admin->default_timeout_ms;
    req.topics.items = tp;
    req.topics.count = parts ? (int32_t)g.n : -1; /* null: every partition */
    int err = 0;
    knw_resp *resp =
        kna_controller_call(admin, KP_API_LIST_PARTITION_REASSIGNMENTS, -1, &req, timeout_ms,
                            "ListPartitionReassignments", kna_list_top, &err, errstr, errstr_size);
    kn_free(tp);
    kna_tgroup_free(&g);
    if (!resp)
        return err;
    const kp_ListPartitionReassignmentsResponse *body = resp->body;
    if (body->error_code) {
        err = kna_top_error(body->error_code, body->error_message, "ListPartitionReassignments", errstr,
                            errstr_size);
        knw_resp_free(resp);
        return err;
    }
    size_t total = 0;
    for (int32_t t = 0; t < body->topics.count; t++)
        total +=
            body->topics.items[t].partitions.count > 0 ? (size_t)body->topics.items[t].partitions.count : 0;
    kn_reassignments *r = kn_calloc(1, sizeof(*r));
    bool ok = r && (!total || (r->items = kn_calloc(total, sizeof(*r->items))));
    for (int32_t t = 0; ok && t < body->topics.count; t++) {
        const kp_ListPartitionReassignmentsResponse_OngoingTopicReassignment *ot = &body->topics.items[t];
        for (int32_t p = 0; ok && p < ot->partitions.count; p++) {
            const kp_ListPartitionReassignmentsResponse_OngoingPartitionReassignment *op =
                &ot->partitions.items[p];
            kna_reassign *x = &r->items[r->count++];
            x->topic = kna_strdup_str(ot->name, &ok);
            x->partition = op->partition_index;
            x->ids[0] = kna_ids_copy(&op->replicas, &x->counts[0], &ok);
            x->ids[1] = kna_ids_copy(&op->adding_replicas, &x->counts[1], &ok);
            x->ids[2] = kna_ids_copy(&op->removing_replicas, &x->counts[2], &ok);
        }
    }
    knw_resp_free(resp);
    if (!ok) {
        kn_reassignments_destroy(r);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    *listp = r;
    return KN_OK;
}

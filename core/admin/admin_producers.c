/*
 * admin_producers.c: describe_producers (DescribeProducers) and
 * abort_transaction (WriteTxnMarkers with an ABORT marker), both sent to
 * the partitions' leaders as Java's PartitionLeaderStrategy does: the
 * leaders of the pending partitions come from one Metadata request, one
 * request goes to each leader, a partition whose leader moved goes round
 * again after a backoff until the deadline; a missing topic or partition
 * and every other error are final for that partition alone. Also the
 * result object kn_producer_states.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_producers.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_write_txn_markers.h"

typedef struct kna_pstate {
    int64_t producer_id, last_timestamp, txn_start_offset;
    int32_t producer_epoch, last_sequence, coordinator_epoch;
} kna_pstate;

typedef struct kna_pitem {
    char *topic;
    int32_t partition;
    int32_t node; /* leader, -1 unknown */
    bool pending;
    int err;
    char *message;
    kna_pstate *states;
    size_t state_count;
} kna_pitem;

struct kn_producer_states {
    kna_pitem *items;
    size_t count;
};

/* ---- the result object --------------------------------------------------- */

void kn_producer_states_destroy(kn_producer_states *s) {
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        kn_free(s->items[i].topic);
        kn_free(s->items[i].message);
        kn_free(s->items[i].states);
    }
    kn_free(s->items);
    kn_free(s);
}

static const kna_pitem *kna_pi(const kn_producer_states *s, size_t i) {
    return s && i < s->count ? &s->items[i] : NULL;
}

static const kna_pstate *kna_ps(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pitem *x = kna_pi(s, i);
    return x && k < x->state_count ? &x->states[k] : NULL;
}

size_t kn_producer_states_count(const kn_producer_states *s) { return s ? s->count : 0; }

const char *kn_producer_states_topic(const kn_producer_states *s, size_t i) {
    const kna_pitem *x = kna_pi(s, i);
    return x ? x->topic : NULL;
}

int32_t kn_producer_states_partition(const kn_producer_states *s, size_t i) {
    const kna_pitem *x = kna_pi(s, i);
    return x ? x->partition : -1;
}

int kn_producer_states_error(const kn_producer_states *s, size_t i) {
    const kna_pitem *x = kna_pi(s, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_producer_states_error_message(const kn_producer_states *s, size_t i) {
    const kna_pitem *x = kna_pi(s, i);
    if (!x || !x->err)
        return NULL;
    return x->message ? x->message : kn_err_message(x->err);
}

size_t kn_producer_states_producer_count(const kn_producer_states *s, size_t i) {
    const kna_pitem *x = kna_pi(s, i);
    return x ? x->state_count : 0;
}

int64_t kn_producer_states_producer_id(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->producer_id : -1;
}

int32_t kn_producer_states_producer_epoch(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->producer_epoch : -1;
}

int32_t kn_producer_states_last_sequence(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->last_sequence : -1;
}

int64_t kn_producer_states_last_timestamp(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->last_timestamp : -1;
}

int32_t kn_producer_states_coordinator_epoch(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->coordinator_epoch : -1;
}

int64_t kn_producer_states_txn_start_offset(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->txn_start_offset : -1;
}

/* ---- the per-leader loop ---------------------------------------------------- */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

static bool kna_is(kn_str s, const char *c) {
    return s.len >= 0 && strlen(c) == (size_t)s.len && memcmp(c, s.ptr, (size_t)s.len) == 0;
}

static int kna_pfail(kna_pitem *x, int err, const char *message) {
    x->pending = false;
    x->err = err;
    kn_free(x->message);
    x->message = message ? kn_strdup(message) : NULL;
    return message && !x->message ? KN_ERR__NOMEM : 0;
}

/* Partition errors that mean "the leader is elsewhere or not ready". */
static bool kna_pretriable(int err) {
    return err == KN_ERR_NOT_LEADER_OR_FOLLOWER || err == KN_ERR_LEADER_NOT_AVAILABLE ||
           err == KN_ERR_UNKNOWN_LEADER_EPOCH || err == KN_ERR_FENCED_LEADER_EPOCH ||
           err == KN_ERR_REPLICA_NOT_AVAILABLE;
}

/* Sets the leaders of the pending items from one Metadata request. */
static int kna_pleaders(kn_admin *admin, kn_producer_states *res, int64_t deadline, char *why,
                        size_t why_size) {
    const char **names = kn_calloc(res->count ? res->count : 1, sizeof(*names));
    if (!names)
        return KN_ERR__NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < res->count; i++) {
        bool seen = !res->items[i].pending;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strcmp(names[j], res->items[i].topic) == 0;
        if (!seen)
            names[n++] = res->items[i].topic;
    }
    int err = 0;
    knw_resp *resp = kna_metadata(admin, names, n, deadline, &err, why, why_size);
    kn_free(names);
    if (!resp)
        return err;
    const kp_MetadataResponse *md = resp->body;
    int rc = 0;
    for (size_t i = 0; i < res->count && !rc; i++) {
        kna_pitem *x = &res->items[i];
        if (!x->pending)
            continue;
        x->node = -1;
        const kp_MetadataResponse_MetadataResponseTopic *t = NULL;
        for (int32_t k = 0; k < md->topics.count && !t; k++)
            if (kna_is(md->topics.items[k].name, x->topic))
                t = &md->topics.items[k];
        int terr = t ? t->error_code : KN_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        if (terr && !kna_pretriable(terr)) {
            rc = kna_pfail(x, terr, NULL);
            continue;
        }
        const kp_MetadataResponse_MetadataResponsePartition *p = NULL;
        for (int32_t k = 0; t && !terr && k < t->partitions.count && !p; k++)
            if (t->partitions.items[k].partition_index == x->partition)
                p = &t->partitions.items[k];
        if (t && !terr && !p) {
            char msg[160];
            snprintf(msg, sizeof(msg), "Partition %d of topic %.100s does not exist", (int)x->partition,
                     x->topic);
            rc = kna_pfail(x, KN_ERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
            continue;
        }
        x->err = terr ? terr : KN_ERR_LEADER_NOT_AVAILABLE; /* until a leader answers */
        if (p && p->leader_id >= 0)
            x->node = p->leader_id;
    }
    knw_resp_free(resp);
    return rc;
}

/* Sends one leader's pending items; returns 0 or KN_ERR__NOMEM. */
typedef int kna_psend_fn(kn_admin *admin, kn_producer_states *res, int32_t node, void *ctx, int64_t deadline,
                         bool *answered, int *call_err, char *why, size_t why_size);

/* Runs items to the end (see the file comment). Returns 0 or the whole
 * call's error (nothing answered) with errstr set. */
static int kna_prun(kn_admin *admin, kn_producer_states *res, kna_psend_fn *send, void *ctx, int64_t deadline,
                    const char *fn, char *errstr, size_t errstr_size) {
    bool answered = false;
    int call_err = 0;
    char why[512] = "";
    for (int attempt = 0;; attempt++) {
        bool any = false;
        for (size_t i = 0; i < res->count; i++)
            any = any || res->items[i].pending;
        if (!any)
            break;
        if (kna_remaining(deadline) <= 0) {
            for (size_t i = 0; i < res->count; i++)
                if (res->items[i].pending) {
                    res->items[i].pending = false;
                    res->items[i].err = KN_ERR__TIMED_OUT;
                }
            break;
        }
        if (attempt > 0)
            kna_backoff(admin, attempt - 1, deadline);
        int err = kna_pleaders(admin, res, deadline, why, sizeof(why));
        if (err == KN_ERR__NOMEM)
            goto nomem;
        if (err) {
            call_err = err;
            for (size_t i = 0; i < res->count; i++)
                if (res->items[i].pending && kna_pfail(&res->items[i], err, why))
                    goto nomem;
            break;
        }
        answered = true;
        /* Each leader once per round; what it sends back as retriable
         * waits for the next round's metadata. */
        int32_t *done = kn_calloc(res->count ? res->count : 1, sizeof(*done));
        size_t ndone = 0;
        if (!done)
            goto nomem;
        for (;;) {
            int32_t node = -1;
            for (size_t i = 0; i < res->count && node < 0; i++) {
                bool seen = false;
                for (size_t j = 0; j < ndone && !seen; j++)
                    seen = done[j] == res->items[i].node;
                if (res->items[i].pending && res->items[i].node >= 0 && !seen)
                    node = res->items[i].node;
            }
            if (node < 0)
                break;
            done[ndone++] = node;
            if (send(admin, res, node, ctx, deadline, &answered, &call_err, why, sizeof(why))) {
                kn_free(done);
                goto nomem;
            }
        }
        kn_free(done);
    }
    if (!answered && call_err) {
        kn_errstr_set(errstr, errstr_size, "%s", why);
        return call_err;
    }
    return 0;
nomem:
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    return KN_ERR__NOMEM;
}

/* The node's pending items grouped by topic into topic/partition arrays
 * (one allocation each, caller frees): *ntopicsp topics, parts[k] the
 * partitions of topic k, counts in pcount[k]. */
typedef struct kna_ptopics {
    const char **topics;
    int32_t **parts;
    int32_t *pcount;
    int32_t *pool;
    size_t n;
} kna_ptopics;

static void kna_ptopics_free(kna_ptopics *g) {
    kn_free(g->topics);
    kn_free(g->parts);
    kn_free(g->pcount);
    kn_free(g->pool);
}

static int kna_ptopics_of(const kn_producer_states *res, int32_t node, kna_ptopics *g) {
    size_t cap = res->count ? res->count : 1;
    memset(g, 0, sizeof(*g));
    g->topics = kn_calloc(cap, sizeof(*g->topics));
    g->parts = kn_calloc(cap, sizeof(*g->parts));
    g->pcount = kn_calloc(cap, sizeof(*g->pcount));
    g->pool = kn_calloc(cap, sizeof(*g->pool));
    if (!g->topics || !g->parts || !g->pcount || !g->pool) {
        kna_ptopics_free(g);
        return KN_ERR__NOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; i < res->count; i++) {
        const kna_pitem *x = &res->items[i];
        if (!x->pending || x->node != node)
            continue;
        size_t k = 0;
        while (k < g->n && strcmp(g->topics[k], x->topic) != 0)
            k++;
        if (k == g->n) {
            g->topics[g->n++] = x->topic;
            /* room for every partition of the topic from here */
            g->parts[k] = &g->pool[used];
            for (size_t j = i; j < res->count; j++)
                used += res->items[j].pending && res->items[j].node == node &&
                        strcmp(res->items[j].topic, x->topic) == 0;
        }
        g->parts[k][g->pcount[k]++] = x->partition;
    }
    return 0;
}

/* ---- describe_producers ------------------------------------------------------ */

static int kna_dprod_send(kn_admin *admin, kn_producer_states *res, int32_t node, void *ctx, int64_t deadline,
                          bool *answered, int *call_err, char *why, size_t why_size) {
    (void)ctx;
    kna_ptopics g;
    if (kna_ptopics_of(res, node, &g))
        return KN_ERR__NOMEM;
    kp_DescribeProducersRequest_TopicRequest *tr = kn_calloc(g.n ? g.n : 1, sizeof(*tr));
    if (!tr) {
        kna_ptopics_free(&g);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < g.n; k++) {
        kp_DescribeProducersRequest_TopicRequest_init(&tr[k]);
        tr[k].name = kna_cstr(g.topics[k]);
        tr[k].partition_indexes = (kp_int32_array){g.parts[k], g.pcount[k]};
    }
    kp_DescribeProducersRequest req;
    kp_DescribeProducersRequest_init(&req);
    req.topics.items = tr;
    req.topics.count = (int32_t)g.n;
    int err = 0;
    knw_resp *resp = kna_call(admin, node, KP_API_DESCRIBE_PRODUCERS, -1, -1, &req, deadline,
                              "DescribeProducers", &err, why, why_size);
    kn_free(tr);
    kna_ptopics_free(&g);
    int rc = 0;
    if (!resp) {
        *call_err = err;
        for (size_t i = 0; i < res->count && !rc; i++)
            if (res->items[i].pending && res->items[i].node == node)
                rc = kna_pfail(&res->items[i], err, why);
        return rc;
    }
    *answered = true;
    const kp_DescribeProducersResponse *body = resp->body;
    for (int32_t t = 0; t < body->topics.count && !rc; t++) {
        const kp_DescribeProducersResponse_TopicResponse *tp = &body->topics.items[t];
        for (int32_t p = 0; p < tp->partitions.count && !rc; p++) {
            const kp_DescribeProducersResponse_PartitionResponse *pr = &tp->partitions.items[p];
            for (size_t i = 0; i < res->count && !rc; i++) {
                kna_pitem *x = &res->items[i];
                if (!x->pending || x->node != node || x->partition != pr->partition_index ||
                    !kna_is(tp->name, x->topic))
                    continue;
                if (pr->error_code && kna_pretriable(pr->error_code)) {
                    x->err = pr->error_code; /* next round, fresh leader */
                    continue;
                }
                if (pr->error_code) {
                    bool ok = true;
                    char *msg = kna_strdup_str(pr->error_message, &ok);
                    rc = kna_pfail(x, pr->error_code, msg);
                    kn_free(msg);
                    if (!ok)
                        rc = KN_ERR__NOMEM;
                    continue;
                }
                int32_t n = pr->active_producers.count > 0 ? pr->active_producers.count : 0;
                if (n && !(x->states = kn_calloc((size_t)n, sizeof(*x->states)))) {
                    rc = KN_ERR__NOMEM;
                    continue;
                }
                for (int32_t k = 0; k < n; k++) {
                    const kp_DescribeProducersResponse_ProducerState *ps = &pr->active_producers.items[k];
                    kna_pstate *st = &x->states[x->state_count++];
                    st->producer_id = ps->producer_id;
                    st->producer_epoch = ps->producer_epoch;
                    st->last_sequence = ps->last_sequence;
                    st->last_timestamp = ps->last_timestamp;
                    st->coordinator_epoch = ps->coordinator_epoch;
                    st->txn_start_offset = ps->current_txn_start_offset;
                }
                rc = kna_pfail(x, 0, NULL);
            }
        }
    }
    knw_resp_free(resp);
    return rc;
}

static kn_producer_states *kna_pitems(const kn_topic_partition_list *parts) {
    size_t n = kn_topic_partition_list_count(parts);
    kn_producer_states *res = kn_calloc(1, sizeof(*res));
    if (!res || !(res->items = kn_calloc(n ? n : 1, sizeof(*res->items)))) {
        kn_free(res);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *t = kn_topic_partition_list_topic(parts, i);
        int32_t p = kn_topic_partition_list_partition(parts, i);
        bool seen = false;
        for (size_t j = 0; j < res->count && !seen; j++)
            seen = res->items[j].partition == p && strcmp(res->items[j].topic, t) == 0;
        if (seen)
            continue;
        kna_pitem *x = &res->items[res->count++];
        if (!(x->topic = kn_strdup(t))) {
            kn_producer_states_destroy(res);
            return NULL;
        }
        x->partition = p;
        x->node = -1;
        x->pending = true;
    }
    return res;
}

int kn_admin_describe_producers(kn_admin *admin, const kn_topic_partition_list *parts, int timeout_ms,
                                kn_producer_states **statesp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_producers";
    if (!admin || !parts || !statesp) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *statesp = NULL;
    kn_producer_states *res = kna_pitems(parts);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    int err =
        kna_prun(admin, res, kna_dprod_send, NULL, kna_deadline(admin, timeout_ms), fn, errstr, errstr_size);
    if (err) {
        kn_producer_states_destroy(res);
        return err;
    }
    *statesp = res;
    return KN_OK;
}

/* ---- abort_transaction ---------------------------------------------------------- */

typedef struct kna_abort_ctx {
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t coordinator_epoch;
} kna_abort_ctx;

static int kna_abort_send(kn_admin *admin, kn_producer_states *res, int32_t node, void *ctxv,
                          int64_t deadline, bool *answered, int *call_err, char *why, size_t why_size) {
    kna_abort_ctx *ctx = ctxv;
    kna_pitem *x = &res->items[0]; /* exactly one partition */
    kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic topic;
    kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic_init(&topic);
    topic.name = kna_cstr(x->topic);
    topic.partition_indexes = (kp_int32_array){&x->partition, 1};
    kp_WriteTxnMarkersRequest_WritableTxnMarker marker;
    kp_WriteTxnMarkersRequest_WritableTxnMarker_init(&marker);
    marker.producer_id = ctx->producer_id;
    marker.producer_epoch = ctx->producer_epoch;
    marker.coordinator_epoch = ctx->coordinator_epoch;
    marker.transaction_result = false; /* abort */
    marker.topics.items = &topic;
    marker.topics.count = 1;
    kp_WriteTxnMarkersRequest req;
    kp_WriteTxnMarkersRequest_init(&req);
    req.markers.items = &marker;
    req.markers.count = 1;
    int err = 0;
    knw_resp *resp = kna_call(admin, node, KP_API_WRITE_TXN_MARKERS, -1, -1, &req, deadline,
                              "WriteTxnMarkers", &err, why, why_size);
    if (!resp) {
        *call_err = err;
        return kna_pfail(x, err, why);
    }
    *answered = true;
    const kp_WriteTxnMarkersResponse *body = resp->body;
    int code = KN_ERR_UNKNOWN_SERVER_ERROR; /* unless the answer names the partition */
    for (int32_t m = 0; m < body->markers.count; m++)
        for (int32_t t = 0; t < body->markers.items[m].topics.count; t++) {
            const kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *tr =
                &body->markers.items[m].topics.items[t];
            for (int32_t p = 0; kna_is(tr->name, x->topic) && p < tr->partitions.count; p++)
                if (tr->partitions.items[p].partition_index == x->partition)
                    code = tr->partitions.items[p].error_code;
        }
    knw_resp_free(resp);
    if (kna_pretriable(code)) {
        x->err = code;
        return 0;
    }
    return kna_pfail(x, code,
                     code == KN_ERR_UNKNOWN_SERVER_ERROR
                         ? "The WriteTxnMarkers response did not contain a result for this partition"
                         : NULL);
}

int kn_admin_abort_transaction(kn_admin *admin, const char *topic, int32_t partition, int64_t producer_id,
                               int16_t producer_epoch, int32_t coordinator_epoch, int timeout_ms,
                               char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_abort_transaction";
    if (!admin || !topic || partition < 0 || producer_id < 0 || producer_epoch < 0) {
        kn_errstr_set(errstr, errstr_size,
                      "%s: invalid argument (topic, partition >= 0, producer id and epoch >= 0)", fn);
        return KN_ERR__INVALID_ARG;
    }
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    if (!l || kn_topic_partition_list_add(l, topic, partition) < 0) {
        kn_topic_partition_list_destroy(l);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kn_producer_states *res = kna_pitems(l);
    kn_topic_partition_list_destroy(l);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kna_abort_ctx ctx = {producer_id, producer_epoch, coordinator_epoch};
    int err =
        kna_prun(admin, res, kna_abort_send, &ctx, kna_deadline(admin, timeout_ms), fn, errstr, errstr_size);
    if (!err && res->items[0].err) {
        err = res->items[0].err;
        kn_errstr_set(errstr, errstr_size, "%s: %s-%d: %s", fn, topic, (int)partition,
                      kn_producer_states_error_message(res, 0));
    }
    kn_producer_states_destroy(res);
    return err;
}

/*
 * admin_leaders.c: the per-partition runner every partition-keyed admin
 * call shares (list_offsets, delete_records, describe_producers,
 * abort_transaction), routed as Java's PartitionLeaderStrategy: the
 * leaders of the pending partitions come from one Metadata request, one
 * request goes to each leader with all of its partitions, and a
 * partition whose leader moved (or that the answer left out) goes round
 * again after a backoff, with fresh metadata, until the deadline; a
 * missing topic or partition and every other error are final for that
 * partition alone. Also the pieces the per-broker replica calls use
 * (admin_replica_dirs.c): the partition items and their grouping by
 * topic into a request.
 *
 * The runner owns the routing state of each partition (kna_part); an
 * operation keeps its own values in a parallel array, builds a leader's
 * request and reads its answer in its send function.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_metadata.h"

bool kna_slice_is(kn_str s, const char *c) {
    if (!c)
        return s.len < 0;
    return s.len >= 0 && strlen(c) == (size_t)s.len && memcmp(c, s.ptr, (size_t)s.len) == 0;
}

/* ---- the items ------------------------------------------------------- */

kna_part *kna_parts_of(const kn_topic_partition_list *l, size_t *np, size_t *src) {
    size_t n = kn_topic_partition_list_count(l);
    kna_part *parts = kn_calloc(n ? n : 1, sizeof(*parts));
    if (!parts)
        return NULL;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = kn_topic_partition_list_topic(l, i);
        int32_t p = kn_topic_partition_list_partition(l, i);
        bool seen = false;
        for (size_t j = 0; j < count && !seen; j++)
            seen = parts[j].partition == p && strcmp(parts[j].topic, t) == 0;
        if (seen)
            continue;
        kna_part *x = &parts[count];
        if (!(x->topic = kn_strdup(t))) {
            kna_parts_free(parts, count);
            return NULL;
        }
        x->partition = p;
        x->node = -1;
        x->pending = true;
        if (src)
            src[count] = i;
        count++;
    }
    *np = count;
    return parts;
}

void kna_parts_free(kna_part *parts, size_t n) {
    for (size_t i = 0; parts && i < n; i++) {
        kn_free(parts[i].topic);
        kn_free(parts[i].message);
    }
    kn_free(parts);
}

int kna_part_end(kna_part *x, int err, const char *message) {
    x->pending = false;
    x->err = err;
    kn_free(x->message);
    x->message = message ? kn_strdup(message) : NULL;
    return message && !x->message ? KN_ERR__NOMEM : 0;
}

const char *kna_part_message(const kna_part *x) {
    if (!x || !x->err)
        return NULL;
    return x->message ? x->message : kn_err_message(x->err);
}

/* ---- grouping by topic ----------------------------------------------- */

void kna_topic_groups_free(kna_topic_groups *g) {
    kn_free(g->topics);
    kn_free(g->parts);
    kn_free(g->items);
    kn_free(g->pcount);
    kn_free(g->pool);
    kn_free(g->ipool);
    memset(g, 0, sizeof(*g));
}

int kna_topic_groups_of(kna_topic_groups *g, const kna_part *parts, size_t n, const bool *sel) {
    size_t cap = n ? n : 1;
    memset(g, 0, sizeof(*g));
    g->topics = kn_calloc(cap, sizeof(*g->topics));
    g->parts = kn_calloc(cap, sizeof(*g->parts));
    g->items = kn_calloc(cap, sizeof(*g->items));
    g->pcount = kn_calloc(cap, sizeof(*g->pcount));
    g->pool = kn_calloc(cap, sizeof(*g->pool));
    g->ipool = kn_calloc(cap, sizeof(*g->ipool));
    if (!g->topics || !g->parts || !g->items || !g->pcount || !g->pool || !g->ipool) {
        kna_topic_groups_free(g);
        return KN_ERR__NOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (!sel[i])
            continue;
        size_t k = 0;
        while (k < g->n && strcmp(g->topics[k], parts[i].topic) != 0)
            k++;
        if (k == g->n) {
            g->topics[g->n++] = parts[i].topic;
            /* room for every selected partition of the topic from here */
            g->parts[k] = &g->pool[used];
            g->items[k] = &g->ipool[used];
            for (size_t j = i; j < n; j++)
                used += sel[j] && strcmp(parts[j].topic, parts[i].topic) == 0;
        }
        g->items[k][g->pcount[k]] = i;
        g->parts[k][g->pcount[k]++] = parts[i].partition;
    }
    return 0;
}

int kna_leader_groups(const kna_leader_call *call, int32_t node, kna_topic_groups *g) {
    bool *sel = kn_calloc(call->count ? call->count : 1, sizeof(*sel));
    if (!sel)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < call->count; i++)
        sel[i] = call->parts[i].pending && call->parts[i].node == node;
    int err = kna_topic_groups_of(g, call->parts, call->count, sel);
    kn_free(sel);
    return err;
}

/* ---- answers ---------------------------------------------------------- */

int kna_leader_failed(kna_leader_call *call, int32_t node, int err, const char *why) {
    call->call_err = err;
    int rc = 0;
    for (size_t i = 0; i < call->count && !rc; i++)
        if (call->parts[i].pending && call->parts[i].node == node)
            rc = kna_part_end(&call->parts[i], err, why);
    return rc;
}

ptrdiff_t kna_leader_find(const kna_leader_call *call, int32_t node, kn_str topic, int32_t partition) {
    for (size_t i = 0; i < call->count; i++) {
        const kna_part *x = &call->parts[i];
        if (x->pending && x->node == node && x->partition == partition && kna_slice_is(topic, x->topic))
            return (ptrdiff_t)i;
    }
    return -1;
}

int kna_leader_code(kna_leader_call *call, size_t i, int code, const char *message, bool *done) {
    kna_part *x = &call->parts[i];
    *done = false;
    if (code && call->retriable(code)) {
        x->err = code; /* until a leader answers: the next round, fresh leader */
        return 0;
    }
    if (code)
        return kna_part_end(x, code, message);
    *done = true;
    return kna_part_end(x, 0, NULL);
}

/* ---- the loop --------------------------------------------------------- */

/* Sets the leaders of the pending items from one Metadata request.
 * Returns 0, KN_ERR__NOMEM, or the request's error (why set). */
static int kna_leaders_lookup(kna_leader_call *call, char *why, size_t why_size) {
    const char **names = kn_calloc(call->count ? call->count : 1, sizeof(*names));
    if (!names)
        return KN_ERR__NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < call->count; i++) {
        if (!call->parts[i].pending)
            continue;
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strcmp(names[j], call->parts[i].topic) == 0;
        if (!seen)
            names[n++] = call->parts[i].topic;
    }
    int err = 0;
    knw_resp *resp = kna_metadata(call->admin, names, n, call->deadline, &err, why, why_size);
    kn_free(names);
    if (!resp)
        return err;
    call->answered = true;
    const kp_MetadataResponse *md = resp->body;
    int rc = 0;
    for (size_t i = 0; i < call->count && !rc; i++) {
        kna_part *x = &call->parts[i];
        if (!x->pending)
            continue;
        x->node = -1;
        const kp_MetadataResponse_MetadataResponseTopic *t = NULL;
        for (int32_t k = 0; k < md->topics.count && !t; k++)
            if (kna_slice_is(md->topics.items[k].name, x->topic))
                t = &md->topics.items[k];
        int terr = t ? t->error_code : KN_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        if (terr && !call->retriable(terr)) {
            rc = kna_part_end(x, terr, NULL);
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
            rc = kna_part_end(x, KN_ERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
            continue;
        }
        x->err = terr ? terr : KN_ERR_LEADER_NOT_AVAILABLE; /* until a leader answers */
        if (p && p->leader_id >= 0)
            x->node = p->leader_id;
    }
    knw_resp_free(resp);
    return rc;
}

int kna_leader_run(kna_leader_call *call, char *errstr, size_t errstr_size) {
    char why[512] = "";
    call->answered = false;
    call->call_err = 0;
    for (int attempt = 0;; attempt++) {
        bool any = false;
        for (size_t i = 0; i < call->count; i++)
            any = any || call->parts[i].pending;
        if (!any)
            break;
        if (kna_remaining(call->deadline) <= 0) {
            for (size_t i = 0; i < call->count; i++)
                if (call->parts[i].pending) {
                    call->parts[i].pending = false;
                    call->parts[i].err = KN_ERR__TIMED_OUT;
                }
            break;
        }
        if (attempt > 0)
            kna_backoff(call->admin, attempt - 1, call->deadline);
        int err = kna_leaders_lookup(call, why, sizeof(why));
        if (err == KN_ERR__NOMEM)
            goto nomem;
        if (err) {
            call->call_err = err;
            for (size_t i = 0; i < call->count; i++)
                if (call->parts[i].pending && kna_part_end(&call->parts[i], err, why))
                    goto nomem;
            break;
        }
        /* Each leader once per round: what it leaves pending (a
         * retriable error, a partition it did not answer) waits for the
         * next round's metadata. */
        for (;;) {
            int32_t node = -1;
            for (size_t i = 0; i < call->count && node < 0; i++)
                if (call->parts[i].pending && call->parts[i].node >= 0)
                    node = call->parts[i].node;
            if (node < 0)
                break;
            if (call->send(call, node, why, sizeof(why)))
                goto nomem;
            for (size_t i = 0; i < call->count; i++)
                if (call->parts[i].pending && call->parts[i].node == node)
                    call->parts[i].node = -1;
        }
    }
    if (!call->answered && call->call_err) {
        kn_errstr_set(errstr, errstr_size, "%s", why);
        return call->call_err;
    }
    return 0;
nomem:
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->fn);
    return KN_ERR__NOMEM;
}

/*
 * consumer_protocol.c: Subscription/Assignment blobs through the generated
 * codecs, and the sticky assignors' user data (see consumer_protocol.h).
 */
#include "consumer/assignor/consumer_protocol.h"

#include <stdlib.h>
#include <string.h>

#include "consumer/assignor/java_order.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_consumer_protocol_assignment.h"
#include "proto/generated/kp_consumer_protocol_subscription.h"

#define CP_MAX_BLOB (64u << 20)

static int cp_str_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cp_tp_cmp(const void *a, const void *b) {
    const kn_asg_tp *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

static char *cp_arena_str(kn_arena *a, const char *p, int32_t n) {
    char *s = kn_arena_alloc(a, (size_t)n + 1);
    if (s && n)
        memcpy(s, p, (size_t)n);
    return s;
}

/* Copies len bytes (len < 0: NULL) into a; *ok false on NOMEM. */
static const uint8_t *cp_arena_bytes(kn_arena *a, const uint8_t *p, int32_t len, bool *ok) {
    if (len < 0)
        return NULL;
    uint8_t *d = kn_arena_alloc(a, len ? (size_t)len : 1);
    if (!d) {
        *ok = false;
        return NULL;
    }
    if (len)
        memcpy(d, p, (size_t)len);
    return d;
}

static int cp_finish(kn_wr *w, uint8_t **buf, size_t *len) {
    if (!kn_wr_ok(w)) {
        int rc = w->err;
        kn_wr_free(w);
        return rc;
    }
    *buf = kn_wr_detach(w, len);
    return 0;
}

int kn_cp_subscription_encode(const kn_asg_member *sub, int16_t version, uint8_t **buf, size_t *len) {
    if (version < 0 || sub->topic_cnt < 0 || sub->owned_cnt < 0)
        return KN_ERR__INVALID_ARG;
    if (version > KN_CP_VERSION)
        version = KN_CP_VERSION;
    int rc = KN_ERR__NOMEM;
    size_t nt = (size_t)sub->topic_cnt, no = (size_t)sub->owned_cnt;
    const char **topics = kn_malloc((nt ? nt : 1) * sizeof *topics);
    kn_str *tstr = kn_malloc((nt ? nt : 1) * sizeof *tstr);
    kn_asg_tp *owned = kn_malloc((no ? no : 1) * sizeof *owned);
    kp_ConsumerProtocolSubscription_TopicPartition *groups = kn_calloc(no ? no : 1, sizeof *groups);
    int32_t *pnums = kn_malloc((no ? no : 1) * sizeof *pnums);
    kn_wr w;
    kn_wr_init(&w, 64, CP_MAX_BLOB);
    if (!topics || !tstr || !owned || !groups || !pnums)
        goto done;
    if (nt)
        memcpy(topics, sub->topics, nt * sizeof *topics);
    qsort(topics, nt, sizeof *topics, cp_str_cmp);
    for (size_t i = 0; i < nt; i++)
        tstr[i] = kn_str_c(topics[i]);
    if (no)
        memcpy(owned, sub->owned, no * sizeof *owned);
    qsort(owned, no, sizeof *owned, cp_tp_cmp);
    int32_t ng = 0;
    for (size_t i = 0; i < no; i++) {
        if (ng == 0 || strcmp(owned[i].topic, groups[ng - 1].topic.ptr) != 0) {
            groups[ng].topic = kn_str_c(owned[i].topic);
            groups[ng].partitions.items = &pnums[i];
            ng++;
        }
        pnums[i] = owned[i].partition;
        groups[ng - 1].partitions.count++;
    }
    kp_ConsumerProtocolSubscription m;
    kp_ConsumerProtocolSubscription_init(&m);
    m.topics.items = tstr;
    m.topics.count = (int32_t)nt;
    m.user_data = (kn_bytes){sub->user_data, sub->user_data_len < 0 ? -1 : sub->user_data_len};
    m.owned_partitions.items = groups;
    m.owned_partitions.count = ng;
    m.generation_id = sub->generation;
    m.rack_id = sub->rack ? kn_str_c(sub->rack) : (kn_str){NULL, -1};
    kn_wr_i16(&w, version);
    rc = kp_ConsumerProtocolSubscription_encode(&w, &m, version);
    if (!rc)
        rc = cp_finish(&w, buf, len);
    else
        kn_wr_free(&w);
done:
    if (rc == KN_ERR__NOMEM)
        kn_wr_free(&w);
    kn_free(topics);
    kn_free(tstr);
    kn_free(owned);
    kn_free(groups);
    kn_free(pnums);
    return rc;
}

static int cp_version(kn_rd *r, int16_t *version, int16_t *use, char *errstr, size_t errstr_size,
                      const char *what) {
    *version = kn_rd_i16(r);
    if (!kn_rd_ok(r)) {
        kn_errstr_set(errstr, errstr_size, "%s: no version header", what);
        return KN_ERR__PROTOCOL;
    }
    if (*version < 0) {
        kn_errstr_set(errstr, errstr_size, "%s: unsupported version %d", what, (int)*version);
        return KN_ERR__UNSUPPORTED_VERSION;
    }
    *use = *version > KN_CP_VERSION ? KN_CP_VERSION : *version;
    return 0;
}

static int cp_decode_fail(const kn_rd *r, int rc, char *errstr, size_t errstr_size, const char *what,
                          int16_t version) {
    if (rc == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", what);
    else
        kn_errstr_set(errstr, errstr_size, "%s v%d: %s at byte %zu", what, (int)version,
                      r->err_what ? r->err_what : "malformed", r->err_off);
    return rc;
}

int kn_cp_subscription_decode(const uint8_t *buf, size_t len, kn_arena *a, kn_asg_member *sub,
                              int16_t *version, char *errstr, size_t errstr_size) {
    kn_rd r;
    kn_rd_init(&r, buf, len);
    int16_t use;
    memset(sub, 0, sizeof *sub);
    sub->generation = KN_ASG_NO_GENERATION;
    sub->user_data_len = -1;
    int rc = cp_version(&r, version, &use, errstr, errstr_size, "subscription");
    if (rc)
        return rc;
    kp_ConsumerProtocolSubscription m;
    rc = kp_ConsumerProtocolSubscription_decode(&r, a, &m, use);
    if (rc)
        return cp_decode_fail(&r, rc, errstr, errstr_size, "subscription", *version);
    bool ok = true;
    const char **topics = kn_arena_calloc(a, (size_t)(m.topics.count ? m.topics.count : 1), sizeof *topics);
    ok = topics != NULL;
    for (int32_t i = 0; ok && i < m.topics.count; i++) {
        kn_str s = m.topics.items[i];
        ok = (topics[i] = cp_arena_str(a, s.ptr, s.len < 0 ? 0 : s.len)) != NULL;
    }
    int64_t no = 0;
    for (int32_t i = 0; i < m.owned_partitions.count; i++)
        no += m.owned_partitions.items[i].partitions.count;
    kn_asg_tp *owned = ok ? kn_arena_calloc(a, (size_t)(no ? no : 1), sizeof *owned) : NULL;
    ok = ok && owned;
    int32_t k = 0;
    for (int32_t i = 0; ok && i < m.owned_partitions.count; i++) {
        const kp_ConsumerProtocolSubscription_TopicPartition *tp = &m.owned_partitions.items[i];
        const char *t = cp_arena_str(a, tp->topic.ptr, tp->topic.len < 0 ? 0 : tp->topic.len);
        ok = t != NULL;
        for (int32_t j = 0; ok && j < tp->partitions.count; j++)
            owned[k++] = (kn_asg_tp){t, tp->partitions.items[j]};
    }
    if (ok && m.rack_id.len > 0)
        ok = (sub->rack = cp_arena_str(a, m.rack_id.ptr, m.rack_id.len)) != NULL;
    if (ok)
        sub->user_data = cp_arena_bytes(a, m.user_data.ptr, m.user_data.len, &ok);
    if (!ok) {
        kn_errstr_set(errstr, errstr_size, "subscription: out of memory");
        return KN_ERR__NOMEM;
    }
    sub->topics = topics;
    sub->topic_cnt = m.topics.count;
    sub->owned = owned;
    sub->owned_cnt = k;
    sub->generation = m.generation_id;
    sub->user_data_len = m.user_data.len < 0 ? -1 : m.user_data.len;
    return 0;
}

int kn_cp_assignment_encode(const kn_asg_tp *parts, int32_t part_cnt, const uint8_t *user_data,
                            int32_t user_data_len, int16_t version, uint8_t **buf, size_t *len) {
    if (version < 0 || part_cnt < 0)
        return KN_ERR__INVALID_ARG;
    if (version > KN_CP_VERSION)
        version = KN_CP_VERSION;
    size_t n = (size_t)(part_cnt ? part_cnt : 1);
    kp_ConsumerProtocolAssignment_TopicPartition *groups = kn_calloc(n, sizeof *groups);
    int32_t *pnums = kn_malloc(n * sizeof *pnums);
    int32_t *gi = kn_malloc(n * sizeof *gi); /* partition -> its group */
    int rc = KN_ERR__NOMEM;
    if (!groups || !pnums || !gi)
        goto done;
    /* Java: find(topic) in the groups made so far, else a new group. */
    int32_t ng = 0;
    for (int32_t i = 0; i < part_cnt; i++) {
        int32_t g = 0;
        while (g < ng && strcmp(groups[g].topic.ptr, parts[i].topic) != 0)
            g++;
        if (g == ng)
            groups[ng++].topic = kn_str_c(parts[i].topic);
        groups[g].partitions.count++;
        gi[i] = g;
    }
    int32_t off = 0;
    for (int32_t g = 0; g < ng; g++) {
        groups[g].partitions.items = &pnums[off];
        off += groups[g].partitions.count;
        groups[g].partitions.count = 0;
    }
    for (int32_t i = 0; i < part_cnt; i++) {
        kp_ConsumerProtocolAssignment_TopicPartition *g = &groups[gi[i]];
        g->partitions.items[g->partitions.count++] = parts[i].partition;
    }
    kp_ConsumerProtocolAssignment m;
    kp_ConsumerProtocolAssignment_init(&m);
    m.assigned_partitions.items = groups;
    m.assigned_partitions.count = ng;
    m.user_data = (kn_bytes){user_data, user_data_len < 0 ? -1 : user_data_len};
    kn_wr w;
    kn_wr_init(&w, 64, CP_MAX_BLOB);
    kn_wr_i16(&w, version);
    rc = kp_ConsumerProtocolAssignment_encode(&w, &m, version);
    if (!rc)
        rc = cp_finish(&w, buf, len);
    else
        kn_wr_free(&w);
done:
    kn_free(groups);
    kn_free(pnums);
    kn_free(gi);
    return rc;
}

int kn_cp_assignment_decode(const uint8_t *buf, size_t len, kn_arena *a, kn_asg_tp **parts, int32_t *part_cnt,
                            const uint8_t **user_data, int32_t *user_data_len, int16_t *version, char *errstr,
                            size_t errstr_size) {
    kn_rd r;
    kn_rd_init(&r, buf, len);
    int16_t use;
    *parts = NULL;
    *part_cnt = 0;
    *user_data = NULL;
    *user_data_len = -1;
    int rc = cp_version(&r, version, &use, errstr, errstr_size, "assignment");
    if (rc)
        return rc;
    kp_ConsumerProtocolAssignment m;
    rc = kp_ConsumerProtocolAssignment_decode(&r, a, &m, use);
    if (rc)
        return cp_decode_fail(&r, rc, errstr, errstr_size, "assignment", *version);
    int64_t n = 0;
    for (int32_t i = 0; i < m.assigned_partitions.count; i++)
        n += m.assigned_partitions.items[i].partitions.count;
    kn_asg_tp *out = kn_arena_calloc(a, (size_t)(n ? n : 1), sizeof *out);
    bool ok = out != NULL;
    int32_t k = 0;
    for (int32_t i = 0; ok && i < m.assigned_partitions.count; i++) {
        const kp_ConsumerProtocolAssignment_TopicPartition *tp = &m.assigned_partitions.items[i];
        const char *t = cp_arena_str(a, tp->topic.ptr, tp->topic.len < 0 ? 0 : tp->topic.len);
        ok = t != NULL;
        for (int32_t j = 0; ok && j < tp->partitions.count; j++)
            out[k++] = (kn_asg_tp){t, tp->partitions.items[j]};
    }
    const uint8_t *ud = ok ? cp_arena_bytes(a, m.user_data.ptr, m.user_data.len, &ok) : NULL;
    if (!ok) {
        kn_errstr_set(errstr, errstr_size, "assignment: out of memory");
        return KN_ERR__NOMEM;
    }
    *parts = out;
    *part_cnt = k;
    *user_data = ud;
    *user_data_len = m.user_data.len < 0 ? -1 : m.user_data.len;
    return 0;
}

/* ---- sticky user data ---- */

int kn_cp_sticky_user_data_encode(const kn_asg_tp *parts, int32_t part_cnt, int32_t generation, uint8_t **buf,
                                  size_t *len) {
    if (part_cnt < 0)
        return KN_ERR__INVALID_ARG;
    size_t n = (size_t)(part_cnt ? part_cnt : 1);
    /* Java groups with CollectionUtils.groupPartitionsByTopic (a HashMap):
     * topics in HashMap order, partitions in list order within a topic. */
    int32_t *first = kn_malloc(n * sizeof *first); /* group -> first part index */
    uint32_t *hash = kn_malloc(n * sizeof *hash);
    int32_t *order = kn_malloc(n * sizeof *order);
    int32_t *gi = kn_malloc(n * sizeof *gi);
    int rc = KN_ERR__NOMEM;
    kn_wr w;
    kn_wr_init(&w, 64, CP_MAX_BLOB);
    if (!first || !hash || !order || !gi)
        goto done;
    int32_t ng = 0;
    for (int32_t i = 0; i < part_cnt; i++) {
        int32_t g = 0;
        while (g < ng && strcmp(parts[first[g]].topic, parts[i].topic) != 0)
            g++;
        if (g == ng) {
            first[ng] = i;
            hash[ng] = kn_jorder_str_hash(parts[i].topic);
            order[ng] = ng;
            ng++;
        }
        gi[i] = g;
    }
    if (kn_jorder_sort(order, ng, hash, kn_jorder_cap(ng)))
        goto done;
    kn_wr_i32(&w, ng);
    for (int32_t k = 0; k < ng; k++) {
        int32_t g = order[k], cnt = 0;
        kn_wr_string(&w, kn_str_c(parts[first[g]].topic));
        for (int32_t i = 0; i < part_cnt; i++)
            cnt += gi[i] == g;
        kn_wr_i32(&w, cnt);
        for (int32_t i = 0; i < part_cnt; i++)
            if (gi[i] == g)
                kn_wr_i32(&w, parts[i].partition);
    }
    kn_wr_i32(&w, generation);
    rc = cp_finish(&w, buf, len);
done:
    if (rc)
        kn_wr_free(&w);
    kn_free(first);
    kn_free(hash);
    kn_free(order);
    kn_free(gi);
    return rc;
}

/* One attempt at Java's Schema.read of the sticky user data; false when
 * Java would throw. Partitions go to a (NOMEM sets *nomem). */
static bool cp_sticky_try(const uint8_t *data, int32_t len, bool with_gen, kn_arena *a, kn_asg_tp **parts,
                          int32_t *part_cnt, int32_t *generation, bool *nomem) {
    kn_rd r;
    kn_rd_init(&r, data, (size_t)len);
    int32_t nt = kn_rd_i32(&r);
    if (!kn_rd_ok(&r) || nt < 0 || (size_t)nt > kn_rd_remaining(&r))
        return false;
    /* first pass: validate and count, like Java reading into a Struct */
    size_t total = 0;
    for (int32_t i = 0; i < nt; i++) {
        int16_t sl = kn_rd_i16(&r);
        if (!kn_rd_ok(&r) || sl < 0 || (size_t)sl > kn_rd_remaining(&r))
            return false;
        kn_rd_skip(&r, (size_t)sl);
        int32_t np = kn_rd_i32(&r);
        if (!kn_rd_ok(&r) || np < 0 || (size_t)np > kn_rd_remaining(&r))
            return false;
        if (!kn_rd_skip(&r, (size_t)np * 4))
            return false;
        total += (size_t)np;
    }
    if (with_gen) {
        *generation = kn_rd_i32(&r);
        if (!kn_rd_ok(&r))
            return false;
    }
    kn_asg_tp *out = kn_arena_calloc(a, total ? total : 1, sizeof *out);
    if (!out) {
        *nomem = true;
        return false;
    }
    kn_rd_init(&r, data, (size_t)len);
    kn_rd_i32(&r);
    size_t k = 0;
    for (int32_t i = 0; i < nt; i++) {
        kn_str s = kn_rd_string(&r);
        const char *t = cp_arena_str(a, s.ptr, s.len);
        if (!t) {
            *nomem = true;
            return false;
        }
        int32_t np = kn_rd_i32(&r);
        for (int32_t j = 0; j < np; j++)
            out[k++] = (kn_asg_tp){t, kn_rd_i32(&r)};
    }
    *parts = out;
    *part_cnt = (int32_t)k;
    return true;
}

int kn_cp_sticky_user_data_decode(const uint8_t *data, int32_t len, kn_arena *a, kn_asg_tp **parts,
                                  int32_t *part_cnt, bool *has_generation, int32_t *generation) {
    bool nomem = false;
    *parts = NULL;
    *part_cnt = 0;
    *has_generation = false;
    *generation = KN_ASG_NO_GENERATION;
    if (!data || len <= 0)
        return 0;
    if (cp_sticky_try(data, len, true, a, parts, part_cnt, generation, &nomem)) {
        *has_generation = true;
        return 0;
    }
    if (!nomem && cp_sticky_try(data, len, false, a, parts, part_cnt, generation, &nomem))
        return 0;
    if (nomem)
        return KN_ERR__NOMEM;
    /* neither schema reads: Java ignores the data but keeps generation -1 */
    *has_generation = true;
    *generation = KN_ASG_NO_GENERATION;
    return 0;
}

void kn_cp_coop_user_data_encode(int32_t generation, uint8_t out[4]) {
    kn_wr_put_u32_at(out, (uint32_t)generation);
}

void kn_cp_coop_user_data_decode(const uint8_t *data, int32_t len, bool *has_generation,
                                 int32_t *generation) {
    *has_generation = false;
    *generation = KN_ASG_NO_GENERATION;
    if (!data || len < 0)
        return;
    *has_generation = true;
    if (len >= 4)
        *generation = (int32_t)(((uint32_t)data[0] << 24) | ((uint32_t)data[1] << 16) |
                                ((uint32_t)data[2] << 8) | data[3]);
}

/*
 * admin_group_offsets.c: a group's committed offsets, through its
 * coordinator: list_consumer_group_offsets (OffsetFetch v8-9, several
 * groups per request, KIP-709), alter_consumer_group_offsets
 * (OffsetCommit as a simple, generation -1 commit) and
 * delete_consumer_group_offsets (OffsetDelete). Routing and coordinator
 * retries are kna_group_run's; a partition whose answer is a coordinator
 * error makes its whole group resend, as Java's handlers do. The
 * runners (kna_list_offsets_run, kna_partition_offsets_run) serve the
 * share-group offset calls too (admin_share_groups.c).
 *
 * OffsetFetch and OffsetCommit are capped at v9: v10 names topics by id,
 * which these calls (given names) do not need.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_offset_commit.h"
#include "proto/generated/kp_offset_delete.h"
#include "proto/generated/kp_offset_fetch.h"

_Static_assert(sizeof(kp_OffsetFetchRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_OffsetCommitRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_OffsetDeleteRequest) <= KNA_GROUP_REQ_MAX, "request room");

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

size_t kna_topics_of(const kn_topic_partition_list *l, const bool *skip, const char **out) {
    size_t k = 0, n = kn_topic_partition_list_count(l);
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        const char *t = kn_topic_partition_list_topic(l, i);
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(out[j], t) == 0;
        if (!seen)
            out[k++] = t;
    }
    return k;
}

/* Index of (topic, partition) in l, or -1. */
static ptrdiff_t kna_tp_find(const kn_topic_partition_list *l, kn_str topic, int32_t partition) {
    size_t n = kn_topic_partition_list_count(l);
    for (size_t i = 0; i < n; i++) {
        const char *t = kn_topic_partition_list_topic(l, i);
        if (kn_topic_partition_list_partition(l, i) == partition && topic.len >= 0 &&
            strlen(t) == (size_t)topic.len && memcmp(t, topic.ptr, (size_t)topic.len) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

static bool kna_check_list(const kn_topic_partition_list *l, const char *fn, char *errstr,
                           size_t errstr_size) {
    if (l)
        return true;
    kn_errstr_set(errstr, errstr_size, "%s: the partition list is NULL", fn);
    return false;
}

size_t kna_wanted_size(const kna_group_call *call, const bool *sel, size_t *entriesp) {
    const kna_offsets_query *query = call->ctx;
    size_t n = 0;
    *entriesp = 0;
    for (size_t i = 0; i < call->count; i++)
        if (sel[i]) {
            n++;
            *entriesp += kn_topic_partition_list_count(query->wanted[i]);
        }
    return n;
}

int32_t kna_partitions_of(const kn_topic_partition_list *l, const char *topic, int32_t *parts) {
    int32_t n = 0;
    for (size_t e = 0; e < kn_topic_partition_list_count(l); e++)
        if (strcmp(kn_topic_partition_list_topic(l, e), topic) == 0)
            parts[n++] = kn_topic_partition_list_partition(l, e);
    return n;
}

/* ---- list_consumer_group_offsets ------------------------------------- */

static int kna_fetch_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kp_OffsetFetchRequest *req = reqv;
    const kna_offsets_query *ctx = call->ctx;
    size_t entries;
    size_t ng = kna_wanted_size(call, sel, &entries);
    size_t size = ng * sizeof(kp_OffsetFetchRequest_OffsetFetchRequestGroup) +
                  entries * (sizeof(kp_OffsetFetchRequest_OffsetFetchRequestTopics) + sizeof(int32_t) +
                             sizeof(const char *));
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    kp_OffsetFetchRequest_OffsetFetchRequestGroup *groups = (void *)buf;
    kp_OffsetFetchRequest_OffsetFetchRequestTopics *topics = (void *)(groups + ng);
    const char **names = (void *)(topics + entries);
    int32_t *parts = (void *)(names + entries);
    kp_OffsetFetchRequest_init(req);
    req->groups.items = groups;
    req->groups.count = (int32_t)ng;
    req->require_stable = ctx->require_stable;
    for (size_t i = 0; i < call->count; i++) {
        if (!sel[i])
            continue;
        kp_OffsetFetchRequest_OffsetFetchRequestGroup *g = groups++;
        kp_OffsetFetchRequest_OffsetFetchRequestGroup_init(g);
        g->group_id = kna_cstr(call->items[i].group);
        const kn_topic_partition_list *l = ctx->wanted[i];
        if (!l) {
            g->topics.count = -1; /* null: every partition the group committed */
            continue;
        }
        size_t nt = kna_topics_of(l, NULL, names);
        g->topics.items = topics;
        g->topics.count = (int32_t)nt;
        for (size_t t = 0; t < nt; t++) {
            kp_OffsetFetchRequest_OffsetFetchRequestTopics_init(&topics[t]);
            topics[t].name = kna_cstr(names[t]);
            topics[t].partition_indexes.items = parts;
            topics[t].partition_indexes.count = kna_partitions_of(l, names[t], parts);
            parts += topics[t].partition_indexes.count;
        }
        topics += nt;
        names += nt;
    }
    return 0;
}

/* One group's answer into a fresh list (replacing an earlier one). */
static int kna_fetch_group(kna_group_call *call, size_t i,
                           const kp_OffsetFetchResponse_OffsetFetchResponseGroup *g) {
    kna_offsets_query *ctx = call->ctx;
    int resend = 0;
    for (int32_t t = 0; t < g->topics.count && !resend; t++)
        for (int32_t p = 0; p < g->topics.items[t].partitions.count && !resend; p++) {
            int e = g->topics.items[t].partitions.items[p].error_code;
            if (kna_group_error_action(e) != KNA_GROUP_DONE)
                resend = e;
        }
    kn_str none = {NULL, -1};
    if (kna_group_answer(call, i, g->error_code ? g->error_code : resend, none))
        return KN_ERR__NOMEM;
    if (g->error_code || resend)
        return 0;
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    if (!l)
        return KN_ERR__NOMEM;
    for (int32_t t = 0; t < g->topics.count; t++) {
        const kp_OffsetFetchResponse_OffsetFetchResponseTopics *rt = &g->topics.items[t];
        char *topic =
            kn_strndup(rt->name.ptr ? rt->name.ptr : "", rt->name.len > 0 ? (size_t)rt->name.len : 0);
        for (int32_t p = 0; topic && p < rt->partitions.count; p++) {
            const kp_OffsetFetchResponse_OffsetFetchResponsePartitions *rp = &rt->partitions.items[p];
            int k = kn_topic_partition_list_add(l, topic, rp->partition_index);
            if (k < 0) {
                if (k != KN_ERR__NOMEM)
                    continue; /* a name the list refuses (empty): skip, never crash */
                kn_free(topic);
                topic = NULL;
                break;
            }
            kn_topic_partition_list_set_offset(l, (size_t)k, rp->committed_offset);
            kn_topic_partition_list_set_leader_epoch(l, (size_t)k, rp->committed_leader_epoch);
            kn_topic_partition_list_set_err(l, (size_t)k, rp->error_code);
            char *md = rp->metadata.len >= 0
                           ? kn_strndup(rp->metadata.ptr ? rp->metadata.ptr : "", (size_t)rp->metadata.len)
                           : NULL;
            if ((rp->metadata.len >= 0 && !md) ||
                (md && kn_topic_partition_list_set_metadata(l, (size_t)k, md) != KN_OK)) {
                kn_free(md);
                kn_free(topic);
                topic = NULL;
                break;
            }
            kn_free(md);
        }
        if (!topic) {
            kn_topic_partition_list_destroy(l);
            return KN_ERR__NOMEM;
        }
        kn_free(topic);
    }
    kn_topic_partition_list_destroy(ctx->out->items[i].parts);
    ctx->out->items[i].parts = l;
    return 0;
}

static int kna_fetch_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_OffsetFetchResponse *body = resp->body;
    for (int32_t k = 0; k < body->groups.count; k++) {
        ptrdiff_t i = kna_group_find(call, sel, body->groups.items[k].group_id);
        if (i >= 0 && kna_fetch_group(call, (size_t)i, &body->groups.items[k]))
            return KN_ERR__NOMEM;
    }
    return 0;
}

kn_group_offsets *kna_offsets_new(const kna_group_item *items, size_t n) {
    kn_group_offsets *o = kn_calloc(1, sizeof(*o));
    if (!o || !(o->items = kn_calloc(n ? n : 1, sizeof(*o->items)))) {
        kn_free(o);
        return NULL;
    }
    o->count = n;
    for (size_t i = 0; i < n; i++)
        if (!(o->items[i].group = kn_strdup(items[i].group)) ||
            !(o->items[i].parts = kn_topic_partition_list_new())) {
            kn_group_offsets_destroy(o);
            return NULL;
        }
    return o;
}

int kna_list_offsets_run(kn_admin *admin, const char *fn, const kn_group_offsets_spec *specs, size_t count,
                         bool require_stable, int timeout_ms, kna_group_call *call, kn_group_offsets **offsetsp,
                         char *errstr, size_t errstr_size) {
    if (!admin || !offsetsp || (count && !specs)) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *offsetsp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!specs[k].group) {
            kn_errstr_set(errstr, errstr_size, "%s: spec %zu has a NULL group", fn, k);
            return KN_ERR__INVALID_ARG;
        }
    int err = KN_ERR__NOMEM;
    size_t n = 0;
    kn_group_offsets *out = NULL;
    kna_group_item *items = kn_calloc(count ? count : 1, sizeof(*items));
    const kn_topic_partition_list **wanted = kn_calloc(count ? count : 1, sizeof(*wanted));
    if (!items || !wanted)
        goto fail;
    for (size_t k = 0; k < count; k++) { /* a group given twice: the first spec wins */
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strcmp(items[j].group, specs[k].group) == 0;
        if (seen)
            continue;
        items[n] = (kna_group_item){.group = specs[k].group, .node = -1, .pending = true};
        wanted[n++] = specs[k].partitions;
    }
    if (!(out = kna_offsets_new(items, n)))
        goto fail;
    kna_offsets_query query = {out, wanted, require_stable};
    call->admin = admin;
    call->deadline = kna_deadline(admin, timeout_ms);
    call->batch = true;
    call->items = items;
    call->count = n;
    call->ctx = &query;
    if ((err = kna_group_run(call, errstr, errstr_size)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        kna_take_item_error(&items[i], &out->items[i].err, &out->items[i].message);
    kna_group_items_clear(items, n);
    kn_free(items);
    kn_free(wanted);
    *offsetsp = out;
    return KN_OK;
fail:
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
out:
    kna_group_items_clear(items, n);
    kn_free(items);
    kn_free(wanted);
    kn_group_offsets_destroy(out);
    return err;
}

int kn_admin_list_consumer_group_offsets(kn_admin *admin, const kn_group_offsets_spec *specs, size_t count,
                                         int flags, int timeout_ms, kn_group_offsets **offsetsp, char *errstr,
                                         size_t errstr_size) {
    kna_group_call call = {.what = "OffsetFetch",
                           .api_key = KP_API_OFFSET_FETCH,
                           .min_version = 8,
                           .max_version = 9,
                           .build = kna_fetch_build,
                           .absorb = kna_fetch_absorb};
    return kna_list_offsets_run(admin, "kn_admin_list_consumer_group_offsets", specs, count,
                                (flags & KN_ADMIN_REQUIRE_STABLE) != 0, timeout_ms, &call, offsetsp, errstr,
                                errstr_size);
}

/* ---- alter / delete: one group, one partition list ------------------- */

static int kna_commit_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    (void)sel;
    kp_OffsetCommitRequest *req = reqv;
    const kna_partitions_ctx *ctx = call->ctx;
    const kn_topic_partition_list *l = ctx->parts;
    size_t n = kn_topic_partition_list_count(l);
    size_t size = n * (sizeof(kp_OffsetCommitRequest_OffsetCommitRequestTopic) +
                       sizeof(kp_OffsetCommitRequest_OffsetCommitRequestPartition) + sizeof(const char *));
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    /* Pointers first, then the structs: each part stays aligned. */
    const char **names = (void *)buf;
    kp_OffsetCommitRequest_OffsetCommitRequestTopic *topics = (void *)(names + n);
    kp_OffsetCommitRequest_OffsetCommitRequestPartition *parts = (void *)(topics + n);
    kp_OffsetCommitRequest_init(req);
    req->group_id = kna_cstr(call->items[0].group);
    req->generation_id_or_member_epoch = -1; /* a simple (admin) commit */
    req->member_id = kna_cstr("");
    req->group_instance_id = kna_cstr(NULL);
    size_t nt = kna_topics_of(l, ctx->skip, names);
    req->topics.items = topics;
    req->topics.count = (int32_t)nt;
    for (size_t t = 0; t < nt; t++) {
        kp_OffsetCommitRequest_OffsetCommitRequestTopic_init(&topics[t]);
        topics[t].name = kna_cstr(names[t]);
        topics[t].partitions.items = parts;
        for (size_t e = 0; e < n; e++) {
            if (ctx->skip[e] || strcmp(kn_topic_partition_list_topic(l, e), names[t]) != 0)
                continue;
            kp_OffsetCommitRequest_OffsetCommitRequestPartition *p = parts++;
            kp_OffsetCommitRequest_OffsetCommitRequestPartition_init(p);
            p->partition_index = kn_topic_partition_list_partition(l, e);
            p->committed_offset = kn_topic_partition_list_offset(l, e);
            p->committed_leader_epoch = kn_topic_partition_list_leader_epoch(l, e);
            p->committed_metadata = kna_cstr(kn_topic_partition_list_metadata(l, e));
            topics[t].partitions.count++;
        }
    }
    return 0;
}

static int kna_commit_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    (void)sel;
    const kp_OffsetCommitResponse *body = resp->body;
    kna_partitions_ctx *ctx = call->ctx;
    int resend = 0;
    for (int32_t t = 0; t < body->topics.count; t++)
        for (int32_t p = 0; p < body->topics.items[t].partitions.count; p++) {
            int e = body->topics.items[t].partitions.items[p].error_code;
            if (kna_group_error_action(e) != KNA_GROUP_DONE)
                resend = e;
        }
    kn_str none = {NULL, -1};
    if (resend)
        return kna_group_answer(call, 0, resend, none);
    for (int32_t t = 0; t < body->topics.count; t++) {
        const kp_OffsetCommitResponse_OffsetCommitResponseTopic *rt = &body->topics.items[t];
        for (int32_t p = 0; p < rt->partitions.count; p++) {
            ptrdiff_t k = kna_tp_find(ctx->parts, rt->name, rt->partitions.items[p].partition_index);
            if (k >= 0)
                kn_topic_partition_list_set_err(ctx->parts, (size_t)k, rt->partitions.items[p].error_code);
        }
    }
    return kna_group_answer(call, 0, 0, none);
}

static int kna_odelete_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    (void)sel;
    kp_OffsetDeleteRequest *req = reqv;
    const kna_partitions_ctx *ctx = call->ctx;
    const kn_topic_partition_list *l = ctx->parts;
    size_t n = kn_topic_partition_list_count(l);
    size_t size = n * (sizeof(kp_OffsetDeleteRequest_OffsetDeleteRequestTopic) +
                       sizeof(kp_OffsetDeleteRequest_OffsetDeleteRequestPartition) + sizeof(const char *));
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    /* Pointers first, then the structs (the partitions, 4 bytes each,
     * last): each part stays aligned. */
    const char **names = (void *)buf;
    kp_OffsetDeleteRequest_OffsetDeleteRequestTopic *topics = (void *)(names + n);
    kp_OffsetDeleteRequest_OffsetDeleteRequestPartition *parts = (void *)(topics + n);
    kp_OffsetDeleteRequest_init(req);
    req->group_id = kna_cstr(call->items[0].group);
    size_t nt = kna_topics_of(l, NULL, names);
    req->topics.items = topics;
    req->topics.count = (int32_t)nt;
    for (size_t t = 0; t < nt; t++) {
        kp_OffsetDeleteRequest_OffsetDeleteRequestTopic_init(&topics[t]);
        topics[t].name = kna_cstr(names[t]);
        topics[t].partitions.items = parts;
        for (size_t e = 0; e < n; e++)
            if (strcmp(kn_topic_partition_list_topic(l, e), names[t]) == 0) {
                kp_OffsetDeleteRequest_OffsetDeleteRequestPartition_init(parts);
                (parts++)->partition_index = kn_topic_partition_list_partition(l, e);
                topics[t].partitions.count++;
            }
    }
    return 0;
}

static int kna_odelete_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    (void)sel;
    const kp_OffsetDeleteResponse *body = resp->body;
    kna_partitions_ctx *ctx = call->ctx;
    kn_str none = {NULL, -1};
    if (body->error_code)
        return kna_group_answer(call, 0, body->error_code, none);
    for (int32_t t = 0; t < body->topics.count; t++) {
        const kp_OffsetDeleteResponse_OffsetDeleteResponseTopic *rt = &body->topics.items[t];
        for (int32_t p = 0; p < rt->partitions.count; p++) {
            ptrdiff_t k = kna_tp_find(ctx->parts, rt->name, rt->partitions.items[p].partition_index);
            if (k >= 0)
                kn_topic_partition_list_set_err(ctx->parts, (size_t)k, rt->partitions.items[p].error_code);
        }
    }
    return kna_group_answer(call, 0, 0, none);
}

int kna_partition_offsets_run(kn_admin *admin, const char *fn, const char *group,
                              const kn_topic_partition_list *input, bool refuse_negative, int timeout_ms,
                              kna_group_call *call, kn_group_offsets **resultp, char *errstr, size_t errstr_size) {
    if (!admin || !group || !resultp || !kna_check_list(input, fn, errstr, errstr_size)) {
        if (!admin || !group || !resultp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultp = NULL;
    int err = KN_ERR__NOMEM;
    kna_group_item item = {.group = group, .node = -1, .pending = true};
    kn_group_offsets *out = kna_offsets_new(&item, 1);
    size_t n = kn_topic_partition_list_count(input);
    bool *skip = kn_calloc(n ? n : 1, sizeof(*skip));
    if (!out || !skip)
        goto nomem;
    kn_topic_partition_list_destroy(out->items[0].parts);
    if (!(out->items[0].parts = kn_topic_partition_list_copy(input)))
        goto nomem;
    kn_topic_partition_list *parts = out->items[0].parts;
    size_t sent = 0;
    for (size_t e = 0; e < n; e++) {
        kn_topic_partition_list_set_err(parts, e, 0);
        skip[e] = refuse_negative && kn_topic_partition_list_offset(parts, e) < 0;
        if (skip[e])
            kn_topic_partition_list_set_err(parts, e, KN_ERR__INVALID_ARG);
        sent += !skip[e];
    }
    if (sent) {
        kna_partitions_ctx ctx = {parts, skip};
        call->admin = admin;
        call->deadline = kna_deadline(admin, timeout_ms);
        call->items = &item;
        call->count = 1;
        call->ctx = &ctx;
        if ((err = kna_group_run(call, errstr, errstr_size)) != 0)
            goto fail;
        kna_take_item_error(&item, &out->items[0].err, &out->items[0].message);
    }
    kn_free(skip);
    *resultp = out;
    return KN_OK;
nomem:
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    kna_group_items_clear(&item, 1);
    kn_free(skip);
    kn_group_offsets_destroy(out);
    return err;
}

int kn_admin_alter_consumer_group_offsets(kn_admin *admin, const char *group,
                                          const kn_topic_partition_list *offsets, int timeout_ms,
                                          kn_group_offsets **resultp, char *errstr, size_t errstr_size) {
    /* Java's OffsetAndMetadata refuses a negative offset; here it fails
     * only its own entry. */
    kna_group_call call = {.what = "OffsetCommit",
                           .api_key = KP_API_OFFSET_COMMIT,
                           .min_version = -1,
                           .max_version = 9,
                           .build = kna_commit_build,
                           .absorb = kna_commit_absorb};
    return kna_partition_offsets_run(admin, "kn_admin_alter_consumer_group_offsets", group, offsets, true,
                                     timeout_ms, &call, resultp, errstr, errstr_size);
}

int kn_admin_delete_consumer_group_offsets(kn_admin *admin, const char *group,
                                           const kn_topic_partition_list *partitions, int timeout_ms,
                                           kn_group_offsets **resultp, char *errstr, size_t errstr_size) {
    kna_group_call call = {.what = "OffsetDelete",
                           .api_key = KP_API_OFFSET_DELETE,
                           .min_version = -1,
                           .max_version = -1,
                           .build = kna_odelete_build,
                           .absorb = kna_odelete_absorb};
    return kna_partition_offsets_run(admin, "kn_admin_delete_consumer_group_offsets", group, partitions, false,
                                     timeout_ms, &call, resultp, errstr, errstr_size);
}

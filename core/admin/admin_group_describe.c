/*
 * admin_group_describe.c: the steps describing a group shares across
 * group types (consumer, classic, share, streams): run one describe
 * call for a set of groups at their coordinators, start one described
 * group's answer, and turn a response's topic partitions into a list.
 * Each type's own request, response fields and members stay in its
 * file (admin_groups.c, admin_share_groups.c, admin_streams_groups.c).
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"

int kna_describe_groups_run(kn_admin *admin, const char *fn, const char *const *groups, size_t count,
                            int timeout_ms, kna_group_call *call, kna_describe_ctx *ctx,
                            kn_group_descriptions **descp, char *errstr, size_t errstr_size) {
    if (!admin || !descp || !kna_check_names(groups, count, fn, errstr, errstr_size)) {
        if (!admin || !descp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    size_t n = 0;
    kna_group_item *items = kna_group_items(groups, count, &n);
    kn_group_descriptions *desc = items ? kna_descriptions_new(items, n) : NULL;
    int err = KN_ERR__NOMEM;
    if (!items || !desc) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        goto out;
    }
    ctx->desc = desc;
    call->admin = admin;
    call->deadline = kna_deadline(admin, timeout_ms);
    call->batch = true;
    call->items = items;
    call->count = n;
    call->ctx = ctx;
    if ((err = kna_group_run(call, errstr, errstr_size)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        kna_take_item_error(&items[i], &desc->items[i].err, &desc->items[i].message);
    *descp = desc;
    desc = NULL;
out:
    kna_group_items_clear(items, n);
    kn_free(items);
    kn_group_descriptions_destroy(desc);
    return err;
}

kna_group_desc *kna_describe_start(kna_group_call *call, const bool *sel, int32_t node,
                                   const kna_described_group *g, int *errp) {
    kna_describe_ctx *ctx = call->ctx;
    *errp = 0;
    ptrdiff_t i = kna_group_find(call, sel, g->group_id);
    if (i < 0)
        return NULL;
    if (kna_group_answer(call, (size_t)i, g->error_code, g->error_message))
        goto nomem;
    if (g->error_code)
        return NULL;
    kna_group_desc *d = &ctx->desc->items[i];
    d->coordinator = node;
    d->group_epoch = g->group_epoch;
    d->assignment_epoch = g->assignment_epoch;
    d->authorized_ops = g->authorized_ops;
    kn_str type = {g->type, (int32_t)strlen(g->type)};
    if (!kna_set_str(&d->state, g->state) || !kna_set_str(&d->type, type))
        goto nomem;
    if (g->member_count > 0 && !(d->members = kn_calloc((size_t)g->member_count, sizeof(*d->members))))
        goto nomem;
    return d;
nomem:
    *errp = KN_ERR__NOMEM;
    return NULL;
}

int kna_tplist_add_topic(kn_topic_partition_list *l, kn_str topic, const kp_int32_array *partitions) {
    char *name = kn_strndup(topic.ptr ? topic.ptr : "", topic.len > 0 ? (size_t)topic.len : 0);
    if (!name)
        return KN_ERR__NOMEM;
    int err = 0;
    for (int32_t p = 0; !err && p < partitions->count; p++)
        if (kn_topic_partition_list_add(l, name, partitions->items[p]) == KN_ERR__NOMEM)
            err = KN_ERR__NOMEM;
    kn_free(name);
    return err;
}

/*
 * admin_group_results.c: the group calls' result objects
 * (kn_group_results, kn_group_list, kn_group_descriptions,
 * kn_group_offsets) and the small helpers the group operations share.
 * Every string and partition list is owned by its object and freed by
 * the object's _destroy.
 */
#include <string.h>

#include "admin/admin.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"

size_t kna_distinct(const char *const *in, size_t n, const char **out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(out[j], in[i]) == 0;
        if (!seen)
            out[k++] = in[i];
    }
    return k;
}

void kna_take_item_error(kna_group_item *it, int *errp, char **messagep) {
    *errp = it->err;
    kn_free(*messagep);
    *messagep = it->err ? it->message : NULL;
    if (!it->err)
        kn_free(it->message);
    it->message = NULL;
}

bool kna_set_str(char **dst, kn_str s) {
    bool ok = true;
    kn_free(*dst);
    *dst = kna_strdup_str(s, &ok);
    return ok;
}

#define KNA_AT(obj, i) ((obj) && (i) < (obj)->count ? &(obj)->items[i] : NULL)

static const char *kna_err_text(int err, const char *message) {
    if (!err)
        return NULL;
    return message ? message : kn_err_message(err);
}

/* ---- kn_group_results ------------------------------------------------ */

size_t kn_group_results_count(const kn_group_results *r) { return r ? r->count : 0; }

const char *kn_group_results_name(const kn_group_results *r, size_t i) {
    const kna_named_result *x = KNA_AT(r, i);
    return x ? x->name : NULL;
}

int kn_group_results_error(const kn_group_results *r, size_t i) {
    const kna_named_result *x = KNA_AT(r, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_group_results_error_message(const kn_group_results *r, size_t i) {
    const kna_named_result *x = KNA_AT(r, i);
    return x ? kna_err_text(x->err, x->message) : NULL;
}

void kn_group_results_destroy(kn_group_results *r) {
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        kn_free(r->items[i].name);
        kn_free(r->items[i].message);
    }
    kn_free(r->items);
    kn_free(r);
}

/* ---- kn_group_list --------------------------------------------------- */

size_t kn_group_list_count(const kn_group_list *l) { return l ? l->count : 0; }

const char *kn_group_list_group_id(const kn_group_list *l, size_t i) {
    const kna_listed_group *x = KNA_AT(l, i);
    return x ? x->group_id : NULL;
}

const char *kn_group_list_protocol_type(const kn_group_list *l, size_t i) {
    const kna_listed_group *x = KNA_AT(l, i);
    return x ? x->protocol_type : NULL;
}

const char *kn_group_list_state(const kn_group_list *l, size_t i) {
    const kna_listed_group *x = KNA_AT(l, i);
    return x ? x->state : NULL;
}

const char *kn_group_list_type(const kn_group_list *l, size_t i) {
    const kna_listed_group *x = KNA_AT(l, i);
    return x ? x->type : NULL;
}

int kn_group_list_error(const kn_group_list *l) { return l ? l->err : KN_ERR__INVALID_ARG; }

const char *kn_group_list_error_message(const kn_group_list *l) {
    return l ? kna_err_text(l->err, l->message) : NULL;
}

void kn_group_list_destroy(kn_group_list *l) {
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++) {
        kn_free(l->items[i].group_id);
        kn_free(l->items[i].protocol_type);
        kn_free(l->items[i].state);
        kn_free(l->items[i].type);
    }
    kn_free(l->items);
    kn_free(l->message);
    kn_free(l);
}

/* ---- kn_group_descriptions ------------------------------------------- */

size_t kn_group_descriptions_count(const kn_group_descriptions *d) { return d ? d->count : 0; }

const char *kn_group_descriptions_group_id(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->group_id : NULL;
}

int kn_group_descriptions_error(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_group_descriptions_error_message(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? kna_err_text(x->err, x->message) : NULL;
}

const char *kn_group_descriptions_state(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->state : NULL;
}

const char *kn_group_descriptions_type(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->type : NULL;
}

const char *kn_group_descriptions_assignor(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->assignor : NULL;
}

int kn_group_descriptions_is_simple(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x && x->is_simple;
}

const char *kn_group_descriptions_protocol_type(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->protocol_type : NULL;
}

int32_t kn_group_descriptions_coordinator(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->coordinator : -1;
}

int32_t kn_group_descriptions_group_epoch(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->group_epoch : -1;
}

int32_t kn_group_descriptions_assignment_epoch(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->assignment_epoch : -1;
}

int32_t kn_group_descriptions_authorized_operations(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->authorized_ops : INT32_MIN;
}

size_t kn_group_descriptions_member_count(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->member_count : 0;
}

static const kna_group_member *kna_member(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x && m < x->member_count ? &x->members[m] : NULL;
}

const char *kn_group_descriptions_member_id(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->member_id : NULL;
}

const char *kn_group_descriptions_member_instance_id(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->instance_id : NULL;
}

const char *kn_group_descriptions_member_client_id(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->client_id : NULL;
}

const char *kn_group_descriptions_member_host(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->host : NULL;
}

int32_t kn_group_descriptions_member_epoch(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->epoch : -1;
}

const kn_topic_partition_list *kn_group_descriptions_member_assignment(const kn_group_descriptions *d,
                                                                       size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->assignment : NULL;
}

const kn_topic_partition_list *kn_group_descriptions_member_target_assignment(const kn_group_descriptions *d,
                                                                              size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->target : NULL;
}

/* ---- streams groups' extra fields ---- */

int32_t kn_group_descriptions_topology_epoch(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->topology_epoch : -1;
}

size_t kn_group_descriptions_subtopology_count(const kn_group_descriptions *d, size_t i) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x ? x->subtopology_count : 0;
}

static const kna_subtopology *kna_subtopology_at(const kn_group_descriptions *d, size_t i, size_t s) {
    const kna_group_desc *x = KNA_AT(d, i);
    return x && s < x->subtopology_count ? &x->subtopologies[s] : NULL;
}

const char *kn_group_descriptions_subtopology_id(const kn_group_descriptions *d, size_t i, size_t s) {
    const kna_subtopology *st = kna_subtopology_at(d, i, s);
    return st ? st->id : NULL;
}

size_t kn_group_descriptions_subtopology_topic_count(const kn_group_descriptions *d, size_t i, size_t s,
                                                     int kind) {
    const kna_subtopology *st = kna_subtopology_at(d, i, s);
    return st && kind >= 0 && kind < 4 ? st->topic_count[kind] : 0;
}

const char *kn_group_descriptions_subtopology_topic(const kn_group_descriptions *d, size_t i, size_t s, int kind,
                                                    size_t t) {
    const kna_subtopology *st = kna_subtopology_at(d, i, s);
    return st && kind >= 0 && kind < 4 && t < st->topic_count[kind] ? st->topics[kind][t] : NULL;
}

const char *kn_group_descriptions_member_process_id(const kn_group_descriptions *d, size_t i, size_t m) {
    const kna_group_member *x = kna_member(d, i, m);
    return x ? x->process_id : NULL;
}

const kn_topic_partition_list *kn_group_descriptions_member_tasks(const kn_group_descriptions *d, size_t i,
                                                                  size_t m, int kind) {
    const kna_group_member *x = kna_member(d, i, m);
    return x && kind >= 0 && kind < 6 ? x->tasks[kind] : NULL;
}

kn_group_descriptions *kna_descriptions_new(const kna_group_item *items, size_t n) {
    kn_group_descriptions *d = kn_calloc(1, sizeof(*d));
    if (!d || !(d->items = kn_calloc(n ? n : 1, sizeof(*d->items)))) {
        kn_free(d);
        return NULL;
    }
    d->count = n;
    for (size_t i = 0; i < n; i++) {
        kna_group_desc *x = &d->items[i];
        x->coordinator = x->group_epoch = x->assignment_epoch = x->topology_epoch = -1;
        x->authorized_ops = INT32_MIN;
        if (!(x->group_id = kn_strdup(items[i].group))) {
            kn_group_descriptions_destroy(d);
            return NULL;
        }
    }
    return d;
}

void kn_group_descriptions_destroy(kn_group_descriptions *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++) {
        kna_group_desc *x = &d->items[i];
        for (size_t m = 0; m < x->member_count; m++) {
            kna_group_member *mb = &x->members[m];
            kn_free(mb->member_id);
            kn_free(mb->instance_id);
            kn_free(mb->client_id);
            kn_free(mb->host);
            kn_topic_partition_list_destroy(mb->assignment);
            kn_topic_partition_list_destroy(mb->target);
            kn_free(mb->process_id);
            for (size_t k = 0; k < 6; k++)
                kn_topic_partition_list_destroy(mb->tasks[k]);
            kna_streams_member_free(mb->streams);
        }
        kn_free(x->members);
        for (size_t s = 0; s < x->subtopology_count; s++) {
            kna_subtopology *st = &x->subtopologies[s];
            kn_free(st->id);
            for (size_t k = 0; k < 2; k++)
                kna_topic_infos_free(st->infos[k], st->topic_count[KN_SUBTOPOLOGY_STATE_CHANGELOG + k]);
            for (size_t k = 0; k < 4; k++) {
                for (size_t t = 0; t < st->topic_count[k]; t++)
                    kn_free(st->topics[k][t]);
                kn_free(st->topics[k]);
            }
        }
        kn_free(x->subtopologies);
        kn_free(x->group_id);
        kn_free(x->message);
        kn_free(x->state);
        kn_free(x->type);
        kn_free(x->assignor);
        kn_free(x->protocol_type);
    }
    kn_free(d->items);
    kn_free(d);
}

/* ---- kn_group_offsets ------------------------------------------------ */

size_t kn_group_offsets_count(const kn_group_offsets *o) { return o ? o->count : 0; }

const char *kn_group_offsets_group(const kn_group_offsets *o, size_t i) {
    const kna_group_offsets_entry *x = KNA_AT(o, i);
    return x ? x->group : NULL;
}

int kn_group_offsets_error(const kn_group_offsets *o, size_t i) {
    const kna_group_offsets_entry *x = KNA_AT(o, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_group_offsets_error_message(const kn_group_offsets *o, size_t i) {
    const kna_group_offsets_entry *x = KNA_AT(o, i);
    return x ? kna_err_text(x->err, x->message) : NULL;
}

const kn_topic_partition_list *kn_group_offsets_partitions(const kn_group_offsets *o, size_t i) {
    const kna_group_offsets_entry *x = KNA_AT(o, i);
    return x ? x->parts : NULL;
}

int64_t kn_group_offsets_lag(const kn_group_offsets *o, size_t i, size_t k) {
    const kna_group_offsets_entry *x = KNA_AT(o, i);
    return x && x->lags && k < kn_topic_partition_list_count(x->parts) ? x->lags[k] : -1;
}

void kn_group_offsets_destroy(kn_group_offsets *o) {
    if (!o)
        return;
    for (size_t i = 0; i < o->count; i++) {
        kn_free(o->items[i].group);
        kn_free(o->items[i].message);
        kn_topic_partition_list_destroy(o->items[i].parts);
        kn_free(o->items[i].lags);
    }
    kn_free(o->items);
    kn_free(o);
}

/*
 * admin_results.c: the admin's plain-data objects: kn_new_topic (input
 * of create_topics) and the result objects the operations return
 * (kn_topic_results, kn_topic_list, kn_topic_descriptions with their
 * kn_partition_info, kn_cluster_description). Each owns copies of all
 * its strings and arrays and is freed by its own _destroy.
 */
#include <string.h>

#include "admin/admin.h"
#include "kn_alloc.h"

/* ---- kn_new_topic ---------------------------------------------------- */

kn_new_topic *kn_new_topic_new(const char *name, int32_t partitions, int16_t replication_factor) {
    if (!name)
        return NULL;
    kn_new_topic *nt = kn_calloc(1, sizeof(*nt));
    if (!nt)
        return NULL;
    nt->name = kn_strdup(name);
    if (!nt->name) {
        kn_free(nt);
        return NULL;
    }
    nt->partitions = partitions;
    nt->replication_factor = replication_factor;
    return nt;
}

void kn_new_topic_destroy(kn_new_topic *nt) {
    if (!nt)
        return;
    for (size_t i = 0; i < nt->config_count; i++) {
        kn_free(nt->configs[i].key);
        kn_free(nt->configs[i].value);
    }
    kn_free(nt->configs);
    for (size_t i = 0; i < nt->assignment_count; i++)
        kn_free(nt->assignments[i].broker_ids);
    kn_free(nt->assignments);
    kn_free(nt->name);
    kn_free(nt);
}

int kn_new_topic_set_config(kn_new_topic *nt, const char *key, const char *value) {
    if (!nt || !key || !*key)
        return KN_ERR__INVALID_ARG;
    struct kna_config *c = kn_realloc(nt->configs, (nt->config_count + 1) * sizeof(*c));
    if (!c)
        return KN_ERR__NOMEM;
    nt->configs = c;
    c = &nt->configs[nt->config_count];
    c->key = kn_strdup(key);
    c->value = value ? kn_strdup(value) : NULL;
    if (!c->key || (value && !c->value)) {
        kn_free(c->key);
        kn_free(c->value);
        return KN_ERR__NOMEM;
    }
    nt->config_count++;
    return KN_OK;
}

int kn_new_topic_set_replica_assignment(kn_new_topic *nt, int32_t partition, const int32_t *broker_ids,
                                        size_t broker_count) {
    if (!nt || partition < 0 || (broker_count && !broker_ids) || broker_count > 0x7fff)
        return KN_ERR__INVALID_ARG;
    struct kna_assignment *a = kn_realloc(nt->assignments, (nt->assignment_count + 1) * sizeof(*a));
    if (!a)
        return KN_ERR__NOMEM;
    nt->assignments = a;
    a = &nt->assignments[nt->assignment_count];
    a->partition = partition;
    a->broker_count = broker_count;
    a->broker_ids = kn_malloc((broker_count ? broker_count : 1) * sizeof(int32_t));
    if (!a->broker_ids)
        return KN_ERR__NOMEM;
    if (broker_count)
        memcpy(a->broker_ids, broker_ids, broker_count * sizeof(int32_t));
    nt->assignment_count++;
    return KN_OK;
}

/* ---- kn_topic_results ------------------------------------------------ */

kn_topic_results *kna_topic_results_new(size_t n) {
    kn_topic_results *res = kn_calloc(1, sizeof(*res));
    if (!res)
        return NULL;
    res->items = kn_calloc(n ? n : 1, sizeof(*res->items));
    if (!res->items) {
        kn_free(res);
        return NULL;
    }
    res->count = n;
    for (size_t i = 0; i < n; i++) {
        res->items[i].partitions = -1;
        res->items[i].replication_factor = -1;
    }
    return res;
}

int kna_topic_result_set_name(kn_topic_results *res, size_t i, const char *name, int32_t len) {
    kn_free(res->items[i].name);
    res->items[i].name = kn_strndup(name, (size_t)len);
    return res->items[i].name ? 0 : KN_ERR__NOMEM;
}

int kna_topic_result_set_error(kn_topic_results *res, size_t i, int err, const char *msg, int32_t len) {
    kna_topic_result *r = &res->items[i];
    r->err = err;
    kn_free(r->message);
    r->message = NULL;
    if (err && msg && len >= 0) {
        r->message = kn_strndup(msg, (size_t)len);
        if (!r->message)
            return KN_ERR__NOMEM;
    }
    return 0;
}

void kn_topic_results_destroy(kn_topic_results *res) {
    if (!res)
        return;
    for (size_t i = 0; i < res->count; i++) {
        kn_free(res->items[i].name);
        kn_free(res->items[i].message);
    }
    kn_free(res->items);
    kn_free(res);
}

size_t kn_topic_results_count(const kn_topic_results *res) { return res ? res->count : 0; }

#define KNA_ITEM(obj, i) ((obj) && (i) < (obj)->count ? &(obj)->items[i] : NULL)

const char *kn_topic_results_name(const kn_topic_results *res, size_t i) {
    const kna_topic_result *r = KNA_ITEM(res, i);
    return r ? r->name : NULL;
}

int kn_topic_results_error(const kn_topic_results *res, size_t i) {
    const kna_topic_result *r = KNA_ITEM(res, i);
    return r ? r->err : KN_ERR__INVALID_ARG;
}

const char *kn_topic_results_error_message(const kn_topic_results *res, size_t i) {
    const kna_topic_result *r = KNA_ITEM(res, i);
    if (!r || !r->err)
        return NULL;
    return r->message ? r->message : kn_err_message(r->err);
}

const char *kn_topic_results_topic_id(const kn_topic_results *res, size_t i) {
    const kna_topic_result *r = KNA_ITEM(res, i);
    return r && r->has_id ? r->topic_id : NULL;
}

int32_t kn_topic_results_partitions(const kn_topic_results *res, size_t i) {
    const kna_topic_result *r = KNA_ITEM(res, i);
    return r ? r->partitions : -1;
}

int32_t kn_topic_results_replication_factor(const kn_topic_results *res, size_t i) {
    const kna_topic_result *r = KNA_ITEM(res, i);
    return r ? r->replication_factor : -1;
}

/* ---- kn_topic_list --------------------------------------------------- */

size_t kn_topic_list_count(const kn_topic_list *list) { return list ? list->count : 0; }

const char *kn_topic_list_name(const kn_topic_list *list, size_t i) {
    const kna_list_entry *e = KNA_ITEM(list, i);
    return e ? e->name : NULL;
}

const char *kn_topic_list_topic_id(const kn_topic_list *list, size_t i) {
    const kna_list_entry *e = KNA_ITEM(list, i);
    return e && e->has_id ? e->topic_id : NULL;
}

int kn_topic_list_is_internal(const kn_topic_list *list, size_t i) {
    const kna_list_entry *e = KNA_ITEM(list, i);
    return e ? e->is_internal : 0;
}

void kn_topic_list_destroy(kn_topic_list *list) {
    if (!list)
        return;
    for (size_t i = 0; i < list->count; i++)
        kn_free(list->items[i].name);
    kn_free(list->items);
    kn_free(list);
}

/* ---- kn_topic_descriptions ------------------------------------------- */

size_t kn_topic_descriptions_count(const kn_topic_descriptions *d) { return d ? d->count : 0; }

const char *kn_topic_descriptions_name(const kn_topic_descriptions *d, size_t i) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    return t ? t->name : NULL;
}

int kn_topic_descriptions_error(const kn_topic_descriptions *d, size_t i) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    return t ? t->err : KN_ERR__INVALID_ARG;
}

const char *kn_topic_descriptions_error_message(const kn_topic_descriptions *d, size_t i) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    if (!t || !t->err)
        return NULL;
    return t->message ? t->message : kn_err_message(t->err);
}

const char *kn_topic_descriptions_topic_id(const kn_topic_descriptions *d, size_t i) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    return t && t->has_id ? t->topic_id : NULL;
}

int kn_topic_descriptions_is_internal(const kn_topic_descriptions *d, size_t i) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    return t ? t->is_internal : 0;
}

size_t kn_topic_descriptions_partition_count(const kn_topic_descriptions *d, size_t i) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    return t ? t->partition_count : 0;
}

const kn_partition_info *kn_topic_descriptions_partition(const kn_topic_descriptions *d, size_t i, size_t p) {
    const kna_topic_desc *t = KNA_ITEM(d, i);
    return t && p < t->partition_count ? &t->partitions[p] : NULL;
}

void kn_topic_descriptions_destroy(kn_topic_descriptions *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++) {
        kna_topic_desc *t = &d->items[i];
        for (size_t p = 0; p < t->partition_count; p++) {
            kn_free(t->partitions[p].replicas);
            kn_free(t->partitions[p].isr);
            kn_free(t->partitions[p].offline);
        }
        kn_free(t->partitions);
        kn_free(t->name);
        kn_free(t->message);
    }
    kn_free(d->items);
    kn_free(d);
}

int32_t kn_partition_info_id(const kn_partition_info *pi) { return pi ? pi->id : -1; }
int32_t kn_partition_info_leader(const kn_partition_info *pi) { return pi ? pi->leader : -1; }
int32_t kn_partition_info_leader_epoch(const kn_partition_info *pi) { return pi ? pi->leader_epoch : -1; }
int kn_partition_info_error(const kn_partition_info *pi) { return pi ? pi->err : KN_ERR__INVALID_ARG; }

static const int32_t *kna_ids(const int32_t *ids, size_t n, size_t *countp) {
    if (countp)
        *countp = n;
    return ids;
}

const int32_t *kn_partition_info_replicas(const kn_partition_info *pi, size_t *countp) {
    return pi ? kna_ids(pi->replicas, pi->replica_count, countp) : kna_ids(NULL, 0, countp);
}
const int32_t *kn_partition_info_isr(const kn_partition_info *pi, size_t *countp) {
    return pi ? kna_ids(pi->isr, pi->isr_count, countp) : kna_ids(NULL, 0, countp);
}
const int32_t *kn_partition_info_offline(const kn_partition_info *pi, size_t *countp) {
    return pi ? kna_ids(pi->offline, pi->offline_count, countp) : kna_ids(NULL, 0, countp);
}

/* ---- kn_cluster_description ------------------------------------------ */

const char *kn_cluster_description_cluster_id(const kn_cluster_description *cd) {
    return cd ? cd->cluster_id : NULL;
}
int32_t kn_cluster_description_controller_id(const kn_cluster_description *cd) {
    return cd ? cd->controller_id : -1;
}
size_t kn_cluster_description_broker_count(const kn_cluster_description *cd) {
    return cd ? cd->broker_count : 0;
}
int32_t kn_cluster_description_broker_id(const kn_cluster_description *cd, size_t i) {
    return cd && i < cd->broker_count ? cd->brokers[i].id : -1;
}
const char *kn_cluster_description_broker_host(const kn_cluster_description *cd, size_t i) {
    return cd && i < cd->broker_count ? cd->brokers[i].host : NULL;
}
int32_t kn_cluster_description_broker_port(const kn_cluster_description *cd, size_t i) {
    return cd && i < cd->broker_count ? cd->brokers[i].port : -1;
}
const char *kn_cluster_description_broker_rack(const kn_cluster_description *cd, size_t i) {
    return cd && i < cd->broker_count ? cd->brokers[i].rack : NULL;
}

void kn_cluster_description_destroy(kn_cluster_description *cd) {
    if (!cd)
        return;
    for (size_t i = 0; i < cd->broker_count; i++) {
        kn_free(cd->brokers[i].host);
        kn_free(cd->brokers[i].rack);
    }
    kn_free(cd->brokers);
    kn_free(cd->cluster_id);
    kn_free(cd);
}

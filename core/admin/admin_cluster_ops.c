/*
 * admin_cluster_ops.c: update_features (UpdateFeatures, to the
 * controller), unregister_broker (UnregisterBroker, any broker) and
 * list_config_resources (ListConfigResources v1+, any broker) with its
 * result kn_config_resource_list: cluster-wide calls with one answer.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_list_config_resources.h"
#include "proto/generated/kp_unregister_broker.h"
#include "proto/generated/kp_update_features.h"

/* A whole-response error with the broker's message (or the code's). */
static int kna_fail(int code, kn_str msg, const char *what, char *errstr, size_t errstr_size) {
    if (msg.len > 0)
        kn_errstr_set(errstr, errstr_size, "%s: %s: %.*s", what, kn_err_name(code), (int)msg.len, msg.ptr);
    else
        kn_errstr_set(errstr, errstr_size, "%s: %s: %s", what, kn_err_name(code), kn_err_message(code));
    return code;
}

/* ---- update_features ------------------------------------------------------ */

static int16_t kna_features_top(const void *body) {
    return ((const kp_UpdateFeaturesResponse *)body)->error_code;
}

int kn_admin_update_features(kn_admin *admin, const kn_feature_update *updates, size_t count, int flags,
                             int timeout_ms, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_update_features";
    if (!admin || !count || !updates || count > 0x7fff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument (at least one update)", fn);
        return KN_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        /* Java's FeatureUpdate refuses these before sending. */
        if (!updates[i].feature || !updates[i].feature[0] || updates[i].upgrade_type < KN_FEATURE_UPGRADE ||
            updates[i].upgrade_type > KN_FEATURE_UNSAFE_DOWNGRADE || updates[i].max_version_level < 0 ||
            (updates[i].max_version_level == 0 && updates[i].upgrade_type == KN_FEATURE_UPGRADE)) {
            kn_errstr_set(errstr, errstr_size,
                          "%s: update %zu (%s): a feature name, a level >= 0 and an upgrade type are needed "
                          "(level 0 only with a downgrade)",
                          fn, i, updates[i].feature ? updates[i].feature : "NULL");
            return KN_ERR__INVALID_ARG;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(updates[i].feature, updates[j].feature)) {
                kn_errstr_set(errstr, errstr_size, "%s: feature %s given twice", fn, updates[i].feature);
                return KN_ERR__INVALID_ARG;
            }
    }
    kp_UpdateFeaturesRequest_FeatureUpdateKey *keys = kn_calloc(count, sizeof(*keys));
    if (!keys) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        kp_UpdateFeaturesRequest_FeatureUpdateKey_init(&keys[i]);
        keys[i].feature = (kn_str){updates[i].feature, (int32_t)strlen(updates[i].feature)};
        keys[i].max_version_level = updates[i].max_version_level;
        keys[i].upgrade_type = (int8_t)updates[i].upgrade_type;
        /* allow_downgrade is v0 only: a non-default value would make v1+
         * unencodable, and v0 (before Kafka 3.3, older than any broker
         * this client serves) knows no upgrade types: v1 is the floor. */
    }
    kp_UpdateFeaturesRequest req;
    kp_UpdateFeaturesRequest_init(&req);
    req.timeout_ms = timeout_ms >= 0 ? timeout_ms : admin->default_timeout_ms;
    req.feature_updates.items = keys;
    req.feature_updates.count = (int32_t)count;
    req.validate_only = (flags & KN_ADMIN_VALIDATE_ONLY) != 0;
    int err = 0;
    /* v1+: upgrade types (a safe downgrade) and validate_only, which a
     * v0 broker would ignore and apply the change. */
    knw_resp *resp =
        kna_controller_call(admin, KP_API_UPDATE_FEATURES, 1, &req, timeout_ms,
                            "UpdateFeatures", kna_features_top, &err, errstr, errstr_size);
    kn_free(keys);
    if (!resp)
        return err;
    const kp_UpdateFeaturesResponse *body = resp->body;
    err = 0;
    if (body->error_code) {
        err = kna_fail(body->error_code, body->error_message, "UpdateFeatures", errstr, errstr_size);
    } else {
        /* v0-1 answer per feature: the first failure fails the call. */
        for (int32_t k = 0; k < body->results.count && !err; k++)
            if (body->results.items[k].error_code) {
                char what[160];
                snprintf(what, sizeof what, "UpdateFeatures %.*s", (int)body->results.items[k].feature.len,
                         body->results.items[k].feature.ptr);
                err = kna_fail(body->results.items[k].error_code, body->results.items[k].error_message, what,
                               errstr, errstr_size);
            }
    }
    knw_resp_free(resp);
    return err;
}

/* ---- unregister_broker ------------------------------------------------------ */

int kn_admin_unregister_broker(kn_admin *admin, int32_t broker_id, int timeout_ms, char *errstr,
                               size_t errstr_size) {
    if (!admin || broker_id < 0) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_unregister_broker: invalid argument (broker id >= 0)");
        return KN_ERR__INVALID_ARG;
    }
    kp_UnregisterBrokerRequest req;
    kp_UnregisterBrokerRequest_init(&req);
    req.broker_id = broker_id;
    int err = 0;
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_UNREGISTER_BROKER, -1, -1, &req,
                              kna_deadline(admin, timeout_ms), "UnregisterBroker", &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_UnregisterBrokerResponse *body = resp->body;
    err = body->error_code
              ? kna_fail(body->error_code, body->error_message, "UnregisterBroker", errstr, errstr_size)
              : 0;
    knw_resp_free(resp);
    return err;
}

/* ---- list_config_resources ---------------------------------------------------- */

typedef struct kna_cres {
    int8_t type;
    char *name;
} kna_cres;

struct kn_config_resource_list {
    kna_cres *items;
    size_t count;
};

void kn_config_resource_list_destroy(kn_config_resource_list *l) {
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++)
        kn_free(l->items[i].name);
    kn_free(l->items);
    kn_free(l);
}

size_t kn_config_resource_list_count(const kn_config_resource_list *l) { return l ? l->count : 0; }

int kn_config_resource_list_type(const kn_config_resource_list *l, size_t i) {
    return l && i < l->count ? l->items[i].type : -1;
}

const char *kn_config_resource_list_name(const kn_config_resource_list *l, size_t i) {
    return l && i < l->count ? l->items[i].name : NULL;
}

int kn_admin_list_config_resources(kn_admin *admin, const int8_t *types, size_t type_count, int timeout_ms,
                                   kn_config_resource_list **listp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_list_config_resources";
    if (!admin || !listp || (type_count && !types) || type_count > 0x7fff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < type_count; i++)
        if (!kn_config_resource_type_name(types[i])) {
            kn_errstr_set(errstr, errstr_size, "%s: unknown resource type %d", fn, (int)types[i]);
            return KN_ERR__INVALID_ARG;
        }
    *listp = NULL;
    kp_ListConfigResourcesRequest req;
    kp_ListConfigResourcesRequest_init(&req);
    req.resource_types = (kp_int8_array){(int8_t *)types, (int32_t)type_count};
    int err = 0;
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_LIST_CONFIG_RESOURCES, 1, -1, &req,
                 kna_deadline(admin, timeout_ms), "ListConfigResources", &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_ListConfigResourcesResponse *body = resp->body;
    if (body->error_code) {
        kn_str none = {NULL, -1};
        err = kna_fail(body->error_code, none, "ListConfigResources", errstr, errstr_size);
        knw_resp_free(resp);
        return err;
    }
    int32_t n = body->config_resources.count > 0 ? body->config_resources.count : 0;
    kn_config_resource_list *l = kn_calloc(1, sizeof(*l));
    bool ok = l && (!n || (l->items = kn_calloc((size_t)n, sizeof(*l->items))));
    for (int32_t k = 0; ok && k < n; k++) {
        kna_cres *x = &l->items[l->count++];
        x->type = body->config_resources.items[k].resource_type;
        x->name = kna_strdup_str(body->config_resources.items[k].resource_name, &ok);
    }
    knw_resp_free(resp);
    if (!ok) {
        kn_config_resource_list_destroy(l);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    *listp = l;
    return KN_OK;
}

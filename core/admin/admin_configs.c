/*
 * admin_configs.c: describe_configs, incremental_alter_configs and
 * alter_configs (DescribeConfigs, IncrementalAlterConfigs, AlterConfigs).
 *
 * Routing (Java's KafkaAdminClient): a resource that "depends on a
 * specific node" (a BROKER resource naming a broker id, any
 * BROKER_LOGGER resource) is sent to that broker, because only it knows
 * its static and logger configs; all other resources (topics, groups,
 * client metrics, the cluster-wide broker default "") go together in one
 * request to any broker, which forwards alterations to the controller.
 * So a call makes one request per distinct destination. Like Java, a
 * per-resource error is final (no per-resource retry); whole-request
 * failures (connection lost, no broker yet) are retried by kna_call
 * until the deadline. A destination whose request failed fails only its
 * own resources; the call fails as a whole only when every request did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_alter_configs.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_configs.h"
#include "proto/generated/kp_incremental_alter_configs.h"

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Java's dependsOnSpecificNode + nodeFor: sets *nodep to the broker id
 * the resource must go to, or KNW_NODE_ANY. false when the name should
 * be a broker id and is not (Java throws NumberFormatException there; we
 * fail that resource only). */
static bool kna_config_route(int8_t type, const char *name, int32_t *nodep) {
    *nodep = KNW_NODE_ANY;
    if (!((type == KN_CONFIG_RESOURCE_BROKER && name[0]) || type == KN_CONFIG_RESOURCE_BROKER_LOGGER))
        return true;
    char *end;
    long v = strtol(name, &end, 10);
    if (end == name || *end || v < 0 || v > 0x7fffffff)
        return false;
    *nodep = (int32_t)v;
    return true;
}

/* Adds a resource to the set and routes it; an unknown type or a bad
 * broker id fails the entry at once with INVALID_REQUEST. */
static int kna_config_add(kna_config_set *set, size_t cap, int8_t type, const char *name) {
    size_t i;
    bool fresh = kna_config_set_find(set, type, kna_cstr(name)) < 0;
    int err = kna_config_set_add(set, cap, type, name, &i);
    if (err || !fresh)
        return err;
    if (!kn_config_resource_type_name(type)) {
        /* The broker rejects a whole request holding one unknown type:
         * keep it out so the others are answered. */
        char msg[128];
        snprintf(msg, sizeof(msg), "unknown config resource type %d (resource '%.60s')", type, name);
        return kna_config_set_error(set, i, KN_ERR_INVALID_REQUEST, msg, (int32_t)strlen(msg));
    }
    if (!kna_config_route(type, name, &set->items[i].node)) {
        char msg[256];
        snprintf(msg, sizeof(msg), "%s resource '%.100s': the name must be a broker id",
                 type == KN_CONFIG_RESOURCE_BROKER ? "broker" : "broker_logger", name);
        return kna_config_set_error(set, i, KN_ERR_INVALID_REQUEST, msg, (int32_t)strlen(msg));
    }
    return 0;
}

/* One config call: how to build the request for the resources bound for
 * one node and how to take in its response. */
typedef struct kna_config_call {
    kn_admin *admin;
    kna_config_set *set;
    int64_t deadline;
    int16_t api_key;
    const char *what;
    int flags;
    const kn_config_op *ops; /* alter calls */
    size_t op_count;
    /* Builds the request for the pending resources whose node is node into
     * *reqp (storage), with every array in one allocation *bufp. */
    int (*build)(struct kna_config_call *call, int32_t node, void *req, void **bufp);
    int (*absorb)(struct kna_config_call *call, const void *body);
} kna_config_call;

static bool kna_bound_for(const kna_config_res *r, int32_t node) { return r->pending && r->node == node; }

/* Runs the call: one request per destination, until no resource is
 * pending. Returns 0 (results in call->set) or the whole call's error
 * with errstr set. */
static int kna_config_run(kna_config_call *call, char *errstr, size_t errstr_size) {
    union {
        kp_DescribeConfigsRequest describe;
        kp_IncrementalAlterConfigsRequest incremental;
        kp_AlterConfigsRequest alter;
    } req;
    int requests = 0, failed = 0, first_err = 0;
    char why[512] = "", first_why[512] = "";
    for (;;) {
        int32_t node = 0;
        bool any = false;
        for (size_t i = 0; i < call->set->count && !any; i++)
            if (call->set->items[i].pending) {
                node = call->set->items[i].node;
                any = true;
            }
        if (!any)
            break;
        void *buf = NULL;
        int err = call->build(call, node, &req, &buf);
        if (err) {
            kn_free(buf);
            kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->what);
            return err;
        }
        knw_resp *resp = kna_call(call->admin, node, call->api_key, -1, -1, &req, call->deadline, call->what,
                                  &err, why, sizeof(why));
        kn_free(buf);
        requests++;
        const char *miss = "The broker did not return a result for this resource";
        int miss_err = KN_ERR_UNKNOWN_SERVER_ERROR;
        if (resp) {
            err = call->absorb(call, resp->body);
            knw_resp_free(resp);
            if (err) {
                kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->what);
                return err;
            }
        } else {
            if (!failed++) {
                first_err = err;
                snprintf(first_why, sizeof(first_why), "%s", why);
            }
            miss = why;
            miss_err = err;
        }
        for (size_t i = 0; i < call->set->count; i++)
            if (kna_bound_for(&call->set->items[i], node) &&
                kna_config_set_error(call->set, i, miss_err, miss, (int32_t)strlen(miss))) {
                kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->what);
                return KN_ERR__NOMEM;
            }
    }
    if (requests > 0 && failed == requests) {
        kn_errstr_set(errstr, errstr_size, "%s", first_why);
        return first_err;
    }
    return 0;
}

/* Index of the pending resource (type, name) bound for any node, or -1. */
static ptrdiff_t kna_config_pending(const kna_config_set *set, int8_t type, kn_str name) {
    ptrdiff_t i = kna_config_set_find(set, type, name);
    return i >= 0 && set->items[i].pending ? i : -1;
}

/* ---- describe_configs ------------------------------------------------ */

static int kna_describe_build(kna_config_call *call, int32_t node, void *reqv, void **bufp) {
    kp_DescribeConfigsRequest *req = reqv;
    size_t n = 0;
    for (size_t i = 0; i < call->set->count; i++)
        n += kna_bound_for(&call->set->items[i], node);
    kp_DescribeConfigsRequest_DescribeConfigsResource *items = kn_calloc(n ? n : 1, sizeof(*items));
    if (!items)
        return KN_ERR__NOMEM;
    *bufp = items;
    kp_DescribeConfigsRequest_init(req);
    req->resources.items = items;
    req->resources.count = (int32_t)n;
    req->include_synonyms = (call->flags & KN_ADMIN_CONFIG_SYNONYMS) != 0;
    req->include_documentation = (call->flags & KN_ADMIN_CONFIG_DOCUMENTATION) != 0;
    size_t k = 0;
    for (size_t i = 0; i < call->set->count; i++) {
        const kna_config_res *r = &call->set->items[i];
        if (!kna_bound_for(r, node))
            continue;
        kp_DescribeConfigsRequest_DescribeConfigsResource_init(&items[k]);
        items[k].resource_type = r->type;
        items[k].resource_name = kna_cstr(r->name);
        items[k].configuration_keys.count = -1; /* null: every config, as Java asks */
        k++;
    }
    return 0;
}

/* Copies one described config into e (zeroed). */
static int kna_entry_copy(kn_config_entry *e,
                          const kp_DescribeConfigsResponse_DescribeConfigsResourceResult *c) {
    bool ok = true;
    e->name = kna_strdup_str(c->name, &ok);
    e->value = kna_strdup_str(c->value, &ok);
    e->documentation = kna_strdup_str(c->documentation, &ok);
    e->source = c->config_source < 0 ? KN_CONFIG_SOURCE_UNKNOWN : c->config_source;
    e->type = c->config_type;
    e->is_sensitive = c->is_sensitive;
    e->is_read_only = c->read_only;
    if (!ok || !e->name)
        return KN_ERR__NOMEM;
    if (c->synonyms.count > 0) {
        e->synonyms = kn_calloc((size_t)c->synonyms.count, sizeof(*e->synonyms));
        if (!e->synonyms)
            return KN_ERR__NOMEM;
        for (int32_t s = 0; s < c->synonyms.count; s++) {
            const kp_DescribeConfigsResponse_DescribeConfigsSynonym *syn = &c->synonyms.items[s];
            kna_synonym *out = &e->synonyms[e->synonym_count++];
            out->name = kna_strdup_str(syn->name, &ok);
            out->value = kna_strdup_str(syn->value, &ok);
            out->source = syn->source;
            if (!ok || !out->name)
                return KN_ERR__NOMEM;
        }
    }
    return 0;
}

static int kna_describe_absorb(kna_config_call *call, const void *bodyv) {
    const kp_DescribeConfigsResponse *body = bodyv;
    for (int32_t k = 0; k < body->results.count; k++) {
        const kp_DescribeConfigsResponse_DescribeConfigsResult *dr = &body->results.items[k];
        ptrdiff_t idx = kna_config_pending(call->set, dr->resource_type, dr->resource_name);
        if (idx < 0)
            continue; /* not asked for (or answered twice): ignored, as Java */
        kna_config_res *r = &call->set->items[idx];
        if (dr->error_code) {
            if (kna_config_set_error(call->set, (size_t)idx, dr->error_code, dr->error_message.ptr,
                                     dr->error_message.len))
                return KN_ERR__NOMEM;
            continue;
        }
        r->pending = false;
        if (dr->configs.count <= 0)
            continue;
        r->entries = kn_calloc((size_t)dr->configs.count, sizeof(*r->entries));
        if (!r->entries)
            return KN_ERR__NOMEM;
        for (int32_t c = 0; c < dr->configs.count; c++)
            if (kna_entry_copy(&r->entries[r->entry_count++], &dr->configs.items[c]))
                return KN_ERR__NOMEM;
    }
    return 0;
}

int kn_admin_describe_configs(kn_admin *admin, const kn_config_resource *resources, size_t count, int flags,
                              int timeout_ms, kn_config_descriptions **descp, char *errstr,
                              size_t errstr_size) {
    if (!admin || !descp || (count && !resources) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_configs: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!resources[k].name) {
            kn_errstr_set(errstr, errstr_size, "kn_admin_describe_configs: resource %zu has a NULL name", k);
            return KN_ERR__INVALID_ARG;
        }
    kn_config_descriptions *desc = kn_calloc(1, sizeof(*desc));
    int err = desc ? 0 : KN_ERR__NOMEM;
    for (size_t k = 0; k < count && !err; k++)
        err = kna_config_add(&desc->set, count, resources[k].type, resources[k].name);
    if (err) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_describe_configs: out of memory");
        goto fail;
    }
    kna_config_call call = {.admin = admin,
                            .set = &desc->set,
                            .deadline = kna_deadline(admin, timeout_ms),
                            .api_key = KP_API_DESCRIBE_CONFIGS,
                            .what = "DescribeConfigs",
                            .flags = flags,
                            .build = kna_describe_build,
                            .absorb = kna_describe_absorb};
    if ((err = kna_config_run(&call, errstr, errstr_size)) != 0)
        goto fail;
    *descp = desc;
    return KN_OK;
fail:
    kn_config_descriptions_destroy(desc);
    return err;
}

/* ---- incremental_alter_configs / alter_configs ----------------------- */

static bool kna_op_of(const kn_config_op *op, const kna_config_res *r) {
    return op->resource_type == r->type && strcmp(op->resource_name, r->name) == 0;
}

/* Counts the resources bound for node and the config entries they carry. */
static void kna_alter_count(const kna_config_call *call, int32_t node, size_t *np, size_t *mp) {
    size_t n = 0, m = 0;
    for (size_t i = 0; i < call->set->count; i++) {
        const kna_config_res *r = &call->set->items[i];
        if (!kna_bound_for(r, node))
            continue;
        n++;
        for (size_t o = 0; o < call->op_count; o++)
            m += kna_op_of(&call->ops[o], r) && call->ops[o].name;
    }
    *np = n;
    *mp = m;
}

static int kna_incremental_build(kna_config_call *call, int32_t node, void *reqv, void **bufp) {
    kp_IncrementalAlterConfigsRequest *req = reqv;
    size_t n, m;
    kna_alter_count(call, node, &n, &m);
    size_t size = n * sizeof(kp_IncrementalAlterConfigsRequest_AlterConfigsResource) +
                  m * sizeof(kp_IncrementalAlterConfigsRequest_AlterableConfig);
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    kp_IncrementalAlterConfigsRequest_AlterConfigsResource *res = (void *)buf;
    kp_IncrementalAlterConfigsRequest_AlterableConfig *cfg = (void *)(res + n);
    kp_IncrementalAlterConfigsRequest_init(req);
    req->resources.items = res;
    req->resources.count = (int32_t)n;
    req->validate_only = (call->flags & KN_ADMIN_VALIDATE_ONLY) != 0;
    for (size_t i = 0; i < call->set->count; i++) {
        const kna_config_res *r = &call->set->items[i];
        if (!kna_bound_for(r, node))
            continue;
        kp_IncrementalAlterConfigsRequest_AlterConfigsResource_init(res);
        res->resource_type = r->type;
        res->resource_name = kna_cstr(r->name);
        res->configs.items = cfg;
        for (size_t o = 0; o < call->op_count; o++) {
            const kn_config_op *op = &call->ops[o];
            if (!kna_op_of(op, r) || !op->name)
                continue;
            kp_IncrementalAlterConfigsRequest_AlterableConfig_init(cfg);
            cfg->name = kna_cstr(op->name);
            cfg->config_operation = op->op;
            /* Java sends null for DELETE whatever the value. */
            cfg->value = op->op == KN_CONFIG_OP_DELETE ? kna_cstr(NULL) : kna_cstr(op->value);
            cfg++;
            res->configs.count++;
        }
        res++;
    }
    return 0;
}

static int kna_legacy_build(kna_config_call *call, int32_t node, void *reqv, void **bufp) {
    kp_AlterConfigsRequest *req = reqv;
    size_t n, m;
    kna_alter_count(call, node, &n, &m);
    size_t size = n * sizeof(kp_AlterConfigsRequest_AlterConfigsResource) +
                  m * sizeof(kp_AlterConfigsRequest_AlterableConfig);
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    kp_AlterConfigsRequest_AlterConfigsResource *res = (void *)buf;
    kp_AlterConfigsRequest_AlterableConfig *cfg = (void *)(res + n);
    kp_AlterConfigsRequest_init(req);
    req->resources.items = res;
    req->resources.count = (int32_t)n;
    req->validate_only = (call->flags & KN_ADMIN_VALIDATE_ONLY) != 0;
    for (size_t i = 0; i < call->set->count; i++) {
        const kna_config_res *r = &call->set->items[i];
        if (!kna_bound_for(r, node))
            continue;
        kp_AlterConfigsRequest_AlterConfigsResource_init(res);
        res->resource_type = r->type;
        res->resource_name = kna_cstr(r->name);
        res->configs.items = cfg;
        for (size_t o = 0; o < call->op_count; o++) {
            const kn_config_op *op = &call->ops[o];
            if (!kna_op_of(op, r) || !op->name)
                continue;
            kp_AlterConfigsRequest_AlterableConfig_init(cfg);
            cfg->name = kna_cstr(op->name);
            cfg->value = kna_cstr(op->value);
            cfg++;
            res->configs.count++;
        }
        res++;
    }
    return 0;
}

/* Records one alter response entry (both alter responses have this
 * per-resource shape). */
static int kna_alter_one(kna_config_call *call, int8_t type, kn_str name, int16_t code, kn_str msg) {
    ptrdiff_t idx = kna_config_pending(call->set, type, name);
    if (idx < 0)
        return 0;
    return kna_config_set_error(call->set, (size_t)idx, code, msg.ptr, msg.len);
}

static int kna_incremental_absorb(kna_config_call *call, const void *bodyv) {
    const kp_IncrementalAlterConfigsResponse *body = bodyv;
    for (int32_t k = 0; k < body->responses.count; k++) {
        const kp_IncrementalAlterConfigsResponse_AlterConfigsResourceResponse *ar = &body->responses.items[k];
        if (kna_alter_one(call, ar->resource_type, ar->resource_name, ar->error_code, ar->error_message))
            return KN_ERR__NOMEM;
    }
    return 0;
}

static int kna_legacy_absorb(kna_config_call *call, const void *bodyv) {
    const kp_AlterConfigsResponse *body = bodyv;
    for (int32_t k = 0; k < body->responses.count; k++) {
        const kp_AlterConfigsResponse_AlterConfigsResourceResponse *ar = &body->responses.items[k];
        if (kna_alter_one(call, ar->resource_type, ar->resource_name, ar->error_code, ar->error_message))
            return KN_ERR__NOMEM;
    }
    return 0;
}

static int kna_alter(kn_admin *admin, const kn_config_op *ops, size_t op_count, int flags, int timeout_ms,
                     kn_config_results **resultsp, bool legacy, char *errstr, size_t errstr_size) {
    const char *fn = legacy ? "kn_admin_alter_configs" : "kn_admin_incremental_alter_configs";
    if (!admin || !resultsp || (op_count && !ops) || op_count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    for (size_t k = 0; k < op_count; k++) {
        const kn_config_op *op = &ops[k];
        bool set_like = op->op != KN_CONFIG_OP_DELETE;
        const char *bad = !op->resource_name                     ? "a NULL resource_name"
                          : !op->name && !legacy                 ? "a NULL config name"
                          : legacy && op->op != KN_CONFIG_OP_SET ? "an op other than SET"
                          : op->op < KN_CONFIG_OP_SET || op->op > KN_CONFIG_OP_SUBTRACT ? "an unknown op"
                          : set_like && op->name && !op->value                          ? "a NULL value"
                                                                                        : NULL;
        if (bad) {
            kn_errstr_set(errstr, errstr_size, "%s: op %zu (%s) has %s", fn, k,
                          op->name ? op->name : "(null)", bad);
            return KN_ERR__INVALID_ARG;
        }
    }
    kn_config_results *res = kn_calloc(1, sizeof(*res));
    int err = res ? 0 : KN_ERR__NOMEM;
    for (size_t k = 0; k < op_count && !err; k++)
        err = kna_config_add(&res->set, op_count, ops[k].resource_type, ops[k].resource_name);
    if (err) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        goto fail;
    }
    kna_config_call call = {.admin = admin,
                            .set = &res->set,
                            .deadline = kna_deadline(admin, timeout_ms),
                            .api_key = legacy ? KP_API_ALTER_CONFIGS : KP_API_INCREMENTAL_ALTER_CONFIGS,
                            .what = legacy ? "AlterConfigs" : "IncrementalAlterConfigs",
                            .flags = flags,
                            .ops = ops,
                            .op_count = op_count,
                            .build = legacy ? kna_legacy_build : kna_incremental_build,
                            .absorb = legacy ? kna_legacy_absorb : kna_incremental_absorb};
    if ((err = kna_config_run(&call, errstr, errstr_size)) != 0)
        goto fail;
    *resultsp = res;
    return KN_OK;
fail:
    kn_config_results_destroy(res);
    return err;
}

int kn_admin_incremental_alter_configs(kn_admin *admin, const kn_config_op *ops, size_t op_count, int flags,
                                       int timeout_ms, kn_config_results **resultsp, char *errstr,
                                       size_t errstr_size) {
    return kna_alter(admin, ops, op_count, flags, timeout_ms, resultsp, false, errstr, errstr_size);
}

int kn_admin_alter_configs(kn_admin *admin, const kn_config_op *ops, size_t op_count, int flags,
                           int timeout_ms, kn_config_results **resultsp, char *errstr, size_t errstr_size) {
    return kna_alter(admin, ops, op_count, flags, timeout_ms, resultsp, true, errstr, errstr_size);
}

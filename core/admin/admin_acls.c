/*
 * admin_acls.c: create_acls, describe_acls and delete_acls (CreateAcls,
 * DescribeAcls, DeleteAcls v1+, each to any broker, as Java's
 * LeastLoadedNodeProvider), their result object kn_acl_results and the
 * names of the ACL enums. Client-side checks are Java's: a creation
 * that is not definite fails alone unsent, a describe filter with an
 * UNKNOWN value fails the call, duplicates are sent once.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_create_acls.h"
#include "proto/generated/kp_delete_acls.h"
#include "proto/generated/kp_describe_acls.h"

/* ---- enum names -------------------------------------------------------- */

static const char *const kna_resource_names[] = {
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"};
static const char *const kna_pattern_names[] = {"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"};
static const char *const kna_operation_names[] = {"UNKNOWN",
                                                  "ANY",
                                                  "ALL",
                                                  "READ",
                                                  "WRITE",
                                                  "CREATE",
                                                  "DELETE",
                                                  "ALTER",
                                                  "DESCRIBE",
                                                  "CLUSTER_ACTION",
                                                  "DESCRIBE_CONFIGS",
                                                  "ALTER_CONFIGS",
                                                  "IDEMPOTENT_WRITE",
                                                  "CREATE_TOKENS",
                                                  "DESCRIBE_TOKENS",
                                                  "TWO_PHASE_COMMIT"};
static const char *const kna_permission_names[] = {"UNKNOWN", "ANY", "DENY", "ALLOW"};

static const char *const *kna_acl_names(int kind, int *countp) {
    switch (kind) {
    case KN_ACL_ENUM_RESOURCE:
        *countp = (int)(sizeof(kna_resource_names) / sizeof(*kna_resource_names));
        return kna_resource_names;
    case KN_ACL_ENUM_PATTERN:
        *countp = (int)(sizeof(kna_pattern_names) / sizeof(*kna_pattern_names));
        return kna_pattern_names;
    case KN_ACL_ENUM_OPERATION:
        *countp = (int)(sizeof(kna_operation_names) / sizeof(*kna_operation_names));
        return kna_operation_names;
    case KN_ACL_ENUM_PERMISSION:
        *countp = (int)(sizeof(kna_permission_names) / sizeof(*kna_permission_names));
        return kna_permission_names;
    default:
        *countp = 0;
        return NULL;
    }
}

const char *kn_acl_enum_name(int kind, int value) {
    int n;
    const char *const *names = kna_acl_names(kind, &n);
    return names && value > 0 && value < n ? names[value] : "UNKNOWN";
}

int kn_acl_enum_from_name(int kind, const char *name) {
    int n;
    const char *const *names = kna_acl_names(kind, &n);
    for (int v = 1; name && names && v < n; v++)
        if (strcasecmp(name, names[v]) == 0)
            return v;
    return -1;
}

/* A value Java would read as UNKNOWN. */
static bool kna_acl_unknown(int kind, int value) {
    int n;
    kna_acl_names(kind, &n);
    return value <= 0 || value >= n;
}

/* ---- the result object ------------------------------------------------- */

typedef struct kna_acl {
    kn_acl_binding b; /* strings owned */
    int err;
    char *message;
} kna_acl;

typedef struct kna_acl_entry {
    int err;
    char *message;
    kna_acl *acls;
    size_t count;
} kna_acl_entry;

struct kn_acl_results {
    kna_acl_entry *items;
    size_t count;
};

static void kna_acl_clear(kna_acl *a) {
    kn_free((char *)a->b.resource_name);
    kn_free((char *)a->b.principal);
    kn_free((char *)a->b.host);
    kn_free(a->message);
}

void kn_acl_results_destroy(kn_acl_results *r) {
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        for (size_t b = 0; b < r->items[i].count; b++)
            kna_acl_clear(&r->items[i].acls[b]);
        kn_free(r->items[i].acls);
        kn_free(r->items[i].message);
    }
    kn_free(r->items);
    kn_free(r);
}

static const kna_acl_entry *kna_acl_entry_at(const kn_acl_results *r, size_t i) {
    return r && i < r->count ? &r->items[i] : NULL;
}

static const kna_acl *kna_acl_at(const kn_acl_results *r, size_t i, size_t b) {
    const kna_acl_entry *e = kna_acl_entry_at(r, i);
    return e && b < e->count ? &e->acls[b] : NULL;
}

size_t kn_acl_results_count(const kn_acl_results *r) { return r ? r->count : 0; }

int kn_acl_results_error(const kn_acl_results *r, size_t i) {
    const kna_acl_entry *e = kna_acl_entry_at(r, i);
    return e ? e->err : KN_ERR__INVALID_ARG;
}

const char *kn_acl_results_error_message(const kn_acl_results *r, size_t i) {
    const kna_acl_entry *e = kna_acl_entry_at(r, i);
    if (!e || !e->err)
        return NULL;
    return e->message ? e->message : kn_err_message(e->err);
}

size_t kn_acl_results_binding_count(const kn_acl_results *r, size_t i) {
    const kna_acl_entry *e = kna_acl_entry_at(r, i);
    return e ? e->count : 0;
}

const kn_acl_binding *kn_acl_results_binding(const kn_acl_results *r, size_t i, size_t b) {
    const kna_acl *a = kna_acl_at(r, i, b);
    return a ? &a->b : NULL;
}

int kn_acl_results_binding_error(const kn_acl_results *r, size_t i, size_t b) {
    const kna_acl *a = kna_acl_at(r, i, b);
    return a ? a->err : KN_ERR__INVALID_ARG;
}

const char *kn_acl_results_binding_error_message(const kn_acl_results *r, size_t i, size_t b) {
    const kna_acl *a = kna_acl_at(r, i, b);
    if (!a || !a->err)
        return NULL;
    return a->message ? a->message : kn_err_message(a->err);
}

/* Copies src's strings into dst (NULLs stay NULL); false on no memory. */
static bool kna_acl_copy(kn_acl_binding *dst, const kn_acl_binding *src) {
    *dst = *src;
    dst->resource_name = src->resource_name ? kn_strdup(src->resource_name) : NULL;
    dst->principal = src->principal ? kn_strdup(src->principal) : NULL;
    dst->host = src->host ? kn_strdup(src->host) : NULL;
    return (!src->resource_name || dst->resource_name) && (!src->principal || dst->principal) &&
           (!src->host || dst->host);
}

/* A binding from the wire's fields (strings copied); false on no memory. */
static bool kna_acl_from_wire(kna_acl *a, int8_t rtype, kn_str name, int8_t ptype, kn_str principal,
                              kn_str host, int8_t op, int8_t perm) {
    bool ok = true;
    a->b.resource_type = rtype;
    a->b.pattern_type = ptype;
    a->b.operation = op;
    a->b.permission = perm;
    a->b.resource_name = kna_strdup_str(name, &ok);
    a->b.principal = kna_strdup_str(principal, &ok);
    a->b.host = kna_strdup_str(host, &ok);
    return ok;
}

/* Sets an error and its message (copied; NULL or a null slice: none). */
static bool kna_acl_set_error(int *errp, char **messagep, int err, kn_str msg) {
    bool ok = true;
    *errp = err;
    if (err && msg.len > 0)
        *messagep = kna_strdup_str(msg, &ok);
    return ok;
}

static bool kna_str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool kna_acl_eq(const kn_acl_binding *a, const kn_acl_binding *b) {
    return a->resource_type == b->resource_type && a->pattern_type == b->pattern_type &&
           a->operation == b->operation && a->permission == b->permission &&
           kna_str_eq(a->resource_name, b->resource_name) && kna_str_eq(a->principal, b->principal) &&
           kna_str_eq(a->host, b->host);
}

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Java's findIndefiniteField for a creation: what makes acl no binding
 * (an ANY/MATCH/UNKNOWN value, a NULL string), or NULL. */
static const char *kna_acl_indefinite(const kn_acl_binding *acl) {
    if (acl->resource_type == KN_ACL_RESOURCE_ANY)
        return "Resource type is ANY.";
    if (kna_acl_unknown(KN_ACL_ENUM_RESOURCE, acl->resource_type))
        return "Resource type is UNKNOWN.";
    if (!acl->resource_name)
        return "Resource name is NULL.";
    if (acl->pattern_type == KN_ACL_PATTERN_MATCH)
        return "Resource pattern type is MATCH.";
    if (acl->pattern_type == KN_ACL_PATTERN_ANY)
        return "Resource pattern type is ANY.";
    if (kna_acl_unknown(KN_ACL_ENUM_PATTERN, acl->pattern_type))
        return "Resource pattern type is UNKNOWN.";
    if (!acl->principal)
        return "Principal is NULL.";
    if (!acl->host)
        return "Host is NULL.";
    if (acl->operation == KN_ACL_OP_ANY)
        return "Operation is ANY.";
    if (kna_acl_unknown(KN_ACL_ENUM_OPERATION, acl->operation))
        return "Operation is UNKNOWN.";
    if (acl->permission == KN_ACL_PERMISSION_ANY)
        return "Permission type is ANY.";
    if (kna_acl_unknown(KN_ACL_ENUM_PERMISSION, acl->permission))
        return "Permission type is UNKNOWN.";
    return NULL;
}

/* A results object with n entries of one binding slot each (create) or
 * none (bindings 0). */
static kn_acl_results *kna_acl_results_new(size_t n, bool one_binding) {
    kn_acl_results *r = kn_calloc(1, sizeof(*r));
    if (!r || !(r->items = kn_calloc(n ? n : 1, sizeof(*r->items)))) {
        kn_free(r);
        return NULL;
    }
    r->count = n;
    for (size_t i = 0; one_binding && i < n; i++) {
        if (!(r->items[i].acls = kn_calloc(1, sizeof(kna_acl)))) {
            kn_acl_results_destroy(r);
            return NULL;
        }
        r->items[i].count = 1;
    }
    return r;
}

/* ---- create ------------------------------------------------------------ */

int kn_admin_create_acls(kn_admin *admin, const kn_acl_binding *acls, size_t count, int timeout_ms,
                         kn_acl_results **resultsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_create_acls";
    if (!admin || !resultsp || (count && !acls) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    /* Distinct bindings first (Java keys its futures by binding). */
    size_t *first = kn_calloc(count ? count : 1, sizeof(*first));
    size_t *sent = kn_calloc(count ? count : 1, sizeof(*sent)); /* entry of each creation sent */
    kp_CreateAclsRequest_AclCreation *cre = kn_calloc(count ? count : 1, sizeof(*cre));
    kn_acl_results *r = NULL;
    int err = KN_ERR__NOMEM;
    size_t n = 0, nsent = 0;
    if (!first || !sent || !cre)
        goto nomem;
    for (size_t k = 0; k < count; k++) {
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = kna_acl_eq(&acls[first[j]], &acls[k]);
        if (!seen)
            first[n++] = k;
    }
    if (!(r = kna_acl_results_new(n, true)))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const kn_acl_binding *acl = &acls[first[i]];
        kna_acl_entry *e = &r->items[i];
        if (!kna_acl_copy(&e->acls[0].b, acl))
            goto nomem;
        const char *why = kna_acl_indefinite(acl);
        if (why) {
            char msg[96];
            snprintf(msg, sizeof(msg), "Invalid ACL creation: %s", why);
            if (!kna_acl_set_error(&e->err, &e->message, KN_ERR_INVALID_REQUEST, kna_cstr(msg)))
                goto nomem;
            continue;
        }
        kp_CreateAclsRequest_AclCreation *c = &cre[nsent];
        kp_CreateAclsRequest_AclCreation_init(c);
        c->resource_type = acl->resource_type;
        c->resource_name = kna_cstr(acl->resource_name);
        c->resource_pattern_type = acl->pattern_type;
        c->principal = kna_cstr(acl->principal);
        c->host = kna_cstr(acl->host);
        c->operation = acl->operation;
        c->permission_type = acl->permission;
        sent[nsent++] = i;
    }
    if (nsent) {
        kp_CreateAclsRequest req;
        kp_CreateAclsRequest_init(&req);
        req.creations.items = cre;
        req.creations.count = (int32_t)nsent;
        knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_CREATE_ACLS, 1, -1, &req,
                                  kna_deadline(admin, timeout_ms), "CreateAcls", &err, errstr, errstr_size);
        if (!resp)
            goto fail;
        const kp_CreateAclsResponse *body = resp->body;
        bool ok = true;
        for (size_t k = 0; k < nsent; k++) {
            kna_acl_entry *e = &r->items[sent[k]];
            if ((int32_t)k >= body->results.count) { /* Java: "missing ACL creation result" */
                ok = ok && kna_acl_set_error(&e->err, &e->message, KN_ERR_UNKNOWN_SERVER_ERROR,
                                             kna_cstr("The broker reported no creation result."));
                continue;
            }
            const kp_CreateAclsResponse_AclCreationResult *res = &body->results.items[k];
            ok = ok && kna_acl_set_error(&e->err, &e->message, res->error_code, res->error_message);
        }
        knw_resp_free(resp);
        if (!ok)
            goto nomem;
    }
    kn_free(first);
    kn_free(sent);
    kn_free(cre);
    *resultsp = r;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    kn_free(first);
    kn_free(sent);
    kn_free(cre);
    kn_acl_results_destroy(r);
    return err;
}

/* ---- describe ---------------------------------------------------------- */

static bool kna_filter_unknown(const kn_acl_binding *f) {
    return kna_acl_unknown(KN_ACL_ENUM_RESOURCE, f->resource_type) ||
           kna_acl_unknown(KN_ACL_ENUM_PATTERN, f->pattern_type) ||
           kna_acl_unknown(KN_ACL_ENUM_OPERATION, f->operation) ||
           kna_acl_unknown(KN_ACL_ENUM_PERMISSION, f->permission);
}

int kn_admin_describe_acls(kn_admin *admin, const kn_acl_binding *filter, int timeout_ms,
                           kn_acl_results **resultsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_acls";
    if (!admin || !resultsp || !filter) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    if (kna_filter_unknown(filter)) { /* Java's message, for the whole call */
        kn_errstr_set(errstr, errstr_size, "%s: The AclBindingFilter must not contain UNKNOWN elements.", fn);
        return KN_ERR__INVALID_ARG;
    }
    kp_DescribeAclsRequest req;
    kp_DescribeAclsRequest_init(&req);
    req.resource_type_filter = filter->resource_type;
    req.resource_name_filter = kna_cstr(filter->resource_name);
    req.pattern_type_filter = filter->pattern_type;
    req.principal_filter = kna_cstr(filter->principal);
    req.host_filter = kna_cstr(filter->host);
    req.operation = filter->operation;
    req.permission_type = filter->permission;
    int err = 0;
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_DESCRIBE_ACLS, 1, -1, &req,
                              kna_deadline(admin, timeout_ms), "DescribeAcls", &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_DescribeAclsResponse *body = resp->body;
    if (body->error_code) {
        err = body->error_code;
        if (body->error_message.len > 0)
            kn_errstr_set(errstr, errstr_size, "DescribeAcls: %.*s", (int)body->error_message.len,
                          body->error_message.ptr);
        else
            kn_errstr_set(errstr, errstr_size, "DescribeAcls: %s", kn_err_message(err));
        knw_resp_free(resp);
        return err;
    }
    size_t total = 0;
    for (int32_t k = 0; k < body->resources.count; k++)
        total += body->resources.items[k].acls.count > 0 ? (size_t)body->resources.items[k].acls.count : 0;
    kn_acl_results *r = kna_acl_results_new(1, false);
    bool ok = r && (!total || (r->items[0].acls = kn_calloc(total, sizeof(kna_acl))));
    for (int32_t k = 0; ok && k < body->resources.count; k++) {
        const kp_DescribeAclsResponse_DescribeAclsResource *res = &body->resources.items[k];
        for (int32_t a = 0; ok && a < res->acls.count; a++) {
            const kp_DescribeAclsResponse_AclDescription *d = &res->acls.items[a];
            ok = kna_acl_from_wire(&r->items[0].acls[r->items[0].count++], res->resource_type,
                                   res->resource_name, res->pattern_type, d->principal, d->host, d->operation,
                                   d->permission_type);
        }
    }
    knw_resp_free(resp);
    if (!ok) {
        kn_acl_results_destroy(r);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    *resultsp = r;
    return KN_OK;
}

/* ---- delete ------------------------------------------------------------ */

int kn_admin_delete_acls(kn_admin *admin, const kn_acl_binding *filters, size_t count, int timeout_ms,
                         kn_acl_results **resultsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_delete_acls";
    if (!admin || !resultsp || (count && !filters) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    size_t *first = kn_calloc(count ? count : 1, sizeof(*first));
    kp_DeleteAclsRequest_DeleteAclsFilter *fl = kn_calloc(count ? count : 1, sizeof(*fl));
    kn_acl_results *r = NULL;
    knw_resp *resp = NULL;
    int err = KN_ERR__NOMEM;
    size_t n = 0;
    if (!first || !fl)
        goto nomem;
    for (size_t k = 0; k < count; k++) {
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = kna_acl_eq(&filters[first[j]], &filters[k]);
        if (!seen)
            first[n++] = k;
    }
    if (!(r = kna_acl_results_new(n, false)))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const kn_acl_binding *f = &filters[first[i]];
        kp_DeleteAclsRequest_DeleteAclsFilter_init(&fl[i]);
        fl[i].resource_type_filter = f->resource_type;
        fl[i].resource_name_filter = kna_cstr(f->resource_name);
        fl[i].pattern_type_filter = f->pattern_type;
        fl[i].principal_filter = kna_cstr(f->principal);
        fl[i].host_filter = kna_cstr(f->host);
        fl[i].operation = f->operation;
        fl[i].permission_type = f->permission;
    }
    if (n) {
        kp_DeleteAclsRequest req;
        kp_DeleteAclsRequest_init(&req);
        req.filters.items = fl;
        req.filters.count = (int32_t)n;
        resp = kna_call(admin, KNW_NODE_ANY, KP_API_DELETE_ACLS, 1, -1, &req, kna_deadline(admin, timeout_ms),
                        "DeleteAcls", &err, errstr, errstr_size);
        if (!resp)
            goto fail;
        const kp_DeleteAclsResponse *body = resp->body;
        for (size_t i = 0; i < n; i++) {
            kna_acl_entry *e = &r->items[i];
            if ((int32_t)i >= body->filter_results.count) {
                if (!kna_acl_set_error(&e->err, &e->message, KN_ERR_UNKNOWN_SERVER_ERROR,
                                       kna_cstr("The broker reported no result for this filter.")))
                    goto nomem;
                continue;
            }
            const kp_DeleteAclsResponse_DeleteAclsFilterResult *fr = &body->filter_results.items[i];
            if (!kna_acl_set_error(&e->err, &e->message, fr->error_code, fr->error_message))
                goto nomem;
            if (fr->error_code || fr->matching_acls.count <= 0)
                continue;
            if (!(e->acls = kn_calloc((size_t)fr->matching_acls.count, sizeof(kna_acl))))
                goto nomem;
            for (int32_t m = 0; m < fr->matching_acls.count; m++) {
                const kp_DeleteAclsResponse_DeleteAclsMatchingAcl *ma = &fr->matching_acls.items[m];
                kna_acl *a = &e->acls[e->count++];
                if (!kna_acl_from_wire(a, ma->resource_type, ma->resource_name, ma->pattern_type,
                                       ma->principal, ma->host, ma->operation, ma->permission_type) ||
                    !kna_acl_set_error(&a->err, &a->message, ma->error_code, ma->error_message))
                    goto nomem;
            }
        }
        knw_resp_free(resp);
        resp = NULL;
    }
    kn_free(first);
    kn_free(fl);
    *resultsp = r;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    knw_resp_free(resp);
    kn_free(first);
    kn_free(fl);
    kn_acl_results_destroy(r);
    return err;
}

/*
 * admin_quotas.c: describe_client_quotas (DescribeClientQuotas) and
 * alter_client_quotas (AlterClientQuotas), both to any broker (which
 * forwards alterations to the controller), and their result object
 * kn_quota_descriptions (entities with values, or with an error).
 * Entities compare as Java's ClientQuotaEntity maps: the same (type,
 * name) parts in any order.
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_alter_client_quotas.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_client_quotas.h"

typedef struct kna_qpart {
    char *type;
    char *name; /* NULL: the default entity */
} kna_qpart;

typedef struct kna_qvalue {
    char *key;
    double value;
} kna_qvalue;

typedef struct kna_qentry {
    kna_qpart parts[KN_QUOTA_ENTITY_MAX];
    size_t part_count;
    kna_qvalue *values;
    size_t value_count;
    int err;
    char *message;
} kna_qentry;

struct kn_quota_descriptions {
    kna_qentry *items;
    size_t count;
};

/* ---- the result object ----------------------------------------------- */

void kn_quota_descriptions_destroy(kn_quota_descriptions *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++) {
        kna_qentry *e = &d->items[i];
        for (size_t p = 0; p < e->part_count; p++) {
            kn_free(e->parts[p].type);
            kn_free(e->parts[p].name);
        }
        for (size_t v = 0; v < e->value_count; v++)
            kn_free(e->values[v].key);
        kn_free(e->values);
        kn_free(e->message);
    }
    kn_free(d->items);
    kn_free(d);
}

static const kna_qentry *kna_qe(const kn_quota_descriptions *d, size_t i) {
    return d && i < d->count ? &d->items[i] : NULL;
}

size_t kn_quota_descriptions_count(const kn_quota_descriptions *d) { return d ? d->count : 0; }

size_t kn_quota_descriptions_part_count(const kn_quota_descriptions *d, size_t i) {
    const kna_qentry *e = kna_qe(d, i);
    return e ? e->part_count : 0;
}

const char *kn_quota_descriptions_part_type(const kn_quota_descriptions *d, size_t i, size_t p) {
    const kna_qentry *e = kna_qe(d, i);
    return e && p < e->part_count ? e->parts[p].type : NULL;
}

const char *kn_quota_descriptions_part_name(const kn_quota_descriptions *d, size_t i, size_t p) {
    const kna_qentry *e = kna_qe(d, i);
    return e && p < e->part_count ? e->parts[p].name : NULL;
}

size_t kn_quota_descriptions_value_count(const kn_quota_descriptions *d, size_t i) {
    const kna_qentry *e = kna_qe(d, i);
    return e ? e->value_count : 0;
}

const char *kn_quota_descriptions_value_key(const kn_quota_descriptions *d, size_t i, size_t v) {
    const kna_qentry *e = kna_qe(d, i);
    return e && v < e->value_count ? e->values[v].key : NULL;
}

double kn_quota_descriptions_value(const kn_quota_descriptions *d, size_t i, size_t v) {
    const kna_qentry *e = kna_qe(d, i);
    return e && v < e->value_count ? e->values[v].value : 0.0;
}

int kn_quota_descriptions_error(const kn_quota_descriptions *d, size_t i) {
    const kna_qentry *e = kna_qe(d, i);
    return e ? e->err : KN_ERR__INVALID_ARG;
}

const char *kn_quota_descriptions_error_message(const kn_quota_descriptions *d, size_t i) {
    const kna_qentry *e = kna_qe(d, i);
    if (!e || !e->err)
        return NULL;
    return e->message ? e->message : kn_err_message(e->err);
}

/* ---- describe --------------------------------------------------------- */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

int kn_admin_describe_client_quotas(kn_admin *admin, const kn_quota_filter *filters, size_t count, int strict,
                                    int timeout_ms, kn_quota_descriptions **descp, char *errstr,
                                    size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_client_quotas";
    if (!admin || !descp || (count && !filters) || count > 0x7fff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!filters[k].type || filters[k].match_type < KN_QUOTA_MATCH_EXACT ||
            filters[k].match_type > KN_QUOTA_MATCH_ANY ||
            (filters[k].match_type == KN_QUOTA_MATCH_EXACT && !filters[k].match)) {
            kn_errstr_set(errstr, errstr_size, "%s: filter %zu (%s) is malformed", fn, k,
                          filters[k].type ? filters[k].type : "NULL type");
            return KN_ERR__INVALID_ARG;
        }
    kp_DescribeClientQuotasRequest_ComponentData *comps = kn_calloc(count ? count : 1, sizeof(*comps));
    if (!comps) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < count; k++) {
        kp_DescribeClientQuotasRequest_ComponentData_init(&comps[k]);
        comps[k].entity_type = kna_cstr(filters[k].type);
        comps[k].match_type = filters[k].match_type;
        comps[k].match = kna_cstr(filters[k].match_type == KN_QUOTA_MATCH_EXACT ? filters[k].match : NULL);
    }
    kp_DescribeClientQuotasRequest req;
    kp_DescribeClientQuotasRequest_init(&req);
    req.components.items = comps;
    req.components.count = (int32_t)count;
    req.strict = strict != 0;
    int err = 0;
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_DESCRIBE_CLIENT_QUOTAS, -1, -1, &req,
                 kna_deadline(admin, timeout_ms), "DescribeClientQuotas", &err, errstr, errstr_size);
    kn_free(comps);
    if (!resp)
        return err;
    const kp_DescribeClientQuotasResponse *body = resp->body;
    if (body->error_code) { /* the filter as a whole was refused: Java fails the call */
        err = body->error_code;
        kn_errstr_set(errstr, errstr_size, "DescribeClientQuotas: %.*s",
                      (int)(body->error_message.len > 0 ? body->error_message.len : 0),
                      body->error_message.ptr ? body->error_message.ptr : "");
        if (body->error_message.len <= 0)
            kn_errstr_set(errstr, errstr_size, "DescribeClientQuotas: %s", kn_err_message(err));
        knw_resp_free(resp);
        return err;
    }
    kn_quota_descriptions *d = kn_calloc(1, sizeof(*d));
    int32_t n = body->entries.count > 0 ? body->entries.count : 0;
    err = d && (!n || (d->items = kn_calloc((size_t)n, sizeof(*d->items)))) ? 0 : KN_ERR__NOMEM;
    for (int32_t i = 0; !err && i < n; i++) {
        const kp_DescribeClientQuotasResponse_EntryData *src = &body->entries.items[i];
        kna_qentry *e = &d->items[d->count++];
        bool ok = true;
        for (int32_t p = 0; ok && p < src->entity.count && e->part_count < KN_QUOTA_ENTITY_MAX; p++) {
            kna_qpart *part = &e->parts[e->part_count++];
            part->type = kna_strdup_str(src->entity.items[p].entity_type, &ok);
            part->name = kna_strdup_str(src->entity.items[p].entity_name, &ok);
        }
        if (ok && src->values.count > 0 &&
            !(e->values = kn_calloc((size_t)src->values.count, sizeof(*e->values))))
            ok = false;
        for (int32_t v = 0; ok && v < src->values.count; v++) {
            kna_qvalue *qv = &e->values[e->value_count++];
            qv->key = kna_strdup_str(src->values.items[v].key, &ok);
            qv->value = src->values.items[v].value;
        }
        if (!ok)
            err = KN_ERR__NOMEM;
    }
    knw_resp_free(resp);
    if (err) {
        kn_quota_descriptions_destroy(d);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return err;
    }
    *descp = d;
    return KN_OK;
}

/* ---- alter ------------------------------------------------------------ */

static size_t kna_entity_parts(const kn_quota_entity *e) {
    size_t n = 0;
    while (n < KN_QUOTA_ENTITY_MAX && e->types[n])
        n++;
    return n;
}

static bool kna_name_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Same entity as Java's map equality: the same parts, any order. */
static bool kna_entity_eq(const kn_quota_entity *a, const kn_quota_entity *b) {
    size_t n = kna_entity_parts(a);
    if (n != kna_entity_parts(b))
        return false;
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; j < n && !found; j++)
            found = strcmp(a->types[i], b->types[j]) == 0 && kna_name_eq(a->names[i], b->names[j]);
        if (!found)
            return false;
    }
    return true;
}

/* Whether the response entity (parts) is e. */
static bool kna_resp_entity_eq(const kn_quota_entity *e,
                               const kp_AlterClientQuotasResponse_EntityData_array *a) {
    size_t n = kna_entity_parts(e);
    if (a->count < 0 || (size_t)a->count != n)
        return false;
    for (int32_t k = 0; k < a->count; k++) {
        bool found = false;
        for (size_t j = 0; j < n && !found; j++) {
            kn_str t = a->items[k].entity_type, nm = a->items[k].entity_name;
            found = t.len >= 0 && strlen(e->types[j]) == (size_t)t.len &&
                    memcmp(e->types[j], t.ptr, (size_t)t.len) == 0 &&
                    (e->names[j] ? nm.len >= 0 && strlen(e->names[j]) == (size_t)nm.len &&
                                       memcmp(e->names[j], nm.ptr, (size_t)nm.len) == 0
                                 : nm.len < 0);
        }
        if (!found)
            return false;
    }
    return true;
}

int kn_admin_alter_client_quotas(kn_admin *admin, const kn_quota_op *ops, size_t count, int flags,
                                 int timeout_ms, kn_quota_descriptions **resultsp, char *errstr,
                                 size_t errstr_size) {
    static const char fn[] = "kn_admin_alter_client_quotas";
    if (!admin || !resultsp || (count && !ops) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!ops[k].key || kna_entity_parts(&ops[k].entity) == 0) {
            kn_errstr_set(errstr, errstr_size, "%s: op %zu has no %s", fn, k, ops[k].key ? "entity" : "key");
            return KN_ERR__INVALID_ARG;
        }
    /* Distinct entities, first-appearance order: ent[i] is the op that
     * names entity i first. */
    const kn_quota_entity **ent = kn_calloc(count ? count : 1, sizeof(*ent));
    kn_quota_descriptions *d = kn_calloc(1, sizeof(*d));
    kp_AlterClientQuotasRequest_EntryData *entries = kn_calloc(count ? count : 1, sizeof(*entries));
    kp_AlterClientQuotasRequest_EntityData *parts =
        kn_calloc(count * KN_QUOTA_ENTITY_MAX + 1, sizeof(*parts));
    kp_AlterClientQuotasRequest_OpData *opd = kn_calloc(count ? count : 1, sizeof(*opd));
    int err = KN_ERR__NOMEM;
    if (!ent || !d || !entries || !parts || !opd ||
        !(d->items = kn_calloc(count ? count : 1, sizeof(*d->items))))
        goto nomem;
    size_t n = 0;
    for (size_t k = 0; k < count; k++) {
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = kna_entity_eq(ent[j], &ops[k].entity);
        if (!seen)
            ent[n++] = &ops[k].entity;
    }
    kp_AlterClientQuotasRequest_EntityData *pp = parts;
    kp_AlterClientQuotasRequest_OpData *op = opd;
    for (size_t i = 0; i < n; i++) {
        kna_qentry *e = &d->items[d->count++];
        bool ok = true;
        kp_AlterClientQuotasRequest_EntryData_init(&entries[i]);
        entries[i].entity.items = pp;
        for (size_t p = 0; p < kna_entity_parts(ent[i]); p++) {
            kp_AlterClientQuotasRequest_EntityData_init(pp);
            pp->entity_type = kna_cstr(ent[i]->types[p]);
            (pp++)->entity_name = kna_cstr(ent[i]->names[p]);
            entries[i].entity.count++;
            kna_qpart *qp = &e->parts[e->part_count++];
            qp->type = kn_strdup(ent[i]->types[p]);
            qp->name = ent[i]->names[p] ? kn_strdup(ent[i]->names[p]) : NULL;
            ok = ok && qp->type && (!ent[i]->names[p] || qp->name);
        }
        if (!ok)
            goto nomem;
        entries[i].ops.items = op;
        for (size_t k = 0; k < count; k++)
            if (kna_entity_eq(ent[i], &ops[k].entity)) {
                kp_AlterClientQuotasRequest_OpData_init(op);
                op->key = kna_cstr(ops[k].key);
                op->value = ops[k].value;
                (op++)->remove = ops[k].remove != 0;
                entries[i].ops.count++;
            }
        e->err = KN_ERR_UNKNOWN_SERVER_ERROR; /* until the broker answers for it */
    }
    kp_AlterClientQuotasRequest req;
    kp_AlterClientQuotasRequest_init(&req);
    req.entries.items = entries;
    req.entries.count = (int32_t)n;
    req.validate_only = (flags & KN_ADMIN_VALIDATE_ONLY) != 0;
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_ALTER_CLIENT_QUOTAS, -1, -1, &req,
                 kna_deadline(admin, timeout_ms), "AlterClientQuotas", &err, errstr, errstr_size);
    if (!resp)
        goto fail;
    const kp_AlterClientQuotasResponse *body = resp->body;
    bool ok = true;
    for (int32_t k = 0; k < body->entries.count; k++)
        for (size_t i = 0; i < n; i++)
            if (kna_resp_entity_eq(ent[i], &body->entries.items[k].entity)) {
                d->items[i].err = body->entries.items[k].error_code;
                if (d->items[i].err && body->entries.items[k].error_message.len >= 0)
                    d->items[i].message = kna_strdup_str(body->entries.items[k].error_message, &ok);
            }
    knw_resp_free(resp);
    if (!ok)
        goto nomem;
    kn_free(ent);
    kn_free(entries);
    kn_free(parts);
    kn_free(opd);
    *resultsp = d;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    kn_free(ent);
    kn_free(entries);
    kn_free(parts);
    kn_free(opd);
    kn_quota_descriptions_destroy(d);
    return err;
}

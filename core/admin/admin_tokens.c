/*
 * admin_tokens.c: delegation tokens (CreateDelegationToken,
 * DescribeDelegationToken, RenewDelegationToken, ExpireDelegationToken),
 * each to any broker as Java's LeastLoadedNodeProvider, and the result
 * object kn_delegation_tokens. A broker error fails the call with its
 * code, as Java's futures do.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_create_delegation_token.h"
#include "proto/generated/kp_describe_delegation_token.h"
#include "proto/generated/kp_expire_delegation_token.h"
#include "proto/generated/kp_renew_delegation_token.h"

typedef struct kna_token {
    char *id;
    uint8_t *hmac;
    size_t hmac_len;
    char *hmac_b64;
    char *owner, *requester;
    int64_t issue_ms, expiry_ms, max_ms;
    char **renewers;
    size_t renewer_count;
} kna_token;

struct kn_delegation_tokens {
    kna_token *items;
    size_t count;
};

/* ---- the result object ------------------------------------------------- */

void kn_delegation_tokens_destroy(kn_delegation_tokens *t) {
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++) {
        kna_token *x = &t->items[i];
        kn_free(x->id);
        if (x->hmac)
            OPENSSL_cleanse(x->hmac, x->hmac_len);
        kn_free(x->hmac);
        if (x->hmac_b64)
            OPENSSL_cleanse(x->hmac_b64, strlen(x->hmac_b64));
        kn_free(x->hmac_b64);
        kn_free(x->owner);
        kn_free(x->requester);
        for (size_t r = 0; r < x->renewer_count; r++)
            kn_free(x->renewers[r]);
        kn_free(x->renewers);
    }
    kn_free(t->items);
    kn_free(t);
}

static const kna_token *kna_tok(const kn_delegation_tokens *t, size_t i) {
    return t && i < t->count ? &t->items[i] : NULL;
}

size_t kn_delegation_tokens_count(const kn_delegation_tokens *t) { return t ? t->count : 0; }

const char *kn_delegation_tokens_id(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->id : NULL;
}

const uint8_t *kn_delegation_tokens_hmac(const kn_delegation_tokens *t, size_t i, size_t *lenp) {
    const kna_token *x = kna_tok(t, i);
    if (lenp)
        *lenp = x ? x->hmac_len : 0;
    return x ? x->hmac : NULL;
}

const char *kn_delegation_tokens_hmac_base64(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->hmac_b64 : NULL;
}

const char *kn_delegation_tokens_owner(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->owner : NULL;
}

const char *kn_delegation_tokens_requester(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->requester : NULL;
}

int64_t kn_delegation_tokens_issue_ms(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->issue_ms : -1;
}

int64_t kn_delegation_tokens_expiry_ms(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->expiry_ms : -1;
}

int64_t kn_delegation_tokens_max_ms(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->max_ms : -1;
}

size_t kn_delegation_tokens_renewer_count(const kn_delegation_tokens *t, size_t i) {
    const kna_token *x = kna_tok(t, i);
    return x ? x->renewer_count : 0;
}

const char *kn_delegation_tokens_renewer(const kn_delegation_tokens *t, size_t i, size_t r) {
    const kna_token *x = kna_tok(t, i);
    return x && r < x->renewer_count ? x->renewers[r] : NULL;
}

/* ---- shared ------------------------------------------------------------ */

/* "type:name" from the wire's two halves (copied); NULL when absent or
 * on no memory (*okp cleared). */
static char *kna_principal(kn_str type, kn_str name, bool *okp) {
    if (type.len <= 0 && name.len <= 0)
        return NULL;
    size_t tl = type.len > 0 ? (size_t)type.len : 0, nl = name.len > 0 ? (size_t)name.len : 0;
    char *p = kn_malloc(tl + nl + 2);
    if (!p) {
        *okp = false;
        return NULL;
    }
    memcpy(p, type.ptr, tl);
    p[tl] = ':';
    memcpy(p + tl + 1, name.ptr, nl);
    p[tl + 1 + nl] = '\0';
    return p;
}

/* Splits "User:alice" into kn_str halves pointing into s; false when
 * there is no ':' with text on both sides. */
static bool kna_split_principal(const char *s, kn_str *type, kn_str *name) {
    const char *colon = s ? strchr(s, ':') : NULL;
    if (!colon || colon == s || !colon[1])
        return false;
    *type = (kn_str){s, (int32_t)(colon - s)};
    *name = (kn_str){colon + 1, (int32_t)strlen(colon + 1)};
    return true;
}

/* Fills x from one token's fields; false on no memory. */
static bool kna_token_fill(kna_token *x, kn_str id, kn_bytes hmac, kn_str otype, kn_str oname, kn_str rtype,
                           kn_str rname, int64_t issue, int64_t expiry, int64_t max) {
    bool ok = true;
    x->id = kna_strdup_str(id, &ok);
    x->owner = kna_principal(otype, oname, &ok);
    x->requester = kna_principal(rtype, rname, &ok);
    x->issue_ms = issue;
    x->expiry_ms = expiry;
    x->max_ms = max;
    if (hmac.len > 0) {
        x->hmac_len = (size_t)hmac.len;
        x->hmac = kn_malloc(x->hmac_len);
        x->hmac_b64 = kn_malloc(4 * ((x->hmac_len + 2) / 3) + 1);
        if (!x->hmac || !x->hmac_b64)
            return false;
        memcpy(x->hmac, hmac.ptr, x->hmac_len);
        EVP_EncodeBlock((unsigned char *)x->hmac_b64, x->hmac, (int)x->hmac_len);
    }
    return ok;
}

static int kna_token_error(int code, const char *what, char *errstr, size_t errstr_size) {
    kn_errstr_set(errstr, errstr_size, "%s: %s: %s", what, kn_err_name(code), kn_err_message(code));
    return code;
}

/* ---- create -------------------------------------------------------------- */

int kn_admin_create_delegation_token(kn_admin *admin, const char *const *renewers, size_t renewer_count,
                                     const char *owner, int64_t max_lifetime_ms, int timeout_ms,
                                     kn_delegation_tokens **tokensp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_create_delegation_token";
    if (!admin || !tokensp || (renewer_count && !renewers) || renewer_count > 0x7fff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *tokensp = NULL;
    kp_CreateDelegationTokenRequest req;
    kp_CreateDelegationTokenRequest_init(&req);
    if (owner && !kna_split_principal(owner, &req.owner_principal_type, &req.owner_principal_name)) {
        kn_errstr_set(errstr, errstr_size, "%s: owner '%s' is not a principal (type:name)", fn, owner);
        return KN_ERR__INVALID_ARG;
    }
    if (!owner)
        req.owner_principal_type = req.owner_principal_name = (kn_str){NULL, -1};
    kp_CreateDelegationTokenRequest_CreatableRenewers *rw =
        kn_calloc(renewer_count ? renewer_count : 1, sizeof(*rw));
    if (!rw) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t i = 0; i < renewer_count; i++) {
        kp_CreateDelegationTokenRequest_CreatableRenewers_init(&rw[i]);
        if (!kna_split_principal(renewers[i], &rw[i].principal_type, &rw[i].principal_name)) {
            kn_errstr_set(errstr, errstr_size, "%s: renewer %zu '%s' is not a principal (type:name)", fn, i,
                          renewers[i] ? renewers[i] : "NULL");
            kn_free(rw);
            return KN_ERR__INVALID_ARG;
        }
    }
    req.renewers.items = rw;
    req.renewers.count = (int32_t)renewer_count;
    req.max_lifetime_ms = max_lifetime_ms > 0 ? max_lifetime_ms : -1;
    int err = 0;
    /* Another owner than the requester needs v3 (KIP-373). */
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_CREATE_DELEGATION_TOKEN, owner ? 3 : -1, -1, &req,
                 kna_deadline(admin, timeout_ms), "CreateDelegationToken", &err, errstr, errstr_size);
    kn_free(rw);
    if (!resp)
        return err;
    const kp_CreateDelegationTokenResponse *body = resp->body;
    if (body->error_code) {
        err = kna_token_error(body->error_code, "CreateDelegationToken", errstr, errstr_size);
        knw_resp_free(resp);
        return err;
    }
    kn_delegation_tokens *t = kn_calloc(1, sizeof(*t));
    bool ok = t && (t->items = kn_calloc(1, sizeof(*t->items)));
    if (ok) {
        t->count = 1;
        ok = kna_token_fill(&t->items[0], body->token_id, body->hmac, body->principal_type,
                            body->principal_name, body->token_requester_principal_type,
                            body->token_requester_principal_name, body->issue_timestamp_ms,
                            body->expiry_timestamp_ms, body->max_timestamp_ms);
    }
    /* The renewers are not in the answer: they are what was asked. */
    if (ok && renewer_count) {
        kna_token *x = &t->items[0];
        ok = (x->renewers = kn_calloc(renewer_count, sizeof(*x->renewers))) != NULL;
        for (size_t i = 0; ok && i < renewer_count; i++)
            ok = (x->renewers[x->renewer_count++] = kn_strdup(renewers[i])) != NULL;
    }
    knw_resp_free(resp);
    if (!ok) {
        kn_delegation_tokens_destroy(t);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    *tokensp = t;
    return KN_OK;
}

/* ---- describe ------------------------------------------------------------ */

int kn_admin_describe_delegation_tokens(kn_admin *admin, const char *const *owners, size_t owner_count,
                                        int timeout_ms, kn_delegation_tokens **tokensp, char *errstr,
                                        size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_delegation_tokens";
    if (!admin || !tokensp || (owner_count && !owners) || owner_count > 0x7fff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *tokensp = NULL;
    kp_DescribeDelegationTokenRequest_DescribeDelegationTokenOwner *ow =
        kn_calloc(owner_count ? owner_count : 1, sizeof(*ow));
    if (!ow) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t i = 0; i < owner_count; i++) {
        kp_DescribeDelegationTokenRequest_DescribeDelegationTokenOwner_init(&ow[i]);
        if (!kna_split_principal(owners[i], &ow[i].principal_type, &ow[i].principal_name)) {
            kn_errstr_set(errstr, errstr_size, "%s: owner %zu '%s' is not a principal (type:name)", fn, i,
                          owners[i] ? owners[i] : "NULL");
            kn_free(ow);
            return KN_ERR__INVALID_ARG;
        }
    }
    kp_DescribeDelegationTokenRequest req;
    kp_DescribeDelegationTokenRequest_init(&req);
    req.owners.items = ow;
    req.owners.count = owner_count ? (int32_t)owner_count : -1; /* null: every owner */
    int err = 0;
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_DESCRIBE_DELEGATION_TOKEN, -1, -1, &req,
                 kna_deadline(admin, timeout_ms), "DescribeDelegationToken", &err, errstr, errstr_size);
    kn_free(ow);
    if (!resp)
        return err;
    const kp_DescribeDelegationTokenResponse *body = resp->body;
    if (body->error_code) {
        err = kna_token_error(body->error_code, "DescribeDelegationToken", errstr, errstr_size);
        knw_resp_free(resp);
        return err;
    }
    int32_t n = body->tokens.count > 0 ? body->tokens.count : 0;
    kn_delegation_tokens *t = kn_calloc(1, sizeof(*t));
    bool ok = t && (!n || (t->items = kn_calloc((size_t)n, sizeof(*t->items))));
    for (int32_t k = 0; ok && k < n; k++) {
        const kp_DescribeDelegationTokenResponse_DescribedDelegationToken *d = &body->tokens.items[k];
        kna_token *x = &t->items[t->count++];
        ok = kna_token_fill(x, d->token_id, d->hmac, d->principal_type, d->principal_name,
                            d->token_requester_principal_type, d->token_requester_principal_name,
                            d->issue_timestamp, d->expiry_timestamp, d->max_timestamp);
        if (ok && d->renewers.count > 0)
            ok = (x->renewers = kn_calloc((size_t)d->renewers.count, sizeof(*x->renewers))) != NULL;
        for (int32_t r = 0; ok && r < d->renewers.count; r++) {
            x->renewers[x->renewer_count] =
                kna_principal(d->renewers.items[r].principal_type, d->renewers.items[r].principal_name, &ok);
            x->renewer_count += x->renewers[x->renewer_count] != NULL;
        }
    }
    knw_resp_free(resp);
    if (!ok) {
        kn_delegation_tokens_destroy(t);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    *tokensp = t;
    return KN_OK;
}

/* ---- renew, expire --------------------------------------------------------- */

static int kna_token_period(kn_admin *admin, bool renew, const uint8_t *hmac, size_t hmac_len,
                            int64_t period_ms, int timeout_ms, int64_t *expiryp, char *errstr,
                            size_t errstr_size) {
    const char *fn = renew ? "kn_admin_renew_delegation_token" : "kn_admin_expire_delegation_token";
    const char *what = renew ? "RenewDelegationToken" : "ExpireDelegationToken";
    if (!admin || !hmac || !hmac_len || hmac_len > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument (the token's HMAC is required)", fn);
        return KN_ERR__INVALID_ARG;
    }
    kn_bytes b = {hmac, (int32_t)hmac_len};
    int err = 0;
    knw_resp *resp;
    if (renew) {
        kp_RenewDelegationTokenRequest req;
        kp_RenewDelegationTokenRequest_init(&req);
        req.hmac = b;
        req.renew_period_ms = period_ms;
        resp = kna_call(admin, KNW_NODE_ANY, KP_API_RENEW_DELEGATION_TOKEN, -1, -1, &req,
                        kna_deadline(admin, timeout_ms), what, &err, errstr, errstr_size);
    } else {
        kp_ExpireDelegationTokenRequest req;
        kp_ExpireDelegationTokenRequest_init(&req);
        req.hmac = b;
        req.expiry_time_period_ms = period_ms;
        resp = kna_call(admin, KNW_NODE_ANY, KP_API_EXPIRE_DELEGATION_TOKEN, -1, -1, &req,
                        kna_deadline(admin, timeout_ms), what, &err, errstr, errstr_size);
    }
    if (!resp)
        return err;
    /* Both responses start error_code, expiry_timestamp_ms. */
    int16_t code = renew ? ((const kp_RenewDelegationTokenResponse *)resp->body)->error_code
                         : ((const kp_ExpireDelegationTokenResponse *)resp->body)->error_code;
    int64_t expiry = renew ? ((const kp_RenewDelegationTokenResponse *)resp->body)->expiry_timestamp_ms
                           : ((const kp_ExpireDelegationTokenResponse *)resp->body)->expiry_timestamp_ms;
    knw_resp_free(resp);
    if (code)
        return kna_token_error(code, what, errstr, errstr_size);
    if (expiryp)
        *expiryp = expiry;
    return KN_OK;
}

int kn_admin_renew_delegation_token(kn_admin *admin, const uint8_t *hmac, size_t hmac_len, int64_t period_ms,
                                    int timeout_ms, int64_t *expiryp, char *errstr, size_t errstr_size) {
    return kna_token_period(admin, true, hmac, hmac_len, period_ms, timeout_ms, expiryp, errstr, errstr_size);
}

int kn_admin_expire_delegation_token(kn_admin *admin, const uint8_t *hmac, size_t hmac_len, int64_t period_ms,
                                     int timeout_ms, int64_t *expiryp, char *errstr, size_t errstr_size) {
    return kna_token_period(admin, false, hmac, hmac_len, period_ms, timeout_ms, expiryp, errstr,
                            errstr_size);
}

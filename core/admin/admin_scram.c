/*
 * admin_scram.c: describe_user_scram_credentials and
 * alter_user_scram_credentials (DescribeUserScramCredentials,
 * AlterUserScramCredentials, any broker) and their result object.
 *
 * As Java's KafkaAdminClient, the password never leaves the client: it
 * is salted here (SCRAM's Hi() is PBKDF2-HMAC with the mechanism's hash
 * and the hash's length) and only the salt and the salted password are
 * sent. A missing salt is made as Java's ScramFormatter makes one: a
 * 130-bit random number written in base 36.
 */
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_alter_user_scram_credentials.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_user_scram_credentials.h"

typedef struct kna_scram_user {
    char *user;
    int err;
    char *message;
    int8_t *mechanisms;
    int32_t *iterations;
    size_t count;
} kna_scram_user;

struct kn_scram_credentials {
    kna_scram_user *items;
    size_t count;
};

void kn_scram_credentials_destroy(kn_scram_credentials *c) {
    if (!c)
        return;
    for (size_t i = 0; i < c->count; i++) {
        kn_free(c->items[i].user);
        kn_free(c->items[i].message);
        kn_free(c->items[i].mechanisms);
        kn_free(c->items[i].iterations);
    }
    kn_free(c->items);
    kn_free(c);
}

static const kna_scram_user *kna_su(const kn_scram_credentials *c, size_t i) {
    return c && i < c->count ? &c->items[i] : NULL;
}

size_t kn_scram_credentials_count(const kn_scram_credentials *c) { return c ? c->count : 0; }

const char *kn_scram_credentials_user(const kn_scram_credentials *c, size_t i) {
    const kna_scram_user *u = kna_su(c, i);
    return u ? u->user : NULL;
}

int kn_scram_credentials_error(const kn_scram_credentials *c, size_t i) {
    const kna_scram_user *u = kna_su(c, i);
    return u ? u->err : KN_ERR__INVALID_ARG;
}

const char *kn_scram_credentials_error_message(const kn_scram_credentials *c, size_t i) {
    const kna_scram_user *u = kna_su(c, i);
    if (!u || !u->err)
        return NULL;
    return u->message ? u->message : kn_err_message(u->err);
}

size_t kn_scram_credentials_mechanism_count(const kn_scram_credentials *c, size_t i) {
    const kna_scram_user *u = kna_su(c, i);
    return u ? u->count : 0;
}

int kn_scram_credentials_mechanism(const kn_scram_credentials *c, size_t i, size_t k) {
    const kna_scram_user *u = kna_su(c, i);
    return u && k < u->count ? u->mechanisms[k] : 0;
}

int32_t kn_scram_credentials_iterations(const kn_scram_credentials *c, size_t i, size_t k) {
    const kna_scram_user *u = kna_su(c, i);
    return u && k < u->count ? u->iterations[k] : -1;
}

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* ---- describe --------------------------------------------------------- */

int kn_admin_describe_user_scram_credentials(kn_admin *admin, const char *const *users, size_t count,
                                             int timeout_ms, kn_scram_credentials **credsp, char *errstr,
                                             size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_user_scram_credentials";
    if (!admin || !credsp || (count && !users) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *credsp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!users[k]) {
            kn_errstr_set(errstr, errstr_size, "%s: user %zu is NULL", fn, k);
            return KN_ERR__INVALID_ARG;
        }
    kp_DescribeUserScramCredentialsRequest_UserName *names = kn_calloc(count ? count : 1, sizeof(*names));
    if (!names) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < count; k++) {
        kp_DescribeUserScramCredentialsRequest_UserName_init(&names[k]);
        names[k].name = kna_cstr(users[k]);
    }
    kp_DescribeUserScramCredentialsRequest req;
    kp_DescribeUserScramCredentialsRequest_init(&req);
    req.users.items = names;
    req.users.count = count ? (int32_t)count : -1; /* null: every user */
    int err = 0;
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_DESCRIBE_USER_SCRAM_CREDENTIALS, -1, -1, &req,
                 kna_deadline(admin, timeout_ms), "DescribeUserScramCredentials", &err, errstr, errstr_size);
    kn_free(names);
    if (!resp)
        return err;
    const kp_DescribeUserScramCredentialsResponse *body = resp->body;
    if (body->error_code) {
        err = body->error_code;
        kn_errstr_set(errstr, errstr_size, "DescribeUserScramCredentials: %s", kn_err_message(err));
        knw_resp_free(resp);
        return err;
    }
    kn_scram_credentials *c = kn_calloc(1, sizeof(*c));
    int32_t n = body->results.count > 0 ? body->results.count : 0;
    err = c && (!n || (c->items = kn_calloc((size_t)n, sizeof(*c->items)))) ? 0 : KN_ERR__NOMEM;
    for (int32_t i = 0; !err && i < n; i++) {
        const kp_DescribeUserScramCredentialsResponse_DescribeUserScramCredentialsResult *r =
            &body->results.items[i];
        kna_scram_user *u = &c->items[c->count++];
        bool ok = true;
        u->user = kna_strdup_str(r->user, &ok);
        u->err = r->error_code;
        if (r->error_code && r->error_message.len >= 0)
            u->message = kna_strdup_str(r->error_message, &ok);
        int32_t m = r->credential_infos.count > 0 ? r->credential_infos.count : 0;
        if (ok && m) {
            u->mechanisms = kn_calloc((size_t)m, sizeof(*u->mechanisms));
            u->iterations = kn_calloc((size_t)m, sizeof(*u->iterations));
            ok = u->mechanisms && u->iterations;
            for (int32_t k = 0; ok && k < m; k++) {
                u->mechanisms[u->count] = r->credential_infos.items[k].mechanism;
                u->iterations[u->count++] = r->credential_infos.items[k].iterations;
            }
        }
        if (!ok)
            err = KN_ERR__NOMEM;
    }
    knw_resp_free(resp);
    if (err) {
        kn_scram_credentials_destroy(c);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return err;
    }
    *credsp = c;
    return KN_OK;
}

/* ---- alter ------------------------------------------------------------ */

/* Java's ScramFormatter.secureRandomBytes: new BigInteger(130,
 * SecureRandom).toString(36), as bytes. Returns the length. */
static size_t kna_scram_salt(char out[32]) {
    uint8_t r[17];
    if (RAND_bytes(r, sizeof(r)) != 1)
        return 0;
    r[0] &= 0x03; /* 130 bits: 2 + 16 * 8 */
    /* Base-36 digits of the big-endian number r, by repeated division. */
    char digits[32];
    size_t nd = 0;
    bool zero = false;
    while (!zero && nd < sizeof(digits)) {
        unsigned rem = 0;
        zero = true;
        for (size_t i = 0; i < sizeof(r); i++) {
            unsigned cur = rem * 256 + r[i];
            r[i] = (uint8_t)(cur / 36);
            rem = cur % 36;
            zero = zero && r[i] == 0;
        }
        digits[nd++] = "0123456789abcdefghijklmnopqrstuvwxyz"[rem];
    }
    for (size_t i = 0; i < nd; i++)
        out[i] = digits[nd - 1 - i];
    return nd;
}

/* SCRAM's SaltedPassword = Hi(password, salt, i) (RFC 5802), which is
 * PBKDF2-HMAC with dkLen the hash length. out has room for 64 bytes. */
static int kna_scram_salted(int mechanism, const char *password, const uint8_t *salt, size_t salt_len,
                            int32_t iterations, uint8_t out[64], size_t *lenp) {
    const EVP_MD *md = mechanism == KN_SCRAM_SHA_512 ? EVP_sha512() : EVP_sha256();
    size_t len = (size_t)EVP_MD_size(md);
    if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)salt_len, iterations, md, (int)len,
                          out) != 1)
        return KN_ERR__FAIL;
    *lenp = len;
    return 0;
}

int kn_admin_alter_user_scram_credentials(kn_admin *admin, const kn_scram_op *ops, size_t count,
                                          int timeout_ms, kn_scram_credentials **resultsp, char *errstr,
                                          size_t errstr_size) {
    static const char fn[] = "kn_admin_alter_user_scram_credentials";
    if (!admin || !resultsp || (count && !ops) || count > 0x7fffffff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    for (size_t k = 0; k < count; k++)
        if (!ops[k].user || (ops[k].password && ops[k].iterations <= 0) ||
            (ops[k].salt && !ops[k].salt_len)) {
            kn_errstr_set(errstr, errstr_size, "%s: op %zu (%s): %s", fn, k,
                          ops[k].user ? ops[k].user : "NULL",
                          !ops[k].user  ? "no user"
                          : ops[k].salt ? "an empty salt"
                                        : "iterations must be > 0");
            return KN_ERR__INVALID_ARG;
        }
    size_t ndel = 0, nup = 0;
    for (size_t k = 0; k < count; k++)
        ops[k].password ? nup++ : ndel++;
    kp_AlterUserScramCredentialsRequest_ScramCredentialDeletion *dels = kn_calloc(ndel + 1, sizeof(*dels));
    kp_AlterUserScramCredentialsRequest_ScramCredentialUpsertion *ups = kn_calloc(nup + 1, sizeof(*ups));
    uint8_t (*secrets)[96] =
        kn_calloc(nup + 1, sizeof(*secrets)); /* salt (<= 32) + salted password (<= 64) */
    kn_scram_credentials *c = kn_calloc(1, sizeof(*c));
    int err = KN_ERR__NOMEM;
    if (!dels || !ups || !secrets || !c || !(c->items = kn_calloc(count ? count : 1, sizeof(*c->items))))
        goto nomem;
    size_t d = 0, u = 0;
    for (size_t k = 0; k < count; k++) {
        const kn_scram_op *op = &ops[k];
        bool seen = false;
        for (size_t j = 0; j < c->count && !seen; j++)
            seen = strcmp(c->items[j].user, op->user) == 0;
        if (!seen) {
            if (!(c->items[c->count].user = kn_strdup(op->user)))
                goto nomem;
            c->items[c->count++].err = KN_ERR_UNKNOWN_SERVER_ERROR; /* until the broker answers */
        }
        if (!op->password) {
            kp_AlterUserScramCredentialsRequest_ScramCredentialDeletion_init(&dels[d]);
            dels[d].name = kna_cstr(op->user);
            dels[d++].mechanism = (int8_t)op->mechanism;
            continue;
        }
        uint8_t *salt = secrets[u];
        size_t salt_len = op->salt_len;
        if (op->salt) {
            if (salt_len > 32) {
                err = KN_ERR__INVALID_ARG;
                kn_errstr_set(errstr, errstr_size, "%s: op %zu (%s): a salt longer than 32 bytes", fn, k,
                              op->user);
                goto fail;
            }
            memcpy(salt, op->salt, salt_len);
        } else if (!(salt_len = kna_scram_salt((char *)salt))) {
            err = KN_ERR__FAIL;
            kn_errstr_set(errstr, errstr_size, "%s: no random bytes for a salt", fn);
            goto fail;
        }
        size_t slen = 0;
        if ((err = kna_scram_salted(op->mechanism, op->password, salt, salt_len, op->iterations,
                                    secrets[u] + 32, &slen)) != 0) {
            kn_errstr_set(errstr, errstr_size, "%s: salting the password failed", fn);
            goto fail;
        }
        kp_AlterUserScramCredentialsRequest_ScramCredentialUpsertion_init(&ups[u]);
        ups[u].name = kna_cstr(op->user);
        ups[u].mechanism = (int8_t)op->mechanism;
        ups[u].iterations = op->iterations;
        ups[u].salt = (kn_bytes){salt, (int32_t)salt_len};
        ups[u].salted_password = (kn_bytes){secrets[u] + 32, (int32_t)slen};
        u++;
    }
    kp_AlterUserScramCredentialsRequest req;
    kp_AlterUserScramCredentialsRequest_init(&req);
    req.deletions.items = dels;
    req.deletions.count = (int32_t)d;
    req.upsertions.items = ups;
    req.upsertions.count = (int32_t)u;
    knw_resp *resp =
        kna_call(admin, KNW_NODE_ANY, KP_API_ALTER_USER_SCRAM_CREDENTIALS, -1, -1, &req,
                 kna_deadline(admin, timeout_ms), "AlterUserScramCredentials", &err, errstr, errstr_size);
    if (!resp)
        goto fail;
    const kp_AlterUserScramCredentialsResponse *body = resp->body;
    bool ok = true;
    for (int32_t k = 0; k < body->results.count; k++) {
        const kp_AlterUserScramCredentialsResponse_AlterUserScramCredentialsResult *r =
            &body->results.items[k];
        for (size_t i = 0; i < c->count; i++) {
            kna_scram_user *su = &c->items[i];
            if (r->user.len < 0 || strlen(su->user) != (size_t)r->user.len ||
                memcmp(su->user, r->user.ptr, (size_t)r->user.len) != 0)
                continue;
            su->err = r->error_code;
            kn_free(su->message);
            su->message =
                r->error_code && r->error_message.len >= 0 ? kna_strdup_str(r->error_message, &ok) : NULL;
        }
    }
    knw_resp_free(resp);
    if (!ok)
        goto nomem;
    OPENSSL_cleanse(secrets, (nup + 1) * sizeof(*secrets));
    kn_free(secrets);
    kn_free(dels);
    kn_free(ups);
    *resultsp = c;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    if (secrets)
        OPENSSL_cleanse(secrets, (nup + 1) * sizeof(*secrets));
    kn_free(secrets);
    kn_free(dels);
    kn_free(ups);
    kn_scram_credentials_destroy(c);
    return err;
}

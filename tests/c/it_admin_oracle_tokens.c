/*
 * it_admin_oracle_tokens.c: describe_delegation_tokens compared with the
 * Java Admin client's describeDelegationToken (tools/java/admin-oracle
 * tokens), both logged in as the harness SASL user over the broker's
 * SASL_SSL listener with SCRAM-SHA-256 (the harness CA as trust store).
 *
 * Our admin creates two tokens there: one with two renewers and a max
 * lifetime of an hour, one with neither (the broker's defaults). Both
 * sides then describe the tokens of that owner, and every token the
 * login may see, one line per token (sorted by the whole line): token
 * id, owner, requester, renewers (the broker's order), issue, expiry and
 * max timestamps and the HMAC in base64, which must be equal line by
 * line. Our two tokens must be among them; they are expired at the end.
 */
#include "kn_test.h"
#include "oracle_lines.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "secure.h"

#define TIMEOUT_MS 30000

static const char *null_or(const char *s) { return s ? s : "null"; }

static kn_admin *sasl_ssl_admin(void) {
    char jaas[512], es[512];
    snprintf(jaas, sizeof jaas,
             "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" password=\"%s\";",
             kn_secure_env("KN_SASL_USER"), kn_secure_env("KN_SASL_PASSWORD"));
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL"));
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_test_conf_set(conf, "sasl.mechanism", "SCRAM-SHA-256");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    kn_secure_conf_trust(conf);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    return a;
}

/* The oracle's lines: "token <what> id=... hmac=..." of the owner's
 * tokens (what "owner"), then of every token (what "all"). */
static void token_lines(kn_admin *a, const char *owner, lines *out) {
    char es[512];
    for (int all = 0; all < 2; all++) {
        kn_delegation_tokens *t = NULL;
        if (kn_admin_describe_delegation_tokens(a, all ? NULL : &owner, all ? 0 : 1, TIMEOUT_MS, &t, es, sizeof es))
            fail_msg("describe_delegation_tokens: %s", es);
        lines l = {0};
        for (size_t i = 0; i < kn_delegation_tokens_count(t); i++) {
            char rs[1024] = "";
            for (size_t r = 0; r < kn_delegation_tokens_renewer_count(t, i); r++) {
                size_t len = strlen(rs);
                snprintf(rs + len, sizeof rs - len, "%s%s", r ? "," : "", kn_delegation_tokens_renewer(t, i, r));
            }
            add_line(&l, "token %s id=%s owner=%s requester=%s renewers=%s issue=%lld expiry=%lld max=%lld hmac=%s",
                     all ? "all" : "owner", kn_delegation_tokens_id(t, i), null_or(kn_delegation_tokens_owner(t, i)),
                     null_or(kn_delegation_tokens_requester(t, i)), rs,
                     (long long)kn_delegation_tokens_issue_ms(t, i), (long long)kn_delegation_tokens_expiry_ms(t, i),
                     (long long)kn_delegation_tokens_max_ms(t, i), kn_delegation_tokens_hmac_base64(t, i));
        }
        move_sorted_lines(out, &l);
        kn_delegation_tokens_destroy(t);
    }
}

typedef struct token {
    char id[128];
    uint8_t hmac[64];
    size_t hmac_len;
} token;

static void create(kn_admin *a, const char *const *renewers, size_t n, int64_t max_ms, token *out) {
    char es[512];
    kn_delegation_tokens *t = NULL;
    if (kn_admin_create_delegation_token(a, renewers, n, NULL, max_ms, TIMEOUT_MS, &t, es, sizeof es))
        fail_msg("create_delegation_token: %s", es);
    assert_int_equal(kn_delegation_tokens_count(t), 1);
    snprintf(out->id, sizeof out->id, "%s", kn_delegation_tokens_id(t, 0));
    const uint8_t *h = kn_delegation_tokens_hmac(t, 0, &out->hmac_len);
    assert_true(out->hmac_len > 0 && out->hmac_len <= sizeof out->hmac);
    memcpy(out->hmac, h, out->hmac_len);
    kn_delegation_tokens_destroy(t);
}

static void test_tokens_oracle(void **state) {
    (void)state;
    char es[512], owner[200], r1[220], r2[220], ca[600], want[1024];
    snprintf(owner, sizeof owner, "User:%s", kn_secure_env("KN_SASL_USER"));
    snprintf(r1, sizeof r1, "User:%s", kn_test_topic("renewer"));
    snprintf(r2, sizeof r2, "User:%s", kn_test_topic("renewer"));
    snprintf(ca, sizeof ca, "%s/ca.pem", kn_secure_env("KN_TLS_DIR"));
    kn_admin *a = sasl_ssl_admin();
    token t[2];
    create(a, (const char *const[]){r1, r2}, 2, 3600000, &t[0]);
    create(a, NULL, 0, -1, &t[1]);

    /* Tokens come from the metadata log: described a moment later. */
    lines ours = {0};
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        token_lines(a, owner, &ours);
        int seen = 0;
        for (int k = 0; k < 2; k++) {
            snprintf(want, sizeof want, "token all id=%s ", t[k].id);
            seen += has_line(&ours, want);
        }
        if (seen == 2)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("our tokens %s, %s never described", t[0].id, t[1].id);
        free_lines(&ours);
        usleep(100 * 1000);
    }
    free_lines(&ours);

    /* The oracle (its bootstrap: KAFKA_BOOTSTRAP) over the same listener
     * and login, right after ours. */
    lines java = {0};
    token_lines(a, owner, &ours);
    setenv("KAFKA_BOOTSTRAP", kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL"), 1);
    oracle_java_lines(
        "tokens",
        (const char *const[]){kn_secure_env("KN_SASL_USER"), kn_secure_env("KN_SASL_PASSWORD"), ca, owner}, 4,
        &java);
    oracle_assert_same(&ours, &java);
    free_lines(&java);
    char rs[2048];
    snprintf(rs, sizeof rs, "id=%s owner=%s requester=%s renewers=%s,%s ", t[0].id, owner, owner, r1, r2);
    assert_true(has_line(&ours, rs));
    snprintf(rs, sizeof rs, "id=%s owner=%s requester=%s renewers= ", t[1].id, owner, owner);
    assert_true(has_line(&ours, rs));
    free_lines(&ours);

    for (int k = 0; k < 2; k++)
        if (kn_admin_expire_delegation_token(a, t[k].hmac, t[k].hmac_len, -1, TIMEOUT_MS, NULL, es, sizeof es))
            fail_msg("expire: %s", es);
    kn_admin_destroy(a);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_SASL_SSL", "KN_SASL_USER", "KN_SASL_PASSWORD", "KN_TLS_DIR",
                                       NULL};
    int gate = kn_secure_need("it_admin_oracle_tokens", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tokens_oracle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

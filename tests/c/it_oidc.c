/*
 * it_oidc.c: OAUTHBEARER with tokens from an OAuth/OIDC token endpoint
 * (KIP-768 client credentials) against the real broker's OIDC listener,
 * which verifies RS256 signatures against the harness provider's JWKS
 * (tools/kafka/oidc.sh):
 *  - produce and consume as a group member with commits, the producer
 *    configured Java's way (OAuthBearerLoginCallbackHandler, clientId /
 *    clientSecret JAAS options, ssl.* JAAS options for the endpoint),
 *    the consumer with the 4.x keys and the endpoint URL alone;
 *  - an unsigned token (unsecured login) is refused by that listener;
 *  - bad endpoints, each a clear constructor error within its bound and
 *    never the client secret: connection refused, no answer within
 *    sasl.login.read.timeout.ms, HTTP 401 (status and the provider's
 *    error), 500 retried until sasl.login.retry.backoff.max.ms, malformed
 *    JSON, a token that is not a JWT;
 *  - the provider failing after the first token: the refresh failure is
 *    a warning naming the cause (no secret), the client keeps working
 *    with its token, and close does not wait for the endpoint;
 *  - 15 s tokens: an idempotent producer and a group member through
 *    several token refreshes and KIP-368 re-authentications (the broker
 *    ends each session at the token's exp), nothing lost, duplicated or
 *    reordered: 32 s, or 90 s with KN_TEST_LONG=1.
 * Without the listener: skipped (exit 77), or failed when
 * KN_TEST_REQUIRE_SECURE=1.
 */
#include "kn_test.h"
#include "secure.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"

#define MODULE  "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
#define HANDLER "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"

/* A client of the OIDC listener whose tokens come from url (NULL: the
 * provider's), the Java way: handler class and JAAS options. */
static kn_conf *oidc_conf(kn_client_type type, const char *url, const char *secret, const char *extra_opts) {
    kn_conf *conf = kn_conf_new(type);
    char jaas[1024];
    snprintf(
        jaas, sizeof jaas,
        MODULE
        " required clientId=\"%s\" clientSecret=\"%s\" scope=\"kafka write\" ssl.truststore.type=\"PEM\" "
        "ssl.truststore.location=\"%s/ca.pem\" %s;",
        kn_secure_env("KN_OIDC_CLIENT_ID"), secret ? secret : kn_secure_env("KN_OIDC_CLIENT_SECRET"),
        kn_secure_env("KN_TLS_DIR"), extra_opts ? extra_opts : "");
    kn_test_conf_set(conf, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_OIDC"));
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_secure_conf_trust(conf);
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.login.callback.handler.class", HANDLER);
    kn_test_conf_set(conf, "sasl.oauthbearer.token.endpoint.url",
                     url ? url : kn_secure_env("KN_OIDC_TOKEN_URL"));
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    return conf;
}

static void test_roundtrip(void **state) {
    (void)state;
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("oidc"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    kn_conf *pc = oidc_conf(KN_CLIENT_PRODUCER, NULL, NULL, NULL);
    /* The consumer: Kafka 4.x keys, no handler class (the URL selects the endpoint). */
    kn_conf *cc = kn_conf_new(KN_CLIENT_CONSUMER);
    char jaas[512];
    snprintf(jaas, sizeof jaas, MODULE " required ssl.truststore.location=\"%s/ca.pem\";",
             kn_secure_env("KN_TLS_DIR"));
    kn_test_conf_set(cc, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_OIDC"));
    kn_test_conf_set(cc, "security.protocol", "SASL_SSL");
    kn_secure_conf_trust(cc);
    kn_test_conf_set(cc, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(cc, "sasl.oauthbearer.token.endpoint.url", kn_secure_env("KN_OIDC_TOKEN_URL"));
    kn_test_conf_set(cc, "sasl.oauthbearer.client.credentials.client.id", kn_secure_env("KN_OIDC_CLIENT_ID"));
    kn_test_conf_set(cc, "sasl.oauthbearer.client.credentials.client.secret",
                     kn_secure_env("KN_OIDC_CLIENT_SECRET"));
    kn_test_conf_set(cc, "sasl.oauthbearer.scope", "kafka");
    kn_test_conf_set(cc, "sasl.jaas.config", jaas);
    kn_secure_roundtrip(pc, cc, t, group, 0, 200);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
}

/* The listener checks signatures: an unsigned token is refused. */
static void test_unsigned_token_refused(void **state) {
    (void)state;
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_OIDC"));
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_secure_conf_trust(conf);
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.jaas.config",
                     MODULE " required unsecuredLoginStringClaim_sub=\"kn-client\";");
    char es[512];
    int64_t took;
    kn_producer *p = kn_secure_denied_send(conf, "kn-test-oidc-denied", es, sizeof es, &took);
    if (!strstr(es, "invalid_token"))
        fail_msg("expected the broker's invalid_token: %s", es);
    fprintf(stderr, "  unsigned token refused in %lld ms: %s\n", (long long)took, es);
    assert_int_equal(kn_producer_close(p, 1000), KN_ERR__AUTHENTICATION);
}

/* A client whose token endpoint misbehaves fails in its constructor,
 * as Java's login does, within bound_ms, with every want in the message
 * and no secret. */
static void expect_login_error(const char *what, kn_conf *conf, int64_t min_ms, int64_t bound_ms,
                               const char *const *want) {
    char es[1024] = "";
    int64_t t0 = kn_test_now_ms();
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    int64_t took = kn_test_now_ms() - t0;
    kn_conf_destroy(conf);
    if (p)
        fail_msg("%s: the producer was created", what);
    fprintf(stderr, "  %s: %lld ms: %s\n", what, (long long)took, es);
    for (size_t i = 0; want[i]; i++)
        if (!strstr(es, want[i]))
            fail_msg("%s: \"%s\" not in: %s", what, want[i], es);
    if (strstr(es, kn_secure_env("KN_OIDC_CLIENT_SECRET")) || strstr(es, "wrong-secret") || strstr(es, "eyJ"))
        fail_msg("%s: a secret in the message: %s", what, es);
    if (took < min_ms || took > bound_ms)
        fail_msg("%s: took %lld ms (expected %lld..%lld)", what, (long long)took, (long long)min_ms,
                 (long long)bound_ms);
}

static void url_with(char *out, size_t n, const char *query) {
    snprintf(out, n, "%s?%s", kn_secure_env("KN_OIDC_TOKEN_URL"), query);
}

static void test_bad_endpoints(void **state) {
    (void)state;
    char url[512];
    kn_conf *c;

    /* Down: nothing listens (port 1); retried for 500 ms, then the cause. */
    c = oidc_conf(KN_CLIENT_PRODUCER, "https://127.0.0.1:1/token", NULL, NULL);
    kn_test_conf_set(c, "sasl.login.retry.backoff.max.ms", "500");
    expect_login_error(
        "endpoint down", c, 400, 5000,
        (const char *const[]){"OAUTHBEARER login: cannot get a token from https://127.0.0.1:1/token",
                              "Connection refused", "attempts in", NULL});

    /* Slow: the provider waits 5 s; read timeout 500 ms, no retry budget. */
    url_with(url, sizeof url, "delay_ms=5000");
    c = oidc_conf(KN_CLIENT_PRODUCER, url, NULL, NULL);
    kn_test_conf_set(c, "sasl.login.read.timeout.ms", "500");
    kn_test_conf_set(c, "sasl.login.connect.timeout.ms", "1000");
    kn_test_conf_set(c, "sasl.login.retry.backoff.ms", "0");
    kn_test_conf_set(c, "sasl.login.retry.backoff.max.ms", "0");
    expect_login_error(
        "slow endpoint", c, 400, 4000,
        (const char *const[]){"did not answer in time", "sasl.login.read.timeout.ms 500", NULL});

    /* 401: a wrong secret; unretryable, so one attempt. */
    c = oidc_conf(KN_CLIENT_PRODUCER, NULL, "wrong-secret", NULL);
    expect_login_error("wrong secret", c, 0, 3000,
                       (const char *const[]){"answered HTTP 401",
                                             "{invalid_client - client authentication failed}",
                                             "(1 attempt in", NULL});

    /* 500: retried until sasl.login.retry.backoff.max.ms. */
    url_with(url, sizeof url, "mode=500");
    c = oidc_conf(KN_CLIENT_PRODUCER, url, NULL, NULL);
    kn_test_conf_set(c, "sasl.login.retry.backoff.ms", "50");
    kn_test_conf_set(c, "sasl.login.retry.backoff.max.ms", "600");
    expect_login_error(
        "HTTP 500", c, 500, 5000,
        (const char *const[]){"answered HTTP 500", "{server_error - try again}", "attempts in", NULL});

    /* Malformed JSON in a 200 answer. */
    url_with(url, sizeof url, "mode=json");
    expect_login_error("malformed JSON", oidc_conf(KN_CLIENT_PRODUCER, url, NULL, NULL), 0, 3000,
                       (const char *const[]){"is unusable: the token endpoint's answer is not a JSON object",
                                             "malformed JSON at byte", NULL});

    /* A token that is not a JWT. */
    url_with(url, sizeof url, "mode=jwt");
    expect_login_error("malformed JWT", oidc_conf(KN_CLIENT_PRODUCER, url, NULL, NULL), 0, 3000,
                       (const char *const[]){"malformed JWT: expected three sections", NULL});

    /* The endpoint's certificate is not trusted without the harness CA. */
    c = kn_conf_new(KN_CLIENT_PRODUCER);
    char jaas[512];
    snprintf(jaas, sizeof jaas, MODULE " required clientId=\"%s\" clientSecret=\"%s\";",
             kn_secure_env("KN_OIDC_CLIENT_ID"), kn_secure_env("KN_OIDC_CLIENT_SECRET"));
    kn_test_conf_set(c, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_OIDC"));
    kn_test_conf_set(c, "security.protocol", "SASL_SSL");
    kn_test_conf_set(c, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(c, "sasl.oauthbearer.token.endpoint.url", kn_secure_env("KN_OIDC_TOKEN_URL"));
    kn_test_conf_set(c, "sasl.login.retry.backoff.ms", "0");
    kn_test_conf_set(c, "sasl.login.retry.backoff.max.ms", "0");
    kn_test_conf_set(c, "sasl.jaas.config", jaas);
    expect_login_error("untrusted endpoint", c, 0, 3000,
                       (const char *const[]){"cannot get a token from", "certificate", NULL});
}

/* Log records kept for the test (any thread). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192];

static void on_log(int level, const char *message, void *opaque) {
    (void)opaque;
    if (level > KN_LOG_WARN)
        return;
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s\n", message);
    pthread_mutex_unlock(&log_lock);
}

static bool log_has(const char *what) {
    pthread_mutex_lock(&log_lock);
    bool has = strstr(log_text, what) != NULL;
    pthread_mutex_unlock(&log_lock);
    return has;
}

/* The provider answers 503 after the first token: the refresh at half
 * of a 20 s lifetime fails, is logged, and the client carries on. */
static void test_refresh_failure(void **state) {
    (void)state;
    char url[512], q[128];
    snprintf(q, sizeof q, "lifetime=20&fail_after=1&run=%lld", (long long)kn_test_now_ms());
    url_with(url, sizeof url, q);
    kn_conf *conf = oidc_conf(KN_CLIENT_PRODUCER, url, NULL, NULL);
    kn_test_conf_set(conf, "sasl.login.refresh.window.factor", "0.5");
    kn_test_conf_set(conf, "sasl.login.refresh.window.jitter", "0");
    kn_test_conf_set(conf, "sasl.login.retry.backoff.max.ms", "500");
    kn_conf_set_log_cb(conf, KN_LOG_WARN, on_log, NULL);
    char es[512];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(p);
    int64_t t0 = kn_test_now_ms();
    while (!log_has("answered HTTP 503") && kn_test_now_ms() - t0 < 30000) {
        kn_producer_poll(p, 100);
    }
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "  after %lld ms the log has: %s", (long long)(kn_test_now_ms() - t0), log_text);
    pthread_mutex_unlock(&log_lock);
    assert_true(log_has("OAUTHBEARER login: the token endpoint"));
    assert_true(log_has("{temporarily_unavailable - down for the test}"));
    assert_true(log_has("the next attempt is in 10 s"));
    assert_false(log_has(kn_secure_env("KN_OIDC_CLIENT_SECRET")));
    assert_false(log_has("eyJ"));
    /* The first token is still valid: the client works. */
    char t[128];
    snprintf(t, sizeof t, "%s", kn_test_topic("oidc-refail"));
    assert_int_equal(kn_secure_send(p, t, 0, es, sizeof es), KN_OK);
    assert_int_equal(kn_producer_flush(p, 15000), KN_OK);
    int64_t c0 = kn_test_now_ms();
    assert_int_equal(kn_producer_close(p, 5000), KN_OK);
    assert_true(kn_test_now_ms() - c0 < 3000);
}

/* 15 s tokens: refreshed at Java's 80-85 % point by the kn-oauth
 * thread; the broker ends each session at the token's exp, so clients
 * re-authenticate with the new token on the same connections. */
static const char *short_url(void) {
    static char url[512];
    url_with(url, sizeof url, "lifetime=15");
    return url;
}

static kn_conf *short_producer_conf(void *ctx) {
    (void)ctx;
    return oidc_conf(KN_CLIENT_PRODUCER, short_url(), NULL, NULL);
}

static void test_refresh_reauth(void **state) {
    (void)state;
    bool long_run = getenv("KN_TEST_LONG") && !strcmp(getenv("KN_TEST_LONG"), "1");
    int64_t run_ms = long_run ? 90000 : 32000;
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("oidc-refresh"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    kn_conf *cc = oidc_conf(KN_CLIENT_CONSUMER, short_url(), NULL, NULL);
    kn_consumer *c = kn_secure_group_consumer(cc, group, t);
    kn_conf_destroy(cc);
    kn_secure_prod pt = {
        .make_conf = short_producer_conf, .topic = t, .run_ms = run_ms, .burst = 10, .pause_ms = 50};
    int next = kn_secure_consume_while_producing(c, &pt, run_ms + 60000, run_ms + 20000, run_ms);
    kn_consumer_stats cs;
    kn_consumer_get_stats(c, &cs);
    fprintf(stderr,
            "  %s run (%lld s): produced %d, consumed %d; re-authentications: producer %lld, consumer %lld\n",
            long_run ? "long" : "short", (long long)run_ms / 1000, pt.sent, next,
            (long long)pt.stats.reauthentications, (long long)cs.reauthentications);
    assert_int_equal(atomic_load(&pt.st.ok), pt.sent);
    assert_int_equal(atomic_load(&pt.st.failed), 0);
    assert_int_equal(next, pt.sent);
    int64_t want = long_run ? 5 : 2;
    assert_true(pt.stats.reauthentications >= want);
    assert_true(cs.reauthentications >= want);
    assert_int_equal(pt.stats.connect_failures, 0);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    assert_int_equal(kn_consumer_close(c), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_OIDC",  "KN_OIDC_TOKEN_URL", "KN_OIDC_CLIENT_ID",
                                       "KN_OIDC_CLIENT_SECRET", "KN_TLS_DIR",        NULL};
    int gate = kn_secure_need("it_oidc", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),      cmocka_unit_test(test_unsigned_token_refused),
        cmocka_unit_test(test_bad_endpoints),  cmocka_unit_test(test_refresh_failure),
        cmocka_unit_test(test_refresh_reauth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

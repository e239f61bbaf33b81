/*
 * it_oauthbearer_cb.c: SASL OAUTHBEARER with the application's token
 * callback (kn_conf_set_oauthbearer_token_cb) against the real broker,
 * whose default validator accepts unsigned tokens (tools/kafka/README.md):
 *  - produce, consume as a group member and an admin call over SASL_SSL
 *    with tokens from the callback, which runs only on the calling
 *    thread (never the network thread) and whose extension is sent;
 *  - a callback that fails: KN_ERR__AUTHENTICATION naming the callback
 *    and its reason within 2 s;
 *  - over REAUTH (10 s sessions) with 15 s tokens: a group member
 *    consumes for 40 s while an idempotent producer sends for 35 s; the
 *    callback is called again at the refresh point of each token and
 *    each re-authentication presents the new one: nothing lost,
 *    duplicated or reordered, no reconnect.
 * Without the listeners: skipped (exit 77), or failed when
 * KN_TEST_REQUIRE_SECURE=1.
 */
#include "kn_test.h"
#include "secure.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

static void b64url(const char *s, char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = strlen(s), o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = acc << 8 | (unsigned char)s[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out[o++] = tab[acc >> bits & 63];
        }
    }
    if (bits)
        out[o++] = tab[acc << (6 - bits) & 63];
    out[o] = 0;
}

typedef struct token_src {
    pthread_t app_thread;
    int lifetime_s;
    bool fail;
    atomic_int calls;
    atomic_int wrong_thread;
    char token[1024];
} token_src;

static const char *const EXTENSIONS[] = {"traceId", "kn-cb-test"};

static int token_cb(kn_oauthbearer_token *out, char *errstr, size_t errstr_size, void *opaque) {
    token_src *ts = opaque;
    atomic_fetch_add(&ts->calls, 1);
    if (!pthread_equal(pthread_self(), ts->app_thread))
        atomic_fetch_add(&ts->wrong_thread, 1);
    /* Size-versioned: the library says how much struct it allocated. */
    if (out->size != sizeof *out || !KN_STRUCT_HAS(out, kn_oauthbearer_token, extension_count)) {
        snprintf(errstr, errstr_size, "token struct size %zu, expected %zu", out->size, sizeof *out);
        return -1;
    }
    if (ts->fail) {
        snprintf(errstr, errstr_size, "identity provider unreachable (test)");
        return -1;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    int64_t exp_ms = now_ms + (int64_t)ts->lifetime_s * 1000;
    char claims[256], h[64], c[512];
    snprintf(claims, sizeof claims, "{\"exp\":%.3f,\"iat\":%.3f,\"sub\":\"alice\"}", (double)exp_ms / 1000.0,
             (double)now_ms / 1000.0);
    b64url("{\"alg\":\"none\"}", h);
    b64url(claims, c);
    snprintf(ts->token, sizeof ts->token, "%s.%s.", h, c);
    out->token = ts->token;
    out->lifetime_ms = exp_ms;
    out->principal = "alice";
    out->extensions = EXTENSIONS;
    out->extension_count = 1;
    return 0;
}

static kn_conf *cb_conf(kn_client_type type, const char *bootstrap, token_src *ts) {
    kn_conf *conf = kn_conf_new(type);
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_secure_conf_trust(conf);
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    /* No sasl.jaas.config: the callback is the token source. */
    assert_int_equal(kn_conf_set_oauthbearer_token_cb(conf, token_cb, ts), KN_OK);
    return conf;
}

static void test_callback_roundtrip(void **state) {
    (void)state;
    const char *bs = kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL");
    char t[128], group[160], es[512];
    snprintf(t, sizeof t, "%s", kn_test_topic("oauthcb"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    token_src ts = {.app_thread = pthread_self(), .lifetime_s = 3600};

    kn_conf *ac = cb_conf(KN_CLIENT_ADMIN, bs, &ts);
    kn_admin *a = kn_admin_new(ac, es, sizeof es);
    kn_conf_destroy(ac);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    kn_topic_list *l = NULL;
    int rc = kn_admin_list_topics(a, 0, 30000, &l, es, sizeof es);
    if (rc)
        fail_msg("list_topics: %s: %s", kn_err_name(rc), es);
    kn_topic_list_destroy(l);
    kn_admin_destroy(a);
    assert_true(atomic_load(&ts.calls) >= 1);

    kn_conf *pc = cb_conf(KN_CLIENT_PRODUCER, bs, &ts);
    kn_conf *cc = cb_conf(KN_CLIENT_CONSUMER, bs, &ts);
    kn_secure_roundtrip(pc, cc, t, group, 0, 200);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
    fprintf(stderr, "  token callback calls: %d\n", atomic_load(&ts.calls));
    assert_true(atomic_load(&ts.calls) >= 3); /* one per client at least */
    assert_int_equal(atomic_load(&ts.wrong_thread), 0);
}

static void test_callback_failure(void **state) {
    (void)state;
    token_src ts = {.app_thread = pthread_self(), .lifetime_s = 3600, .fail = true};
    kn_conf *conf = cb_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL"), &ts);
    char es[512];
    int64_t took;
    kn_producer *p = kn_secure_denied_send(conf, "kn-test-oauthcb-denied", es, sizeof es, &took);
    if (!strstr(es, "token callback failed") || !strstr(es, "identity provider unreachable"))
        fail_msg("message does not name the callback and its reason: %s", es);
    fprintf(stderr, "  callback failure in %lld ms: %s\n", (long long)took, es);
    assert_int_equal(atomic_load(&ts.calls), 1);
    assert_int_equal(atomic_load(&ts.wrong_thread), 0);
    assert_int_equal(kn_producer_flush(p, 1000), KN_ERR__AUTHENTICATION);
    kn_producer_close(p, 1000);
    kn_producer_destroy(p);
}

/* REAUTH: the producer runs on its own thread, which is then its
 * application thread for the callback. */
typedef struct reauth_src {
    const char *bootstrap;
    token_src ts;
} reauth_src;

static kn_conf *reauth_producer_conf(void *ctx) {
    reauth_src *rs = ctx;
    rs->ts.app_thread = pthread_self();
    return cb_conf(KN_CLIENT_PRODUCER, rs->bootstrap, &rs->ts);
}

static void test_refresh_through_reauth(void **state) {
    (void)state;
    const char *bs = kn_secure_env("KAFKA_BOOTSTRAP_REAUTH");
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("oauthcb-refresh"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    token_src cts = {.app_thread = pthread_self(), .lifetime_s = 15};
    kn_conf *cc = cb_conf(KN_CLIENT_CONSUMER, bs, &cts);
    kn_consumer *c = kn_secure_group_consumer(cc, group, t);
    kn_conf_destroy(cc);
    reauth_src rs = {.bootstrap = bs, .ts = {.lifetime_s = 15}};
    kn_secure_prod pt = {.make_conf = reauth_producer_conf,
                         .ctx = &rs,
                         .topic = t,
                         .run_ms = 35000,
                         .burst = 10,
                         .pause_ms = 50};
    int next = kn_secure_consume_while_producing(c, &pt, 80000, 40000, 0);
    kn_consumer_stats cs = {.size = sizeof cs};
    kn_consumer_get_stats(c, &cs);
    fprintf(stderr,
            "  produced %d, consumed %d; token callback calls: producer %d, consumer %d; re-authentications: "
            "producer %lld, consumer %lld\n",
            pt.sent, next, atomic_load(&rs.ts.calls), atomic_load(&cts.calls),
            (long long)pt.stats.reauthentications, (long long)cs.reauthentications);
    assert_int_equal(atomic_load(&pt.st.ok), pt.sent);
    assert_int_equal(atomic_load(&pt.st.failed), 0);
    assert_int_equal(next, pt.sent);
    /* 15 s tokens refreshed at 80..85 %: over 35..40 s, at least 3 calls */
    assert_true(atomic_load(&rs.ts.calls) >= 3);
    assert_true(atomic_load(&cts.calls) >= 3);
    assert_int_equal(atomic_load(&rs.ts.wrong_thread), 0);
    assert_int_equal(atomic_load(&cts.wrong_thread), 0);
    assert_true(pt.stats.reauthentications >= 2);
    assert_true(cs.reauthentications >= 2);
    assert_int_equal(pt.stats.connect_failures, 0);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_SASL_SSL", "KAFKA_BOOTSTRAP_REAUTH", "KN_TLS_DIR",
                                       NULL};
    int gate = kn_secure_need("it_oauthbearer_cb", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callback_roundtrip),
        cmocka_unit_test(test_callback_failure),
        cmocka_unit_test(test_refresh_through_reauth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

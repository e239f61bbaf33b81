/*
 * secure.c: the shared pieces of the secured-listener tests
 * (secure.h).
 */
#include "secure.h"

#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kn_secure_env(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A test on the SASL listeners first makes sure the harness's SCRAM
 * user is there (tools/kafka/broker ensure-scram, once per process): in
 * long suites the 4.3 broker has been seen to lose it (see
 * ensure_scram_user in tools/kafka/broker), and a missing user would
 * fail every SCRAM case with a misleading authentication error. */
static void ensure_scram_once(const char *const *names) {
    static bool done;
    const char *dir = kn_secure_env("KN_BROKER_DIR");
    if (done || !dir)
        return;
    bool sasl = false;
    for (size_t i = 0; names[i]; i++)
        sasl = sasl || strstr(names[i], "SASL") != NULL;
    if (!sasl)
        return;
    done = true;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' ensure-scram --dir '%s' >&2", kn_test_source_path("tools/kafka/broker"), dir);
    if (system(cmd) != 0) /* the tests that follow say what fails */
        fprintf(stderr, "tools/kafka/broker ensure-scram failed\n");
}

int kn_secure_need(const char *test, const char *const *names) {
    char missing[512] = "";
    size_t used = 0;
    for (size_t i = 0; names[i]; i++) {
        if (kn_secure_env(names[i]))
            continue;
        int w = snprintf(missing + used, sizeof missing - used, "%s%s", used ? " / " : "", names[i]);
        if (w > 0 && (size_t)w < sizeof missing - used)
            used += (size_t)w;
    }
    if (!used) {
        ensure_scram_once(names);
        return 0;
    }
    const char *req = getenv("KN_TEST_REQUIRE_SECURE");
    fprintf(stderr, "%s: %s not set (tools/kafka/broker env)\n", test, missing);
    return req && !strcmp(req, "1") ? 1 : 77;
}

void kn_secure_conf_trust(kn_conf *conf) {
    char ca[512];
    const char *dir = kn_secure_env("KN_TLS_DIR");
    snprintf(ca, sizeof ca, "%s/ca.pem", dir ? dir : ".");
    kn_test_conf_set(conf, "ssl.truststore.type", "PEM");
    kn_test_conf_set(conf, "ssl.truststore.location", ca);
}

kn_producer *kn_secure_denied_send(kn_conf *conf, const char *topic, char *es, size_t esn, int64_t *tookp) {
    int64_t t0 = kn_test_now_ms();
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, esn);
    kn_conf_destroy(conf);
    assert_non_null(p);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.value = "x";
    rec.value_len = 1;
    int rc = kn_producer_send(p, &rec, es, esn);
    int64_t took = kn_test_now_ms() - t0;
    if (rc != KN_ERR__AUTHENTICATION)
        fail_msg("send: expected _AUTHENTICATION, got %s: %s", kn_err_name(rc), es);
    if (took > 2000)
        fail_msg("authentication failure took %lld ms (bound 2000)", (long long)took);
    *tookp = took;
    return p;
}

void kn_secure_on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    kn_secure_dr *st = opaque;
    if (kn_delivery_error(d))
        atomic_fetch_add(&st->failed, 1);
    else
        atomic_fetch_add(&st->ok, 1);
}

int kn_secure_send(kn_producer *p, const char *topic, int i, char *es, size_t esn) {
    char v[32];
    int len = snprintf(v, sizeof v, "v%d", i);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.partition = 0;
    rec.value = v;
    rec.value_len = (size_t)len;
    return kn_producer_send(p, &rec, es, esn);
}

void kn_secure_check_records(kn_records *r, int *next) {
    for (size_t i = 0; i < kn_records_count(r); i++) {
        size_t len;
        const char *v = kn_records_value(r, i, &len);
        char want[32];
        int wl = snprintf(want, sizeof want, "v%d", *next);
        if ((size_t)wl != len || memcmp(v, want, len))
            fail_msg("record %d: got %.*s (lost, duplicated or reordered)", *next, (int)len, v);
        (*next)++;
    }
}

kn_consumer *kn_secure_group_consumer(kn_conf *conf, const char *group, const char *topic) {
    char es[512];
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_test_conf_set(conf, "enable.auto.commit", "false");
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    return c;
}

void kn_secure_roundtrip(kn_conf *pconf, kn_conf *cconf, const char *topic, const char *group, int from,
                         int n) {
    char es[512];
    kn_secure_dr st = {0};
    kn_producer *p = kn_producer_new(pconf, kn_secure_on_dr, &st, es, sizeof es);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    for (int i = from; i < from + n; i++) {
        int rc = kn_secure_send(p, topic, i, es, sizeof es);
        if (rc)
            fail_msg("send %d: %s: %s", i, kn_err_name(rc), es);
    }
    assert_int_equal(kn_producer_flush(p, 30000), KN_OK);
    assert_int_equal(atomic_load(&st.ok), n);
    assert_int_equal(atomic_load(&st.failed), 0);
    assert_int_equal(kn_producer_close(p, 5000), KN_OK);
    kn_producer_destroy(p);

    kn_consumer *c = kn_secure_group_consumer(cconf, group, topic);
    int next = from;
    int64_t deadline = kn_test_now_ms() + 60000;
    while (next < from + n && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 500, &r, es, sizeof es);
        if (rc)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        kn_secure_check_records(r, &next);
        kn_records_free(r);
    }
    assert_int_equal(next, from + n);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    kn_consumer_stats cs = {.size = sizeof cs};
    kn_consumer_get_stats(c, &cs);
    assert_true(cs.connects >= 1);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

static void *producer_main(void *arg) {
    kn_secure_prod *pt = arg;
    kn_conf *pc = pt->make_conf(pt->ctx);
    kn_test_conf_set(pc, "enable.idempotence", "true");
    kn_test_conf_set(pc, "linger.ms", "5");
    kn_producer *p = kn_producer_new(pc, kn_secure_on_dr, &pt->st, pt->err, sizeof pt->err);
    kn_conf_destroy(pc);
    if (!p)
        return NULL;
    int64_t end = kn_test_now_ms() + pt->run_ms;
    while (kn_test_now_ms() < end) {
        for (int k = 0; k < pt->burst; k++) {
            if (kn_secure_send(p, pt->topic, pt->sent, pt->err, sizeof pt->err))
                goto out;
            pt->sent++;
        }
        kn_producer_poll(p, pt->pause_ms);
    }
    if (kn_producer_flush(p, 30000))
        snprintf(pt->err, sizeof pt->err, "flush timed out");
out:
    pt->stats.size = sizeof pt->stats;
    kn_producer_get_stats(p, &pt->stats);
    kn_producer_close(p, 5000);
    kn_producer_destroy(p);
    return NULL;
}

int kn_secure_consume_while_producing(kn_consumer *c, kn_secure_prod *prod, int64_t cap_ms, int64_t join_ms,
                                      int64_t min_ms) {
    char es[512];
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, producer_main, prod), 0);
    int next = 0;
    bool joined = false;
    int64_t t0 = kn_test_now_ms();
    while (kn_test_now_ms() - t0 < cap_ms) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 200, &r, es, sizeof es);
        if (rc)
            fail_msg("poll at record %d: %s: %s", next, kn_err_name(rc), es);
        kn_secure_check_records(r, &next);
        kn_records_free(r);
        if (!joined && kn_test_now_ms() - t0 >= join_ms) {
            pthread_join(th, NULL);
            joined = true;
        }
        if (joined && kn_test_now_ms() - t0 >= min_ms && next >= prod->sent)
            break;
    }
    if (!joined)
        pthread_join(th, NULL);
    if (prod->err[0])
        fail_msg("producer: %s", prod->err);
    return next;
}

/*
 * test_ctor_errors.c: kn_last_error() after each client constructor:
 * the code of the failure that made it return NULL (_INVALID_ARG for a
 * NULL or wrong-type conf, _CONFIG for settings that exclude each other,
 * _SSL for a trust store that cannot be loaded, _UNSUPPORTED), KN_OK
 * after a success, and per thread. No broker: construction fails (or
 * succeeds) before any connection.
 */
#include "kn_test.h"

#include <pthread.h>
#include <string.h>

static kn_conf *conf_of(kn_client_type type, const char *const *kv) {
    kn_conf *conf = kn_conf_new(type);
    assert_non_null(conf);
    kn_test_conf_set(conf, "bootstrap.servers", "127.0.0.1:1");
    if (type == KN_CLIENT_CONSUMER)
        kn_test_conf_set(conf, "group.id", "kn-test-ctor");
    for (size_t i = 0; kv && kv[i]; i += 2)
        kn_test_conf_set(conf, kv[i], kv[i + 1]);
    return conf;
}

/* Builds a client of type from conf; returns whether it was built
 * (and closes it) and leaves kn_last_error() as the constructor left it. */
static int build(kn_client_type type, const kn_conf *conf, char *err, size_t n) {
    int ok = 0;
    if (type == KN_CLIENT_PRODUCER) {
        kn_producer *p = kn_producer_new(conf, NULL, NULL, err, n);
        ok = p != NULL;
        int code = kn_last_error();
        kn_producer_close(p, 0);
        kn_producer_destroy(p);
        assert_int_equal(kn_last_error(), code); /* close does not touch it */
    } else if (type == KN_CLIENT_CONSUMER) {
        kn_consumer *c = kn_consumer_new(conf, err, n);
        ok = c != NULL;
        kn_consumer_destroy(c);
    } else {
        kn_admin *a = kn_admin_new(conf, err, n);
        ok = a != NULL;
        kn_admin_destroy(a);
    }
    return ok;
}

static const kn_client_type types[] = {KN_CLIENT_PRODUCER, KN_CLIENT_CONSUMER, KN_CLIENT_ADMIN};

static void test_each_failure_keeps_its_code(void **state) {
    (void)state;
    char err[512];
    for (size_t t = 0; t < 3; t++) {
        /* NULL conf, and a conf made for another client type. */
        err[0] = 0;
        assert_false(build(types[t], NULL, err, sizeof err));
        assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
        kn_conf *other = conf_of(types[(t + 1) % 3], NULL);
        assert_false(build(types[t], other, err, sizeof err));
        assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
        kn_conf_destroy(other);

        /* A trust store that does not exist: _SSL, naming the key. */
        const char *ssl[] = {"security.protocol", "SSL", "ssl.truststore.location", "/nonexistent/kn-ca.pem",
                             NULL};
        kn_conf *conf = conf_of(types[t], ssl);
        assert_false(build(types[t], conf, err, sizeof err));
        assert_int_equal(kn_last_error(), KN_ERR__SSL);
        assert_non_null(strstr(err, "ssl.truststore.location"));
        kn_conf_destroy(conf);

        /* A success resets it. */
        conf = conf_of(types[t], NULL);
        assert_true(build(types[t], conf, err, sizeof err));
        assert_int_equal(kn_last_error(), KN_OK);
        kn_conf_destroy(conf);
    }

    /* Settings that exclude each other (kn_conf_finalize): _CONFIG. */
    const char *idem[] = {"acks", "1", "enable.idempotence", "true", NULL};
    kn_conf *conf = conf_of(KN_CLIENT_PRODUCER, idem);
    assert_false(build(KN_CLIENT_PRODUCER, conf, err, sizeof err));
    assert_int_equal(kn_last_error(), KN_ERR__CONFIG);
    kn_conf_destroy(conf);

    /* A setting this build does not serve. */
    const char *tpc[] = {"transactional.id", "t", "transaction.two.phase.commit.enable", "true", NULL};
    conf = conf_of(KN_CLIENT_PRODUCER, tpc);
    assert_false(build(KN_CLIENT_PRODUCER, conf, err, sizeof err));
    assert_int_equal(kn_last_error(), KN_ERR__UNSUPPORTED);
    kn_conf_destroy(conf);
}

static void *other_thread(void *arg) {
    (void)arg;
    char err[256];
    kn_conf *conf = conf_of(KN_CLIENT_ADMIN, NULL);
    kn_admin *a = kn_admin_new(conf, err, sizeof err);
    int code = kn_last_error();
    kn_admin_destroy(a);
    kn_conf_destroy(conf);
    return (void *)(intptr_t)(a != NULL && code == KN_OK);
}

static void test_per_thread(void **state) {
    (void)state;
    char err[256];
    assert_null(kn_consumer_new(NULL, err, sizeof err));
    assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
    /* A success on another thread leaves this thread's code alone. */
    pthread_t th;
    void *ok = NULL;
    assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(th, &ok), 0);
    assert_true(ok != NULL);
    assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_failure_keeps_its_code),
        cmocka_unit_test(test_per_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

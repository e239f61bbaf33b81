/*
 * it_admin_acls.c: create_acls, describe_acls and delete_acls against
 * the real broker (the harness runs the StandardAuthorizer with
 * allow.everyone.if.no.acl.found, so only this test's own uniquely
 * named resources are affected): creations with a duplicate and an
 * indefinite binding failing alone, describe filters (MATCH over
 * resource types, a principal filter, an UNKNOWN value refused), and
 * delete filters returning the bindings they matched. The ACL is shown
 * enforced: a DENY WRITE for the harness SASL user on a topic makes our
 * producer's send over SASL_PLAINTEXT (SCRAM-SHA-256) fail with
 * TOPIC_AUTHORIZATION_FAILED, and once deleted the same send goes
 * through.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "secure.h"

#define TIMEOUT_MS 30000

static kn_admin *new_admin(void) {
    char errstr[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    if (!admin)
        fail_msg("kn_admin_new: %s", errstr);
    return admin;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* describe_acls(filter), waiting (bounded: ACLs apply from the metadata
 * log after the answer) until it has want bindings. Caller destroys. */
static kn_acl_results *wait_describe(kn_admin *admin, const kn_acl_binding *filter, size_t want) {
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        char errstr[512] = "";
        kn_acl_results *r = NULL;
        if (kn_admin_describe_acls(admin, filter, TIMEOUT_MS, &r, errstr, sizeof(errstr)) != KN_OK)
            fail_msg("describe_acls: %s", errstr);
        assert_int_equal(kn_acl_results_count(r), 1);
        size_t got = kn_acl_results_binding_count(r, 0);
        if (got == want)
            return r;
        kn_acl_results_destroy(r);
        if (kn_test_now_ms() > until)
            fail_msg("describe_acls: %zu bindings, want %zu", got, want);
        sleep_ms(100);
    }
}

static bool binding_is(const kn_acl_binding *b, int rtype, const char *name, int ptype, const char *principal,
                       int op, int perm) {
    return b->resource_type == rtype && strcmp(b->resource_name, name) == 0 && b->pattern_type == ptype &&
           strcmp(b->principal, principal) == 0 && strcmp(b->host, "*") == 0 && b->operation == op &&
           b->permission == perm;
}

static kn_producer *sasl_producer(void) {
    char jaas[512], es[512] = "";
    snprintf(
        jaas, sizeof jaas,
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" password=\"%s\";",
        kn_secure_env("KN_SASL_USER"), kn_secure_env("KN_SASL_PASSWORD"));
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"));
    kn_test_conf_set(conf, "security.protocol", "SASL_PLAINTEXT");
    kn_test_conf_set(conf, "sasl.mechanism", "SCRAM-SHA-256");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    kn_test_conf_set(conf, "max.block.ms", "20000");
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    return p;
}

static int last_dr_err;

static void on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    (void)opaque;
    last_dr_err = kn_delivery_error(d);
}

/* One record to topic by the harness SASL user: the send's error, or
 * the delivery's. */
static int sasl_send(const char *topic, char *es, size_t esn) {
    kn_producer *p = sasl_producer();
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.value = "v";
    rec.value_len = 1;
    rec.dr = on_dr;
    last_dr_err = -12345;
    int rc = kn_producer_send(p, &rec, es, esn);
    if (rc == KN_OK) {
        int frc = kn_producer_flush(p, TIMEOUT_MS);
        rc = frc ? frc : last_dr_err;
        if (rc)
            snprintf(es, esn, "delivery: %s", kn_err_name(rc));
    }
    kn_producer_close(p, 5000);
    kn_producer_destroy(p);
    return rc;
}

static void test_acls(void **state) {
    (void)state;
    char errstr[512] = "", topic[200], user[220], sasl_user[220];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("acl"));
    snprintf(user, sizeof user, "User:%s", kn_test_topic("acluser"));
    snprintf(sasl_user, sizeof sasl_user, "User:%s", kn_secure_env("KN_SASL_USER"));
    kn_test_create_topic(topic, 1);
    kn_admin *admin = new_admin();

    /* Before any ACL the SASL user may write: the control case. */
    int rc = sasl_send(topic, errstr, sizeof errstr);
    if (rc)
        fail_msg("send before the ACL: %s: %s", kn_err_name(rc), errstr);

    const kn_acl_binding acls[] = {
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, sasl_user, "*", KN_ACL_OP_WRITE,
         KN_ACL_PERMISSION_DENY},
        {KN_ACL_RESOURCE_GROUP, topic, KN_ACL_PATTERN_PREFIXED, user, "*", KN_ACL_OP_READ,
         KN_ACL_PERMISSION_ALLOW},
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, sasl_user, "*", KN_ACL_OP_WRITE,
         KN_ACL_PERMISSION_DENY}, /* the first again: sent once */
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, user, "*", KN_ACL_OP_ANY,
         KN_ACL_PERMISSION_ALLOW}, /* not a binding: fails alone */
    };
    kn_acl_results *r = NULL;
    assert_int_equal(kn_admin_create_acls(admin, acls, 4, TIMEOUT_MS, &r, errstr, sizeof errstr), KN_OK);
    assert_int_equal(kn_acl_results_count(r), 3);
    for (size_t i = 0; i < 2; i++)
        if (kn_acl_results_error(r, i))
            fail_msg("create %zu: %s", i, kn_acl_results_error_message(r, i));
    assert_int_equal(kn_acl_results_error(r, 2), KN_ERR_INVALID_REQUEST);
    assert_string_equal(kn_acl_results_error_message(r, 2), "Invalid ACL creation: Operation is ANY.");
    assert_int_equal(kn_acl_results_binding_count(r, 1), 1);
    assert_true(binding_is(kn_acl_results_binding(r, 1, 0), KN_ACL_RESOURCE_GROUP, topic,
                           KN_ACL_PATTERN_PREFIXED, user, KN_ACL_OP_READ, KN_ACL_PERMISSION_ALLOW));
    kn_acl_results_destroy(r);

    /* MATCH over any resource type: the literal topic ACL and the group
     * prefix that covers the name. */
    const kn_acl_binding match = {
        KN_ACL_RESOURCE_ANY, topic, KN_ACL_PATTERN_MATCH, NULL, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY};
    r = wait_describe(admin, &match, 2);
    int seen = 0;
    for (size_t b = 0; b < 2; b++) {
        const kn_acl_binding *x = kn_acl_results_binding(r, 0, b);
        seen |= binding_is(x, KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, sasl_user,
                           KN_ACL_OP_WRITE, KN_ACL_PERMISSION_DENY)
                    ? 1
                : binding_is(x, KN_ACL_RESOURCE_GROUP, topic, KN_ACL_PATTERN_PREFIXED, user, KN_ACL_OP_READ,
                             KN_ACL_PERMISSION_ALLOW)
                    ? 2
                    : 0;
    }
    assert_int_equal(seen, 3);
    kn_acl_results_destroy(r);
    /* A principal filter narrows it to that user's one ACL. */
    const kn_acl_binding by_user = {
        KN_ACL_RESOURCE_ANY, topic, KN_ACL_PATTERN_MATCH, user, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY};
    r = wait_describe(admin, &by_user, 1);
    assert_int_equal(kn_acl_results_binding(r, 0, 0)->resource_type, KN_ACL_RESOURCE_GROUP);
    kn_acl_results_destroy(r);
    /* An UNKNOWN value is refused before sending, as Java does. */
    const kn_acl_binding unknown = {0,    NULL,          KN_ACL_PATTERN_ANY,   NULL,
                                    NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY};
    assert_int_equal(kn_admin_describe_acls(admin, &unknown, TIMEOUT_MS, &r, errstr, sizeof errstr),
                     KN_ERR__INVALID_ARG);
    assert_null(r);
    assert_non_null(strstr(errstr, "UNKNOWN"));

    /* Enforced: the SASL user may no longer write the topic. */
    rc = sasl_send(topic, errstr, sizeof errstr);
    if (rc != KN_ERR_TOPIC_AUTHORIZATION_FAILED)
        fail_msg("send under DENY WRITE: %s (%s), want TOPIC_AUTHORIZATION_FAILED", kn_err_name(rc), errstr);

    char other[240];
    snprintf(other, sizeof other, "%s-none", topic);
    const kn_acl_binding filters[] = {
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, sasl_user, NULL, KN_ACL_OP_ANY,
         KN_ACL_PERMISSION_ANY},
        {KN_ACL_RESOURCE_GROUP, topic, KN_ACL_PATTERN_ANY, NULL, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY},
        {KN_ACL_RESOURCE_TOPIC, other, KN_ACL_PATTERN_ANY, NULL, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY},
    };
    assert_int_equal(kn_admin_delete_acls(admin, filters, 3, TIMEOUT_MS, &r, errstr, sizeof errstr), KN_OK);
    assert_int_equal(kn_acl_results_count(r), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(kn_acl_results_error(r, i), KN_OK);
    assert_int_equal(kn_acl_results_binding_count(r, 0), 1);
    assert_true(binding_is(kn_acl_results_binding(r, 0, 0), KN_ACL_RESOURCE_TOPIC, topic,
                           KN_ACL_PATTERN_LITERAL, sasl_user, KN_ACL_OP_WRITE, KN_ACL_PERMISSION_DENY));
    assert_int_equal(kn_acl_results_binding_error(r, 0, 0), KN_OK);
    assert_int_equal(kn_acl_results_binding_count(r, 1), 1);
    assert_true(binding_is(kn_acl_results_binding(r, 1, 0), KN_ACL_RESOURCE_GROUP, topic,
                           KN_ACL_PATTERN_PREFIXED, user, KN_ACL_OP_READ, KN_ACL_PERMISSION_ALLOW));
    assert_int_equal(kn_acl_results_binding_count(r, 2), 0);
    kn_acl_results_destroy(r);
    kn_acl_results_destroy(wait_describe(admin, &match, 0));

    /* Deleted: the same send goes through again (bounded: each broker
     * applies the deletion from the metadata log). */
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    while ((rc = sasl_send(topic, errstr, sizeof errstr)) != KN_OK) {
        if (rc != KN_ERR_TOPIC_AUTHORIZATION_FAILED || kn_test_now_ms() > until)
            fail_msg("send after deleting the ACL: %s (%s)", kn_err_name(rc), errstr);
        sleep_ms(200);
    }
    kn_admin_destroy(admin);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_SASL_PLAINTEXT", "KN_SASL_USER", "KN_SASL_PASSWORD",
                                       NULL};
    int gate = kn_secure_need("it_admin_acls", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_acls)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_config_extra.c: the mechanism for library-specific keys. This
 * test links its own kn_conf_extra_keys table in place of
 * core/config/extra_keys.c (the static library then leaves that object
 * out) and checks that such keys are found, validated, defaulted,
 * dumped in name order, offered as suggestions and scoped to their
 * client types like the generated ones. Also: getters misused on the
 * wrong key or type return 0/NULL in release builds.
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "config/catalog.h"
#include "config/config.h"
#include "kn_alloc.h"

static const char *const test_levels[] = {"error", "warn", "info", "debug", NULL};

const kn_conf_key kn_conf_extra_keys[] = {
    {.name = "kn.test.level",
     .type = KN_CONF_STRING,
     .clients = KN_CLIENT_PRODUCER | KN_CLIENT_CONSUMER,
     .def = {"info", "warn", NULL},
     .check = KN_CHECK_ENUM,
     .icase = 1,
     .values = test_levels},
    {.name = "kn.test.queue.size",
     .type = KN_CONF_INT,
     .clients = KN_CLIENT_PRODUCER,
     .def = {"64", NULL, NULL},
     .check = KN_CHECK_RANGE,
     .has_min = 1,
     .imin = 1,
     .has_max = 1,
     .imax = 4096},
};
const size_t kn_conf_extra_count = sizeof(kn_conf_extra_keys) / sizeof(kn_conf_extra_keys[0]);

static void test_extra_keys_behave_like_catalog_keys(void **state) {
    assert_int_equal(kn_conf_key_count(), kn_conf_catalog_count + 2);
    assert_int_equal(kn_conf_key_find("kn.test.queue.size"), (long)kn_conf_catalog_count + 1);
    for (size_t i = 0; i < kn_conf_extra_count; i++)
        assert_int_equal(kn_conf_key_find(kn_conf_extra_keys[i].name) < (long)kn_conf_catalog_count, 0);

    char err[512];
    kn_conf *p = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_conf *c = kn_conf_new(KN_CLIENT_CONSUMER);
    assert_string_equal(kn_conf_get_str(p, "kn.test.level"), "info");
    assert_string_equal(kn_conf_get_str(c, "kn.test.level"), "warn");
    assert_int_equal(kn_conf_get_int(p, "kn.test.queue.size"), 64);
    assert_int_equal(kn_conf_set(p, "kn.test.level", "DEBUG", err, sizeof(err)), KN_OK);
    assert_string_equal(kn_conf_get_str(p, "kn.test.level"), "debug");
    assert_int_equal(kn_conf_set(p, "kn.test.queue.size", "5000", err, sizeof(err)), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "kn.test.queue.size: expected a value in [1, 4096]"));
    assert_int_equal(kn_conf_set(p, "kn.test.level", "loud", err, sizeof(err)), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "error, warn, info, debug"));
    /* Scoped to its client types; suggested when misspelt. */
    assert_int_equal(kn_conf_set(c, "kn.test.queue.size", "5", err, sizeof(err)), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "kn.test.queue.size is a producer setting"));
    assert_int_equal(kn_conf_set(p, "kn.test.queue.sise", "5", err, sizeof(err)), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "did you mean \"kn.test.queue.size\"?"));
    kn_conf_destroy(c);

    /* Each default of the extra table passes its own validator too. */
    for (size_t i = 0; i < kn_conf_extra_count; i++) {
        char *canon = NULL;
        const kn_conf_key *k = &kn_conf_extra_keys[i];
        assert_int_equal(kn_conf_key_validate(k, k->def[0], &canon, err, sizeof(err)), KN_OK);
        kn_free(canon);
    }
    kn_conf_destroy(p);
}

typedef struct order_state {
    char last[128];
    int ok, seen_extra;
} order_state;

static void order_cb(const char *key, const char *value, int is_default, void *opaque) {
    order_state *st = opaque;
    if (st->last[0] && strcmp(st->last, key) >= 0)
        st->ok = 0;
    snprintf(st->last, sizeof(st->last), "%s", key);
    st->seen_extra += strncmp(key, "kn.test.", 8) == 0;
}

static void test_dump_merges_extra_keys_in_order(void **state) {
    kn_conf *p = kn_conf_new(KN_CLIENT_PRODUCER);
    order_state st = {.ok = 1};
    kn_conf_dump(p, order_cb, &st);
    assert_true(st.ok);
    assert_int_equal(st.seen_extra, 2);
    kn_conf_destroy(p);
}

static void test_getter_misuse(void **state) {
#ifdef NDEBUG
    kn_conf *p = kn_conf_new(KN_CLIENT_PRODUCER);
    /* Wrong type, absent key, other client's key: 0 / NULL, no crash. */
    assert_int_equal(kn_conf_get_int(p, "acks"), 0);
    assert_null(kn_conf_get_str(p, "linger.ms"));
    assert_null(kn_conf_get_str(p, "group.id"));
    assert_int_equal(kn_conf_get_bool(p, "no.such.key"), 0);
    assert_true(kn_conf_get_double(p, "batch.size") == 0.0);
    char **items = (char **)1;
    int n = 1;
    assert_int_equal(kn_conf_get_list(p, "client.id", &items, &n), KN_ERR__INVALID_ARG);
    assert_null(items);
    assert_int_equal(n, 0);
    kn_conf_destroy(p);
#else
    skip();
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extra_keys_behave_like_catalog_keys),
        cmocka_unit_test(test_dump_merges_extra_keys_in_order),
        cmocka_unit_test(test_getter_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

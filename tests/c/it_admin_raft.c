/*
 * it_admin_raft.c: add_raft_voter and remove_raft_voter (KIP-853)
 * against the harness's cluster: voter 1 with a directory id that is not
 * its own, added and removed, answered as the Java Admin client is
 * answered for the same calls (tools/java/admin-oracle raft). On the
 * default cluster (static controller.quorum.voters, kraft.version 0)
 * both are UNSUPPORTED_VERSION; on a dynamic quorum
 * (KN_BROKER_DYNAMIC_QUORUM=1 tools/kafka/broker start, kraft.version 1)
 * the controller itself checks them: DUPLICATE_VOTER, VOTER_NOT_FOUND.
 * Arguments Java refuses before sending (no endpoint, a directory id
 * that is no uuid) are refused here unsent. A voter really added and
 * removed: it_admin_raft_voter.c.
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static void test_raft_voters(void **state) {
    (void)state;
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(a);
    const char *dir = "AAAAAAAAAAAAAAAAAAAAAQ"; /* not voter 1's directory */
    kn_raft_voter_endpoint ep = {"CONTROLLER", "127.0.0.1", 9};
    kn_features *f = NULL;
    assert_int_equal(kn_admin_describe_features(a, TIMEOUT_MS, &f, es, sizeof es), KN_OK);
    int kraft = 0;
    for (size_t i = 0; i < kn_features_finalized_count(f); i++)
        if (!strcmp(kn_features_finalized_name(f, i), "kraft.version"))
            kraft = kn_features_finalized_max_level(f, i);
    kn_features_destroy(f);
    print_message("kraft.version %d (%s quorum)\n", kraft, kraft ? "dynamic" : "static");

    int rm = kn_admin_remove_raft_voter(a, 1, dir, NULL, TIMEOUT_MS, es, sizeof es);
    print_message("remove_raft_voter: %s (%s)\n", kn_err_name(rm), es);
    int add = kn_admin_add_raft_voter(a, 1, dir, &ep, 1, NULL, TIMEOUT_MS, es, sizeof es);
    print_message("add_raft_voter: %s (%s)\n", kn_err_name(add), es);

    char cmd[1024], line[256], want[256];
    snprintf(cmd, sizeof cmd, "%s raft %s 1 %s 127.0.0.1 9", kn_test_source_path("tools/java/admin-oracle"),
             kn_test_bootstrap(), dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    const char *names[2] = {"remove_raft_voter", "add_raft_voter"};
    int ours[2] = {rm, add};
    for (int i = 0; i < 2; i++) {
        assert_non_null(fgets(line, sizeof line, p));
        line[strcspn(line, "\n")] = '\0';
        snprintf(want, sizeof want, "%s error=%s", names[i], ours[i] ? kn_err_name(ours[i]) : "NONE");
        if (strcmp(line, want))
            fail_msg("ours: %s\n java: %s", want, line);
    }
    assert_int_equal(pclose(p), 0);
    if (kraft == 0) { /* a static quorum changes no voter */
        assert_int_equal(rm, KN_ERR_UNSUPPORTED_VERSION);
        assert_int_equal(add, KN_ERR_UNSUPPORTED_VERSION);
    } else { /* the controller checked the voter set */
        assert_int_equal(rm, KN_ERR_VOTER_NOT_FOUND);
        assert_int_equal(add, KN_ERR_DUPLICATE_VOTER);
    }

    /* Refused unsent, as Java's argument checks do. */
    assert_int_equal(kn_admin_remove_raft_voter(a, 1, "not-a-uuid", NULL, TIMEOUT_MS, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    assert_int_equal(kn_admin_add_raft_voter(a, 1, dir, &ep, 0, NULL, TIMEOUT_MS, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    kn_raft_voter_endpoint bad = {"", "127.0.0.1", 9};
    assert_int_equal(kn_admin_add_raft_voter(a, 1, dir, &bad, 1, NULL, TIMEOUT_MS, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    kn_admin_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_raft_voters)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

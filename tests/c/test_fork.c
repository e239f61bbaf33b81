/*
 * test_fork.c: clients used in a fork() child of the process that made
 * them (nginx: a client made in init_by_lua, used by a worker). Every
 * call there fails at once with KN_ERR__FORKED, and close / destroy
 * return at once without flushing, joining or taking the client's locks
 * (the network threads exist only in the parent, possibly holding those
 * locks at the fork). The child runs under alarm(): a hang kills it and
 * fails the test. The parent's clients keep working and close normally.
 * No broker: bootstrap is a closed loopback port, so the network threads
 * are busy reconnecting while the process forks.
 */
#include "kn_test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kafka_native.h"

static kn_conf *conf_for(kn_client_type type) {
    kn_conf *conf = kn_conf_new(type);
    char es[256];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", "127.0.0.1:1", es, sizeof es), KN_OK);
    if (type == KN_CLIENT_PRODUCER)
        assert_int_equal(kn_conf_set(conf, "max.block.ms", "200", es, sizeof es), KN_OK);
    return conf;
}

/* The child's checks: 0 when all held, else the number of the first that
 * failed (the exit status). */
static int child_checks(kn_producer *p, kn_consumer *c, kn_admin *a) {
    char es[512] = "";
    if (!kn_producer_forked(p) || !kn_consumer_forked(c) || !kn_admin_forked(a))
        return 1;
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = "t";
    rec.value = "v";
    rec.value_len = 1;
    if (kn_producer_send(p, &rec, es, sizeof es) != KN_ERR__FORKED || !strstr(es, "before a fork"))
        return 2;
    if (kn_producer_poll(p, 5000) != KN_ERR__FORKED || kn_producer_flush(p, -1) != KN_ERR__FORKED)
        return 3;
    if (kn_producer_outstanding(p) != 0)
        return 4;
    kn_records *recs = NULL;
    if (kn_consumer_poll(c, -1, &recs, es, sizeof es) != KN_ERR__FORKED || recs)
        return 5;
    if (kn_consumer_commit_sync(c, NULL, -1) != KN_ERR__FORKED)
        return 6;
    kn_topic_list *tl = NULL;
    es[0] = 0;
    if (kn_admin_list_topics(a, 0, 60000, &tl, es, sizeof es) != KN_ERR__FORKED || !strstr(es, "before a fork"))
        return 7;
    /* close / destroy: no flush, no join (alarm() catches a hang). */
    if (kn_producer_close(p, -1) != KN_ERR__FORKED)
        return 8;
    if (kn_consumer_close_timeout(c, -1) != KN_ERR__FORKED)
        return 9;
    kn_consumer_destroy(c);
    kn_admin_destroy(a);
    return 0;
}

static void test_clients_refuse_work_after_fork(void **state) {
    (void)state;
    char es[512];
    kn_conf *pc = conf_for(KN_CLIENT_PRODUCER), *cc = conf_for(KN_CLIENT_CONSUMER), *ac = conf_for(KN_CLIENT_ADMIN);
    kn_producer *p = kn_producer_new(pc, NULL, NULL, es, sizeof es);
    assert_non_null(p);
    kn_consumer *c = kn_consumer_new(cc, es, sizeof es);
    assert_non_null(c);
    kn_admin *a = kn_admin_new(ac, es, sizeof es);
    assert_non_null(a);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
    kn_conf_destroy(ac);
    /* The consumer's fetcher works (and reconnects) while we fork. */
    kn_topic_partition_list *tpl = kn_topic_partition_list_new();
    kn_topic_partition_list_add(tpl, "t", 0);
    assert_int_equal(kn_consumer_assign(c, tpl), KN_OK);
    kn_topic_partition_list_destroy(tpl);
    usleep(50 * 1000);
    assert_false(kn_producer_forked(p));

    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        _exit(child_checks(p, c, a));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fail_msg("the child died of signal %d (SIGALRM %d: it hung)", WTERMSIG(status), SIGALRM);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    /* The parent's clients are untouched and close normally. */
    assert_false(kn_producer_forked(p) || kn_consumer_forked(c) || kn_admin_forked(a));
    kn_records *recs = NULL;
    assert_int_equal(kn_consumer_poll(c, 0, &recs, es, sizeof es), KN_OK);
    kn_records_free(recs);
    assert_int_equal(kn_producer_close(p, 0), KN_OK);
    assert_int_equal(kn_consumer_close_timeout(c, 0), KN_OK);
    kn_consumer_destroy(c);
    kn_admin_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clients_refuse_work_after_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

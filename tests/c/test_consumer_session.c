/*
 * test_consumer_session.c: the incremental fetch session's plan
 * (core/consumer/session.c) at scale, against a brute-force model:
 * 1,200 partitions over three topics, Fetch after Fetch with a moving
 * subset of them at moving offsets (what the Fetch window and
 * read-ahead produce). Each plan must list exactly the partitions that
 * are new to the session or moved, forget exactly the ones dropped,
 * and leave the session holding exactly the wanted set. An allocation
 * failure at any point returns KN_ERR__NOMEM with the session as it
 * was, and leaks nothing (ASan build).
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/consumer_int.h"
#include "kn_alloc.h"

enum { TOPICS = 3, PER_TOPIC = 400, ALL = TOPICS * PER_TOPIC };
static const char *const topic_names[TOPICS] = {"orders", "audit", "orders-v2"};

/* The model: what the broker's session holds, -1 = absent. */
static int64_t model[ALL];

static uint32_t rnd_state = 12345;
static uint32_t rnd(void) {
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

/* A want list: a random window of partitions, in a scrambled order
 * (requests list them grouped by topic, not sorted). */
static int32_t make_want(knc_sess_part *want, int32_t *ids, int64_t *offsets) {
    int32_t n = 0;
    int32_t from = (int32_t)(rnd() % ALL), len = (int32_t)(rnd() % 300);
    if (rnd() % 8 == 0)
        len = ALL; /* sometimes everything */
    for (int32_t k = 0; k < len && k < ALL; k++) {
        int32_t id = (from + k) % ALL;
        if (rnd() % 4 == 0)
            offsets[id] += 1 + rnd() % 50; /* moved (read ahead) */
        ids[n] = id;
        want[n].topic = (char *)topic_names[id / PER_TOPIC];
        want[n].partition = id % PER_TOPIC;
        want[n].offset = offsets[id];
        n++;
    }
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(rnd() % (uint32_t)(i + 1));
        knc_sess_part t = want[i];
        want[i] = want[j];
        want[j] = t;
        int32_t u = ids[i];
        ids[i] = ids[j];
        ids[j] = u;
    }
    return n;
}

static int32_t id_of(const char *topic, int32_t partition) {
    for (int t = 0; t < TOPICS; t++)
        if (strcmp(topic, topic_names[t]) == 0)
            return t * PER_TOPIC + partition;
    fail_msg("unknown topic %s", topic);
    return -1;
}

static void check_plan(knc_session *s, bool incremental, const knc_sess_part *want, const int32_t *ids,
                       int32_t n, const bool *include, const knc_sess_part *forgot, int32_t nf) {
    static bool wanted[ALL];
    memset(wanted, 0, sizeof wanted);
    for (int32_t i = 0; i < n; i++) {
        wanted[ids[i]] = true;
        bool expect = !incremental || model[ids[i]] != want[i].offset;
        assert_int_equal(include[i], expect);
    }
    int32_t expect_nf = 0;
    for (int32_t id = 0; id < ALL; id++)
        expect_nf += incremental && model[id] >= 0 && !wanted[id];
    assert_int_equal(nf, expect_nf);
    for (int32_t i = 0; i < nf; i++) {
        int32_t id = id_of(forgot[i].topic, forgot[i].partition);
        assert_true(model[id] >= 0 && !wanted[id]);
    }
    /* the session now holds exactly want */
    for (int32_t id = 0; id < ALL; id++)
        model[id] = -1;
    for (int32_t i = 0; i < n; i++)
        model[ids[i]] = want[i].offset;
    assert_int_equal(s->count, n);
    for (int32_t i = 0; i < s->count; i++) {
        int32_t id = id_of(s->parts[i].topic, s->parts[i].partition);
        assert_int_equal(s->parts[i].offset, model[id]);
    }
}

static void test_session_scale(void **state) {
    (void)state;
    static knc_sess_part want[ALL];
    static int32_t ids[ALL];
    static int64_t offsets[ALL];
    static bool include[ALL];
    for (int32_t id = 0; id < ALL; id++)
        model[id] = -1;
    memset(offsets, 0, sizeof offsets);
    knc_session s = {0};
    bool has_session = false;
    for (int round = 0; round < 400; round++) {
        int32_t n = make_want(want, ids, offsets);
        knc_sess_part *forgot;
        int32_t nf, id, epoch;
        assert_int_equal(knc_session_plan(&s, want, n, true, include, &forgot, &nf, &id, &epoch), 0);
        if (!has_session) {
            for (int32_t i = 0; i < ALL; i++)
                model[i] = -1; /* a full fetch: the broker starts afresh */
        }
        assert_int_equal(epoch, has_session ? s.epoch : 0);
        check_plan(&s, has_session, want, ids, n, include, forgot, nf);
        knc_session_forgotten_free(forgot, nf);
        /* now and then the broker loses the session */
        int err = rnd() % 25 == 0 ? KN_ERR_FETCH_SESSION_ID_NOT_FOUND : 0;
        knc_session_answer(&s, epoch, err, 4242);
        has_session = err == 0;
    }
    knc_session_reset(&s);
}

static int alloc_countdown;
static void *fail_malloc(size_t n) { return alloc_countdown-- == 0 ? NULL : malloc(n); }
static void *fail_realloc(void *p, size_t n) { return alloc_countdown-- == 0 ? NULL : realloc(p, n); }

static void test_session_nomem(void **state) {
    (void)state;
    knc_sess_part first[4] = {{"a", 0, 10, 0}, {"a", 1, 20, 0}, {"b", 0, 30, 0}, {"b", 1, 40, 0}};
    /* a/1 moved, b/0 dropped, a/0 kept, c/5 and c/6 new, b/1 kept */
    knc_sess_part second[5] = {{"c", 5, 0, 0}, {"a", 0, 10, 0}, {"a", 1, 25, 0}, {"b", 1, 40, 0}, {"c", 6, 1, 0}};
    kn_allocator a = {fail_malloc, fail_realloc, free};
    int saw_nomem = 0;
    for (int fail_at = 0; fail_at < 40; fail_at++) {
        knc_session s = {0};
        bool inc[5];
        knc_sess_part *forgot;
        int32_t nf, id, epoch;
        assert_int_equal(knc_session_plan(&s, first, 4, true, inc, &forgot, &nf, &id, &epoch), 0);
        knc_session_answer(&s, 0, 0, 9);
        kn_set_allocator(&a);
        alloc_countdown = fail_at;
        int rc = knc_session_plan(&s, second, 5, true, inc, &forgot, &nf, &id, &epoch);
        kn_set_allocator(NULL);
        if (rc == KN_ERR__NOMEM) {
            saw_nomem++;
            /* unchanged: the same plan succeeds now, as the first time */
            assert_int_equal(s.count, 4);
            rc = knc_session_plan(&s, second, 5, true, inc, &forgot, &nf, &id, &epoch);
        }
        assert_int_equal(rc, 0);
        assert_int_equal(epoch, 1);
        assert_true(inc[0] && !inc[1] && inc[2] && !inc[3] && inc[4]);
        assert_int_equal(nf, 1);
        assert_string_equal(forgot[0].topic, "b");
        assert_int_equal(forgot[0].partition, 0);
        knc_session_forgotten_free(forgot, nf);
        assert_int_equal(s.count, 5);
        knc_session_reset(&s);
    }
    assert_true(saw_nomem >= 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_scale),
        cmocka_unit_test(test_session_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

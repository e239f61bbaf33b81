/*
 * test_assignor_unit.c: properties of the assignors that hold whatever
 * Java does: every partition goes to exactly one subscriber, balance,
 * stickiness across generations, cooperative-sticky never handing out a
 * partition another member still owns, the custom assignor hook, input
 * validation, blob edge cases (future versions, truncation, bad user
 * data); and the time for 1,000 partitions x 100 members (printed, not
 * asserted).
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "consumer/assignor/assignor.h"
#include "consumer/assignor/consumer_protocol.h"
#include "consumer/assignor/registry.h"
#include "kafka_native.h"
#include "kn_alloc.h"

static uint64_t ut_x = 0x756e697474657374ull; /* "unittest" */
static uint32_t ut_r(uint32_t n) {
    ut_x = ut_x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((ut_x >> 33) % n);
}

/* A group under construction: names and lists in fixed arrays. */
#define UT_MAXM 128
#define UT_MAXT 16
#define UT_MAXP 8192
typedef struct ut_group {
    char ids[UT_MAXM][32];
    char tnames[UT_MAXT][24];
    const char *tptr[UT_MAXT];
    const char *subs[UT_MAXM][UT_MAXT];
    kn_asg_tp owned[UT_MAXM][UT_MAXP / 8];
    uint8_t ud[UT_MAXM][UT_MAXP];
    kn_asg_member m[UT_MAXM];
    kn_asg_topic t[UT_MAXT];
    int nm, nt;
} ut_group;

static ut_group *ut_group_new(int nm, int nt, int parts_per_topic, bool equal_subs) {
    ut_group *g = calloc(1, sizeof *g);
    assert_non_null(g);
    g->nm = nm;
    g->nt = nt;
    for (int t = 0; t < nt; t++) {
        snprintf(g->tnames[t], sizeof g->tnames[t], "topic-%d", t);
        g->tptr[t] = g->tnames[t];
        g->t[t] = (kn_asg_topic){g->tnames[t], parts_per_topic ? parts_per_topic : 1 + (int)ut_r(24), NULL};
    }
    for (int i = 0; i < nm; i++) {
        snprintf(g->ids[i], sizeof g->ids[i], "member-%d-%u", i, ut_r(100000));
        kn_asg_member *m = &g->m[i];
        memset(m, 0, sizeof *m);
        m->member_id = g->ids[i];
        m->generation = -1;
        m->user_data_len = -1;
        m->topics = g->subs[i];
        for (int t = 0; t < nt; t++)
            if (equal_subs || ut_r(2) == 0)
                g->subs[i][m->topic_cnt++] = g->tnames[t];
        if (m->topic_cnt == 0)
            g->subs[i][m->topic_cnt++] = g->tnames[ut_r((uint32_t)nt)];
        m->owned = g->owned[i];
    }
    return g;
}

static kn_asg_input ut_input(const ut_group *g) { return (kn_asg_input){g->m, g->nm, g->t, g->nt}; }

static bool ut_subscribes(const kn_asg_member *m, const char *topic) {
    for (int i = 0; i < m->topic_cnt; i++)
        if (strcmp(m->topics[i], topic) == 0)
            return true;
    return false;
}

static int ut_topic(const ut_group *g, const char *name) {
    for (int t = 0; t < g->nt; t++)
        if (strcmp(g->tnames[t], name) == 0)
            return t;
    return -1;
}

/* Every partition at most once, only to subscribers; returns how many
 * partitions were assigned. */
static int ut_check_valid(const ut_group *g, const kn_asg_output *out) {
    static uint8_t seen[UT_MAXT][UT_MAXP];
    memset(seen, 0, sizeof seen);
    int n = 0;
    assert_int_equal(out->member_cnt, g->nm);
    for (int i = 0; i < g->nm; i++)
        for (int j = 0; j < out->members[i].part_cnt; j++) {
            kn_asg_tp tp = out->members[i].parts[j];
            int t = ut_topic(g, tp.topic);
            assert_true(t >= 0);
            assert_true(tp.partition >= 0 && tp.partition < g->t[t].partition_cnt);
            assert_true(ut_subscribes(&g->m[i], tp.topic));
            assert_int_equal(seen[t][tp.partition], 0);
            seen[t][tp.partition] = 1;
            n++;
        }
    return n;
}

/* Partitions of the topics someone subscribes to. */
static int ut_total(const ut_group *g) {
    int n = 0;
    for (int t = 0; t < g->nt; t++)
        for (int i = 0; i < g->nm; i++)
            if (ut_subscribes(&g->m[i], g->tnames[t])) {
                n += g->t[t].partition_cnt;
                break;
            }
    return n;
}

static void ut_spread(const kn_asg_output *out, int *min, int *max) {
    *min = 1 << 30;
    *max = 0;
    for (int i = 0; i < out->member_cnt; i++) {
        if (out->members[i].part_cnt < *min)
            *min = out->members[i].part_cnt;
        if (out->members[i].part_cnt > *max)
            *max = out->members[i].part_cnt;
    }
}

static void ut_run(const char *name, const ut_group *g, kn_asg_output *out) {
    kn_asg_input in = ut_input(g);
    char err[256] = "";
    int rc = kn_asg_run(kn_asg_builtin(name), &in, out, err, sizeof err);
    if (rc)
        fail_msg("%s: %d %s", name, rc, err);
}

static const char *const ut_names[] = {"range", "roundrobin", "sticky", "cooperative-sticky"};

static void test_valid_and_balanced(void **state) {
    for (int iter = 0; iter < 200; iter++) {
        bool equal = iter % 2 == 0;
        ut_group *g = ut_group_new(1 + (int)ut_r(10), 1 + (int)ut_r(6), 0, equal);
        for (int a = 0; a < 4; a++) {
            kn_asg_output out;
            ut_run(ut_names[a], g, &out);
            /* no owned partitions: everything subscribed gets assigned */
            assert_int_equal(ut_check_valid(g, &out), ut_total(g));
            int min, max;
            ut_spread(&out, &min, &max);
            if (equal && a > 0) /* range balances per topic only */
                assert_true(max - min <= 1);
            kn_asg_output_free(&out);
        }
        free(g);
    }
}

/* Sets member i's previous assignment from out (sticky user data for
 * eager, owned partitions for cooperative) at generation gen. */
static void ut_feed_back(ut_group *g, const kn_asg_output *out, bool coop, int32_t gen) {
    for (int i = 0; i < g->nm; i++) {
        kn_asg_member *m = &g->m[i];
        const kn_asg_assignment *a = &out->members[i];
        assert_true(a->part_cnt <= UT_MAXP / 8);
        for (int j = 0; j < a->part_cnt; j++) {
            g->owned[i][j].topic = g->tnames[ut_topic(g, a->parts[j].topic)];
            g->owned[i][j].partition = a->parts[j].partition;
        }
        if (coop) {
            m->owned_cnt = a->part_cnt;
            m->generation = gen;
            m->user_data_len = -1;
        } else {
            uint8_t *buf;
            size_t len;
            assert_int_equal(kn_cp_sticky_user_data_encode(g->owned[i], a->part_cnt, gen, &buf, &len), 0);
            assert_true(len <= sizeof g->ud[i]);
            memcpy(g->ud[i], buf, len);
            kn_free(buf);
            m->user_data = g->ud[i];
            m->user_data_len = (int32_t)len;
            m->owned_cnt = 0;
            m->generation = gen;
        }
    }
}

static bool ut_has(const kn_asg_assignment *a, const char *topic, int32_t p) {
    for (int j = 0; j < a->part_cnt; j++)
        if (a->parts[j].partition == p && strcmp(a->parts[j].topic, topic) == 0)
            return true;
    return false;
}

static void test_sticky_across_generations(void **state) {
    for (int coop = 0; coop < 2; coop++)
        for (int iter = 0; iter < 50; iter++) {
            ut_group *g = ut_group_new(3 + (int)ut_r(6), 1 + (int)ut_r(4), 0, true);
            const char *name = coop ? "cooperative-sticky" : "sticky";
            kn_asg_output first;
            ut_run(name, g, &first);
            ut_feed_back(g, &first, coop, 1);
            /* the last member leaves: everyone else keeps what it had */
            g->nm--;
            kn_asg_output second;
            ut_run(name, g, &second);
            for (int i = 0; i < g->nm; i++)
                for (int j = 0; j < first.members[i].part_cnt; j++)
                    assert_true(ut_has(&second.members[i], first.members[i].parts[j].topic,
                                       first.members[i].parts[j].partition));
            assert_int_equal(ut_check_valid(g, &second), ut_total(g));
            int min, max;
            ut_spread(&second, &min, &max);
            assert_true(max - min <= 1);
            kn_asg_output_free(&first);
            kn_asg_output_free(&second);
            free(g);
        }
}

static void test_cooperative_never_steals(void **state) {
    int withheld_total = 0;
    for (int iter = 0; iter < 300; iter++) {
        ut_group *g = ut_group_new(2 + (int)ut_r(8), 1 + (int)ut_r(5), 0, iter % 3 == 0);
        /* random previous owners, one per partition, same generation */
        for (int t = 0; t < g->nt; t++)
            for (int p = 0; p < g->t[t].partition_cnt; p++) {
                if (ut_r(4) == 0)
                    continue;
                int i = (int)ut_r((uint32_t)g->nm);
                g->owned[i][g->m[i].owned_cnt++] = (kn_asg_tp){g->tnames[t], p};
            }
        for (int i = 0; i < g->nm; i++)
            g->m[i].generation = 4;
        kn_asg_output out;
        ut_run("cooperative-sticky", g, &out);
        int assigned = ut_check_valid(g, &out);
        for (int i = 0; i < g->nm; i++)
            for (int j = 0; j < out.members[i].part_cnt; j++) {
                kn_asg_tp tp = out.members[i].parts[j];
                for (int k = 0; k < g->nm; k++) {
                    if (k == i)
                        continue;
                    for (int o = 0; o < g->m[k].owned_cnt; o++)
                        if (g->owned[k][o].partition == tp.partition &&
                            strcmp(g->owned[k][o].topic, tp.topic) == 0)
                            fail_msg("iteration %d: %s:%d given to %s while %s owns it", iter, tp.topic,
                                     (int)tp.partition, g->ids[i], g->ids[k]);
                }
            }
        withheld_total += ut_total(g) - assigned;
        /* follow-up rebalances: what was withheld is unowned now and gets
         * assigned; a round may start other moves, so it converges within
         * a few rounds (bounded) */
        static uint8_t was[UT_MAXT][UT_MAXP];
        memset(was, 0, sizeof was);
        for (int i = 0; i < g->nm; i++)
            for (int j = 0; j < out.members[i].part_cnt; j++)
                was[ut_topic(g, out.members[i].parts[j].topic)][out.members[i].parts[j].partition] = 1;
        int rounds = 0, total = ut_total(g);
        kn_asg_output cur = out;
        for (;;) {
            ut_feed_back(g, &cur, true, 5 + rounds);
            kn_asg_output follow;
            ut_run("cooperative-sticky", g, &follow);
            int n = ut_check_valid(g, &follow);
            if (rounds == 0)
                for (int t = 0; t < g->nt; t++)
                    for (int p = 0; p < g->t[t].partition_cnt; p++) {
                        bool owned_by_someone = false;
                        for (int i = 0; i < g->nm && !owned_by_someone; i++)
                            owned_by_someone = ut_has(&follow.members[i], g->tnames[t], p);
                        bool subscribed = false;
                        for (int i = 0; i < g->nm && !subscribed; i++)
                            subscribed = ut_subscribes(&g->m[i], g->tnames[t]);
                        if (subscribed && !was[t][p])
                            assert_true(owned_by_someone);
                    }
            kn_asg_output_free(&cur);
            cur = follow;
            rounds++;
            if (n == total)
                break;
            assert_true(rounds < 10);
        }
        kn_asg_output_free(&cur);
        free(g);
    }
    assert_true(withheld_total > 0); /* the property was actually exercised */
}

/* ---- custom assignor hook ---- */

typedef struct ut_custom {
    int calls;
} ut_custom;

/* Gives every partition of every subscribed topic in the view to the
 * first member subscribing to it. */
static int ut_custom_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                            size_t errstr_size) {
    ut_custom *c = asg->opaque;
    c->calls++;
    for (int t = 0; t < in->topic_cnt; t++)
        for (int i = 0; i < in->member_cnt; i++)
            if (ut_subscribes(&in->members[i], in->topics[t].name)) {
                for (int p = 0; p < in->topics[t].partition_cnt; p++)
                    if (kn_asg_output_add(out, i, in->topics[t].name, p))
                        return KN_ERR__NOMEM;
                break;
            }
    static const uint8_t ud[] = {1, 2, 3};
    return kn_asg_output_set_user_data(out, 0, ud, 3);
}

static void test_custom_assignor(void **state) {
    kn_asg_list *l = kn_asg_list_new();
    assert_non_null(l);
    char err[256];
    ut_custom c = {0};
    assert_int_equal(kn_asg_list_add_builtin(l, "cooperative-sticky", err, sizeof err), 0);
    assert_int_equal(
        kn_asg_list_add_custom(l, "first-wins", KN_ASG_EAGER, ut_custom_assign, &c, err, sizeof err), 0);
    assert_int_equal(kn_asg_list_add_builtin(l, "nope", err, sizeof err), KN_ERR__INVALID_ARG);
    assert_non_null(strstr(err, "nope"));
    assert_int_equal(kn_asg_list_add_builtin(l, "cooperative-sticky", err, sizeof err), KN_ERR__INVALID_ARG);
    assert_int_equal(
        kn_asg_list_add_custom(l, "first-wins", KN_ASG_EAGER, ut_custom_assign, &c, err, sizeof err),
        KN_ERR__INVALID_ARG);
    assert_int_equal(kn_asg_list_add_custom(l, "x", 0, ut_custom_assign, &c, err, sizeof err),
                     KN_ERR__INVALID_ARG);
    assert_int_equal(kn_asg_list_count(l), 2);
    assert_string_equal(kn_asg_list_at(l, 0)->name, "cooperative-sticky");
    assert_int_equal(kn_asg_list_at(l, 0)->protocols, KN_ASG_EAGER | KN_ASG_COOPERATIVE);
    assert_null(kn_asg_list_at(l, 2));
    const kn_assignor *a = kn_asg_list_find(l, "first-wins");
    assert_non_null(a);
    assert_null(kn_asg_list_find(l, "range"));

    ut_group *g = ut_group_new(3, 3, 4, true);
    kn_asg_input in = ut_input(g);
    kn_asg_output out;
    assert_int_equal(kn_asg_run(a, &in, &out, err, sizeof err), 0);
    assert_int_equal(c.calls, 1);
    assert_int_equal(out.members[0].part_cnt, 12);
    assert_int_equal(out.members[1].part_cnt, 0);
    assert_int_equal(out.members[0].user_data_len, 3);
    assert_int_equal(out.members[1].user_data_len, -1);
    kn_asg_output_free(&out);
    kn_asg_output_free(&out); /* idempotent */
    free(g);
    kn_asg_list_destroy(l);
}

static void test_invalid_input(void **state) {
    ut_group *g = ut_group_new(3, 2, 4, true);
    char err[256];
    kn_asg_output out;
    strcpy(g->ids[2], g->ids[0]);
    kn_asg_input in = ut_input(g);
    assert_int_equal(kn_asg_run(kn_asg_builtin("range"), &in, &out, err, sizeof err), KN_ERR__INVALID_ARG);
    assert_non_null(strstr(err, "duplicate member id"));
    assert_null(out.members);
    g->m[2].member_id = NULL;
    assert_int_equal(kn_asg_run(kn_asg_builtin("sticky"), &in, &out, err, sizeof err), KN_ERR__INVALID_ARG);
    g->m[2].member_id = "other";
    g->t[1].name = g->t[0].name;
    assert_int_equal(kn_asg_run(kn_asg_builtin("roundrobin"), &in, &out, err, sizeof err),
                     KN_ERR__INVALID_ARG);
    assert_non_null(strstr(err, "duplicate topic"));
    g->t[1].name = g->tnames[1];
    /* empty group and topics without metadata are fine */
    in.member_cnt = 0;
    for (int a = 0; a < 4; a++) {
        assert_int_equal(kn_asg_run(kn_asg_builtin(ut_names[a]), &in, &out, err, sizeof err), 0);
        kn_asg_output_free(&out);
    }
    in.member_cnt = 3;
    in.topic_cnt = 0;
    for (int a = 0; a < 4; a++) {
        assert_int_equal(kn_asg_run(kn_asg_builtin(ut_names[a]), &in, &out, err, sizeof err), 0);
        for (int i = 0; i < 3; i++)
            assert_int_equal(out.members[i].part_cnt, 0);
        kn_asg_output_free(&out);
    }
    assert_null(kn_asg_builtin("Range"));
    assert_int_equal(kn_asg_run(NULL, &in, &out, err, sizeof err), KN_ERR__INVALID_ARG);
    assert_null(out.members);
    free(g);
}

/* ---- blobs ---- */

static void test_blob_edges(void **state) {
    const char *topics[] = {"b", "a"};
    kn_asg_tp owned[] = {{"b", 2}, {"a", 1}, {"b", 0}};
    kn_asg_member m = {.topics = topics,
                       .topic_cnt = 2,
                       .owned = owned,
                       .owned_cnt = 3,
                       .generation = 7,
                       .rack = "rack-1",
                       .user_data = (const uint8_t *)"xy",
                       .user_data_len = 2};
    uint8_t *buf;
    size_t len;
    assert_int_equal(kn_cp_subscription_encode(&m, 3, &buf, &len), 0);
    /* a future version with a field appended still reads as v3 */
    uint8_t *fut = malloc(len + 5);
    memcpy(fut, buf, len);
    fut[0] = 0;
    fut[1] = 9;
    memcpy(fut + len, "\x00\x00\x00\x01\x02", 5);
    kn_arena a;
    kn_arena_init(&a, 1024);
    kn_asg_member d;
    int16_t v;
    char err[256];
    assert_int_equal(kn_cp_subscription_decode(fut, len + 5, &a, &d, &v, err, sizeof err), 0);
    assert_int_equal(v, 9);
    assert_int_equal(d.topic_cnt, 2);
    assert_string_equal(d.topics[0], "a");
    assert_int_equal(d.owned_cnt, 3);
    assert_string_equal(d.owned[0].topic, "a");
    assert_int_equal(d.owned[2].partition, 2);
    assert_int_equal(d.generation, 7);
    assert_string_equal(d.rack, "rack-1");
    assert_int_equal(d.user_data_len, 2);
    /* every truncation fails cleanly and names the offset */
    for (size_t cut = 0; cut < len; cut++) {
        int rc = kn_cp_subscription_decode(buf, cut, &a, &d, &v, err, sizeof err);
        if (cut < len)
            assert_int_equal(rc, KN_ERR__PROTOCOL);
    }
    assert_non_null(strstr(err, "byte"));
    fut[0] = 0xff; /* negative version */
    assert_int_equal(kn_cp_subscription_decode(fut, len + 5, &a, &d, &v, err, sizeof err),
                     KN_ERR__UNSUPPORTED_VERSION);
    assert_int_equal(kn_cp_subscription_encode(&m, -1, &buf, &len), KN_ERR__INVALID_ARG);
    kn_free(buf);
    free(fut);

    /* assignment: empty, null user data; truncation */
    assert_int_equal(kn_cp_assignment_encode(NULL, 0, NULL, -1, 3, &buf, &len), 0);
    kn_asg_tp *parts;
    int32_t n, udl;
    const uint8_t *ud;
    assert_int_equal(kn_cp_assignment_decode(buf, len, &a, &parts, &n, &ud, &udl, &v, err, sizeof err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(udl, -1);
    assert_int_equal(kn_cp_assignment_decode(buf, len - 1, &a, &parts, &n, &ud, &udl, &v, err, sizeof err),
                     KN_ERR__PROTOCOL);
    kn_free(buf);

    /* sticky user data: Java's fallbacks */
    bool has;
    int32_t gen;
    assert_int_equal(kn_cp_sticky_user_data_decode(NULL, -1, &a, &parts, &n, &has, &gen), 0);
    assert_false(has);
    static const uint8_t garbage[] = {0x00, 0x00, 0x00, 0x05, 0x01};
    assert_int_equal(kn_cp_sticky_user_data_decode(garbage, 5, &a, &parts, &n, &has, &gen), 0);
    assert_true(has);
    assert_int_equal(gen, -1);
    assert_int_equal(n, 0);
    /* v0 (no generation): partitions, no generation */
    static const uint8_t v0[] = {0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};
    assert_int_equal(kn_cp_sticky_user_data_decode(v0, sizeof v0, &a, &parts, &n, &has, &gen), 0);
    assert_false(has);
    assert_int_equal(n, 2);
    assert_string_equal(parts[1].topic, "t");
    assert_int_equal(parts[1].partition, 4);
    uint8_t c4[4];
    kn_cp_coop_user_data_encode(12, c4);
    kn_cp_coop_user_data_decode(c4, 4, &has, &gen);
    assert_true(has);
    assert_int_equal(gen, 12);
    kn_cp_coop_user_data_decode(c4, 2, &has, &gen);
    assert_true(has);
    assert_int_equal(gen, -1);
    kn_cp_coop_user_data_decode(NULL, -1, &has, &gen);
    assert_false(has);
    kn_arena_destroy(&a);
}

/* ---- performance (printed) ---- */

static void test_perf_1000x100(void **state) {
    for (int equal = 1; equal >= 0; equal--) {
        ut_group *g = ut_group_new(100, 10, 100, equal);
        for (int a = 0; a < 4; a++) {
            kn_asg_output out, again;
            int64_t t0 = kn_test_now_ms();
            ut_run(ut_names[a], g, &out);
            int64_t t1 = kn_test_now_ms();
            int n = ut_check_valid(g, &out);
            /* a second generation with everything owned */
            bool coop = a == 3;
            kn_asg_member saved[UT_MAXM];
            memcpy(saved, g->m, sizeof saved);
            if (a >= 2)
                ut_feed_back(g, &out, coop, 1);
            int64_t t2 = kn_test_now_ms();
            ut_run(ut_names[a], g, &again);
            int64_t t3 = kn_test_now_ms();
            memcpy(g->m, saved, sizeof saved);
            print_message("%-18s 1000 partitions x 100 members (%s subscriptions): %lld ms, again %lld ms "
                          "(%d assigned)\n",
                          ut_names[a], equal ? "equal" : "mixed", (long long)(t1 - t0), (long long)(t3 - t2),
                          n);
            kn_asg_output_free(&out);
            kn_asg_output_free(&again);
        }
        free(g);
    }
}

/* The sticky general builder's worst case: mixed subscriptions and one
 * member owning everything, so nearly every partition has to move. */
static void test_perf_skewed(void **state) {
    ut_group *g = ut_group_new(100, 10, 100, false);
    for (int t = 0; t < g->nt; t++)
        g->subs[0][t] = g->tnames[t];
    g->m[0].topic_cnt = g->nt;
    int k = 0;
    for (int t = 0; t < g->nt; t++)
        for (int p = 0; p < 100 && k < UT_MAXP / 8; p++)
            g->owned[0][k++] = (kn_asg_tp){g->tnames[t], p};
    for (int coop = 0; coop < 2; coop++) {
        for (int i = 0; i < g->nm; i++)
            g->m[i].generation = 1;
        g->m[0].owned_cnt = k;
        uint8_t *buf;
        size_t len;
        assert_int_equal(kn_cp_sticky_user_data_encode(g->owned[0], k, 1, &buf, &len), 0);
        memcpy(g->ud[0], buf, len);
        kn_free(buf);
        if (!coop) {
            g->m[0].user_data = g->ud[0];
            g->m[0].user_data_len = (int32_t)len;
            g->m[0].owned_cnt = 0;
        }
        const char *name = coop ? "cooperative-sticky" : "sticky";
        kn_asg_output out;
        int64_t t0 = kn_test_now_ms();
        ut_run(name, g, &out);
        int64_t t1 = kn_test_now_ms();
        int n = ut_check_valid(g, &out);
        int min, max;
        ut_spread(&out, &min, &max);
        print_message(
            "%-18s 1000 partitions x 100 members, one member owned all (%d in the sticky user data / owned): "
            "%lld ms (%d assigned, %d..%d per member)\n",
            name, k, (long long)(t1 - t0), n, min, max);
        kn_asg_output_free(&out);
        g->m[0].user_data = NULL;
        g->m[0].user_data_len = -1;
    }
    free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_and_balanced),
        cmocka_unit_test(test_sticky_across_generations),
        cmocka_unit_test(test_cooperative_never_steals),
        cmocka_unit_test(test_custom_assignor),
        cmocka_unit_test(test_invalid_input),
        cmocka_unit_test(test_blob_edges),
        cmocka_unit_test(test_perf_1000x100),
        cmocka_unit_test(test_perf_skewed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

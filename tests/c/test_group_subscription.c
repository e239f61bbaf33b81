/*
 * test_group_subscription.c: the group subscription module
 * (core/consumer/group/subscription.c) on hand-built metadata snapshots:
 * topic sets (sorted, deduplicated), whole-name pattern matching like
 * Java's matches(), internal topics under exclude.internal.topics, only
 * all-topics snapshots re-matched, partition count change detection
 * (a missing topic counts as 0 partitions), and metadata readiness.
 * Also kng_set_member_id's contract under allocation failure (issue #14
 * item 10): a new id that cannot be stored is an error the caller sees,
 * and forgetting the id never fails.
 */
#include "kn_test.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/group/group.h"
#include "kn_alloc.h"

/* A snapshot with topics (sorted by name as the wire layer keeps them). */
static knw_metadata *md_new(bool all, const char *const *names, const int32_t *counts, const bool *internal,
                            int n) {
    knw_metadata *md = calloc(1, sizeof *md);
    md->all_topics = all;
    md->topics = calloc((size_t)n, sizeof *md->topics);
    md->topic_count = n;
    for (int i = 0; i < n; i++) {
        md->topics[i].name = (char *)names[i];
        md->topics[i].partition_count = counts[i];
        md->topics[i].is_internal = internal && internal[i];
    }
    return md;
}

static void md_free(knw_metadata *md) {
    free(md->topics);
    free(md);
}

static kng_group *group_new(const char *pattern) {
    kng_group *g = kn_calloc(1, sizeof *g);
    g->exclude_internal = true;
    if (pattern) {
        char re[256];
        snprintf(re, sizeof re, "^(%s)$", pattern);
        assert_int_equal(regcomp(&g->re, re, REG_EXTENDED | REG_NOSUB), 0);
        g->has_pattern = true;
        g->pattern = kn_strdup(pattern);
    }
    return g;
}

static void group_free(kng_group *g) {
    kng_subscription_clear(g);
    kn_free(g);
}

static void test_topics_sorted_dedup(void **state) {
    (void)state;
    kng_group *g = group_new(NULL);
    const char *t[] = {"b", "a", "c", "a"};
    assert_int_equal(kng_set_topics(g, t, 4), 0);
    assert_int_equal(g->topic_cnt, 3);
    assert_string_equal(g->topics[0], "a");
    assert_string_equal(g->topics[1], "b");
    assert_string_equal(g->topics[2], "c");
    assert_true(kng_subscribed_to(g, "b"));
    assert_false(kng_subscribed_to(g, "d"));
    group_free(g);
}

static void test_pattern_whole_name(void **state) {
    (void)state;
    kng_group *g = group_new("orders-[0-9]+");
    const char *names[] = {"__consumer_offsets", "orders-1", "orders-12", "orders-1x", "xorders-1"};
    int32_t counts[] = {50, 3, 2, 1, 1};
    bool internal[] = {true, false, false, false, false};
    knw_metadata *partial = md_new(false, names, counts, internal, 5);
    assert_false(kng_match_pattern(g, partial)); /* not an all-topics snapshot */
    assert_int_equal(g->topic_cnt, 0);
    knw_metadata *md = md_new(true, names, counts, internal, 5);
    assert_true(kng_match_pattern(g, md));
    assert_int_equal(g->topic_cnt, 2);
    assert_string_equal(g->topics[0], "orders-1");
    assert_string_equal(g->topics[1], "orders-12");
    assert_false(kng_match_pattern(g, md)); /* unchanged */
    md_free(partial);
    md_free(md);
    group_free(g);
}

static void test_pattern_internal(void **state) {
    (void)state;
    kng_group *g = group_new("__.*");
    const char *names[] = {"__consumer_offsets", "__mine"};
    int32_t counts[] = {50, 1};
    bool internal[] = {true, false};
    knw_metadata *md = md_new(true, names, counts, internal, 2);
    assert_true(kng_match_pattern(g, md));
    assert_int_equal(g->topic_cnt, 1);
    assert_string_equal(g->topics[0], "__mine");
    g->exclude_internal = false;
    assert_true(kng_match_pattern(g, md));
    assert_int_equal(g->topic_cnt, 2);
    md_free(md);
    group_free(g);
}

static void test_counts_changed(void **state) {
    (void)state;
    kng_group *g = group_new(NULL);
    const char *names[] = {"a", "b"};
    int32_t counts[] = {3, 4};
    knw_metadata *md = md_new(false, names, counts, NULL, 2);
    const char *assigned[] = {"a", "b", "c"};
    kng_remember_counts(g, md, assigned, 3);
    assert_false(kng_counts_changed(g, md));
    int32_t more[] = {3, 6};
    knw_metadata *md2 = md_new(false, names, more, NULL, 2);
    assert_true(kng_counts_changed(g, md2));
    /* "c" was missing (0 partitions): its appearance is a change */
    const char *names3[] = {"a", "b", "c"};
    int32_t counts3[] = {3, 4, 1};
    knw_metadata *md3 = md_new(false, names3, counts3, NULL, 3);
    assert_true(kng_counts_changed(g, md3));
    md_free(md);
    md_free(md2);
    md_free(md3);
    group_free(g);
}

static void test_metadata_ready(void **state) {
    (void)state;
    kng_group *g = group_new(NULL);
    const char *t[] = {"a", "b"};
    assert_int_equal(kng_set_topics(g, t, 2), 0);
    const char *names[] = {"a"};
    int32_t counts[] = {1};
    knw_metadata *md = md_new(false, names, counts, NULL, 1);
    assert_false(kng_metadata_ready(g, md));
    assert_false(kng_metadata_ready(g, NULL));
    const char *names2[] = {"a", "b"};
    int32_t counts2[] = {1, 2};
    knw_metadata *md2 = md_new(false, names2, counts2, NULL, 2);
    assert_true(kng_metadata_ready(g, md2));
    md_free(md);
    md_free(md2);
    group_free(g);
}

static int fail_next;
static void *fail_malloc(size_t n) { return fail_next ? NULL : malloc(n); }
static void *fail_realloc(void *q, size_t n) { return fail_next ? NULL : realloc(q, n); }

static void test_member_id_nomem(void **state) {
    (void)state;
    kng_group *g = group_new(NULL);
    kn_consumer c; /* only the group and the published identity are used */
    memset(&c, 0, sizeof c);
    c.grp = g;
    assert_int_equal(kng_set_member_id(&c, "old-id", 6), 0);
    kn_allocator a = {fail_malloc, fail_realloc, free};
    fail_next = 1;
    kn_set_allocator(&a);
    int rc_set = kng_set_member_id(&c, "new-member-id", 13);
    int rc_clear_kept = strcmp(g->member_id, "old-id");
    int rc_clear = kng_set_member_id(&c, NULL, 0); /* a fenced member forgets */
    kn_set_allocator(NULL);
    fail_next = 0;
    assert_int_equal(rc_set, KN_ERR__NOMEM);
    assert_int_equal(rc_clear_kept, 0);
    assert_int_equal(rc_clear, 0);
    assert_string_equal(g->member_id, "");
    kn_free(g->member_id);
    group_free(g);
}

/* offsets.c reads only c->member: every identity change republishes
 * it, and a member outside a generation (or an unjoined KIP-848 one)
 * publishes generation -1 and no ids (issue #14). */
static void test_identity_published(void **state) {
    (void)state;
    kng_group *g = group_new(NULL);
    kn_consumer c;
    memset(&c, 0, sizeof c);
    c.grp = g;
    g->generation = -1;
    g->instance_id = "static-1";
    assert_int_equal(kng_set_member_id(&c, "m-1", 3), 0);
    assert_int_equal(c.member.epoch, -1); /* IDLE: not a member */
    assert_string_equal(c.member.member_id, "");
    assert_false(c.member.subscribed);
    kng_set_state(&c, KNG_STABLE);
    assert_true(c.member.subscribed);
    assert_int_equal(c.member.epoch, -1); /* no generation yet */
    kng_set_generation(&c, 7);
    assert_int_equal(c.member.epoch, 7);
    assert_string_equal(c.member.member_id, "m-1");
    assert_string_equal(c.member.instance_id, "static-1");
    assert_false(c.member.identity_at_send); /* classic: taken when queued */
    assert_int_equal(kng_set_member_id(&c, "m-2", 3), 0);
    assert_string_equal(c.member.member_id, "m-2");
    kng_set_member_id(&c, NULL, 0); /* fenced */
    assert_string_equal(c.member.member_id, "");
    kng_set_generation(&c, -1);
    assert_int_equal(c.member.epoch, -1);
    assert_null(c.member.instance_id);
    g->consumer_protocol = true; /* KIP-848: unjoined publishes no epoch */
    assert_int_equal(kng_set_member_id(&c, "m-3", 3), 0);
    kng_set_generation(&c, 0);
    assert_int_equal(c.member.epoch, -1);
    assert_true(c.member.identity_at_send);
    g->joined = true;
    kng_set_generation(&c, 4);
    assert_int_equal(c.member.epoch, 4);
    kng_set_state(&c, KNG_IDLE);
    assert_int_equal(c.member.epoch, -1);
    assert_false(c.member.subscribed);
    g->instance_id = NULL;
    kn_free(g->member_id);
    group_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topics_sorted_dedup), cmocka_unit_test(test_pattern_whole_name),
        cmocka_unit_test(test_pattern_internal),    cmocka_unit_test(test_counts_changed),
        cmocka_unit_test(test_metadata_ready),
        cmocka_unit_test(test_member_id_nomem),
        cmocka_unit_test(test_identity_published),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

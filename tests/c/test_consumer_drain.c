/*
 * test_consumer_drain.c: the consumer pieces that need no broker: the
 * topic-partition list, the per-partition position state machine, the
 * Fetch error policy, and draining buffered fetch data into kn_records
 * (lazy per-batch decode across polls, every codec, offsets below the
 * position, control batches, read_committed filtering, a corrupt batch
 * as a partition error, a partial trailing batch, records outliving
 * the buffer they came from).
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "consumer/consumer_int.h"
#include "kn_alloc.h"

#define B(s) ((kn_bytes){(const uint8_t *)(s), (int32_t)strlen(s)})
#define NULLB ((kn_bytes){NULL, -1})

static const knc_drain_opts opts_plain = {true, false, (size_t)16 << 20};
static const knc_drain_opts opts_rc = {true, true, (size_t)16 << 20};

/* Appends a batch at base with count records "v<offset>" (key "k<offset>",
 * except: offset % 5 == 0 has a null key, % 7 == 0 an empty value). */
static void add_batch(kn_wr *blob, int64_t base, int count, int codec, int64_t pid,
                      bool transactional) {
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    conf.codec = codec;
    conf.partition_leader_epoch = 3;
    if (transactional) {
        conf.transactional = true;
        conf.producer_id = pid;
        conf.producer_epoch = 0;
        conf.base_sequence = 0;
    }
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    for (int i = 0; i < count; i++) {
        char k[32], v[32];
        int64_t off = base + i;
        snprintf(k, sizeof k, "k%lld", (long long)off);
        snprintf(v, sizeof v, "v%lld", (long long)off);
        kn_bytes key = off % 5 == 0 ? NULLB : B(k);
        kn_bytes val = off % 7 == 0 ? (kn_bytes){(const uint8_t *)"", 0} : B(v);
        kn_rb_kv h = {{"h", 1}, B(v)};
        assert_int_equal(kn_rb_builder_append(&b, i, 1000 + off, key, val, &h, 1), 0);
    }
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, blob, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

/* A control batch (one marker) at offset base for producer pid. */
static void add_marker(kn_wr *blob, int64_t base, int64_t pid, int type) {
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    conf.control = true;
    conf.transactional = true;
    conf.producer_id = pid;
    conf.producer_epoch = 0;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    uint8_t key[4] = {0, 0, 0, (uint8_t)type};
    uint8_t val[6] = {0, 0, 0, 0, 0, 0};
    assert_int_equal(kn_rb_builder_append(&b, 0, 1, (kn_bytes){key, 4}, (kn_bytes){val, 6}, NULL, 0),
                     0);
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, blob, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

/* Hands blob to p as its buffered fetch (the blob's memory moves into a
 * knc_buf). */
static void buffer_blob(knc_part *p, kn_wr *blob, const knc_aborted *ab, int nab) {
    size_t len;
    uint8_t *mem = kn_wr_detach(blob, &len);
    knc_buf *buf = knc_buf_from_mem(mem);
    assert_non_null(buf);
    p->fetched = knc_fetched_new(buf, mem, len, p->position, ab, nab);
    assert_non_null(p->fetched);
    knc_buf_release(buf);
}

/* Like buffer_blob, for the read-ahead slot: the slice fetched at
 * fetch_offset while p->fetched is still draining. */
static void buffer_ahead(knc_part *p, kn_wr *blob, int64_t fetch_offset) {
    size_t len;
    uint8_t *mem = kn_wr_detach(blob, &len);
    knc_buf *buf = knc_buf_from_mem(mem);
    assert_non_null(buf);
    assert_null(p->ahead);
    p->ahead = knc_fetched_new(buf, mem, len, fetch_offset, NULL, 0);
    assert_non_null(p->ahead);
    knc_buf_release(buf);
}

static void check_record(const kn_records *r, size_t i, int64_t off) {
    char k[32], v[32];
    size_t len;
    snprintf(k, sizeof k, "k%lld", (long long)off);
    snprintf(v, sizeof v, "v%lld", (long long)off);
    assert_int_equal(kn_records_offset(r, i), off);
    assert_string_equal(kn_records_topic(r, i), "t");
    assert_int_equal(kn_records_partition(r, i), 4);
    assert_int_equal(kn_records_timestamp(r, i), 1000 + off);
    assert_int_equal(kn_records_timestamp_type(r, i), KN_TIMESTAMP_CREATE_TIME);
    assert_int_equal(kn_records_leader_epoch(r, i), 3);
    const void *key = kn_records_key(r, i, &len);
    if (off % 5 == 0) {
        assert_null(key);
    } else {
        assert_non_null(key);
        assert_int_equal(len, strlen(k));
        assert_memory_equal(key, k, len);
    }
    const void *val = kn_records_value(r, i, &len);
    assert_non_null(val);
    if (off % 7 == 0) {
        assert_int_equal(len, 0);
    } else {
        assert_int_equal(len, strlen(v));
        assert_memory_equal(val, v, len);
    }
    assert_int_equal(kn_records_header_count(r, i), 1);
    const char *hk;
    const void *hv;
    size_t hkl, hvl;
    assert_int_equal(kn_records_header(r, i, 0, &hk, &hkl, &hv, &hvl), KN_OK);
    assert_int_equal(hkl, 1);
    assert_memory_equal(hk, "h", 1);
    assert_int_equal(hvl, strlen(v));
    assert_memory_equal(hv, v, hvl);
    assert_int_equal(kn_records_header(r, i, 1, &hk, &hkl, &hv, &hvl), KN_ERR__INVALID_ARG);
}

static void test_tplist(void **state) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    assert_int_equal(kn_topic_partition_list_add(l, "a", 0), 0);
    assert_int_equal(kn_topic_partition_list_add(l, "b", 3), 1);
    assert_int_equal(kn_topic_partition_list_add(l, "", 3), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_topic_partition_list_add(l, "a", -1), KN_ERR__INVALID_ARG);
    for (int i = 0; i < 20; i++)
        assert_int_equal(kn_topic_partition_list_add(l, "c", i), 2 + i);
    assert_int_equal(kn_topic_partition_list_count(l), 22);
    assert_int_equal(kn_topic_partition_list_find(l, "b", 3), 1);
    assert_int_equal(kn_topic_partition_list_find(l, "b", 4), -1);
    assert_int_equal(kn_topic_partition_list_offset(l, 1), KN_OFFSET_INVALID);
    assert_int_equal(kn_topic_partition_list_leader_epoch(l, 1), -1);
    kn_topic_partition_list_set_offset(l, 1, 77);
    kn_topic_partition_list_set_leader_epoch(l, 1, 5);
    assert_int_equal(kn_topic_partition_list_set_metadata(l, 1, "meta"), KN_OK);
    kn_topic_partition_list_set_err(l, 1, KN_ERR__TIMED_OUT);
    kn_topic_partition_list *c = kn_topic_partition_list_copy(l);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_topic_partition_list_count(c), 22);
    assert_string_equal(kn_topic_partition_list_topic(c, 1), "b");
    assert_int_equal(kn_topic_partition_list_partition(c, 1), 3);
    assert_int_equal(kn_topic_partition_list_offset(c, 1), 77);
    assert_int_equal(kn_topic_partition_list_leader_epoch(c, 1), 5);
    assert_string_equal(kn_topic_partition_list_metadata(c, 1), "meta");
    assert_null(kn_topic_partition_list_metadata(c, 0));
    assert_int_equal(kn_topic_partition_list_err(c, 1), KN_ERR__TIMED_OUT);
    assert_int_equal(kn_topic_partition_list_set_metadata(c, 1, NULL), KN_OK);
    assert_null(kn_topic_partition_list_metadata(c, 1));
    kn_topic_partition_list_destroy(c);
}

static void test_state_machine(void **state) {
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    assert_int_equal(p->state, KNC_POS_NEED_RESET);
    assert_true(knc_part_wants_reset(p, 0));
    assert_false(knc_part_fetchable(p));
    /* The fetcher sends ListOffsets for generation g. */
    uint32_t g = p->gen;
    p->state = KNC_POS_RESETTING;
    p->reset_inflight = true;
    /* An answer for another generation is ignored. */
    assert_false(knc_part_reset_done(p, g + 1, 10, 2));
    assert_true(knc_part_reset_done(p, g, 10, 2));
    p->reset_inflight = false;
    assert_int_equal(p->state, KNC_POS_VALID);
    assert_int_equal(p->position, 10);
    assert_true(knc_part_fetchable(p));
    p->paused = true;
    assert_false(knc_part_fetchable(p));
    p->paused = false;
    /* Seek bumps the generation and drops buffered data. */
    kn_wr blob;
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 10, 3, KN_CODEC_NONE, 0, false);
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    /* Still fetchable: the read-ahead starts where the buffer ends. */
    assert_true(knc_part_fetchable(p));
    assert_int_equal(knc_part_fetch_offset(p), 13);
    assert_int_equal(p->position, 10);
    g = p->gen;
    knc_part_seek(p, 42, -1);
    assert_null(p->fetched);
    assert_int_not_equal(p->gen, g);
    assert_int_equal(p->position, 42);
    /* A failure is pending once, and a seek clears it. */
    knc_part_fail(p, KN_ERR__BAD_BATCH, "bad at %d", 42);
    assert_int_equal(p->state, KNC_POS_FAILED);
    assert_true(p->err_pending);
    assert_string_equal(p->errstr, "bad at 42");
    knc_part_seek(p, 43, -1);
    assert_false(p->err_pending);
    assert_int_equal(p->state, KNC_POS_VALID);
    /* Reset with none: an immediate, clear error. */
    knc_part_reset(p, KNC_RESET_NONE);
    assert_int_equal(p->state, KNC_POS_FAILED);
    assert_int_equal(p->err, KN_ERR__NO_OFFSET);
    assert_non_null(strstr(p->errstr, "t [4]"));
    knc_part_reset(p, KNC_RESET_LATEST);
    assert_int_equal(p->state, KNC_POS_NEED_RESET);
    assert_int_equal(p->reset, KNC_RESET_LATEST);
    knc_part_free(p);
}

/* auto.offset.reset=by_duration:<ISO-8601> (KIP-1106) in ms. */
static void test_duration(void **state) {
    int64_t ms = -1;
    assert_int_equal(knc_parse_duration_ms("PT1H", &ms), 0);
    assert_int_equal(ms, 3600000);
    assert_int_equal(knc_parse_duration_ms("P1D", &ms), 0);
    assert_int_equal(ms, 86400000);
    assert_int_equal(knc_parse_duration_ms("p2dt3h4m5.25s", &ms), 0);
    assert_int_equal(ms, 2 * 86400000LL + 3 * 3600000LL + 4 * 60000LL + 5250);
    assert_int_equal(knc_parse_duration_ms("+PT0S", &ms), 0);
    assert_int_equal(ms, 0);
    assert_int_equal(knc_parse_duration_ms("PT90M", &ms), 0);
    assert_int_equal(ms, 90 * 60000LL);
    assert_int_equal(knc_parse_duration_ms("PT0,5S", &ms), 0);
    assert_int_equal(ms, 500);
    static const char *bad[] = {"", "P", "PT", "1H", "PT1D", "P1H", "PT1M1H", "PT1.5M",
                                "P1DT", "-PT1H", "PTH", "PT1X", "PT99999999999999999999S"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ms = -7;
        if (knc_parse_duration_ms(bad[i], &ms) != KN_ERR__CONFIG)
            fail_msg("\"%s\" parsed", bad[i]);
        assert_int_equal(ms, -7);
    }
}

static void test_committed_states(void **state) {
    /* With a group: the committed offset is looked up first. */
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_NONE, true);
    assert_int_equal(p->state, KNC_POS_NEED_COMMITTED);
    assert_false(p->err_pending);
    assert_true(knc_part_wants_committed(p, 0));
    assert_false(knc_part_wants_reset(p, 0));
    uint32_t g = p->gen;
    assert_false(knc_part_committed_done(p, g + 1, 5, 1));
    /* nothing committed + none: the clear error */
    assert_true(knc_part_committed_done(p, g, -1, -1));
    assert_int_equal(p->state, KNC_POS_FAILED);
    assert_int_equal(p->err, KN_ERR__NO_OFFSET);
    knc_part_free(p);
    p = knc_part_new("t", 4, 2, KNC_RESET_LATEST, true);
    assert_true(knc_part_committed_done(p, p->gen, -1, -1));
    assert_int_equal(p->state, KNC_POS_NEED_RESET);
    assert_int_equal(p->reset, KNC_RESET_LATEST);
    knc_part_free(p);
    p = knc_part_new("t", 4, 3, KNC_RESET_LATEST, true);
    assert_true(knc_part_committed_done(p, p->gen, 77, 4));
    assert_int_equal(p->state, KNC_POS_VALID);
    assert_int_equal(p->position, 77);
    assert_int_equal(p->position_epoch, 4);
    /* a second answer is stale */
    assert_false(knc_part_committed_done(p, p->gen, 99, 4));
    assert_int_equal(p->position, 77);
    knc_part_free(p);
}

/* KIP-227: full fetch, then only moved, new or re-led partitions plus the
 * forgotten ones; errors fall back to a full fetch. */
static void test_fetch_session(void **state) {
    knc_session s = {0};
    knc_sess_part want[3] = {{"a", 0, 10, 3}, {"a", 1, 20, 3}, {"b", 0, 30, 3}};
    bool inc[3];
    knc_sess_part *forgot;
    int32_t nf, id, epoch;
    assert_int_equal(knc_session_plan(&s, want, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(id, 0);
    assert_int_equal(epoch, 0);
    assert_int_equal(nf, 0);
    assert_true(inc[0] && inc[1] && inc[2]);
    knc_session_answer(&s, 0, 0, 777);
    assert_int_equal(s.id, 777);
    assert_int_equal(s.epoch, 1);
    /* a/1 moved, b/0 dropped (paused), a/0 unchanged, c/5 new */
    knc_sess_part want2[3] = {{"a", 0, 10, 3}, {"a", 1, 25, 3}, {"c", 5, 0, 3}};
    assert_int_equal(knc_session_plan(&s, want2, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(id, 777);
    assert_int_equal(epoch, 1);
    assert_false(inc[0]);
    assert_true(inc[1]);
    assert_true(inc[2]);
    assert_int_equal(nf, 1);
    assert_string_equal(forgot[0].topic, "b");
    assert_int_equal(forgot[0].partition, 0);
    knc_session_forgotten_free(forgot, nf);
    knc_session_answer(&s, 1, 0, 777);
    assert_int_equal(s.epoch, 2);
    /* nothing changed: an empty incremental fetch */
    assert_int_equal(knc_session_plan(&s, want2, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(epoch, 2);
    assert_false(inc[0] || inc[1] || inc[2]);
    assert_int_equal(nf, 0);
    knc_session_answer(&s, 2, 0, 777);
    /* a/0's leader epoch moved on (a restarted broker leads it again), at
     * the same offset: listed again, or the broker would keep checking
     * the epoch it holds and answer FENCED_LEADER_EPOCH for ever */
    want2[0].leader_epoch = 7;
    assert_int_equal(knc_session_plan(&s, want2, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(epoch, 3);
    assert_true(inc[0]);
    assert_false(inc[1] || inc[2]);
    knc_session_answer(&s, 3, 0, 777);
    assert_int_equal(knc_session_plan(&s, want2, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_false(inc[0] || inc[1] || inc[2]);
    knc_session_answer(&s, 4, 0, 777);
    assert_int_equal(s.epoch, 5);
    /* a stale session: back to a full fetch that lists everything */
    knc_session_answer(&s, 2, KN_ERR_INVALID_FETCH_SESSION_EPOCH, 0);
    assert_int_equal(s.id, 0);
    assert_int_equal(knc_session_plan(&s, want2, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(id, 0);
    assert_int_equal(epoch, 0);
    assert_true(inc[0] && inc[1] && inc[2]);
    assert_int_equal(nf, 0);
    /* the broker declines sessions: stay full */
    knc_session_answer(&s, 0, 0, 0);
    assert_int_equal(s.id, 0);
    assert_int_equal(knc_session_plan(&s, want2, 3, true, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(epoch, 0);
    knc_session_answer(&s, 0, 0, 9);
    /* switching between topic ids and names starts a new session */
    assert_int_equal(knc_session_plan(&s, want2, 3, false, inc, &forgot, &nf, &id, &epoch), 0);
    assert_int_equal(id, 0);
    assert_int_equal(epoch, 0);
    knc_session_reset(&s);
}

/* KIP-320: an epoch bump makes the position suspect; the leader's end
 * offset confirms it or moves it down to the divergence. */
static void test_validation(void **state) {
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    knc_part_seek(p, 100, 5);
    assert_false(knc_part_leader_epoch_seen(p, 5)); /* first sight: recorded */
    assert_int_equal(p->checked_leader_epoch, 5);
    assert_false(knc_part_leader_epoch_seen(p, 5));
    assert_true(knc_part_leader_epoch_seen(p, 6));
    assert_true(p->needs_validation);
    assert_false(knc_part_fetchable(p));
    /* confirmed: the leader has epoch 5 up to 120 */
    assert_false(knc_part_validated(p, p->gen + 1, 6, 120, 5)); /* stale */
    assert_true(knc_part_validated(p, p->gen, 6, 120, 5));
    assert_false(p->needs_validation);
    assert_int_equal(p->position, 100);
    assert_int_equal(p->checked_leader_epoch, 6);
    assert_true(knc_part_fetchable(p));
    /* truncated: epoch 5 ended at 90 on the new leader */
    assert_true(knc_part_leader_epoch_seen(p, 7));
    assert_true(knc_part_validated(p, p->gen, 7, 90, 5));
    assert_int_equal(p->state, KNC_POS_VALID);
    assert_int_equal(p->position, 90);
    assert_false(p->needs_validation);
    /* undefined: reset per the strategy */
    p->position_epoch = 5;
    assert_true(knc_part_leader_epoch_seen(p, 8));
    assert_true(knc_part_validated(p, p->gen, 8, -1, -1));
    assert_int_equal(p->state, KNC_POS_NEED_RESET);
    knc_part_free(p);
    /* under none, truncation is an error naming the divergence */
    p = knc_part_new("t", 4, 2, KNC_RESET_NONE, true);
    knc_part_seek(p, 100, 5);
    knc_part_leader_epoch_seen(p, 5);
    assert_true(knc_part_leader_epoch_seen(p, 6));
    assert_true(knc_part_validated(p, p->gen, 6, 90, 5));
    assert_int_equal(p->state, KNC_POS_FAILED);
    assert_int_equal(p->err, KN_ERR_OFFSET_OUT_OF_RANGE);
    assert_non_null(strstr(p->errstr, "truncation"));
    knc_part_free(p);
    /* a position without an epoch (a user seek) is not validated */
    p = knc_part_new("t", 4, 3, KNC_RESET_EARLIEST, false);
    knc_part_seek(p, 10, -1);
    knc_part_leader_epoch_seen(p, 5);
    assert_false(knc_part_leader_epoch_seen(p, 6));
    assert_false(p->needs_validation);
    knc_part_free(p);
}

static void test_error_policy(void **state) {
    assert_int_equal(knc_fetch_error_action(0), KNC_ACT_OK);
    assert_int_equal(knc_fetch_error_action(KN_ERR_OFFSET_OUT_OF_RANGE), KNC_ACT_RESET);
    assert_int_equal(knc_fetch_error_action(KN_ERR_NOT_LEADER_OR_FOLLOWER),
                     KNC_ACT_REFRESH_METADATA);
    assert_int_equal(knc_fetch_error_action(KN_ERR_FENCED_LEADER_EPOCH), KNC_ACT_REFRESH_METADATA);
    assert_int_equal(knc_fetch_error_action(KN_ERR_UNKNOWN_TOPIC_ID), KNC_ACT_REFRESH_METADATA);
    assert_int_equal(knc_fetch_error_action(KN_ERR_UNKNOWN_LEADER_EPOCH), KNC_ACT_RETRY);
    assert_int_equal(knc_fetch_error_action(KN_ERR_TOPIC_AUTHORIZATION_FAILED), KNC_ACT_FAIL);
    assert_int_equal(knc_fetch_error_action(KN_ERR_CORRUPT_MESSAGE), KNC_ACT_FAIL);
}

/* Drains everything with polls of at most max records; checks order,
 * contents, the position, and that records outlive the buffer. */
static void drain_all(int codec, int max) {
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    knc_part_seek(p, 100, -1);
    kn_wr blob;
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 100, 7, codec, 0, false);
    add_batch(&blob, 107, 1, codec, 0, false);
    add_batch(&blob, 108, 40, codec, 0, false);
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    kn_records *all[64];
    int polls = 0;
    int64_t next = 100;
    while (p->fetched && polls < 64) {
        kn_records *r = knc_records_new((size_t)max);
        int n = knc_drain(p, r, max, &opts_plain);
        assert_true(n >= 0 && n <= max);
        assert_int_equal(kn_records_count(r), (size_t)n);
        assert_int_equal(p->state, KNC_POS_VALID);
        all[polls++] = r;
        next += n;
        assert_int_equal(p->position, next);
    }
    assert_null(p->fetched);
    assert_int_equal(p->position, 148);
    knc_part_free(p); /* the records keep their memory */
    int64_t off = 100;
    for (int i = 0; i < polls; i++) {
        for (size_t j = 0; j < kn_records_count(all[i]); j++)
            check_record(all[i], j, off++);
        kn_records_free(all[i]);
    }
    assert_int_equal(off, 148);
}

static int drain_countdown = -1;
static void *drain_fail_malloc(size_t n) { return drain_countdown-- == 0 ? NULL : malloc(n); }
static void *drain_fail_realloc(void *q, size_t n) { return drain_countdown-- == 0 ? NULL : realloc(q, n); }

/* Issue #14 item 10: out of memory in the middle of a drain loses no
 * record. Every allocation of one drain fails in turn (the allocator
 * hook); what that drain added is kept (as poll returns it), and the
 * next drains go on from the record or batch that failed: every offset
 * comes exactly once, in order. */
static void test_drain_nomem_loses_nothing(void **state) {
    (void)state;
    kn_allocator a = {drain_fail_malloc, drain_fail_realloc, free};
    int saw_nomem = 0;
    for (int codec = 0; codec < 2; codec++) {
        for (int fail_at = 0; fail_at < 40; fail_at++) {
            knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
            knc_part_seek(p, 100, -1);
            kn_wr blob;
            kn_wr_init(&blob, 0, 0);
            add_batch(&blob, 100, 7, codec ? KN_CODEC_LZ4 : KN_CODEC_NONE, 0, false);
            add_batch(&blob, 107, 5, codec ? KN_CODEC_LZ4 : KN_CODEC_NONE, 0, false);
            buffer_blob(p, &blob, NULL, 0);
            kn_wr_free(&blob);
            int64_t next = 100;
            bool failed_once = false;
            for (int round = 0; round < 40 && p->fetched; round++) {
                kn_records *r = knc_records_new(3);
                assert_non_null(r);
                if (!failed_once) {
                    drain_countdown = fail_at;
                    kn_set_allocator(&a);
                }
                int n = knc_drain(p, r, 3, &opts_plain);
                kn_set_allocator(NULL);
                drain_countdown = -1;
                if (n == KN_ERR__NOMEM)
                    saw_nomem++;
                failed_once = true;
                assert_true(n >= 0 || n == KN_ERR__NOMEM);
                for (size_t i = 0; i < kn_records_count(r); i++)
                    assert_int_equal(kn_records_offset(r, i), next++);
                assert_int_equal(p->position, next);
                kn_records_free(r);
            }
            assert_int_equal(next, 112);
            assert_int_equal(p->state, KNC_POS_VALID);
            knc_part_free(p);
        }
    }
    assert_true(saw_nomem > 0);
}

static void test_drain_codecs(void **state) {
    for (int codec = 0; codec < KN_CODEC_COUNT; codec++) {
        drain_all(codec, 1);
        drain_all(codec, 3);
        drain_all(codec, 500);
    }
}

/* The position inside a (compressed) batch: earlier records are not
 * returned again. A partial trailing batch ends the data. */
static void test_drain_position_and_partial(void **state) {
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    knc_part_seek(p, 13, -1);
    kn_wr blob;
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 0, 10, KN_CODEC_LZ4, 0, false);
    add_batch(&blob, 10, 10, KN_CODEC_LZ4, 0, false);
    size_t whole = blob.len;
    add_batch(&blob, 20, 10, KN_CODEC_NONE, 0, false);
    blob.len = whole + 30; /* cut the third batch short */
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    kn_records *r = knc_records_new(100);
    assert_int_equal(knc_drain(p, r, 100, &opts_plain), 7);
    for (size_t i = 0; i < 7; i++)
        check_record(r, i, 13 + (int64_t)i);
    assert_null(p->fetched);
    assert_int_equal(p->position, 20);
    assert_int_equal(p->state, KNC_POS_VALID);
    kn_records_free(r);
    knc_part_free(p);
}

/* Read-ahead: the second slice, fetched at the first one's end while it
 * drains, takes over exactly where the first ends: every record once,
 * in order, across polls of any size. */
static void test_read_ahead(void **state) {
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    knc_part_seek(p, 10, -1);
    kn_wr blob;
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 10, 3, KN_CODEC_LZ4, 0, false);
    add_batch(&blob, 13, 3, KN_CODEC_NONE, 0, false);
    size_t whole = blob.len;
    add_batch(&blob, 16, 4, KN_CODEC_NONE, 0, false);
    blob.len = whole + 40; /* the third batch is cut short: fetched again */
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    assert_int_equal(p->fetched->end_offset, 16);
    assert_true(knc_part_fetchable(p));
    assert_int_equal(knc_part_fetch_offset(p), 16);
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 16, 4, KN_CODEC_ZSTD, 0, false);
    add_batch(&blob, 20, 2, KN_CODEC_NONE, 0, false);
    buffer_ahead(p, &blob, 16);
    kn_wr_free(&blob);
    /* The buffer is full: no more fetches until a slice is used up. */
    assert_false(knc_part_fetchable(p));
    assert_int_equal(knc_part_fetch_offset(p), 22);
    assert_int_equal(p->position, 10);
    kn_records *r = knc_records_new(100);
    int64_t next = 10;
    for (int polls = 0; polls < 20 && p->fetched; polls++) {
        int got = knc_drain(p, r, 4, &opts_plain);
        assert_true(got >= 0 && got <= 4);
    }
    assert_int_equal(kn_records_count(r), 12);
    for (size_t i = 0; i < 12; i++)
        check_record(r, i, next++);
    assert_int_equal(p->position, 22);
    assert_int_equal(p->slices_drained, 2);
    assert_null(p->fetched);
    assert_null(p->ahead);
    assert_int_equal(knc_part_fetch_offset(p), 22);
    kn_records_free(r);

    /* A read-ahead slice that would leave a gap is dropped, not used. */
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 22, 2, KN_CODEC_NONE, 0, false);
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 30, 2, KN_CODEC_NONE, 0, false);
    buffer_ahead(p, &blob, 30);
    kn_wr_free(&blob);
    r = knc_records_new(100);
    assert_int_equal(knc_drain(p, r, 100, &opts_plain), 2);
    assert_int_equal(p->position, 24);
    assert_null(p->fetched);
    assert_null(p->ahead);
    kn_records_free(r);

    /* Seek, and a leader epoch change (KIP-320), drop both slices and
     * move gen so the in-flight read-ahead is dropped too. */
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 24, 2, KN_CODEC_NONE, 0, false);
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 26, 2, KN_CODEC_NONE, 0, false);
    buffer_ahead(p, &blob, 26);
    kn_wr_free(&blob);
    p->position_epoch = 3;
    assert_false(knc_part_leader_epoch_seen(p, 3));
    uint32_t g = p->gen;
    assert_true(knc_part_leader_epoch_seen(p, 4));
    assert_int_not_equal(p->gen, g);
    assert_null(p->fetched);
    assert_null(p->ahead);
    assert_int_equal(knc_part_fetch_offset(p), 24);
    assert_true(knc_part_validated(p, p->gen, 4, 30, 3));

    /* A corrupt batch in the first slice fails the partition; the
     * read-ahead behind it is dropped and nothing past it comes out. */
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 24, 2, KN_CODEC_NONE, 0, false);
    add_batch(&blob, 26, 2, KN_CODEC_GZIP, 0, false);
    blob.buf[blob.len - 3] ^= 0x55;
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 28, 2, KN_CODEC_NONE, 0, false);
    buffer_ahead(p, &blob, 28);
    kn_wr_free(&blob);
    r = knc_records_new(100);
    assert_int_equal(knc_drain(p, r, 100, &opts_plain), 2);
    assert_int_equal(p->state, KNC_POS_FAILED);
    assert_int_equal(p->position, 26);
    assert_null(p->fetched);
    assert_null(p->ahead);
    kn_records_free(r);
    knc_part_free(p);
}

/* Control batches are skipped but move the position; read_committed
 * drops the aborted producer's records up to its ABORT marker. */
static void test_drain_transactions(void **state) {
    for (int rc_mode = 0; rc_mode < 2; rc_mode++) {
        knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
        knc_part_seek(p, 0, -1);
        kn_wr blob;
        kn_wr_init(&blob, 0, 0);
        add_batch(&blob, 0, 3, KN_CODEC_NONE, 7, true);   /* pid 7: committed */
        add_batch(&blob, 3, 2, KN_CODEC_ZSTD, 8, true);   /* pid 8: aborted */
        add_marker(&blob, 5, 7, KN_RB_CONTROL_COMMIT);
        add_batch(&blob, 6, 2, KN_CODEC_NONE, 8, true);   /* pid 8: still aborted */
        add_marker(&blob, 8, 8, KN_RB_CONTROL_ABORT);
        add_batch(&blob, 9, 2, KN_CODEC_NONE, 8, true);   /* pid 8: new txn, committed */
        add_marker(&blob, 11, 8, KN_RB_CONTROL_COMMIT);
        knc_aborted ab[1] = {{8, 3}};
        buffer_blob(p, &blob, ab, 1);
        kn_wr_free(&blob);
        kn_records *r = knc_records_new(100);
        int n = knc_drain(p, r, 100, rc_mode ? &opts_rc : &opts_plain);
        int64_t want_rc[] = {0, 1, 2, 9, 10};
        int64_t want_ru[] = {0, 1, 2, 3, 4, 6, 7, 9, 10};
        const int64_t *want = rc_mode ? want_rc : want_ru;
        int nwant = rc_mode ? 5 : 9;
        assert_int_equal(n, nwant);
        for (int i = 0; i < n; i++)
            assert_int_equal(kn_records_offset(r, (size_t)i), want[i]);
        assert_int_equal(p->position, 12);
        kn_records_free(r);
        knc_part_free(p);
    }
}

/* A corrupt batch: the records before it are returned, then the
 * partition stops at the bad offset with an error naming it. */
static void test_drain_corrupt(void **state) {
    knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    knc_part_seek(p, 0, -1);
    kn_wr blob;
    kn_wr_init(&blob, 0, 0);
    add_batch(&blob, 0, 4, KN_CODEC_NONE, 0, false);
    size_t second = blob.len;
    add_batch(&blob, 4, 4, KN_CODEC_GZIP, 0, false);
    blob.buf[blob.len - 3] ^= 0x55; /* corrupt the second batch's payload */
    (void)second;
    buffer_blob(p, &blob, NULL, 0);
    kn_wr_free(&blob);
    kn_records *r = knc_records_new(100);
    assert_int_equal(knc_drain(p, r, 100, &opts_plain), 4);
    assert_int_equal(p->state, KNC_POS_FAILED);
    assert_int_equal(p->err, KN_ERR__BAD_BATCH);
    assert_true(p->err_pending);
    assert_int_equal(p->position, 4);
    assert_non_null(strstr(p->errstr, "t [4] at offset 4"));
    assert_null(p->fetched);
    kn_records_free(r);
    /* Nothing more comes out until a seek. */
    r = knc_records_new(10);
    assert_int_equal(knc_drain(p, r, 10, &opts_plain), 0);
    kn_records_free(r);
    knc_part_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tplist),
        cmocka_unit_test(test_state_machine),
        cmocka_unit_test(test_committed_states),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_fetch_session),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_error_policy),
        cmocka_unit_test(test_drain_codecs),
        cmocka_unit_test(test_drain_nomem_loses_nothing),
        cmocka_unit_test(test_drain_position_and_partial),
        cmocka_unit_test(test_read_ahead),
        cmocka_unit_test(test_drain_transactions),
        cmocka_unit_test(test_drain_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

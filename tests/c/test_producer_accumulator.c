/*
 * test_producer_accumulator.c: unit tests of the producer accumulator
 * (core/producer/accumulator.c) without a broker: batching by
 * batch.size, linger readiness, size limits, buffer.memory blocking for
 * max.block.ms and release on completion, the built wire form (parsed
 * back with the batch decoder, CRC checked, including after a producer
 * id/sequence rewrite), retry ordering and the done queue.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/codec.h"
#include "kn_test.h"
#include "producer/accumulator.h"

static void conf_defaults(knp_acc_conf *c) {
    memset(c, 0, sizeof *c);
    c->batch_size = 1024;
    c->linger_ms = 5;
    c->buffer_memory = 1 << 20;
    c->max_request_size = 1 << 20;
    c->delivery_timeout_ms = 120000;
    c->codec = KN_CODEC_NONE;
    c->level = INT32_MIN;
    c->adaptive = true;
    c->has_global_dr = true;
}

static knp_rec rec_of(const char *key, size_t vlen) {
    static uint8_t value[4096];
    knp_rec r;
    memset(&r, 0, sizeof r);
    r.key.ptr = (const uint8_t *)key;
    r.key.len = key ? (int32_t)strlen(key) : -1;
    r.value.ptr = value;
    r.value.len = (int32_t)vlen;
    r.timestamp = 1700000000000;
    return r;
}

static int wakes;
static void count_wake(void *o) {
    (void)o;
    wakes++;
}

static void test_batching_and_readiness(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
    acc.wake = count_wake;
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "t1", true);
    assert_non_null(t);
    assert_ptr_equal(knp_acc_topic(&acc, "t1", false), t);
    assert_null(knp_acc_topic(&acc, "t2", false));
    int32_t avail[] = {0, 1, 2, 3};
    assert_int_equal(knp_acc_topic_update(&acc, t, 4, avail, 4), 0);

    char err[256];
    int32_t part = -1;
    knp_rec r = rec_of(NULL, 100);
    /* Explicit partition: 30 records of ~110 bytes, batch.size 1024. */
    for (int i = 0; i < 30; i++)
        assert_int_equal(knp_acc_append(&acc, t, 2, &r, 1000, 1000, &part, err, sizeof err), 0);
    knp_partq *pq = t->parts[2];
    assert_non_null(pq);
    assert_int_equal(pq->depth, 4); /* 9 per batch (61 + 9*~108 <= 1024) */
    assert_true(pq->head->full);
    assert_false(pq->tail->full);
    int32_t total = 0;
    for (knp_batch *b = pq->head; b; b = b->next) {
        total += b->count;
        if (b->next)
            assert_true(kn_rb_builder_size(&b->b) <= 1024);
    }
    assert_int_equal(total, 30);
    assert_int_equal(acc.outstanding, 30);
    assert_true(wakes >= 4);

    /* The open tail only gets ready at linger expiry. */
    knp_batch *b = knp_acc_pop(&acc, pq);
    assert_true(b->full);
    b->next = NULL;
    knp_batch *b2 = knp_acc_pop(&acc, pq), *b3 = knp_acc_pop(&acc, pq);
    int64_t next = INT64_MAX;
    assert_false(knp_acc_head_ready(&acc, pq, 1003, &next));
    assert_int_equal(next, 1005);
    assert_true(knp_acc_head_ready(&acc, pq, 1005, &next));
    acc.flushing = 1;
    assert_true(knp_acc_head_ready(&acc, pq, 1000, &next));
    acc.flushing = 0;

    /* Out of range partition. */
    assert_int_equal(knp_acc_append(&acc, t, 4, &r, 1000, 1000, &part, err, sizeof err),
                     KN_ERR__INVALID_ARG);
    assert_non_null(strstr(err, "not in the range"));

    /* Keyed: murmur2 partition; same key, same partition. */
    knp_rec rk = rec_of("user-17", 10);
    int32_t p1, p2;
    assert_int_equal(knp_acc_append(&acc, t, -1, &rk, 1000, 1000, &p1, err, sizeof err), 0);
    assert_int_equal(knp_acc_append(&acc, t, -1, &rk, 1000, 1000, &p2, err, sizeof err), 0);
    assert_int_equal(p1, p2);
    assert_int_equal(p1, knp_part_keyed("user-17", 7, 4));
    /* Empty key is a key (not null). */
    knp_rec re = rec_of("", 10);
    assert_int_equal(knp_acc_append(&acc, t, -1, &re, 1000, 1000, &p1, err, sizeof err), 0);
    assert_int_equal(p1, knp_part_keyed("", 0, 4));

    knp_acc_complete(&acc, b, 0, 100, -1, NULL);
    knp_acc_complete(&acc, b2, KN_ERR__MSG_TIMED_OUT, 0, -1, "expired");
    knp_acc_complete(&acc, b3, 0, 200, -1, NULL);
    knp_batch *done = knp_acc_take_done(&acc);
    assert_ptr_equal(done, b);
    assert_ptr_equal(done->next, b2);
    assert_int_equal(b->base_offset, 100);
    assert_int_equal(b2->err, KN_ERR__MSG_TIMED_OUT);
    assert_int_equal(b2->base_offset, -1);
    assert_string_equal(b2->errstr, "expired");
    assert_int_equal(acc.records_failed, b2->count);
    while (done) {
        knp_batch *n = done->next;
        acc.outstanding -= done->count;
        knp_batch_free(done);
        done = n;
    }
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

static void test_sticky_null_keys_fill_batches(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    c.batch_size = 2048;
    assert_int_equal(knp_acc_init(&acc, &c, 5), 0);
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "sticky", true);
    int32_t avail[] = {0, 1, 2, 3, 4, 5};
    assert_int_equal(knp_acc_topic_update(&acc, t, 6, avail, 6), 0);
    knp_rec r = rec_of(NULL, 200);
    char err[256];
    int32_t prev = -1, p, runs = 0, run_len = 0, min_run = 1000;
    for (int i = 0; i < 600; i++) {
        assert_int_equal(knp_acc_append(&acc, t, -1, &r, 1000, 1000, &p, err, sizeof err), 0);
        if (p != prev && prev >= 0) {
            runs++;
            if (run_len < min_run)
                min_run = run_len;
            run_len = 0;
        }
        run_len++;
        prev = p;
    }
    /* Switches only after a batch's worth (~9 records of ~210 bytes). */
    assert_true(runs > 10);
    assert_true(min_run >= 9);
    int used = 0;
    for (int i = 0; i < 6; i++)
        used += t->parts[i] != NULL;
    assert_true(used >= 4);
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

static void test_too_large(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    c.max_request_size = 1000;
    assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "big", true);
    assert_int_equal(knp_acc_topic_update(&acc, t, 1, NULL, 0), 0);
    char err[256];
    int32_t p;
    knp_rec r = rec_of(NULL, 2000);
    assert_int_equal(knp_acc_append(&acc, t, -1, &r, 0, 0, &p, err, sizeof err),
                     KN_ERR_MESSAGE_TOO_LARGE);
    assert_non_null(strstr(err, "max.request.size"));
    /* Bigger than batch.size but within max.request.size: alone in a batch. */
    r = rec_of(NULL, 900);
    knp_rec small = rec_of(NULL, 10);
    assert_int_equal(knp_acc_append(&acc, t, 0, &small, 0, 0, &p, err, sizeof err), 0);
    acc.conf.batch_size = 500;
    assert_int_equal(knp_acc_append(&acc, t, 0, &r, 0, 0, &p, err, sizeof err), 0);
    assert_int_equal(t->parts[0]->depth, 2);
    assert_int_equal(t->parts[0]->tail->count, 1);
    assert_true(t->parts[0]->tail->full);
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

typedef struct {
    knp_acc *acc;
    knp_batch *b;
} completer_arg;

static void *completer(void *arg) {
    completer_arg *a = arg;
    usleep(100 * 1000);
    pthread_mutex_lock(&a->acc->lock);
    knp_acc_complete(a->acc, a->b, 0, 0, -1, NULL);
    pthread_mutex_unlock(&a->acc->lock);
    return NULL;
}

static void test_buffer_full_blocks(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    c.buffer_memory = 4096;
    c.batch_size = 1024;
    assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "full", true);
    assert_int_equal(knp_acc_topic_update(&acc, t, 1, NULL, 0), 0);
    char err[256];
    int32_t p;
    knp_rec r = rec_of(NULL, 300);
    int accepted = 0, rc = 0;
    int64_t t0 = kn_test_now_ms();
    while (accepted < 100) {
        rc = knp_acc_append(&acc, t, 0, &r, t0, kn_test_now_ms() + 200, &p, err, sizeof err);
        if (rc)
            break;
        accepted++;
    }
    int64_t waited = kn_test_now_ms() - t0;
    assert_int_equal(rc, KN_ERR__QUEUE_FULL);
    assert_non_null(strstr(err, "buffer.memory"));
    assert_true(accepted >= 5 && accepted < 13);
    assert_true(waited >= 190 && waited < 2000);
    assert_true(acc.mem_used <= 4096);
    assert_int_equal(acc.outstanding, accepted);

    /* A completion from another thread unblocks a waiting append. */
    knp_batch *b = knp_acc_pop(&acc, t->parts[0]);
    completer_arg a = {&acc, b};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, completer, &a), 0);
    t0 = kn_test_now_ms();
    rc = knp_acc_append(&acc, t, 0, &r, t0, t0 + 5000, &p, err, sizeof err);
    int64_t took = kn_test_now_ms() - t0;
    pthread_mutex_unlock(&acc.lock);
    pthread_join(th, NULL);
    assert_int_equal(rc, 0);
    assert_true(took >= 50 && took < 3000);
    pthread_mutex_lock(&acc.lock);
    knp_batch *done = knp_acc_take_done(&acc);
    assert_ptr_equal(done, b);
    knp_batch_free(done);
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

/* Built batches parse back with the decoder, CRC verified; a rewrite of
 * producer id/epoch/sequence keeps the CRC valid. */
static void check_batch(const knp_batch *b, int64_t pid, int16_t epoch, int32_t seq,
                        int codec, int32_t count) {
    kn_rb rb;
    char err[256];
    assert_int_equal(kn_rb_parse(&rb, b->wire.buf, b->wire.len, KN_RB_VERIFY_CRC, err, sizeof err),
                     0);
    assert_int_equal(rb.h.producer_id, pid);
    assert_int_equal(rb.h.producer_epoch, epoch);
    assert_int_equal(rb.h.base_sequence, seq);
    assert_int_equal(rb.h.record_count, count);
    assert_int_equal(kn_rb_codec(&rb), codec);
    kn_wr scratch;
    kn_wr_init(&scratch, 0, 1 << 24);
    assert_int_equal(kn_rb_records_begin(&rb, &scratch, err, sizeof err), 0);
    kn_record rec;
    int n = 0;
    while (kn_rb_next(&rb, &rec, err, sizeof err) == 1) {
        if (n % 3 == 0)
            assert_true(rec.key.len < 0);
        else if (n % 3 == 1)
            assert_int_equal(rec.key.len, 0);
        else
            assert_int_equal(rec.key.len, 3);
        assert_int_equal(rec.value.len, 50);
        assert_int_equal(rec.header_count, 1);
        assert_int_equal(rec.offset_delta, n);
        n++;
    }
    assert_int_equal(n, count);
    kn_wr_free(&scratch);
}

static void test_build_and_rewrite(void **state) {
    (void)state;
    int codecs[] = {KN_CODEC_NONE, KN_CODEC_GZIP, KN_CODEC_SNAPPY, KN_CODEC_LZ4, KN_CODEC_ZSTD};
    for (size_t ci = 0; ci < sizeof codecs / sizeof codecs[0]; ci++) {
        knp_acc acc;
        knp_acc_conf c;
        conf_defaults(&c);
        c.codec = codecs[ci];
        c.batch_size = 1 << 16;
        assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
        pthread_mutex_lock(&acc.lock);
        knp_topic *t = knp_acc_topic(&acc, "b", true);
        assert_int_equal(knp_acc_topic_update(&acc, t, 1, NULL, 0), 0);
        kn_rb_kv h = {{"h", 1}, {(const uint8_t *)"v", 1}};
        char err[256];
        int32_t p;
        for (int i = 0; i < 40; i++) {
            knp_rec r = rec_of(i % 3 == 0 ? NULL : i % 3 == 1 ? "" : "abc", 50);
            r.headers = &h;
            r.header_count = 1;
            r.timestamp += i;
            assert_int_equal(knp_acc_append(&acc, t, 0, &r, 0, 0, &p, err, sizeof err), 0);
        }
        knp_batch *b = knp_acc_pop(&acc, t->parts[0]);
        pthread_mutex_unlock(&acc.lock);
        b->base_seq = 7;
        assert_int_equal(knp_batch_build(&acc, b, 1234, 3, err, sizeof err), 0);
        assert_true(b->built);
        check_batch(b, 1234, 3, 7, codecs[ci], 40);
        b->base_seq = 0;
        assert_int_equal(knp_batch_build(&acc, b, 1234, 4, err, sizeof err), 0);
        check_batch(b, 1234, 4, 0, codecs[ci], 40);
        pthread_mutex_lock(&acc.lock);
        knp_acc_complete(&acc, b, 0, 5, -1, NULL);
        assert_int_equal(acc.mem_used, 0);
        knp_batch *d = knp_acc_take_done(&acc);
        assert_ptr_equal(d, b);
        knp_batch_free(d);
        pthread_mutex_unlock(&acc.lock);
        knp_acc_destroy(&acc);
    }
}

/* Retries go back first, in sequence order, ahead of new batches. */
static void test_requeue_order(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    c.batch_size = 200;
    assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "r", true);
    assert_int_equal(knp_acc_topic_update(&acc, t, 1, NULL, 0), 0);
    char err[256];
    int32_t p;
    knp_rec r = rec_of(NULL, 100);
    for (int i = 0; i < 5; i++)
        assert_int_equal(knp_acc_append(&acc, t, 0, &r, 0, 0, &p, err, sizeof err), 0);
    knp_partq *pq = t->parts[0];
    assert_int_equal(pq->depth, 5);
    knp_batch *bs[3];
    for (int i = 0; i < 3; i++) {
        bs[i] = knp_acc_pop(&acc, pq);
        bs[i]->base_seq = i;
        pthread_mutex_unlock(&acc.lock);
        assert_int_equal(knp_batch_build(&acc, bs[i], 1, 0, err, sizeof err), 0);
        pthread_mutex_lock(&acc.lock);
    }
    knp_batch *fresh = pq->head;
    knp_acc_requeue(&acc, bs[2]);
    knp_acc_requeue(&acc, bs[0]);
    knp_acc_requeue(&acc, bs[1]);
    assert_ptr_equal(pq->head, bs[0]);
    assert_ptr_equal(bs[0]->next, bs[1]);
    assert_ptr_equal(bs[1]->next, bs[2]);
    assert_ptr_equal(bs[2]->next, fresh);
    assert_int_equal(pq->depth, 5);
    assert_int_equal(acc.retries, 3);
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

/* Without any callback, completed batches are freed at once. */
static void test_no_reports_needed(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    c.has_global_dr = false;
    assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "n", true);
    assert_int_equal(knp_acc_topic_update(&acc, t, 1, NULL, 0), 0);
    char err[256];
    int32_t p;
    knp_rec r = rec_of(NULL, 10);
    assert_int_equal(knp_acc_append(&acc, t, 0, &r, 0, 0, &p, err, sizeof err), 0);
    knp_batch *b = knp_acc_pop(&acc, t->parts[0]);
    knp_acc_complete(&acc, b, 0, 1, -1, NULL);
    assert_null(acc.done_head);
    assert_int_equal(acc.outstanding, 0);
    assert_int_equal(acc.mem_used, 0);
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

/* A batch the broker refused as too large splits into two halves that
 * keep the sequence range, the reports and valid CRCs. */
static void test_split(void **state) {
    (void)state;
    knp_acc acc;
    knp_acc_conf c;
    conf_defaults(&c);
    c.batch_size = 1 << 16;
    c.codec = KN_CODEC_LZ4;
    assert_int_equal(knp_acc_init(&acc, &c, 1), 0);
    pthread_mutex_lock(&acc.lock);
    knp_topic *t = knp_acc_topic(&acc, "s", true);
    assert_int_equal(knp_acc_topic_update(&acc, t, 1, NULL, 0), 0);
    kn_rb_kv h = {{"h", 1}, {(const uint8_t *)"v", 1}};
    char err[256];
    int32_t p;
    for (int i = 0; i < 41; i++) {
        knp_rec r = rec_of(i % 2 ? "key" : NULL, 50);
        r.headers = &h;
        r.header_count = 1;
        r.opaque = (void *)(intptr_t)(i + 1);
        assert_int_equal(knp_acc_append(&acc, t, 0, &r, 0, 0, &p, err, sizeof err), 0);
    }
    int64_t mem = acc.mem_used;
    knp_batch *b = knp_acc_pop(&acc, t->parts[0]);
    b->base_seq = 100;
    b->attempts = 1;
    assert_int_equal(knp_batch_build(&acc, b, 77, 2, err, sizeof err), 0);
    assert_int_equal(knp_acc_split(&acc, b, 77, 2, err, sizeof err), 0);
    knp_partq *pq = t->parts[0];
    assert_int_equal(pq->depth, 2);
    knp_batch *h1 = pq->head, *h2 = h1->next;
    assert_int_equal(h1->count, 20);
    assert_int_equal(h2->count, 21);
    assert_int_equal(h1->base_seq, 100);
    assert_int_equal(h2->base_seq, 120);
    assert_int_equal(acc.mem_used, mem);
    assert_int_equal(h1->mem + h2->mem, (size_t)mem);
    for (int i = 0; i < 20; i++)
        assert_int_equal((intptr_t)h1->meta[i].opaque, i + 1);
    for (int i = 0; i < 21; i++)
        assert_int_equal((intptr_t)h2->meta[i].opaque, i + 21);
    kn_rb rb;
    assert_int_equal(kn_rb_parse(&rb, h2->wire.buf, h2->wire.len, KN_RB_VERIFY_CRC, err, sizeof err), 0);
    assert_int_equal(rb.h.base_sequence, 120);
    assert_int_equal(rb.h.producer_id, 77);
    assert_int_equal(rb.h.record_count, 21);
    assert_int_equal(kn_rb_codec(&rb), KN_CODEC_LZ4);
    kn_wr scratch;
    kn_wr_init(&scratch, 0, 0);
    assert_int_equal(kn_rb_records_begin(&rb, &scratch, err, sizeof err), 0);
    kn_record rec;
    int n = 0;
    while (kn_rb_next(&rb, &rec, err, sizeof err) == 1) {
        /* record 20 + n of the original: odd ones carry "key" */
        assert_int_equal(rec.key.len, (20 + n) % 2 ? 3 : -1);
        assert_int_equal(rec.header_count, 1);
        n++;
    }
    assert_int_equal(n, 21);
    kn_wr_free(&scratch);
    knp_batch *x = knp_acc_pop(&acc, pq);
    knp_batch *y = knp_acc_pop(&acc, pq);
    knp_acc_complete(&acc, x, 0, 0, -1, NULL);
    knp_acc_complete(&acc, y, 0, 0, -1, NULL);
    assert_int_equal(acc.mem_used, 0);
    knp_batch *d = knp_acc_take_done(&acc);
    while (d) {
        knp_batch *nx = d->next;
        knp_batch_free(d);
        d = nx;
    }
    pthread_mutex_unlock(&acc.lock);
    knp_acc_destroy(&acc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batching_and_readiness),
        cmocka_unit_test(test_sticky_null_keys_fill_batches),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_buffer_full_blocks),
        cmocka_unit_test(test_build_and_rewrite),
        cmocka_unit_test(test_requeue_order),
        cmocka_unit_test(test_no_reports_needed),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

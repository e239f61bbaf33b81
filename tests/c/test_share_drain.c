/*
 * test_share_drain.c: the share consumer's handling of a ShareFetch
 * answer without a broker (core/share/share_drain.c): only acquired
 * offsets are delivered, with their delivery counts; control records
 * and offsets compacted away inside the data become GAP
 * acknowledgements; acquired offsets past the data, or not yet read
 * when the data is dropped (mid-batch included), are RELEASED, never
 * gapped (a gap would archive a real record); malformed acquired ranges
 * from the wire are a protocol error; acknowledgement ranges merge.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn_alloc.h"
#include "share/share_int.h"

#define B(s) ((kn_bytes){(const uint8_t *)(s), (int32_t)strlen(s)})

/* Appends a batch of records at offsets base + deltas[i] ("v<offset>"). */
static void add_batch(kn_wr *blob, int64_t base, const int32_t *deltas, int count) {
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    for (int i = 0; i < count; i++) {
        char v[32];
        snprintf(v, sizeof v, "v%lld", (long long)(base + deltas[i]));
        assert_int_equal(kn_rb_builder_append(&b, deltas[i], 1000, (kn_bytes){NULL, -1}, B(v), NULL, 0), 0);
    }
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, blob, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

static void add_marker(kn_wr *blob, int64_t base) {
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    conf.control = true;
    conf.transactional = true;
    conf.producer_id = 7;
    conf.producer_epoch = 0;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    uint8_t key[4] = {0, 0, 0, 1};
    uint8_t val[6] = {0};
    assert_int_equal(kn_rb_builder_append(&b, 0, 1, (kn_bytes){key, 4}, (kn_bytes){val, 6}, NULL, 0), 0);
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, blob, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

/* offsets 0..4, a commit marker at 5, offsets 6..9 */
static void standard_blob(kn_wr *blob) {
    static const int32_t d5[] = {0, 1, 2, 3, 4}, d4[] = {0, 1, 2, 3};
    add_batch(blob, 0, d5, 5);
    add_marker(blob, 5);
    add_batch(blob, 6, d4, 4);
}

typedef struct fixture {
    kn_share_consumer sc;
    kns_part p;
    knc_buf *buf;
} fixture;

static void take(fixture *f, kn_wr *blob, const kns_acq *acq, int n) {
    memset(f, 0, sizeof(*f));
    f->sc.verify_crc = true;
    f->sc.scratch_max = 1 << 20;
    f->p.topic = kn_strdup("t");
    size_t len;
    uint8_t *mem = kn_wr_detach(blob, &len);
    f->buf = knc_buf_from_mem(mem);
    assert_int_equal(kns_part_take(&f->p, f->buf, mem, len, acq, n), 0);
}

static void done(fixture *f) {
    kns_part_drop(&f->p, -1);
    knc_buf_release(f->buf);
    kns_ranges_free(&f->p.acks);
    kns_ranges_free(&f->p.sent);
    kn_free(f->p.deliv);
    kn_free(f->p.topic);
}

static void assert_range(const kns_ranges *r, int i, int64_t first, int64_t last, int type) {
    assert_true(i < r->count);
    assert_int_equal(r->items[i].first, first);
    assert_int_equal(r->items[i].last, last);
    assert_int_equal(r->items[i].type, type);
}

/* Everything acquired: every record delivered with its delivery
 * count, the marker's offset gapped, nothing released. */
static void test_all_acquired(void **state) {
    (void)state;
    kn_wr blob;
    kn_wr_init(&blob, 256, 0);
    standard_blob(&blob);
    kns_acq acq[] = {{0, 9, 3}};
    fixture f;
    take(&f, &blob, acq, 1);
    kn_records *out = knc_records_new(16);
    assert_int_equal(kns_drain(&f.sc, &f.p, out, 100), 9);
    assert_int_equal(kn_records_count(out), 9);
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(kn_records_delivery_count(out, i), 3);
    assert_int_equal(kn_records_offset(out, 5), 6);
    assert_false(f.p.has_data);
    assert_int_equal(f.p.acks.count, 1);
    assert_range(&f.p.acks, 0, 5, 5, KNS_ACK_GAP);
    assert_int_equal(f.p.deliv_count, 9);
    kn_records_free(out);
    done(&f);
    kn_wr_free(&blob);
}

/* Only acquired offsets are delivered; acquired offsets past the data
 * are released (records may well exist there). */
static void test_partial_acquisition(void **state) {
    (void)state;
    kn_wr blob;
    kn_wr_init(&blob, 256, 0);
    standard_blob(&blob);
    kns_acq acq[] = {{7, 20, 2}, {2, 3, 1}}; /* unsorted on purpose */
    fixture f;
    take(&f, &blob, acq, 2);
    kn_records *out = knc_records_new(16);
    assert_int_equal(kns_drain(&f.sc, &f.p, out, 100), 5);
    int64_t want[] = {2, 3, 7, 8, 9};
    int dc[] = {1, 1, 2, 2, 2};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(kn_records_offset(out, i), want[i]);
        assert_int_equal(kn_records_delivery_count(out, i), dc[i]);
    }
    assert_int_equal(f.p.acks.count, 1);
    assert_range(&f.p.acks, 0, 10, 20, KN_SHARE_RELEASE);
    kn_records_free(out);
    done(&f);
    kn_wr_free(&blob);
}

/* Dropped mid-batch (assignment lost, close): what was not read is
 * released, not gapped. */
static void test_drop_mid_batch_releases(void **state) {
    (void)state;
    kn_wr blob;
    kn_wr_init(&blob, 256, 0);
    standard_blob(&blob);
    kns_acq acq[] = {{0, 9, 1}};
    fixture f;
    take(&f, &blob, acq, 1);
    kn_records *out = knc_records_new(4);
    assert_int_equal(kns_drain(&f.sc, &f.p, out, 3), 3);
    assert_true(f.p.has_data);
    kns_part_drop(&f.p, KN_SHARE_RELEASE);
    assert_int_equal(f.p.acks.count, 1);
    assert_range(&f.p.acks, 0, 3, 9, KN_SHARE_RELEASE);
    kn_records_free(out);
    done(&f);
    kn_wr_free(&blob);

    /* after the first batch and the marker were read to their end: the
     * marker is a gap, the rest released */
    kn_wr_init(&blob, 256, 0);
    standard_blob(&blob);
    take(&f, &blob, acq, 1);
    out = knc_records_new(8);
    assert_int_equal(kns_drain(&f.sc, &f.p, out, 6), 6);
    kns_part_drop(&f.p, KN_SHARE_RELEASE);
    assert_int_equal(f.p.acks.count, 2);
    assert_range(&f.p.acks, 0, 5, 5, KNS_ACK_GAP);
    assert_range(&f.p.acks, 1, 7, 9, KN_SHARE_RELEASE);
    kn_records_free(out);
    done(&f);
    kn_wr_free(&blob);
}

/* Offsets missing inside a batch (compaction) are gaps. */
static void test_compacted_gap(void **state) {
    (void)state;
    kn_wr blob;
    kn_wr_init(&blob, 256, 0);
    static const int32_t d[] = {0, 3, 4};
    add_batch(&blob, 10, d, 3);
    kns_acq acq[] = {{10, 14, 1}};
    fixture f;
    take(&f, &blob, acq, 1);
    kn_records *out = knc_records_new(4);
    assert_int_equal(kns_drain(&f.sc, &f.p, out, 10), 3);
    assert_int_equal(f.p.acks.count, 1);
    assert_range(&f.p.acks, 0, 11, 12, KNS_ACK_GAP);
    kn_records_free(out);
    done(&f);
    kn_wr_free(&blob);
}

/* Malformed acquired ranges from the wire: a protocol error, nothing
 * taken. */
static void test_bad_ranges(void **state) {
    (void)state;
    kns_part p;
    memset(&p, 0, sizeof p);
    uint8_t *mem = kn_malloc(1);
    knc_buf *buf = knc_buf_from_mem(mem);
    kns_acq overlap[] = {{0, 5, 1}, {5, 9, 1}};
    kns_acq reversed[] = {{9, 5, 1}};
    kns_acq negative[] = {{-3, 5, 1}};
    assert_int_equal(kns_part_take(&p, buf, mem, 0, overlap, 2), KN_ERR__PROTOCOL);
    assert_int_equal(kns_part_take(&p, buf, mem, 0, reversed, 1), KN_ERR__PROTOCOL);
    assert_int_equal(kns_part_take(&p, buf, mem, 0, negative, 1), KN_ERR__PROTOCOL);
    assert_false(p.has_data);
    knc_buf_release(buf);
}

/* Adjacent acknowledgements of one type merge into one range. */
static void test_ranges_merge(void **state) {
    (void)state;
    kns_ranges r;
    memset(&r, 0, sizeof r);
    assert_int_equal(kns_ranges_add(&r, 1, 1, KN_SHARE_ACCEPT), 0);
    assert_int_equal(kns_ranges_add(&r, 2, 4, KN_SHARE_ACCEPT), 0);
    assert_int_equal(kns_ranges_add(&r, 5, 5, KN_SHARE_REJECT), 0);
    assert_int_equal(kns_ranges_add(&r, 7, 7, KN_SHARE_REJECT), 0);
    assert_int_equal(r.count, 3);
    assert_range(&r, 0, 1, 4, KN_SHARE_ACCEPT);
    assert_range(&r, 1, 5, 5, KN_SHARE_REJECT);
    assert_range(&r, 2, 7, 7, KN_SHARE_REJECT);
    kns_ranges_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_acquired),
        cmocka_unit_test(test_partial_acquisition),
        cmocka_unit_test(test_drop_mid_batch_releases),
        cmocka_unit_test(test_compacted_gap),
        cmocka_unit_test(test_bad_ranges),
        cmocka_unit_test(test_ranges_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

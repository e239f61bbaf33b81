/*
 * test_proto_roundtrip.c: every generated codec, every valid version,
 * both directions plus the data schemas: init -> encode -> decode ->
 * encode gives the same bytes, and so does a fully populated sample
 * (every field this version carries set to a non-default value). Also
 * checks the version gate and that decode consumes exactly what encode
 * wrote.
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"

typedef void (*init_fn)(void *);
typedef int (*encode_fn)(kn_wr *, const void *, int16_t);
typedef int (*decode_fn)(kn_rd *, kn_arena *, void *, int16_t);
typedef int (*sample_fn)(void *, kn_arena *, int16_t);

/* Large enough for any generated top-level struct. */
typedef union {
    max_align_t align;
    unsigned char bytes[4096];
} msg_buf;

/* Encodes m, decodes it into a fresh struct, re-encodes that, and
 * compares. Returns the encoded size. */
static size_t round_trip(const char *name, int16_t v, size_t size, const void *m, encode_fn enc,
                         decode_fn dec) {
    kn_wr w1, w2;
    kn_wr_init(&w1, 0, 0);
    kn_wr_init(&w2, 0, 0);
    int rc = enc(&w1, m, v);
    if (rc != 0)
        fail_msg("%s v%d: encode failed: %s", name, v, kn_err_name(rc));

    static msg_buf out;
    assert_true(size <= sizeof out.bytes);
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, w1.buf, w1.len);
    rc = dec(&r, &a, &out, v);
    if (rc != 0)
        fail_msg("%s v%d: decode failed: %s (%s at %zu)", name, v, kn_err_name(rc),
                 r.err_what ? r.err_what : "-", r.err_off);
    if (r.off != w1.len)
        fail_msg("%s v%d: decode consumed %zu of %zu bytes", name, v, r.off, w1.len);
    rc = enc(&w2, &out, v);
    if (rc != 0)
        fail_msg("%s v%d: re-encode failed: %s", name, v, kn_err_name(rc));
    if (w1.len != w2.len || (w1.len && memcmp(w1.buf, w2.buf, w1.len) != 0))
        fail_msg("%s v%d: re-encoded bytes differ (%zu vs %zu bytes)", name, v, w1.len, w2.len);
    size_t n = w1.len;
    kn_arena_destroy(&a);
    kn_wr_free(&w1);
    kn_wr_free(&w2);
    return n;
}

static void check_one(const char *name, int16_t lo, int16_t hi, size_t size, init_fn init, encode_fn enc,
                      decode_fn dec, sample_fn sample) {
    static msg_buf m;
    assert_true(size <= sizeof m.bytes);
    for (int16_t v = lo; v <= hi; v++) {
        init(&m);
        size_t empty = round_trip(name, v, size, &m, enc, dec);
        kn_arena a;
        kn_arena_init(&a, 0);
        assert_int_equal(sample(&m, &a, v), 0);
        size_t full = round_trip(name, v, size, &m, enc, dec);
        kn_arena_destroy(&a);
        /* A sample sets every field, so it can only be at least as big;
         * for any message with a field it must be bigger (this is what
         * proves the sample filler reached the fields). */
        assert_true(full >= empty);
    }
    /* Versions outside the range are refused both ways. */
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    init(&m);
    assert_int_equal(enc(&w, &m, (int16_t)(hi + 1)), KN_ERR__UNSUPPORTED_VERSION);
    assert_int_equal(enc(&w, &m, (int16_t)(lo - 1)), KN_ERR__UNSUPPORTED_VERSION);
    kn_wr_free(&w);
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, "", 0);
    assert_int_equal(dec(&r, &a, &m, (int16_t)(hi + 1)), KN_ERR__UNSUPPORTED_VERSION);
    kn_arena_destroy(&a);
}

static void test_all_apis(void **state) {
    size_t n = 0;
    for (size_t i = 0; i < KP_API_COUNT; i++) {
        const kp_api *api = kp_api_at(i);
        assert_non_null(api);
        assert_ptr_equal(kp_api_get(api->key), api);
        char name[128];
        snprintf(name, sizeof name, "%sRequest", api->name);
        check_one(name, api->min_version, api->max_version, api->req_size, api->req_init, api->req_encode,
                  api->req_decode, api->req_sample);
        snprintf(name, sizeof name, "%sResponse", api->name);
        check_one(name, api->min_version, api->max_version, api->resp_size, api->resp_init, api->resp_encode,
                  api->resp_decode, api->resp_sample);
        n++;
    }
    assert_null(kp_api_at(KP_API_COUNT));
    assert_true(n > 80);
}

static void test_data_types(void **state) {
    for (size_t i = 0; i < KP_DATA_TYPE_COUNT; i++) {
        const kp_data_type *d = kp_data_type_at(i);
        assert_ptr_equal(kp_data_type_get(d->name), d);
        check_one(d->name, d->min_version, d->max_version, d->size, d->init, d->encode, d->decode, d->sample);
    }
    assert_non_null(kp_data_type_get("ConsumerProtocolSubscription"));
    assert_non_null(kp_data_type_get("ConsumerProtocolAssignment"));
    assert_non_null(kp_data_type_get("RequestHeader"));
    assert_non_null(kp_data_type_get("ResponseHeader"));
    assert_null(kp_data_type_get("NoSuchSchema"));
}

static void test_api_table(void **state) {
    const kp_api *md = kp_api_get(KP_API_METADATA);
    assert_non_null(md);
    assert_int_equal(md->key, 3);
    assert_string_equal(md->name, "Metadata");
    assert_int_equal(md->first_flexible, 9);
    assert_int_equal(KP_API_API_VERSIONS, 18);
    const kp_api *av = kp_api_get(KP_API_API_VERSIONS);
    assert_int_equal(av->first_flexible, 3);
    assert_true(av->listeners & KP_LISTENER_BROKER);
    /* Removed ZooKeeper-era APIs (validVersions "none") have no entry. */
    assert_null(kp_api_get(4));
    assert_null(kp_api_get(-1));
    assert_null(kp_api_get(INT16_MAX));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_table),
        cmocka_unit_test(test_all_apis),
        cmocka_unit_test(test_data_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

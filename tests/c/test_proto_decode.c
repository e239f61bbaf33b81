/*
 * test_proto_decode.c: the generated decoders on hostile input. Every
 * proper prefix of a valid message must fail with KN_ERR__PROTOCOL at an
 * offset inside the prefix (each prefix sits in its own exactly-sized
 * heap block, so an out-of-bounds read trips ASan); array counts larger
 * than the bytes left are refused before allocating; allocation failure
 * surfaces as KN_ERR__NOMEM. Also the header helpers (header.h).
 */
#include "kn_test.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "proto/generated/kp_all.h"
#include "proto/header.h"

typedef union {
    max_align_t align;
    unsigned char bytes[4096];
} msg_buf;

/* Encodes the sample of api's response at v into w. */
static void encode_sample(const kp_api *api, int16_t v, kn_wr *w) {
    static msg_buf m;
    kn_arena a;
    kn_arena_init(&a, 0);
    assert_int_equal(api->resp_sample(&m, &a, v), 0);
    kn_wr_init(w, 0, 0);
    assert_int_equal(api->resp_encode(w, &m, v), 0);
    kn_arena_destroy(&a);
}

/* Decodes every proper prefix of the sample of api's response at v. */
static void check_prefixes(const kp_api *api, int16_t v) {
    kn_wr w;
    encode_sample(api, v, &w);
    static msg_buf out;
    for (size_t len = 0; len < w.len; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        assert_non_null(copy);
        memcpy(copy, w.buf, len);
        kn_arena a;
        kn_arena_init(&a, 0);
        kn_rd r;
        kn_rd_init(&r, copy, len);
        int rc = api->resp_decode(&r, &a, &out, v);
        if (rc != KN_ERR__PROTOCOL)
            fail_msg("%sResponse v%d: prefix %zu/%zu decoded with %s", api->name, v, len, w.len,
                     kn_err_name(rc));
        assert_non_null(r.err_what);
        assert_true(r.err_off <= len);
        kn_arena_destroy(&a);
        free(copy);
    }
    /* And the whole message still decodes. */
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, w.buf, w.len);
    assert_int_equal(api->resp_decode(&r, &a, &out, v), 0);
    kn_arena_destroy(&a);
    kn_wr_free(&w);
}

static void test_metadata_fetch_prefixes(void **state) {
    const kp_api *md = kp_api_get(KP_API_METADATA);
    for (int16_t v = md->min_version; v <= md->max_version; v++)
        check_prefixes(md, v);
    const kp_api *f = kp_api_get(KP_API_FETCH);
    for (int16_t v = f->min_version; v <= f->max_version; v++)
        check_prefixes(f, v);
}

/* Every other response, at its oldest and newest version. */
static void test_all_response_prefixes(void **state) {
    for (size_t i = 0; i < KP_API_COUNT; i++) {
        const kp_api *api = kp_api_at(i);
        check_prefixes(api, api->min_version);
        check_prefixes(api, api->max_version);
    }
}

static void test_huge_array_count(void **state) {
    /* Metadata v0 response: brokers count 0x7fffffff, then nothing. */
    static const uint8_t classic[] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    /* Metadata v9 (flexible): throttle, brokers compact count 2^28. */
    static const uint8_t compact[] = {0, 0, 0, 0, 0x81, 0x80, 0x80, 0x80, 0x01, 0x00};
    kp_MetadataResponse m;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, classic, sizeof classic);
    assert_int_equal(kp_MetadataResponse_decode(&r, &a, &m, 0), KN_ERR__PROTOCOL);
    assert_string_equal(r.err_what, "array length exceeds remaining bytes");
    assert_int_equal(r.err_off, 4);
    kn_rd_init(&r, compact, sizeof compact);
    assert_int_equal(kp_MetadataResponse_decode(&r, &a, &m, 9), KN_ERR__PROTOCOL);
    assert_string_equal(r.err_what, "array length exceeds remaining bytes");
    /* Nothing was allocated for either. */
    assert_int_equal(a.total, 0);
    kn_arena_destroy(&a);

    /* A negative classic length other than -1 is malformed. */
    static const uint8_t negative[] = {0xff, 0xff, 0xff, 0xfe};
    kn_arena_init(&a, 0);
    kn_rd_init(&r, negative, sizeof negative);
    assert_int_equal(kp_MetadataResponse_decode(&r, &a, &m, 0), KN_ERR__PROTOCOL);
    kn_arena_destroy(&a);
}

static void test_null_where_not_nullable(void **state) {
    /* Metadata v0 response: brokers null (not nullable in any version). */
    static const uint8_t null_brokers[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    kp_MetadataResponse m;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, null_brokers, sizeof null_brokers);
    assert_int_equal(kp_MetadataResponse_decode(&r, &a, &m, 0), KN_ERR__PROTOCOL);
    assert_string_equal(r.err_what, "null in a non-nullable array");
    kn_arena_destroy(&a);
}

static int fail_allocs;
static void *failing_malloc(size_t n) { return fail_allocs ? NULL : malloc(n); }
static void *failing_realloc(void *p, size_t n) { return fail_allocs ? NULL : realloc(p, n); }

static void test_nomem(void **state) {
    const kp_api *f = kp_api_get(KP_API_FETCH);
    kn_wr w;
    encode_sample(f, f->max_version, &w);
    static const kn_allocator failing = {failing_malloc, failing_realloc, free};
    kn_set_allocator(&failing);
    fail_allocs = 1;
    static msg_buf out;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, w.buf, w.len);
    int rc = f->resp_decode(&r, &a, &out, f->max_version);
    fail_allocs = 0;
    kn_set_allocator(NULL);
    assert_int_equal(rc, KN_ERR__NOMEM);
    kn_arena_destroy(&a);
    kn_wr_free(&w);
}

static void test_header_versions(void **state) {
    assert_int_equal(kp_request_header_version(KP_API_METADATA, 8), 1);
    assert_int_equal(kp_request_header_version(KP_API_METADATA, 9), 2);
    assert_int_equal(kp_response_header_version(KP_API_METADATA, 8), 0);
    assert_int_equal(kp_response_header_version(KP_API_METADATA, 9), 1);
    /* ApiVersions: flexible request header, but always a v0 response header. */
    assert_int_equal(kp_request_header_version(KP_API_API_VERSIONS, 3), 2);
    assert_int_equal(kp_response_header_version(KP_API_API_VERSIONS, 3), 0);
    assert_int_equal(kp_request_header_version(KP_API_METADATA, 14), -1);
    assert_int_equal(kp_request_header_version(4, 0), -1);
    assert_int_equal(kp_response_header_version(-3, 0), -1);

    kn_wr w;
    kn_wr_init(&w, 0, 0);
    size_t off;
    assert_int_equal(kp_request_frame_begin(&w, KP_API_METADATA, 99, 1, kn_str_c("x"), &off),
                     KN_ERR__UNSUPPORTED_VERSION);
    assert_int_equal(kp_request_frame_end(&w, 100), KN_ERR__INVALID_ARG);
    kn_wr_free(&w);
}

static void test_response_header_decode(void **state) {
    static const uint8_t v1[] = {0x00, 0x00, 0x01, 0x02, 0x00, 0xaa};
    int32_t corr = 0;
    kn_rd r;
    kn_rd_init(&r, v1, sizeof v1);
    assert_int_equal(kp_response_header_decode(&r, KP_API_METADATA, 12, &corr), 0);
    assert_int_equal(corr, 0x102);
    assert_int_equal(r.off, 5); /* correlation id + empty tag section */
    kn_rd_init(&r, v1, sizeof v1);
    assert_int_equal(kp_response_header_decode(&r, KP_API_API_VERSIONS, 3, &corr), 0);
    assert_int_equal(r.off, 4); /* v0 header: no tag section */
    kn_rd_init(&r, v1, 3);
    assert_int_equal(kp_response_header_decode(&r, KP_API_METADATA, 12, &corr), KN_ERR__PROTOCOL);

    char buf[128];
    kp_proto_errstr(buf, sizeof buf, "Metadata", 12, "response", &r);
    assert_string_equal(buf, "protocol error: Metadata v12 response: int32 past end at byte offset 0");
    kp_proto_errstr(buf, 10, "Metadata", 12, "response", &r);
    assert_int_equal(strlen(buf), 9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metadata_fetch_prefixes),
        cmocka_unit_test(test_all_response_prefixes),
        cmocka_unit_test(test_huge_array_count),
        cmocka_unit_test(test_null_where_not_nullable),
        cmocka_unit_test(test_nomem),
        cmocka_unit_test(test_header_versions),
        cmocka_unit_test(test_response_header_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * fuzz_data_types.c: libFuzzer target for the generated codecs of the
 * schemas that are not API messages (core/proto/generated kp_data_type:
 * the consumer protocol's Subscription and Assignment blobs a group
 * member decodes from other members, request and response headers, and
 * the rest of the table). Input: 1 byte schema index, 2 bytes version
 * (both folded into range), then the bytes. As fuzz_response: what
 * decodes re-encodes to a fixed point; a failure is a protocol error
 * with a reason and an offset inside the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "proto/generated/kp_apis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef union {
    max_align_t align;
    unsigned char bytes[4096];
} msg_buf;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3)
        return 0;
    const kp_data_type *dt = kp_data_type_at(data[0] % KP_DATA_TYPE_COUNT);
    if (!dt || dt->size > sizeof(msg_buf))
        abort();
    uint16_t ver_in = (uint16_t)((data[1] << 8) | data[2]);
    int16_t v = (int16_t)(dt->min_version + ver_in % (dt->max_version - dt->min_version + 1));
    size_t n = size - 3;
    uint8_t *body = malloc(n ? n : 1);
    if (!body)
        return 0;
    memcpy(body, data + 3, n);

    static msg_buf m, m2;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, body, n);
    dt->init(&m);
    int rc = dt->decode(&r, &a, &m, v);
    if (rc == 0) {
        if (r.off > n)
            abort();
        kn_wr w1, w2;
        kn_wr_init(&w1, 0, 0);
        kn_wr_init(&w2, 0, 0);
        if (dt->encode(&w1, &m, v) != 0)
            abort();
        kn_rd r2;
        kn_rd_init(&r2, w1.buf, w1.len);
        dt->init(&m2);
        if (dt->decode(&r2, &a, &m2, v) != 0 || r2.off != w1.len)
            abort();
        if (dt->encode(&w2, &m2, v) != 0 || w1.len != w2.len || (w1.len && memcmp(w1.buf, w2.buf, w1.len) != 0))
            abort();
        kn_wr_free(&w1);
        kn_wr_free(&w2);
    } else if (rc == KN_ERR__PROTOCOL) {
        if (!r.err_what || r.err_off > n)
            abort();
    }
    kn_arena_destroy(&a);
    free(body);
    return 0;
}

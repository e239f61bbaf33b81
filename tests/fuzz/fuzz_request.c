/*
 * fuzz_request.c: libFuzzer target for the generated request codecs
 * (core/proto/generated), the encoders' round trip. Input: 2 bytes API
 * key, 2 bytes version (big-endian, folded into the valid ranges so
 * every input reaches a codec), then a request body. What decodes is a
 * request struct the fuzzer built: it must encode, the encoding must
 * decode to a struct that encodes to the same bytes (encode(decode(x))
 * is a fixed point), and the second decode must consume exactly what
 * the encoder wrote. A decode failure must be a protocol error with a
 * reason and an offset inside the input.
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
    if (size < 4)
        return 0;
    uint16_t key_in = (uint16_t)((data[0] << 8) | data[1]);
    uint16_t ver_in = (uint16_t)((data[2] << 8) | data[3]);
    const kp_api *api = kp_api_at(key_in % KP_API_COUNT);
    if (api->req_size > sizeof(msg_buf))
        abort(); /* the harness's buffer must hold every request struct */
    int16_t v = (int16_t)(api->min_version + ver_in % (api->max_version - api->min_version + 1));
    /* The body in its own heap block so reads past it are caught. */
    size_t n = size - 4;
    uint8_t *body = malloc(n ? n : 1);
    if (!body)
        return 0;
    memcpy(body, data + 4, n);

    static msg_buf m, m2;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, body, n);
    api->req_init(&m);
    int rc = api->req_decode(&r, &a, &m, v);
    if (rc == 0) {
        if (r.off > n)
            abort();
        kn_wr w1, w2;
        kn_wr_init(&w1, 0, 0);
        kn_wr_init(&w2, 0, 0);
        if (api->req_encode(&w1, &m, v) != 0)
            abort();
        kn_rd r2;
        kn_rd_init(&r2, w1.buf, w1.len);
        api->req_init(&m2);
        if (api->req_decode(&r2, &a, &m2, v) != 0 || r2.off != w1.len)
            abort();
        if (api->req_encode(&w2, &m2, v) != 0 || w1.len != w2.len ||
            (w1.len && memcmp(w1.buf, w2.buf, w1.len) != 0))
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

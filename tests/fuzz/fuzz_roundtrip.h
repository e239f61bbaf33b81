/*
 * fuzz_roundtrip.h: the check every generated-codec fuzz target makes
 * (fuzz_request, fuzz_response, fuzz_data_types), kept in one place:
 * the input body, copied into its own heap block so reads past it are
 * caught, is decoded at version v; what decodes must encode, the
 * encoding must decode to a struct that encodes to the same bytes
 * (encode(decode(x)) is a fixed point) and the second decode must
 * consume exactly what the encoder wrote; a decode failure must be a
 * protocol error with a reason and an offset inside the input. Any
 * breach aborts (the fuzzer's crash). Header-only: each target is built
 * alone, with libFuzzer or with replay_main.c.
 */
#ifndef KN_FUZZ_ROUNDTRIP_H
#define KN_FUZZ_ROUNDTRIP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "reader.h"
#include "writer.h"

/* One generated codec: init may be NULL (the decoder fills the struct). */
typedef struct fz_codec {
    size_t size; /* the message struct's size */
    void (*init)(void *);
    int (*encode)(kn_wr *, const void *, int16_t);
    int (*decode)(kn_rd *, kn_arena *, void *, int16_t);
} fz_codec;

typedef union {
    max_align_t align;
    unsigned char bytes[4096];
} fz_msg_buf;

static inline void fz_roundtrip(const fz_codec *c, int16_t v, const uint8_t *data, size_t n) {
    if (c->size > sizeof(fz_msg_buf))
        abort(); /* the harness's buffer must hold every message struct */
    uint8_t *body = malloc(n ? n : 1);
    if (!body)
        return;
    memcpy(body, data, n);
    static fz_msg_buf m, m2;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, body, n);
    if (c->init)
        c->init(&m);
    int rc = c->decode(&r, &a, &m, v);
    if (rc == 0) {
        if (r.off > n)
            abort();
        kn_wr w1, w2;
        kn_wr_init(&w1, 0, 0);
        kn_wr_init(&w2, 0, 0);
        /* A decoded message always re-encodes: everything the decoder
         * accepts, the encoder must be able to write back. */
        if (c->encode(&w1, &m, v) != 0)
            abort();
        kn_rd r2;
        kn_rd_init(&r2, w1.buf, w1.len);
        if (c->init)
            c->init(&m2);
        if (c->decode(&r2, &a, &m2, v) != 0 || r2.off != w1.len)
            abort();
        if (c->encode(&w2, &m2, v) != 0 || w1.len != w2.len || (w1.len && memcmp(w1.buf, w2.buf, w1.len) != 0))
            abort();
        kn_wr_free(&w1);
        kn_wr_free(&w2);
    } else if (rc == KN_ERR__PROTOCOL) {
        if (!r.err_what || r.err_off > n)
            abort();
    }
    kn_arena_destroy(&a);
    free(body);
}

#endif

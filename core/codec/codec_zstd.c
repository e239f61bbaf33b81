/*
 * codec_zstd.c: zstd through libzstd. Compression is one-shot (the frame
 * records its content size; Java reads it either way). Decompression is
 * streaming, because Java's ZstdOutputStream writes frames without a
 * content size, and it continues across concatenated frames.
 */
#include <zstd.h>

#include "codec/codec.h"
#include "error.h"

/* Largest window a frame may ask for: 2^27 = 128 MiB, zstd's own
 * default limit without the long-distance mode. Stated explicitly so a
 * crafted frame cannot make us allocate more. */
#define ZS_WINDOW_LOG_MAX 27

static int zs_compress(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                       size_t errsize) {
    size_t bound = ZSTD_compressBound(len);
    if (!kn_wr_grow(out, bound)) {
        kn_errstr_set(errstr, errsize, "zstd: compressed output over the %zu byte cap", out->max);
        return out->err;
    }
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (!cctx) {
        kn_errstr_set(errstr, errsize, "zstd: out of memory");
        return KN_ERR__NOMEM;
    }
    size_t n = ZSTD_compressCCtx(cctx, out->buf + out->len, bound, in, len, level);
    ZSTD_freeCCtx(cctx);
    if (ZSTD_isError(n)) {
        kn_errstr_set(errstr, errsize, "zstd: %s", ZSTD_getErrorName(n));
        return KN_ERR__FAIL;
    }
    out->len += n;
    return 0;
}

static int zs_decompress(const uint8_t *in, size_t len, kn_wr *out, char *errstr,
                         size_t errsize) {
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!dctx) {
        kn_errstr_set(errstr, errsize, "zstd: out of memory");
        return KN_ERR__NOMEM;
    }
    ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, ZS_WINDOW_LOG_MAX);
    ZSTD_inBuffer ib = {in, len, 0};
    int err = 0;
    size_t r = 1; /* non-zero: a frame is unfinished */
    for (;;) {
        /* At the cap, decode into a one-byte probe: the frame may
         * still end without more output, which is not an overflow. */
        uint8_t probe;
        size_t room = kn_codec_room(out, ZSTD_DStreamOutSize());
        bool probing = room == 0;
        if (probing && out->err) {
            err = kn_codec_room_fail(&kn_codec_zstd, out, errstr, errsize);
            break;
        }
        ZSTD_outBuffer ob = {probing ? &probe : out->buf + out->len, probing ? 1 : room, 0};
        size_t before_in = ib.pos;
        r = ZSTD_decompressStream(dctx, &ob, &ib);
        if (ZSTD_isError(r)) {
            kn_errstr_set(errstr, errsize, "zstd: corrupt frame (%s)", ZSTD_getErrorName(r));
            err = KN_ERR__BAD_BATCH;
            break;
        }
        if (probing && ob.pos) {
            err = kn_codec_room_fail(&kn_codec_zstd, out, errstr, errsize);
            break;
        }
        if (!probing)
            out->len += ob.pos;
        if (r == 0 && ib.pos == ib.size)
            break; /* last frame complete */
        if (ob.pos == 0 && ib.pos == before_in) {
            kn_errstr_set(errstr, errsize, "zstd: truncated frame");
            err = KN_ERR__BAD_BATCH;
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    return err;
}

const kn_codec kn_codec_zstd = {
    .id = KN_CODEC_ZSTD,
    .name = "zstd",
    .level_min = -131072,
    .level_max = 22,
    .level_default = 3,
    .compress = zs_compress,
    .decompress = zs_decompress,
};

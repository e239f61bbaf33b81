/*
 * codec_lz4.c: lz4 through liblz4's frame API (the LZ4 frame format,
 * magic 0x184D2204), which is what Kafka uses for magic v2 batches.
 *
 * We write frames Java's Lz4BlockInputStream accepts: independent
 * blocks (it rejects linked blocks), 64 KiB maximum block size, no
 * content size and no content checksum (Java writes neither). Decoding
 * is liblz4's own, so any valid frame is read, Java's included;
 * concatenated frames are accepted.
 */
#include <lz4frame.h>

#include "codec/codec.h"
#include "error.h"

#define LZ4_CHUNK ((size_t)64 * 1024)

static int lz4c_compress(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                         size_t errsize) {
    LZ4F_preferences_t prefs = {0};
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    prefs.frameInfo.frameType = LZ4F_frame;
    prefs.compressionLevel = level;
    size_t bound = LZ4F_compressFrameBound(len, &prefs);
    if (!kn_wr_grow(out, bound)) {
        kn_errstr_set(errstr, errsize, "lz4: compressed output over the %zu byte cap", out->max);
        return out->err;
    }
    size_t n = LZ4F_compressFrame(out->buf + out->len, bound, in, len, &prefs);
    if (LZ4F_isError(n)) {
        kn_errstr_set(errstr, errsize, "lz4: %s", LZ4F_getErrorName(n));
        return KN_ERR__FAIL;
    }
    out->len += n;
    return 0;
}

static int lz4c_decompress(const uint8_t *in, size_t len, kn_wr *out, char *errstr,
                           size_t errsize) {
    LZ4F_dctx *dctx = NULL;
    size_t r = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
    if (LZ4F_isError(r)) {
        kn_errstr_set(errstr, errsize, "lz4: %s", LZ4F_getErrorName(r));
        return KN_ERR__NOMEM;
    }
    int err = 0;
    size_t off = 0;
    for (;;) {
        /* At the cap, decode into a one-byte probe: the frame may still
         * end without more output, which is not an overflow. */
        uint8_t probe;
        size_t room = kn_codec_room(out, LZ4_CHUNK);
        bool probing = room == 0;
        if (probing && out->err) {
            err = kn_codec_room_fail(&kn_codec_lz4, out, errstr, errsize);
            break;
        }
        size_t src = len - off, dst = probing ? 1 : room;
        /* r: liblz4's hint of input still expected, 0 once a frame ends */
        r = LZ4F_decompress(dctx, probing ? &probe : out->buf + out->len, &dst, in + off, &src,
                            NULL);
        if (LZ4F_isError(r)) {
            kn_errstr_set(errstr, errsize, "lz4: corrupt frame (%s)", LZ4F_getErrorName(r));
            err = KN_ERR__BAD_BATCH;
            break;
        }
        if (probing && dst) {
            err = kn_codec_room_fail(&kn_codec_lz4, out, errstr, errsize);
            break;
        }
        off += src;
        if (!probing)
            out->len += dst;
        if (r == 0 && off == len)
            break; /* last frame complete; r == 0 with input left: next frame */
        if (src == 0 && dst == 0) {
            kn_errstr_set(errstr, errsize, "lz4: truncated frame");
            err = KN_ERR__BAD_BATCH;
            break;
        }
    }
    LZ4F_freeDecompressionContext(dctx);
    return err;
}

const kn_codec kn_codec_lz4 = {
    .id = KN_CODEC_LZ4,
    .name = "lz4",
    .level_min = 1,
    .level_max = 17,
    .level_default = 9,
    .compress = lz4c_compress,
    .decompress = lz4c_decompress,
};

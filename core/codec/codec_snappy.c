/*
 * codec_snappy.c: snappy through libsnappy's C API, in the framing Java
 * producers write (xerial snappy-java SnappyOutputStream):
 *
 *   magic   0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00   (8 bytes)
 *   version int32 BE (1), compatible version int32 BE (1)
 *   chunks  int32 BE compressed length + one raw snappy block, repeated
 *
 * We write that framing (32 KiB uncompressed per chunk, as snappy-java's
 * default) so Java consumers read our batches with the stream they use
 * for Java-produced ones. Decompression detects the magic and otherwise
 * treats the input as one raw snappy block (what librdkafka and other
 * non-Java clients produce).
 */
#include <snappy-c.h>
#include <string.h>

#include "codec/codec.h"
#include "error.h"

static const uint8_t sn_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
#define SN_HEADER_LEN 16
#define SN_CHUNK ((size_t)32 * 1024)

static uint32_t sn_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int sn_compress(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                       size_t errsize) {
    kn_wr_raw(out, sn_magic, sizeof sn_magic);
    kn_wr_i32(out, 1);
    kn_wr_i32(out, 1);
    size_t off = 0;
    while (kn_wr_ok(out) && off < len) {
        size_t n = len - off < SN_CHUNK ? len - off : SN_CHUNK;
        size_t bound = snappy_max_compressed_length(n);
        if (!kn_wr_grow(out, 4 + bound))
            break;
        size_t at = out->len;
        size_t clen = bound;
        if (snappy_compress((const char *)in + off, n, (char *)out->buf + at + 4, &clen) !=
            SNAPPY_OK) {
            kn_errstr_set(errstr, errsize, "snappy: compress failed");
            return KN_ERR__FAIL;
        }
        kn_wr_put_u32_at(out->buf + at, (uint32_t)clen);
        out->len = at + 4 + clen;
        off += n;
    }
    if (!kn_wr_ok(out)) {
        kn_errstr_set(errstr, errsize, "snappy: compressed output over the %zu byte cap",
                      out->max);
        return out->err;
    }
    return 0;
}

/* Uncompresses one raw snappy block, appending to out. */
static int sn_block(const uint8_t *in, size_t len, kn_wr *out, char *errstr, size_t errsize) {
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, len, &ulen) != SNAPPY_OK) {
        kn_errstr_set(errstr, errsize, "snappy: corrupt block header");
        return KN_ERR__BAD_BATCH;
    }
    if (ulen > out->max - out->len) {
        kn_errstr_set(errstr, errsize,
                      "snappy: decompressed data exceeds the %zu byte cap (block of %zu bytes)",
                      out->max, ulen);
        return KN_ERR__BAD_BATCH;
    }
    if (ulen && !kn_wr_grow(out, ulen))
        return kn_codec_room_fail(&kn_codec_snappy, out, errstr, errsize);
    size_t got = ulen;
    char empty; /* an empty block still gets validated; out->buf may be NULL */
    char *dst = ulen ? (char *)out->buf + out->len : &empty;
    if (snappy_uncompress((const char *)in, len, dst, &got) != SNAPPY_OK ||
        got != ulen) {
        kn_errstr_set(errstr, errsize, "snappy: corrupt block");
        return KN_ERR__BAD_BATCH;
    }
    out->len += got;
    return 0;
}

static int sn_decompress(const uint8_t *in, size_t len, kn_wr *out, char *errstr,
                         size_t errsize) {
    if (len < SN_HEADER_LEN || memcmp(in, sn_magic, sizeof sn_magic) != 0)
        return sn_block(in, len, out, errstr, errsize);
    size_t off = SN_HEADER_LEN;
    while (off < len) {
        if (len - off < 4) {
            kn_errstr_set(errstr, errsize, "snappy: truncated chunk length at byte %zu", off);
            return KN_ERR__BAD_BATCH;
        }
        uint32_t clen = sn_be32(in + off);
        off += 4;
        if (clen > len - off) {
            kn_errstr_set(errstr, errsize,
                          "snappy: chunk of %u bytes at byte %zu runs past the end (%zu)", clen,
                          off - 4, len);
            return KN_ERR__BAD_BATCH;
        }
        int err = sn_block(in + off, clen, out, errstr, errsize);
        if (err)
            return err;
        off += clen;
    }
    return 0;
}

const kn_codec kn_codec_snappy = {
    .id = KN_CODEC_SNAPPY,
    .name = "snappy",
    .level_min = 0,
    .level_max = 0,
    .level_default = 0,
    .compress = sn_compress,
    .decompress = sn_decompress,
};

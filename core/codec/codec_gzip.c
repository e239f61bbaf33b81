/*
 * codec_gzip.c: gzip (RFC 1952, not raw deflate) through zlib, as Java's
 * GZIPOutputStream/GZIPInputStream write and read it. Decompression
 * accepts concatenated gzip members, as GZIPInputStream does.
 */
#include <limits.h>
#include <zlib.h>

#include "codec/codec.h"
#include "error.h"
#include "kn_alloc.h"

/* windowBits 15 with +16 selects the gzip wrapper in zlib. */
#define GZ_WBITS (15 + 16)
#define GZ_CHUNK ((size_t)64 * 1024)

/* zlib's allocations go through kn_alloc so tests can inject failures. */
static voidpf gz_alloc(voidpf opaque, uInt items, uInt size) {
    (void)opaque;
    return kn_calloc(items, size);
}
static void gz_free(voidpf opaque, voidpf p) {
    (void)opaque;
    kn_free(p);
}

static int gz_compress(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                       size_t errsize) {
    z_stream zs = {0};
    zs.zalloc = gz_alloc;
    zs.zfree = gz_free;
    int zr = deflateInit2(&zs, level, Z_DEFLATED, GZ_WBITS, 8, Z_DEFAULT_STRATEGY);
    if (zr != Z_OK) {
        kn_errstr_set(errstr, errsize, "gzip: deflateInit2 failed (%d)", zr);
        return zr == Z_MEM_ERROR ? KN_ERR__NOMEM : KN_ERR__FAIL;
    }
    int err = 0;
    zs.next_in = (Bytef *)(uintptr_t)in;
    for (;;) {
        /* zlib counts in uInt: feed at most UINT_MAX per call. */
        if (zs.avail_in == 0 && len) {
            size_t n = len > UINT_MAX ? UINT_MAX : len;
            zs.avail_in = (uInt)n;
            len -= n;
        }
        size_t room = kn_codec_room(out, deflateBound(&zs, zs.avail_in) + 64);
        if (room == 0) {
            err = out->err ? out->err : KN_ERR__INVALID_ARG;
            kn_errstr_set(errstr, errsize, "gzip: compressed output over the %zu byte cap",
                          out->max);
            break;
        }
        if (room > UINT_MAX)
            room = UINT_MAX;
        zs.next_out = out->buf + out->len;
        zs.avail_out = (uInt)room;
        zr = deflate(&zs, len ? Z_NO_FLUSH : Z_FINISH);
        out->len += room - zs.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            kn_errstr_set(errstr, errsize, "gzip: deflate failed (%d)", zr);
            err = KN_ERR__FAIL;
            break;
        }
    }
    deflateEnd(&zs);
    return err;
}

static int gz_decompress(const uint8_t *in, size_t len, kn_wr *out, char *errstr,
                         size_t errsize) {
    z_stream zs = {0};
    zs.zalloc = gz_alloc;
    zs.zfree = gz_free;
    int zr = inflateInit2(&zs, GZ_WBITS);
    if (zr != Z_OK) {
        kn_errstr_set(errstr, errsize, "gzip: inflateInit2 failed (%d)", zr);
        return zr == Z_MEM_ERROR ? KN_ERR__NOMEM : KN_ERR__FAIL;
    }
    int err = 0;
    zs.next_in = (Bytef *)(uintptr_t)in;
    size_t left = len;
    for (;;) {
        if (zs.avail_in == 0 && left) {
            size_t n = left > UINT_MAX ? UINT_MAX : left;
            zs.avail_in = (uInt)n;
            left -= n;
        }
        /* At the cap, decode into a one-byte probe: the stream may
         * still end without more output, which is not an overflow. */
        uint8_t probe;
        size_t room = kn_codec_room(out, GZ_CHUNK);
        bool probing = room == 0;
        if (probing && out->err) {
            err = kn_codec_room_fail(&kn_codec_gzip, out, errstr, errsize);
            break;
        }
        if (room > UINT_MAX)
            room = UINT_MAX;
        zs.next_out = probing ? &probe : out->buf + out->len;
        zs.avail_out = probing ? 1 : (uInt)room;
        zr = inflate(&zs, Z_NO_FLUSH);
        if (probing && zs.avail_out == 0) {
            err = kn_codec_room_fail(&kn_codec_gzip, out, errstr, errsize);
            break;
        }
        if (!probing)
            out->len += room - zs.avail_out;
        if (zr == Z_STREAM_END) {
            if (zs.avail_in == 0 && left == 0)
                break;
            /* Another gzip member follows. */
            if (inflateReset(&zs) != Z_OK) {
                err = KN_ERR__FAIL;
                break;
            }
            continue;
        }
        if (zr == Z_BUF_ERROR && zs.avail_out != 0) {
            /* No progress possible with output room left: input ended
             * inside the stream. */
            kn_errstr_set(errstr, errsize, "gzip: truncated stream");
            err = KN_ERR__BAD_BATCH;
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            kn_errstr_set(errstr, errsize, "gzip: corrupt data (%s)", zs.msg ? zs.msg : "inflate");
            err = zr == Z_MEM_ERROR ? KN_ERR__NOMEM : KN_ERR__BAD_BATCH;
            break;
        }
    }
    inflateEnd(&zs);
    return err;
}

const kn_codec kn_codec_gzip = {
    .id = KN_CODEC_GZIP,
    .name = "gzip",
    .level_min = 1,
    .level_max = 9,
    .level_default = -1,
    .compress = gz_compress,
    .decompress = gz_decompress,
};

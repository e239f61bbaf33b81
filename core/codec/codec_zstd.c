/*
 * codec_zstd.c: zstd through libzstd. Compression is one-shot (the frame
 * records its content size; Java reads it either way). Decompression is
 * streaming, because Java's ZstdOutputStream writes frames without a
 * content size, and it continues across concatenated frames.
 *
 * Creating a zstd context costs ~130 us (more than decoding a small
 * batch), so each thread keeps one compression and one decompression
 * context, reset between uses. They are freed when the thread exits
 * (pthread key destructor) or by kn_codec_thread_cleanup(), and dropped
 * after use if a frame made them large (a big window), so an idle
 * thread holds at most ZS_KEEP_MAX bytes.
 */
#include <pthread.h>
#include <zstd.h>

#include "codec/codec.h"
#include "error.h"
#include "kn_alloc.h"

/* Largest window a frame may ask for: 2^27 = 128 MiB, zstd's own
 * default limit without the long-distance mode. Stated explicitly so a
 * crafted frame cannot make us allocate more. */
#define ZS_WINDOW_LOG_MAX 27

#define ZS_KEEP_MAX ((size_t)8 << 20)

typedef struct zs_cache {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
} zs_cache;

static pthread_key_t zs_key;
static pthread_once_t zs_once = PTHREAD_ONCE_INIT;
static int zs_key_ok;

static void zs_cache_free(void *p) {
    zs_cache *c = p;
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    kn_free(c);
}

static void zs_key_init(void) { zs_key_ok = pthread_key_create(&zs_key, zs_cache_free) == 0; }

/* This thread's cache, created on first use; NULL if that fails (the
 * caller then uses a one-off context). */
static zs_cache *zs_cache_get(void) {
    pthread_once(&zs_once, zs_key_init);
    if (!zs_key_ok)
        return NULL;
    zs_cache *c = pthread_getspecific(zs_key);
    if (!c) {
        c = kn_calloc(1, sizeof *c);
        if (c && pthread_setspecific(zs_key, c) != 0) {
            kn_free(c);
            c = NULL;
        }
    }
    return c;
}

void kn_codec_zstd_thread_cleanup(void) {
    pthread_once(&zs_once, zs_key_init);
    if (!zs_key_ok)
        return;
    zs_cache *c = pthread_getspecific(zs_key);
    if (c) {
        pthread_setspecific(zs_key, NULL);
        zs_cache_free(c);
    }
}

static ZSTD_CCtx *zs_cctx_take(void) {
    zs_cache *c = zs_cache_get();
    if (c && c->cctx) {
        ZSTD_CCtx *x = c->cctx;
        c->cctx = NULL;
        ZSTD_CCtx_reset(x, ZSTD_reset_session_and_parameters);
        return x;
    }
    return ZSTD_createCCtx();
}

static void zs_cctx_give(ZSTD_CCtx *x) {
    zs_cache *c = zs_cache_get();
    if (c && !c->cctx && ZSTD_sizeof_CCtx(x) <= ZS_KEEP_MAX)
        c->cctx = x;
    else
        ZSTD_freeCCtx(x);
}

static ZSTD_DCtx *zs_dctx_take(void) {
    zs_cache *c = zs_cache_get();
    if (c && c->dctx) {
        ZSTD_DCtx *x = c->dctx;
        c->dctx = NULL;
        ZSTD_DCtx_reset(x, ZSTD_reset_session_and_parameters);
        return x;
    }
    return ZSTD_createDCtx();
}

static void zs_dctx_give(ZSTD_DCtx *x) {
    zs_cache *c = zs_cache_get();
    if (c && !c->dctx && ZSTD_sizeof_DCtx(x) <= ZS_KEEP_MAX)
        c->dctx = x;
    else
        ZSTD_freeDCtx(x);
}

static int zs_compress(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                       size_t errsize) {
    size_t bound = ZSTD_compressBound(len);
    if (!kn_wr_grow(out, bound)) {
        kn_errstr_set(errstr, errsize, "zstd: compressed output over the %zu byte cap", out->max);
        return out->err;
    }
    ZSTD_CCtx *cctx = zs_cctx_take();
    if (!cctx) {
        kn_errstr_set(errstr, errsize, "zstd: out of memory");
        return KN_ERR__NOMEM;
    }
    size_t n = ZSTD_compressCCtx(cctx, out->buf + out->len, bound, in, len, level);
    zs_cctx_give(cctx);
    if (ZSTD_isError(n)) {
        kn_errstr_set(errstr, errsize, "zstd: %s", ZSTD_getErrorName(n));
        return KN_ERR__FAIL;
    }
    out->len += n;
    return 0;
}

static int zs_decompress(const uint8_t *in, size_t len, kn_wr *out, char *errstr,
                         size_t errsize) {
    ZSTD_DCtx *dctx = zs_dctx_take();
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
    zs_dctx_give(dctx);
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

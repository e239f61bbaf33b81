/*
 * codec.c: the codec registry (id and name lookup), level validation,
 * the "none" codec, and the output-room helpers shared by the codecs.
 */
#include "codec/codec.h"

#include <string.h>

#include "error.h"

static int none_compress(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                         size_t errsize) {
    kn_wr_raw(out, in, len);
    if (!kn_wr_ok(out)) {
        kn_errstr_set(errstr, errsize, "none: output over %zu bytes", out->max);
        return out->err;
    }
    return 0;
}

static int none_decompress(const uint8_t *in, size_t len, kn_wr *out, char *errstr,
                           size_t errsize) {
    if (len > out->max - out->len) {
        kn_errstr_set(errstr, errsize, "none: %zu bytes exceed the %zu byte cap", len, out->max);
        return KN_ERR__BAD_BATCH;
    }
    kn_wr_raw(out, in, len);
    return kn_wr_ok(out) ? 0 : KN_ERR__NOMEM;
}

const kn_codec kn_codec_none = {
    .id = KN_CODEC_NONE,
    .name = "none",
    .level_min = 0,
    .level_max = 0,
    .level_default = 0,
    .compress = none_compress,
    .decompress = none_decompress,
};

static const kn_codec *const codec_table[KN_CODEC_COUNT] = {
    &kn_codec_none, &kn_codec_gzip, &kn_codec_snappy, &kn_codec_lz4, &kn_codec_zstd,
};

const kn_codec *kn_codec_get(int id) {
    if (id < 0 || id >= KN_CODEC_COUNT)
        return NULL;
    return codec_table[id];
}

const kn_codec *kn_codec_by_name(const char *name) {
    if (!name)
        return NULL;
    for (int i = 0; i < KN_CODEC_COUNT; i++)
        if (strcmp(codec_table[i]->name, name) == 0)
            return codec_table[i];
    return NULL;
}

bool kn_codec_level_valid(const kn_codec *c, int level) {
    /* Java's gzip also takes -1, Deflater.DEFAULT_COMPRESSION. */
    if (c->id == KN_CODEC_GZIP && level == -1)
        return true;
    return level >= c->level_min && level <= c->level_max;
}

void kn_codec_thread_cleanup(void) { kn_codec_zstd_thread_cleanup(); }

size_t kn_codec_room(kn_wr *w, size_t want) {
    if (w->err || w->len >= w->max)
        return 0;
    size_t left = w->max - w->len;
    if (want > left)
        want = left;
    if (w->cap - w->len < want && !kn_wr_grow(w, want))
        return 0;
    size_t cap = w->cap < w->max ? w->cap : w->max;
    return cap - w->len;
}

int kn_codec_room_fail(const kn_codec *c, const kn_wr *w, char *errstr, size_t errsize) {
    if (w->err == KN_ERR__NOMEM) {
        kn_errstr_set(errstr, errsize, "%s: out of memory decompressing", c->name);
        return KN_ERR__NOMEM;
    }
    kn_errstr_set(errstr, errsize, "%s: decompressed data exceeds the %zu byte cap", c->name,
                  w->max);
    return KN_ERR__BAD_BATCH;
}

/*
 * codec.h: the compression codecs of Kafka record batches, one small
 * vtable per codec (gzip, snappy, lz4, zstd, and "none"), numbered as
 * Kafka numbers them in the batch attributes (bits 0-2).
 *
 * Output always goes to a caller-owned kn_wr and is appended after what
 * it already holds. The writer's max is the hard limit on output: a
 * decompression that would exceed it stops and fails, so a small
 * compressed "bomb" from the wire cannot exhaust memory. Codecs own no
 * memory between calls, except zstd, which keeps one context pair per
 * thread because creating one costs more than decoding a small batch
 * (see kn_codec_thread_cleanup).
 *
 * Levels follow Java 4.x (compression.<codec>.level): gzip 1..9 or -1
 * (zlib's default, 6), lz4 1..17 (default 9), zstd -131072..22
 * (default 3). Snappy and none have no level (0 is passed).
 */
#ifndef KN_CODEC_H
#define KN_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

typedef enum kn_codec_id {
    KN_CODEC_NONE = 0,
    KN_CODEC_GZIP = 1,
    KN_CODEC_SNAPPY = 2,
    KN_CODEC_LZ4 = 3,
    KN_CODEC_ZSTD = 4,
} kn_codec_id;

#define KN_CODEC_COUNT 5

typedef struct kn_codec {
    kn_codec_id id;
    const char *name; /* compression.type value: "gzip", ... */
    int level_min, level_max, level_default;
    /* Appends the compressed form of in[0..len) to out. level must be
     * valid (kn_codec_level_valid). Returns 0, KN_ERR__NOMEM,
     * KN_ERR__INVALID_ARG (out's cap reached) or KN_ERR__FAIL (library
     * error), with errstr filled on failure. */
    int (*compress)(const uint8_t *in, size_t len, int level, kn_wr *out, char *errstr,
                    size_t errsize);
    /* Appends the decompressed form of in[0..len) to out. Returns 0,
     * KN_ERR__BAD_BATCH (corrupt input, or output beyond out->max: the
     * errstr says which) or KN_ERR__NOMEM. */
    int (*decompress)(const uint8_t *in, size_t len, kn_wr *out, char *errstr, size_t errsize);
} kn_codec;

/* The codec with Kafka id `id` (0..4), or NULL. Static storage. */
const kn_codec *kn_codec_get(int id);
/* The codec named by a compression.type value, or NULL. */
const kn_codec *kn_codec_by_name(const char *name);
/* True if `level` is accepted by Java for this codec. */
bool kn_codec_level_valid(const kn_codec *c, int level);

/* Frees the calling thread's cached codec contexts (zstd). Threads that
 * exit free theirs automatically; call this before the main thread's
 * final leak check, or after a burst, to return the memory. */
void kn_codec_thread_cleanup(void);

/* Helpers for codec implementations. */

/* Makes room for up to `want` more bytes in w without passing w->max,
 * returns how many bytes are free at w->buf + w->len (0 when the cap is
 * reached or an allocation failed: then w->err tells which). */
size_t kn_codec_room(kn_wr *w, size_t want);
/* Fills errstr for a decompression that hit out->max (or out of
 * memory) and returns the matching code. */
int kn_codec_room_fail(const kn_codec *c, const kn_wr *w, char *errstr, size_t errsize);

extern const kn_codec kn_codec_none;
extern const kn_codec kn_codec_gzip;
extern const kn_codec kn_codec_snappy;
extern const kn_codec kn_codec_lz4;
extern const kn_codec kn_codec_zstd;
/* codec_zstd.c's part of kn_codec_thread_cleanup. */
void kn_codec_zstd_thread_cleanup(void);

#endif

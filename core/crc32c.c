/*
 * crc32c.c: CRC-32C, software (slicing-by-8) and SSE4.2 paths, plus the
 * one-time dispatch between them (see crc32c.h).
 *
 * Both paths work on the raw (non-inverted) register; the public
 * functions apply Java's pre/post inversion so results chain like
 * java.util.zip.CRC32C.update() calls.
 *
 * The SSE4.2 path runs three independent CRC streams over adjacent
 * blocks because the crc32 instruction has a latency of three cycles but
 * a throughput of one; the three partial CRCs are then merged with the
 * linear "append n zero bytes" operator, precomputed as byte tables for
 * the two block sizes used. Only this file is built with the sse4.2
 * target attribute, so the library runs on any x86-64.
 */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KN_CRC_X86 1
#include <nmmintrin.h>
#endif

/* Reflected Castagnoli polynomial. */
#define CRC_POLY 0x82f63b78u

/* Block sizes of the three-way interleave: each stream covers LONG (or
 * SHORT) bytes per round. */
#define CRC_LONG 8192
#define CRC_SHORT 256

static uint32_t crc_table[8][256];
#ifdef KN_CRC_X86
static uint32_t crc_shift_long[4][256];
static uint32_t crc_shift_short[4][256];
#endif
static bool crc_have_hw;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* GF(2) 32x32 matrix times vector: XOR of the columns selected by vec. */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    for (int i = 0; vec; i++, vec >>= 1)
        if (vec & 1)
            sum ^= mat[i];
    return sum;
}

/* dst = a * b (dst may not alias a or b). */
static void gf2_mul(uint32_t *dst, const uint32_t *a, const uint32_t *b) {
    for (int i = 0; i < 32; i++)
        dst[i] = gf2_times(a, b[i]);
}

/* Operator advancing a raw CRC register over `bytes` zero bytes, written
 * as 4 byte-indexed tables so applying it costs four lookups. */
static void crc_make_shift(uint32_t tab[4][256], size_t bytes) {
    uint32_t base[32], res[32], tmp[32];
    base[0] = CRC_POLY; /* one zero bit */
    for (int i = 1; i < 32; i++)
        base[i] = 1u << (i - 1);
    for (int i = 0; i < 32; i++)
        res[i] = 1u << i; /* identity */
    for (size_t e = bytes * 8; e; e >>= 1) {
        if (e & 1) {
            gf2_mul(tmp, base, res);
            memcpy(res, tmp, sizeof res);
        }
        gf2_mul(tmp, base, base);
        memcpy(base, tmp, sizeof base);
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++)
            tab[k][b] = gf2_times(res, b << (8 * k));
}

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC_POLY : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            crc_table[k][n] = (crc_table[k - 1][n] >> 8) ^ crc_table[0][crc_table[k - 1][n] & 0xff];
#ifdef KN_CRC_X86
    __builtin_cpu_init();
    crc_have_hw = __builtin_cpu_supports("sse4.2");
    if (crc_have_hw) {
        crc_make_shift(crc_shift_long, CRC_LONG);
        crc_make_shift(crc_shift_short, CRC_SHORT);
    }
#else
    (void)crc_make_shift;
    crc_have_hw = false;
#endif
}

static inline void crc_ensure_init(void) { pthread_once(&crc_once, crc_init); }

/* Little-endian 64-bit load that works on any host byte order. */
static inline uint64_t crc_le64(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static uint32_t crc_sw_raw(uint32_t crc, const uint8_t *p, size_t len) {
    while (len && ((uintptr_t)p & 7)) {
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
        len--;
    }
    while (len >= 8) {
        uint64_t w = crc_le64(p) ^ crc;
        uint32_t lo = (uint32_t)w, hi = (uint32_t)(w >> 32);
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^
              crc_table[2][(hi >> 8) & 0xff] ^ crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return crc;
}

uint32_t kn_crc32c_sw(uint32_t crc, const void *buf, size_t len) {
    crc_ensure_init();
    return ~crc_sw_raw(~crc, (const uint8_t *)buf, len);
}

#ifdef KN_CRC_X86
static inline uint32_t crc_shift(const uint32_t tab[4][256], uint32_t crc) {
    return tab[0][crc & 0xff] ^ tab[1][(crc >> 8) & 0xff] ^ tab[2][(crc >> 16) & 0xff] ^
           tab[3][crc >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw_raw(uint32_t crc, const uint8_t *p,
                                                             size_t len) {
    uint64_t c0 = crc;
    while (len && ((uintptr_t)p & 7)) {
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
        len--;
    }
    /* Three streams of LONG bytes, then of SHORT bytes; blocks must be
     * a multiple of 8 so each stream advances by whole words. */
    static const size_t blocks[2] = {CRC_LONG, CRC_SHORT};
    for (int b = 0; b < 2; b++) {
        size_t blk = blocks[b];
        const uint32_t(*tab)[256] = b == 0 ? crc_shift_long : crc_shift_short;
        while (len >= 3 * blk) {
            uint64_t c1 = 0, c2 = 0;
            const uint8_t *end = p + blk;
            do {
                uint64_t w0, w1, w2;
                memcpy(&w0, p, 8);
                memcpy(&w1, p + blk, 8);
                memcpy(&w2, p + 2 * blk, 8);
                c0 = _mm_crc32_u64(c0, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
                p += 8;
            } while (p < end);
            c0 = crc_shift(tab, (uint32_t)c0) ^ c1;
            c0 = crc_shift(tab, (uint32_t)c0) ^ c2;
            p += 2 * blk;
            len -= 3 * blk;
        }
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c0 = _mm_crc32_u64(c0, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
    return (uint32_t)c0;
}
#endif

uint32_t kn_crc32c_hw(uint32_t crc, const void *buf, size_t len) {
    crc_ensure_init();
#ifdef KN_CRC_X86
    if (crc_have_hw)
        return ~crc_hw_raw(~crc, (const uint8_t *)buf, len);
#endif
    return ~crc_sw_raw(~crc, (const uint8_t *)buf, len);
}

bool kn_crc32c_hw_available(void) {
    crc_ensure_init();
    return crc_have_hw;
}

uint32_t kn_crc32c(uint32_t crc, const void *buf, size_t len) {
    crc_ensure_init();
#ifdef KN_CRC_X86
    if (crc_have_hw)
        return ~crc_hw_raw(~crc, (const uint8_t *)buf, len);
#endif
    return ~crc_sw_raw(~crc, (const uint8_t *)buf, len);
}

/*
 * pb.c: protobuf wire-format writer (see pb.h).
 */
#include "telemetry/pb.h"

#include <string.h>

static void put_tag(kn_wr *w, uint32_t field, int type) {
    kn_wr_uvarlong(w, ((uint64_t)field << 3) | (uint64_t)type);
}

void knt_pb_varint(kn_wr *w, uint32_t field, uint64_t v) {
    put_tag(w, field, KNT_PB_VARINT);
    kn_wr_uvarlong(w, v);
}

void knt_pb_fixed64(kn_wr *w, uint32_t field, uint64_t v) {
    put_tag(w, field, KNT_PB_FIXED64);
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    kn_wr_raw(w, b, sizeof b);
}

void knt_pb_double(kn_wr *w, uint32_t field, double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    knt_pb_fixed64(w, field, bits);
}

void knt_pb_string(kn_wr *w, uint32_t field, const char *s) {
    if (!s || !*s)
        return;
    size_t n = strlen(s);
    put_tag(w, field, KNT_PB_LEN);
    kn_wr_uvarlong(w, n);
    kn_wr_raw(w, s, n);
}

size_t knt_pb_begin(kn_wr *w, uint32_t field) {
    put_tag(w, field, KNT_PB_LEN);
    return w->len;
}

void knt_pb_end(kn_wr *w, size_t body_off) {
    if (w->err || body_off > w->len)
        return;
    size_t body = w->len - body_off;
    size_t n = kn_uvarint_size(body);
    if (!kn_wr_grow(w, n))
        return;
    memmove(w->buf + body_off + n, w->buf + body_off, body);
    uint64_t v = body;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        w->buf[body_off + i] = i + 1 < n ? (uint8_t)(b | 0x80) : b;
    }
    w->len += n;
}

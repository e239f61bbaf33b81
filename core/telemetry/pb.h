/*
 * pb.h: the few pieces of the protobuf wire format the OTLP encoder
 * needs (varint, fixed64, length-delimited), written into a kn_wr.
 *
 * Nested messages are written in place: knt_pb_begin() writes the field
 * tag and returns where the body starts; knt_pb_end() then slides the
 * body up to insert its length as a minimal varint. Moving bytes costs
 * less than sizing every message twice, and telemetry payloads are
 * small (a few KiB). Errors stick in the writer (w->err), as for every
 * kn_wr user: check once at the end.
 */
#ifndef KNT_PB_H
#define KNT_PB_H

#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* Protobuf wire types. */
#define KNT_PB_VARINT 0
#define KNT_PB_FIXED64 1
#define KNT_PB_LEN 2

void knt_pb_varint(kn_wr *w, uint32_t field, uint64_t v);
/* Little-endian, as protobuf's fixed64 and double are. */
void knt_pb_fixed64(kn_wr *w, uint32_t field, uint64_t v);
void knt_pb_double(kn_wr *w, uint32_t field, double d);
/* A string field (NULL writes nothing: proto3 omits empty strings). */
void knt_pb_string(kn_wr *w, uint32_t field, const char *s);
/* Starts a nested message; returns the body's offset for knt_pb_end. */
size_t knt_pb_begin(kn_wr *w, uint32_t field);
void knt_pb_end(kn_wr *w, size_t body_off);

#endif

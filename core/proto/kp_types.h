/*
 * kp_types.h: the value types shared by every generated protocol message
 * (core/proto/generated/kp_*.h): arrays of primitive elements, plus the
 * reader/writer/arena types the generated signatures use.
 *
 * An array is { items, count }: count -1 is a null array (only legal
 * where the schema says the field is nullable), count 0 an empty one.
 * Decoded arrays live in the decoder's arena; arrays a caller fills for
 * encoding are owned by the caller (the encoder only reads them).
 */
#ifndef KP_TYPES_H
#define KP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "reader.h"
#include "writer.h"

typedef struct kp_bool_array {
    bool *items;
    int32_t count;
} kp_bool_array;

typedef struct kp_int8_array {
    int8_t *items;
    int32_t count;
} kp_int8_array;

typedef struct kp_int16_array {
    int16_t *items;
    int32_t count;
} kp_int16_array;

typedef struct kp_uint16_array {
    uint16_t *items;
    int32_t count;
} kp_uint16_array;

typedef struct kp_int32_array {
    int32_t *items;
    int32_t count;
} kp_int32_array;

typedef struct kp_uint32_array {
    uint32_t *items;
    int32_t count;
} kp_uint32_array;

typedef struct kp_int64_array {
    int64_t *items;
    int32_t count;
} kp_int64_array;

typedef struct kp_float64_array {
    double *items;
    int32_t count;
} kp_float64_array;

typedef struct kp_str_array {
    kn_str *items;
    int32_t count;
} kp_str_array;

typedef struct kp_bytes_array {
    kn_bytes *items;
    int32_t count;
} kp_bytes_array;

typedef struct kp_uuid_array {
    kn_uuid *items;
    int32_t count;
} kp_uuid_array;

#endif

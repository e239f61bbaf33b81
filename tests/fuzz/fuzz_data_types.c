/*
 * fuzz_data_types.c: libFuzzer target for the generated codecs of the
 * schemas that are not API messages (core/proto/generated kp_data_type:
 * the consumer protocol's Subscription and Assignment blobs a group
 * member decodes from other members, request and response headers, and
 * the rest of the table). Input: 1 byte schema index, 2 bytes version
 * (both folded into range), then the bytes. As fuzz_response: what
 * decodes re-encodes to a fixed point; a failure is a protocol error
 * with a reason and an offset inside the input (fuzz_roundtrip.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_roundtrip.h"
#include "proto/generated/kp_apis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3)
        return 0;
    const kp_data_type *dt = kp_data_type_at(data[0] % KP_DATA_TYPE_COUNT);
    if (!dt)
        abort();
    uint16_t ver_in = (uint16_t)((data[1] << 8) | data[2]);
    int16_t v = (int16_t)(dt->min_version + ver_in % (dt->max_version - dt->min_version + 1));
    fz_codec c = {dt->size, dt->init, dt->encode, dt->decode};
    fz_roundtrip(&c, v, data + 3, size - 3);
    return 0;
}

/*
 * fuzz_request.c: libFuzzer target for the generated request codecs
 * (core/proto/generated), the encoders' round trip. Input: 2 bytes API
 * key, 2 bytes version (big-endian, folded into the valid ranges so
 * every input reaches a codec), then a request body. What decodes is a
 * request struct the fuzzer built; the checks are fuzz_roundtrip.h's.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_roundtrip.h"
#include "proto/generated/kp_apis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4)
        return 0;
    uint16_t key_in = (uint16_t)((data[0] << 8) | data[1]);
    uint16_t ver_in = (uint16_t)((data[2] << 8) | data[3]);
    const kp_api *api = kp_api_at(key_in % KP_API_COUNT);
    int16_t v = (int16_t)(api->min_version + ver_in % (api->max_version - api->min_version + 1));
    fz_codec c = {api->req_size, api->req_init, api->req_encode, api->req_decode};
    fz_roundtrip(&c, v, data + 4, size - 4);
    return 0;
}

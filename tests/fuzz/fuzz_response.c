/*
 * fuzz_response.c: libFuzzer target for every generated response
 * decoder. Input: 2 bytes API key, 2 bytes version (both big-endian,
 * folded into the valid ranges so every input exercises a decoder), then
 * the response body. A successful decode is re-encoded, decoded again
 * and compared (fuzz_roundtrip.h), so the fuzzer also hunts
 * encode/decode asymmetries.
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
    /* no init: a response decoder fills the struct itself */
    fz_codec c = {api->resp_size, NULL, api->resp_encode, api->resp_decode};
    fz_roundtrip(&c, v, data + 4, size - 4);
    return 0;
}

/*
 * fuzz_config.c: libFuzzer target over the configuration parsers
 * (core/config: kn_conf_set's per-type validation and canonical forms
 * -- ints, longs, doubles, booleans, enums, lists, classes, passwords,
 * host lists -- then kn_conf_finalize's cross-key rules, kn_conf_get
 * and kn_conf_dump). Input: byte 0 picks the client type; then records
 * of [2 bytes: key slot, folded into the catalog][1 byte: value length]
 * [value bytes], so every record hits a real key of the catalog
 * instead of the unknown-key error.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config/catalog.h"
#include "config/config.h"
#include "kafka_native.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(const char *key, const char *value, int is_default, void *opaque) {
    size_t *n = opaque;
    *n += strlen(key) + (value ? strlen(value) : 0) + (size_t)is_default;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    static const kn_client_type types[] = {KN_CLIENT_PRODUCER, KN_CLIENT_CONSUMER, KN_CLIENT_ADMIN};
    kn_conf *conf = kn_conf_new(types[data[0] % 3]);
    if (!conf)
        return 0;
    size_t pos = 1, keys = kn_conf_key_count();
    char err[512], value[256], got[512];
    while (pos + 3 <= size) {
        const kn_conf_key *k = kn_conf_key_at(((size_t)data[pos] << 8 | data[pos + 1]) % keys);
        size_t n = data[pos + 2];
        pos += 3;
        if (n > size - pos)
            n = size - pos;
        memcpy(value, data + pos, n);
        value[n] = 0; /* a C string: cut at its first NUL */
        pos += n;
        if (kn_conf_set(conf, k->name, value, err, sizeof err) == KN_OK) {
            size_t gl = sizeof got;
            kn_conf_get(conf, k->name, got, &gl);
        }
    }
    size_t n = 0;
    kn_conf_finalize(conf, err, sizeof err);
    kn_conf_dump(conf, sink, &n);
    kn_conf_destroy(conf);
    return 0;
}

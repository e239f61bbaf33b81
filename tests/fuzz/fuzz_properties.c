/*
 * fuzz_properties.c: libFuzzer target over the .properties reader
 * (core/config/properties.c, kn_conf_parse_properties): logical lines,
 * continuations, comments, key/value separators, escapes and \uXXXX,
 * then kn_conf_set's validation of every entry. The first byte picks
 * the client type; the rest is the file's text. What parsed is
 * finalized and dumped, so the derived keys and the dump run too.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    char err[512];
    if (kn_conf_parse_properties(conf, "fuzz.properties", (const char *)data + 1, size - 1, err, sizeof err) ==
        0) {
        size_t n = 0;
        kn_conf_finalize(conf, err, sizeof err);
        kn_conf_dump(conf, sink, &n);
    }
    kn_conf_destroy(conf);
    return 0;
}

/*
 * fuzz_scram.c: libFuzzer target over the SCRAM client's handling of
 * server messages: the server-first and server-final parsers, and a
 * whole SCRAM-SHA-256 exchange fed the input as the broker's answers
 * (first byte: where to split it into server-first and server-final).
 * Any crash, sanitizer report or read past the input is a bug; the
 * iteration ceiling keeps PBKDF2 from making a run slow.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "kn_alloc.h"
#include "wire/sasl/sasl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static knw_sasl_conf *conf;

static void setup(void) {
    kn_conf *c = kn_conf_new(KN_CLIENT_PRODUCER);
    char err[256];
    kn_conf_set(c, "security.protocol", "SASL_PLAINTEXT", err, sizeof err);
    kn_conf_set(c, "sasl.mechanism", "SCRAM-SHA-256", err, sizeof err);
    kn_conf_set(c, "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"user\" "
                "password=\"pencil\";",
                err, sizeof err);
    if (knw_sasl_conf_from(c, &conf, err, sizeof err))
        fprintf(stderr, "fuzz_scram setup: %s\n", err);
    kn_conf_destroy(c);
    /* A fixed client nonce so inputs can extend it ("r=fuzz..."). */
    knw_scram_set_test_nonce("fuzz");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!conf)
        setup();
    if (size < 1 || !conf)
        return 0;
    size_t split = data[0] < size ? data[0] : size - 1;
    const char *msg = (const char *)data + 1;
    size_t len = size - 1;
    char err[256];
    knw_scram_server_first sf;
    knw_scram_parse_server_first(msg, len, &sf, err, sizeof err);
    uint8_t sig[64];
    size_t sl;
    knw_scram_parse_server_final(msg, len, sig, &sl, err, sizeof err);

    void *st = NULL;
    knw_sasl_buf out = {0};
    if (knw_sasl_scram_sha256.start(conf, "h", &st, &out, err, sizeof err))
        return 0;
    kn_free(out.ptr);
    out.ptr = NULL;
    int rc = knw_sasl_scram_sha256.step(st, (const uint8_t *)msg, split, &out, err, sizeof err);
    if (rc == KNW_SASL_SEND) {
        kn_free(out.ptr);
        out.ptr = NULL;
        knw_sasl_scram_sha256.step(st, (const uint8_t *)msg + split, len - split, &out, err, sizeof err);
    }
    knw_sasl_scram_sha256.free(st);
    return 0;
}

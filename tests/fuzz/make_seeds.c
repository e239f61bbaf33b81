/*
 * make_seeds.c: writes the committed seed corpus of every fuzz target
 * into tests/fuzz/corpus/<target>/ (run by `tools/fuzz --seeds`; the
 * output is committed, so the fuzzers and the replay tests start from
 * valid messages instead of random bytes). Seeds are deterministic:
 * the generated kp_*_sample structs of each API and data schema at
 * their lowest and highest versions, record batches built by the
 * library's own builder (plain and compressed), SCRAM server messages,
 * JAAS lines, .properties texts and config records.
 *   make_seeds CORPUS_DIR
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "codec/codec.h"
#include "config/catalog.h"
#include "proto/generated/kp_apis.h"
#include "proto/record_batch.h"
#include "writer.h"

static const char *root;
static int written;

static void put(const char *target, const char *name, const void *p, size_t n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        fprintf(stderr, "make_seeds: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fclose(f);
    written++;
}

static void put_str(const char *target, const char *name, const char *s) { put(target, name, s, strlen(s)); }

/* [type byte][text]: the type byte may be 0, so not a C string */
static void put_typed(const char *target, const char *name, int type, const char *text) {
    char buf[2048];
    buf[0] = (char)type;
    size_t n = strlen(text);
    memcpy(buf + 1, text, n);
    put(target, name, buf, n + 1);
}

typedef union {
    max_align_t align;
    unsigned char bytes[4096];
} msg_buf;

/* prefix (key/version or schema/version) + the sample's encoding */
static void api_seeds(bool request) {
    for (size_t i = 0; i < KP_API_COUNT; i++) {
        const kp_api *api = kp_api_at(i);
        int16_t vers[2] = {api->min_version, api->max_version};
        for (int j = 0; j < 2; j++) {
            int16_t v = vers[j];
            if (j == 1 && v == vers[0])
                break;
            static msg_buf m;
            kn_arena a;
            kn_arena_init(&a, 0);
            kn_wr w;
            kn_wr_init(&w, 0, 0);
            kn_wr_i16(&w, (int16_t)i); /* folded to index i by the target */
            kn_wr_i16(&w, (int16_t)(v - api->min_version));
            int rc = request ? api->req_sample(&m, &a, v) : api->resp_sample(&m, &a, v);
            if (rc == 0)
                rc = request ? api->req_encode(&w, &m, v) : api->resp_encode(&w, &m, v);
            if (rc == 0) {
                char name[128];
                snprintf(name, sizeof name, "%s-v%d", api->name, v);
                put(request ? "fuzz_request" : "fuzz_response", name, w.buf, w.len);
            }
            kn_wr_free(&w);
            kn_arena_destroy(&a);
        }
    }
}

static void data_type_seeds(void) {
    for (size_t i = 0; i < KP_DATA_TYPE_COUNT; i++) {
        const kp_data_type *dt = kp_data_type_at(i);
        int16_t vers[2] = {dt->min_version, dt->max_version};
        for (int j = 0; j < 2; j++) {
            int16_t v = vers[j];
            if (j == 1 && v == vers[0])
                break;
            static msg_buf m;
            kn_arena a;
            kn_arena_init(&a, 0);
            kn_wr w;
            kn_wr_init(&w, 0, 0);
            kn_wr_i8(&w, (int8_t)i);
            kn_wr_i16(&w, (int16_t)(v - dt->min_version));
            if (dt->sample(&m, &a, v) == 0 && dt->encode(&w, &m, v) == 0) {
                char name[128];
                snprintf(name, sizeof name, "%s-v%d", dt->name, v);
                put("fuzz_data_types", name, w.buf, w.len);
            }
            kn_wr_free(&w);
            kn_arena_destroy(&a);
        }
    }
}

static void record_batch_seeds(void) {
    static const struct {
        const char *name;
        int codec;
        bool transactional;
    } kinds[] = {{"plain", KN_CODEC_NONE, false},  {"gzip", KN_CODEC_GZIP, false}, {"snappy", KN_CODEC_SNAPPY, false},
                 {"lz4", KN_CODEC_LZ4, false},     {"zstd", KN_CODEC_ZSTD, false}, {"txn", KN_CODEC_NONE, true}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        kn_rb_builder_conf conf;
        kn_rb_builder_conf_init(&conf);
        conf.codec = kinds[k].codec;
        conf.transactional = kinds[k].transactional;
        if (conf.transactional) {
            conf.producer_id = 42;
            conf.producer_epoch = 1;
            conf.base_sequence = 0;
        }
        kn_rb_builder b;
        kn_rb_builder_init(&b, &conf, 0);
        kn_rb_kv h = {{"h", 1}, {(const uint8_t *)"hv", 2}};
        for (int i = 0; i < 3; i++) {
            char key[16], val[32];
            int kl = snprintf(key, sizeof key, "k%d", i), vl = snprintf(val, sizeof val, "value-%d", i);
            kn_rb_builder_append(&b, i, 1700000000000 + i, (kn_bytes){(const uint8_t *)key, kl}, (kn_bytes){(const uint8_t *)val, vl}, &h,
                                 i == 1);
        }
        kn_wr w;
        kn_wr_init(&w, 0, 0);
        kn_wr_i8(&w, 1); /* verify the CRC */
        char es[256];
        if (kn_rb_builder_finish(&b, &w, es, sizeof es) == 0) {
            char name[64];
            snprintf(name, sizeof name, "batch-%s", kinds[k].name);
            put("fuzz_record_batch", name, w.buf, w.len);
            w.buf[0] = 0; /* the same, CRC not checked */
            snprintf(name, sizeof name, "batch-%s-nocrc", kinds[k].name);
            put("fuzz_record_batch", name, w.buf, w.len);
        } else {
            fprintf(stderr, "make_seeds: batch %s: %s\n", kinds[k].name, es);
        }
        kn_wr_free(&w);
        kn_rb_builder_free(&b);
    }
}

static void text_seeds(void) {
    /* fuzz_scram: [split][server-first][server-final] */
    const char sf[] = "r=fuzzSERVERNONCE,s=QSXCR+Q6sek8bf92,i=4096";
    const char fin[] = "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=";
    char scram[256];
    scram[0] = (char)(sizeof sf - 1);
    snprintf(scram + 1, sizeof scram - 1, "%s%s", sf, fin);
    put("fuzz_scram", "exchange", scram, 1 + strlen(scram + 1));
    put_str("fuzz_scram", "error", "\x10" "e=invalid-proof");
    put_str("fuzz_jaas", "plain",
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" "
            "password=\"alice-secret\";");
    put_str("fuzz_jaas", "oauth",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            "unsecuredLoginStringClaim_sub=\"alice\" clientId='x' /* c */ scope=\"a b\";");
    put_str("fuzz_jaas", "kerberos",
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
            "keyTab=\"/k.keytab\" principal=\"kafka/localhost@EXAMPLE.COM\";");
    /* fuzz_jwt: a token endpoint's answer, a JWT, a claims payload */
    put_str("fuzz_jwt", "response",
            "{\"access_token\":\"eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSIsImV4cCI6NDEwMjQ0NDgwMCwic2NvcGUiOlsiYSIsImIiXX0."
            "\",\"token_type\":\"Bearer\",\"expires_in\":3600}");
    put_str("fuzz_jwt", "jwt",
            "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSIsImV4cCI6NDEwMjQ0NDgwMCwiaWF0IjoxNzAwMDAwMDAwfQ.");
    put_str("fuzz_jwt", "claims",
            "{\"sub\":\"alice\",\"exp\":4102444800,\"iat\":1700000000,\"scope\":[\"a\",\"b\\u00e9\"]}");
    /* fuzz_properties: [client type][text] */
    put_typed("fuzz_properties", "producer", 0,
            "# a producer\nbootstrap.servers=127.0.0.1:9092, localhost:9093\nacks = all\n"
            "linger.ms: 5\ncompression.type zstd\nclient.id=caf\\u00e9\\\n    -1\n! done\n");
    put_typed("fuzz_properties", "consumer", 1,
            "group.id=g\r\nenable.auto.commit=false\r\nauto.offset.reset=earliest\r\n"
            "group.protocol=consumer\r\nisolation.level=read_committed\r\nkey\\ with\\=odd\\:chars=v\\t\\n\n");
    put_typed("fuzz_properties", "admin", 2,
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
            "  username=\"alice\" password=\"alice-secret\";\nssl.endpoint.identification.algorithm=\n");
    /* fuzz_config: [client type] then [slot hi][slot lo][len][value]... */
    static const struct {
        const char *key, *value;
    } kv[] = {{"bootstrap.servers", "127.0.0.1:9092"}, {"acks", "all"},
              {"linger.ms", "5"},                      {"compression.type", "lz4"},
              {"group.id", "g"},                       {"session.timeout.ms", "45000"},
              {"partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
              {"security.protocol", "SSL"},            {"client.dns.lookup", "use_all_dns_ips"},
              {"retry.backoff.ms", "100"},             {"enable.idempotence", "false"},
              {"group.protocol", "consumer"}};
    for (int t = 0; t < 3; t++) {
        uint8_t buf[1024];
        size_t n = 0;
        buf[n++] = (uint8_t)t;
        for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
            long slot = kn_conf_key_find(kv[i].key);
            if (slot < 0)
                continue;
            size_t vl = strlen(kv[i].value);
            buf[n++] = (uint8_t)(slot >> 8);
            buf[n++] = (uint8_t)slot;
            buf[n++] = (uint8_t)vl;
            memcpy(buf + n, kv[i].value, vl);
            n += vl;
        }
        char name[32];
        snprintf(name, sizeof name, "type-%d", t);
        put("fuzz_config", name, buf, n);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
        return 2;
    }
    root = argv[1];
    mkdir(root, 0755);
    api_seeds(false);
    api_seeds(true);
    data_type_seeds();
    record_batch_seeds();
    text_seeds();
    printf("make_seeds: %d files in %s\n", written, root);
    return 0;
}

/*
 * fuzz_jwt.c: libFuzzer target over the bounded JSON reader
 * (core/json.c) and the token endpoint answer / JWT claims reader
 * (core/wire/sasl/jwt.c). The input is used three ways: as a token
 * endpoint's answer, as a JWT (cut at its first NUL), and as a JWT
 * payload (base64url-encoded into header.payload.sig first), so both
 * the text layer and the JSON inside a token are reached.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "kn_alloc.h"
#include "wire/sasl/jwt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t b64url(const uint8_t *s, size_t n, char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = acc << 8 | s[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out[o++] = tab[acc >> bits & 63];
        }
    }
    if (bits)
        out[o++] = tab[acc << (6 - bits) & 63];
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256];
    char *jwt = NULL;
    if (knw_jwt_from_response((const char *)data, size, &jwt, err, sizeof err) == 0) {
        knw_jwt_claims cl;
        (void)knw_jwt_read(jwt, "sub", "scope", &cl, err, sizeof err);
        kn_free(jwt);
    }
    kn_json_val v;
    if (kn_json_get((const char *)data, size, "scope", &v, err, sizeof err) == 0 && v.type == KN_JSON_ARRAY) {
        size_t pos = 0;
        kn_json_val e;
        char s[64];
        while (kn_json_array_next(&v, &pos, &e))
            (void)kn_json_string(&e, s, sizeof s, NULL);
    }
    if (size > 8000)
        return 0;
    char *text = kn_malloc(size + 1);
    char *tok = kn_malloc(size * 2 + 64);
    if (text && tok) {
        memcpy(text, data, size);
        text[size] = 0;
        knw_jwt_claims cl;
        (void)knw_jwt_read(text, "sub", "scope", &cl, err, sizeof err);
        size_t o = (size_t)(stpcpy(tok, "eyJhbGciOiJSUzI1NiJ9.") - tok);
        o += b64url(data, size, tok + o);
        strcpy(tok + o, ".c2ln");
        (void)knw_jwt_read(tok, "sub", "scope", &cl, err, sizeof err);
    }
    kn_free(text);
    kn_free(tok);
    return 0;
}

/*
 * header.c: request/response header framing (see header.h). The header
 * fields themselves are encoded by the generated RequestHeader and
 * ResponseHeader codecs; this file only picks their version from the
 * API table and handles the size prefix.
 */
#include "proto/header.h"

#include <stdio.h>

#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_request_header.h"
#include "proto/generated/kp_response_header.h"

static const kp_api *kp_header_api(int16_t api_key, int16_t api_version) {
    const kp_api *api = kp_api_get(api_key);
    if (!api || api_version < api->min_version || api_version > api->max_version)
        return NULL;
    return api;
}

static bool kp_header_flexible(const kp_api *api, int16_t api_version) {
    return api->first_flexible >= 0 && api_version >= api->first_flexible;
}

int16_t kp_request_header_version(int16_t api_key, int16_t api_version) {
    const kp_api *api = kp_header_api(api_key, api_version);
    if (!api)
        return -1;
    return kp_header_flexible(api, api_version) ? 2 : 1;
}

int16_t kp_response_header_version(int16_t api_key, int16_t api_version) {
    const kp_api *api = kp_header_api(api_key, api_version);
    if (!api)
        return -1;
    /* ApiVersions answers with header v0 even to flexible requests, so a
     * client that guessed too new a version can still read the error. */
    if (api_key == KP_API_API_VERSIONS)
        return 0;
    return kp_header_flexible(api, api_version) ? 1 : 0;
}

int kp_request_frame_begin(kn_wr *w, int16_t api_key, int16_t api_version, int32_t correlation_id,
                           kn_str client_id, size_t *size_off) {
    int16_t hv = kp_request_header_version(api_key, api_version);
    if (hv < 0)
        return KN_ERR__UNSUPPORTED_VERSION;
    size_t off = kn_wr_reserve(w, 4);
    if (off == (size_t)-1)
        return w->err;
    kp_RequestHeader h;
    kp_RequestHeader_init(&h);
    h.request_api_key = api_key;
    h.request_api_version = api_version;
    h.correlation_id = correlation_id;
    h.client_id = client_id;
    int rc = kp_RequestHeader_encode(w, &h, hv);
    if (rc)
        return rc;
    *size_off = off;
    return 0;
}

int kp_request_frame_end(kn_wr *w, size_t size_off) {
    if (w->err)
        return w->err;
    if (size_off > w->len || w->len - size_off < 4)
        return KN_ERR__INVALID_ARG;
    /* Spliced bytes (a Produce request's batches) are part of the frame
     * though not in w's buffer. */
    size_t n = w->len - size_off - 4 + (w->splices ? w->splices->bytes : 0);
    if (n > INT32_MAX)
        return KN_ERR__INVALID_ARG;
    kn_wr_put_u32_at(w->buf + size_off, (uint32_t)n);
    return 0;
}

int kp_response_header_decode(kn_rd *r, int16_t api_key, int16_t api_version, int32_t *correlation_id) {
    int16_t hv = kp_response_header_version(api_key, api_version);
    if (hv < 0)
        return KN_ERR__UNSUPPORTED_VERSION;
    kp_ResponseHeader h;
    /* The response header has no arrays, so the decoder never touches
     * the arena; a zeroed one keeps the generated signature. */
    kn_arena a;
    kn_arena_init(&a, 0);
    int rc = kp_ResponseHeader_decode(r, &a, &h, hv);
    kn_arena_destroy(&a);
    if (rc)
        return rc;
    *correlation_id = h.correlation_id;
    return 0;
}

void kp_proto_errstr(char *buf, size_t n, const char *api_name, int16_t version, const char *dir,
                     const kn_rd *r) {
    if (!buf || n == 0)
        return;
    snprintf(buf, n, "protocol error: %s v%d %s: %s at byte offset %zu", api_name ? api_name : "?",
             (int)version, dir ? dir : "?", r && r->err_what ? r->err_what : "malformed data",
             r ? r->err_off : (size_t)0);
}

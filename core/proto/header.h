/*
 * header.h: Kafka request/response framing around the generated message
 * bodies: which header version an API version uses, writing a request's
 * size prefix and header, reading a response header, and the one format
 * for protocol-error messages ("protocol error: Metadata v12 response:
 * ... at byte offset N").
 *
 * A request on the wire is: int32 size, RequestHeader (v1 classic, v2
 * flexible), body. A response is: int32 size (consumed by the framing
 * layer), ResponseHeader (v0, or v1 when flexible; ApiVersions responses
 * always v0 so a client can read them whatever version it asked for), body.
 * Nothing here allocates; the writer owns the bytes it writes.
 */
#ifndef KP_HEADER_H
#define KP_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "proto/kp_types.h"

/* Request header version (2 if the API version is flexible, else 1), or
 * -1 for an unknown API key or a version outside the API's range. */
int16_t kp_request_header_version(int16_t api_key, int16_t api_version);

/* Response header version (1 if flexible, else 0; always 0 for
 * ApiVersions), or -1 for an unknown API key or version. */
int16_t kp_response_header_version(int16_t api_key, int16_t api_version);

/* Appends a 4-byte size placeholder and the request header; *size_off
 * receives the placeholder's offset for kp_request_frame_end. The body
 * is appended by the caller in between. client_id may be null (len < 0).
 * Returns 0, KN_ERR__UNSUPPORTED_VERSION (unknown API or version) or the
 * writer's error. */
int kp_request_frame_begin(kn_wr *w, int16_t api_key, int16_t api_version, int32_t correlation_id,
                           kn_str client_id, size_t *size_off);

/* Patches the size placeholder with the number of bytes after it.
 * Returns 0, the writer's error, or KN_ERR__INVALID_ARG if the frame is
 * larger than INT32_MAX or size_off is not inside the writer. */
int kp_request_frame_end(kn_wr *w, size_t size_off);

/* Reads the response header that starts r (the size prefix already
 * removed). Returns 0, KN_ERR__PROTOCOL (r says where) or
 * KN_ERR__UNSUPPORTED_VERSION (unknown API or version). */
int kp_response_header_decode(kn_rd *r, int16_t api_key, int16_t api_version, int32_t *correlation_id);

/* Formats "protocol error: <api> v<version> <dir>: <what> at byte offset
 * N" from a failed reader into buf (always NUL-terminated when n > 0).
 * dir is "request" or "response". */
void kp_proto_errstr(char *buf, size_t n, const char *api_name, int16_t version, const char *dir,
                     const kn_rd *r);

#endif

/*
 * fake_broker.h: the loopback listener behind the fake-broker unit tests
 * (test_*_fake.c). It owns the socket, the
 * accept/poll thread and the request framing; what a fake answers, and
 * how (damaged, late, not at all), stays in each test's serve function.
 */
#ifndef KN_TEST_FAKE_BROKER_H
#define KN_TEST_FAKE_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "proto/generated/kp_api_versions.h"

/* One request as read off a connection: buf holds the whole frame after
 * its size prefix (header and body), owned by the caller (kn_free). */
typedef struct kn_fake_request {
    int16_t key, ver;
    int32_t corr;
    uint8_t *buf;
    size_t len;
} kn_fake_request;

/* Called on the listener thread when fd is readable (or hung up): serve
 * one request. Returns false when the peer closed the connection. */
typedef bool (*kn_fake_serve_fn)(int fd, void *opaque);

typedef struct kn_fake_broker kn_fake_broker;

/* Listens on 127.0.0.1 (a free port) and serves up to 16 connections on
 * one thread until kn_fake_broker_stop. */
kn_fake_broker *kn_fake_broker_start(kn_fake_serve_fn serve, void *opaque);
/* The same for a fake that answers every request with one frame:
 * answer(opaque, rq, &len) returns the whole response frame (kn_free'd
 * after it is written; kn_fake_frame_response makes one). */
typedef uint8_t *(*kn_fake_answer_fn)(void *opaque, const kn_fake_request *rq, size_t *len);
kn_fake_broker *kn_fake_broker_start_answering(kn_fake_answer_fn answer, void *opaque);
int kn_fake_broker_port(const kn_fake_broker *fb);
/* Stops the thread, closes every connection and the listener, frees fb. */
void kn_fake_broker_stop(kn_fake_broker *fb);

/* Reads one size-prefixed request; false when the peer closed first. */
bool kn_fake_read_request(int fd, kn_fake_request *rq);
/* Writes all of p (a closed peer is ignored: the client notices). */
void kn_fake_write_all(int fd, const uint8_t *p, size_t n);
/* A response frame: size, response header for (key, ver), body encoded
 * at body_ver (which differs from ver for the KIP-511 v0 fallback). */
uint8_t *kn_fake_frame_response(int16_t key, int16_t ver, int32_t corr, const void *body, int16_t body_ver,
                                size_t *len);
/* Decodes rq's body (after its request header) into a fresh struct in a. */
void *kn_fake_decode_request(kn_arena *a, const kn_fake_request *rq);
/* Fills an ApiVersions answer with every API this build knows on a
 * broker listener, at its stable range; arrays in a. */
void kn_fake_api_versions(kn_arena *a, kp_ApiVersionsResponse *r);

#endif

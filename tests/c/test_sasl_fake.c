/*
 * test_sasl_fake.c: the SASL connection states against a fake broker on
 * loopback (support/fake_broker.c), which speaks SaslHandshake and
 * SaslAuthenticate with scripted answers: PLAIN, SCRAM-SHA-256 with the
 * RFC 7677 exchange, a mechanism the broker has not enabled, a broker
 * error with its message, a server nonce that does not extend ours, a
 * bad server signature, an absurd iteration count, garbage and
 * truncated SASL frames; and KIP-368 re-authentication with requests in
 * flight whose responses arrive during the re-authentication.
 * Authentication failures must make the client fatal at once with the
 * reason (no reconnect); malformed frames are protocol errors (the
 * connection closes and is retried).
 */
#include "kn_test.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "fake_broker.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_list_groups.h"
#include "proto/generated/kp_sasl_authenticate.h"
#include "proto/generated/kp_sasl_handshake.h"
#include "proto/header.h"
#include "wire/wire_int.h"

enum mode {
    M_OK,          /* scripted success */
    M_NOT_ENABLED, /* SaslHandshake: UNSUPPORTED_SASL_MECHANISM */
    M_BAD_PASSWORD,
    M_BAD_NONCE,
    M_BAD_SIG,
    M_ITERATIONS,
    M_GARBAGE_HS,   /* a truncated SaslHandshake answer */
    M_GARBAGE_AUTH, /* random bytes as the SaslAuthenticate body */
};

#define RFC_NONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_FIRST                                                                                     \
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define RFC_CLIENT_FINAL                                                                                     \
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+"                         \
    "Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define RFC_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

typedef struct held {
    uint8_t *buf;
    size_t len;
} held;

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    int mode;
    int64_t lifetime_ms; /* session_lifetime_ms in the final answer */
    _Atomic int handshakes, authenticates, list_groups;
    _Atomic int mismatch;             /* a client token differed from the script */
    _Atomic bool authed;              /* the connection finished SASL */
    _Atomic int requests_before_auth; /* other requests before SASL was done */
    char mechanism[32];
    int round;
    /* Re-authentication: ListGroups answers are held back until the
     * next SaslHandshake arrives, then written before its answer. */
    bool hold;
    held holds[16];
    _Atomic int nheld, flushed_in_reauth;
} fake;

static uint8_t *frame(int16_t key, int16_t ver, int32_t corr, const void *body, size_t *len) {
    return kn_fake_frame_response(key, ver, corr, body, ver, len);
}

static bool serve(int fd, void *opaque) {
    fake *f = opaque;
    kn_fake_request rq;
    if (!kn_fake_read_request(fd, &rq))
        return false;
    kn_arena a;
    kn_arena_init(&a, 0);
    size_t len = 0;
    uint8_t *out = NULL;
    if (rq.key == KP_API_API_VERSIONS) {
        kp_ApiVersionsResponse r;
        kp_ApiVersionsResponse_init(&r);
        kn_fake_api_versions(&a, &r);
        out = frame(rq.key, rq.ver, rq.corr, &r, &len);
        f->round = 0;
        atomic_store(&f->authed, false);
    } else if (rq.key == KP_API_SASL_HANDSHAKE) {
        atomic_fetch_add(&f->handshakes, 1);
        kp_SaslHandshakeRequest *q = kn_fake_decode_request(&a, &rq);
        snprintf(f->mechanism, sizeof f->mechanism, "%.*s", (int)q->mechanism.len, q->mechanism.ptr);
        /* Held answers first: Kafka answers in order. */
        int nh = atomic_load(&f->nheld);
        for (int i = 0; i < nh; i++) {
            kn_fake_write_all(fd, f->holds[i].buf, f->holds[i].len);
            kn_free(f->holds[i].buf);
        }
        if (nh)
            atomic_store(&f->flushed_in_reauth, nh);
        atomic_store(&f->nheld, 0);
        f->hold = false;
        kp_SaslHandshakeResponse r;
        kp_SaslHandshakeResponse_init(&r);
        kn_str mechs[2] = {kn_str_c("PLAIN"), kn_str_c("SCRAM-SHA-256")};
        r.mechanisms.items = mechs;
        r.mechanisms.count = 2;
        if (f->mode == M_NOT_ENABLED)
            r.error_code = KN_ERR_UNSUPPORTED_SASL_MECHANISM;
        out = frame(rq.key, rq.ver, rq.corr, &r, &len);
        if (f->mode == M_GARBAGE_HS)
            len -= 3; /* a short frame: size fixed below */
        f->round = 0;
    } else if (rq.key == KP_API_SASL_AUTHENTICATE) {
        atomic_fetch_add(&f->authenticates, 1);
        kp_SaslAuthenticateRequest *q = kn_fake_decode_request(&a, &rq);
        kp_SaslAuthenticateResponse r;
        kp_SaslAuthenticateResponse_init(&r);
        const char *tok = (const char *)q->auth_bytes.ptr;
        size_t tl = (size_t)q->auth_bytes.len;
        const char *answer = "";
        bool last = false;
        if (!strcmp(f->mechanism, "PLAIN")) {
            if (tl != 8 || memcmp(tok, "\0user\0pw", 8) != 0)
                atomic_fetch_add(&f->mismatch, 1);
            last = true;
        } else if (f->round == 0) {
            const char *want = "n,,n=user,r=" RFC_NONCE;
            if (tl != strlen(want) || memcmp(tok, want, tl))
                atomic_fetch_add(&f->mismatch, 1);
            answer = f->mode == M_BAD_NONCE    ? "r=someone-elses-nonce,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
                     : f->mode == M_ITERATIONS ? "r=" RFC_NONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=2000000000"
                                               : RFC_SERVER_FIRST;
        } else {
            if (tl != strlen(RFC_CLIENT_FINAL) || memcmp(tok, RFC_CLIENT_FINAL, tl))
                atomic_fetch_add(&f->mismatch, 1);
            answer =
                f->mode == M_BAD_SIG ? "v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" : RFC_SERVER_FINAL;
            last = true;
        }
        f->round++;
        r.auth_bytes.ptr = (const uint8_t *)answer;
        r.auth_bytes.len = (int32_t)strlen(answer);
        if (last) {
            r.session_lifetime_ms = f->lifetime_ms;
            atomic_store(&f->authed, true);
        }
        if (f->mode == M_BAD_PASSWORD) {
            r.error_code = KN_ERR_SASL_AUTHENTICATION_FAILED;
            r.error_message = kn_str_c("Authentication failed: Invalid username or password");
            r.auth_bytes = (kn_bytes){NULL, 0};
        }
        out = frame(rq.key, rq.ver, rq.corr, &r, &len);
        if (f->mode == M_GARBAGE_AUTH && len > 12) {
            for (size_t i = 12; i < len; i++)
                out[i] = (uint8_t)(i * 37 + 11);
        }
    } else {
        if (!atomic_load(&f->authed))
            atomic_fetch_add(&f->requests_before_auth, 1);
        if (rq.key == KP_API_LIST_GROUPS)
            atomic_fetch_add(&f->list_groups, 1);
        void *body = kn_arena_alloc(&a, kp_api_get(rq.key)->resp_size);
        kp_api_get(rq.key)->resp_init(body);
        out = frame(rq.key, rq.ver, rq.corr, body, &len);
        /* Once one answer is held, every later one is too: order. */
        if (f->hold && (rq.key == KP_API_LIST_GROUPS || atomic_load(&f->nheld) > 0) &&
            atomic_load(&f->nheld) < 16) {
            int i = atomic_load(&f->nheld);
            f->holds[i] = (held){out, len};
            atomic_store(&f->nheld, i + 1);
            out = NULL;
        }
    }
    if (out) {
        uint32_t sz = (uint32_t)(len - 4);
        out[0] = (uint8_t)(sz >> 24);
        out[1] = (uint8_t)(sz >> 16);
        out[2] = (uint8_t)(sz >> 8);
        out[3] = (uint8_t)sz;
        kn_fake_write_all(fd, out, len);
        kn_free(out);
    }
    kn_free(rq.buf);
    kn_arena_destroy(&a);
    return true;
}

static fake *fake_start(int mode) {
    fake *f = kn_calloc(1, sizeof *f);
    f->mode = mode;
    f->fb = kn_fake_broker_start(serve, f);
    f->port = kn_fake_broker_port(f->fb);
    return f;
}

static void fake_stop(fake *f) {
    kn_fake_broker_stop(f->fb);
    for (int i = 0; i < atomic_load(&f->nheld); i++)
        kn_free(f->holds[i].buf);
    kn_free(f);
}

static knw_client *client_for(fake *f, const char *mech) {
    char bs[64], err[512], jaas[256];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f->port);
    snprintf(jaas, sizeof jaas, "%s required username=\"user\" password=\"%s\";",
             strcmp(mech, "PLAIN") ? "org.apache.kafka.common.security.scram.ScramLoginModule"
                                   : "org.apache.kafka.common.security.plain.PlainLoginModule",
             strcmp(mech, "PLAIN") ? "pencil" : "pw");
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "security.protocol", "SASL_PLAINTEXT");
    kn_test_conf_set(conf, "sasl.mechanism", mech);
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    knw_settings s;
    if (knw_settings_from_conf(&s, conf, "producer", err, sizeof err))
        fail_msg("%s", err);
    kn_conf_destroy(conf);
    s.request_timeout_ms = 5000;
    s.reconnect_backoff_ms = 10;
    s.reconnect_backoff_max_ms = 50;
    s.retry_backoff_ms = 10;
    knw_client *c = knw_client_new_settings(&s, err, sizeof err);
    knw_settings_free(&s);
    if (!c)
        fail_msg("%s", err);
    return c;
}

static kp_ListGroupsRequest lg_req;

static knw_resp *list_groups(knw_client *c) {
    kp_ListGroupsRequest_init(&lg_req);
    return knw_call(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &lg_req, 5000);
}

static void test_plain_ok(void **state) {
    (void)state;
    fake *f = fake_start(M_OK);
    knw_client *c = client_for(f, "PLAIN");
    knw_resp *r = list_groups(c);
    if (r->err)
        fail_msg("%s", r->errstr);
    knw_resp_free(r);
    assert_string_equal(f->mechanism, "PLAIN");
    assert_int_equal(atomic_load(&f->mismatch), 0);
    assert_int_equal(atomic_load(&f->handshakes), 1);
    assert_int_equal(atomic_load(&f->authenticates), 1);
    assert_int_equal(atomic_load(&f->requests_before_auth), 0);
    assert_int_equal(knw_client_fatal(c, NULL, 0), 0);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_scram_rfc_exchange(void **state) {
    (void)state;
    fake *f = fake_start(M_OK);
    knw_scram_set_test_nonce(RFC_NONCE);
    knw_client *c = client_for(f, "SCRAM-SHA-256");
    knw_resp *r = list_groups(c);
    knw_scram_set_test_nonce(NULL);
    if (r->err)
        fail_msg("%s", r->errstr);
    knw_resp_free(r);
    assert_string_equal(f->mechanism, "SCRAM-SHA-256");
    assert_int_equal(atomic_load(&f->mismatch), 0);
    assert_int_equal(atomic_load(&f->authenticates), 2);
    assert_int_equal(atomic_load(&f->requests_before_auth), 0);
    knw_client_destroy(c);
    fake_stop(f);
}

/* A failure that must end the client: the request fails with
 * _AUTHENTICATION naming the reason, the client is fatal, later
 * requests fail at once, and no second connection is made. */
static void fatal_case(int mode, const char *mech, const char *needle) {
    fake *f = fake_start(mode);
    knw_scram_set_test_nonce(RFC_NONCE);
    knw_client *c = client_for(f, mech);
    int64_t t0 = kn_test_now_ms();
    knw_resp *r = list_groups(c);
    knw_scram_set_test_nonce(NULL);
    assert_int_equal(r->err, KN_ERR__AUTHENTICATION);
    if (!strstr(r->errstr, needle))
        fail_msg("errstr \"%s\" lacks \"%s\"", r->errstr, needle);
    knw_resp_free(r);
    assert_true(kn_test_now_ms() - t0 < 2000);
    char es[512];
    assert_int_equal(knw_client_fatal(c, es, sizeof es), KN_ERR__AUTHENTICATION);
    assert_non_null(strstr(es, needle));
    usleep(300 * 1000); /* several reconnect backoffs (10..50 ms) */
    r = list_groups(c);
    assert_int_equal(r->err, KN_ERR__AUTHENTICATION);
    knw_resp_free(r);
    knw_stats st;
    knw_get_stats(c, &st);
    assert_int_equal(st.connects, 1);
    assert_int_equal(atomic_load(&f->list_groups), 0);
    int err = 0;
    assert_null(knw_metadata_wait(c, false, 0, 1000, &err));
    assert_int_equal(err, KN_ERR__AUTHENTICATION);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_mechanism_not_enabled(void **state) {
    (void)state;
    fatal_case(M_NOT_ENABLED, "SCRAM-SHA-256",
               "Client SASL mechanism 'SCRAM-SHA-256' not enabled in the server, enabled mechanisms are "
               "[PLAIN, SCRAM-SHA-256]");
}
static void test_bad_password(void **state) {
    (void)state;
    fatal_case(M_BAD_PASSWORD, "PLAIN", "Authentication failed: Invalid username or password");
}
static void test_bad_nonce(void **state) {
    (void)state;
    fatal_case(M_BAD_NONCE, "SCRAM-SHA-256", "server nonce does not extend the client nonce");
}
static void test_bad_signature(void **state) {
    (void)state;
    fatal_case(M_BAD_SIG, "SCRAM-SHA-256", "invalid server signature");
}
static void test_absurd_iterations(void **state) {
    (void)state;
    fatal_case(M_ITERATIONS, "SCRAM-SHA-256", "iteration count 2000000000 is outside [4096, 16384]");
}

/* Malformed SASL frames: a protocol error naming the API, the
 * connection closed and retried (not fatal: the next attempt may meet
 * a sane broker). */
static void garbage_case(int mode, const char *needle) {
    fake *f = fake_start(mode);
    knw_scram_set_test_nonce(RFC_NONCE);
    knw_client *c = client_for(f, "SCRAM-SHA-256");
    kp_ListGroupsRequest_init(&lg_req);
    knw_resp *r = knw_call(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &lg_req, 1500);
    knw_scram_set_test_nonce(NULL);
    assert_int_not_equal(r->err, 0);
    assert_int_not_equal(r->err, KN_ERR__AUTHENTICATION);
    if (!strstr(r->errstr, needle))
        fail_msg("errstr \"%s\" lacks \"%s\"", r->errstr, needle);
    knw_resp_free(r);
    assert_int_equal(knw_client_fatal(c, NULL, 0), 0);
    knw_stats st;
    knw_get_stats(c, &st);
    assert_true(st.protocol_errors >= 1);
    assert_true(st.connects >= 2); /* retried after backoff */
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_garbage_handshake(void **state) {
    (void)state;
    garbage_case(M_GARBAGE_HS, "SaslHandshake v1 response");
}
static void test_garbage_authenticate(void **state) {
    (void)state;
    garbage_case(M_GARBAGE_AUTH, "SaslAuthenticate");
}

typedef struct lg_result {
    _Atomic int done;
    int order[16];
    int errs[16];
} lg_result;

typedef struct lg_ctx {
    lg_result *res;
    int idx;
} lg_ctx;

static void lg_cb(knw_client *c, knw_resp *resp, void *opaque) {
    (void)c;
    lg_ctx *x = opaque;
    int n = atomic_fetch_add(&x->res->done, 1);
    x->res->order[n] = x->idx;
    x->res->errs[n] = resp->err;
    knw_resp_free(resp);
}

/* KIP-368: a 1 s session. Three requests go out and are held by the
 * fake; after the session's 85..95 % the next requests trigger a
 * re-authentication on the same connection while those three are in
 * flight; their answers arrive during it (before the SaslHandshake
 * answer). Everything completes, in order, without error, on one
 * connection. */
static void test_reauth_with_requests_in_flight(void **state) {
    (void)state;
    fake *f = fake_start(M_OK);
    f->lifetime_ms = 1000;
    knw_scram_set_test_nonce(RFC_NONCE);
    knw_client *c = client_for(f, "SCRAM-SHA-256");
    knw_resp *r = list_groups(c); /* connected and authenticated */
    if (r->err)
        fail_msg("%s", r->errstr);
    knw_resp_free(r);
    int64_t t0 = kn_test_now_ms();
    f->hold = true;
    lg_result res = {0};
    lg_ctx ctx[6];
    kp_ListGroupsRequest reqs[6];
    for (int i = 0; i < 3; i++) {
        ctx[i] = (lg_ctx){&res, i};
        kp_ListGroupsRequest_init(&reqs[i]);
        knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &reqs[i], 5000, lg_cb, &ctx[i]);
    }
    while (atomic_load(&f->list_groups) < 4 && kn_test_now_ms() - t0 < 3000)
        usleep(5000);
    assert_int_equal(atomic_load(&f->list_groups), 4);
    assert_true(atomic_load(&f->nheld) >= 3);
    usleep(1000 * 1000); /* past 95 % of the session */
    for (int i = 3; i < 6; i++) {
        ctx[i] = (lg_ctx){&res, i};
        kp_ListGroupsRequest_init(&reqs[i]);
        knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &reqs[i], 5000, lg_cb, &ctx[i]);
    }
    while (atomic_load(&res.done) < 6 && kn_test_now_ms() - t0 < 8000)
        usleep(5000);
    knw_scram_set_test_nonce(NULL);
    assert_int_equal(atomic_load(&res.done), 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(res.order[i], i);
        assert_int_equal(res.errs[i], 0);
    }
    assert_true(atomic_load(&f->flushed_in_reauth) >= 3);
    assert_true(atomic_load(&f->handshakes) >= 2);
    assert_int_equal(atomic_load(&f->mismatch), 0);
    knw_stats st;
    knw_get_stats(c, &st);
    assert_int_equal(st.connects, 1);
    assert_true(st.reauthentications >= 1);
    assert_int_equal(st.disconnects, 0);
    knw_client_destroy(c);
    fake_stop(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_ok),
        cmocka_unit_test(test_scram_rfc_exchange),
        cmocka_unit_test(test_mechanism_not_enabled),
        cmocka_unit_test(test_bad_password),
        cmocka_unit_test(test_bad_nonce),
        cmocka_unit_test(test_bad_signature),
        cmocka_unit_test(test_absurd_iterations),
        cmocka_unit_test(test_garbage_handshake),
        cmocka_unit_test(test_garbage_authenticate),
        cmocka_unit_test(test_reauth_with_requests_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

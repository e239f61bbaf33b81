/*
 * admin_raft.c: add_raft_voter and remove_raft_voter (KIP-853,
 * AddRaftVoter / RemoveRaftVoter): one request to any broker, which
 * forwards it to the active controller (Java's
 * LeastLoadedBrokerOrActiveKController). One call, one outcome: the
 * broker's error code and message.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "proto/generated/kp_add_raft_voter.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_remove_raft_voter.h"

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Kafka's text uuid (22 chars of URL-safe base64, no padding) into out;
 * false when it is not one. The inverse of kna_uuid_str. */
static bool kna_uuid_parse(const char *s, kn_uuid *out) {
    if (!s || strlen(s) != 22)
        return false;
    uint8_t v[22];
    for (size_t i = 0; i < 22; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            v[i] = (uint8_t)(c - 'A');
        else if (c >= 'a' && c <= 'z')
            v[i] = (uint8_t)(c - 'a' + 26);
        else if (c >= '0' && c <= '9')
            v[i] = (uint8_t)(c - '0' + 52);
        else if (c == '-')
            v[i] = 62;
        else if (c == '_')
            v[i] = 63;
        else
            return false;
    }
    if (v[21] & 15) /* the last char carries 2 bits: the rest must be 0 */
        return false;
    size_t o = 0;
    for (size_t i = 0; i < 20; i += 4) {
        uint32_t x = ((uint32_t)v[i] << 18) | ((uint32_t)v[i + 1] << 12) | ((uint32_t)v[i + 2] << 6) | v[i + 3];
        out->b[o++] = (uint8_t)(x >> 16);
        out->b[o++] = (uint8_t)(x >> 8);
        out->b[o++] = (uint8_t)x;
    }
    out->b[15] = (uint8_t)((v[20] << 2) | (v[21] >> 4));
    return true;
}

static int kna_raft_answer(int16_t code, kn_str msg, const char *what, char *errstr, size_t errstr_size) {
    if (!code)
        return 0;
    if (msg.len > 0)
        kn_errstr_set(errstr, errstr_size, "%s: %s: %.*s", what, kn_err_name(code), (int)msg.len, msg.ptr);
    else
        kn_errstr_set(errstr, errstr_size, "%s: %s: %s", what, kn_err_name(code), kn_err_message(code));
    return code;
}

int kn_admin_add_raft_voter(kn_admin *admin, int32_t voter_id, const char *directory_id,
                            const kn_raft_voter_endpoint *endpoints, size_t endpoint_count, const char *cluster_id,
                            int timeout_ms, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_add_raft_voter";
    kn_uuid dir;
    if (!admin || voter_id < 0 || !kna_uuid_parse(directory_id, &dir) || (endpoint_count && !endpoints) ||
        endpoint_count == 0 || endpoint_count > 64) {
        kn_errstr_set(errstr, errstr_size,
                      "%s: invalid argument (a voter id >= 0, a directory id as 22 chars of URL-safe base64, "
                      "1 to 64 endpoints)",
                      fn);
        return KN_ERR__INVALID_ARG;
    }
    kp_AddRaftVoterRequest_Listener listeners[64];
    for (size_t i = 0; i < endpoint_count; i++) {
        const kn_raft_voter_endpoint *e = &endpoints[i];
        /* Java's RaftVoterEndpoint: a non-empty name and host, a port. */
        if (!e->name || !e->name[0] || !e->host || !e->host[0] || e->port < 0 || e->port > 65535) {
            kn_errstr_set(errstr, errstr_size, "%s: endpoint %zu needs a name, a host and a port 0-65535", fn, i);
            return KN_ERR__INVALID_ARG;
        }
        kp_AddRaftVoterRequest_Listener_init(&listeners[i]);
        listeners[i].name = kna_cstr(e->name);
        listeners[i].host = kna_cstr(e->host);
        listeners[i].port = (uint16_t)e->port;
    }
    int64_t deadline = kna_deadline(admin, timeout_ms);
    kp_AddRaftVoterRequest req;
    kp_AddRaftVoterRequest_init(&req);
    req.cluster_id = kna_cstr(cluster_id);
    req.timeout_ms = kna_remaining(deadline);
    req.voter_id = voter_id;
    req.voter_directory_id = dir;
    req.listeners.items = listeners;
    req.listeners.count = (int32_t)endpoint_count;
    req.ack_when_committed = true;
    int err = 0;
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_ADD_RAFT_VOTER, -1, -1, &req, deadline, "AddRaftVoter",
                              &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_AddRaftVoterResponse *body = resp->body;
    err = kna_raft_answer(body->error_code, body->error_message, "AddRaftVoter", errstr, errstr_size);
    knw_resp_free(resp);
    return err;
}

int kn_admin_remove_raft_voter(kn_admin *admin, int32_t voter_id, const char *directory_id,
                               const char *cluster_id, int timeout_ms, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_remove_raft_voter";
    kn_uuid dir;
    if (!admin || voter_id < 0 || !kna_uuid_parse(directory_id, &dir)) {
        kn_errstr_set(errstr, errstr_size,
                      "%s: invalid argument (a voter id >= 0, a directory id as 22 chars of URL-safe base64)", fn);
        return KN_ERR__INVALID_ARG;
    }
    kp_RemoveRaftVoterRequest req;
    kp_RemoveRaftVoterRequest_init(&req);
    req.cluster_id = kna_cstr(cluster_id);
    req.voter_id = voter_id;
    req.voter_directory_id = dir;
    int err = 0;
    knw_resp *resp = kna_call(admin, KNW_NODE_ANY, KP_API_REMOVE_RAFT_VOTER, -1, -1, &req,
                              kna_deadline(admin, timeout_ms), "RemoveRaftVoter", &err, errstr, errstr_size);
    if (!resp)
        return err;
    const kp_RemoveRaftVoterResponse *body = resp->body;
    err = kna_raft_answer(body->error_code, body->error_message, "RemoveRaftVoter", errstr, errstr_size);
    knw_resp_free(resp);
    return err;
}

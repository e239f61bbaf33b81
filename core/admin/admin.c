/*
 * admin.c: the kn_admin handle (one network client plus the timing
 * settings every call uses), call deadlines and backoff, and kna_call:
 * the one place that sends an admin request and decides whether a
 * whole-request failure is worth another try before the deadline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "telemetry/registry_source.h"

/* Reads an int setting; def when absent or unparsable (the config
 * module validated the value already). */
static int kna_conf_int(const kn_conf *conf, const char *key, int def) {
    char buf[32];
    size_t size = sizeof(buf);
    if (kn_conf_get(conf, key, buf, &size) != KN_OK || size > sizeof(buf))
        return def;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || end == buf || v < 0)
        return def;
    return v > 0x7fffffff ? 0x7fffffff : (int)v;
}

kn_admin *kn_admin_new(const kn_conf *conf, char *errstr, size_t errstr_size) {
    if (!conf) {
        kn_errstr_set(errstr, errstr_size, "kn_admin_new: conf is NULL");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    if (kn_conf_client_type(conf) != KN_CLIENT_ADMIN) {
        kn_errstr_set(errstr, errstr_size,
                      "kn_admin_new: the configuration was not made for an admin client "
                      "(use kn_conf_new(KN_CLIENT_ADMIN))");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    /* Cross-key checks on a private copy: conf is the caller's and const. */
    kn_conf *copy = kn_conf_dup(conf);
    if (!copy) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        kn_set_last_error(KN_ERR__NOMEM);
        return NULL;
    }
    kn_admin *admin = NULL;
    int rc = kn_conf_finalize(copy, errstr, errstr_size);
    if (rc != KN_OK) {
        kn_set_last_error(rc);
        goto done;
    }
    admin = kn_calloc(1, sizeof(*admin));
    if (!admin) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        kn_set_last_error(KN_ERR__NOMEM);
        goto done;
    }
    kn_fork_stamp_now(&admin->fork);
    admin->default_timeout_ms = kna_conf_int(copy, "default.api.timeout.ms", 60000);
    admin->retry_backoff_ms = kna_conf_int(copy, "retry.backoff.ms", 100);
    admin->retry_backoff_max_ms = kna_conf_int(copy, "retry.backoff.max.ms", 1000);
    if (admin->retry_backoff_max_ms < admin->retry_backoff_ms)
        admin->retry_backoff_max_ms = admin->retry_backoff_ms;
    admin->client = knw_client_new(copy, "admin", errstr, errstr_size);
    if (!admin->client) { /* it set kn_last_error */
        kn_free(admin);
        admin = NULL;
    } else if (knt_new(admin->client, copy, "admin", knt_registry_source, admin->client, &admin->telemetry)) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        knw_client_destroy(admin->client);
        kn_free(admin);
        admin = NULL;
        kn_set_last_error(KN_ERR__NOMEM);
    } else {
        kn_set_last_error(KN_OK);
    }
done:
    kn_conf_destroy(copy);
    return admin;
}

int kn_admin_forked(const kn_admin *admin) { return admin && kn_fork_changed(&admin->fork); }

int kn_admin_close(kn_admin *admin, int timeout_ms) {
    if (admin && !kn_admin_forked(admin)) { /* a fork child has no threads to stop */
        /* The terminating telemetry push, within the timeout. */
        knt_close(admin->telemetry, kna_deadline(admin, timeout_ms));
        knw_client_stop(admin->client); /* idempotent */
    }
    return KN_OK;
}

void kn_admin_destroy(kn_admin *admin) {
    if (!admin)
        return;
    if (kn_admin_forked(admin))
        return; /* the threads are the parent's: leave the copy (leaked) */
    /* Destroy without close: the terminating push is not waited for. */
    knt_close(admin->telemetry, knw_now_ms());
    knw_client_destroy(admin->client);
    knt_destroy(admin->telemetry);
    kn_free(admin);
}

int64_t kna_deadline(const kn_admin *admin, int timeout_ms) {
    if (timeout_ms < 0)
        timeout_ms = admin->default_timeout_ms;
    return knw_now_ms() + timeout_ms;
}

int kna_remaining(int64_t deadline_ms) {
    int64_t left = deadline_ms - knw_now_ms();
    if (left < 0)
        return 0;
    return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

void kna_backoff(const kn_admin *admin, int attempt, int64_t deadline_ms) {
    int64_t ms = admin->retry_backoff_ms;
    for (int i = 0; i < attempt && ms < admin->retry_backoff_max_ms; i++)
        ms *= 2;
    if (ms > admin->retry_backoff_max_ms)
        ms = admin->retry_backoff_max_ms;
    int left = kna_remaining(deadline_ms);
    if (ms > left)
        ms = left;
    if (ms <= 0)
        return;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Failures of a whole request that another attempt may cure. A timeout
 * is not one of them: the request used the whole remaining budget. */
static bool kna_retry_transport(int err) {
    return err == KN_ERR__TRANSPORT || err == KN_ERR__ALL_BROKERS_DOWN || err == KN_ERR__RESOLVE;
}

knw_resp *kna_call(kn_admin *admin, int32_t node_id, int16_t api_key, int16_t min_version,
                   int16_t max_version, const void *req, int64_t deadline_ms, const char *what, int *errp,
                   char *errstr, size_t errstr_size) {
    if (kn_admin_forked(admin)) {
        kn_fork_errstr(&admin->fork, "the admin client", errstr, errstr_size);
        *errp = KN_ERR__FORKED;
        return NULL;
    }
    char last[256] = "";
    int last_err = 0;
    for (int attempt = 0;; attempt++) {
        int left = kna_remaining(deadline_ms);
        if (left <= 0)
            break;
        knw_resp *resp = knw_call(admin->client, node_id, api_key, min_version, max_version, req, left);
        if (resp->err == 0)
            return resp;
        last_err = resp->err;
        snprintf(last, sizeof(last), "%s", resp->errstr);
        knw_resp_free(resp);
        if (last_err == KN_ERR__TIMED_OUT)
            break;
        if (!kna_retry_transport(last_err)) {
            *errp = last_err;
            kn_errstr_set(errstr, errstr_size, "%s failed: %s", what,
                          last[0] ? last : kn_err_message(last_err));
            return NULL;
        }
        kna_backoff(admin, attempt, deadline_ms);
    }
    *errp = KN_ERR__TIMED_OUT;
    if (last_err && last_err != KN_ERR__TIMED_OUT)
        kn_errstr_set(errstr, errstr_size, "%s timed out (last failure: %s: %s)", what, kn_err_name(last_err),
                      last);
    else
        kn_errstr_set(errstr, errstr_size, "%s timed out", what);
    return NULL;
}

/* Resends while the answer's top-level error is NOT_CONTROLLER: the
 * metadata's controller moved (a KRaft broker forwards, so this is rare). */
knw_resp *kna_controller_call(kn_admin *admin, int16_t api_key, int16_t min_version, const void *req,
                              int timeout_ms, const char *what, int16_t (*top_error)(const void *body),
                              int *errp, char *errstr, size_t errstr_size) {
    int64_t deadline = kna_deadline(admin, timeout_ms);
    for (int attempt = 0;; attempt++) {
        knw_resp *resp = kna_call(admin, KNW_NODE_CONTROLLER, api_key, min_version, -1, req, deadline, what,
                                  errp, errstr, errstr_size);
        if (!resp || top_error(resp->body) != KN_ERR_NOT_CONTROLLER)
            return resp;
        knw_resp_free(resp);
        if (kna_remaining(deadline) <= 0) {
            *errp = KN_ERR__TIMED_OUT;
            kn_errstr_set(errstr, errstr_size, "%s timed out (last failure: NOT_CONTROLLER)", what);
            return NULL;
        }
        knw_metadata_request_refresh(admin->client, false, "admin: NOT_CONTROLLER");
        kna_backoff(admin, attempt, deadline);
    }
}

bool kna_uuid_str(const kn_uuid *id, char out[23]) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if (kn_uuid_is_zero(id)) {
        out[0] = '\0';
        return false;
    }
    const uint8_t *b = id->b;
    size_t o = 0;
    /* 16 bytes: five full 3-byte groups, then one byte as 2 chars. */
    for (size_t i = 0; i < 15; i += 3) {
        uint32_t v = ((uint32_t)b[i] << 16) | ((uint32_t)b[i + 1] << 8) | b[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = b64[(v >> 6) & 63];
        out[o++] = b64[v & 63];
    }
    out[o++] = b64[b[15] >> 2];
    out[o++] = b64[(b[15] & 3) << 4];
    out[o] = '\0';
    return true;
}

char *kna_strdup_str(kn_str s, bool *okp) {
    if (s.len < 0)
        return NULL;
    char *p = kn_strndup(s.ptr ? s.ptr : "", (size_t)s.len);
    if (!p)
        *okp = false;
    return p;
}

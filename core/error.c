/*
 * error.c: names, messages and retriability of error codes, from the
 * Kafka table (kafka_native_errors.def) and the library's own (kafka_native.h).
 */
#include <stdio.h>
#include <string.h>

#include "error.h"

typedef struct kn_err_desc {
    int code;
    const char *name;
    int flags;
} kn_err_desc;

static const kn_err_desc kn_kafka_errs[] = {
#define KN_KAFKA_ERR(code, name, flags) {code, #name, flags},
#include "kafka_native_errors.def"
#undef KN_KAFKA_ERR
};

static const struct {
    int code;
    const char *name;
    const char *msg;
} kn_own_errs[] = {
#define KN_OWN_ERR_DESC(code, name, msg) {code, "_" #name, msg},
    KN_OWN_ERRORS(KN_OWN_ERR_DESC)
#undef KN_OWN_ERR_DESC
};

static const kn_err_desc *kafka_desc(int code) {
    /* The table is sorted and dense from -1; a linear scan is fine for
     * an error path, and robust if a code is ever skipped. */
    for (size_t i = 0; i < sizeof(kn_kafka_errs) / sizeof(kn_kafka_errs[0]); i++)
        if (kn_kafka_errs[i].code == code)
            return &kn_kafka_errs[i];
    return NULL;
}

const char *kn_err_name(int code) {
    if (code == 0)
        return "NONE";
    const kn_err_desc *d = kafka_desc(code);
    if (d)
        return d->name;
    for (size_t i = 0; i < sizeof(kn_own_errs) / sizeof(kn_own_errs[0]); i++)
        if (kn_own_errs[i].code == code)
            return kn_own_errs[i].name;
    return "UNKNOWN_ERROR_CODE";
}

const char *kn_err_message(int code) {
    if (code == 0)
        return "success";
    for (size_t i = 0; i < sizeof(kn_own_errs) / sizeof(kn_own_errs[0]); i++)
        if (kn_own_errs[i].code == code)
            return kn_own_errs[i].msg;
    /* Kafka's codes are described by their names; the broker's own
     * error_message field, when present, is carried separately. */
    return kafka_desc(code) ? "broker error (see the error name)" : "unknown error code";
}

int kn_err_flags(int code) {
    const kn_err_desc *d = kafka_desc(code);
    return d ? d->flags : 0;
}

/* The library's own errors that say a broker could not be reached. */
static int own_unreachable(int code) {
    return code == KN_ERR__TRANSPORT || code == KN_ERR__TIMED_OUT || code == KN_ERR__RESOLVE ||
           code == KN_ERR__ALL_BROKERS_DOWN;
}

int kn_err_is_retriable(int code) {
    return own_unreachable(code) || (kn_err_flags(code) & KN_EF_RETRIABLE) != 0;
}

int kn_err_is_coordinator(int code) {
    return own_unreachable(code) || (kn_err_flags(code) & KN_EF_COORDINATOR) != 0;
}

/* Per thread, like errno: a constructor's failure is read back on the
 * thread that called it, and clients built on other threads at the same
 * time do not overwrite it. */
static _Thread_local int kn_last_err;

int kn_last_error(void) { return kn_last_err; }

void kn_set_last_error(int code) { kn_last_err = code; }

void kn_stats_copy_out(void *out, const void *full, size_t full_size) {
    size_t want;
    memcpy(&want, out, sizeof want);
    size_t n = want < full_size ? want : full_size;
    memcpy(out, full, n);
    memcpy(out, &n, sizeof n);
}

void kn_errstr_set(char *errstr, size_t size, const char *fmt, ...) {
    if (!errstr || !size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errstr, size, fmt, ap);
    va_end(ap);
}

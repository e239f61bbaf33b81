/*
 * backoff.c: exponential backoff with jitter (see backoff.h).
 */
#include "wire/backoff.h"

#include <math.h>
#include <time.h>

void knw_backoff_init(knw_backoff *b, int64_t initial_ms, int64_t max_ms, double jitter) {
    if (initial_ms < 0)
        initial_ms = 0;
    if (max_ms < initial_ms)
        initial_ms = max_ms < 0 ? 0 : max_ms;
    b->initial_ms = initial_ms;
    b->max_ms = max_ms < 0 ? 0 : max_ms;
    b->jitter = jitter;
    /* Same shape as Java: the exponent stops growing once the term
     * reaches max, so attempts can grow without overflowing pow(). */
    b->exp_max = b->max_ms > b->initial_ms
                     ? log((double)b->max_ms / (double)(b->initial_ms > 1 ? b->initial_ms : 1)) / log(2.0)
                     : 0;
}

int64_t knw_backoff_ms(const knw_backoff *b, int64_t attempts, double rnd01) {
    if (b->exp_max == 0)
        return b->initial_ms;
    if (attempts < 0)
        attempts = 0;
    double exp = (double)attempts < b->exp_max ? (double)attempts : b->exp_max;
    double term = (double)b->initial_ms * pow(2.0, exp);
    double factor = 1.0;
    if (b->jitter > 0) {
        if (rnd01 < 0)
            rnd01 = knw_rand01();
        factor = (1.0 - b->jitter) + rnd01 * 2.0 * b->jitter;
    }
    int64_t v = (int64_t)(factor * term);
    return v > b->max_ms ? b->max_ms : v;
}

double knw_rand01(void) {
    static _Thread_local uint64_t s;
    if (!s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&s;
        s |= 1;
    }
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) / 9007199254740992.0; /* 2^53 */
}

/*
 * backoff.h: exponential backoff with jitter, the curve the Java client
 * uses for reconnect.backoff.ms, retry.backoff.ms and the connection
 * setup timeout: initial * 2^attempts, capped at max, times a random
 * factor in [1 - jitter, 1 + jitter), the product capped at max again.
 * Pure functions plus a per-thread PRNG; no allocation.
 */
#ifndef KNW_BACKOFF_H
#define KNW_BACKOFF_H

#include <stdint.h>

typedef struct knw_backoff {
    int64_t initial_ms;
    int64_t max_ms;
    double jitter;  /* 0.2 in Java */
    double exp_max; /* attempts beyond this no longer grow the term */
} knw_backoff;

void knw_backoff_init(knw_backoff *b, int64_t initial_ms, int64_t max_ms, double jitter);
/* Delay before attempt number attempts+1 (attempts = failures so far, 0 =
 * first retry). rnd01 is a uniform draw in [0,1); pass a negative value
 * to draw one from the internal generator. */
int64_t knw_backoff_ms(const knw_backoff *b, int64_t attempts, double rnd01);
/* Uniform draw in [0, 1) from a thread-local xorshift generator. */
double knw_rand01(void);

#endif

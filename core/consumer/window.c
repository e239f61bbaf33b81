/*
 * window.c: how many partitions one Fetch lists (see window.h for why).
 * Owns the bytes-per-offset estimate and the window's take rule; the
 * fetcher applies them in its rotation order.
 */
#include "consumer/window.h"

/* Past this many offsets the sums are halved, so the estimate follows a
 * topic whose record size changes instead of averaging its whole past. */
#define KNC_BPO_HORIZON (1 << 20)

void knc_bpo_add(knc_bpo *e, size_t len, int64_t fetch_offset, int64_t end_offset) {
    if (end_offset <= fetch_offset || len == 0)
        return; /* nothing whole in the slice: no evidence */
    e->bytes += (int64_t)len;
    e->offsets += end_offset - fetch_offset;
    while (e->offsets > KNC_BPO_HORIZON) {
        e->bytes /= 2;
        e->offsets /= 2;
    }
    if (e->offsets <= 0) {
        e->bytes = 0;
        e->offsets = 0;
    }
}

int64_t knc_backlog_bytes(const knc_bpo *e, int64_t fetch_offset, int64_t log_end, int32_t partition_max) {
    if (log_end < 0 || fetch_offset < 0)
        return -1;
    if (partition_max < 1)
        partition_max = 1;
    if (log_end <= fetch_offset)
        return 0;
    if (e->offsets <= 0 || e->bytes <= 0)
        return -1;
    int64_t pending = log_end - fetch_offset;
    /* pending * bytes / offsets without overflow: each factor is capped
     * (bytes by the horizon times a batch size, pending by the log). */
    double est = (double)pending * ((double)e->bytes / (double)e->offsets);
    if (est < 1)
        est = 1;
    return est > (double)partition_max ? (int64_t)partition_max : (int64_t)est;
}

bool knc_window_take(int64_t *listed, int64_t target, int64_t backlog) {
    if (backlog < 0)
        return true; /* unknown: listed so the answer tells */
    if (*listed >= target)
        return false;
    *listed += backlog;
    return true;
}

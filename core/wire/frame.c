/*
 * frame.c: size-delimited frame reader and the writev send queue (see
 * frame.h).
 */
#include "wire/frame.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/bodybuf.h"

int knw_rx_init(knw_rx *rx, size_t stage_cap, size_t max_frame) {
    memset(rx, 0, sizeof *rx);
    rx->stage_cap = stage_cap ? stage_cap : 16384;
    rx->stage = kn_malloc(rx->stage_cap);
    rx->max_frame = max_frame;
    return rx->stage ? 0 : KN_ERR__NOMEM;
}

void knw_rx_reset(knw_rx *rx) {
    knw_body_free(rx->body);
    rx->body = NULL;
    rx->body_len = rx->body_got = 0;
    rx->hdr_got = 0;
    rx->stage_off = rx->stage_len = 0;
}

void knw_rx_destroy(knw_rx *rx) {
    knw_rx_reset(rx);
    kn_free(rx->stage);
    rx->stage = NULL;
}

/* Moves staged bytes into the current frame; returns a completed
 * frame's result (0, or the on_frame/size error). */
static int rx_consume(knw_rx *rx, const uint8_t *p, size_t n, size_t *used, knw_frame_fn *on_frame,
                      void *frame_ctx, char *errstr, size_t errstr_size) {
    size_t off = 0;
    *used = 0;
    while (off < n) {
        if (!rx->body) {
            while (rx->hdr_got < 4 && off < n)
                rx->hdr[rx->hdr_got++] = p[off++];
            if (rx->hdr_got < 4)
                break;
            uint32_t sz = ((uint32_t)rx->hdr[0] << 24) | ((uint32_t)rx->hdr[1] << 16) |
                          ((uint32_t)rx->hdr[2] << 8) | rx->hdr[3];
            /* A response holds at least its correlation id. */
            if (sz < 4 || sz > rx->max_frame || (int32_t)sz < 0) {
                kn_errstr_set(errstr, errstr_size,
                              "response frame #%zu has an invalid size %d (must be 4..%zu) at "
                              "byte offset 0",
                              rx->frame_no + 1, (int32_t)sz, rx->max_frame);
                *used = off;
                return KN_ERR__PROTOCOL;
            }
            rx->body = knw_body_alloc(sz);
            if (!rx->body) {
                *used = off;
                kn_errstr_set(errstr, errstr_size, "out of memory for a %u byte response", sz);
                return KN_ERR__NOMEM;
            }
            rx->body_len = sz;
            rx->body_got = 0;
        }
        size_t take = n - off;
        if (take > rx->body_len - rx->body_got)
            take = rx->body_len - rx->body_got;
        memcpy(rx->body + rx->body_got, p + off, take);
        rx->body_got += take;
        off += take;
        if (rx->body_got == rx->body_len) {
            uint8_t *frame = rx->body;
            size_t len = rx->body_len;
            rx->body = NULL;
            rx->body_len = rx->body_got = 0;
            rx->hdr_got = 0;
            rx->frame_no++;
            *used = off;
            if (on_frame(frame_ctx, frame, len))
                return KNW_RX_STOPPED;
        }
    }
    *used = off;
    return 0;
}

int knw_rx_pump(knw_rx *rx, knw_read_fn *rd, void *rd_ctx, knw_frame_fn *on_frame, void *frame_ctx,
                size_t *nread, char *errstr, size_t errstr_size) {
    /* Bounded so one busy connection cannot starve the others: poll(2)
     * is level-triggered and brings us back. */
    for (int round = 0; round < 64; round++) {
        if (rx->stage_off < rx->stage_len) {
            size_t used;
            int rc = rx_consume(rx, rx->stage + rx->stage_off, rx->stage_len - rx->stage_off, &used, on_frame,
                                frame_ctx, errstr, errstr_size);
            rx->stage_off += used;
            if (rc)
                return rc;
            continue;
        }
        rx->stage_off = rx->stage_len = 0;
        ssize_t n;
        if (rx->body && rx->body_len - rx->body_got >= rx->stage_cap) {
            /* Large remainder: read straight into the frame buffer. */
            n = rd(rd_ctx, rx->body + rx->body_got, rx->body_len - rx->body_got);
            if (n > 0) {
                if (nread)
                    *nread += (size_t)n;
                rx->body_got += (size_t)n;
                if (rx->body_got == rx->body_len) {
                    uint8_t *frame = rx->body;
                    size_t len = rx->body_len;
                    rx->body = NULL;
                    rx->body_len = rx->body_got = 0;
                    rx->hdr_got = 0;
                    rx->frame_no++;
                    if (on_frame(frame_ctx, frame, len))
                        return KNW_RX_STOPPED;
                }
                continue;
            }
        } else {
            n = rd(rd_ctx, rx->stage, rx->stage_cap);
            if (n > 0) {
                if (nread)
                    *nread += (size_t)n;
                rx->stage_len = (size_t)n;
                continue;
            }
        }
        if (n == 0)
            return KNW_RX_EOF;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        kn_errstr_set(errstr, errstr_size, "read: %s", strerror(errno));
        return KN_ERR__TRANSPORT;
    }
    /* The bound can fall right after a read into the stage. Those bytes
     * must be consumed now: poll(2) reports the socket, not the stage, so
     * if they were a response's tail the socket is empty and nothing
     * would call us again until the request timed out. */
    if (rx->stage_off < rx->stage_len) {
        size_t used;
        int rc = rx_consume(rx, rx->stage + rx->stage_off, rx->stage_len - rx->stage_off, &used, on_frame,
                            frame_ctx, errstr, errstr_size);
        rx->stage_off += used;
        return rc;
    }
    return 0;
}

void knw_txq_init(knw_txq *q) { memset(q, 0, sizeof *q); }

void knw_txq_destroy(knw_txq *q) {
    for (uint32_t i = 0; i < q->count; i++)
        kn_free(q->ring[(q->head + i) % q->cap].owned);
    kn_free(q->ring);
    memset(q, 0, sizeof *q);
}

/* Makes room for n more entries. */
static int txq_room(knw_txq *q, uint32_t n) {
    if (q->cap - q->count >= n)
        return 0;
    uint32_t ncap = q->cap ? q->cap * 2 : 16;
    while (ncap - q->count < n)
        ncap *= 2;
    knw_txbuf *nr = kn_malloc((size_t)ncap * sizeof *nr);
    if (!nr)
        return KN_ERR__NOMEM;
    for (uint32_t i = 0; i < q->count; i++)
        nr[i] = q->ring[(q->head + i) % q->cap];
    kn_free(q->ring);
    q->ring = nr;
    q->cap = ncap;
    q->head = 0;
    return 0;
}

static void txq_add(knw_txq *q, const uint8_t *buf, size_t len, uint8_t *owned) {
    q->ring[(q->head + q->count) % q->cap] = (knw_txbuf){buf, len, owned};
    q->count++;
    q->bytes += len;
}

int knw_txq_push(knw_txq *q, uint8_t *buf, size_t len) {
    if (txq_room(q, 1)) {
        kn_free(buf);
        return KN_ERR__NOMEM;
    }
    txq_add(q, buf, len, buf);
    return 0;
}

int knw_txq_push_spliced(knw_txq *q, uint8_t *buf, size_t len, const kn_wr_splice *sp, int32_t n) {
    if (n == 0)
        return knw_txq_push(q, buf, len);
    if (n < 0 || txq_room(q, 2 * (uint32_t)n + 1)) {
        kn_free(buf);
        return KN_ERR__NOMEM;
    }
    /* Own segments and splices alternate; the buffer goes with the last
     * segment of it (entries are written and freed in order). The frame
     * header is the buffer's first bytes, so there is always one. */
    size_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        if (sp[i].at > at)
            txq_add(q, buf + at, sp[i].at - at, NULL);
        txq_add(q, sp[i].ptr, sp[i].len, NULL);
        at = sp[i].at;
    }
    if (len > at) {
        txq_add(q, buf + at, len - at, buf);
    } else {
        /* Ends with a splice: free the buffer with that last entry. */
        q->ring[(q->head + q->count - 1) % q->cap].owned = buf;
    }
    return 0;
}

int knw_txq_flush(knw_txq *q, knw_writev_fn *wr, void *wr_ctx, size_t *nwritten, char *errstr,
                  size_t errstr_size) {
    while (q->count) {
        struct iovec iov[64];
        int n = 0;
        for (uint32_t i = 0; i < q->count && n < 64; i++, n++) {
            knw_txbuf *b = &q->ring[(q->head + i) % q->cap];
            size_t skip = i == 0 ? q->head_off : 0;
            iov[n].iov_base = (void *)(b->buf + skip);
            iov[n].iov_len = b->len - skip;
        }
        ssize_t w = wr(wr_ctx, iov, n);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            kn_errstr_set(errstr, errstr_size, "write: %s", strerror(errno));
            return KN_ERR__TRANSPORT;
        }
        if (nwritten)
            *nwritten += (size_t)w;
        size_t left = (size_t)w;
        q->bytes -= left;
        while (left && q->count) {
            knw_txbuf *b = &q->ring[q->head];
            size_t rem = b->len - q->head_off;
            if (left < rem) {
                q->head_off += left;
                left = 0;
                break;
            }
            left -= rem;
            kn_free(b->owned);
            b->owned = NULL;
            b->buf = NULL;
            q->head = (q->head + 1) % q->cap;
            q->count--;
            q->head_off = 0;
        }
        if (w == 0)
            return 0;
    }
    return 0;
}

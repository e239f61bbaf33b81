/*
 * frame.h: Kafka's size-delimited framing on a byte stream.
 *
 * Receive side (knw_rx): reads the 4-byte big-endian size, checks it
 * against a cap (no length read from the wire is trusted), allocates one
 * body buffer of that size (bodybuf.h: large ones reuse a cached spare)
 * and fills it, so a response body is never copied again: the buffer is
 * handed to the caller (knw_resp.raw).
 * Small frames are read through a staging buffer (one recv for many
 * responses); the tail of a large frame is read straight into its
 * buffer.
 *
 * Send side (knw_txq): a FIFO of fully encoded frames written with one
 * writev per flush (many requests per syscall); a frame is freed once
 * fully written. A frame may also be queued as segments of its own
 * buffer around borrowed bytes (a Produce request's record batches,
 * spliced by the encoder instead of copied: knw_txq_push_spliced); the
 * borrowed bytes are never freed here, and their owner keeps them alive
 * until they are written or the queue is destroyed (request.c says why
 * that holds for Produce).
 */
#ifndef KNW_FRAME_H
#define KNW_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "writer.h"

/* Reads up to len bytes; POSIX semantics (see transport.h). */
typedef ssize_t knw_read_fn(void *ctx, void *buf, size_t len);
/* Takes ownership of frame (knw_body_free). Returns 0 to go on, non-zero to
 * stop pumping (the connection is being closed). */
typedef int knw_frame_fn(void *ctx, uint8_t *frame, size_t len);

typedef struct knw_rx {
    uint8_t hdr[4];
    int hdr_got;
    uint8_t *body; /* owned until handed to on_frame */
    size_t body_len, body_got;
    uint8_t *stage; /* owned staging buffer */
    size_t stage_cap, stage_off, stage_len;
    size_t max_frame;
    size_t frame_no; /* frames completed so far (for error messages) */
} knw_rx;

/* Results of knw_rx_pump besides 0 (would block, all consumed). */
#define KNW_RX_EOF     1 /* peer closed the connection */
#define KNW_RX_STOPPED 2 /* on_frame asked to stop */
/* ... or KN_ERR__PROTOCOL (bad size), KN_ERR__TRANSPORT (read error),
 * KN_ERR__NOMEM. */

int knw_rx_init(knw_rx *rx, size_t stage_cap, size_t max_frame);
void knw_rx_destroy(knw_rx *rx);
/* Drops any partial frame (connection reset). */
void knw_rx_reset(knw_rx *rx);
/* Reads until the reader would block, calling on_frame per complete
 * frame; errstr says what went wrong for the error results. *nread
 * (optional) is incremented by the bytes read. */
int knw_rx_pump(knw_rx *rx, knw_read_fn *rd, void *rd_ctx, knw_frame_fn *on_frame, void *frame_ctx,
                size_t *nread, char *errstr, size_t errstr_size);
/* True when a frame is partly received (a response is arriving). */
static inline int knw_rx_busy(const knw_rx *rx) { return rx->hdr_got > 0 || rx->stage_len > rx->stage_off; }

typedef struct knw_txbuf {
    const uint8_t *buf; /* the bytes to write */
    size_t len;
    uint8_t *owned;     /* freed once written (or with the queue), NULL: borrowed */
} knw_txbuf;

typedef struct knw_txq {
    knw_txbuf *ring; /* owned */
    uint32_t cap, head, count;
    size_t head_off; /* bytes of ring[head] already written */
    size_t bytes;    /* total bytes still to write */
} knw_txq;

typedef ssize_t knw_writev_fn(void *ctx, const struct iovec *iov, int iovcnt);

void knw_txq_init(knw_txq *q);
void knw_txq_destroy(knw_txq *q);
/* Queues a frame; takes ownership of buf (freed even on failure).
 * Returns 0 or KN_ERR__NOMEM. */
int knw_txq_push(knw_txq *q, uint8_t *buf, size_t len);
/* Queues one frame made of buf (len bytes, owned: freed even on failure)
 * with the n splices (offsets into buf, in order) written in between,
 * borrowed. Returns 0 or KN_ERR__NOMEM (nothing queued then). */
int knw_txq_push_spliced(knw_txq *q, uint8_t *buf, size_t len, const kn_wr_splice *sp, int32_t n);
/* Writes until empty or the writer would block. Returns 0, or
 * KN_ERR__TRANSPORT with errstr. *nwritten (optional) is incremented. */
int knw_txq_flush(knw_txq *q, knw_writev_fn *wr, void *wr_ctx, size_t *nwritten, char *errstr,
                  size_t errstr_size);
static inline int knw_txq_empty(const knw_txq *q) { return q->count == 0; }

#endif

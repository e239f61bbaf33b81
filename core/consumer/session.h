/*
 * session.h: incremental fetch sessions (KIP-227), one per broker
 * (session.c): which partitions the next Fetch lists and forgets.
 */
#ifndef KN_CONSUMER_SESSION_H
#define KN_CONSUMER_SESSION_H

#include <stdbool.h>
#include <stdint.h>

/* ---- incremental fetch sessions (session.c) ------------------------------ */

typedef struct knc_sess_part {
    char *topic; /* owned */
    int32_t partition;
    int64_t offset;       /* the fetch offset last sent */
    int32_t leader_epoch; /* the current_leader_epoch last sent */
} knc_sess_part;

typedef struct knc_session {
    int32_t id;     /* 0: none */
    int32_t epoch;  /* the next incremental epoch (>= 1) */
    bool topic_ids; /* opened with topic-id fetches */
    knc_sess_part *parts;
    int32_t count;
} knc_session;

/* Plans the next Fetch to the broker for the partitions want[0..n)
 * (topic strings are copied): include[i] tells whether partition i must
 * be listed (new to the session, moved, or with another leader epoch:
 * the broker checks the epoch it holds in the session, so one it never
 * hears of would answer FENCED_LEADER_EPOCH for ever; always for a full
 * fetch);
 * *forgotten (owned by the caller: knc_session_forgotten_free) lists
 * the session's partitions no longer wanted. *session_id and *epoch go
 * into the request (epoch 0 with id 0: a full fetch opening a session).
 * The session then holds exactly want. Returns 0 or KN_ERR__NOMEM (the
 * session unchanged). */
int knc_session_plan(knc_session *s, const knc_sess_part *want, int32_t n, bool topic_ids,
                     bool *include, knc_sess_part **forgotten, int32_t *nforgotten,
                     int32_t *session_id, int32_t *epoch);
void knc_session_forgotten_free(knc_sess_part *forgotten, int32_t n);
/* The answer to a Fetch sent with sent_epoch: err is the request's
 * error (transport, or the response's top-level error_code). */
void knc_session_answer(knc_session *s, int32_t sent_epoch, int err, int32_t resp_session_id);
/* Forgets the session (the next fetch is full); frees its partitions. */
void knc_session_reset(knc_session *s);

#endif

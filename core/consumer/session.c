/*
 * session.c: the per-broker incremental fetch session (KIP-227).
 *
 *   no session --full fetch (id 0, epoch 0)--> answer with id != 0:
 *       session (id, epoch 1)
 *   session --incremental (id, epoch n): only new or moved partitions,
 *       plus a forgotten list--> success: epoch n+1
 *   any error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
 *       a lost connection, ...) --> no session: the next fetch is full
 *
 * The session remembers what the broker remembers: every partition of
 * the last request plan with the fetch offset last sent for it. A
 * partition the plan no longer wants (paused, reset, moved, unassigned)
 * is listed as forgotten so the broker stops reading it for us.
 * Pure state: no I/O, no lock (the caller holds the consumer's).
 */
#include <string.h>

#include "consumer/consumer_int.h"
#include "kn_alloc.h"

static void knc_sess_parts_free(knc_sess_part *parts, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        kn_free(parts[i].topic);
    kn_free(parts);
}

void knc_session_reset(knc_session *s) {
    knc_sess_parts_free(s->parts, s->count);
    s->parts = NULL;
    s->count = 0;
    s->id = 0;
    s->epoch = 0;
}

static int32_t knc_session_find(const knc_session *s, const char *topic, int32_t partition) {
    for (int32_t i = 0; i < s->count; i++)
        if (s->parts[i].partition == partition && strcmp(s->parts[i].topic, topic) == 0)
            return i;
    return -1;
}

int knc_session_plan(knc_session *s, const knc_sess_part *want, int32_t n, bool topic_ids,
                     bool *include, knc_sess_part **forgotten, int32_t *nforgotten,
                     int32_t *session_id, int32_t *epoch) {
    *forgotten = NULL;
    *nforgotten = 0;
    /* A session opened with topic ids continues with them only. */
    if (s->id != 0 && s->topic_ids != topic_ids)
        knc_session_reset(s);
    knc_sess_part *next = n ? kn_calloc((size_t)n, sizeof(*next)) : NULL;
    if (n && !next)
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < n; i++) {
        if (!(next[i].topic = kn_strdup(want[i].topic))) {
            knc_sess_parts_free(next, i);
            return KN_ERR__NOMEM;
        }
        next[i].partition = want[i].partition;
        next[i].offset = want[i].offset;
    }
    bool incremental = s->id != 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t at = incremental ? knc_session_find(s, want[i].topic, want[i].partition) : -1;
        include[i] = at < 0 || s->parts[at].offset != want[i].offset;
    }
    if (incremental) {
        int32_t nf = 0;
        for (int32_t i = 0; i < s->count; i++) {
            bool kept = false;
            for (int32_t j = 0; j < n && !kept; j++)
                kept = want[j].partition == s->parts[i].partition &&
                       strcmp(want[j].topic, s->parts[i].topic) == 0;
            if (!kept) {
                /* move the entry to the front of the forgotten run */
                knc_sess_part tmp = s->parts[nf];
                s->parts[nf] = s->parts[i];
                s->parts[i] = tmp;
                nf++;
            }
        }
        if (nf) {
            *forgotten = kn_calloc((size_t)nf, sizeof(**forgotten));
            if (!*forgotten) {
                knc_sess_parts_free(next, n);
                return KN_ERR__NOMEM;
            }
            memcpy(*forgotten, s->parts, (size_t)nf * sizeof(**forgotten));
            for (int32_t i = 0; i < nf; i++)
                s->parts[i].topic = NULL; /* moved */
            *nforgotten = nf;
        }
    }
    knc_sess_parts_free(s->parts, s->count);
    s->parts = next;
    s->count = n;
    s->topic_ids = topic_ids;
    *session_id = s->id;
    *epoch = incremental ? s->epoch : 0;
    return 0;
}

void knc_session_forgotten_free(knc_sess_part *forgotten, int32_t n) {
    knc_sess_parts_free(forgotten, n);
}

void knc_session_answer(knc_session *s, int32_t sent_epoch, int err, int32_t resp_session_id) {
    if (err) {
        knc_session_reset(s);
        return;
    }
    if (sent_epoch == 0) {
        if (resp_session_id == 0) {
            /* The broker declined a session: full fetches from now on. */
            knc_session_reset(s);
            return;
        }
        s->id = resp_session_id;
        s->epoch = 1;
        return;
    }
    s->epoch = s->epoch == INT32_MAX ? 1 : s->epoch + 1;
}

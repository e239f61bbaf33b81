/*
 * session.c: the per-broker incremental fetch session (KIP-227).
 *
 *   no session --full fetch (id 0, epoch 0)--> answer with id != 0:
 *       session (id, epoch 1)
 *   session --incremental (id, epoch n): only new, moved or re-led partitions,
 *       plus a forgotten list--> success: epoch n+1
 *   any error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
 *       a lost connection, ...) --> no session: the next fetch is full
 *
 * The session remembers what the broker remembers: every partition of
 * the last request plan with the fetch offset and leader epoch last sent
 * for it (as Java's session handler, a partition whose epoch changed is
 * listed again: the broker answers from the epoch it holds), sorted
 * by (topic, partition) so each plan is one merge. A
 * partition the plan no longer wants (paused, reset, moved, unassigned)
 * is listed as forgotten so the broker stops reading it for us.
 * Pure state: no I/O, no lock (the caller holds the consumer's).
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/session.h"
#include "kafka_native.h"
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

/* (topic, partition) order: the session keeps its partitions sorted so
 * a plan is one merge of two sorted lists, not a search per partition
 * (1,000 partitions made that a million string compares per Fetch). */
static int knc_sess_cmp(const char *ta, int32_t pa, const char *tb, int32_t pb) {
    int c = ta == tb ? 0 : strcmp(ta, tb);
    if (c)
        return c;
    return pa < pb ? -1 : pa > pb;
}

/* want[idx] with its index, sorted for the merge. */
typedef struct knc_sess_ref {
    const knc_sess_part *w;
    int32_t idx;
} knc_sess_ref;

static int knc_sess_ref_cmp(const void *a, const void *b) {
    const knc_sess_ref *x = a, *y = b;
    int c = knc_sess_cmp(x->w->topic, x->w->partition, y->w->topic, y->w->partition);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

int knc_session_plan(knc_session *s, const knc_sess_part *want, int32_t n, bool topic_ids, bool *include,
                     knc_sess_part **forgotten, int32_t *nforgotten, int32_t *session_id, int32_t *epoch) {
    *forgotten = NULL;
    *nforgotten = 0;
    /* A session opened with topic ids continues with them only. */
    if (s->id != 0 && s->topic_ids != topic_ids)
        knc_session_reset(s);
    bool incremental = s->id != 0;
    knc_sess_part *next = n ? kn_calloc((size_t)n, sizeof(*next)) : NULL;
    knc_sess_ref *refs = n ? kn_malloc((size_t)n * sizeof(*refs)) : NULL;
    /* At most every old entry is forgotten. */
    knc_sess_part *forgot = incremental && s->count ? kn_calloc((size_t)s->count, sizeof(*forgot)) : NULL;
    if ((n && (!next || !refs)) || (incremental && s->count && !forgot))
        goto nomem;
    for (int32_t i = 0; i < n; i++)
        refs[i] = (knc_sess_ref){&want[i], i};
    if (n > 1)
        qsort(refs, (size_t)n, sizeof(*refs), knc_sess_ref_cmp);

    /* Merge: old entries (sorted) against the wanted ones (sorted). A
     * kept entry lends its topic string to the new list; strings are
     * copied only for new partitions, and nothing in s changes until
     * every allocation has succeeded. */
    int32_t o = 0, nf = 0, m = 0;
    const int32_t old_count = incremental ? s->count : 0;
    bool *lent = old_count ? kn_calloc((size_t)old_count, sizeof(*lent)) : NULL;
    if (old_count && !lent)
        goto nomem;
    for (int32_t k = 0; k < n; k++) {
        const knc_sess_part *w = refs[k].w;
        if (m > 0 && knc_sess_cmp(next[m - 1].topic, next[m - 1].partition, w->topic, w->partition) == 0) {
            /* listed twice: the session holds it once; both copies go out */
            include[refs[k].idx] = include[refs[k - 1].idx];
            continue;
        }
        while (o < old_count &&
               knc_sess_cmp(s->parts[o].topic, s->parts[o].partition, w->topic, w->partition) < 0)
            forgot[nf++] = s->parts[o++];
        int32_t at = -1;
        if (o < old_count &&
            knc_sess_cmp(s->parts[o].topic, s->parts[o].partition, w->topic, w->partition) == 0)
            at = o++;
        include[refs[k].idx] =
            at < 0 || s->parts[at].offset != w->offset || s->parts[at].leader_epoch != w->leader_epoch;
        if (at >= 0) {
            next[m].topic = s->parts[at].topic;
            lent[at] = true;
        } else if (!(next[m].topic = kn_strdup(w->topic))) {
            goto nomem_merge;
        }
        next[m].partition = w->partition;
        next[m].offset = w->offset;
        next[m].leader_epoch = w->leader_epoch;
        m++;
    }
    while (o < old_count)
        forgot[nf++] = s->parts[o++];

    /* Commit: the old entries not lent or forgotten were all one or the
     * other, so only the session's array itself is freed now. Without a
     * session, every old entry (a full fetch follows) is dropped. */
    if (!incremental)
        knc_sess_parts_free(s->parts, s->count);
    else
        kn_free(s->parts);
    kn_free(lent);
    kn_free(refs);
    s->parts = next;
    s->count = m;
    s->topic_ids = topic_ids;
    if (nf) {
        *forgotten = forgot;
        *nforgotten = nf;
    } else {
        kn_free(forgot);
    }
    *session_id = s->id;
    *epoch = incremental ? s->epoch : 0;
    return 0;
nomem_merge:
    /* undo: lent strings still belong to s; only fresh copies are freed */
    for (int32_t i = 0; i < m; i++) {
        bool borrowed = false;
        for (int32_t j = 0; j < old_count && !borrowed; j++)
            borrowed = lent[j] && s->parts[j].topic == next[i].topic;
        if (!borrowed)
            kn_free(next[i].topic);
    }
    kn_free(lent);
nomem:
    kn_free(next);
    kn_free(refs);
    kn_free(forgot);
    return KN_ERR__NOMEM;
}

void knc_session_forgotten_free(knc_sess_part *forgotten, int32_t n) { knc_sess_parts_free(forgotten, n); }

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

/*
 * sender_state.c: what every part of the sender uses (sender_state.h):
 * the per-broker node table, scratch arrays, retry backoff, and the
 * producer's fatal error.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "producer/sender_state.h"

knp_node *knp_sender_node(knp_sender *s, int32_t id) {
    for (int32_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].id == id)
            return &s->nodes[i];
    if (s->nnodes == s->nodes_cap) {
        int32_t cap = s->nodes_cap ? s->nodes_cap * 2 : 8;
        knp_node *n = kn_realloc(s->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        s->nodes = n;
        s->nodes_cap = cap;
    }
    knp_node *n = &s->nodes[s->nnodes++];
    memset(n, 0, sizeof *n);
    n->id = id;
    return n;
}

bool knp_sender_scratch(knp_sender *s, int32_t n) {
    if (n <= s->scratch_cap)
        return true;
    int32_t *a = kn_realloc(s->scratch, (size_t)n * sizeof *a);
    if (a)
        s->scratch = a;
    int32_t *b = kn_realloc(s->scratch2, (size_t)n * sizeof *b);
    if (b)
        s->scratch2 = b;
    if (!a || !b)
        return false;
    s->scratch_cap = n;
    return true;
}

int64_t knp_backoff_ms(const knp_sender *s, int32_t attempts) {
    int64_t b = s->conf.retry_backoff_ms;
    for (int32_t i = 1; i < attempts && b < s->conf.retry_backoff_max_ms; i++)
        b *= 2;
    if (b > s->conf.retry_backoff_max_ms)
        b = s->conf.retry_backoff_max_ms;
    /* +-20% jitter, as Java's ExponentialBackoff. */
    int64_t j = b / 5;
    if (j > 0)
        b += (rand() % (2 * j + 1)) - j;
    return b;
}

/* INVALID_PRODUCER_ID_MAPPING (the coordinator no longer maps our
 * transactional id to this producer id: it expired, or a newer producer
 * took the id and both idled past transactional.id.expiration.ms) is
 * fatal from any broker, as in Java 4.x (KAFKA-18019): going on with a
 * new InitProducerId could process the same input twice. */
bool knp_is_fatal_err(int err) {
    return err == KN_ERR__AUTHENTICATION || err == KN_ERR_PRODUCER_FENCED || err == KN_ERR_CLUSTER_AUTHORIZATION_FAILED ||
           err == KN_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED || err == KN_ERR_INVALID_PRODUCER_ID_MAPPING;
}

void knp_fatal_locked(knp_sender *s, int err, const char *msg) {
    knp_acc *acc = s->acc;
    if (acc->fatal_err)
        return;
    acc->fatal_err = err;
    if (err == KN_ERR__AUTHENTICATION) /* the broker's reason, as is */
        kn_errstr_set(acc->fatal_errstr, sizeof acc->fatal_errstr, "%s", msg ? msg : kn_err_message(err));
    else
        kn_errstr_set(acc->fatal_errstr, sizeof acc->fatal_errstr, "fatal producer error %s: %s",
                      kn_err_name(err), msg ? msg : kn_err_message(err));
}

/* acc.lock held: fail every queued batch (fatal error or close). */
void knp_fail_queued_locked(knp_sender *s, int err, const char *msg) {
    knp_acc *acc = s->acc;
    for (int32_t i = 0; i < acc->npqs; i++) {
        knp_batch *b;
        while ((b = knp_acc_pop(acc, acc->pqs[i])) != NULL)
            knp_acc_complete(acc, b, err, -1, -1, msg);
    }
    knp_acc_fail_parked(acc, err, msg);
}

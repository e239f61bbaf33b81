/*
 * admin_txn_list.c: list_transactions (ListTransactions to every broker
 * of fresh metadata through kna_each_broker, as Java's
 * ListTransactionsHandler: each broker is a transaction coordinator for
 * some ids) and its result kn_txn_list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_list_transactions.h"

/* A cap on the merged listing: a cluster answering more is cut short
 * with an error rather than growing without bound. */
#define KNA_TXN_LIST_MAX 1000000

typedef struct kna_listed_txn {
    char *id;
    int64_t producer_id;
    char *state;
} kna_listed_txn;

struct kn_txn_list {
    kna_listed_txn *items;
    size_t count, cap;
    int err;
    char *message;
};

void kn_txn_list_destroy(kn_txn_list *l) {
    if (!l)
        return;
    for (size_t i = 0; i < l->count; i++) {
        kn_free(l->items[i].id);
        kn_free(l->items[i].state);
    }
    kn_free(l->items);
    kn_free(l->message);
    kn_free(l);
}

size_t kn_txn_list_count(const kn_txn_list *l) { return l ? l->count : 0; }

const char *kn_txn_list_id(const kn_txn_list *l, size_t i) {
    return l && i < l->count ? l->items[i].id : NULL;
}

int64_t kn_txn_list_producer_id(const kn_txn_list *l, size_t i) {
    return l && i < l->count ? l->items[i].producer_id : -1;
}

const char *kn_txn_list_state(const kn_txn_list *l, size_t i) {
    return l && i < l->count ? l->items[i].state : NULL;
}

int kn_txn_list_error(const kn_txn_list *l) { return l ? l->err : KN_ERR__INVALID_ARG; }

const char *kn_txn_list_error_message(const kn_txn_list *l) { return l && l->err ? l->message : NULL; }

static int kna_txn_cmp(const void *a, const void *b) {
    return strcmp(((const kna_listed_txn *)a)->id, ((const kna_listed_txn *)b)->id);
}

/* Appends a broker's listing. Returns 0, KN_ERR__NOMEM, or
 * KN_ERR__INVALID_ARG past the cap (errstr set). */
static int kna_txn_absorb(void *ctx, const void *bodyv, char *errstr, size_t errstr_size) {
    kn_txn_list *l = ctx;
    const kp_ListTransactionsResponse *body = bodyv;
    for (int32_t k = 0; k < body->transaction_states.count; k++) {
        if (l->count == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 16;
            if (cap > KNA_TXN_LIST_MAX) {
                kn_errstr_set(errstr, errstr_size, "kn_admin_list_transactions: more than %d transactions",
                              KNA_TXN_LIST_MAX);
                return KN_ERR__INVALID_ARG;
            }
            kna_listed_txn *v = kn_realloc(l->items, cap * sizeof(*v));
            if (!v)
                return KN_ERR__NOMEM;
            l->items = v;
            l->cap = cap;
        }
        const kp_ListTransactionsResponse_TransactionState *ts = &body->transaction_states.items[k];
        bool ok = true;
        kna_listed_txn *x = &l->items[l->count];
        x->id = kna_strdup_str(ts->transactional_id, &ok);
        x->state = kna_strdup_str(ts->transaction_state, &ok);
        x->producer_id = ts->producer_id;
        if (!ok || !x->id || !x->state) {
            kn_free(x->id);
            kn_free(x->state);
            return KN_ERR__NOMEM;
        }
        l->count++;
    }
    return 0;
}

static int16_t kna_txn_top_error(const void *body) {
    return ((const kp_ListTransactionsResponse *)body)->error_code;
}

static kna_broker_answer kna_txn_classify(int code) {
    /* A broker whose coordinator is not running yet has no
     * transactions to list (Java reads it so too). */
    return code == 0                                      ? KNA_BROKER_ABSORB
           : code == KN_ERR_COORDINATOR_NOT_AVAILABLE     ? KNA_BROKER_EMPTY
           : code == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS ? KNA_BROKER_RETRY
                                                          : KNA_BROKER_FAILED;
}

int kn_admin_list_transactions(kn_admin *admin, const kn_txn_list_filter *filter, int timeout_ms,
                               kn_txn_list **listp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_list_transactions";
    kn_txn_list_filter none = {0};
    if (!filter)
        filter = &none;
    if (!admin || !listp || (filter->state_count && !filter->states) ||
        (filter->producer_id_count && !filter->producer_ids) || filter->state_count > 0x7fff ||
        filter->producer_id_count > 0x7fff) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < filter->state_count; i++)
        if (!filter->states[i]) {
            kn_errstr_set(errstr, errstr_size, "%s: state filter %zu is NULL", fn, i);
            return KN_ERR__INVALID_ARG;
        }
    *listp = NULL;
    kn_txn_list *list = kn_calloc(1, sizeof(*list));
    kn_str *states = kn_calloc(filter->state_count ? filter->state_count : 1, sizeof(*states));
    if (!list || !states) {
        kn_free(states);
        kn_txn_list_destroy(list);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t i = 0; i < filter->state_count; i++)
        states[i] = (kn_str){filter->states[i], (int32_t)strlen(filter->states[i])};
    kp_ListTransactionsRequest req;
    kp_ListTransactionsRequest_init(&req);
    req.state_filters = (kp_str_array){states, (int32_t)filter->state_count};
    req.producer_id_filters =
        (kp_int64_array){(int64_t *)filter->producer_ids, (int32_t)filter->producer_id_count};
    req.duration_filter = filter->duration_ms > 0 ? filter->duration_ms : -1;
    req.transactional_id_pattern =
        (kn_str){filter->id_pattern, filter->id_pattern ? (int32_t)strlen(filter->id_pattern) : -1};
    /* A filter an older broker would silently drop must not widen the
     * listing: ask for the version that carries it. */
    kna_broker_call call = {.admin = admin,
                            .deadline = kna_deadline(admin, timeout_ms),
                            .fn = fn,
                            .reason = "admin: list_transactions",
                            .what = "ListTransactions",
                            .api_key = KP_API_LIST_TRANSACTIONS,
                            .min_version = filter->id_pattern ? 2 : filter->duration_ms > 0 ? 1 : -1,
                            .req = &req,
                            .top_error = kna_txn_top_error,
                            .classify = kna_txn_classify,
                            .absorb = kna_txn_absorb,
                            .ctx = list};
    int err = kna_each_broker(&call, &list->err, &list->message, errstr, errstr_size);
    kn_free(states);
    if (err) {
        kn_txn_list_destroy(list);
        return err;
    }
    if (list->count > 1)
        qsort(list->items, list->count, sizeof(*list->items), kna_txn_cmp);
    *listp = list;
    return KN_OK;
}

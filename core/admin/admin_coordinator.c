/*
 * admin_coordinator.c: how the admin reaches group coordinators.
 *
 * kna_group_coordinators is the one routing function: the client's
 * shared coordinator cache (core/wire/coordinator.c, the consumer's and
 * the transactional producer's too), which batches the lookups of a
 * call into one FindCoordinator v4+ and is told when a coordinator
 * failed. Groups (key type 0) and transactional ids (1) run the same way.
 * kna_group_run drives a group operation as Java's
 * CoordinatorStrategy + AdminApiDriver do: look up, batch the groups per
 * coordinator (KIP-699), send, and on a coordinator error look up again
 * or resend after a backoff, bounded by the call's deadline. The policy
 * (which error does what) is the table in kna_group_error_action.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "wire/coordinator.h"

kna_group_action kna_group_error_action(int err) {
    static const struct {
        int err;
        kna_group_action action;
    } table[] = {
        {KN_ERR_NOT_COORDINATOR, KNA_GROUP_RELOOKUP},
        {KN_ERR_COORDINATOR_NOT_AVAILABLE, KNA_GROUP_RELOOKUP},
        {KN_ERR_COORDINATOR_LOAD_IN_PROGRESS, KNA_GROUP_RESEND},
        /* OffsetFetch with require_stable: a transaction is in flight. */
        {KN_ERR_UNSTABLE_OFFSET_COMMIT, KNA_GROUP_RESEND},
        /* InitProducerId (fence_producers) while the coordinator is
         * still completing the id's last transaction. */
        {KN_ERR_CONCURRENT_TRANSACTIONS, KNA_GROUP_RESEND},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (table[i].err == err)
            return table[i].action;
    return KNA_GROUP_DONE;
}

int kna_group_coordinators(kn_admin *admin, int8_t key_type, const char *const *keys, size_t n, int32_t *nodes,
                           int *errs, int64_t deadline, char *errstr, size_t errstr_size) {
    /* Ask for every key first: the shared cache batches the lookups due
     * together into one FindCoordinator v4+ (KIP-699). */
    for (size_t i = 0; i < n; i++) {
        nodes[i] = knw_coord_get(admin->client, key_type, keys[i], NULL, NULL, 0);
        errs[i] = nodes[i] >= 0 ? 0 : KN_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    for (size_t i = 0; i < n; i++) {
        if (nodes[i] >= 0)
            continue;
        char why[256] = "";
        int err = knw_coord_wait(admin->client, key_type, keys[i], deadline, &nodes[i], why, sizeof(why));
        if (err == KN_ERR__TIMED_OUT) { /* the call's deadline: the whole call's failure */
            kn_errstr_set(errstr, errstr_size, "FindCoordinator timed out: %s", why);
            return err;
        }
        errs[i] = err;
        if (err)
            nodes[i] = -1;
    }
    return 0;
}

static int kna_item_message(kna_group_item *it, const char *msg, int32_t len) {
    kn_free(it->message);
    it->message = NULL;
    if (msg && len >= 0) {
        it->message = kn_strndup(msg, (size_t)len);
        if (!it->message)
            return KN_ERR__NOMEM;
    }
    return 0;
}

int kna_group_answer(kna_group_call *call, size_t i, int err, kn_str message) {
    kna_group_item *it = &call->items[i];
    it->err = err;
    switch (kna_group_error_action(err)) {
    case KNA_GROUP_RELOOKUP:
        if (it->node >= 0)
            knw_coord_failed(call->admin->client, call->key_type, it->group, it->node, err);
        it->node = -1;
        it->again = true;
        break;
    case KNA_GROUP_RESEND:
        it->again = true;
        break;
    case KNA_GROUP_DONE:
        it->pending = false;
        break;
    }
    return kna_item_message(it, err ? message.ptr : NULL, message.len);
}

ptrdiff_t kna_group_find(const kna_group_call *call, const bool *sel, kn_str group) {
    if (group.len < 0)
        return -1;
    for (size_t i = 0; i < call->count; i++)
        if (sel[i] && strlen(call->items[i].group) == (size_t)group.len &&
            memcmp(call->items[i].group, group.ptr, (size_t)group.len) == 0)
            return (ptrdiff_t)i;
    return -1;
}

void kna_group_items_clear(kna_group_item *items, size_t count) {
    for (size_t i = 0; items && i < count; i++) {
        kn_free(items[i].message);
        items[i].message = NULL;
    }
}

/* Looks up the coordinators of the pending items that have none. A
 * final lookup error (e.g. GROUP_AUTHORIZATION_FAILED) ends the group.
 * *answered tells whether the broker answered. */
static int kna_group_lookup(kna_group_call *call, bool *answered, int *call_err, char *why, size_t why_size) {
    size_t n = 0;
    for (size_t i = 0; i < call->count; i++)
        n += call->items[i].pending && call->items[i].node < 0;
    if (!n)
        return 0;
    const char **groups = kn_calloc(n, sizeof(*groups));
    size_t *idx = kn_calloc(n, sizeof(*idx));
    int32_t *nodes = kn_calloc(n, sizeof(*nodes));
    int *errs = kn_calloc(n, sizeof(*errs));
    int rc = KN_ERR__NOMEM;
    if (!groups || !idx || !nodes || !errs)
        goto done;
    size_t k = 0;
    for (size_t i = 0; i < call->count; i++)
        if (call->items[i].pending && call->items[i].node < 0) {
            idx[k] = i;
            groups[k++] = call->items[i].group;
        }
    rc = 0;
    int err =
        kna_group_coordinators(call->admin, call->key_type, groups, n, nodes, errs, call->deadline, why, why_size);
    if (err == KN_ERR__NOMEM) {
        rc = err;
        goto done;
    }
    if (err) {
        *call_err = err;
        for (k = 0; k < n && !rc; k++) {
            kna_group_item *it = &call->items[idx[k]];
            it->err = err;
            it->pending = false;
            rc = kna_item_message(it, why, (int32_t)strlen(why));
        }
        goto done;
    }
    *answered = true;
    for (k = 0; k < n && !rc; k++) {
        kna_group_item *it = &call->items[idx[k]];
        it->node = nodes[k];
        if (nodes[k] >= 0)
            continue;
        it->err = errs[k];
        if (kna_group_error_action(errs[k]) == KNA_GROUP_DONE)
            it->pending = false;
        else
            it->again = true;
        char msg[200];
        snprintf(msg, sizeof(msg), "FindCoordinator for %s '%.100s': %s",
                 call->key_type == KNW_COORD_TXN ? "transactional id" : "group", it->group, kn_err_name(errs[k]));
        rc = kna_item_message(it, msg, (int32_t)strlen(msg));
    }
done:
    kn_free(groups);
    kn_free(idx);
    kn_free(nodes);
    kn_free(errs);
    return rc;
}

/* Sends one request to node for the pending items bound there (all of
 * them, or the first when the API cannot batch). */
static int kna_group_send(kna_group_call *call, int32_t node, bool *sel, bool *answered, int *call_err,
                          char *why, size_t why_size) {
    memset(sel, 0, call->count * sizeof(*sel));
    for (size_t i = 0; i < call->count; i++)
        if (call->items[i].pending && call->items[i].node == node) {
            sel[i] = true;
            call->items[i].again = false;
            if (!call->batch)
                break;
        }
    union {
        char storage[KNA_GROUP_REQ_MAX]; /* any group API's request struct */
        int64_t align;
    } req;
    void *buf = NULL;
    int rc = call->build(call, sel, &req, &buf);
    if (rc) {
        kn_free(buf);
        return rc;
    }
    int err = 0;
    knw_resp *resp = kna_call(call->admin, node, call->api_key, call->min_version, call->max_version, &req,
                              call->deadline, call->what, &err, why, why_size);
    kn_free(buf);
    if (!resp) {
        *call_err = err;
        for (size_t i = 0; i < call->count && !rc; i++)
            if (sel[i]) {
                /* a coordinator we could not reach is not cached on */
                knw_coord_failed(call->admin->client, call->key_type, call->items[i].group, node, err);
                call->items[i].err = err;
                call->items[i].pending = false;
                rc = kna_item_message(&call->items[i], why, (int32_t)strlen(why));
            }
        return rc;
    }
    *answered = true;
    rc = call->absorb(call, sel, resp);
    knw_resp_free(resp);
    /* A group the broker left out: Java fails it the same way. */
    static const char missing[] = "The coordinator's response did not contain a result for this group";
    for (size_t i = 0; i < call->count && !rc; i++)
        if (sel[i] && call->items[i].pending && !call->items[i].again) {
            call->items[i].err = KN_ERR_UNKNOWN_SERVER_ERROR;
            call->items[i].pending = false;
            rc = kna_item_message(&call->items[i], missing, (int32_t)sizeof(missing) - 1);
        }
    return rc;
}

int kna_group_run(kna_group_call *call, char *errstr, size_t errstr_size) {
    bool *sel = kn_calloc(call->count ? call->count : 1, sizeof(*sel));
    if (!sel) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->what);
        return KN_ERR__NOMEM;
    }
    bool answered = false;
    int call_err = 0, rc = 0;
    char why[512] = "";
    for (int attempt = 0;; attempt++) {
        bool any = false;
        for (size_t i = 0; i < call->count; i++)
            any = any || call->items[i].pending;
        if (!any)
            break;
        if (kna_remaining(call->deadline) <= 0) {
            for (size_t i = 0; i < call->count; i++)
                if (call->items[i].pending) {
                    call->items[i].pending = false;
                    call->items[i].err = KN_ERR__TIMED_OUT; /* the message says the last failure */
                }
            break;
        }
        if ((rc = kna_group_lookup(call, &answered, &call_err, why, sizeof(why))) != 0)
            goto done;
        for (;;) {
            int32_t node = -1;
            for (size_t i = 0; i < call->count && node < 0; i++)
                if (call->items[i].pending && call->items[i].node >= 0 && !call->items[i].again)
                    node = call->items[i].node;
            if (node < 0)
                break;
            if ((rc = kna_group_send(call, node, sel, &answered, &call_err, why, sizeof(why))) != 0)
                goto done;
        }
        bool retry = false;
        for (size_t i = 0; i < call->count; i++) {
            retry = retry || (call->items[i].pending && call->items[i].again);
            call->items[i].again = false;
        }
        if (retry)
            kna_backoff(call->admin, attempt, call->deadline);
    }
    if (!answered && call_err) {
        rc = call_err;
        kn_errstr_set(errstr, errstr_size, "%s", why);
        goto out;
    }
done:
    if (rc)
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->what);
out:
    kn_free(sel);
    return rc;
}

/*
 * admin_brokers.c: the runner of the listing calls that ask every
 * broker of fresh metadata and merge the answers (list_groups,
 * list_transactions), as Java's AllBrokersStrategy: each broker once,
 * in node order; a top-level error the call retries (the coordinator
 * is still loading) is sent again after a backoff until the deadline;
 * any other error marks the listing with the first failed broker's
 * error and message while the others are still merged. The call fails
 * as a whole only when no broker answered at all.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"

int kna_each_broker(kna_broker_call *call, int *errp, char **messagep, char *errstr, size_t errstr_size) {
    kn_admin *admin = call->admin;
    int64_t asked = knw_now_ms();
    knw_metadata_request_refresh(admin->client, false, call->reason);
    int err = 0;
    knw_metadata *md = knw_metadata_wait(admin->client, false, asked, kna_remaining(call->deadline), &err);
    if (!md) {
        kn_errstr_set(errstr, errstr_size, "%s: no cluster metadata: %s", call->fn, kn_err_name(err));
        return err ? err : KN_ERR__TIMED_OUT;
    }
    int answered = 0, first_err = 0;
    char why[512] = "";
    err = 0;
    for (int32_t b = 0; b < md->broker_count && !err; b++) {
        int32_t node = md->brokers[b].node_id;
        for (int attempt = 0;; attempt++) {
            int call_err = 0;
            knw_resp *resp = kna_call(admin, node, call->api_key, call->min_version, -1, call->req, call->deadline,
                                      call->what, &call_err, why, sizeof(why));
            int code = resp ? call->top_error(resp->body) : call_err;
            kna_broker_answer act = resp ? call->classify(code) : KNA_BROKER_FAILED;
            if (act == KNA_BROKER_ABSORB || act == KNA_BROKER_EMPTY) {
                answered++;
                err = act == KNA_BROKER_ABSORB ? call->absorb(call->ctx, resp->body, errstr, errstr_size) : 0;
                knw_resp_free(resp);
                break;
            }
            knw_resp_free(resp);
            if (act == KNA_BROKER_RETRY && kna_remaining(call->deadline) > 0) {
                kna_backoff(admin, attempt, call->deadline);
                continue;
            }
            if (resp) {
                answered++;
                snprintf(why, sizeof(why), "%s on broker %d: %s", call->what, (int)node, kn_err_message(code));
            }
            if (!first_err) {
                first_err = code;
                *errp = code;
                if (!(*messagep = kn_strdup(why)))
                    err = KN_ERR__NOMEM;
            }
            break;
        }
    }
    knw_metadata_release(md);
    if (err == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", call->fn);
    if (err)
        return err;
    if (!answered && first_err) {
        kn_errstr_set(errstr, errstr_size, "%s", why);
        return first_err;
    }
    return 0;
}

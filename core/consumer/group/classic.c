/*
 * classic.c: the classic group protocol on the network thread.
 *
 * Owns the request side of the state machine in group.h: JoinGroup
 * (with the MEMBER_ID_REQUIRED round), the leader's assignment over
 * every member's decoded subscription, SyncGroup, Heartbeat at
 * heartbeat.interval.ms, max.poll.interval.ms expiry, and LeaveGroup.
 * The coordinator itself is found by offsets.c (knc_coordinator), which
 * re-discovers it whenever any of these requests meets NOT_COORDINATOR
 * or a lost connection.
 *
 * Plans are built with c->lock held and sent after it is released
 * (knw_send may run the callback inline on failure).
 */
#include <stdio.h>
#include <string.h>

#include "consumer/consumer_metrics.h"
#include "consumer/assignor/consumer_protocol.h"
#include "consumer/group/group.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_heartbeat.h"
#include "proto/generated/kp_join_group.h"
#include "proto/generated/kp_leave_group.h"
#include "proto/generated/kp_sync_group.h"

typedef struct kng_req {
    kn_consumer *c;
    int16_t api;
    int32_t node;
    int timeout_ms;
    int32_t generation; /* the generation a heartbeat was sent for */
    kn_arena arena;
    union {
        kp_JoinGroupRequest join;
        kp_SyncGroupRequest sync;
        kp_HeartbeatRequest hb;
        kp_LeaveGroupRequest leave;
    } u;
    struct kng_req *next;
} kng_req;

static kng_req *kng_req_new(kn_consumer *c, int16_t api) {
    kng_req *r = kn_calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->c = c;
    r->api = api;
    r->node = knc_coordinator(c);
    r->timeout_ms = -1;
    kn_arena_init(&r->arena, 1024);
    return r;
}

static void kng_req_free(kng_req *r) {
    if (!r)
        return;
    kn_arena_destroy(&r->arena);
    kn_free(r);
}


/* ---- JoinGroup ------------------------------------------------------------ */

/* The member's owned partitions (the table) in arena memory. */
static kn_asg_tp *kng_owned(kn_consumer *c, kn_arena *a, int32_t *cnt) {
    *cnt = 0;
    if (!knc_table_count(&c->table))
        return NULL;
    kn_asg_tp *v = kn_arena_calloc(a, knc_table_count(&c->table), sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        v[i].topic = kn_arena_strdup(a, knc_table_at(&c->table, i)->topic);
        v[i].partition = knc_table_at(&c->table, i)->partition;
    }
    *cnt = (int32_t)knc_table_count(&c->table);
    return v;
}

/* The sticky assignor's memory of the last assignment, as its user data. */
static int kng_sticky_user_data(kng_group *g, kn_arena *a, uint8_t **out, int32_t *len) {
    *out = NULL;
    *len = -1;
    if (!g->last_assigned)
        return 0;
    size_t n = kn_topic_partition_list_count(g->last_assigned);
    kn_asg_tp *v = kn_arena_calloc(a, n ? n : 1, sizeof(*v));
    if (!v)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < n; i++) {
        v[i].topic = kn_topic_partition_list_topic(g->last_assigned, i);
        v[i].partition = kn_topic_partition_list_partition(g->last_assigned, i);
    }
    uint8_t *buf;
    size_t blen;
    if (kn_cp_sticky_user_data_encode(v, (int32_t)n, g->generation, &buf, &blen) != 0)
        return KN_ERR__NOMEM;
    *out = kn_arena_alloc(a, blen ? blen : 1);
    if (*out)
        memcpy(*out, buf, blen);
    kn_free(buf);
    *len = (int32_t)blen;
    return *out ? 0 : KN_ERR__NOMEM;
}

static kng_req *kng_join_build(kn_consumer *c) {
    kng_group *g = c->grp;
    kng_req *r = kng_req_new(c, KP_API_JOIN_GROUP);
    if (!r)
        return NULL;
    kp_JoinGroupRequest *j = &r->u.join;
    kp_JoinGroupRequest_init(j);
    j->group_id = kn_str_c(kn_arena_strdup(&r->arena, c->cfg.group_id));
    j->session_timeout_ms = g->session_timeout_ms;
    j->rebalance_timeout_ms = g->rebalance_timeout_ms;
    j->member_id = kn_str_c(kn_arena_strdup(&r->arena, g->member_id));
    j->group_instance_id = kn_str_c(kn_arena_strdup(&r->arena, g->instance_id));
    j->protocol_type = kn_str_c("consumer");
    j->reason = kn_str_c(g->reason[0] ? kn_arena_strdup(&r->arena, g->reason) : NULL);
    int32_t n = kn_asg_list_count(g->asgs);
    j->protocols.items = kn_arena_calloc(&r->arena, (size_t)n, sizeof(*j->protocols.items));
    if (!j->protocols.items)
        goto fail;
    kn_asg_member sub = {0};
    const char **topics = kn_arena_calloc(&r->arena, (size_t)(g->topic_cnt + 1), sizeof(char *));
    if (!topics)
        goto fail;
    for (int32_t i = 0; i < g->topic_cnt; i++)
        topics[i] = kn_arena_strdup(&r->arena, g->topics[i]);
    sub.topics = topics;
    sub.topic_cnt = g->topic_cnt;
    sub.owned = kng_owned(c, &r->arena, &sub.owned_cnt);
    sub.generation = g->generation;
    sub.rack = g->rack;
    for (int32_t i = 0; i < n; i++) {
        const kn_assignor *a = kn_asg_list_at(g->asgs, i);
        uint8_t ud4[4];
        uint8_t *ud = NULL;
        int32_t udlen = -1;
        if (strcmp(a->name, "sticky") == 0) {
            if (kng_sticky_user_data(g, &r->arena, &ud, &udlen) != 0)
                goto fail;
        } else if (strcmp(a->name, "cooperative-sticky") == 0) {
            kn_cp_coop_user_data_encode(g->last_assigned ? g->generation : -1, ud4);
            ud = ud4;
            udlen = 4;
        }
        sub.user_data = ud;
        sub.user_data_len = udlen;
        uint8_t *buf;
        size_t blen;
        if (kn_cp_subscription_encode(&sub, KN_CP_VERSION, &buf, &blen) != 0)
            goto fail;
        uint8_t *copy = kn_arena_alloc(&r->arena, blen ? blen : 1);
        if (!copy) {
            kn_free(buf);
            goto fail;
        }
        memcpy(copy, buf, blen);
        kn_free(buf);
        j->protocols.items[j->protocols.count].name = kn_str_c(kn_arena_strdup(&r->arena, a->name));
        j->protocols.items[j->protocols.count].metadata.ptr = copy;
        j->protocols.items[j->protocols.count].metadata.len = (int32_t)blen;
        j->protocols.count++;
    }
    /* The coordinator parks a JoinGroup until every member rejoined (up
     * to the rebalance timeout): wait that long plus slack, like Java. */
    r->timeout_ms = g->rebalance_timeout_ms + 5000;
    return r;
fail:
    kng_req_free(r);
    return NULL;
}

/* ---- the leader's assignment ------------------------------------------------ */

/* Decodes every member's subscription, runs the chosen assignor over the
 * metadata view and builds the SyncGroup assignments into s (arena a).
 * Returns 0, or an error with errstr. */
static int kng_leader_assign(kn_consumer *c, bool locked, const kp_JoinGroupResponse *jr, kn_arena *a,
                             kp_SyncGroupRequest *s, char *errstr, size_t n) {
    kng_group *g = c->grp;
    const kn_assignor *asg = kn_asg_list_find(g->asgs, g->protocol_name);
    if (!asg) {
        kn_errstr_set(errstr, n,
                      "the coordinator chose assignor \"%s\", which this member "
                      "does not offer",
                      g->protocol_name ? g->protocol_name : "(null)");
        return KN_ERR_INCONSISTENT_GROUP_PROTOCOL;
    }
    int32_t m = jr->members.count;
    kn_asg_member *mem = kn_arena_calloc(a, (size_t)(m ? m : 1), sizeof(*mem));
    if (!mem)
        return KN_ERR__NOMEM;
    /* the union of subscribed topics */
    int32_t tcap = 0, tcnt = 0;
    for (int32_t i = 0; i < m; i++) {
        const kp_JoinGroupResponse_JoinGroupResponseMember *jm = &jr->members.items[i];
        int16_t ver;
        int err =
            kn_cp_subscription_decode(jm->metadata.ptr, jm->metadata.len < 0 ? 0 : (size_t)jm->metadata.len,
                                      a, &mem[i], &ver, errstr, n);
        if (err)
            return err;
        mem[i].member_id = jm->member_id.len >= 0 ? kn_arena_alloc(a, (size_t)jm->member_id.len + 1) : "";
        if (!mem[i].member_id)
            return KN_ERR__NOMEM;
        if (jm->member_id.len >= 0) {
            memcpy((char *)mem[i].member_id, jm->member_id.ptr, (size_t)jm->member_id.len);
            ((char *)mem[i].member_id)[jm->member_id.len] = '\0';
        }
        if (jm->group_instance_id.len >= 0) {
            char *id = kn_arena_alloc(a, (size_t)jm->group_instance_id.len + 1);
            if (!id)
                return KN_ERR__NOMEM;
            memcpy(id, jm->group_instance_id.ptr, (size_t)jm->group_instance_id.len);
            id[jm->group_instance_id.len] = '\0';
            mem[i].group_instance_id = id;
        }
        tcap += mem[i].topic_cnt;
    }
    const char **all = kn_arena_calloc(a, (size_t)(tcap ? tcap : 1), sizeof(char *));
    if (!all)
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < m; i++)
        for (int32_t k = 0; k < mem[i].topic_cnt; k++) {
            int32_t x;
            for (x = 0; x < tcnt; x++)
                if (strcmp(all[x], mem[i].topics[k]) == 0)
                    break;
            if (x == tcnt)
                all[tcnt++] = mem[i].topics[k];
        }
    knw_metadata *md = knw_metadata_get(c->client);
    /* Topics other members want and we have never asked metadata for:
     * register them; the missing ones count as 0 partitions and the
     * count check rejoins once metadata shows them. */
    knw_metadata_add_topics(c->client, all, tcnt);
    kn_asg_topic *view = kn_arena_calloc(a, (size_t)(tcnt ? tcnt : 1), sizeof(*view));
    if (!view) {
        if (md)
            knw_metadata_release(md);
        return KN_ERR__NOMEM;
    }
    int32_t vcnt = 0;
    bool missing = false;
    for (int32_t x = 0; x < tcnt; x++) {
        const knw_topic *t = md ? knw_metadata_topic(md, all[x]) : NULL;
        if (!t || t->error != 0 || t->partition_count <= 0) {
            missing = true;
            continue;
        }
        view[vcnt].name = all[x];
        view[vcnt].partition_cnt = t->partition_count;
        /* replica racks, for rack-aware assignment (KIP-881) */
        kn_asg_racks *racks = kn_arena_calloc(a, (size_t)t->partition_count, sizeof(*racks));
        bool any = false;
        for (int32_t p = 0; racks && p < t->partition_count; p++) {
            const knw_partition *kp = &t->partitions[p];
            const char **names = kn_arena_calloc(a, (size_t)(kp->replica_count + 1), sizeof(char *));
            if (!names) {
                racks = NULL;
                break;
            }
            for (int32_t r = 0; r < kp->replica_count; r++) {
                const knw_broker *b = knw_metadata_broker(md, kp->replicas[r]);
                if (b && b->rack) {
                    names[racks[p].cnt++] = kn_arena_strdup(a, b->rack);
                    any = true;
                }
            }
            racks[p].names = names;
        }
        view[vcnt].racks = any ? racks : NULL;
        vcnt++;
    }
    /* The tick reads these under the lock; a parked (custom) leader step
     * runs without it. */
    if (!locked)
        pthread_mutex_lock(&c->lock);
    kng_remember_counts(g, md, all, tcnt);
    if (!locked)
        pthread_mutex_unlock(&c->lock);
    if (missing)
        knw_metadata_request_refresh(c->client, false, "group leader: subscribed topic unknown");
    if (md)
        knw_metadata_release(md);
    kn_asg_input in = {mem, m, view, vcnt};
    kn_asg_output out = {0};
    int err = kn_asg_run(asg, &in, &out, errstr, n);
    if (err)
        return err;
    s->assignments.items = kn_arena_calloc(a, (size_t)(m ? m : 1), sizeof(*s->assignments.items));
    if (!s->assignments.items) {
        kn_asg_output_free(&out);
        return KN_ERR__NOMEM;
    }
    for (int32_t i = 0; i < m; i++) {
        uint8_t *buf;
        size_t blen;
        const kn_asg_assignment *as = &out.members[i];
        if (kn_cp_assignment_encode(as->parts, as->part_cnt, as->user_data, as->user_data_len, KN_CP_VERSION,
                                    &buf, &blen) != 0) {
            kn_asg_output_free(&out);
            return KN_ERR__NOMEM;
        }
        uint8_t *copy = kn_arena_alloc(a, blen ? blen : 1);
        if (copy)
            memcpy(copy, buf, blen);
        kn_free(buf);
        if (!copy) {
            kn_asg_output_free(&out);
            return KN_ERR__NOMEM;
        }
        s->assignments.items[i].member_id = kn_str_c(mem[i].member_id);
        s->assignments.items[i].assignment.ptr = copy;
        s->assignments.items[i].assignment.len = (int32_t)blen;
        s->assignments.count++;
    }
    kn_asg_output_free(&out);
    return 0;
}

/* ---- answers (network thread) ------------------------------------------------ */

static void kng_send_req(kn_consumer *c, knw_client *client, kng_req *r);

/* A join-phase failure: back off and go again (or stop on a fatal one). */
static void kng_join_failed(kn_consumer *c, int err, const char *what) {
    kng_group *g = c->grp;
    int64_t now = knw_now_ms();
    kn_log(knc_logger(c), KN_LOG_DEBUG, "group %s: %s: %s", c->cfg.group_id, what, kn_err_name(err));
    c->stats.rebalances_failed++;
    knc_metrics_rebalance_failed(c, now);
    if (knc_coord_failed(c, -1, err)) {
        g->retry_at_ms = now + c->cfg.retry_backoff_ms;
    } else if (err == KN_ERR_UNKNOWN_MEMBER_ID) {
        kng_set_member_id(c, NULL, 0);
        kng_set_generation(c, -1);
    } else if (err == KN_ERR_ILLEGAL_GENERATION) {
        kng_set_generation(c, -1);
    } else if (err == KN_ERR_REBALANCE_IN_PROGRESS || err == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS) {
        g->retry_at_ms = err == KN_ERR_REBALANCE_IN_PROGRESS ? 0 : now + c->cfg.retry_backoff_ms;
    } else if (err == KN_ERR_FENCED_INSTANCE_ID || err == KN_ERR_GROUP_MAX_SIZE_REACHED ||
               err == KN_ERR_INCONSISTENT_GROUP_PROTOCOL || err == KN_ERR_GROUP_AUTHORIZATION_FAILED ||
               err == KN_ERR_UNSUPPORTED_VERSION || err == KN_ERR__UNSUPPORTED_VERSION ||
               err == KN_ERR_INVALID_SESSION_TIMEOUT) {
        kng_fail(c, err, "%s failed: %s", what, kn_err_name(err));
        return;
    } else {
        g->retry_at_ms = now + c->cfg.retry_backoff_ms;
    }
    kng_set_state(c, KNG_UNJOINED);
}

static void kng_sync_done(knw_client *client, knw_resp *resp, void *opaque) {
    kng_req *r = opaque;
    kn_consumer *c = r->c;
    kng_group *g = c->grp;
    const kp_SyncGroupResponse *sr = resp->body;
    pthread_mutex_lock(&c->lock);
    g->inflight = false;
    int err = resp->err ? resp->err : !sr ? KN_ERR__PROTOCOL : sr->error_code;
    kn_log(knc_logger(c), KN_LOG_DEBUG, "group %s: SyncGroup generation %d: %s", c->cfg.group_id,
           (int)r->u.sync.generation_id, err ? kn_err_name(err) : "ok");
    if (knc_closed(c) || g->state != KNG_SYNCING)
        goto out;
    if (r->u.sync.generation_id != g->generation) {
        /* Fenced while syncing: a heartbeat for this generation was
         * answered ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID after the
         * JoinGroup answer, and kng_hb_done dropped the generation but
         * left SYNCING to this answer. It is the last thing in flight:
         * ignoring it left the member in SYNCING for ever. Join again,
         * as Java does when the heartbeat cleared the generation; what
         * a cooperative member still owns is lost, as after any
         * fencing heartbeat. */
        bool known = g->member_id && g->member_id[0]; /* UNKNOWN_MEMBER_ID cleared it */
        kng_join_failed(c, known ? KN_ERR_ILLEGAL_GENERATION : KN_ERR_UNKNOWN_MEMBER_ID,
                        "SyncGroup answered after the member was fenced");
        if (g->state == KNG_UNJOINED && knc_table_count(&c->table))
            kng_set_state(c, KNG_LOST);
        goto out;
    }
    if (err) {
        kng_join_failed(c, err, "SyncGroup");
        goto out;
    }
    kn_arena a;
    kn_arena_init(&a, 1024);
    kn_asg_tp *parts = NULL;
    int32_t cnt = 0;
    const uint8_t *ud;
    int32_t udlen;
    int16_t ver;
    char errstr[256];
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    if (sr->assignment.len > 0)
        err = kn_cp_assignment_decode(sr->assignment.ptr, (size_t)sr->assignment.len, &a, &parts, &cnt, &ud,
                                      &udlen, &ver, errstr, sizeof errstr);
    for (int32_t i = 0; l && !err && i < cnt; i++)
        if (kn_topic_partition_list_add(l, parts[i].topic, parts[i].partition) < 0)
            err = KN_ERR__NOMEM;
    kn_arena_destroy(&a);
    if (!l || err) {
        kn_topic_partition_list_destroy(l);
        kng_fail(c, err ? err : KN_ERR__NOMEM, "SyncGroup assignment: %s",
                 err == KN_ERR__PROTOCOL ? errstr : "out of memory");
        goto out;
    }
    kn_topic_partition_list_destroy(g->pending);
    g->pending = l;
    kng_set_state(c, KNG_ASSIGNING);
out:
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    kng_req_free(r);
    knw_wakeup(client);
}

static void kng_join_done(knw_client *client, knw_resp *resp, void *opaque) {
    kng_req *r = opaque;
    kn_consumer *c = r->c;
    kng_group *g = c->grp;
    const kp_JoinGroupResponse *jr = resp->body;
    kng_req *sync = NULL;
    pthread_mutex_lock(&c->lock);
    g->inflight = false;
    if (knc_closed(c) || g->state != KNG_JOINING)
        goto out;
    int err = resp->err ? resp->err : !jr ? KN_ERR__PROTOCOL : jr->error_code;
    if (err == KN_ERR_MEMBER_ID_REQUIRED) {
        /* KIP-394: join again right away with the id the coordinator gave. */
        if (kng_set_member_id(c, jr->member_id.ptr, jr->member_id.len) != 0) {
            kng_join_failed(c, KN_ERR__NOMEM, "JoinGroup");
            goto out;
        }
        g->retry_at_ms = 0;
        kng_set_state(c, KNG_UNJOINED);
        goto out;
    }
    if (err) {
        kng_join_failed(c, err, "JoinGroup");
        goto out;
    }
    if (kng_set_member_id(c, jr->member_id.ptr, jr->member_id.len) != 0) {
        kng_join_failed(c, KN_ERR__NOMEM, "JoinGroup");
        goto out;
    }
    kng_set_generation(c, jr->generation_id);
    kn_free(g->protocol_name);
    g->protocol_name =
        jr->protocol_name.len >= 0 ? kn_strndup(jr->protocol_name.ptr, (size_t)jr->protocol_name.len) : NULL;
    kn_free(g->leader_id);
    g->leader_id =
        kn_strndup(jr->leader.ptr ? jr->leader.ptr : "", jr->leader.len > 0 ? (size_t)jr->leader.len : 0);
    sync = kng_req_new(c, KP_API_SYNC_GROUP);
    if (!sync) {
        kng_join_failed(c, KN_ERR__NOMEM, "SyncGroup");
        goto out;
    }
    kp_SyncGroupRequest *s = &sync->u.sync;
    kp_SyncGroupRequest_init(s);
    s->group_id = kn_str_c(kn_arena_strdup(&sync->arena, c->cfg.group_id));
    s->generation_id = g->generation;
    s->member_id = kn_str_c(kn_arena_strdup(&sync->arena, g->member_id));
    s->group_instance_id = kn_str_c(kn_arena_strdup(&sync->arena, g->instance_id));
    s->protocol_type = kn_str_c("consumer");
    s->protocol_name = kn_str_c(kn_arena_strdup(&sync->arena, g->protocol_name));
    bool leader = g->leader_id && g->member_id && strcmp(g->leader_id, g->member_id) == 0;
    const kn_assignor *chosen = kn_asg_list_find(g->asgs, g->protocol_name);
    if (leader && !jr->skip_assignment && chosen && chosen->opaque) {
        /* A custom assignor is application code: poll runs it. */
        g->leader_resp = resp;
        g->leader_sync = sync;
        resp = NULL;
        sync = NULL;
        kng_set_state(c, KNG_LEADER);
        goto out;
    }
    if (leader && !jr->skip_assignment) {
        char errstr[256] = "";
        err = kng_leader_assign(c, true, jr, &sync->arena, s, errstr, sizeof errstr);
        if (err) {
            kng_req_free(sync);
            sync = NULL;
            kng_fail(c, err, "group leader assignment failed: %s", errstr);
            goto out;
        }
    }
    kn_log(knc_logger(c), KN_LOG_DEBUG, "group %s: joined generation %d as %s (%d members, protocol %s)", c->cfg.group_id,
           (int)g->generation, leader ? "leader" : "follower", (int)jr->members.count,
           g->protocol_name ? g->protocol_name : "-");
    sync->timeout_ms = g->rebalance_timeout_ms + 5000;
    g->inflight = true;
    kng_set_state(c, KNG_SYNCING);
out:
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    kng_req_free(r);
    if (sync)
        kng_send_req(c, client, sync);
    knw_wakeup(client);
}

static void kng_hb_done(knw_client *client, knw_resp *resp, void *opaque) {
    kng_req *r = opaque;
    kn_consumer *c = r->c;
    kng_group *g = c->grp;
    const kp_HeartbeatResponse *hr = resp->body;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&c->lock);
    g->hb_inflight = false;
    knc_metrics_heartbeat(c, resp->latency_us, !resp->err && hr && !hr->error_code, now);
    if (knc_closed(c) || r->generation != g->generation || g->state == KNG_IDLE || g->state == KNG_FATAL)
        goto out;
    int err = resp->err ? resp->err : !hr ? KN_ERR__PROTOCOL : hr->error_code;
    if (!err)
        goto out;
    kn_log(knc_logger(c), KN_LOG_DEBUG, "group %s: heartbeat: %s", c->cfg.group_id, kn_err_name(err));
    if (knc_coord_failed(c, r->node, err)) {
        g->next_hb_ms = now + c->cfg.retry_backoff_ms;
    } else if (err == KN_ERR_REBALANCE_IN_PROGRESS) {
        /* Only news to a member past its JoinGroup (as Java ignores it
         * outside STABLE): one still preparing or joining is already
         * taking part, and a rejoin flag raised then would outlive the
         * join and start another rebalance right after it, which the
         * other members' heartbeats would answer in kind, forever. */
        if (g->state == KNG_SYNCING || g->state == KNG_LEADER || g->state == KNG_ASSIGNING ||
            g->state == KNG_STABLE) {
            g->rejoin = true;
            snprintf(g->reason, sizeof g->reason, "the group is rebalancing");
        }
    } else if (err == KN_ERR_ILLEGAL_GENERATION || err == KN_ERR_UNKNOWN_MEMBER_ID) {
        /* Fenced: whatever we own may already be elsewhere. */
        if (err == KN_ERR_UNKNOWN_MEMBER_ID)
            kng_set_member_id(c, NULL, 0);
        kng_set_generation(c, -1);
        snprintf(g->reason, sizeof g->reason, "heartbeat: %s", kn_err_name(err));
        /* A join round in flight is left to its answer: JoinGroup's
         * sets a new generation; SyncGroup's, now for a dropped one,
         * sends the member back to join (kng_sync_done). */
        if (g->state != KNG_JOINING && g->state != KNG_SYNCING)
            kng_set_state(c, knc_table_count(&c->table) ? KNG_LOST : KNG_UNJOINED);
    } else if (err == KN_ERR_FENCED_INSTANCE_ID) {
        kng_fail(c, err, "another member with group.instance.id %s joined: this one is fenced",
                 g->instance_id ? g->instance_id : "");
    } else {
        g->next_hb_ms = now + c->cfg.retry_backoff_ms;
    }
out:
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    kng_req_free(r);
    knw_wakeup(client);
}

static void kng_leave_done(knw_client *client, knw_resp *resp, void *opaque) {
    (void)client;
    knw_resp_free(resp);
    kng_req_free(opaque);
}

static knw_cb *kng_cb_for(int16_t api) {
    switch (api) {
    case KP_API_JOIN_GROUP:
        return kng_join_done;
    case KP_API_SYNC_GROUP:
        return kng_sync_done;
    case KP_API_HEARTBEAT:
        return kng_hb_done;
    default:
        return kng_leave_done;
    }
}

static void kng_send_req(kn_consumer *c, knw_client *client, kng_req *r) {
    (void)c;
    knw_cb *cb = kng_cb_for(r->api);
    int16_t min = r->api == KP_API_LEAVE_GROUP ? 3 : -1;
    knw_send(client, r->node, r->api, min, -1, &r->u, r->timeout_ms, cb, r);
}

/* ---- the tick ------------------------------------------------------------------ */

static kng_req *kng_leave_build(kn_consumer *c, const char *reason) {
    kng_group *g = c->grp;
    kng_req *r = kng_req_new(c, KP_API_LEAVE_GROUP);
    if (!r)
        return NULL;
    kp_LeaveGroupRequest *l = &r->u.leave;
    kp_LeaveGroupRequest_init(l);
    l->group_id = kn_str_c(kn_arena_strdup(&r->arena, c->cfg.group_id));
    /* v3+ (all Kafka 4 serves): the member goes in the members array. */
    l->members.items = kn_arena_calloc(&r->arena, 1, sizeof(*l->members.items));
    if (!l->members.items) {
        kng_req_free(r);
        return NULL;
    }
    l->members.count = 1;
    l->members.items[0].member_id = kn_str_c(kn_arena_strdup(&r->arena, g->member_id));
    l->members.items[0].group_instance_id = kn_str_c(kn_arena_strdup(&r->arena, g->instance_id));
    l->members.items[0].reason = kn_str_c(kn_arena_strdup(&r->arena, reason));
    r->timeout_ms = c->cfg.request_timeout_ms;
    return r;
}

static void *kng_classic_tick(kn_consumer *c, const knw_metadata *md, int64_t now_ms, int *next_ms) {
    kng_group *g = c->grp;
    kng_req *plan = NULL;
    *next_ms = 1000;
    bool member = g->generation >= 0 && g->member_id && g->member_id[0];
    /* max.poll.interval.ms: a member the application stopped polling
     * leaves, so the others can take over its partitions. */
    if (member && !knc_in_poll(c) && (g->state == KNG_STABLE || g->state == KNG_UNJOINED) &&
        now_ms - g->last_poll_ms > g->rebalance_timeout_ms) {
        if (!g->instance_id && knc_coordinator(c) >= 0)
            plan = kng_leave_build(c, "consumer poll timeout has expired");
        kng_set_member_id(c, NULL, 0);
        kng_set_generation(c, -1);
        g->poll_expired = true;
        snprintf(g->reason, sizeof g->reason, "consumer poll timeout has expired");
        kng_set_state(c, knc_table_count(&c->table) ? KNG_LOST : KNG_UNJOINED);
        return plan;
    }
    if (g->state == KNG_STABLE) {
        if (g->has_pattern && md && md->all_topics && kng_match_pattern(g, md)) {
            knw_metadata_add_topics(c->client, (const char *const *)g->topics, g->topic_cnt);
            g->rejoin = true;
            snprintf(g->reason, sizeof g->reason, "the topics matching the pattern changed");
        }
        if (!g->rejoin && kng_counts_changed(g, md)) {
            g->rejoin = true;
            snprintf(g->reason, sizeof g->reason, "a subscribed topic's partition count changed");
        }
        if (g->rejoin && !g->poll_expired) {
            g->rejoin = false;
            kng_set_state(c, KNG_UNJOINED);
        }
    }
    if (g->state == KNG_UNJOINED && !g->poll_expired) {
        if (now_ms < g->retry_at_ms) {
            *next_ms = (int)(g->retry_at_ms - now_ms);
        } else if (!g->prepared && knc_table_count(&c->table) > 0 && (!g->cooperative || c->cfg.auto_commit)) {
            /* eager: revoke everything first; under auto-commit commit
             * first (both protocols). The application does it in poll. */
            kng_set_state(c, KNG_PREPARE);
        } else if (!kng_metadata_ready(g, md) &&
                   (!g->md_wait_start || now_ms - g->md_wait_start < c->cfg.request_timeout_ms)) {
            /* Join with the subscribed topics' metadata at hand, so a
             * leader assigns them in the first round (bounded wait: a
             * topic that never appears is assigned once it does). */
            if (!g->md_wait_start)
                g->md_wait_start = now_ms;
            g->want_all_topics = g->has_pattern;
            knw_metadata_request_refresh(c->client, false, "group join needs topic metadata");
            *next_ms = 50;
        } else if (knc_coordinator(c) >= 0 && !g->inflight) {
            g->md_wait_start = 0;
            kng_req *j = kng_join_build(c);
            if (j) {
                if (!g->join_started_ms)
                    g->join_started_ms = now_ms;
                g->prepared = false;
                g->inflight = true;
                kng_set_state(c, KNG_JOINING);
                j->next = plan;
                plan = j;
            }
        }
    }
    /* Heartbeats keep the generation alive whenever we hold one outside
     * the join round itself. */
    if (member && !g->hb_inflight && knc_coordinator(c) >= 0 && g->state != KNG_JOINING && g->state != KNG_SYNCING &&
        g->state != KNG_LEADER && g->state != KNG_FATAL && g->state != KNG_IDLE) {
        if (now_ms >= g->next_hb_ms) {
            kng_req *h = kng_req_new(c, KP_API_HEARTBEAT);
            if (h) {
                kp_HeartbeatRequest_init(&h->u.hb);
                h->u.hb.group_id = kn_str_c(kn_arena_strdup(&h->arena, c->cfg.group_id));
                h->u.hb.generation_id = g->generation;
                h->u.hb.member_id = kn_str_c(kn_arena_strdup(&h->arena, g->member_id));
                h->u.hb.group_instance_id = kn_str_c(kn_arena_strdup(&h->arena, g->instance_id));
                h->generation = g->generation;
                h->timeout_ms = g->session_timeout_ms;
                g->hb_inflight = true;
                g->next_hb_ms = now_ms + g->heartbeat_interval_ms;
                h->next = plan;
                plan = h;
            }
        }
        int64_t left = g->next_hb_ms - now_ms;
        if (left < *next_ms)
            *next_ms = left > 0 ? (int)left : 0;
    }
    if (member) {
        int64_t left = g->last_poll_ms + g->rebalance_timeout_ms - now_ms + 1;
        if (left < *next_ms)
            *next_ms = left > 0 ? (int)left : 0;
    }
    if (g->state == KNG_UNJOINED && knc_coordinator(c) < 0 && *next_ms > 100)
        *next_ms = 100;
    return plan;
}

static void kng_classic_send(kn_consumer *c, knw_client *client, void *plan) {
    kng_req *r = plan;
    while (r) {
        kng_req *next = r->next;
        r->next = NULL;
        kng_send_req(c, client, r);
        r = next;
    }
}

static int kng_classic_leader_step(kn_consumer *c) {
    kng_group *g = c->grp;
    knw_resp *resp = g->leader_resp;
    kng_req *sync = g->leader_sync;
    g->leader_resp = NULL;
    g->leader_sync = NULL;
    if (!resp || !sync) {
        knw_resp_free(resp);
        kng_req_free(sync);
        return 0;
    }
    int32_t gen = g->generation;
    pthread_mutex_unlock(&c->lock);
    char errstr[256] = "";
    int err = kng_leader_assign(c, false, resp->body, &sync->arena, &sync->u.sync, errstr, sizeof errstr);
    knw_resp_free(resp);
    pthread_mutex_lock(&c->lock);
    if (g->state != KNG_LEADER || g->generation != gen) {
        kng_req_free(sync); /* left or fenced meanwhile */
        return 0;
    }
    if (err) {
        kng_req_free(sync);
        kng_fail(c, err, "group leader assignment failed: %s", errstr);
        return err;
    }
    g->inflight = true;
    kng_set_state(c, KNG_SYNCING);
    pthread_mutex_unlock(&c->lock);
    kng_send_req(c, c->client, sync);
    pthread_mutex_lock(&c->lock);
    return 0;
}

static void kng_classic_discard(kng_group *g) {
    knw_resp_free(g->leader_resp);
    kng_req_free(g->leader_sync);
    g->leader_resp = NULL;
    g->leader_sync = NULL;
}

static void kng_classic_leave(kn_consumer *c, const char *reason) {
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    kng_classic_discard(g); /* a parked leader step is moot */
    kng_req *r = NULL;
    if (!g->instance_id && g->member_id && g->member_id[0] && knc_coordinator(c) >= 0)
        r = kng_leave_build(c, reason);
    kng_set_member_id(c, NULL, 0);
    kng_set_generation(c, -1);
    pthread_mutex_unlock(&c->lock);
    int timeout = knc_call_timeout(c, c->cfg.request_timeout_ms);
    if (r && timeout <= 0) {
        /* close with no time left: the coordinator expires the member */
        kng_req_free(r);
        return;
    }
    if (!r)
        return;
    knw_resp *resp = knw_call(c->client, r->node, KP_API_LEAVE_GROUP, 3, -1, &r->u.leave, timeout);
    const kp_LeaveGroupResponse *lr = resp->body;
    int err = resp->err ? resp->err : !lr ? KN_ERR__PROTOCOL : lr->error_code;
    if (!err && lr->members.count > 0)
        err = lr->members.items[0].error_code;
    kn_log(knc_logger(c), err ? KN_LOG_INFO : KN_LOG_DEBUG, "group %s: LeaveGroup: %s", c->cfg.group_id,
           err ? kn_err_name(err) : "ok");
    knw_resp_free(resp);
    kng_req_free(r);
}

const kng_ops kng_classic_ops = {
    .tick = kng_classic_tick,
    .send = kng_classic_send,
    .leave = kng_classic_leave,
    .leader_step = kng_classic_leader_step,
    .destroy = kng_classic_discard,
};

/*
 * rebalance.c: the application-thread half of group membership, and
 * the group's network ticker entry.
 *
 * Owns: kng_group's life (created with the consumer when group.id is
 * set), the public subscribe / subscribe_pattern / subscribe_regex /
 * unsubscribe / subscription / group_metadata / enforce_rebalance
 * calls, and the parked steps the network thread leaves for poll:
 *
 *  - PREPARE: before a join, commit under auto-commit, then revoke
 *    (eager: everything; cooperative: partitions of topics no longer
 *    subscribed) with the listener's REVOKED;
 *  - ASSIGNING: apply the assignment: revoke what moves away (commit
 *    first under auto-commit, REVOKED), add what is new (ASSIGNED);
 *    retained partitions keep their position and buffered data;
 *  - LOST: drop everything with LOST (no commit), then rejoin.
 *
 * Each step runs the listener without c->lock, then re-takes it and
 * moves the state machine on only if nothing changed meanwhile.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "consumer/consumer_metrics.h"
#include "consumer/assignment.h"
#include "consumer/group/group.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"

/* ---- helpers shared with classic.c / kip848.c ---------------------------- */

static bool kng_needs_app(kng_state s) {
    return s == KNG_PREPARE || s == KNG_ASSIGNING || s == KNG_LOST || s == KNG_FATAL || s == KNG_LEADER;
}

static const char *const kng_state_names[] = {"IDLE",   "UNJOINED",  "PREPARE", "JOINING", "SYNCING",
                                              "LEADER", "ASSIGNING", "STABLE",  "LOST",    "FATAL"};

void kng_set_state(kn_consumer *c, kng_state s) {
    if (c->grp->state != s)
        kn_log(knc_logger(c), KN_LOG_DEBUG, "group %s member %s generation %d: %s -> %s%s%s", c->cfg.group_id,
               c->grp->member_id ? c->grp->member_id : "", (int)c->grp->generation,
               kng_state_names[c->grp->state], kng_state_names[s], c->grp->reason[0] ? ": " : "",
               c->grp->reason);
    if (c->grp->state != s && c->grp->revoke_commit == KNG_RC_DONE)
        c->grp->revoke_commit = KNG_RC_NONE; /* answered for a step that is over */
    c->grp->state = s;
    kng_publish(c);
    if (kng_needs_app(s))
        knc_signal(c); /* poll has a rebalance step to run */
}

void kng_publish(kn_consumer *c) {
    const kng_group *g = c->grp;
    knc_member *m = &c->member;
    m->member_id = "";
    m->instance_id = NULL;
    m->epoch = -1;
    m->subscribed = g && g->state != KNG_IDLE;
    /* A KIP-848 coordinator (Kafka 4.3) checks each partition's
     * assignment epoch, so the newest epoch is always the right one;
     * one taken at queue time goes stale when the epoch moves while the
     * commit waits. A classic coordinator checks only the generation:
     * there the one the commit was made under protects partitions that
     * moved since. */
    m->identity_at_send = g && g->consumer_protocol;
    /* Not a member of a generation (yet, or any more): commits carry
     * generation -1 and no ids, as a manually assigned consumer's do. */
    if (!g || g->state == KNG_IDLE || g->generation < 0 || !g->member_id || (g->consumer_protocol && !g->joined))
        return;
    m->member_id = g->member_id;
    m->instance_id = g->instance_id;
    m->epoch = g->generation;
}

int kng_set_member_id(kn_consumer *c, const char *id, int32_t len) {
    kng_group *g = c->grp;
    if (!id || len <= 0) {
        /* Forgetting the id never fails: a fenced id must not stay. */
        if (g->member_id)
            g->member_id[0] = '\0';
        kng_publish(c);
        return 0;
    }
    char *m = kn_strndup(id, (size_t)len);
    if (!m)
        return KN_ERR__NOMEM;
    kn_free(g->member_id);
    g->member_id = m;
    kng_publish(c); /* the old id is gone: no one may read it */
    return 0;
}

void kng_set_generation(kn_consumer *c, int32_t generation) {
    c->grp->generation = generation;
    kng_publish(c);
}

void kng_fail(kn_consumer *c, int err, const char *fmt, ...) {
    kng_group *g = c->grp;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->fatal_msg, sizeof g->fatal_msg, fmt, ap);
    va_end(ap);
    g->fatal_err = err ? err : KN_ERR__FAIL;
    kng_set_state(c, KNG_FATAL);
}

bool kng_app_pending(const kn_consumer *c) {
    /* A step waiting for its commit before a revoke has nothing for
     * poll to do until the commit answers (kng_pre_revoke_done). */
    return c->grp && kng_needs_app(c->grp->state) && c->grp->revoke_commit != KNG_RC_INFLIGHT;
}

bool kng_subscribed(const kn_consumer *c) { return c->grp && c->grp->state != KNG_IDLE; }

void kng_polled(kn_consumer *c, int64_t now_ms) {
    kng_group *g = c->grp;
    if (!g)
        return;
    g->last_poll_ms = now_ms;
    /* A member that left after max.poll.interval.ms rejoins now. */
    if (g->poll_expired && g->state == KNG_UNJOINED) {
        g->poll_expired = false;
        g->prepared = true;
        g->retry_at_ms = 0;
    }
}

/* ---- creation ---------------------------------------------------------------- */

/* Java class names of the built-in assignors, and their protocol names. */
static const char *kng_assignor_name(const char *s) {
    static const char *const map[][2] = {
        {"org.apache.kafka.clients.consumer.RangeAssignor", "range"},
        {"org.apache.kafka.clients.consumer.RoundRobinAssignor", "roundrobin"},
        {"org.apache.kafka.clients.consumer.StickyAssignor", "sticky"},
        {"org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative-sticky"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i][0]) == 0)
            return map[i][1];
    return s;
}

static int kng_parse_assignors(kng_group *g, const kn_conf *conf, char *errstr, size_t n) {
    g->asgs = kn_asg_list_new();
    if (!g->asgs)
        return KN_ERR__NOMEM;
    g->cooperative = true;
    char **items = NULL;
    int count = 0;
    int err = kn_conf_get_list(conf, "partition.assignment.strategy", &items, &count);
    for (int i = 0; !err && i < count; i++) {
        if (!items[i][0])
            continue;
        err = kn_asg_list_add_builtin(g->asgs, kng_assignor_name(items[i]), errstr, n);
        if (err) {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "partition.assignment.strategy: %s", errstr);
            kn_errstr_set(errstr, n, "%s", tmp);
            err = KN_ERR__CONFIG;
            break;
        }
        const kn_assignor *a = kn_asg_list_at(g->asgs, kn_asg_list_count(g->asgs) - 1);
        if (!(a->protocols & KN_ASG_COOPERATIVE))
            g->cooperative = false;
    }
    kn_conf_list_free(items, count);
    if (!err && kn_asg_list_count(g->asgs) == 0) {
        kn_errstr_set(errstr, n, "partition.assignment.strategy is empty");
        err = KN_ERR__CONFIG;
    }
    return err;
}

static int kng_int(const kn_conf *conf, const char *key) {
    int64_t v = kn_conf_get_int(conf, key);
    return v > 0x7fffffff ? 0x7fffffff : v < 0 ? 0 : (int)v;
}

int kng_create(kn_consumer *c, const kn_conf *conf, char *errstr, size_t n) {
    c->grp_ticker_id = -1;
    /* Set once, before any thread reads it (offsets.c reads it without
     * the lock); the rest is republished at every change. */
    c->member.group_id = c->cfg.group_id;
    kng_publish(c); /* no group yet: not a member */
    if (!c->cfg.group_id)
        return 0;
    kng_group *g = kn_calloc(1, sizeof(*g));
    if (!g)
        return KN_ERR__NOMEM;
    c->grp = g;
    g->generation = -1;
    g->member_id = kn_strdup("");
    if (!g->member_id)
        return KN_ERR__NOMEM;
    kng_publish(c);
    const char *proto = kn_conf_get_str(conf, "group.protocol");
    g->consumer_protocol = proto && strcmp(proto, "consumer") == 0;
    g->ops = g->consumer_protocol ? &kng_848_ops : &kng_classic_ops;
    const char *inst = kn_conf_get_str(conf, "group.instance.id");
    if (inst && *inst && !(g->instance_id = kn_strdup(inst)))
        return KN_ERR__NOMEM;
    const char *rack = kn_conf_get_str(conf, "client.rack");
    if (rack && *rack && !(g->rack = kn_strdup(rack)))
        return KN_ERR__NOMEM;
    const char *ra = kn_conf_get_str(conf, "group.remote.assignor");
    if (ra && *ra && !(g->remote_assignor = kn_strdup(ra)))
        return KN_ERR__NOMEM;
    g->exclude_internal = kn_conf_get_bool(conf, "exclude.internal.topics") != 0;
    g->session_timeout_ms = kng_int(conf, "session.timeout.ms");
    g->rebalance_timeout_ms = kng_int(conf, "max.poll.interval.ms");
    g->heartbeat_interval_ms = kng_int(conf, "heartbeat.interval.ms");
    g->metadata_max_age_ms = kng_int(conf, "metadata.max.age.ms");
    if (!g->consumer_protocol)
        return kng_parse_assignors(g, conf, errstr, n);
    return 0;
}

void kng_destroy(kn_consumer *c) {
    kng_group *g = c->grp;
    if (!g)
        return;
    kng_subscription_clear(g);
    if (g->ops)
        g->ops->destroy(g);
    kng_custom_destroy(g);
    kn_asg_list_destroy(g->asgs);
    kn_free(g->remote_assignor);
    kn_free(g->member_id);
    kn_free(g->instance_id);
    kn_free(g->protocol_name);
    kn_free(g->leader_id);
    kn_free(g->rack);
    kn_topic_partition_list_destroy(g->pending);
    kn_topic_partition_list_destroy(g->last_assigned);
    kn_topic_partition_list_destroy(g->acked);
    kn_free(g);
    c->grp = NULL;
    kng_publish(c); /* nothing left to borrow from */
}

/* ---- the network ticker ------------------------------------------------------- */

int kng_tick(knw_client *client, int64_t now_ms, void *opaque) {
    kn_consumer *c = opaque;
    knw_metadata *md = knw_metadata_get(client);
    int next = 1000;
    void *plan = NULL;
    bool want_all = false;
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    if (knc_closed(c) || !g || g->state == KNG_IDLE || g->state == KNG_FATAL) {
        pthread_mutex_unlock(&c->lock);
        if (md)
            knw_metadata_release(md);
        return -1;
    }
    /* A pattern is matched against an all-topics snapshot, refreshed
     * every metadata.max.age.ms. */
    if (g->want_all_topics) {
        g->want_all_topics = false;
        want_all = true;
    }
    if (g->has_pattern && now_ms >= g->next_pattern_refresh_ms) {
        g->next_pattern_refresh_ms = now_ms + (g->metadata_max_age_ms > 0 ? g->metadata_max_age_ms : 1000);
        want_all = true;
    }
    const kng_ops *ops = g->ops;
    plan = ops->tick(c, md, now_ms, &next);
    pthread_mutex_unlock(&c->lock);
    ops->send(c, client, plan);
    if (md)
        knw_metadata_release(md);
    if (want_all)
        knw_metadata_request_refresh(client, true, "pattern subscription");
    return next < 10 ? 10 : next;
}

/* ---- listener steps (application thread) -------------------------------------- */

static kn_topic_partition_list *kng_owned_list(kn_consumer *c) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (size_t i = 0; l && i < knc_table_count(&c->table); i++)
        if (kn_topic_partition_list_add(l, knc_table_at(&c->table, i)->topic,
                                        knc_table_at(&c->table, i)->partition) < 0) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
    return l;
}

/* Entries of a (not) in b. */
static kn_topic_partition_list *kng_minus(const kn_topic_partition_list *a,
                                          const kn_topic_partition_list *b) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (size_t i = 0; l && a && i < kn_topic_partition_list_count(a); i++) {
        const char *t = kn_topic_partition_list_topic(a, i);
        int32_t p = kn_topic_partition_list_partition(a, i);
        if (b && kn_topic_partition_list_find(b, t, p) >= 0)
            continue;
        if (kn_topic_partition_list_add(l, t, p) < 0) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
    }
    return l;
}

static int kng_call(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts) {
    kng_group *g = c->grp;
    if (!g->cb)
        return 0;
    knc_cb_enter(c);
    int rc = g->cb(c, ev, parts, g->opaque);
    knc_cb_leave(c);
    return rc;
}

/* The positions of the listed owned partitions (c->lock held). NULL on
 * allocation failure. */
static kn_topic_partition_list *kng_positions_of(kn_consumer *c, const kn_topic_partition_list *parts) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (size_t i = 0; l && i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        if (p->state != KNC_POS_VALID || kn_topic_partition_list_find(parts, p->topic, p->partition) < 0)
            continue;
        int at = kn_topic_partition_list_add(l, p->topic, p->partition);
        if (at < 0) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
        kn_topic_partition_list_set_offset(l, (size_t)at, p->position);
        kn_topic_partition_list_set_leader_epoch(l, (size_t)at, p->position_epoch);
    }
    return l;
}

/* A parked step that revokes (c->lock held): under auto-commit, first
 * commit the positions of commit_parts asynchronously, as Java's
 * onJoinPrepare does, so poll never blocks on it. Returns true when the
 * step must wait: the revoke_parts stop being fetched and returned
 * (pending revocation) and poll runs the step again once the commit
 * answered (kng_pre_revoke_done), or gave up after max.poll.interval.ms
 * (Java's joinPrepareTimer is the rebalance timeout). Returns false
 * when the step goes on now: commit answered, or nothing to commit. */
static void kng_pre_revoke_done(kn_consumer *c, int err);

static bool kng_pre_revoke_commit(kn_consumer *c, const kn_topic_partition_list *commit_parts,
                                  const kn_topic_partition_list *revoke_parts) {
    kng_group *g = c->grp;
    if (g->revoke_commit == KNG_RC_DONE && g->revoke_commit_state == g->state) {
        g->revoke_commit = KNG_RC_NONE;
        return false;
    }
    if (!c->cfg.auto_commit || !commit_parts || kn_topic_partition_list_count(commit_parts) == 0)
        return false;
    kn_topic_partition_list *l = kng_positions_of(c, commit_parts);
    if (!l || kn_topic_partition_list_count(l) == 0) {
        kn_topic_partition_list_destroy(l);
        return false;
    }
    int64_t deadline = knw_now_ms() + g->rebalance_timeout_ms;
    int err = knc_commit_before_revoke(c, l, deadline, kng_pre_revoke_done);
    if (err) {
        kn_log(knc_logger(c), KN_LOG_WARN, "group %s: the auto-commit before revoking could not be queued: %s",
               c->cfg.group_id, kn_err_name(err));
        return false;
    }
    for (size_t i = 0; revoke_parts && i < knc_table_count(&c->table); i++) {
        knc_part *p = knc_table_at(&c->table, i);
        if (kn_topic_partition_list_find(revoke_parts, p->topic, p->partition) >= 0)
            p->revoking = true;
    }
    g->revoke_commit = KNG_RC_INFLIGHT;
    g->revoke_commit_state = g->state;
    return true;
}

/* The commit before a revoke finished with err (c->lock held, from
 * offsets.c): the parked rebalance step may go on. */
static void kng_pre_revoke_done(kn_consumer *c, int err) {
    kng_group *g = c->grp;
    if (!g || g->revoke_commit != KNG_RC_INFLIGHT)
        return;
    if (err)
        kn_log(knc_logger(c), err == KN_ERR__TIMED_OUT ? KN_LOG_ERROR : KN_LOG_WARN,
               "group %s: the auto-commit before revoking partitions failed (%s); "
               "going on with the rebalance", c->cfg.group_id, kn_err_name(err));
    g->revoke_commit = KNG_RC_DONE;
    knc_signal(c); /* the parked step can run again */
}

/* Commits the current positions of parts synchronously (auto-commit
 * before the revoke of unsubscribe / close), within the close timeout. */
static void kng_commit_positions(kn_consumer *c, const kn_topic_partition_list *parts) {
    if (!c->cfg.auto_commit || !parts || kn_topic_partition_list_count(parts) == 0)
        return;
    int timeout = knc_call_timeout(c, -1);
    if (timeout <= 0)
        return; /* close with no time left (a collected Lua consumer) */
    kn_topic_partition_list *all = kn_consumer_assignment(c);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (size_t i = 0; all && l && i < kn_topic_partition_list_count(all); i++) {
        const char *t = kn_topic_partition_list_topic(all, i);
        int32_t p = kn_topic_partition_list_partition(all, i);
        int64_t off = kn_topic_partition_list_offset(all, i);
        if (off < 0 || kn_topic_partition_list_find(parts, t, p) < 0)
            continue;
        int at = kn_topic_partition_list_add(l, t, p);
        if (at >= 0) {
            kn_topic_partition_list_set_offset(l, (size_t)at, off);
            kn_topic_partition_list_set_leader_epoch(l, (size_t)at,
                                                     kn_topic_partition_list_leader_epoch(all, i));
        }
    }
    if (l && kn_topic_partition_list_count(l) > 0)
        knc_commit_sync_before_revoke(c, l, timeout);
    kn_topic_partition_list_destroy(l);
    kn_topic_partition_list_destroy(all);
}

/* Revokes parts (REVOKED, after a synchronous auto-commit when commit),
 * keeping the rest. */
static int kng_revoke(kn_consumer *c, const kn_topic_partition_list *parts, bool lost, bool commit) {
    if (!parts || kn_topic_partition_list_count(parts) == 0)
        return 0;
    if (!lost && commit)
        kng_commit_positions(c, parts);
    int rc = kng_call(c, lost ? KN_REBALANCE_LOST : KN_REBALANCE_REVOKED, parts);
    pthread_mutex_lock(&c->lock);
    kn_topic_partition_list *owned = kng_owned_list(c);
    if (lost)
        c->stats.partitions_lost += (int64_t)kn_topic_partition_list_count(parts);
    else
        c->stats.partitions_revoked += (int64_t)kn_topic_partition_list_count(parts);
    pthread_mutex_unlock(&c->lock);
    kn_topic_partition_list *keep = kng_minus(owned, parts);
    int set = keep ? knc_set_assignment(c, keep) : KN_ERR__NOMEM;
    kn_topic_partition_list_destroy(keep);
    kn_topic_partition_list_destroy(owned);
    /* The listener's error first; else the partitions still owned are
     * an error poll reports (never a silent half-revoke). */
    return rc ? rc : set;
}

static int kng_step_prepare(kn_consumer *c) {
    kng_group *g = c->grp;
    kn_topic_partition_list *owned = kng_owned_list(c);
    kn_topic_partition_list *revoke = NULL;
    if (!g->cooperative) {
        revoke = owned;
        owned = NULL;
    } else {
        revoke = kn_topic_partition_list_new();
        for (size_t i = 0; revoke && owned && i < kn_topic_partition_list_count(owned); i++)
            if (!kng_subscribed_to(g, kn_topic_partition_list_topic(owned, i)))
                kn_topic_partition_list_add(revoke, kn_topic_partition_list_topic(owned, i),
                                            kn_topic_partition_list_partition(owned, i));
    }
    /* Java commits every consumed position before rejoining, without
     * blocking poll: the step waits for the commit's answer. */
    bool wait = kng_pre_revoke_commit(c, g->cooperative ? owned : revoke, revoke);
    kn_topic_partition_list_destroy(owned);
    if (wait) {
        kn_topic_partition_list_destroy(revoke);
        return 0;
    }
    pthread_mutex_unlock(&c->lock);
    int rc = kng_revoke(c, revoke, false, false);
    kn_topic_partition_list_destroy(revoke);
    pthread_mutex_lock(&c->lock);
    if (g->state == KNG_PREPARE) {
        g->prepared = true;
        kng_set_state(c, KNG_UNJOINED);
    }
    return rc;
}

static int kng_step_assign(kn_consumer *c) {
    kng_group *g = c->grp;
    kn_topic_partition_list *owned = kng_owned_list(c);
    kn_topic_partition_list *revoked = kng_minus(owned, g->pending);
    if (kng_pre_revoke_commit(c, revoked, revoked)) {
        /* the target stays parked until the commit answers */
        kn_topic_partition_list_destroy(owned);
        kn_topic_partition_list_destroy(revoked);
        return 0;
    }
    kn_topic_partition_list *target = g->pending;
    g->pending = NULL;
    pthread_mutex_unlock(&c->lock);
    int rc = 0;
    kn_topic_partition_list *added = kng_minus(target, owned);
    size_t nrev = revoked ? kn_topic_partition_list_count(revoked) : 0;
    if (nrev)
        rc = kng_revoke(c, revoked, false, false);
    /* KIP-848: a member fenced (or given a newer target) while its
     * listener ran abandons this reconciliation, as Java's does: the
     * partitions are not added and ASSIGNED is not called; the LOST (or
     * the next ASSIGNING) step follows in the next poll. */
    pthread_mutex_lock(&c->lock);
    bool abandon = g->consumer_protocol && (g->state != KNG_ASSIGNING || g->pending);
    pthread_mutex_unlock(&c->lock);
    int set = 0;
    if (!abandon && target && (set = knc_set_assignment(c, target)) != 0) {
        /* Not applied (out of memory): the target stays parked and the
         * step runs again from the next poll; ASSIGNED is not called
         * for partitions that are not assigned. */
        pthread_mutex_lock(&c->lock);
        if (!g->pending) {
            g->pending = target;
            target = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        abandon = true;
        if (!rc)
            rc = set;
    }
    if (!abandon) {
        int rc2 = kng_call(c, KN_REBALANCE_ASSIGNED, added);
        if (!rc)
            rc = rc2;
    }
    pthread_mutex_lock(&c->lock);
    /* Moved on only if the network thread did not replace the target
     * (KIP-848) or fence the member meanwhile. */
    if (g->state == KNG_ASSIGNING && !g->pending && !set) {
        int64_t now = knw_now_ms();
        c->stats.rebalances++;
        knc_metrics_rebalance(c, g->join_started_ms ? now - g->join_started_ms : -1, now);
        if (g->join_started_ms) {
            c->stats.join_latency_ms_last = now - g->join_started_ms;
            c->stats.join_latency_ms_total += now - g->join_started_ms;
            g->join_started_ms = 0;
        }
        kn_topic_partition_list_destroy(g->last_assigned);
        g->last_assigned = target;
        target = NULL;
        g->poll_expired = false;
        g->reason[0] = '\0';
        if (nrev && g->cooperative && !g->consumer_protocol) {
            /* KIP-429: the revoked partitions go to their new owner in
             * the follow-up rebalance. */
            g->rejoin = true;
            snprintf(g->reason, sizeof g->reason, "cooperative: partitions revoked");
        }
        /* KIP-848: the next heartbeat, right away, acknowledges. */
        if (g->consumer_protocol)
            g->next_hb_ms = 0;
        kng_set_state(c, KNG_STABLE);
    }
    kn_topic_partition_list_destroy(target);
    kn_topic_partition_list_destroy(owned);
    kn_topic_partition_list_destroy(revoked);
    kn_topic_partition_list_destroy(added);
    return rc;
}

static int kng_step_lost(kn_consumer *c) {
    kng_group *g = c->grp;
    kn_topic_partition_list *owned = kng_owned_list(c);
    pthread_mutex_unlock(&c->lock);
    int rc = kng_revoke(c, owned, true, false);
    kn_topic_partition_list_destroy(owned);
    pthread_mutex_lock(&c->lock);
    if (g->state == KNG_LOST) {
        g->prepared = true;
        g->poll_expired = false;
        g->retry_at_ms = 0;
        kng_set_state(c, KNG_UNJOINED);
    }
    return rc;
}

int kng_serve(kn_consumer *c, char *errstr, size_t n) {
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    int rc = 0;
    if (!g) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    g->last_poll_ms = knw_now_ms();
    switch (g->state) {
    case KNG_PREPARE:
        rc = kng_step_prepare(c);
        break;
    case KNG_ASSIGNING:
        rc = kng_step_assign(c);
        break;
    case KNG_LOST:
        rc = kng_step_lost(c);
        break;
    case KNG_LEADER:
        rc = g->ops->leader_step ? g->ops->leader_step(c) : 0;
        break;
    case KNG_FATAL:
        kn_errstr_set(errstr, n, "consumer group %s: %s", c->cfg.group_id, g->fatal_msg);
        rc = g->fatal_err;
        break;
    default:
        break;
    }
    if (rc && rc != g->fatal_err && errstr && !errstr[0])
        kn_errstr_set(errstr, n, "the rebalance listener returned %s", kn_err_name(rc));
    pthread_mutex_unlock(&c->lock);
    knw_wakeup(c->client);
    return rc;
}

/* ---- public calls ------------------------------------------------------------------ */

static int kng_subscribe_common(kn_consumer *c, kn_rebalance_cb *cb, void *opaque, bool *was_idle) {
    if (!c->grp) {
        kn_log(knc_logger(c), KN_LOG_WARN, "subscribe needs group.id");
        return KN_ERR__STATE;
    }
    if (knc_closed(c))
        return KN_ERR__CLOSED;
    if (c->grp->state == KNG_IDLE && knc_table_count(&c->table) > 0) {
        kn_log(knc_logger(c), KN_LOG_WARN,
               "subscribe: partitions are assigned manually; assign and subscribe are "
               "mutually exclusive (unassign first)");
        return KN_ERR__STATE;
    }
    c->grp->cb = cb;
    c->grp->opaque = opaque;
    *was_idle = c->grp->state == KNG_IDLE;
    return 0;
}

/* Starts the group after the subscription changed (c->lock held). */
static void kng_start(kn_consumer *c, bool was_idle, bool changed) {
    kng_group *g = c->grp;
    if (was_idle) {
        g->last_poll_ms = knw_now_ms();
        g->retry_at_ms = 0;
        g->prepared = false;
        g->send_full = true;
        kng_set_state(c, KNG_UNJOINED);
    } else if (changed) {
        g->rejoin = true;
        g->send_full = true;
        snprintf(g->reason, sizeof g->reason, "the subscription changed");
    }
}

static int kng_ensure_ticker(kn_consumer *c) {
    if (c->grp_ticker_id >= 0)
        return 0;
    int id = knw_ticker_add(c->client, kng_tick, c);
    if (id < 0)
        return id;
    pthread_mutex_lock(&c->lock);
    c->grp_ticker_id = id;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int kn_consumer_subscribe(kn_consumer *c, const char *const *topics, size_t count, kn_rebalance_cb *cb,
                          void *opaque) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !topics || count == 0)
        return KN_ERR__INVALID_ARG;
    for (size_t i = 0; i < count; i++)
        if (!topics[i] || !*topics[i])
            return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    bool was_idle;
    int err = kng_subscribe_common(c, cb, opaque, &was_idle);
    if (err) {
        pthread_mutex_unlock(&c->lock);
        return err;
    }
    kng_group *g = c->grp;
    bool changed = g->has_pattern || g->regex || (size_t)g->topic_cnt != count;
    for (size_t i = 0; !changed && i < count; i++)
        changed = !kng_subscribed_to(g, topics[i]);
    if (changed) {
        kng_subscription_clear(g);
        if ((err = kng_set_topics(g, topics, count)) != 0) {
            pthread_mutex_unlock(&c->lock);
            return err;
        }
    }
    kng_start(c, was_idle, changed);
    pthread_mutex_unlock(&c->lock);
    knw_metadata_add_topics(c->client, topics, (int)count);
    knw_metadata_request_refresh(c->client, false, "consumer subscription");
    if ((err = kng_ensure_ticker(c)) != 0)
        return err;
    knw_wakeup(c->client);
    return KN_OK;
}

int kn_consumer_subscribe_pattern(kn_consumer *c, const char *regex, kn_rebalance_cb *cb, void *opaque) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !regex || !*regex)
        return KN_ERR__INVALID_ARG;
    /* Whole-name match, like Java's Pattern.matcher(name).matches(). */
    size_t n = strlen(regex) + 5;
    char *anchored = kn_malloc(n);
    if (!anchored)
        return KN_ERR__NOMEM;
    snprintf(anchored, n, "^(%s)$", regex);
    regex_t re;
    int rc = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB);
    kn_free(anchored);
    if (rc != 0) {
        kn_log(knc_logger(c), KN_LOG_WARN, "subscribe_pattern: \"%s\" is not a valid POSIX extended regex", regex);
        return KN_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&c->lock);
    bool was_idle;
    int err = kng_subscribe_common(c, cb, opaque, &was_idle);
    char *copy = err ? NULL : kn_strdup(regex);
    if (err || !copy) {
        pthread_mutex_unlock(&c->lock);
        regfree(&re);
        return err ? err : KN_ERR__NOMEM;
    }
    kng_group *g = c->grp;
    bool changed = !g->has_pattern || g->regex || strcmp(g->pattern, regex) != 0;
    kng_subscription_clear(g);
    g->has_pattern = true;
    g->re = re;
    g->pattern = copy;
    g->next_pattern_refresh_ms = 0;
    kng_start(c, was_idle, changed);
    pthread_mutex_unlock(&c->lock);
    if ((err = kng_ensure_ticker(c)) != 0)
        return err;
    knw_metadata_request_refresh(c->client, true, "pattern subscription");
    knw_wakeup(c->client);
    return KN_OK;
}

int kn_consumer_subscribe_regex(kn_consumer *c, const char *regex, kn_rebalance_cb *cb, void *opaque) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !regex || !*regex)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    if (c->grp && !c->grp->consumer_protocol) {
        pthread_mutex_unlock(&c->lock);
        /* Java's ClassicKafkaConsumer.subscribe(SubscriptionPattern). */
        kn_log(knc_logger(c), KN_LOG_WARN,
               "Subscribe to RE2/J pattern is not supported when using the CLASSIC protocol defined "
               "in config group.protocol");
        return KN_ERR__UNSUPPORTED;
    }
    bool was_idle;
    int err = kng_subscribe_common(c, cb, opaque, &was_idle);
    char *copy = err ? NULL : kn_strdup(regex);
    if (err || !copy) {
        pthread_mutex_unlock(&c->lock);
        return err ? err : KN_ERR__NOMEM;
    }
    kng_group *g = c->grp;
    /* The broker validates the regex: a bad one fails poll later with
     * INVALID_REGULAR_EXPRESSION, as in Java. */
    bool changed = !g->regex || strcmp(g->regex, regex) != 0;
    if (changed) {
        kng_subscription_clear(g);
        g->regex = copy;
    } else {
        kn_free(copy);
    }
    kng_start(c, was_idle, changed);
    pthread_mutex_unlock(&c->lock);
    if ((err = kng_ensure_ticker(c)) != 0)
        return err;
    knw_wakeup(c->client);
    return KN_OK;
}

/* Revokes (or, without a valid generation, loses) everything owned and
 * leaves the group. Used by unsubscribe and close. */
static int kng_leave(kn_consumer *c, const char *reason) {
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    if (!g || g->state == KNG_IDLE) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    bool lost = g->generation < 0 || g->state == KNG_LOST;
    kn_topic_partition_list *owned = kng_owned_list(c);
    pthread_mutex_unlock(&c->lock);
    int rc = kng_revoke(c, owned, lost, true);
    kn_topic_partition_list_destroy(owned);
    pthread_mutex_lock(&c->lock);
    const kng_ops *ops = g->ops;
    g->state = KNG_IDLE; /* heartbeats stop */
    kng_publish(c);
    pthread_mutex_unlock(&c->lock);
    ops->leave(c, reason);
    pthread_mutex_lock(&c->lock);
    kng_set_generation(c, -1);
    g->inflight = false;
    g->rejoin = false;
    g->poll_expired = false;
    kn_topic_partition_list_destroy(g->pending);
    g->pending = NULL;
    kn_topic_partition_list_destroy(g->acked);
    g->acked = NULL;
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int kn_consumer_unsubscribe(kn_consumer *c) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c)
        return KN_ERR__INVALID_ARG;
    if (knc_in_callback(c))
        return KN_ERR__STATE; /* from a listener: it would revoke under the running step */
    if (!c->grp)
        return KN_OK;
    int rc = kng_leave(c, "the consumer unsubscribed from all topics");
    pthread_mutex_lock(&c->lock);
    kng_subscription_clear(c->grp);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void kng_close(kn_consumer *c) {
    if (c->grp)
        kng_leave(c, "the consumer is being closed");
}

kn_topic_partition_list *kn_consumer_subscription(kn_consumer *c) {
    if (!c || !c->grp)
        return NULL;
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    kn_topic_partition_list *l = NULL;
    if (g->state != KNG_IDLE) {
        l = kn_topic_partition_list_new();
        for (int32_t i = 0; l && i < g->topic_cnt; i++)
            if (knc_tplist_add_any(l, g->topics[i], -1) < 0) {
                kn_topic_partition_list_destroy(l);
                l = NULL;
            }
    }
    pthread_mutex_unlock(&c->lock);
    return l;
}

kn_group_metadata *kn_consumer_group_metadata(kn_consumer *c) {
    if (!c || !c->cfg.group_id)
        return NULL;
    pthread_mutex_lock(&c->lock);
    kn_group_metadata *gm = kn_group_metadata_new(c->cfg.group_id, c->member.epoch, c->member.member_id,
                                                  c->grp ? c->grp->instance_id : NULL);
    pthread_mutex_unlock(&c->lock);
    return gm;
}

int kn_consumer_enforce_rebalance(kn_consumer *c, const char *reason) {
    if (!c)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    int rc = KN_OK;
    if (!g || g->state == KNG_IDLE) {
        rc = KN_ERR__STATE;
    } else if (g->consumer_protocol) {
        rc = KN_ERR__UNSUPPORTED;
    } else {
        g->rejoin = true;
        snprintf(g->reason, sizeof g->reason, "%s", reason ? reason : "enforce_rebalance");
    }
    pthread_mutex_unlock(&c->lock);
    if (rc == KN_OK)
        knw_wakeup(c->client);
    return rc;
}

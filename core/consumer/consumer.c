/*
 * consumer.c: the kn_consumer handle and the application-thread half of
 * the consumer: construction from a kn_conf, manual assignment, poll
 * (drain buffered fetches, otherwise wait for the network thread),
 * seeks, positions, pause/resume, wakeup and close.
 *
 * Threads: every field of kn_consumer behind c->lock is shared with the
 * fetcher ticker and the response callbacks on the network thread
 * (fetch.c, tick.c). The lock is held while a poll drains: decoding a poll's
 * worth of records is short, and it keeps one owner per partition
 * buffer at every moment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "consumer/consumer_metrics.h"
#include "consumer/assignment.h"
#include "consumer/consumer_int.h"
#include "consumer/group/host.h"
#include "consumer/offsets.h"
#include "consumer/tick.h"
#include "telemetry/registry_source.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"

/* The settings, then the state they size, then the group. */
static int knc_settings(kn_consumer *c, const kn_conf *conf, char *errstr, size_t n) {
    int err = knc_config_read(&c->cfg, conf, errstr, n);
    if (err)
        return err;
    knc_fetchbuf_init(&c->fbuf, c->cfg.max_partition_fetch_bytes);
    knc_offsets_init(c, knw_now_ms());
    return kng_create(c, conf, errstr, n);
}

kn_consumer *kn_consumer_new(const kn_conf *conf, char *errstr, size_t errstr_size) {
    if (!conf) {
        kn_errstr_set(errstr, errstr_size, "kn_consumer_new: conf is NULL");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    if (kn_conf_client_type(conf) != KN_CLIENT_CONSUMER) {
        kn_errstr_set(errstr, errstr_size,
                      "kn_consumer_new: the configuration was not made for a consumer "
                      "(use kn_conf_new(KN_CLIENT_CONSUMER))");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    int err = KN_ERR__NOMEM; /* kn_last_error() on the fail path */
    kn_conf *copy = kn_conf_dup(conf);
    kn_consumer *c = kn_calloc(1, sizeof(*c));
    if (!copy || !c) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    kn_fork_stamp_now(&c->fork);
    c->ticker_id = -1;
    c->grp_ticker_id = -1;
    if ((err = kn_conf_finalize(copy, errstr, errstr_size)) != KN_OK)
        goto fail;
    if ((err = knc_settings(c, copy, errstr, errstr_size)) != 0)
        goto fail;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&c->lock, NULL);
    c->client = knw_client_new(copy, "consumer", errstr, errstr_size);
    if (!c->client) {
        err = kn_last_error(); /* knw_client_new's reason */
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        goto fail;
    }
    /* Before the fetcher starts: it records from its first answer. */
    if (knc_metrics_init(c, knw_client_metrics(c->client)) != 0)
        c->ticker_id = -1;
    else
        c->ticker_id = knw_ticker_add(c->client, knc_fetcher_tick, c);
    if (c->ticker_id < 0) {
        kn_errstr_set(errstr, errstr_size, "could not start the fetcher");
        err = KN_ERR__NOMEM;
        knw_client_destroy(c->client);
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        goto fail;
    }
    if (knt_new(c->client, copy, "consumer", knt_registry_source, c->client, &c->telemetry)) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        err = KN_ERR__NOMEM;
        knw_ticker_remove(c->client, c->ticker_id);
        knw_client_destroy(c->client);
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        goto fail;
    }
    kn_conf_destroy(copy);
    kn_set_last_error(KN_OK);
    return c;
fail:
    kn_set_last_error(err);
    kn_conf_destroy(copy);
    if (c) {
        kng_destroy(c);
        knc_config_free(&c->cfg);
    }
    kn_free(c);
    return NULL;
}

/* The partition table with what replacing it implies around it: the
 * lock, the closed check, the metadata the new topics need and a
 * fetcher wake-up (so it needs the consumer, not only the table). */
int knc_set_assignment(kn_consumer *c, const kn_topic_partition_list *list) {
    if (knc_tplist_has_duplicates(list))
        return KN_ERR__INVALID_ARG;
    size_t n = kn_topic_partition_list_count(list);
    const char **topics = n ? kn_calloc(n, sizeof(*topics)) : NULL;
    if (n && !topics)
        return KN_ERR__NOMEM;
    int topic_count = 0;
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_topic_partition_list_topic(list, i);
        int t;
        for (t = 0; t < topic_count; t++)
            if (strcmp(topics[t], topic) == 0)
                break;
        if (t == topic_count)
            topics[topic_count++] = topic;
    }
    pthread_mutex_lock(&c->lock);
    int err = c->app.closed ? KN_ERR__CLOSED
                            : knc_table_replace(&c->table, list, c->cfg.reset, c->cfg.group_id != NULL);
    pthread_mutex_unlock(&c->lock);
    if (!err && topic_count) {
        knw_metadata_add_topics(c->client, topics, topic_count);
        knw_metadata_request_refresh(c->client, false, "consumer assignment");
    }
    kn_free(topics);
    if (!err)
        knw_wakeup(c->client);
    return err;
}

int kn_consumer_assign(kn_consumer *c, const kn_topic_partition_list *list) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    bool subscribed = kng_subscribed(c);
    pthread_mutex_unlock(&c->lock);
    if (subscribed) {
        kn_log(knc_logger(c), KN_LOG_WARN, "assign: the consumer is subscribed to a group; assign and "
               "subscribe are mutually exclusive (unsubscribe first)");
        return KN_ERR__STATE;
    }
    return knc_set_assignment(c, list);
}

int kn_consumer_partitions_for(kn_consumer *c, const char *topic, int timeout_ms,
                               kn_topic_partition_list **list) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !topic || !*topic || !list)
        return KN_ERR__INVALID_ARG;
    *list = NULL;
    if (c->app.closed)
        return KN_ERR__CLOSED;
    if (timeout_ms < 0)
        timeout_ms = c->cfg.default_api_timeout_ms;
    int64_t deadline = knw_now_ms() + timeout_ms;
    knw_metadata_add_topics(c->client, &topic, 1);
    knw_metadata *md = knw_metadata_get(c->client);
    for (;;) {
        const knw_topic *t = md ? knw_metadata_topic(md, topic) : NULL;
        if (t && t->error == 0 && t->partition_count > 0) {
            kn_topic_partition_list *l = kn_topic_partition_list_new();
            for (int32_t i = 0; l && i < t->partition_count; i++)
                if (kn_topic_partition_list_add(l, topic, t->partitions[i].partition) < 0) {
                    kn_topic_partition_list_destroy(l);
                    l = NULL;
                }
            knw_metadata_release(md);
            *list = l;
            return l ? KN_OK : KN_ERR__NOMEM;
        }
        int64_t left = deadline - knw_now_ms();
        if (md)
            knw_metadata_release(md);
        if (left <= 0)
            return KN_ERR__UNKNOWN_TOPIC;
        int err = 0;
        /* The next snapshot (the wire layer rate-limits refreshes). */
        md = knw_metadata_wait(c->client, false, 0, (int)left, &err);
        if (!md && err != KN_ERR__TIMED_OUT)
            return err ? err : KN_ERR__UNKNOWN_TOPIC;
    }
}

/* The first unreported partition error, moved into errstr (lock held). */
static int knc_take_error(kn_consumer *c, char *errstr, size_t n) {
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        knc_part *p = knc_table_at(&c->table, i);
        if (p->err_pending) {
            p->err_pending = false;
            kn_errstr_set(errstr, n, "%s", p->errstr);
            return p->err;
        }
    }
    return 0;
}

static void knc_abs_time(struct timespec *ts, int64_t deadline_ms) {
    ts->tv_sec = (time_t)(deadline_ms / 1000);
    ts->tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
}

int kn_consumer_poll(kn_consumer *c, int timeout_ms, kn_records **recs, char *errstr,
                     size_t errstr_size) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !recs)
        return KN_ERR__INVALID_ARG;
    *recs = NULL;
    if (c->app.cb_depth > 0) {
        kn_errstr_set(errstr, errstr_size, "poll called from a callback of the same consumer");
        return KN_ERR__STATE;
    }
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : knw_now_ms() + timeout_ms;
    kn_records *out = knc_records_new((size_t)c->cfg.max_poll_records);
    if (!out)
        return KN_ERR__NOMEM;
    int rc = KN_OK;
    bool kicked = false, drained_dry = false, nomem = false;
    if (errstr && errstr_size)
        errstr[0] = '\0';
    knw_client_app_service(c->client); /* a due OAUTHBEARER token refresh, even for poll(0) */
    knc_serve_commit_callbacks(c);
    pthread_mutex_lock(&c->lock);
    c->app.in_poll = true;
    kng_polled(c, knw_now_ms());
    knc_maybe_auto_commit(c, knw_now_ms());
    for (;;) {
        if (c->app.closed) {
            kn_errstr_set(errstr, errstr_size, "the consumer is closed");
            rc = KN_ERR__CLOSED;
            break;
        }
        /* Authentication failed: fatal, as Java's poll throws it. */
        if ((rc = knw_client_fatal(c->client, errstr, errstr_size)) != 0)
            break;
        if (kng_app_pending(c)) {
            /* A rebalance step (listener included) runs here, on the
             * caller's thread, before any record is drained: records of
             * a partition being revoked or lost are never returned. */
            pthread_mutex_unlock(&c->lock);
            rc = kng_serve(c, errstr, errstr_size);
            pthread_mutex_lock(&c->lock);
            if (rc != 0)
                break;
            continue;
        }
        if (knc_table_count(&c->table) == 0 && !kng_subscribed(c)) {
            kn_errstr_set(errstr, errstr_size, "no partitions are assigned");
            rc = KN_ERR__STATE;
            break;
        }
        if ((rc = knc_take_error(c, errstr, errstr_size)) != 0)
            break;
        /* Drain from the rotating start so no partition starves. */
        size_t n = knc_table_count(&c->table);
        size_t start = knc_table_drain_start(&c->table);
        for (size_t k = 0; k < n && out->count < (size_t)c->cfg.max_poll_records; k++) {
            size_t i = (start + k) % n;
            knc_part *p = knc_table_at(&c->table, i);
            if (!p->fetched || p->paused || p->revoking)
                continue;
            uint32_t slices = p->slices_drained;
            int got = knc_drain(p, out, c->cfg.max_poll_records - (int)out->count, &c->cfg.drain_opts);
            if (got < 0) {
                /* Nothing is lost: the drain takes up what it could not
                 * add next time, and the records already in out (whose
                 * positions moved) are returned. */
                if (out->count == 0) {
                    kn_errstr_set(errstr, errstr_size, "out of memory decoding records");
                    rc = got;
                }
                nomem = true;
                break;
            }
            if (p->slices_drained != slices) {
                /* a slice was used up: its buffer slot is free again */
                drained_dry = true;
                knc_table_drain_from(&c->table, (i + 1) % n);
            } else {
                knc_table_drain_from(&c->table, i);
            }
        }
        if (rc != 0 || out->count > 0 || nomem)
            break;
        if (knc_commit_callbacks_due(c)) {
            /* commit callbacks are due: serve them before waiting */
            pthread_mutex_unlock(&c->lock);
            knc_serve_commit_callbacks(c);
            pthread_mutex_lock(&c->lock);
            continue;
        }
        if (c->app.wakeup) {
            c->app.wakeup = false;
            kn_errstr_set(errstr, errstr_size, "poll interrupted by wakeup()");
            rc = KN_ERR__WAKEUP;
            break;
        }
        /* As Java's consumer rethrows a TLS (authentication) failure from
         * poll: no broker is reachable and waiting will not change that. */
        if ((rc = knw_connect_error(c->client, errstr, errstr_size)) != 0)
            break;
        int64_t now = knw_now_ms();
        if (now >= deadline)
            break;
        if (!kicked || drained_dry) {
            /* Let the fetcher act on dry partitions now. */
            kicked = true;
            drained_dry = false;
            knw_wakeup(c->client);
        }
        {
            struct timespec ts;
            /* knw_now_ms is CLOCK_MONOTONIC, like the condition's clock.
             * At most a second at a time: a connection failure (above)
             * does not signal this condition. */
            pthread_mutex_unlock(&c->lock);
            knw_client_app_service(c->client); /* the OAUTHBEARER token callback, if due */
            pthread_mutex_lock(&c->lock);
            knc_abs_time(&ts, knw_client_app_wait_until(c->client, now, deadline - now > 1000 ? now + 1000 : deadline));
            pthread_cond_timedwait(&c->cond, &c->lock, &ts);
        }
    }
    c->app.in_poll = false;
    kng_polled(c, knw_now_ms());
    c->stats.polls++;
    if (!c->app.closed) /* close destroyed the network client and its metrics registry */
        knc_metrics_poll(c, rc == KN_OK ? out : NULL, knw_now_ms());
    c->stats.records += (int64_t)out->count;
    c->stats.record_bytes += out->bytes; /* counted as the drain added them */
    /* This poll returned one outcome but another is already due (more
     * records than max.poll.records, a second partition's error, a commit
     * callback): no network event will announce it, so an event loop that
     * polls only when woken is told now (docs/consumer.md). */
    if (c->app.ready_fn && knc_poll_ready(c))
        c->app.ready_fn(c, c->app.ready_opaque);
    pthread_mutex_unlock(&c->lock);
    if (drained_dry)
        knw_wakeup(c->client);
    if (rc != KN_OK) {
        kn_records_free(out);
        return rc;
    }
    *recs = out;
    return KN_OK;
}

/* Applies fn to every listed partition (all assigned ones when list is
 * NULL), after checking they are all assigned. */
static int knc_each(kn_consumer *c, const kn_topic_partition_list *list,
                    void (*fn)(kn_consumer *c, knc_part *p, void *arg), void *arg) {
    if (!c)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    if (c->app.closed) {
        pthread_mutex_unlock(&c->lock);
        return KN_ERR__CLOSED;
    }
    size_t n = list ? kn_topic_partition_list_count(list) : knc_table_count(&c->table);
    for (size_t pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            knc_part *p = list ? NULL : knc_table_at(&c->table, i);
            if (list) {
                const char *topic = kn_topic_partition_list_topic(list, i);
                p = knc_table_find(&c->table, topic, strlen(topic),
                                   kn_topic_partition_list_partition(list, i));
            }
            if (!p) {
                pthread_mutex_unlock(&c->lock);
                return KN_ERR__STATE;
            }
            if (pass == 1)
                fn(c, p, arg);
        }
    }
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_wakeup(c->client);
    return KN_OK;
}

static void knc_do_reset(kn_consumer *c, knc_part *p, void *arg) {
    knc_part_reset(p, *(knc_reset *)arg);
}

static void knc_do_pause(kn_consumer *c, knc_part *p, void *arg) { p->paused = *(bool *)arg; }

int kn_consumer_seek_to_beginning(kn_consumer *c, const kn_topic_partition_list *list) {
    knc_reset r = KNC_RESET_EARLIEST;
    return knc_each(c, list, knc_do_reset, &r);
}

int kn_consumer_seek_to_end(kn_consumer *c, const kn_topic_partition_list *list) {
    knc_reset r = KNC_RESET_LATEST;
    return knc_each(c, list, knc_do_reset, &r);
}

int kn_consumer_pause(kn_consumer *c, const kn_topic_partition_list *list) {
    bool on = true;
    return list ? knc_each(c, list, knc_do_pause, &on) : KN_ERR__INVALID_ARG;
}

int kn_consumer_resume(kn_consumer *c, const kn_topic_partition_list *list) {
    bool on = false;
    return list ? knc_each(c, list, knc_do_pause, &on) : KN_ERR__INVALID_ARG;
}

int kn_consumer_seek(kn_consumer *c, const char *topic, int32_t partition, int64_t offset) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !topic || (offset < 0 && offset != KN_OFFSET_BEGINNING && offset != KN_OFFSET_END))
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    if (c->app.closed) {
        pthread_mutex_unlock(&c->lock);
        return KN_ERR__CLOSED;
    }
    knc_part *p = knc_table_find(&c->table, topic, strlen(topic), partition);
    if (!p) {
        pthread_mutex_unlock(&c->lock);
        return KN_ERR__STATE;
    }
    if (offset == KN_OFFSET_BEGINNING)
        knc_part_reset(p, KNC_RESET_EARLIEST);
    else if (offset == KN_OFFSET_END)
        knc_part_reset(p, KNC_RESET_LATEST);
    else
        knc_part_seek(p, offset, -1);
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_wakeup(c->client);
    return KN_OK;
}

int kn_consumer_position(kn_consumer *c, const char *topic, int32_t partition, int timeout_ms,
                         int64_t *offset) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !topic || !offset)
        return KN_ERR__INVALID_ARG;
    if (timeout_ms < 0)
        timeout_ms = c->cfg.default_api_timeout_ms;
    int64_t deadline = knw_now_ms() + timeout_ms;
    int rc = KN_OK;
    bool kicked = false;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        knc_part *p = c->app.closed ? NULL : knc_table_find(&c->table, topic, strlen(topic), partition);
        if (!p) {
            rc = c->app.closed ? KN_ERR__CLOSED : KN_ERR__STATE;
            break;
        }
        if (p->state == KNC_POS_VALID) {
            *offset = p->position;
            break;
        }
        if (p->state == KNC_POS_FAILED) {
            rc = p->err == KN_ERR__NO_OFFSET ? KN_ERR__NO_OFFSET : p->err;
            break;
        }
        if (knw_now_ms() >= deadline) {
            rc = KN_ERR__TIMED_OUT;
            break;
        }
        if (!kicked) {
            kicked = true;
            knw_wakeup(c->client);
        }
        struct timespec ts;
        knc_abs_time(&ts, deadline);
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int kn_consumer_get_stats(kn_consumer *c, kn_consumer_stats *out) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    /* Size-versioned (see the header): filled in full here, then only
     * the caller's out->size bytes are copied out. */
    if (!c || !out || out->size < sizeof out->size)
        return KN_ERR__INVALID_ARG;
    kn_consumer_stats st;
    pthread_mutex_lock(&c->lock);
    st = c->stats;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        if (knc_table_at(&c->table, i)->fetched) {
            st.buffered_partitions++;
            st.buffered_bytes += (int64_t)knc_part_buffered_bytes(knc_table_at(&c->table, i));
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (c->client) { /* NULL once closed: the connection counters then read 0 */
        knw_stats ws;
        knw_get_stats(c->client, &ws);
        st.connects = ws.connects;
        st.connect_failures = ws.connect_failures;
        st.reauthentications = ws.reauthentications;
        knw_throttle_stats(c->client, KP_API_FETCH, &st.fetch_throttle_time_avg_ms,
                           &st.fetch_throttle_time_max_ms);
    }
    kn_stats_copy_out(out, &st, sizeof st);
    return KN_OK;
}

void kn_consumer_wakeup(kn_consumer *c) {
    KNC_FORK_GUARD(c, );
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->app.wakeup = true;
    /* A loop waiting on the readiness hook's descriptor wakes too: its
     * next poll returns KN_ERR__WAKEUP. */
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
}

/* Partitions poll would return something for (c->lock held). */
static bool knc_parts_ready(const kn_consumer *c) {
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        if (p->err_pending || (p->fetched && !p->paused && !p->revoking))
            return true;
    }
    return false;
}

bool knc_poll_ready(const kn_consumer *c) {
    return c->app.wakeup || knc_commit_callbacks_due(c) || kng_app_pending(c) || knc_parts_ready(c);
}

void knc_signal(kn_consumer *c) {
    pthread_cond_broadcast(&c->cond);
    if (c->app.ready_fn && knc_poll_ready(c))
        c->app.ready_fn(c, c->app.ready_opaque);
}

int knc_backoff_wait(kn_consumer *c, int64_t deadline_ms) {
    int64_t until = knw_now_ms() + c->cfg.retry_backoff_ms;
    if (until > deadline_ms)
        until = deadline_ms;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        if (c->app.wakeup) {
            c->app.wakeup = false;
            rc = KN_ERR__WAKEUP;
            break;
        }
        if (knw_now_ms() >= until)
            break;
        struct timespec ts;
        knc_abs_time(&ts, until);
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int knc_call_timeout(const kn_consumer *c, int want_ms) {
    int64_t t = want_ms < 0 ? c->cfg.default_api_timeout_ms : want_ms;
    if (c->app.close_deadline_ms) {
        int64_t left = c->app.close_deadline_ms - knw_now_ms();
        if (left < t)
            t = left < 0 ? 0 : left;
    }
    return (int)t;
}

void kn_consumer_set_ready_cb(kn_consumer *c, kn_consumer_ready_cb *fn, void *opaque) {
    KNC_FORK_GUARD(c, );
    if (!c)
        return;
    /* Under the lock the hook is called with: no call of the old fn
     * is in progress once this returns. */
    pthread_mutex_lock(&c->lock);
    c->app.ready_fn = fn;
    c->app.ready_opaque = opaque;
    pthread_mutex_unlock(&c->lock);
}

/* Java's KafkaConsumer.close() default (DEFAULT_CLOSE_TIMEOUT_MS). */
#define KNC_CLOSE_TIMEOUT_MS 30000

/* The old name (deprecated in the header): the same call. */
int kn_consumer_close_timeout(kn_consumer *c, int timeout_ms) { return kn_consumer_close(c, timeout_ms); }

int kn_consumer_close(kn_consumer *c, int timeout_ms) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c)
        return KN_OK; /* NULL is a no-op, as for every client */
    if (c->app.cb_depth > 0) {
        kn_log(knc_logger(c), KN_LOG_ERROR,
               "close called from a callback of the same consumer: refused (KN_ERR__STATE); "
               "close it after the call that runs the callback returns");
        return KN_ERR__STATE;
    }
    pthread_mutex_lock(&c->lock);
    bool was_closing = c->app.closing;
    c->app.closing = true;
    bool manual_commit = !was_closing && c->cfg.group_id && c->cfg.auto_commit && !kng_subscribed(c);
    pthread_mutex_unlock(&c->lock);
    if (was_closing)
        return KN_OK;
    if (timeout_ms < 0)
        timeout_ms = KNC_CLOSE_TIMEOUT_MS;
    c->app.close_deadline_ms = knw_now_ms() + timeout_ms;
    if (c->app.close_deadline_ms == 0)
        c->app.close_deadline_ms = 1;
    /* Java commits the positions at close under auto-commit: a
     * subscribed member's revoke below does it (one commit, not two);
     * a manually assigned consumer's is done here. Nothing positioned:
     * no commit at all. Both within the close timeout. */
    if (manual_commit && timeout_ms > 0)
        kn_consumer_commit_sync(c, NULL, knc_call_timeout(c, -1));
    kng_close(c); /* REVOKED, then LeaveGroup for a dynamic member */
    /* Commits queued or in flight finish within the close timeout (as
     * Java's close waits for them); what is left fails with _CLOSED
     * below, so every commit callback runs exactly once. */
    knc_offsets_wait(c, c->app.close_deadline_ms);
    /* The terminating telemetry push (KIP-714), while the connections
     * are up, within what is left of the close timeout. */
    knt_close(c->telemetry, c->app.close_deadline_ms);
    pthread_mutex_lock(&c->lock);
    c->app.closed = true;
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    /* The ticker stops first; destroying the client then fails what is
     * still in flight, whose callbacks see closed. */
    knw_ticker_remove(c->client, c->ticker_id);
    if (c->grp_ticker_id >= 0)
        knw_ticker_remove(c->client, c->grp_ticker_id);
    knw_client_destroy(c->client);
    c->client = NULL;
    knc_offsets_close(c);
    pthread_mutex_lock(&c->lock);
    knc_table_clear(&c->table);
    knc_offsets_destroy(c);
    pthread_mutex_unlock(&c->lock);
    return KN_OK;
}

int kn_consumer_forked(const kn_consumer *c) { return c && kn_fork_changed(&c->fork); }

void kn_consumer_destroy(kn_consumer *c) {
    KNC_FORK_GUARD(c, );
    if (!c)
        return;
    if (c->app.cb_depth > 0) {
        kn_log(knc_logger(c), KN_LOG_ERROR,
               "destroy called from a callback of the same consumer: ignored (it would free the "
               "consumer under the call that runs the callback)");
        return;
    }
    kn_consumer_close(c, -1);
    knt_destroy(c->telemetry); /* after close destroyed the network client */
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    knc_nodes_free(&c->nodes);
    kng_destroy(c);
    knc_config_free(&c->cfg);
    kn_free(c);
}

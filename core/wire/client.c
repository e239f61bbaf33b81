/*
 * client.c: the knw_client: construction from kn_conf, the network
 * thread's loop (submit queue, routing, deadlines, tickers, poll), the
 * connection table and the small thread-safe accessors of wire.h.
 * Owns the conns, the queued requests and the loop; see wire_int.h for
 * what client->lock guards.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/bodybuf.h"
#include "wire/conn_sasl.h"
#include "wire/sasl/gssapi_worker.h"
#include "wire/sasl/oauth_refresher.h"
#include "wire/sasl/oauth_store.h"
#include "wire/sasl/oidc.h"
#include "wire/wire_int.h"

int64_t knw_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t knw_now_ms(void) { return knw_now_us() / 1000; }

bool knw_on_network_thread(knw_client *c) {
    return c->thread_started && pthread_equal(pthread_self(), c->thread);
}

/* ---- connection table (writes on the network thread, under lock) ---- */

static int conns_add(knw_client *c, knw_conn *conn) {
    pthread_mutex_lock(&c->lock);
    if (c->conn_count == c->conn_cap) {
        int ncap = c->conn_cap ? c->conn_cap * 2 : 8;
        knw_conn **n = kn_realloc(c->conns, (size_t)ncap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&c->lock);
            return KN_ERR__NOMEM;
        }
        c->conns = n;
        c->conn_cap = ncap;
    }
    c->conns[c->conn_count++] = conn;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

knw_conn *knw_client_conn_by_node(knw_client *c, int32_t node_id) {
    for (int i = 0; i < c->conn_count; i++)
        if (!c->conns[i]->bootstrap && c->conns[i]->node_id == node_id)
            return c->conns[i];
    return NULL;
}

void knw_client_apply_brokers(knw_client *c, const knw_metadata *md) {
    if (md->broker_count == 0)
        return;
    for (int i = 0; i < c->conn_count; i++)
        c->conns[i]->retired = true;
    for (int32_t b = 0; b < md->broker_count; b++) {
        const knw_broker *br = &md->brokers[b];
        knw_conn *conn = knw_client_conn_by_node(c, br->node_id);
        if (conn) {
            conn->retired = false;
            if (strcmp(conn->host, br->host) != 0 || conn->port != br->port) {
                /* The broker moved: reconnect to the new address. */
                char *h = kn_strdup(br->host);
                if (!h)
                    continue;
                if (conn->state == KNW_CS_READY || conn->state == KNW_CS_APIVERSIONS ||
                    conn->state == KNW_CS_SASL || conn->state == KNW_CS_CONNECTING)
                    knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "broker address changed", knw_now_ms());
                if (conn->state == KNW_CS_RESOLVING) {
                    conn->resolve_id = 0; /* the answer is for the old name */
                    conn->state = KNW_CS_DOWN;
                }
                kn_free(conn->host);
                conn->host = h;
                conn->port = br->port;
            }
            continue;
        }
        conn = knw_conn_new(c, br->node_id, false, br->host, br->port);
        if (!conn || conns_add(c, conn)) {
            knw_conn_free(conn, KN_ERR__NOMEM, "out of memory");
            continue;
        }
    }
    c->use_bootstrap = false;
}

void knw_client_rebootstrap(knw_client *c, const char *why) {
    kn_log(&c->log, KN_LOG_INFO, "rebootstrapping with bootstrap.servers: %s", why);
    KNW_STAT_ADD(c, rebootstraps, 1);
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[i];
        conn->retired = !conn->bootstrap;
        if (conn->bootstrap && conn->state == KNW_CS_BACKOFF) {
            /* A fresh start for the bootstrap list. */
            conn->connect_failures = 0;
        }
    }
    c->use_bootstrap = true;
}

/* Frees retired node connections that are closed and unused. */
static void reap(knw_client *c) {
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[i];
        if (!conn->retired || conn->bootstrap || conn->pending.count || conn->inflight.count ||
            (conn->state != KNW_CS_DOWN && conn->state != KNW_CS_BACKOFF))
            continue;
        pthread_mutex_lock(&c->lock);
        c->conns[i] = c->conns[--c->conn_count];
        pthread_mutex_unlock(&c->lock);
        knw_conn_free(conn, KN_ERR__TRANSPORT, "broker left the cluster");
        i--;
    }
}

/* ---- routing ---- */

static bool candidate(const knw_client *c, const knw_conn *conn) {
    return !conn->retired && conn->bootstrap == c->use_bootstrap;
}

/* The least loaded ready connection with a free slot; when none has
 * one and no candidate is already connecting, a connection to the next
 * idle candidate is started (Java's leastLoadedNode spreads the same
 * way). NULL: wait. */
static knw_conn *pick_any(knw_client *c, int64_t now_ms) {
    knw_conn *best = NULL;
    bool busy = false; /* some candidate is on its way up */
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[(i + c->rr) % c->conn_count];
        if (!candidate(c, conn))
            continue;
        /* A connection whose session is due for re-authentication
         * (KIP-368) starts it before taking this request, as Java's
         * does before its next send; meanwhile it is busy, not gone. */
        if (conn->state == KNW_CS_READY && now_ms >= knw_sasl_reauth_at(conn))
            knw_sasl_begin(conn, true, now_ms);
        if (conn->state == KNW_CS_RESOLVING || conn->state == KNW_CS_CONNECTING ||
            conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL || knw_sasl_reauth_active(conn))
            busy = true;
        if (conn->state != KNW_CS_READY || knw_iftab_full(&conn->inflight) || knw_sasl_reauth_active(conn))
            continue;
        if (!best || conn->inflight.count < best->inflight.count)
            best = conn;
    }
    if (best || busy)
        return best;
    /* Connect to the next candidate that is not backing off. */
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[(i + c->rr) % c->conn_count];
        if (!candidate(c, conn))
            continue;
        if (conn->state == KNW_CS_BACKOFF && conn->state_deadline_ms <= now_ms)
            conn->state = KNW_CS_DOWN;
        if (conn->state != KNW_CS_DOWN)
            continue;
        c->rr = (c->rr + i + 1) % (c->conn_count ? c->conn_count : 1);
        knw_conn_connect(conn, now_ms);
        if (conn->state == KNW_CS_READY && !knw_iftab_full(&conn->inflight))
            return conn;
        if (conn->state == KNW_CS_RESOLVING || conn->state == KNW_CS_CONNECTING ||
            conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL)
            return NULL;
    }
    return NULL;
}

/* Places r on a connection; false leaves it in the unrouted queue. */
static bool route(knw_client *c, knw_req *r, int64_t now_ms, bool *any_blocked) {
    if (r->node_id == KNW_NODE_ANY) {
        if (*any_blocked)
            return false;
        knw_conn *conn = pick_any(c, now_ms);
        if (!conn) {
            *any_blocked = true;
            return false;
        }
        knw_req_send(c, conn, r, now_ms);
        return true;
    }
    int32_t node = r->node_id;
    if (node == KNW_NODE_CONTROLLER) {
        const knw_metadata *md = c->md.current; /* the network thread is the only writer */
        node = md ? md->controller_id : -1;
        if (node < 0)
            return false;
    }
    knw_conn *conn = knw_client_conn_by_node(c, node);
    if (!conn)
        return false;
    knw_reqq_push(&conn->pending, r);
    return true;
}

void knw_client_connect_fatal(knw_client *c, int err, const char *why) {
    for (int i = 0; i < c->conn_count; i++)
        if (candidate(c, c->conns[i]) && c->conns[i]->state == KNW_CS_READY)
            return;
    c->fatal_connect_set = true;
    pthread_mutex_lock(&c->lock);
    c->fatal_connect_err = err;
    snprintf(c->fatal_connect_errstr, sizeof c->fatal_connect_errstr, "%s", why);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    for (knw_req *r = c->unrouted.head, *n; r; r = n) {
        n = r->next;
        if (r->node_id != KNW_NODE_ANY)
            continue;
        knw_reqq_unlink(&c->unrouted, r);
        knw_req_fail(c, r, err, "%s", why);
    }
}

/* A broker is ready again: the connect failure is history. */
static void clear_connect_fatal(knw_client *c) {
    if (!c->fatal_connect_set)
        return;
    for (int i = 0; i < c->conn_count; i++)
        if (c->conns[i]->state == KNW_CS_READY) {
            c->fatal_connect_set = false;
            pthread_mutex_lock(&c->lock);
            c->fatal_connect_err = 0;
            pthread_mutex_unlock(&c->lock);
            return;
        }
}

int knw_connect_error(knw_client *c, char *errstr, size_t errstr_size) {
    int err = 0;
    pthread_mutex_lock(&c->lock);
    if (c->fatal_connect_err) {
        err = c->fatal_connect_err;
        for (int i = 0; i < c->conn_count && err; i++)
            if (atomic_load(&c->conns[i]->ready))
                err = 0; /* a broker is reachable again: stale */
        if (err)
            kn_errstr_set(errstr, errstr_size, "%s", c->fatal_connect_errstr);
        else
            c->fatal_connect_err = 0;
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

void knw_client_enqueue(knw_client *c, knw_req *r) {
    knw_reqq_push(&c->unrouted, r);
    knw_client_deadline_hint(c, r->deadline_ms);
}

static void route_unrouted(knw_client *c, int64_t now_ms) {
    bool any_blocked = false, want_md = false;
    knw_req *r = c->unrouted.head;
    while (r) {
        knw_req *next = r->next;
        if (!(r->node_id == KNW_NODE_ANY && any_blocked)) {
            knw_reqq_unlink(&c->unrouted, r);
            if (!route(c, r, now_ms, &any_blocked)) {
                /* Back in place, order kept. */
                if (next) {
                    r->next = next;
                    r->prev = next->prev;
                    if (next->prev)
                        next->prev->next = r;
                    else
                        c->unrouted.head = r;
                    next->prev = r;
                    c->unrouted.count++;
                } else {
                    knw_reqq_push(&c->unrouted, r);
                }
                if (r->node_id != KNW_NODE_ANY)
                    want_md = true;
            }
        }
        r = next;
    }
    if (want_md && c->md.current)
        knw_metadata_request_refresh(c, false, "request for a node not in the metadata");
}

/* ---- deadlines ---- */

static void expire(knw_client *c, knw_req *r, const knw_conn *conn) {
    /* A request that never left names the connection failure that kept
     * it back: the node's own, or for "any" broker the latest one. */
    const char *why = conn && conn->connect_failures                      ? conn->last_err
                      : !conn && r->node_id < 0 && c->last_connect_err[0] ? c->last_connect_err
                                                                          : NULL;
    long long waited = (long long)((knw_now_us() - r->enqueued_us) / 1000);
    KNW_STAT_ADD(c, request_timeouts, 1);
    if (why)
        knw_req_fail(c, r, KN_ERR__TRANSPORT, "%s request not sent within %lld ms: %s", r->api->name, waited,
                     why);
    else if (r->node_id >= 0 && !conn)
        knw_req_fail(c, r, KN_ERR__TIMED_OUT,
                     "%s request not sent within %lld ms: broker %d is not in the cluster metadata",
                     r->api->name, waited, r->node_id);
    else if (conn && conn->state == KNW_CS_READY)
        knw_req_fail(c, r, KN_ERR__TIMED_OUT,
                     "%s request not sent within %lld ms: queued behind %d requests in flight to broker %d",
                     r->api->name, waited, conn->inflight.count, conn->node_id);
    else
        knw_req_fail(c, r, KN_ERR__TIMED_OUT, "%s request not sent within %lld ms: no broker ready",
                     r->api->name, waited);
}

static int64_t scan_queue(knw_client *c, knw_reqq *q, const knw_conn *conn, int64_t now_ms) {
    int64_t next = INT64_MAX;
    for (knw_req *r = q->head, *n; r; r = n) {
        n = r->next;
        if (r->deadline_ms <= now_ms) {
            knw_reqq_unlink(q, r);
            expire(c, r, conn);
        } else if (r->deadline_ms < next) {
            next = r->deadline_ms;
        }
    }
    return next;
}

static void check_timeouts(knw_client *c, int64_t now_ms) {
    if (now_ms < c->next_timeout_check_ms)
        return;
    int64_t next = scan_queue(c, &c->unrouted, NULL, now_ms);
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[i];
        int64_t n = scan_queue(c, &conn->pending, conn, now_ms);
        next = n < next ? n : next;
        bool expired = false;
        for (int j = 0; j < conn->inflight.count; j++) {
            knw_req *r = knw_iftab_at(&conn->inflight, j);
            if (r->deadline_ms <= now_ms) {
                r->timed_out = true;
                expired = true;
                KNW_STAT_ADD(c, request_timeouts, 1);
            } else if (r->deadline_ms < next) {
                next = r->deadline_ms;
            }
        }
        if (expired) {
            /* As Java: a request that timed out in flight leaves the
             * connection in an unknown state, so it is closed. */
            knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "closed after a request timed out", now_ms);
        }
    }
    c->next_timeout_check_ms = next;
}

/* ---- tickers ---- */

static int64_t run_tickers(knw_client *c, int64_t now_ms) {
    bool woken = atomic_exchange(&c->woken, false);
    int64_t next = INT64_MAX;
    pthread_mutex_lock(&c->tick_lock);
    for (int i = 0; i < c->ticker_count; i++) {
        knw_ticker *t = &c->tickers[i];
        if (!t->live)
            continue;
        if (woken || (t->next_ms >= 0 && t->next_ms <= now_ms)) {
            int in = t->fn(c, now_ms, t->opaque);
            t = &c->tickers[i]; /* the array may have grown */
            if (t->live)
                t->next_ms = in >= 0 ? now_ms + in : -1;
        }
        if (t->live && t->next_ms >= 0 && t->next_ms < next)
            next = t->next_ms;
    }
    pthread_mutex_unlock(&c->tick_lock);
    return next;
}

int knw_ticker_add(knw_client *c, knw_tick_fn *fn, void *opaque) {
    if (!c || !fn)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->tick_lock);
    int id = -1;
    for (int i = 0; i < c->ticker_count; i++)
        if (!c->tickers[i].live && !c->tickers[i].fn) {
            id = i;
            break;
        }
    if (id < 0) {
        if (c->ticker_count == c->ticker_cap) {
            int ncap = c->ticker_cap ? c->ticker_cap * 2 : 4;
            knw_ticker *n = kn_realloc(c->tickers, (size_t)ncap * sizeof *n);
            if (!n) {
                pthread_mutex_unlock(&c->tick_lock);
                return KN_ERR__NOMEM;
            }
            c->tickers = n;
            c->ticker_cap = ncap;
        }
        id = c->ticker_count++;
    }
    c->tickers[id] = (knw_ticker){fn, opaque, 0, true};
    pthread_mutex_unlock(&c->tick_lock);
    knw_loop_wake(&c->loop); /* first run right away */
    return id;
}

void knw_ticker_remove(knw_client *c, int id) {
    if (!c)
        return;
    /* Recursive lock: from a ticker on the network thread this nests;
     * from another thread it waits for a running tick round to end. */
    pthread_mutex_lock(&c->tick_lock);
    if (id >= 0 && id < c->ticker_count) {
        c->tickers[id].live = false;
        c->tickers[id].fn = NULL;
    }
    pthread_mutex_unlock(&c->tick_lock);
}

void knw_wakeup(knw_client *c) {
    atomic_store(&c->woken, true);
    /* On the network thread the flag is enough: net_main polls with a
     * zero timeout while it is set, so the eventfd write (and the read
     * that drains it) would be two system calls for nothing, made for
     * every Produce answer. */
    if (!knw_on_network_thread(c))
        knw_loop_wake(&c->loop);
}

/* ---- fatal errors ---- */

void knw_client_set_fatal(knw_client *c, int err, const char *msg) {
    pthread_mutex_lock(&c->lock);
    bool first = atomic_load(&c->fatal_err) == 0;
    if (first) {
        snprintf(c->fatal_errstr, sizeof c->fatal_errstr, "%s", msg);
        atomic_store(&c->fatal_err, err);
        pthread_cond_broadcast(&c->cond); /* knw_metadata_wait */
        atomic_store(&c->woken, true);    /* every ticker sees it now */
    }
    pthread_mutex_unlock(&c->lock);
    if (first)
        kn_log(&c->log, KN_LOG_ERROR, "%s: %s (the client will not connect again)", kn_err_name(err), msg);
}

/* ---- OAUTHBEARER tokens from the token endpoint (oidc.h) ---- */

static void oidc_wake(void *c) { knw_wakeup(c); }
static void krb_wake(void *loop) { knw_loop_wake(loop); }
static void oidc_cancel(void *o) { knw_oidc_cancel(o); }

/* The first token now, on the constructor's thread (Java logs in when
 * the client is built: an unreachable endpoint or a bad secret fails
 * the constructor), then the refresher thread. */
static int knw_client_oidc_start(knw_client *c, char *errstr, size_t n) {
    knw_sasl_conf *sc = c->set.sasl;
    knw_oauth_refresh r = {sc->refresh_window_factor, sc->refresh_window_jitter, sc->refresh_min_period_ms,
                           sc->refresh_buffer_ms};
    if (!(c->oidc_store = knw_oauth_store_new(knw_oidc_token_cb, sc->oidc, &r))) {
        kn_errstr_set(errstr, n, "out of memory");
        return KN_ERR__NOMEM;
    }
    knw_oauth_store_set_label(c->oidc_store, "OAUTHBEARER login");
    sc->store = c->oidc_store;
    knw_oauth_store_want(c->oidc_store);
    bool stored = false;
    int rc = knw_oauth_store_refresh(c->oidc_store, &stored, errstr, n);
    if (!rc && !stored) {
        kn_errstr_set(errstr, n, "OAUTHBEARER login: no token");
        rc = KN_ERR__AUTHENTICATION;
    }
    if (rc)
        return rc;
    c->oidc_thread = knw_oauth_refresher_start(c->oidc_store, oidc_wake, c, oidc_cancel, sc->oidc, &c->log,
                                               errstr, n);
    return c->oidc_thread ? 0 : KN_ERR__NOMEM;
}

/* ---- the application's OAUTHBEARER token ---- */

void knw_client_app_service(knw_client *c) {
    if (!c || !c->oauth || !knw_oauth_store_due(c->oauth) || atomic_load(&c->fatal_err))
        return;
    bool stored = false;
    char err[512];
    int rc = knw_oauth_store_refresh(c->oauth, &stored, err, sizeof err);
    if (rc) {
        knw_client_set_fatal(c, rc, err);
        knw_wakeup(c);
    } else if (stored) {
        kn_log(&c->log, KN_LOG_DEBUG, "OAUTHBEARER: the token callback supplied a new token");
        knw_wakeup(c);
    }
}

int64_t knw_client_app_wait_until(knw_client *c, int64_t now_ms, int64_t deadline_ms) {
    if (c && c->oauth && deadline_ms > now_ms + 100)
        return now_ms + 100;
    return deadline_ms;
}

int knw_client_fatal(knw_client *c, char *errstr, size_t errstr_size) {
    if (!c || !atomic_load(&c->fatal_err))
        return 0;
    pthread_mutex_lock(&c->lock);
    int err = atomic_load(&c->fatal_err);
    if (errstr && errstr_size)
        snprintf(errstr, errstr_size, "%s", c->fatal_errstr);
    pthread_mutex_unlock(&c->lock);
    return err;
}

/* Network thread, once fatal: every waiting request fails with the
 * fatal error and every connection closes (their in-flight requests
 * fail too); knw_conn_connect refuses from now on. */
static void fail_fatal(knw_client *c) {
    int err = atomic_load(&c->fatal_err);
    char msg[512];
    pthread_mutex_lock(&c->lock);
    snprintf(msg, sizeof msg, "%s", c->fatal_errstr);
    pthread_mutex_unlock(&c->lock);
    knw_req *r;
    while ((r = knw_reqq_pop(&c->unrouted)))
        knw_req_fail(c, r, err, "%s", msg);
    int64_t now = knw_now_ms();
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[i];
        while ((r = knw_reqq_pop(&conn->pending)))
            knw_req_fail(c, r, err, "%s", msg);
        if (conn->state != KNW_CS_DOWN && conn->state != KNW_CS_BACKOFF)
            knw_conn_close(conn, 0, err, msg, now);
        conn->resolve_id = 0; /* a late answer is only cached */
        conn->state = KNW_CS_DOWN;
    }
}

/* ---- the network thread ---- */

static void drain_submit(knw_client *c) {
    pthread_mutex_lock(&c->lock);
    knw_reqq q = c->submit;
    c->submit = (knw_reqq){NULL, NULL, 0};
    pthread_mutex_unlock(&c->lock);
    knw_req *r;
    while ((r = knw_reqq_pop(&q)))
        knw_client_enqueue(c, r);
}

static void shutdown_all(knw_client *c) {
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_mutex_unlock(&c->lock);
    drain_submit(c);
    knw_req *r;
    while ((r = knw_reqq_pop(&c->unrouted)))
        knw_req_fail(c, r, KN_ERR__CLOSED, "the client is closing");
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[i];
        knw_req *x;
        while ((x = knw_iftab_pop(&conn->inflight)))
            knw_req_fail(c, x, KN_ERR__CLOSED, "the client is closing");
        while ((r = knw_reqq_pop(&conn->pending)))
            knw_req_fail(c, r, KN_ERR__CLOSED, "the client is closing");
    }
    /* Callbacks above cannot add work: once stopping, knw_send completes
     * a new request at once with _CLOSED. */
}

/* Hands each finished lookup to the connection still waiting for it
 * (answers nobody waits for only fill the cache). */
static void collect_resolved(knw_client *c, int64_t now_ms) {
    knw_dns_job *jobs = knw_resolver_collect(&c->resolver, now_ms);
    for (knw_dns_job *j = jobs; j; j = j->next)
        for (int i = 0; i < c->conn_count; i++) {
            knw_conn *conn = c->conns[i];
            if (conn->state == KNW_CS_RESOLVING && conn->resolve_id == j->id) {
                knw_conn_resolved(conn, j->err, j->errstr, &j->addrs, now_ms);
                break;
            }
        }
    knw_dns_job_free(jobs);
}

static void *net_main(void *arg) {
    knw_client *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        bool stop = c->stopping;
        pthread_mutex_unlock(&c->lock);
        if (stop)
            break;
        int64_t now = knw_now_ms();
        drain_submit(c);
        if (atomic_load(&c->fatal_err))
            fail_fatal(c);
        collect_resolved(c, now);
        reap(c);
        int64_t next = knw_md_tick(c, now);
        route_unrouted(c, now);
        for (int i = 0; i < c->conn_count; i++) {
            int64_t d = knw_conn_service(c->conns[i], now);
            next = d < next ? d : next;
        }
        check_timeouts(c, now);
        next = c->next_timeout_check_ms < next ? c->next_timeout_check_ms : next;
        clear_connect_fatal(c);
        int64_t tn = run_tickers(c, knw_now_ms());
        next = tn < next ? tn : next;
        /* Work queued by callbacks and tickers goes out before sleeping. */
        pthread_mutex_lock(&c->lock);
        bool more = c->submit.count > 0;
        pthread_mutex_unlock(&c->lock);

        knw_loop_reset(&c->loop);
        for (int i = 0; i < c->conn_count; i++) {
            knw_conn *conn = c->conns[i];
            short ev = knw_conn_events(conn);
            conn->poll_idx = ev && conn->tp.fd >= 0 ? knw_loop_add(&c->loop, conn->tp.fd, ev) : -1;
        }
        now = knw_now_ms();
        int timeout;
        if (more || atomic_load(&c->woken))
            timeout = 0;
        else if (next == INT64_MAX)
            timeout = 1000;
        else
            timeout = next <= now ? 0 : next - now > 1000 ? 1000 : (int)(next - now);
        /* Bytes a TLS layer holds decrypted will not wake poll(2). */
        for (int i = 0; i < c->conn_count && timeout; i++)
            if (c->conns[i]->poll_idx > 0 && knw_transport_pending(&c->conns[i]->tp))
                timeout = 0;
        knw_loop_wait(&c->loop, timeout);
        now = knw_now_ms();
        for (int i = 0; i < c->conn_count; i++) {
            knw_conn *conn = c->conns[i];
            if (conn->poll_idx > 0) {
                int idx = conn->poll_idx;
                conn->poll_idx = -1;
                knw_conn_io(conn, knw_loop_revents(&c->loop, idx), now);
            }
        }
    }
    shutdown_all(c);
    return NULL;
}

/* ---- construction ---- */

knw_client *knw_client_new_settings(const knw_settings *s, char *errstr, size_t errstr_size) {
    if (!s->bootstrap_count) {
        kn_errstr_set(errstr, errstr_size, "bootstrap.servers is required");
        kn_set_last_error(KN_ERR__CONFIG);
        return NULL;
    }
    knw_client *c = kn_calloc(1, sizeof *c);
    if (!c) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        kn_set_last_error(KN_ERR__NOMEM);
        return NULL;
    }
    if (knw_settings_copy(&c->set, s)) {
        kn_free(c);
        kn_errstr_set(errstr, errstr_size, "out of memory");
        kn_set_last_error(KN_ERR__NOMEM);
        return NULL;
    }
    /* Failures below: out of memory unless a step says otherwise. */
    int err = KN_ERR__NOMEM;
    if (!c->set.client_id)
        c->set.client_id = kn_strdup(c->set.kind);
    knw_body_cache_hold(); /* released by knw_client_destroy */
    kn_logger_init(&c->log, c->set.client_id ? c->set.client_id : "");
    /* Before the network thread starts: it reads both unlocked. */
    kn_logger_set_level(&c->log, c->set.log_level);
    kn_logger_set_handler(&c->log, c->set.log_fn, c->set.log_opaque);
    c->loop.wake_fd = -1;
    c->features.epoch = -1;
    knw_resolver_init(&c->resolver, c->set.resolve_fn, c->set.resolve_opaque, &c->loop);
    knw_coord_init(&c->coord);
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->tick_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    knw_backoff_init(&c->reconnect_backoff, c->set.reconnect_backoff_ms, c->set.reconnect_backoff_max_ms,
                     0.2);
    knw_backoff_init(&c->retry_backoff, c->set.retry_backoff_ms, c->set.retry_backoff_max_ms, 0.2);
    knw_backoff_init(&c->setup_backoff, c->set.setup_timeout_ms, c->set.setup_timeout_max_ms, 0.2);
    if (c->set.sasl && c->set.sasl->token_fn) {
        knw_oauth_refresh r = {c->set.sasl->refresh_window_factor, c->set.sasl->refresh_window_jitter,
                               c->set.sasl->refresh_min_period_ms, c->set.sasl->refresh_buffer_ms};
        if (!(c->oauth = knw_oauth_store_new(c->set.sasl->token_fn, c->set.sasl->token_opaque, &r))) {
            kn_errstr_set(errstr, errstr_size, "out of memory");
            goto fail;
        }
        c->set.sasl->store = c->oauth;
    }
    if (c->set.sasl && knw_krb_new(c->set.sasl, krb_wake, &c->loop, &c->log, &c->krb, errstr, errstr_size))
        goto fail;
    if (c->krb)
        c->set.sasl->krb = c->krb;
    c->use_bootstrap = true;
    c->next_timeout_check_ms = INT64_MAX;
    c->md.want = true; /* the first metadata is fetched at once, as Java does */
    if (!c->set.client_id) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (knw_net_metrics_init(c)) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (knw_loop_init(&c->loop, errstr, errstr_size)) {
        err = KN_ERR__FAIL;
        goto fail;
    }
    if (c->set.sasl && c->set.sasl->oidc) {
        /* The first token is fetched here: its failure (an unreachable
         * endpoint, a refused secret) is the constructor's code. */
        int orc = knw_client_oidc_start(c, errstr, errstr_size);
        if (orc) {
            err = orc < 0 ? orc : KN_ERR__FAIL;
            goto fail;
        }
    }
    for (int i = 0; i < c->set.bootstrap_count; i++) {
        knw_conn *conn = knw_conn_new(c, -1 - i, true, c->set.bootstrap[i].host, c->set.bootstrap[i].port);
        if (!conn || conns_add(c, conn)) {
            knw_conn_free(conn, KN_ERR__NOMEM, "out of memory");
            kn_errstr_set(errstr, errstr_size, "out of memory");
            goto fail;
        }
    }
    int rc = pthread_create(&c->thread, NULL, net_main, c);
    if (rc) {
        kn_errstr_set(errstr, errstr_size, "cannot start the network thread: %s", strerror(rc));
        err = KN_ERR__FAIL;
        goto fail;
    }
    c->thread_started = true;
    pthread_setname_np(c->thread, "kn-wire");
    return c;
fail:
    knw_client_destroy(c);
    kn_set_last_error(err);
    return NULL;
}

knw_client *knw_client_new(const kn_conf *conf, const char *client_kind, char *errstr, size_t errstr_size) {
    if (!conf) {
        kn_errstr_set(errstr, errstr_size, "no configuration");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    knw_settings s;
    int rc = knw_settings_from_conf(&s, conf, client_kind, errstr, errstr_size);
    if (rc) {
        /* _CONFIG for a bad value, _SSL for an unreadable truststore
         * or key, ...: the code the constructor's caller gets. */
        kn_set_last_error(rc < 0 ? rc : KN_ERR__CONFIG);
        return NULL;
    }
    knw_client *c = knw_client_new_settings(&s, errstr, errstr_size);
    knw_settings_free(&s);
    return c;
}

struct kn_logger *knw_client_logger(knw_client *c) { return c ? &c->log : NULL; }

void knw_client_stop(knw_client *c) {
    if (!c || c->stopped)
        return;
    if (knw_on_network_thread(c)) {
        /* Joining ourselves would deadlock: refuse loudly instead. */
        kn_log(&c->log, KN_LOG_ERROR, "knw_client_stop called on the network thread: ignored");
        return;
    }
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (c->thread_started) {
        knw_loop_wake(&c->loop);
        pthread_join(c->thread, NULL);
        c->thread_started = false;
    } else {
        shutdown_all(c);
    }
    /* Before the loop goes: the resolver and refresher threads wake it. */
    knw_oauth_refresher_stop(c->oidc_thread);
    c->oidc_thread = NULL;
    knw_resolver_destroy(&c->resolver);
    knw_krb_stop(c->krb); /* it wakes the loop too */
    pthread_mutex_lock(&c->lock);
    c->closed = true;
    pthread_cond_broadcast(&c->cond);
    /* Emptied under the lock: other threads (the connection-count
     * gauge, version lookups) stop seeing the connections first. */
    int n = c->conn_count;
    c->conn_count = 0;
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < n; i++)
        knw_conn_free(c->conns[i], KN_ERR__CLOSED, "the client is closing");
    c->stopped = true;
}

void knw_client_destroy(knw_client *c) {
    if (!c)
        return;
    if (knw_on_network_thread(c)) {
        /* Joining ourselves would deadlock: refuse loudly instead. */
        kn_log(&c->log, KN_LOG_ERROR, "knw_client_destroy called on the network thread: ignored");
        return;
    }
    knw_client_stop(c);
    kn_free(c->conns);
    knw_md_destroy(c);
    knw_coord_destroy(&c->coord);
    kn_free(c->tickers);
    knw_loop_destroy(&c->loop);
    pthread_mutex_destroy(&c->tick_lock);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    kn_logger_destroy(&c->log);
    knw_settings_free(&c->set);
    knw_oauth_store_free(c->oauth);
    knw_oauth_store_free(c->oidc_store);
    knw_krb_free(c->krb); /* after the connections: their jobs are gone */
    knm_destroy(c->metrics); /* after the thread: nothing records any more */
    kn_free(c);
    knw_body_cache_release();
}

/* ---- accessors (any thread) ---- */

static knw_conn *find_locked(knw_client *c, int32_t node_id) {
    if (node_id == KNW_NODE_CONTROLLER)
        node_id = c->md.current ? c->md.current->controller_id : -1;
    if (node_id == KNW_NODE_ANY) {
        for (int i = 0; i < c->conn_count; i++)
            if (atomic_load(&c->conns[i]->ready) && !c->conns[i]->retired)
                return c->conns[i];
        return NULL;
    }
    for (int i = 0; i < c->conn_count; i++)
        if (!c->conns[i]->bootstrap && c->conns[i]->node_id == node_id)
            return c->conns[i];
    return NULL;
}

int16_t knw_api_version(knw_client *c, int32_t node_id, int16_t api_key) {
    if (!c || api_key < 0 || api_key > KP_API_KEY_MAX)
        return -1;
    pthread_mutex_lock(&c->lock);
    knw_conn *conn = find_locked(c, node_id);
    int16_t v = conn && atomic_load(&conn->ready) ? conn->vmax[api_key] : -1;
    pthread_mutex_unlock(&c->lock);
    return v;
}

void knw_features_update(knw_client *c, const kp_ApiVersionsResponse *resp) {
    pthread_mutex_lock(&c->lock);
    if (resp->finalized_features_epoch > c->features.epoch) {
        knw_features *f = &c->features;
        f->epoch = resp->finalized_features_epoch;
        f->count = 0;
        for (int32_t i = 0; i < resp->finalized_features.count && f->count < KNW_FEATURES_MAX; i++) {
            const kp_ApiVersionsResponse_FinalizedFeatureKey *k = &resp->finalized_features.items[i];
            if (k->name.len <= 0 || (size_t)k->name.len >= sizeof f->items[0].name)
                continue; /* no feature Kafka defines is that long */
            memcpy(f->items[f->count].name, k->name.ptr, (size_t)k->name.len);
            f->items[f->count].name[k->name.len] = '\0';
            f->items[f->count].level = k->max_version_level;
            f->count++;
        }
    }
    pthread_mutex_unlock(&c->lock);
}

int16_t knw_feature_level(knw_client *c, const char *name, int64_t *epoch) {
    pthread_mutex_lock(&c->lock);
    const knw_features *f = &c->features;
    int16_t level = f->epoch < 0 ? -1 : 0;
    for (int i = 0; i < f->count; i++)
        if (!strcmp(f->items[i].name, name))
            level = f->items[i].level;
    if (epoch)
        *epoch = f->epoch;
    pthread_mutex_unlock(&c->lock);
    return level;
}

int knw_inflight(knw_client *c, int32_t node_id) {
    pthread_mutex_lock(&c->lock);
    knw_conn *conn = find_locked(c, node_id);
    int n = conn ? atomic_load(&conn->inflight_n) : 0;
    pthread_mutex_unlock(&c->lock);
    return n;
}

bool knw_node_ready(knw_client *c, int32_t node_id) {
    pthread_mutex_lock(&c->lock);
    knw_conn *conn = find_locked(c, node_id);
    bool ready = conn && atomic_load(&conn->ready);
    pthread_mutex_unlock(&c->lock);
    return ready;
}

void knw_disconnect(knw_client *c, int32_t node_id) {
    pthread_mutex_lock(&c->lock);
    knw_conn *conn = find_locked(c, node_id);
    if (conn)
        atomic_store(&conn->disconnect_requested, true);
    pthread_mutex_unlock(&c->lock);
    knw_loop_wake(&c->loop);
}

void knw_get_stats(knw_client *c, knw_stats *o) {
    knw_stats_atomic *s = &c->stats;
    o->connects = atomic_load(&s->connects);
    o->connect_failures = atomic_load(&s->connect_failures);
    o->disconnects = atomic_load(&s->disconnects);
    o->requests_sent = atomic_load(&s->requests_sent);
    o->responses_received = atomic_load(&s->responses_received);
    o->request_timeouts = atomic_load(&s->request_timeouts);
    o->metadata_refreshes = atomic_load(&s->metadata_refreshes);
    o->protocol_errors = atomic_load(&s->protocol_errors);
    o->rebootstraps = atomic_load(&s->rebootstraps);
    o->bytes_sent = atomic_load(&s->bytes_sent);
    o->bytes_received = atomic_load(&s->bytes_received);
    o->reauthentications = atomic_load(&s->reauthentications);
}

void knw_set_log_handler(knw_client *c, kn_log_fn *fn, void *opaque) {
    kn_logger_set_handler(&c->log, fn, opaque);
}

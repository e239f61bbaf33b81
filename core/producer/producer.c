/*
 * producer.c: the public producer API (kafka_native_producer.h): creation
 * from a kn_conf, send (partition choice and append, under the
 * accumulator lock), delivery reports served on the caller's thread
 * (poll/flush/close), the readiness eventfd, stats.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "codec/codec.h"
#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "producer/producer_int.h"
#include "telemetry/registry_source.h"
#include "producer/producer_metrics.h"
#include "proto/generated/kp_apis.h"

#define KNP_ROUND_ROBIN_CLASS "org.apache.kafka.clients.producer.RoundRobinPartitioner"

/* acc.lock held: ask the sender to run (coalesced). */
static void producer_wake(void *opaque) {
    kn_producer *p = opaque;
    if (!p->acc.wake_pending) {
        p->acc.wake_pending = true;
        knw_wakeup(p->wire);
    }
}

/* acc.lock held: reports became available. */
static void producer_on_done(void *opaque) {
    kn_producer *p = opaque;
    if (p->efd >= 0 && p->efd_used) {
        uint64_t one = 1;
        ssize_t n = write(p->efd, &one, sizeof one);
        (void)n; /* EAGAIN means already readable: fine */
    }
    if (p->ready_cb)
        p->ready_cb(p, p->ready_opaque);
}

static int read_conf(kn_producer *p, knp_acc_conf *ac, knp_sender_conf *sc, char *errstr,
                     size_t n) {
    const kn_conf *c = p->conf;
    memset(ac, 0, sizeof *ac);
    memset(sc, 0, sizeof *sc);
    if (kn_conf_get_bool(c, "transaction.two.phase.commit.enable") > 0) {
        kn_errstr_set(errstr, n, "transaction.two.phase.commit.enable: two-phase commit "
                                 "(KIP-939) is not supported");
        return KN_ERR__UNSUPPORTED;
    }
    const char *tid = kn_conf_get_str(c, "transactional.id");
    if (tid && *tid) {
        /* kn_conf_finalize already refused it without idempotence. */
        p->transactional = true;
        p->txs.id = tid;
        p->txs.coord = -1;
        ac->transactional = true;
        sc->txn = &p->txs;
    }
    ac->batch_size = (int32_t)kn_conf_get_int(c, "batch.size");
    if (ac->batch_size < 1)
        ac->batch_size = 1; /* Java: batch.size=0 disables batching */
    ac->linger_ms = kn_conf_get_int(c, "linger.ms");
    ac->buffer_memory = kn_conf_get_int(c, "buffer.memory");
    ac->max_request_size = (int32_t)kn_conf_get_int(c, "max.request.size");
    ac->delivery_timeout_ms = kn_conf_get_int(c, "delivery.timeout.ms");
    ac->max_block_ms = kn_conf_get_int(c, "max.block.ms");
    const char *ct = kn_conf_get_str(c, "compression.type");
    const kn_codec *codec = kn_codec_by_name(ct ? ct : "none");
    if (!codec) {
        kn_errstr_set(errstr, n, "compression.type: unknown codec \"%s\"", ct ? ct : "");
        return KN_ERR__CONFIG;
    }
    ac->codec = codec->id;
    ac->level = INT32_MIN;
    const char *lk = codec->id == KN_CODEC_GZIP   ? "compression.gzip.level"
                     : codec->id == KN_CODEC_LZ4  ? "compression.lz4.level"
                     : codec->id == KN_CODEC_ZSTD ? "compression.zstd.level"
                                                  : NULL;
    if (lk) {
        ac->level = (int)kn_conf_get_int(c, lk);
        if (!kn_codec_level_valid(codec, ac->level)) {
            kn_errstr_set(errstr, n, "%s: level %d is out of range", lk, ac->level);
            return KN_ERR__CONFIG;
        }
    }
    ac->ignore_keys = kn_conf_get_bool(c, "partitioner.ignore.keys") != 0;
    const char *pc = p->partitioner ? NULL : kn_conf_get_str(c, "partitioner.class");
    if (pc && *pc) {
        if (strcmp(pc, KNP_ROUND_ROBIN_CLASS) == 0 || strcmp(pc, "RoundRobinPartitioner") == 0) {
            ac->round_robin = true;
        } else {
            kn_errstr_set(errstr, n,
                          "partitioner.class: only %s is available from configuration, not "
                          "\"%s\"",
                          KNP_ROUND_ROBIN_CLASS, pc);
            return KN_ERR__CONFIG;
        }
    }
    ac->adaptive = kn_conf_get_bool(c, "partitioner.adaptive.partitioning.enable") != 0;
    /* Interceptors observe every outcome, so reports are always queued. */
    ac->has_global_dr = p->dr != NULL || p->ninterceptors > 0;

    const char *acks = kn_conf_get_str(c, "acks");
    sc->acks = (!acks || !strcmp(acks, "all") || !strcmp(acks, "-1")) ? -1
               : !strcmp(acks, "0")                                  ? 0
                                                                     : 1;
    sc->idempotent = kn_conf_get_bool(c, "enable.idempotence") != 0;
    sc->request_timeout_ms = (int32_t)kn_conf_get_int(c, "request.timeout.ms");
    sc->retries = kn_conf_get_int(c, "retries");
    sc->retry_backoff_ms = kn_conf_get_int(c, "retry.backoff.ms");
    sc->retry_backoff_max_ms = kn_conf_get_int(c, "retry.backoff.max.ms");
    if (sc->retry_backoff_max_ms < sc->retry_backoff_ms)
        sc->retry_backoff_max_ms = sc->retry_backoff_ms;
    sc->max_in_flight = (int32_t)kn_conf_get_int(c, "max.in.flight.requests.per.connection");
    sc->availability_timeout_ms = kn_conf_get_int(c, "partitioner.availability.timeout.ms");
    sc->transaction_timeout_ms = (int32_t)kn_conf_get_int(c, "transaction.timeout.ms");
    sc->adaptive = ac->adaptive;
    p->max_block_ms = kn_conf_get_int(c, "max.block.ms");
    return 0;
}

/* Largest size a size-versioned struct may claim: a guard against a
 * size field left uninitialised. */
#define KNP_SIZED_MAX 4096

/* Copies a caller's size-versioned struct (leading size_t size) into
 * dst (dst_size bytes, this library's layout), zero-filled past the
 * caller's size. A larger caller struct is accepted only when every
 * byte past dst_size is zero (fields this library does not know, left
 * at their defaults). */
static int read_sized(void *dst, size_t dst_size, const void *src, const char *what, char *errstr,
                      size_t errstr_size) {
    size_t size;
    memcpy(&size, src, sizeof size);
    if (size < sizeof size || size > KNP_SIZED_MAX) {
        kn_errstr_set(errstr, errstr_size, "%s: size %zu is not a struct size (set it to sizeof(%s))", what,
                      size, what);
        return KN_ERR__INVALID_ARG;
    }
    memset(dst, 0, dst_size);
    memcpy(dst, src, size < dst_size ? size : dst_size);
    for (size_t i = dst_size; i < size; i++)
        if (((const unsigned char *)src)[i]) {
            kn_errstr_set(errstr, errstr_size,
                          "%s: a field past the %zu bytes this library knows is set (byte %zu): "
                          "it needs a newer kafka-native",
                          what, dst_size, i);
            return KN_ERR__UNSUPPORTED;
        }
    return KN_OK;
}

kn_producer *kn_producer_new(const kn_conf *conf, kn_delivery_cb *dr, void *dr_opaque,
                             char *errstr, size_t errstr_size) {
    return kn_producer_new_with_hooks(conf, dr, dr_opaque, NULL, errstr, errstr_size);
}

kn_producer *kn_producer_new_with_hooks(const kn_conf *conf, kn_delivery_cb *dr, void *dr_opaque,
                                        const kn_producer_hooks *hooks, char *errstr, size_t errstr_size) {
    if (!conf || kn_conf_client_type(conf) != KN_CLIENT_PRODUCER) {
        kn_errstr_set(errstr, errstr_size, "kn_producer_new needs a producer configuration");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    kn_producer *p = kn_calloc(1, sizeof *p);
    if (!p) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        kn_set_last_error(KN_ERR__NOMEM);
        return NULL;
    }
    kn_fork_stamp_now(&p->fork);
    int err = KN_ERR__NOMEM; /* kn_last_error() on the fail path */
    p->efd = -1;
    p->dr = dr;
    p->dr_opaque = dr_opaque;
    p->conf = kn_conf_dup(conf);
    if (!p->conf) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (hooks) {
        /* Size-versioned: read only the caller's bytes into zeroed
         * copies of the structs this library knows. */
        kn_producer_hooks h;
        if ((err = read_sized(&h, sizeof h, hooks, "kn_producer_hooks", errstr, errstr_size)) != KN_OK)
            goto fail;
        if (h.interceptor_count && !h.interceptors) {
            kn_errstr_set(errstr, errstr_size,
                          "kn_producer_new_with_hooks: interceptor_count without interceptors");
            err = KN_ERR__INVALID_ARG;
            goto fail;
        }
        p->partitioner = h.partitioner;
        p->partitioner_opaque = h.partitioner_opaque;
        if (h.interceptor_count) {
            p->interceptors = kn_malloc(h.interceptor_count * sizeof *p->interceptors);
            if (!p->interceptors) {
                kn_errstr_set(errstr, errstr_size, "out of memory");
                err = KN_ERR__NOMEM;
                goto fail;
            }
            for (size_t i = 0; i < h.interceptor_count; i++) {
                if (!h.interceptors[i]) {
                    kn_errstr_set(errstr, errstr_size, "kn_producer_new_with_hooks: interceptor %zu is NULL", i);
                    err = KN_ERR__INVALID_ARG;
                    goto fail;
                }
                err = read_sized(&p->interceptors[i], sizeof p->interceptors[i], h.interceptors[i],
                                 "kn_producer_interceptor", errstr, errstr_size);
                if (err != KN_OK)
                    goto fail;
            }
            p->ninterceptors = h.interceptor_count;
        }
    }
    if ((err = kn_conf_finalize(p->conf, errstr, errstr_size)) != KN_OK)
        goto fail;
    knp_acc_conf ac;
    knp_sender_conf sc;
    if ((err = read_conf(p, &ac, &sc, errstr, errstr_size)) != KN_OK)
        goto fail;
    err = KN_ERR__NOMEM;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)p;
    if (knp_acc_init(&p->acc, &ac, seed)) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    p->acc.wake = producer_wake;
    p->acc.on_done = producer_on_done;
    p->acc.hook_opaque = p;
    p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    p->wire = knw_client_new(p->conf, "producer", errstr, errstr_size);
    if (!p->wire) {
        err = kn_last_error(); /* knw_client_new's reason */
        goto fail;
    }
    /* Before the sender: its first tick may already record. */
    if (!(p->metrics = knp_metrics_new(knw_client_metrics(p->wire), &p->acc))) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    p->sender = knp_sender_new(p->wire, &p->acc, &sc);
    if (!p->sender) {
        kn_errstr_set(errstr, errstr_size, "cannot start the producer's sender");
        goto fail;
    }
    knp_metrics_set_sender(p->metrics, p->sender);
    if (knt_new(p->wire, p->conf, "producer", knt_registry_source, p->wire, &p->telemetry)) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    knw_wakeup(p->wire); /* fetch a producer id right away */
    kn_set_last_error(KN_OK);
    return p;
fail:
    kn_set_last_error(err);
    if (p->sender) /* (telemetry is the last step: nothing to undo there) */
        knp_sender_stop(p->sender);
    if (p->wire)
        knw_client_destroy(p->wire);
    if (p->sender)
        knp_sender_destroy(p->sender);
    knp_metrics_free(p->metrics); /* after the wire client: no visit runs */
    if (p->acc.buckets)
        knp_acc_destroy(&p->acc);
    if (p->efd >= 0)
        close(p->efd);
    kn_conf_destroy(p->conf);
    kn_free(p->interceptors);
    kn_free(p);
    return NULL;
}

/* Makes sure t has a partition count: registers the topic with the
 * metadata cache and waits for it until deadline_ms. acc.lock NOT held. */
static int await_topic(kn_producer *p, const char *topic, int64_t deadline_ms, char *errstr,
                       size_t n) {
    knw_metadata_add_topics(p->wire, &topic, 1);
    int last_err = 0;
    for (;;) {
        knw_metadata *md = knw_metadata_get(p->wire);
        const knw_topic *kt = md ? knw_metadata_topic(md, topic) : NULL;
        if (kt && !kt->error && kt->partition_count > 0) {
            int32_t *avail = kn_calloc((size_t)kt->partition_count, sizeof *avail);
            int32_t navail = 0;
            if (avail)
                for (int32_t i = 0; i < kt->partition_count; i++)
                    if (kt->partitions[i].leader >= 0)
                        avail[navail++] = kt->partitions[i].partition;
            pthread_mutex_lock(&p->acc.lock);
            knp_topic *t = knp_acc_topic(&p->acc, topic, true);
            int rc = t ? knp_acc_topic_update(&p->acc, t, kt->partition_count, avail, navail)
                       : KN_ERR__NOMEM;
            pthread_mutex_unlock(&p->acc.lock);
            kn_free(avail);
            knw_metadata_release(md);
            if (!avail || rc) {
                kn_errstr_set(errstr, n, "out of memory");
                return KN_ERR__NOMEM;
            }
            return 0;
        }
        if (kt)
            last_err = kt->error;
        /* As Java's Metadata.maybeThrowExceptionForTopic: a topic the
         * principal may not see (an ACL) is the answer, not a reason to
         * wait out max.block.ms. */
        if (last_err == KN_ERR_TOPIC_AUTHORIZATION_FAILED) {
            if (md)
                knw_metadata_release(md);
            kn_errstr_set(errstr, n, "topic %s: not authorized to access it (TOPIC_AUTHORIZATION_FAILED)",
                          topic);
            return last_err;
        }
        int64_t fetched = md ? md->fetched_at_ms : 0;
        if (md)
            knw_metadata_release(md);
        /* As Java's metadata fatal errors: a TLS failure is the answer,
         * not a reason to wait out max.block.ms. */
        char why[256];
        int cerr = knw_connect_error(p->wire, why, sizeof why);
        if (cerr) {
            kn_errstr_set(errstr, n, "topic %s: no broker reachable: %s", topic, why);
            return cerr;
        }
        int64_t now = knw_now_ms();
        if (now >= deadline_ms) {
            kn_errstr_set(errstr, n, "topic %s not present in metadata after %lld ms%s%s",
                          topic, (long long)p->max_block_ms, last_err ? ": " : "",
                          last_err ? kn_err_name(last_err) : "");
            return KN_ERR__TIMED_OUT;
        }
        knw_metadata_request_refresh(p->wire, false, "producer: new topic");
        int err = 0;
        int64_t left = deadline_ms - now;
        knw_metadata *nmd = knw_metadata_wait(p->wire, false, fetched + 1,
                                              (int)(left > 1000 ? 1000 : left), &err);
        if (nmd)
            knw_metadata_release(nmd);
        int frc = knw_client_fatal(p->wire, errstr, n);
        if (frc)
            return frc; /* authentication failed: no metadata will come */
    }
}

/* The custom partitioner's choice for rec (explicit partitions are
 * kept). Runs without the lock: user code must not run under it. */
static int custom_partition(kn_producer *p, const kn_record_out *rec, int32_t *part, char *errstr, size_t n) {
    pthread_mutex_lock(&p->acc.lock);
    knp_topic *t = knp_acc_topic(&p->acc, rec->topic, false);
    int32_t count = t ? t->partition_count : 0;
    pthread_mutex_unlock(&p->acc.lock);
    p->cb_depth++, p->hook_depth++;
    int32_t r = p->partitioner(rec->topic, rec->key, rec->key_len, rec->value, rec->value_len, count,
                               p->partitioner_opaque);
    p->cb_depth--, p->hook_depth--;
    if (r < 0 || r >= count) {
        kn_errstr_set(errstr, n,
                      "the custom partitioner returned partition %d for topic %s, which has "
                      "%d partition(s)",
                      (int)r, rec->topic, (int)count);
        return KN_ERR__INVALID_ARG;
    }
    *part = r;
    return 0;
}

static int send_one(kn_producer *p, const kn_record_out *rec, int32_t *chosen, char *errstr,
                    size_t errstr_size) {
    if (!p || !rec || !rec->topic || !*rec->topic || rec->partition < -1 ||
        (rec->header_count && !rec->headers) || (!rec->key && rec->key_len) ||
        (!rec->value && rec->value_len) || rec->key_len > INT32_MAX ||
        rec->value_len > INT32_MAX) {
        kn_errstr_set(errstr, errstr_size, "kn_producer_send: invalid argument");
        return KN_ERR__INVALID_ARG;
    }
    if (p->closed) {
        kn_errstr_set(errstr, errstr_size, "the producer is closed");
        return KN_ERR__CLOSED;
    }
    int frc = knw_client_fatal(p->wire, errstr, errstr_size);
    if (frc)
        return frc; /* authentication failed: as Java's send throws */
    if (p->transactional) {
        int trc = knp_txn_check_send(p, errstr, errstr_size);
        if (trc)
            return trc;
    }
    /* Header array for the batch encoder; small counts on the stack. */
    kn_rb_kv hstack[16];
    kn_rb_kv *hdrs = hstack;
    if (rec->header_count > 16) {
        hdrs = kn_malloc(rec->header_count * sizeof *hdrs);
        if (!hdrs) {
            kn_errstr_set(errstr, errstr_size, "out of memory");
            return KN_ERR__NOMEM;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < rec->header_count; i++) {
        const kn_header *h = &rec->headers[i];
        if (!h->key || (!h->value && h->value_len) || h->value_len > INT32_MAX) {
            kn_errstr_set(errstr, errstr_size, "kn_producer_send: header %zu is invalid", i);
            rc = KN_ERR__INVALID_ARG;
            goto out;
        }
        hdrs[i].key.ptr = h->key;
        hdrs[i].key.len = (int32_t)strlen(h->key);
        hdrs[i].value.ptr = h->value;
        hdrs[i].value.len = h->value ? (int32_t)h->value_len : -1;
    }
    knp_rec r;
    r.key.ptr = rec->key;
    r.key.len = rec->key ? (int32_t)rec->key_len : -1;
    r.value.ptr = rec->value;
    r.value.len = rec->value ? (int32_t)rec->value_len : -1;
    r.headers = hdrs;
    r.header_count = rec->header_count;
    if (rec->timestamp > 0) {
        r.timestamp = rec->timestamp;
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r.timestamp = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    r.dr = rec->dr;
    r.opaque = rec->opaque;
    /* The clock is read only where needed (a new topic below; a new
     * batch or a full buffer in knp_acc_append): most sends append to an
     * open batch, and a clock read was a tenth of their cost. */
    int64_t now = 0, deadline = 0;

    pthread_mutex_lock(&p->acc.lock);
    if (p->acc.fatal_err) {
        rc = KN_ERR__FATAL;
        kn_errstr_set(errstr, errstr_size, "%s", p->acc.fatal_errstr);
        pthread_mutex_unlock(&p->acc.lock);
        goto out;
    }
    knp_topic *t = knp_acc_topic(&p->acc, rec->topic, true);
    if (t && t->partition_count <= 0) {
        pthread_mutex_unlock(&p->acc.lock);
        now = knw_now_ms();
        deadline = now + p->max_block_ms;
        /* Only here, off the per-record path: Java's
         * metadata-wait-time-ns-total adds nothing for a known topic. */
        int64_t wait_from = knp_metrics_now_ns();
        rc = await_topic(p, rec->topic, deadline, errstr, errstr_size);
        knp_metrics_api_time(p->metrics, KNP_T_METADATA_WAIT, knp_metrics_now_ns() - wait_from);
        if (rc == KN_ERR__TIMED_OUT && p->max_block_ms == 0 && !p->transactional &&
            !(p->partitioner && rec->partition == KN_PARTITION_ANY)) {
            /* max.block.ms = 0 (OpenResty, log_by_lua): the caller may
             * not wait, so the record waits instead, up to
             * delivery.timeout.ms, for the metadata just requested; the
             * sender places it (knp_acc_place_parked). Java fails such a
             * send at once ("not present in metadata after 0 ms"). A
             * custom partitioner must run on this thread, and a record
             * must not outlive its transaction: neither is parked. */
            pthread_mutex_lock(&p->acc.lock);
            if (p->acc.closing) {
                rc = KN_ERR__CLOSED;
                kn_errstr_set(errstr, errstr_size, "the producer is closed");
            } else {
                rc = knp_acc_park(&p->acc, t, rec->partition, &r, now + p->acc.conf.delivery_timeout_ms, errstr,
                                  errstr_size);
            }
            pthread_mutex_unlock(&p->acc.lock);
            if (!rc) {
                *chosen = KN_PARTITION_ANY;
                knw_metadata_request_refresh(p->wire, false, "producer: new topic (record parked)");
                knw_wakeup(p->wire);
            }
            goto out;
        }
        if (rc)
            goto out;
        pthread_mutex_lock(&p->acc.lock);
    }
    int32_t want = rec->partition;
    if (t && want == KN_PARTITION_ANY && p->partitioner) {
        pthread_mutex_unlock(&p->acc.lock);
        rc = custom_partition(p, rec, &want, errstr, errstr_size);
        if (rc)
            goto out;
        pthread_mutex_lock(&p->acc.lock);
    }
    if (!t) {
        rc = KN_ERR__NOMEM;
        kn_errstr_set(errstr, errstr_size, "out of memory");
    } else {
        rc = knp_acc_append(&p->acc, t, want, &r, now, deadline, chosen, errstr, errstr_size);
    }
    pthread_mutex_unlock(&p->acc.lock);
out:
    if (hdrs != hstack)
        kn_free(hdrs);
    return rc;
}

/* Runs an interceptor's on_acknowledgement for every interceptor. */
static void ack_all(kn_producer *p, const kn_delivery *d) {
    p->cb_depth++, p->hook_depth++;
    for (size_t i = 0; i < p->ninterceptors; i++)
        if (p->interceptors[i].on_acknowledgement)
            p->interceptors[i].on_acknowledgement(p, d, p->interceptors[i].opaque);
    p->cb_depth--, p->hook_depth--;
}

/* The check every call makes, inline: kn_producer_forked is exported,
 * so calls to it from inside the library go through the PLT. */
static inline int producer_forked(const kn_producer *p) { return p && kn_fork_changed(&p->fork); }

int kn_producer_forked(const kn_producer *p) { return producer_forked(p); }

int kn_producer_send(kn_producer *p, const kn_record_out *rec, char *errstr, size_t errstr_size) {
    if (producer_forked(p)) {
        kn_fork_errstr(&p->fork, "the producer", errstr, errstr_size);
        return KN_ERR__FORKED;
    }
    if (p && p->hook_depth > 0) {
        kn_errstr_set(errstr, errstr_size,
                      "kn_producer_send called from an interceptor or partitioner of the same producer");
        return KN_ERR__STATE;
    }
    if (p)
        knw_client_app_service(p->wire); /* an OAUTHBEARER token refresh due (cheap when not) */
    if (!p || !p->ninterceptors || !rec) {
        int32_t part;
        return send_one(p, rec, &part, errstr, errstr_size);
    }
    /* Java's ProducerInterceptors.onSend: each one sees the previous
     * one's record; a failing one is logged and skipped. */
    kn_record_out cur = *rec;
    for (size_t i = 0; i < p->ninterceptors; i++) {
        const kn_producer_interceptor *ic = &p->interceptors[i];
        if (!ic->on_send)
            continue;
        kn_record_out out = cur;
        p->cb_depth++, p->hook_depth++;
        int irc = ic->on_send(p, &cur, &out, ic->opaque);
        p->cb_depth--, p->hook_depth--;
        if (irc) {
            kn_log(knw_client_logger(p->wire), KN_LOG_WARN, "interceptor %zu on_send failed (%d): record kept as it was",
                   i, irc);
            continue;
        }
        cur = out;
    }
    int32_t part = KN_PARTITION_ANY;
    int rc = send_one(p, &cur, &part, errstr, errstr_size);
    if (rc) {
        /* Java's onSendError: the interceptors see the failure too. */
        kn_delivery d;
        memset(&d, 0, sizeof d);
        d.topic = cur.topic ? cur.topic : "";
        d.partition = cur.partition >= 0 ? cur.partition : -1;
        d.offset = -1;
        d.timestamp = -1;
        d.err = rc;
        d.errstr = errstr && errstr_size ? errstr : "";
        d.opaque = cur.opaque;
        ack_all(p, &d);
    }
    return rc;
}

/* Calls the callbacks of a taken done list and frees it; returns the
 * records served. Runs without the lock. */
static int64_t serve(kn_producer *p, knp_batch *b) {
    int64_t served = 0;
    while (b) {
        knp_batch *next = b->next;
        kn_delivery d;
        d.topic = b->pq->topic->name;
        d.partition = b->pq->partition;
        d.err = b->err;
        d.errstr = b->errstr;
        if (p->transactional)
            knp_txn_on_report(p, b->err, b->errstr, b->count);
        for (int32_t i = 0; i < b->count; i++) {
            const knp_rec_meta *m = &b->meta[i];
            kn_delivery_cb *cb = m->dr ? m->dr : p->dr;
            if (!cb && !p->ninterceptors)
                continue;
            d.offset = b->err || b->base_offset < 0 ? -1 : b->base_offset + i;
            d.timestamp = b->log_append_time > 0 ? b->log_append_time : m->timestamp;
            d.opaque = m->opaque;
            /* Java: interceptors' onAcknowledgement before the callback. */
            ack_all(p, &d);
            if (cb) {
                p->cb_depth++;
                cb(p, &d, p->dr_opaque);
                p->cb_depth--;
            }
        }
        served += b->count;
        knp_batch_free(b);
        b = next;
    }
    return served;
}

/* Takes the done list (lock held) and resets the eventfd. */
static knp_batch *take_done_locked(kn_producer *p) {
    knp_batch *b = knp_acc_take_done(&p->acc);
    if (b && p->efd >= 0 && p->efd_used) {
        uint64_t v;
        ssize_t n = read(p->efd, &v, sizeof v);
        (void)n;
    }
    return b;
}

static void deadline_ts(int64_t deadline_ms, struct timespec *ts) {
    ts->tv_sec = (time_t)(deadline_ms / 1000);
    ts->tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
}

int kn_producer_poll(kn_producer *p, int timeout_ms) {
    if (!p)
        return 0;
    if (producer_forked(p))
        return KN_ERR__FORKED;
    if (p->cb_depth > 0)
        return KN_ERR__STATE; /* from a callback that poll, flush or close runs */
    if (p->closed)
        return KN_ERR__CLOSED;
    /* Even poll(0) runs a due OAUTHBEARER token refresh. */
    knw_client_app_service(p->wire);
    /* poll(0) after every send (a request handler) reads no clock. */
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : timeout_ms == 0 ? 0 : knw_now_ms() + timeout_ms;
    pthread_mutex_lock(&p->acc.lock);
    while (!p->acc.done_head && timeout_ms != 0) {
        int64_t now = knw_now_ms();
        if (now >= deadline)
            break;
        pthread_mutex_unlock(&p->acc.lock);
        knw_client_app_service(p->wire); /* the OAUTHBEARER token callback, if due */
        pthread_mutex_lock(&p->acc.lock);
        if (p->acc.done_head)
            break;
        struct timespec ts;
        deadline_ts(knw_client_app_wait_until(p->wire, now, deadline == INT64_MAX ? now + 1000 : deadline), &ts);
        pthread_cond_timedwait(&p->acc.done_cond, &p->acc.lock, &ts);
    }
    knp_batch *b = take_done_locked(p);
    pthread_mutex_unlock(&p->acc.lock);
    if (!b)
        return knw_client_fatal(p->wire, NULL, 0); /* 0, or why nothing will come */
    int64_t served = serve(p, b);
    pthread_mutex_lock(&p->acc.lock);
    p->acc.outstanding -= served;
    pthread_mutex_unlock(&p->acc.lock);
    return served > INT32_MAX ? INT32_MAX : (int)served;
}

int knp_flush(kn_producer *p, int timeout_ms) {
    if (!p)
        return 0;
    if (producer_forked(p))
        return KN_ERR__FORKED;
    if (p->cb_depth > 0)
        return KN_ERR__STATE; /* e.g. a flush from a callback that close runs */
    if (p->closed)
        return KN_ERR__CLOSED;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : knw_now_ms() + timeout_ms;
    int rc = 0;
    pthread_mutex_lock(&p->acc.lock);
    p->acc.flushing++;
    knw_wakeup(p->wire);
    for (;;) {
        knp_batch *b = take_done_locked(p);
        if (b) {
            pthread_mutex_unlock(&p->acc.lock);
            int64_t served = serve(p, b);
            pthread_mutex_lock(&p->acc.lock);
            p->acc.outstanding -= served;
            continue;
        }
        if (p->acc.outstanding <= 0)
            break;
        int64_t now = knw_now_ms();
        if (now >= deadline) {
            rc = KN_ERR__TIMED_OUT;
            break;
        }
        pthread_mutex_unlock(&p->acc.lock);
        knw_client_app_service(p->wire); /* the OAUTHBEARER token callback, if due */
        pthread_mutex_lock(&p->acc.lock);
        struct timespec ts;
        deadline_ts(knw_client_app_wait_until(p->wire, now,
                                              deadline == INT64_MAX || deadline > now + 1000 ? now + 1000 : deadline),
                    &ts);
        pthread_cond_timedwait(&p->acc.done_cond, &p->acc.lock, &ts);
    }
    p->acc.flushing--;
    pthread_mutex_unlock(&p->acc.lock);
    if (!rc)
        rc = knw_client_fatal(p->wire, NULL, 0); /* the records failed with it */
    return rc;
}

/* Java's flush-time-ns-total counts the application's flushes (those
 * that returned), not close's nor a commit's. */
int kn_producer_flush(kn_producer *p, int timeout_ms) {
    int64_t t0 = knp_metrics_now_ns();
    int rc = knp_flush(p, timeout_ms);
    if (!rc && p)
        knp_metrics_api_time(p->metrics, KNP_T_FLUSH, knp_metrics_now_ns() - t0);
    return rc;
}

int kn_producer_fatal_error(kn_producer *p, char *errstr, size_t errstr_size) {
    if (errstr && errstr_size)
        errstr[0] = 0;
    if (producer_forked(p)) {
        kn_fork_errstr(&p->fork, "the producer", errstr, errstr_size);
        return KN_ERR__FORKED;
    }
    return p && p->wire ? knw_client_fatal(p->wire, errstr, errstr_size) : 0;
}

int64_t kn_producer_outstanding(kn_producer *p) {
    if (!p || producer_forked(p))
        return 0; /* forked: the records are the parent's */
    pthread_mutex_lock(&p->acc.lock);
    int64_t n = p->acc.outstanding;
    pthread_mutex_unlock(&p->acc.lock);
    return n;
}

int kn_producer_fd(kn_producer *p) {
    if (!p || p->efd < 0)
        return -1;
    if (producer_forked(p))
        return p->efd; /* the parent's locks may be held: as it was */
    /* The eventfd is signalled only once someone asked for it: otherwise
     * every batch of reports cost a write and a read of it. Reports
     * queued before this call make it readable now. */
    pthread_mutex_lock(&p->acc.lock);
    if (!p->efd_used) {
        p->efd_used = true;
        if (p->acc.done_head) {
            uint64_t one = 1;
            ssize_t n = write(p->efd, &one, sizeof one);
            (void)n;
        }
    }
    pthread_mutex_unlock(&p->acc.lock);
    return p->efd;
}

void kn_producer_set_ready_cb(kn_producer *p, kn_producer_ready_cb *fn, void *opaque) {
    if (!p || producer_forked(p))
        return;
    /* Under acc.lock, where on_done calls it: once set, the old hook is
     * not running. */
    pthread_mutex_lock(&p->acc.lock);
    p->ready_cb = fn;
    p->ready_opaque = opaque;
    pthread_mutex_unlock(&p->acc.lock);
}

int kn_producer_close(kn_producer *p, int timeout_ms) {
    if (!p)
        return 0;
    if (producer_forked(p)) {
        /* The threads are the parent's and its locks may be held by
         * them: flushing or joining would hang, freeing could corrupt.
         * The copy is left as it is (leaked). */
        return KN_ERR__FORKED;
    }
    if (p->cb_depth > 0) {
        /* Stopping p here would pull it from under the poll / flush /
         * close that runs this callback. */
        kn_log(knw_client_logger(p->wire), KN_LOG_ERROR,
               "kn_producer_close called from a callback of the same producer: refused "
               "(KN_ERR__STATE); close it after the call that runs the callback returns");
        return KN_ERR__STATE;
    }
    if (p->closed)
        return 0; /* idempotent */
    /* The terminating telemetry push gets what the flush leaves of the
     * timeout (request.timeout.ms when unbounded). */
    int64_t deadline = knw_now_ms() + (timeout_ms >= 0 ? timeout_ms : kn_conf_get_int(p->conf, "request.timeout.ms"));
    int rc = knp_flush(p, timeout_ms);
    knt_close(p->telemetry, deadline);
    pthread_mutex_lock(&p->acc.lock);
    p->acc.closing = true;
    p->closed = true;
    pthread_cond_broadcast(&p->acc.mem_cond);
    pthread_mutex_unlock(&p->acc.lock);
    /* Stop the sender, then the network thread: in-flight requests fail
     * with KN_ERR__CLOSED through their callbacks, which (closing) fail
     * their batches instead of retrying. */
    knp_sender_stop(p->sender);
    knw_client_stop(p->wire);
    pthread_mutex_lock(&p->acc.lock);
    for (int32_t i = 0; i < p->acc.npqs; i++) {
        knp_batch *b;
        while ((b = knp_acc_pop(&p->acc, p->acc.pqs[i])) != NULL)
            knp_acc_complete(&p->acc, b, KN_ERR__CLOSED, -1, -1,
                             "the producer was closed before the record was delivered");
    }
    knp_acc_fail_parked(&p->acc, KN_ERR__CLOSED,
                        "the producer was closed before the record's topic metadata arrived");
    knp_batch *done = take_done_locked(p);
    pthread_mutex_unlock(&p->acc.lock);
    int64_t served = serve(p, done);
    p->acc.outstanding -= served;
    return rc;
}

void kn_producer_destroy(kn_producer *p) {
    if (!p || producer_forked(p))
        return; /* a fork child's copy: the threads are the parent's (leaked) */
    if (p->cb_depth > 0) {
        kn_log(knw_client_logger(p->wire), KN_LOG_ERROR,
               "kn_producer_destroy called from a callback of the same producer: ignored; "
               "destroy it after the call that runs the callback returns");
        return;
    }
    if (!p->closed)
        kn_producer_close(p, -1);
    knw_client_destroy(p->wire);
    knt_destroy(p->telemetry);
    knp_metrics_free(p->metrics); /* after the registry's owner: no visit runs */
    knp_sender_destroy(p->sender);
    knp_acc_destroy(&p->acc);
    if (p->efd >= 0)
        close(p->efd);
    kn_conf_destroy(p->conf);
    kn_free(p->interceptors);
    kn_free(p);
}

int kn_producer_get_stats(kn_producer *p, kn_producer_stats *caller) {
    /* Size-versioned (see the header): filled in full here, then only
     * the caller's caller->size bytes are copied out. */
    if (!p || !caller || caller->size < sizeof caller->size)
        return KN_ERR__INVALID_ARG;
    if (producer_forked(p))
        return KN_ERR__FORKED;
    kn_producer_stats st;
    memset(&st, 0, sizeof st);
    kn_producer_stats *out = &st;
    int64_t avg, max, reqs;
    knp_sender_latency(p->sender, &avg, &max, &reqs);
    pthread_mutex_lock(&p->acc.lock);
    out->records_sent = p->acc.records_sent;
    out->records_failed = p->acc.records_failed;
    out->bytes_sent = p->acc.bytes_sent;
    out->batches_sent = p->acc.batches_sent;
    out->retries = p->acc.retries;
    out->buffer_bytes = p->acc.mem_used;
    if (p->transactional) {
        out->transaction_version = p->txn_state == KNP_TXN_UNINIT ? 0 : p->txs.v2 ? 2 : 1;
        out->txn_add_partitions_requests = p->txs.add_partitions_sent;
        out->txn_add_offsets_requests = p->txs.add_offsets_sent;
    }
    pthread_mutex_unlock(&p->acc.lock);
    bool nb;
    int16_t epoch;
    knp_sender_get_pid(p->sender, &out->producer_id, &epoch, &nb);
    out->producer_epoch = epoch;
    out->requests_sent = reqs;
    out->request_latency_avg_us = avg;
    out->request_latency_max_us = max;
    if (p->wire) {
        knw_stats ws;
        knw_get_stats(p->wire, &ws);
        out->connects = ws.connects;
        out->connect_failures = ws.connect_failures;
        out->reauthentications = ws.reauthentications;
        knw_throttle_stats(p->wire, KP_API_PRODUCE, &out->produce_throttle_time_avg_ms,
                           &out->produce_throttle_time_max_ms);
    }
    kn_stats_copy_out(caller, &st, sizeof st);
    return KN_OK;
}

const char *kn_delivery_topic(const kn_delivery *d) { return d->topic; }
int32_t kn_delivery_partition(const kn_delivery *d) { return d->partition; }
int64_t kn_delivery_offset(const kn_delivery *d) { return d->offset; }
int64_t kn_delivery_timestamp(const kn_delivery *d) { return d->timestamp; }
int kn_delivery_error(const kn_delivery *d) { return d->err; }
const char *kn_delivery_errstr(const kn_delivery *d) { return d->errstr ? d->errstr : ""; }
void *kn_delivery_opaque(const kn_delivery *d) { return d->opaque; }

int kn_producer_metrics(kn_producer *p, kn_metric_visit_fn fn, void *ctx) {
    if (!p || !fn)
        return KN_ERR__INVALID_ARG;
    if (producer_forked(p))
        return KN_ERR__FORKED;
    return knm_visit(knw_client_metrics(p->wire), fn, ctx);
}

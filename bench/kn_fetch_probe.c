/*
 * kn_fetch_probe.c: fetch-and-discard probe, the broker-bound ceiling for
 * consuming a topic. It talks to the wire layer directly (core/wire):
 * Fetch requests are pipelined per leader (up to --max-in-flight at once,
 * each covering its own share of the leader's partitions, so a partition
 * is never in two requests), the record bytes are discarded, and records
 * are counted from the record-batch headers without decoding a single
 * record. Whatever a consumer does on top (decode, CRC, hand records to
 * the application) can only be slower; bench/run reads our consumer's
 * records/s as a fraction of this figure.
 *
 * The request shape is the consumer's (issue #17): by default one Fetch
 * in flight per leader listing all its partitions, the consumer's
 * max.partition.fetch.bytes, fetch.max.bytes, fetch.max.wait.ms and
 * receive.buffer.bytes defaults (--command-property receive.buffer.bytes=V
 * when the consumer it bounds runs with another). The topic is read
 * --passes times (default 5) and the ceiling is the median pass, not the
 * best; --max-in-flight K pipelines K smaller requests per leader instead
 * (a shape no consumer here uses: for exploration only).
 *
 * Output (bench/run parses the last two lines):
 *   probe pass: max.in.flight K (S streams): R records/sec, ... (each pass)
 *   probe: N records, R records/sec, M MiB/sec (record batches), F fetches, E s
 *   peak RSS X MB, CPU U s user + S s system
 * MiB/s here counts whole record batches as fetched (headers included),
 * not key + value bytes: the probe does not open records. Requests start
 * at offset 0 (the prefilled topics are never truncated).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "config/config.h"
#include "kafka_native.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_fetch.h"
#include "wire/wire.h"

/* Record batch v2 header: offsets of the fields the probe reads. */
#define BATCH_HEADER_LEN     61
#define BATCH_LENGTH_OFF     8  /* int32: bytes after this field */
#define BATCH_ATTRS_OFF      21 /* int16 */
#define BATCH_LAST_DELTA_OFF 23 /* int32 */
#define BATCH_COUNT_OFF      57 /* int32 */
#define BATCH_CONTROL_BIT    0x20

typedef struct probe probe;

typedef struct part {
    int32_t partition;
    int32_t leader;
    int32_t leader_epoch;
    int64_t offset; /* next offset to fetch */
    bool done;      /* reached the high watermark seen in a response */
} part;

/* One request stream: a fixed share of one leader's partitions, at most
 * one request in flight. Its request structs are reused for every send:
 * the previous request has completed before the next is built. */
typedef struct stream {
    probe *pr;
    int32_t node;
    int32_t *idx; /* indices into probe.parts */
    int32_t n;
    kp_FetchRequest req;
    kp_FetchRequest_FetchTopic topic;
    kp_FetchRequest_FetchPartition *fparts;
    bool inflight;
} stream;

struct probe {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    knw_client *client;
    const char *topic;
    kn_uuid topic_id;
    bool have_id;
    part *parts;
    int32_t part_count;
    stream *streams;
    int32_t stream_count;
    int fetch_size, max_wait_ms;
    int64_t target, records, batch_bytes, fetches;
    int64_t last_progress_ms;
    int inflight;
    bool stop;
    int err;
    char errstr[512];
};

static int32_t be32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static int64_t be64(const uint8_t *p) {
    return (int64_t)((uint64_t)(uint32_t)be32(p) << 32 | (uint32_t)be32(p + 4));
}

/* Fills the stream's request with its partitions that are not done.
 * Returns how many it listed. Lock held. */
static int32_t stream_fill(stream *s) {
    probe *pr = s->pr;
    kp_FetchRequest *f = &s->req;
    kp_FetchRequest_init(f);
    f->replica_id = -1;
    f->max_wait_ms = pr->max_wait_ms;
    f->min_bytes = 1;
    f->max_bytes = 52428800; /* fetch.max.bytes default */
    f->session_id = 0;
    f->session_epoch = -1; /* sessionless: every request lists its partitions */
    f->rack_id.ptr = "";
    f->rack_id.len = 0;
    kp_FetchRequest_FetchTopic_init(&s->topic);
    s->topic.topic.ptr = pr->topic;
    s->topic.topic.len = (int32_t)strlen(pr->topic);
    s->topic.topic_id = pr->topic_id;
    int32_t m = 0;
    for (int32_t i = 0; i < s->n; i++) {
        part *p = &pr->parts[s->idx[i]];
        if (p->done)
            continue;
        kp_FetchRequest_FetchPartition *fp = &s->fparts[m++];
        kp_FetchRequest_FetchPartition_init(fp);
        fp->partition = p->partition;
        fp->current_leader_epoch = p->leader_epoch;
        fp->fetch_offset = p->offset;
        fp->partition_max_bytes = pr->fetch_size;
    }
    s->topic.partitions.items = s->fparts;
    s->topic.partitions.count = m;
    f->topics.items = &s->topic;
    f->topics.count = 1;
    return m;
}

static void fetch_done(knw_client *client, knw_resp *resp, void *opaque);

/* Sends the stream's next request if it has work. Lock held on entry and
 * exit; knw_send never calls fetch_done inline. */
static void stream_send(stream *s) {
    probe *pr = s->pr;
    if (pr->stop || stream_fill(s) == 0)
        return;
    int rc = knw_send(pr->client, s->node, KP_API_FETCH, 4, pr->have_id ? -1 : 12, &s->req,
                      30000 + pr->max_wait_ms, fetch_done, s);
    if (rc != 0) {
        pr->err = rc;
        snprintf(pr->errstr, sizeof pr->errstr, "Fetch to broker %d not sent: %s", s->node, kn_err_name(rc));
        pr->stop = true;
        return;
    }
    s->inflight = true;
    pr->inflight++;
}

/* Counts the records of one partition's record bytes from batch headers
 * and moves the partition's offset past the last whole batch. */
static void count_batches(probe *pr, part *p, const uint8_t *buf, int32_t len) {
    int32_t pos = 0;
    while (len - pos >= BATCH_HEADER_LEN) {
        const uint8_t *b = buf + pos;
        int32_t size = 12 + be32(b + BATCH_LENGTH_OFF);
        if (size < BATCH_HEADER_LEN || size > len - pos)
            break; /* a partial batch at the end of the response */
        int64_t base = be64(b);
        int64_t last = base + be32(b + BATCH_LAST_DELTA_OFF);
        int attrs = (b[BATCH_ATTRS_OFF] << 8) | b[BATCH_ATTRS_OFF + 1];
        if (last >= p->offset) {
            if (!(attrs & BATCH_CONTROL_BIT)) {
                int64_t n = be32(b + BATCH_COUNT_OFF);
                /* A batch that began before our offset: skip the records
                 * already counted (offsets are dense in this topic). */
                if (base < p->offset)
                    n -= p->offset - base;
                pr->records += n > 0 ? n : 0;
            }
            p->offset = last + 1;
        }
        pr->batch_bytes += size;
        pos += size;
    }
}

static part *find_part(probe *pr, int32_t partition) {
    if (partition >= 0 && partition < pr->part_count && pr->parts[partition].partition == partition)
        return &pr->parts[partition];
    for (int32_t i = 0; i < pr->part_count; i++)
        if (pr->parts[i].partition == partition)
            return &pr->parts[i];
    return NULL;
}

/* Network thread: account the response, then send this stream's next. */
static void fetch_done(knw_client *client, knw_resp *resp, void *opaque) {
    stream *s = opaque;
    probe *pr = s->pr;
    (void)client;
    pthread_mutex_lock(&pr->lock);
    s->inflight = false;
    pr->inflight--;
    pr->fetches++;
    const kp_FetchResponse *r = resp->body;
    if (resp->err || !r) {
        if (!pr->stop) {
            pr->err = resp->err ? resp->err : KN_ERR__PROTOCOL;
            snprintf(pr->errstr, sizeof pr->errstr, "Fetch from broker %d: %s: %s", s->node,
                     kn_err_name(pr->err), resp->errstr);
        }
        pr->stop = true;
    } else if (r->error_code) {
        pr->err = KN_ERR__PROTOCOL;
        snprintf(pr->errstr, sizeof pr->errstr, "Fetch from broker %d: error %s", s->node,
                 kn_err_name(r->error_code));
        pr->stop = true;
    } else {
        int64_t before = pr->records;
        for (int32_t t = 0; t < r->responses.count && !pr->stop; t++) {
            const kp_FetchResponse_FetchableTopicResponse *tr = &r->responses.items[t];
            for (int32_t i = 0; i < tr->partitions.count; i++) {
                const kp_FetchResponse_PartitionData *pd = &tr->partitions.items[i];
                part *p = find_part(pr, pd->partition_index);
                if (!p)
                    continue;
                if (pd->error_code) {
                    pr->err = KN_ERR__PROTOCOL;
                    snprintf(pr->errstr, sizeof pr->errstr, "Fetch %s [%d] at offset %lld from broker %d: %s",
                             pr->topic, p->partition, (long long)p->offset, s->node,
                             kn_err_name(pd->error_code));
                    pr->stop = true;
                    break;
                }
                if (pd->records.len > 0)
                    count_batches(pr, p, (const uint8_t *)pd->records.ptr, pd->records.len);
                if (p->offset >= pd->high_watermark)
                    p->done = true;
            }
        }
        if (pr->records > before)
            pr->last_progress_ms = knw_now_ms();
        if (pr->records >= pr->target)
            pr->stop = true;
        bool all_done = true;
        for (int32_t i = 0; i < pr->part_count; i++)
            all_done = all_done && pr->parts[i].done;
        if (all_done && !pr->stop) {
            pr->err = KN_ERR__STATE;
            snprintf(pr->errstr, sizeof pr->errstr, "topic %s holds only %lld records (asked for %lld)",
                     pr->topic, (long long)pr->records, (long long)pr->target);
            pr->stop = true;
        }
        stream_send(s);
    }
    knw_resp_free(resp);
    pthread_cond_broadcast(&pr->cond);
    pthread_mutex_unlock(&pr->lock);
}

static void usage(void) {
    fprintf(stderr, "usage: kn_fetch_probe --bootstrap-server HOSTS --topic T --num-records N\n"
                    "       [--max-in-flight K (per leader; default 1)] [--passes P (default 5)]\n"
                    "       [--fetch-size BYTES]\n"
                    "       [--timeout MS (no progress)] [--command-property k=v]...\n");
    exit(2);
}

/* Waits for metadata naming every partition's leader; fills pr->parts. */
static int load_partitions(probe *pr, int timeout_ms) {
    knw_metadata_add_topics(pr->client, &pr->topic, 1);
    int64_t deadline = knw_now_ms() + timeout_ms;
    knw_metadata *md = knw_metadata_get(pr->client);
    for (;;) {
        const knw_topic *t = md ? knw_metadata_topic(md, pr->topic) : NULL;
        bool led = t && t->error == 0 && t->partition_count > 0;
        for (int32_t i = 0; led && i < t->partition_count; i++)
            led = t->partitions[i].leader >= 0;
        if (led) {
            pr->part_count = t->partition_count;
            pr->parts = calloc((size_t)t->partition_count, sizeof *pr->parts);
            if (!pr->parts) {
                knw_metadata_release(md);
                return KN_ERR__NOMEM;
            }
            for (int32_t i = 0; i < t->partition_count; i++) {
                pr->parts[i].partition = t->partitions[i].partition;
                pr->parts[i].leader = t->partitions[i].leader;
                pr->parts[i].leader_epoch = t->partitions[i].leader_epoch;
            }
            static const kn_uuid zero;
            pr->topic_id = t->topic_id;
            pr->have_id = memcmp(&t->topic_id, &zero, sizeof zero) != 0;
            knw_metadata_release(md);
            return 0;
        }
        if (md)
            knw_metadata_release(md);
        int64_t left = deadline - knw_now_ms();
        if (left <= 0)
            return KN_ERR__UNKNOWN_TOPIC;
        int err = 0;
        md = knw_metadata_wait(pr->client, false, 0, (int)left, &err);
        if (!md && err != KN_ERR__TIMED_OUT)
            return err ? err : KN_ERR__UNKNOWN_TOPIC;
    }
}

/* Splits each leader's partitions over up to max_inflight streams. */
static int make_streams(probe *pr, int max_inflight) {
    pr->streams = calloc((size_t)pr->part_count, sizeof *pr->streams);
    if (!pr->streams)
        return KN_ERR__NOMEM;
    bool *taken = calloc((size_t)pr->part_count, sizeof *taken);
    if (!taken)
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < pr->part_count; i++) {
        if (taken[i])
            continue;
        int32_t leader = pr->parts[i].leader, on_leader = 0;
        for (int32_t j = i; j < pr->part_count; j++)
            on_leader += pr->parts[j].leader == leader;
        int32_t k = on_leader < max_inflight ? on_leader : max_inflight;
        stream *first = &pr->streams[pr->stream_count];
        for (int32_t j = 0; j < k; j++) {
            stream *s = &first[j];
            s->pr = pr;
            s->node = leader;
            s->idx = calloc((size_t)on_leader, sizeof *s->idx);
            s->fparts = calloc((size_t)on_leader, sizeof *s->fparts);
            if (!s->idx || !s->fparts) {
                free(taken);
                return KN_ERR__NOMEM;
            }
        }
        pr->stream_count += k;
        int32_t rr = 0;
        for (int32_t j = i; j < pr->part_count; j++) {
            if (pr->parts[j].leader != leader)
                continue;
            stream *s = &first[rr++ % k];
            s->idx[s->n++] = j;
            taken[j] = true;
        }
    }
    free(taken);
    return 0;
}

static void free_streams(probe *pr) {
    for (int32_t i = 0; i < pr->stream_count; i++) {
        free(pr->streams[i].idx);
        free(pr->streams[i].fparts);
    }
    free(pr->streams);
    pr->streams = NULL;
    pr->stream_count = 0;
}

typedef struct pass {
    int max_inflight;
    int32_t streams;
    int64_t records, bytes, fetches, elapsed_us;
    int err;
} pass;

/* Reads the topic from offset 0 with up to max_inflight request streams
 * per leader, then waits (bounded) for the requests still in flight so
 * the next pass starts clean. Returns 0 or an error (pr->errstr). */
static int run_pass(probe *pr, int max_inflight, int timeout_ms, pass *out) {
    for (int32_t i = 0; i < pr->part_count; i++) {
        pr->parts[i].offset = 0;
        pr->parts[i].done = false;
    }
    pr->records = pr->batch_bytes = pr->fetches = 0;
    pr->stop = false;
    pr->err = 0;
    pr->errstr[0] = '\0';
    int rc = make_streams(pr, max_inflight);
    if (rc != 0) {
        free_streams(pr);
        snprintf(pr->errstr, sizeof pr->errstr, "out of memory");
        return rc;
    }
    int64_t start_us = knw_now_us();
    pthread_mutex_lock(&pr->lock);
    pr->last_progress_ms = knw_now_ms();
    for (int32_t i = 0; i < pr->stream_count; i++)
        stream_send(&pr->streams[i]);
    int64_t stop_ms = 0;
    for (;;) {
        int64_t now = knw_now_ms();
        if (!pr->stop && now - pr->last_progress_ms > timeout_ms) {
            pr->err = KN_ERR__TIMED_OUT;
            snprintf(pr->errstr, sizeof pr->errstr, "no records for %d ms (%lld of %lld read)", timeout_ms,
                     (long long)pr->records, (long long)pr->target);
            pr->stop = true;
        }
        if (pr->stop && !stop_ms) {
            /* The figures at the stop: answers still due are not counted. */
            stop_ms = now;
            out->elapsed_us = knw_now_us() - start_us;
            out->records = pr->records;
            out->bytes = pr->batch_bytes;
            out->fetches = pr->fetches;
        }
        /* Bounded: responses come within fetch.max.wait.ms; a request
         * that never answers fails at its own timeout (30 s + wait). */
        if (pr->stop && (pr->inflight == 0 || now - stop_ms > 40000))
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&pr->cond, &pr->lock, &ts);
    }
    out->max_inflight = max_inflight;
    out->streams = pr->stream_count;
    out->err = pr->err;
    int inflight = pr->inflight;
    if (inflight && !out->err) {
        out->err = KN_ERR__TIMED_OUT;
        snprintf(pr->errstr, sizeof pr->errstr, "%d Fetch requests unanswered 40 s after the pass", inflight);
    }
    pthread_mutex_unlock(&pr->lock);
    if (inflight == 0)
        free_streams(pr); /* else leave them to the callbacks still due */
    return out->err;
}

static void print_rate(const char *label, const pass *ps) {
    double secs = (double)ps->elapsed_us / 1e6;
    if (secs <= 0)
        secs = 1e-6;
    printf("%s: %lld records, %.1f records/sec, %.2f MiB/sec (record batches), %lld fetches, %.3f s\n", label,
           (long long)ps->records, (double)ps->records / secs, (double)ps->bytes / (1024.0 * 1024.0) / secs,
           (long long)ps->fetches, secs);
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL;
    probe pr;
    memset(&pr, 0, sizeof pr);
    pr.target = -1;
    pr.fetch_size = 1048576; /* max.partition.fetch.bytes default */
    pr.max_wait_ms = 500;    /* fetch.max.wait.ms default */
    const char *inflight_list = "1";
    int npasses = 5;
    int timeout_ms = 10000;
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    if (!conf) {
        fprintf(stderr, "kn_fetch_probe: out of memory\n");
        return 1;
    }
    if (argc % 2 == 0)
        usage(); /* every option takes one value */
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--bootstrap-server"))
            bootstrap = v;
        else if (!strcmp(a, "--topic"))
            pr.topic = v;
        else if (!strcmp(a, "--num-records"))
            pr.target = strtoll(v, NULL, 10);
        else if (!strcmp(a, "--max-in-flight"))
            inflight_list = v;
        else if (!strcmp(a, "--passes"))
            npasses = atoi(v);
        else if (!strcmp(a, "--fetch-size"))
            pr.fetch_size = atoi(v);
        else if (!strcmp(a, "--timeout"))
            timeout_ms = atoi(v);
        else if (!strcmp(a, "--command-property")) {
            /* Client settings (e.g. receive.buffer.bytes), checked by the
             * config module like any client's. */
            char kv[1024];
            snprintf(kv, sizeof kv, "%s", v);
            char *eq = strchr(kv, '=');
            if (!eq)
                usage();
            *eq = '\0';
            if (kn_conf_set(conf, kv, eq + 1, es, sizeof es) != KN_OK) {
                fprintf(stderr, "kn_fetch_probe: %s\n", es);
                return 2;
            }
        } else
            usage();
    }
    char *end;
    long inflight = strtol(inflight_list, &end, 10);
    if (end == inflight_list || *end || inflight < 1 || inflight > 1000)
        usage();
    if (!bootstrap || !pr.topic || pr.target <= 0 || npasses < 1 || npasses > 99 || pr.fetch_size < 1)
        usage();

    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "client.id", "kn-fetch-probe", es, sizeof es) != KN_OK) {
        fprintf(stderr, "kn_fetch_probe: %s\n", es);
        kn_conf_destroy(conf);
        return 1;
    }
    int64_t rcvbuf = kn_conf_get_int(conf, "receive.buffer.bytes");
    pr.client = knw_client_new(conf, "consumer", es, sizeof es);
    kn_conf_destroy(conf);
    if (!pr.client) {
        fprintf(stderr, "kn_fetch_probe: %s\n", es);
        return 1;
    }
    pthread_mutex_init(&pr.lock, NULL);
    pthread_cond_init(&pr.cond, NULL);
    int rc = load_partitions(&pr, 30000);
    if (rc != 0) {
        fprintf(stderr, "kn_fetch_probe: partitions of %s: %s\n", pr.topic, kn_err_name(rc));
        knw_client_destroy(pr.client);
        free(pr.parts);
        return 1;
    }
    printf("probe settings: max.in.flight per leader %ld, %d passes (the median counts), "
           "%d partitions, max.partition.fetch.bytes %d, fetch.max.bytes 52428800, "
           "fetch.max.wait.ms %d, fetch.min.bytes 1, sessionless full fetches, "
           "receive.buffer.bytes %lld\n",
           inflight, npasses, pr.part_count, pr.fetch_size, pr.max_wait_ms, (long long)rcvbuf);
    pass passes[99];
    int done = 0, err = 0;
    for (int i = 0; i < npasses && !err; i++) {
        pass ps = {0};
        err = run_pass(&pr, (int)inflight, timeout_ms, &ps);
        char label[64];
        snprintf(label, sizeof label, "probe pass: max.in.flight %d (%d streams)", ps.max_inflight,
                 (int)ps.streams);
        print_rate(label, &ps);
        if (err)
            fprintf(stderr, "kn_fetch_probe: %s\n", pr.errstr);
        else
            passes[done++] = ps;
    }
    /* The median pass by rate (insertion sort: at most 99). */
    for (int i = 1; i < done; i++) {
        pass v = passes[i];
        int j = i - 1;
        for (; j >= 0 && passes[j].records * v.elapsed_us > v.records * passes[j].elapsed_us; j--)
            passes[j + 1] = passes[j];
        passes[j + 1] = v;
    }
    /* Fails what is still in flight; fetch_done sees stop and only frees. */
    knw_client_destroy(pr.client);
    free_streams(&pr);
    if (done && !err)
        print_rate("probe", &passes[done / 2]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MB, CPU %.2f s user + %.2f s system\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    free(pr.parts);
    pthread_cond_destroy(&pr.cond);
    pthread_mutex_destroy(&pr.lock);
    return err || !done ? 1 : 0;
}

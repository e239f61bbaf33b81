/*
 * kn_fetch_ceiling.c: the fetch-and-discard ceiling for the consumer
 * benchmark. It sends the Fetch requests a consumer would (every
 * partition of the topic, max.partition.fetch.bytes each, one request
 * in flight per broker, fetch.max.bytes per response), advances each
 * partition's fetch offset from the batch headers, and throws the data
 * away: no record is decoded, no buffer kept. What it reaches is what
 * the broker and the connection deliver with one fetch in flight, the
 * bound kn_consumer_perf is measured against.
 *
 *   kn_fetch_ceiling --bootstrap-server HOSTS --topic T --num-records N
 *       [--fetch-size BYTES] [--socket-buffer-size BYTES]
 *
 * Defaults as ConsumerPerformance's (1 MiB per partition, a 2 MiB
 * receive buffer). Reads from each partition's offset 0, so point it at
 * a topic filled from scratch (as the perf tools do). Leaders are
 * fetched from one after another, so on several brokers the number is
 * a lower bound. Timed like kn_consumer_perf: from after the client is
 * created (metadata, connections and the first fetch included). Prints
 * one CSV line: ms, records, MB, nMsg.sec,
 * MB.sec, fetches, avg fetch ms.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "kafka_native.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_fetch.h"
#include "proto/record_batch.h"
#include "reader.h"
#include "wire/wire.h"

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(void) {
    fprintf(stderr, "usage: kn_fetch_ceiling --bootstrap-server HOSTS --topic T --num-records N\n"
                    "       [--fetch-size BYTES] [--socket-buffer-size BYTES]\n");
    exit(1);
}

/* Walks the whole v2 batches of one partition's records: adds the
 * records at or above *offset to *count and moves *offset past the
 * last whole batch. */
static void walk(const uint8_t *p, size_t len, int64_t *offset, int64_t *count) {
    size_t off = 0;
    while (len - off >= KN_RB_HEADER_SIZE) {
        kn_rd r;
        kn_rd_init(&r, p + off, len - off);
        int64_t base = kn_rd_i64(&r);
        int32_t blen = kn_rd_i32(&r);
        kn_rd_skip(&r, 4);
        int8_t magic = kn_rd_i8(&r);
        kn_rd_skip(&r, 6);
        int32_t last_delta = kn_rd_i32(&r);
        if (magic != 2 || blen < KN_RB_HEADER_SIZE - KN_RB_LOG_OVERHEAD ||
            (size_t)blen > len - off - KN_RB_LOG_OVERHEAD)
            break;
        int64_t last = base + last_delta;
        if (last >= *offset) {
            /* exact without compaction, as on a perf-tool topic */
            *count += last - (base > *offset ? base : *offset) + 1;
            *offset = last + 1;
        }
        off += KN_RB_LOG_OVERHEAD + (size_t)blen;
    }
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL;
    int64_t num = -1;
    const char *fetch_size = "1048576", *socket_buffer = "2097152";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--bootstrap-server") == 0)
            bootstrap = argv[i + 1];
        else if (strcmp(argv[i], "--topic") == 0)
            topic = argv[i + 1];
        else if (strcmp(argv[i], "--num-records") == 0)
            num = strtoll(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--fetch-size") == 0)
            fetch_size = argv[i + 1];
        else if (strcmp(argv[i], "--socket-buffer-size") == 0)
            socket_buffer = argv[i + 1];
        else
            usage();
    }
    if (!bootstrap || !topic || num < 0 || (argc - 1) % 2)
        usage();
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "receive.buffer.bytes", socket_buffer, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "max.partition.fetch.bytes", fetch_size, es, sizeof es) != KN_OK ||
        kn_conf_finalize(conf, es, sizeof es) != KN_OK) {
        fprintf(stderr, "kn_fetch_ceiling: %s\n", es);
        return 1;
    }
    int32_t part_bytes = (int32_t)kn_conf_get_int(conf, "max.partition.fetch.bytes");
    int32_t max_bytes = (int32_t)kn_conf_get_int(conf, "fetch.max.bytes");
    knw_client *client = knw_client_new(conf, "consumer", es, sizeof es);
    kn_conf_destroy(conf);
    if (!client) {
        fprintf(stderr, "kn_fetch_ceiling: %s\n", es);
        return 1;
    }
    /* The clock starts where kn_consumer_perf's does: after the client
     * exists, before the topic's metadata is looked up. */
    int64_t start = mono_ms();
    knw_metadata_add_topics(client, &topic, 1);
    knw_metadata *md = NULL;
    const knw_topic *t = NULL;
    for (int tries = 0; tries < 20 && !t; tries++) {
        int err;
        if (md)
            knw_metadata_release(md);
        knw_metadata_request_refresh(client, false, "fetch ceiling");
        md = knw_metadata_wait(client, false, 0, 1000, &err);
        t = md ? knw_metadata_topic(md, topic) : NULL;
        if (t && (t->error || t->partition_count == 0))
            t = NULL;
    }
    if (!t) {
        fprintf(stderr, "kn_fetch_ceiling: no metadata for topic %s\n", topic);
        if (md)
            knw_metadata_release(md);
        knw_client_destroy(client);
        return 1;
    }
    int32_t np = t->partition_count;
    int64_t *offsets = kn_calloc((size_t)np, sizeof(*offsets));
    kp_FetchRequest_FetchPartition *fps = kn_calloc((size_t)np, sizeof(*fps));
    if (!offsets || !fps)
        return 1;
    int64_t records = 0, bytes = 0, fetches = 0, latency_us = 0;
    int rc = 0;
    while (records < num && rc == 0) {
        int64_t before = records;
        /* One request per leader, one after another. */
        for (int32_t lead = 0; lead < np && rc == 0; lead++) {
            int32_t node = t->partitions[lead].leader;
            bool first = true;
            for (int32_t q = 0; q < lead; q++)
                first &= t->partitions[q].leader != node;
            if (!first)
                continue;
            kp_FetchRequest f;
            kp_FetchRequest_init(&f);
            f.replica_id = -1;
            f.max_wait_ms = 500;
            f.min_bytes = 1;
            f.max_bytes = max_bytes;
            f.session_epoch = -1; /* sessionless full fetches */
            kp_FetchRequest_FetchTopic ft = {0};
            ft.topic.ptr = topic;
            ft.topic.len = (int32_t)strlen(topic);
            ft.topic_id = t->topic_id;
            ft.partitions.items = fps;
            for (int32_t p = 0; p < np; p++) {
                if (t->partitions[p].leader != node)
                    continue;
                kp_FetchRequest_FetchPartition *fp = &fps[ft.partitions.count++];
                memset(fp, 0, sizeof(*fp));
                fp->partition = p;
                fp->current_leader_epoch = -1;
                fp->fetch_offset = offsets[p];
                fp->last_fetched_epoch = -1;
                fp->log_start_offset = -1;
                fp->partition_max_bytes = part_bytes;
            }
            f.topics.items = &ft;
            f.topics.count = 1;
            knw_resp *resp = knw_call(client, node, KP_API_FETCH, 4, -1, &f, 30000);
            const kp_FetchResponse *r = resp->body;
            if (resp->err || !r || r->error_code) {
                fprintf(stderr, "kn_fetch_ceiling: Fetch failed: %s\n",
                        resp->err ? resp->errstr : kn_err_name(r ? r->error_code : -1));
                rc = 1;
            }
            fetches++;
            latency_us += resp->latency_us;
            bytes += (int64_t)resp->raw_len;
            for (int32_t ti = 0; !rc && ti < r->responses.count; ti++) {
                const kp_FetchResponse_FetchableTopicResponse *tr = &r->responses.items[ti];
                for (int32_t pi = 0; pi < tr->partitions.count; pi++) {
                    const kp_FetchResponse_PartitionData *pd = &tr->partitions.items[pi];
                    int32_t p = pd->partition_index;
                    if (p < 0 || p >= np)
                        continue;
                    if (pd->error_code) {
                        fprintf(stderr, "kn_fetch_ceiling: partition %d at offset %lld: %s\n", (int)p,
                                (long long)offsets[p], kn_err_name(pd->error_code));
                        rc = 1;
                        break;
                    }
                    if (pd->records.len > 0)
                        walk(pd->records.ptr, (size_t)pd->records.len, &offsets[p], &records);
                }
            }
            knw_resp_free(resp);
        }
        if (rc == 0 && records == before && mono_ms() - start > 60000) {
            fprintf(stderr, "kn_fetch_ceiling: only %lld of %lld records after 60 s\n", (long long)records,
                    (long long)num);
            rc = 1;
        }
    }
    int64_t ms = mono_ms() - start;
    if (ms < 1)
        ms = 1;
    printf("time.ms, records, data.fetched.in.MB, nMsg.sec, MB.sec, fetches, avg.fetch.ms\n");
    printf("%lld, %lld, %.4f, %.4f, %.4f, %lld, %.2f\n", (long long)ms, (long long)records, bytes / 1048576.0,
           records * 1000.0 / ms, bytes / 1048576.0 * 1000.0 / ms, (long long)fetches,
           fetches ? latency_us / 1000.0 / fetches : 0.0);
    kn_free(offsets);
    kn_free(fps);
    knw_metadata_release(md);
    knw_client_destroy(client);
    return rc;
}

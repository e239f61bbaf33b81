/*
 * admin_replica_dirs.c: describe_replica_log_dirs (DescribeLogDirs for
 * the replicas' partitions) and alter_replica_log_dirs
 * (AlterReplicaLogDirs), one request to each named broker as Java's
 * KafkaAdminClient sends them, and the result kn_replica_log_dirs. A
 * broker missing from fresh metadata fails its replicas alone with
 * BROKER_NOT_AVAILABLE instead of being waited for.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_alter_replica_log_dirs.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_log_dirs.h"
#include "proto/generated/kp_metadata.h"

/* A replica's values (parallel to the routing items, whose node is the
 * replica's broker). */
typedef struct kna_rdir {
    const char *dir; /* alter: the caller's, during the call only */
    char *current, *future;
    int64_t current_lag, future_lag;
} kna_rdir;

struct kn_replica_log_dirs {
    kna_part *parts;
    kna_rdir *vals;
    size_t count;
};

void kn_replica_log_dirs_destroy(kn_replica_log_dirs *d) {
    if (!d)
        return;
    for (size_t i = 0; d->vals && i < d->count; i++) {
        kn_free(d->vals[i].current);
        kn_free(d->vals[i].future);
    }
    kna_parts_free(d->parts, d->count);
    kn_free(d->vals);
    kn_free(d);
}

static const kna_part *kna_rp(const kn_replica_log_dirs *d, size_t i) {
    return d && i < d->count ? &d->parts[i] : NULL;
}

static const kna_rdir *kna_rd(const kn_replica_log_dirs *d, size_t i) {
    return d && i < d->count ? &d->vals[i] : NULL;
}

size_t kn_replica_log_dirs_count(const kn_replica_log_dirs *d) { return d ? d->count : 0; }
const char *kn_replica_log_dirs_topic(const kn_replica_log_dirs *d, size_t i) {
    const kna_part *x = kna_rp(d, i);
    return x ? x->topic : NULL;
}
int32_t kn_replica_log_dirs_partition(const kn_replica_log_dirs *d, size_t i) {
    const kna_part *x = kna_rp(d, i);
    return x ? x->partition : -1;
}
int32_t kn_replica_log_dirs_broker(const kn_replica_log_dirs *d, size_t i) {
    const kna_part *x = kna_rp(d, i);
    return x ? x->node : -1;
}
int kn_replica_log_dirs_error(const kn_replica_log_dirs *d, size_t i) {
    const kna_part *x = kna_rp(d, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}
const char *kn_replica_log_dirs_error_message(const kn_replica_log_dirs *d, size_t i) {
    return kna_part_message(kna_rp(d, i));
}
const char *kn_replica_log_dirs_current_dir(const kn_replica_log_dirs *d, size_t i) {
    const kna_rdir *x = kna_rd(d, i);
    return x ? x->current : NULL;
}
int64_t kn_replica_log_dirs_current_lag(const kn_replica_log_dirs *d, size_t i) {
    const kna_rdir *x = kna_rd(d, i);
    return x ? x->current_lag : -1;
}
const char *kn_replica_log_dirs_future_dir(const kn_replica_log_dirs *d, size_t i) {
    const kna_rdir *x = kna_rd(d, i);
    return x ? x->future : NULL;
}
int64_t kn_replica_log_dirs_future_lag(const kn_replica_log_dirs *d, size_t i) {
    const kna_rdir *x = kna_rd(d, i);
    return x ? x->future_lag : -1;
}

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Distinct replicas (first wins) as result items, pending, each sent
 * to its broker; NULL on no memory. */
static kn_replica_log_dirs *kna_rdirs_new(const kn_replica_dir *in, size_t n) {
    kn_replica_log_dirs *d = kn_calloc(1, sizeof(*d));
    if (!d || !(d->parts = kn_calloc(n ? n : 1, sizeof(*d->parts))) ||
        !(d->vals = kn_calloc(n ? n : 1, sizeof(*d->vals)))) {
        kn_replica_log_dirs_destroy(d);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < d->count && !seen; j++)
            seen = d->parts[j].partition == in[i].partition && d->parts[j].node == in[i].broker &&
                   !strcmp(d->parts[j].topic, in[i].topic);
        if (seen)
            continue;
        kna_part *x = &d->parts[d->count];
        kna_rdir *v = &d->vals[d->count++];
        x->partition = in[i].partition;
        x->node = in[i].broker;
        x->pending = true;
        v->dir = in[i].dir;
        v->current_lag = v->future_lag = -1;
        if (!(x->topic = kn_strdup(in[i].topic))) {
            kn_replica_log_dirs_destroy(d);
            return NULL;
        }
    }
    return d;
}

/* Groups d's pending replicas on broker (and, when dir is not NULL,
 * moving to dir) by topic. 0 or KN_ERR__NOMEM. */
static int kna_rgroup_of(const kn_replica_log_dirs *d, int32_t broker, const char *dir, kna_topic_groups *g) {
    bool *sel = kn_calloc(d->count ? d->count : 1, sizeof(*sel));
    if (!sel)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < d->count; i++)
        sel[i] = d->parts[i].node == broker && d->parts[i].pending && (!dir || !strcmp(d->vals[i].dir, dir));
    int err = kna_topic_groups_of(g, d->parts, d->count, sel);
    kn_free(sel);
    return err;
}

/* Fails the replicas of brokers that fresh metadata does not list. */
static int kna_rcheck_brokers(kn_admin *admin, kn_replica_log_dirs *d, int64_t deadline, char *errstr,
                              size_t errstr_size) {
    int err = 0;
    knw_resp *md = kna_metadata(admin, NULL, 0, deadline, &err, errstr, errstr_size);
    if (!md)
        return err;
    const kp_MetadataResponse *m = md->body;
    int rc = 0;
    for (size_t i = 0; i < d->count && !rc; i++) {
        bool known = false;
        for (int32_t k = 0; k < m->brokers.count && !known; k++)
            known = m->brokers.items[k].node_id == d->parts[i].node;
        if (!known) {
            char msg[80];
            snprintf(msg, sizeof(msg), "broker %d is not in the cluster", (int)d->parts[i].node);
            rc = kna_part_end(&d->parts[i], KN_ERR_BROKER_NOT_AVAILABLE, msg);
        }
    }
    knw_resp_free(md);
    return rc;
}

/* Both calls: the distinct replicas of in[], those on brokers fresh
 * metadata does not list failed, then one request per broker (each
 * broker once, in first-appearance order) through per_broker. */
static int kna_rdirs_run(kn_admin *admin, const char *fn, const kn_replica_dir *in, size_t count, int timeout_ms,
                         int (*per_broker)(kn_admin *, kn_replica_log_dirs *, int32_t, int64_t),
                         kn_replica_log_dirs **resultp, char *errstr, size_t errstr_size) {
    *resultp = NULL;
    kn_replica_log_dirs *d = kna_rdirs_new(in, count);
    if (!d) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    int64_t deadline = kna_deadline(admin, timeout_ms);
    int err = d->count ? kna_rcheck_brokers(admin, d, deadline, errstr, errstr_size) : 0;
    for (size_t i = 0; i < d->count && !err; i++) {
        bool first = d->parts[i].pending;
        for (size_t j = 0; j < i && first; j++)
            first = d->parts[j].node != d->parts[i].node;
        if (first)
            err = per_broker(admin, d, d->parts[i].node, deadline);
    }
    for (size_t i = 0; i < d->count; i++)
        d->vals[i].dir = NULL; /* alter: the caller's */
    if (err) {
        if (err == KN_ERR__NOMEM)
            kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        kn_replica_log_dirs_destroy(d);
        return err;
    }
    *resultp = d;
    return KN_OK;
}

/* ---- describe ------------------------------------------------------------------- */

static int kna_rdescribe_broker(kn_admin *admin, kn_replica_log_dirs *d, int32_t broker, int64_t deadline) {
    kna_topic_groups g;
    if (kna_rgroup_of(d, broker, NULL, &g))
        return KN_ERR__NOMEM;
    kp_DescribeLogDirsRequest_DescribableLogDirTopic *tt = kn_calloc(g.n ? g.n : 1, sizeof(*tt));
    if (!tt) {
        kna_topic_groups_free(&g);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < g.n; k++) {
        kp_DescribeLogDirsRequest_DescribableLogDirTopic_init(&tt[k]);
        tt[k].topic = kna_cstr(g.topics[k]);
        tt[k].partitions = (kp_int32_array){g.parts[k], g.pcount[k]};
    }
    kp_DescribeLogDirsRequest req;
    kp_DescribeLogDirsRequest_init(&req);
    req.topics.items = tt;
    req.topics.count = (int32_t)g.n;
    int err = 0;
    char why[256] = "";
    knw_resp *resp = kna_call(admin, broker, KP_API_DESCRIBE_LOG_DIRS, -1, -1, &req, deadline,
                              "DescribeLogDirs", &err, why, sizeof why);
    kn_free(tt);
    kna_topic_groups_free(&g);
    int rc = 0;
    const kp_DescribeLogDirsResponse *body = resp ? resp->body : NULL;
    int whole = !resp ? err : body->error_code;
    for (size_t i = 0; i < d->count && !rc; i++) {
        kna_part *x = &d->parts[i];
        kna_rdir *v = &d->vals[i];
        if (x->node != broker || !x->pending)
            continue;
        if (whole) {
            rc = kna_part_end(x, whole, resp ? NULL : why);
            continue;
        }
        rc = kna_part_end(x, 0, NULL); /* answered; the dirs found follow */
        for (int32_t r = 0; r < body->results.count && !rc; r++) {
            const kp_DescribeLogDirsResponse_DescribeLogDirsResult *dir = &body->results.items[r];
            if (dir->error_code)
                continue; /* an offline dir holds nothing it can tell */
            for (int32_t t = 0; t < dir->topics.count && !rc; t++) {
                if (!kna_slice_is(dir->topics.items[t].name, x->topic))
                    continue;
                for (int32_t p = 0; p < dir->topics.items[t].partitions.count; p++) {
                    const kp_DescribeLogDirsResponse_DescribeLogDirsPartition *pp =
                        &dir->topics.items[t].partitions.items[p];
                    if (pp->partition_index != x->partition)
                        continue;
                    bool ok = true;
                    char **slot = pp->is_future_key ? &v->future : &v->current;
                    kn_free(*slot);
                    *slot = kna_strdup_str(dir->log_dir, &ok);
                    *(pp->is_future_key ? &v->future_lag : &v->current_lag) = pp->offset_lag;
                    if (!ok)
                        rc = KN_ERR__NOMEM;
                }
            }
        }
    }
    knw_resp_free(resp);
    return rc;
}

int kn_admin_describe_replica_log_dirs(kn_admin *admin, const kn_replica_dir *replicas, size_t count,
                                       int timeout_ms, kn_replica_log_dirs **dirsp, char *errstr,
                                       size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_replica_log_dirs";
    if (!admin || !dirsp || (count && !replicas)) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++)
        if (!replicas[i].topic || !replicas[i].topic[0] || replicas[i].partition < 0 ||
            replicas[i].broker < 0) {
            kn_errstr_set(errstr, errstr_size, "%s: replica %zu needs a topic, a partition and a broker", fn,
                          i);
            return KN_ERR__INVALID_ARG;
        }
    return kna_rdirs_run(admin, fn, replicas, count, timeout_ms, kna_rdescribe_broker, dirsp, errstr, errstr_size);
}

/* ---- alter ------------------------------------------------------------------------ */

static int kna_ralter_broker(kn_admin *admin, kn_replica_log_dirs *d, int32_t broker, int64_t deadline) {
    /* one AlterReplicaLogDir per distinct target dir */
    size_t cap = d->count ? d->count : 1, nd = 0;
    kp_AlterReplicaLogDirsRequest_AlterReplicaLogDir *dirs = kn_calloc(cap, sizeof(*dirs));
    kna_topic_groups *groups = kn_calloc(cap, sizeof(*groups));
    kp_AlterReplicaLogDirsRequest_AlterReplicaLogDirTopic **tts = kn_calloc(cap, sizeof(*tts));
    int rc = KN_ERR__NOMEM;
    if (!dirs || !groups || !tts)
        goto done;
    for (size_t i = 0; i < d->count; i++) {
        const kna_part *x = &d->parts[i];
        const char *dir = d->vals[i].dir;
        if (x->node != broker || !x->pending)
            continue;
        bool seen = false;
        for (size_t k = 0; k < nd && !seen; k++)
            seen = !strcmp(dirs[k].path.ptr, dir);
        if (seen)
            continue;
        if (kna_rgroup_of(d, broker, dir, &groups[nd]) ||
            !(tts[nd] = kn_calloc(groups[nd].n ? groups[nd].n : 1, sizeof(*tts[nd]))))
            goto done;
        kp_AlterReplicaLogDirsRequest_AlterReplicaLogDir_init(&dirs[nd]);
        dirs[nd].path = kna_cstr(dir);
        for (size_t k = 0; k < groups[nd].n; k++) {
            kp_AlterReplicaLogDirsRequest_AlterReplicaLogDirTopic_init(&tts[nd][k]);
            tts[nd][k].name = kna_cstr(groups[nd].topics[k]);
            tts[nd][k].partitions = (kp_int32_array){groups[nd].parts[k], groups[nd].pcount[k]};
        }
        dirs[nd].topics.items = tts[nd];
        dirs[nd].topics.count = (int32_t)groups[nd].n;
        nd++;
    }
    kp_AlterReplicaLogDirsRequest req;
    kp_AlterReplicaLogDirsRequest_init(&req);
    req.dirs.items = dirs;
    req.dirs.count = (int32_t)nd;
    int err = 0;
    char why[256] = "";
    knw_resp *resp = kna_call(admin, broker, KP_API_ALTER_REPLICA_LOG_DIRS, -1, -1, &req, deadline,
                              "AlterReplicaLogDirs", &err, why, sizeof why);
    rc = 0;
    const kp_AlterReplicaLogDirsResponse *body = resp ? resp->body : NULL;
    for (size_t i = 0; i < d->count && !rc; i++) {
        kna_part *x = &d->parts[i];
        if (x->node != broker || !x->pending)
            continue;
        if (!resp) {
            rc = kna_part_end(x, err, why);
            continue;
        }
        int code = KN_ERR_UNKNOWN_SERVER_ERROR; /* unless the answer names it */
        for (int32_t t = 0; t < body->results.count; t++)
            for (int32_t p = 0; kna_slice_is(body->results.items[t].topic_name, x->topic) &&
                                p < body->results.items[t].partitions.count;
                 p++)
                if (body->results.items[t].partitions.items[p].partition_index == x->partition)
                    code = body->results.items[t].partitions.items[p].error_code;
        rc = kna_part_end(x, code,
                          code == KN_ERR_UNKNOWN_SERVER_ERROR ? "The broker did not answer for this replica" : NULL);
    }
    knw_resp_free(resp);
done:
    for (size_t k = 0; groups && k < cap; k++)
        kna_topic_groups_free(&groups[k]);
    for (size_t k = 0; tts && k < cap; k++)
        kn_free(tts[k]);
    kn_free(groups);
    kn_free(tts);
    kn_free(dirs);
    return rc;
}

int kn_admin_alter_replica_log_dirs(kn_admin *admin, const kn_replica_dir *moves, size_t count,
                                    int timeout_ms, kn_replica_log_dirs **resultsp, char *errstr,
                                    size_t errstr_size) {
    static const char fn[] = "kn_admin_alter_replica_log_dirs";
    if (!admin || !resultsp || (count && !moves)) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++)
        if (!moves[i].topic || !moves[i].topic[0] || moves[i].partition < 0 || moves[i].broker < 0 ||
            !moves[i].dir || !moves[i].dir[0]) {
            kn_errstr_set(errstr, errstr_size, "%s: move %zu needs a topic, a partition, a broker and a dir",
                          fn, i);
            return KN_ERR__INVALID_ARG;
        }
    return kna_rdirs_run(admin, fn, moves, count, timeout_ms, kna_ralter_broker, resultsp, errstr, errstr_size);
}

/*
 * admin_log_dirs.c: describe_log_dirs (DescribeLogDirs to each named
 * broker) and its result object, kn_log_dirs: brokers, their log
 * directories, and the replicas in each, all owned copies.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_log_dirs.h"
#include "proto/generated/kp_metadata.h"

typedef struct kna_replica {
    char *topic;
    int32_t partition;
    int64_t size, offset_lag;
    bool is_future;
} kna_replica;

typedef struct kna_log_dir {
    char *path;
    int err;
    int64_t total_bytes, usable_bytes;
    kna_replica *replicas;
    size_t replica_count;
} kna_log_dir;

typedef struct kna_dir_broker {
    int32_t id;
    int err;
    char *message;
    kna_log_dir *dirs;
    size_t dir_count;
} kna_dir_broker;

struct kn_log_dirs {
    kna_dir_broker *brokers;
    size_t count;
};

void kn_log_dirs_destroy(kn_log_dirs *d) {
    if (!d)
        return;
    for (size_t b = 0; b < d->count; b++) {
        kna_dir_broker *br = &d->brokers[b];
        for (size_t i = 0; i < br->dir_count; i++) {
            for (size_t r = 0; r < br->dirs[i].replica_count; r++)
                kn_free(br->dirs[i].replicas[r].topic);
            kn_free(br->dirs[i].replicas);
            kn_free(br->dirs[i].path);
        }
        kn_free(br->dirs);
        kn_free(br->message);
    }
    kn_free(d->brokers);
    kn_free(d);
}

static const kna_dir_broker *kna_br(const kn_log_dirs *d, size_t b) {
    return d && b < d->count ? &d->brokers[b] : NULL;
}

static const kna_log_dir *kna_dir(const kn_log_dirs *d, size_t b, size_t i) {
    const kna_dir_broker *br = kna_br(d, b);
    return br && i < br->dir_count ? &br->dirs[i] : NULL;
}

static const kna_replica *kna_rep(const kn_log_dirs *d, size_t b, size_t i, size_t r) {
    const kna_log_dir *dir = kna_dir(d, b, i);
    return dir && r < dir->replica_count ? &dir->replicas[r] : NULL;
}

size_t kn_log_dirs_broker_count(const kn_log_dirs *d) { return d ? d->count : 0; }
int32_t kn_log_dirs_broker_id(const kn_log_dirs *d, size_t b) { return kna_br(d, b) ? kna_br(d, b)->id : -1; }
int kn_log_dirs_broker_error(const kn_log_dirs *d, size_t b) {
    return kna_br(d, b) ? kna_br(d, b)->err : KN_ERR__INVALID_ARG;
}
const char *kn_log_dirs_broker_error_message(const kn_log_dirs *d, size_t b) {
    const kna_dir_broker *br = kna_br(d, b);
    if (!br || !br->err)
        return NULL;
    return br->message ? br->message : kn_err_message(br->err);
}
size_t kn_log_dirs_dir_count(const kn_log_dirs *d, size_t b) {
    return kna_br(d, b) ? kna_br(d, b)->dir_count : 0;
}
const char *kn_log_dirs_dir_path(const kn_log_dirs *d, size_t b, size_t i) {
    return kna_dir(d, b, i) ? kna_dir(d, b, i)->path : NULL;
}
int kn_log_dirs_dir_error(const kn_log_dirs *d, size_t b, size_t i) {
    return kna_dir(d, b, i) ? kna_dir(d, b, i)->err : KN_ERR__INVALID_ARG;
}
int64_t kn_log_dirs_dir_total_bytes(const kn_log_dirs *d, size_t b, size_t i) {
    return kna_dir(d, b, i) ? kna_dir(d, b, i)->total_bytes : -1;
}
int64_t kn_log_dirs_dir_usable_bytes(const kn_log_dirs *d, size_t b, size_t i) {
    return kna_dir(d, b, i) ? kna_dir(d, b, i)->usable_bytes : -1;
}
size_t kn_log_dirs_replica_count(const kn_log_dirs *d, size_t b, size_t i) {
    return kna_dir(d, b, i) ? kna_dir(d, b, i)->replica_count : 0;
}
const char *kn_log_dirs_replica_topic(const kn_log_dirs *d, size_t b, size_t i, size_t r) {
    return kna_rep(d, b, i, r) ? kna_rep(d, b, i, r)->topic : NULL;
}
int32_t kn_log_dirs_replica_partition(const kn_log_dirs *d, size_t b, size_t i, size_t r) {
    return kna_rep(d, b, i, r) ? kna_rep(d, b, i, r)->partition : -1;
}
int64_t kn_log_dirs_replica_size(const kn_log_dirs *d, size_t b, size_t i, size_t r) {
    return kna_rep(d, b, i, r) ? kna_rep(d, b, i, r)->size : -1;
}
int64_t kn_log_dirs_replica_offset_lag(const kn_log_dirs *d, size_t b, size_t i, size_t r) {
    return kna_rep(d, b, i, r) ? kna_rep(d, b, i, r)->offset_lag : -1;
}
int kn_log_dirs_replica_is_future(const kn_log_dirs *d, size_t b, size_t i, size_t r) {
    return kna_rep(d, b, i, r) && kna_rep(d, b, i, r)->is_future;
}

/* Copies one broker's answer. */
static int kna_dirs_copy(kna_dir_broker *br, const kp_DescribeLogDirsResponse *body) {
    if (body->error_code) {
        br->err = body->error_code;
        return 0;
    }
    int32_t n = body->results.count;
    if (n > 0 && !(br->dirs = kn_calloc((size_t)n, sizeof(*br->dirs))))
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < n; i++) {
        const kp_DescribeLogDirsResponse_DescribeLogDirsResult *r = &body->results.items[i];
        kna_log_dir *dir = &br->dirs[br->dir_count++];
        bool ok = true;
        dir->path = kna_strdup_str(r->log_dir, &ok);
        dir->err = r->error_code;
        dir->total_bytes = r->total_bytes;
        dir->usable_bytes = r->usable_bytes;
        size_t reps = 0;
        for (int32_t t = 0; t < r->topics.count; t++)
            reps += r->topics.items[t].partitions.count > 0 ? (size_t)r->topics.items[t].partitions.count : 0;
        if (!ok || (reps && !(dir->replicas = kn_calloc(reps, sizeof(*dir->replicas)))))
            return KN_ERR__NOMEM;
        for (int32_t t = 0; t < r->topics.count; t++)
            for (int32_t p = 0; p < r->topics.items[t].partitions.count; p++) {
                const kp_DescribeLogDirsResponse_DescribeLogDirsPartition *rp =
                    &r->topics.items[t].partitions.items[p];
                kna_replica *rep = &dir->replicas[dir->replica_count++];
                rep->topic = kna_strdup_str(r->topics.items[t].name, &ok);
                rep->partition = rp->partition_index;
                rep->size = rp->partition_size;
                rep->offset_lag = rp->offset_lag;
                rep->is_future = rp->is_future_key;
                if (!ok)
                    return KN_ERR__NOMEM;
            }
    }
    return 0;
}

int kn_admin_describe_log_dirs(kn_admin *admin, const int32_t *brokers, size_t count, int timeout_ms,
                               kn_log_dirs **dirsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_log_dirs";
    if (!admin || !dirsp || (count && !brokers)) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *dirsp = NULL;
    int64_t deadline = kna_deadline(admin, timeout_ms);
    kn_log_dirs *d = kn_calloc(1, sizeof(*d));
    if (!d || !(d->brokers = kn_calloc(count ? count : 1, sizeof(*d->brokers)))) {
        kn_free(d);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < count; k++) {
        bool seen = false;
        for (size_t j = 0; j < d->count && !seen; j++)
            seen = d->brokers[j].id == brokers[k];
        if (!seen)
            d->brokers[d->count++].id = brokers[k];
    }
    /* Only brokers of the cluster are asked: an unknown id would hold
     * its request until the deadline. */
    int err = 0, answered = 0, first_err = 0;
    char why[512] = "";
    knw_resp *md = count ? kna_metadata(admin, NULL, 0, deadline, &err, why, sizeof(why)) : NULL;
    if (count && !md) {
        kn_log_dirs_destroy(d);
        kn_errstr_set(errstr, errstr_size, "%s", why);
        return err;
    }
    for (size_t b = 0; b < d->count; b++) {
        kna_dir_broker *br = &d->brokers[b];
        const kp_MetadataResponse *m = md->body;
        bool known = false;
        for (int32_t k = 0; k < m->brokers.count && !known; k++)
            known = m->brokers.items[k].node_id == br->id;
        if (!known) {
            char msg[80];
            snprintf(msg, sizeof(msg), "broker %d is not in the cluster", (int)br->id);
            br->err = KN_ERR_BROKER_NOT_AVAILABLE;
            if (!(br->message = kn_strdup(msg)))
                goto nomem;
            continue;
        }
        kp_DescribeLogDirsRequest req;
        kp_DescribeLogDirsRequest_init(&req);
        req.topics.count = -1; /* null: every topic */
        knw_resp *resp = kna_call(admin, br->id, KP_API_DESCRIBE_LOG_DIRS, -1, -1, &req, deadline,
                                  "DescribeLogDirs", &err, why, sizeof(why));
        if (!resp) {
            first_err = first_err ? first_err : err;
            br->err = err;
            if (!(br->message = kn_strdup(why)))
                goto nomem;
            continue;
        }
        answered++;
        err = kna_dirs_copy(br, resp->body);
        knw_resp_free(resp);
        if (err)
            goto nomem;
    }
    knw_resp_free(md);
    if (!answered && first_err) {
        kn_errstr_set(errstr, errstr_size, "%s", why);
        kn_log_dirs_destroy(d);
        return first_err;
    }
    *dirsp = d;
    return KN_OK;
nomem:
    knw_resp_free(md);
    kn_log_dirs_destroy(d);
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    return KN_ERR__NOMEM;
}

/*
 * admin.h: internals of the admin client (core/admin/), prefix kna_.
 *
 * Files: admin.c (the kn_admin handle, deadlines, the request helper
 * that routes and retries one call), admin_results.c (the public result
 * objects and kn_new_topic: plain owned data), admin_topics.c
 * (create/delete, controller-routed), admin_describe.c (list/describe
 * topics, describe cluster, wait_for_topics: Metadata/DescribeCluster to
 * any broker), admin_configs.c (describe/alter configs, routed per
 * resource) with admin_config_results.c (their result objects),
 * admin_coordinator.c (group-coordinator routing and retries) with
 * admin_groups.c, admin_group_offsets.c and admin_group_results.c (the
 * consumer-group calls; the offsets runners serve share groups too) and
 * admin_group_describe.c (the describe steps every group type shares),
 * admin_leaders.c (the per-partition-leader runner: leaders from
 * metadata, one request per leader, retries until the deadline),
 * admin_offsets.c (list_offsets and delete_records, through it),
 * admin_brokers.c (the runner of listings merged from every broker),
 * admin_partitions.c
 * (create_partitions, controller-routed), admin_log_dirs.c
 * (describe_log_dirs, per broker), admin_cluster_info.c
 * (describe_features, describe_metadata_quorum: any broker),
 * admin_quotas.c, admin_scram.c, admin_acls.c (create/describe/delete
 * ACLs: any broker), admin_txn.c (describe_transactions,
 * fence_producers: transaction coordinator via kna_group_run),
 * admin_txn_list.c (list_transactions: every broker, as list_groups),
 * admin_producers.c (describe_producers, abort_transaction: partition
 * leaders, through admin_leaders.c),
 * admin_tokens.c (delegation tokens: any broker), admin_reassign.c
 * (elect_leaders, alter/list partition reassignments: controller),
 * admin_cluster_ops.c (update_features, unregister_broker,
 * list_config_resources), admin_replica_dirs.c (describe/alter replica
 * log dirs: per broker, with admin_leaders.c's items and grouping), admin_share_groups.c and admin_streams_groups.c
 * (the share- and streams-group calls, through kna_group_run),
 * admin_raft.c (add/remove raft voter: any broker).
 *
 * Threads: every kn_admin_* call runs on the caller's thread and blocks
 * in knw_call(); the network thread only moves bytes. A kn_admin holds
 * no per-call state, so results are independent of the handle.
 */
#ifndef KN_ADMIN_INTERNAL_H
#define KN_ADMIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fork.h"
#include "proto/kp_types.h"
#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "reader.h"
#include "telemetry/telemetry.h"
#include "wire/wire.h"

struct kn_admin {
    kn_fork_stamp fork; /* the creating process (fork.h): another one may not use it */
    knw_client *client;
    knt *telemetry;         /* KIP-714 push; NULL with enable.metrics.push=false (the default) */
    int default_timeout_ms; /* default.api.timeout.ms */
    int retry_backoff_ms;   /* retry.backoff.ms */
    int retry_backoff_max_ms;
};

/* Absolute monotonic deadline for a call given its timeout_ms (< 0: the
 * admin's default.api.timeout.ms). */
int64_t kna_deadline(const kn_admin *admin, int timeout_ms);
/* ms left until deadline, at least 0, at most INT32_MAX. */
int kna_remaining(int64_t deadline_ms);
/* Sleeps the n-th retry's backoff (exponential from retry.backoff.ms up
 * to retry.backoff.max.ms), never past deadline. */
void kna_backoff(const kn_admin *admin, int attempt, int64_t deadline_ms);

/* Sends req to node_id (or KNW_NODE_ANY / KNW_NODE_CONTROLLER) and waits,
 * resending after a backoff while the failure is one a retry can fix
 * (connection lost, no broker reachable yet) and the deadline allows.
 * Returns the response (caller frees with knw_resp_free) with err == 0,
 * or NULL with *errp and errstr set (KN_ERR__TIMED_OUT names what timed
 * out and the last underlying failure). */
knw_resp *kna_call(kn_admin *admin, int32_t node_id, int16_t api_key, int16_t min_version,
                   int16_t max_version, const void *req, int64_t deadline_ms, const char *what, int *errp,
                   char *errstr, size_t errstr_size);

/* kna_call to KNW_NODE_CONTROLLER with the deadline of timeout_ms,
 * resent after a metadata refresh and a backoff while top_error(body)
 * (the response's top-level error code) is NOT_CONTROLLER. Returns the
 * response (caller frees) or NULL with *errp and errstr set. */
knw_resp *kna_controller_call(kn_admin *admin, int16_t api_key, int16_t min_version, const void *req, int timeout_ms,
                              const char *what, int16_t (*top_error)(const void *body), int *errp, char *errstr,
                              size_t errstr_size);

/* A Metadata request for the given names (names NULL: every topic),
 * without auto-creation, to any broker (admin_describe.c). Returns the
 * response (caller frees) or NULL with *errp and why set. */
knw_resp *kna_metadata(kn_admin *admin, const char *const *names, size_t n, int64_t deadline, int *errp,
                       char *why, size_t why_size);

/* Kafka's text form of a topic id (URL-safe base64, no padding, 22
 * chars) into out[23]. Returns false (and "") for the zero uuid, which
 * means "no id". */
bool kna_uuid_str(const kn_uuid *id, char out[23]);

/* Whether the slice s is the C string c (c NULL: whether s is null). */
bool kna_slice_is(kn_str s, const char *c);

/* ---- partition-keyed calls (admin_leaders.c) --------------------------
 * list_offsets, delete_records, describe_producers and abort_transaction
 * route per partition leader through kna_leader_run; the replica-dir
 * calls use the items and the grouping by topic, per broker. */

/* One partition of a call: where it goes and how it ended. The
 * operation's own values live in a parallel array (same index). */
typedef struct kna_part {
    char *topic; /* owned */
    int32_t partition;
    int32_t node; /* where it is sent: the leader (-1 unknown) or a broker */
    bool pending; /* not answered for good yet */
    int err;      /* final (or, while pending, the last) error */
    char *message; /* owned; NULL: kn_err_message(err) */
} kna_part;

/* Items for the distinct partitions of l (the first entry wins), all
 * pending, node -1; *np gets their count and src[k] (when not NULL,
 * room for every entry) the index in l of item k. NULL on no memory.
 * Freed with kna_parts_free. */
kna_part *kna_parts_of(const kn_topic_partition_list *l, size_t *np, size_t *src);
void kna_parts_free(kna_part *parts, size_t n);
/* Ends x with err (0: success) and message (copied, may be NULL).
 * Returns 0 or KN_ERR__NOMEM. */
int kna_part_end(kna_part *x, int err, const char *message);
/* x's error message for the result accessors: NULL when x succeeded. */
const char *kna_part_message(const kna_part *x);

/* The selected items grouped by topic (first-appearance order), as a
 * request wants them: topic k is topics[k] (borrowed from the items),
 * with pcount[k] partitions parts[k][] at item indexes items[k][]. */
typedef struct kna_topic_groups {
    const char **topics;
    int32_t **parts;
    size_t **items;
    int32_t *pcount;
    size_t n;
    int32_t *pool; /* storage of parts[] and items[] */
    size_t *ipool;
} kna_topic_groups;
/* Groups the items with sel[i] set. Returns 0 or KN_ERR__NOMEM (g then
 * empty). Free with kna_topic_groups_free. */
int kna_topic_groups_of(kna_topic_groups *g, const kna_part *parts, size_t n, const bool *sel);
void kna_topic_groups_free(kna_topic_groups *g);

typedef struct kna_leader_call {
    kn_admin *admin;
    int64_t deadline;
    const char *fn; /* the public call's name, for messages */
    kna_part *parts;
    size_t count;
    void *ctx; /* the operation's own (its values, its request options) */
    /* Partition errors that mean "the leader is elsewhere or not ready":
     * the partition goes round again with fresh metadata. */
    bool (*retriable)(int err);
    /* Sends node's pending items (kna_leader_groups) in one request and
     * takes in the answer: sets answered, reports each partition through
     * kna_leader_find and kna_leader_code, or kna_leader_failed when the
     * request failed. A partition left pending goes round again. Returns
     * 0 or KN_ERR__NOMEM. */
    int (*send)(struct kna_leader_call *call, int32_t node, char *why, size_t why_size);
    bool answered; /* some broker answered (metadata included) */
    int call_err;  /* the last request's failure */
} kna_leader_call;

/* Runs the call until no partition is pending or the deadline passes
 * (pending ones then end with _TIMED_OUT). Returns 0, or the whole
 * call's error (nothing answered) with errstr set. */
int kna_leader_run(kna_leader_call *call, char *errstr, size_t errstr_size);
/* node's pending items grouped by topic. 0 or KN_ERR__NOMEM. */
int kna_leader_groups(const kna_leader_call *call, int32_t node, kna_topic_groups *g);
/* node's request failed with err (why: the reason): its pending
 * partitions end with it. Returns 0 or KN_ERR__NOMEM. */
int kna_leader_failed(kna_leader_call *call, int32_t node, int err, const char *why);
/* Index of node's pending item for (topic, partition), or -1. */
ptrdiff_t kna_leader_find(const kna_leader_call *call, int32_t node, kn_str topic, int32_t partition);
/* Item i's answer code: retriable goes round again, another error ends
 * it (message copied, may be NULL), 0 ends it answered (*done: the
 * operation takes the answer's values). Returns 0 or KN_ERR__NOMEM. */
int kna_leader_code(kna_leader_call *call, size_t i, int code, const char *message, bool *done);

/* ---- listings from every broker (admin_brokers.c) --------------------- */

/* What a broker's top-level error code means to a listing call. */
typedef enum kna_broker_answer {
    KNA_BROKER_ABSORB, /* an answer: absorb it */
    KNA_BROKER_EMPTY,  /* an answer with nothing to list */
    KNA_BROKER_RETRY,  /* resend after a backoff (until the deadline) */
    KNA_BROKER_FAILED, /* the broker's failure: the listing's error */
} kna_broker_answer;

typedef struct kna_broker_call {
    kn_admin *admin;
    int64_t deadline;
    const char *fn;     /* the public call's name, for messages */
    const char *reason; /* for the metadata refresh's log line */
    const char *what;   /* API name for messages */
    int16_t api_key, min_version;
    const void *req; /* the same request to every broker */
    int16_t (*top_error)(const void *body);
    kna_broker_answer (*classify)(int code);
    /* Merges one broker's answer; returns 0, KN_ERR__NOMEM, or another
     * error that ends the call (errstr set). */
    int (*absorb)(void *ctx, const void *body, char *errstr, size_t errstr_size);
    void *ctx;
} kna_broker_call;

/* Sends call->req to every broker of fresh metadata (see the file
 * comment); *errp and *messagep (owned, for the result) get the first
 * failed broker's error. Returns 0, or the whole call's error with
 * errstr set (no broker answered, no metadata, no memory, absorb's). */
int kna_each_broker(kna_broker_call *call, int *errp, char **messagep, char *errstr, size_t errstr_size);

/* ---- result objects (admin_results.c) -------------------------------
 * Builders used by the operations; every string is copied in, so the
 * results never point into a response. All return KN_ERR__NOMEM or 0. */

typedef struct kna_topic_result {
    char *name;
    int err;
    char *message; /* NULL when none */
    char topic_id[23];
    bool has_id;
    int32_t partitions;
    int32_t replication_factor;
} kna_topic_result;

struct kn_topic_results {
    kna_topic_result *items;
    size_t count;
};

/* Allocates results with room for n entries (names NULL, err 0,
 * counts -1). Caller owns it: kn_topic_results_destroy. */
kn_topic_results *kna_topic_results_new(size_t n);
/* Sets entry i's name (copied). */
int kna_topic_result_set_name(kn_topic_results *res, size_t i, const char *name, int32_t len);
/* Sets entry i's error and message (copied; msg may be NULL or len < 0). */
int kna_topic_result_set_error(kn_topic_results *res, size_t i, int err, const char *msg, int32_t len);

struct kn_new_topic {
    char *name;
    int32_t partitions;
    int16_t replication_factor;
    struct kna_config {
        char *key;
        char *value; /* NULL: a null value */
    } *configs;
    size_t config_count;
    struct kna_assignment {
        int32_t partition;
        int32_t *broker_ids;
        size_t broker_count;
    } *assignments;
    size_t assignment_count;
};

struct kn_partition_info {
    int32_t id;
    int err;
    int32_t leader;
    int32_t leader_epoch;
    int32_t *replicas;
    size_t replica_count;
    int32_t *isr;
    size_t isr_count;
    int32_t *offline;
    size_t offline_count;
};

typedef struct kna_topic_desc {
    char *name;
    int err;
    char *message;
    char topic_id[23];
    bool has_id;
    bool is_internal;
    kn_partition_info *partitions; /* sorted by id */
    size_t partition_count;
} kna_topic_desc;

struct kn_topic_descriptions {
    kna_topic_desc *items;
    size_t count;
};

typedef struct kna_list_entry {
    char *name;
    char topic_id[23];
    bool has_id;
    bool is_internal;
} kna_list_entry;

struct kn_topic_list {
    kna_list_entry *items;
    size_t count;
};

typedef struct kna_broker {
    int32_t id;
    char *host;
    int32_t port;
    char *rack;
} kna_broker;

struct kn_cluster_description {
    char *cluster_id;
    int32_t controller_id;
    kna_broker *brokers; /* sorted by id */
    size_t broker_count;
};

/* ---- configs (admin_config_results.c, admin_configs.c) ------------- */

typedef struct kna_synonym {
    char *name;
    char *value;
    int8_t source;
} kna_synonym;

struct kn_config_entry {
    char *name;
    char *value; /* NULL: null or sensitive */
    int8_t source;
    int8_t type;
    bool is_sensitive;
    bool is_read_only;
    char *documentation;
    kna_synonym *synonyms;
    size_t synonym_count;
};

/* One resource of a config call (describe or alter). */
typedef struct kna_config_res {
    int8_t type;
    char *name;
    int err;
    char *message;
    bool pending;             /* still to be answered */
    int32_t node;             /* where it is sent: a broker id or KNW_NODE_ANY */
    kn_config_entry *entries; /* describe only */
    size_t entry_count;
} kna_config_res;

/* kn_config_descriptions and kn_config_results share this shape. */
typedef struct kna_config_set {
    kna_config_res *items;
    size_t count;
} kna_config_set;

struct kn_config_descriptions {
    kna_config_set set;
};

struct kn_config_results {
    kna_config_set set;
};

/* Frees everything the set's items own (not the set itself). */
void kna_config_set_clear(kna_config_set *set);
/* Index of the resource (type, name) in set, or -1. */
ptrdiff_t kna_config_set_find(const kna_config_set *set, int8_t type, kn_str name);
/* Appends (type, name) unless present; *idxp gets its index. Returns 0
 * or KN_ERR__NOMEM. */
int kna_config_set_add(kna_config_set *set, size_t cap, int8_t type, const char *name, size_t *idxp);
/* Sets item i's error and message (copied; msg may be NULL / len < 0)
 * and marks it answered. */
int kna_config_set_error(kna_config_set *set, size_t i, int err, const char *msg, int32_t len);

/* ---- group-coordinator calls (admin_coordinator.c) -------------------
 * Every group operation runs through kna_group_run: the groups' coordinators are
 * found (kna_group_coordinators, the one routing function: swap it for
 * a shared coordinator cache later), the groups are batched per
 * coordinator (KIP-699) when the API allows, and a group answered
 * NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE is looked up again and
 * COORDINATOR_LOAD_IN_PROGRESS resent, after a backoff, until the call's
 * deadline (kna_group_error_action says which). */

typedef struct kna_group_item {
    const char *group; /* borrowed from the operation's input */
    int32_t node;      /* coordinator, -1 while unknown */
    bool pending;      /* not answered for good yet */
    bool again;        /* the last answer asked for a retry */
    int err;           /* final (or, while pending, the last) error */
    char *message;     /* owned; NULL for none */
    void *out;         /* the operation's per-group result */
} kna_group_item;

/* Room kna_group_run gives a request struct (each op checks its own). */
#define KNA_GROUP_REQ_MAX 512

typedef struct kna_group_call {
    kn_admin *admin;
    int8_t key_type; /* KNW_COORD_GROUP (0, the default) or KNW_COORD_TXN: what `group` names */
    int64_t deadline;
    const char *what; /* API name for messages */
    int16_t api_key, min_version, max_version;
    bool batch; /* several groups in one request */
    kna_group_item *items;
    size_t count;
    void *ctx; /* the operation's own */
    /* Builds a request for the items with sel[i] set into req (storage of
     * the API's request struct), arrays in one allocation *bufp. */
    int (*build)(struct kna_group_call *call, const bool *sel, void *req, void **bufp);
    /* Takes in a response for the selected items, calling
     * kna_group_answer for each group it answers. */
    int (*absorb)(struct kna_group_call *call, const bool *sel, const knw_resp *resp);
} kna_group_call;

typedef enum kna_group_action {
    KNA_GROUP_DONE,     /* final: the error (or success) is the group's */
    KNA_GROUP_RELOOKUP, /* find the coordinator again, then resend */
    KNA_GROUP_RESEND,   /* same coordinator, after a backoff */
} kna_group_action;

kna_group_action kna_group_error_action(int err);

/* Finds the coordinator of each keys[i] of key_type (KNW_COORD_GROUP or
 * KNW_COORD_TXN) through the client's shared coordinator cache (one
 * batched FindCoordinator v4+ for the keys it does not know). nodes[i]
 * gets the node id, or -1 with errs[i] set (a final lookup error such as
 * GROUP_AUTHORIZATION_FAILED). Returns 0, or KN_ERR__TIMED_OUT (the
 * deadline passed with a coordinator still unknown) with errstr set. */
int kna_group_coordinators(kn_admin *admin, int8_t key_type, const char *const *keys, size_t n, int32_t *nodes,
                           int *errs, int64_t deadline, char *errstr, size_t errstr_size);

/* Records the answer for item i: final, or a retry as the error's action
 * says. Returns 0 or KN_ERR__NOMEM. */
int kna_group_answer(kna_group_call *call, size_t i, int err, kn_str message);
/* Index of the selected item for group, or -1. */
ptrdiff_t kna_group_find(const kna_group_call *call, const bool *sel, kn_str group);

/* Runs the call until every item is answered or the deadline passes
 * (pending items then get _TIMED_OUT with their last error's message).
 * Returns 0, or the whole call's error (nothing was answered at all)
 * with errstr set. */
int kna_group_run(kna_group_call *call, char *errstr, size_t errstr_size);
/* Frees the items' messages (not the items, not out). */
void kna_group_items_clear(kna_group_item *items, size_t count);

/* ---- group results (admin_group_results.c) --------------------------- */

typedef struct kna_named_result {
    char *name;
    int err;
    char *message;
} kna_named_result;

struct kn_group_results {
    kna_named_result *items;
    size_t count;
};

typedef struct kna_listed_group {
    char *group_id, *protocol_type, *state, *type; /* state, type may be NULL */
} kna_listed_group;

struct kn_group_list {
    kna_listed_group *items;
    size_t count;
    int err; /* the first failed broker's */
    char *message;
};

typedef struct kna_group_member {
    char *member_id, *instance_id, *client_id, *host;
    int32_t epoch;
    kn_topic_partition_list *assignment; /* never NULL once built */
    kn_topic_partition_list *target;     /* KIP-848 only (streams: active tasks) */
    char *process_id;                    /* streams only */
    kn_topic_partition_list *tasks[6];   /* streams only, by KN_TASKS_* */
    struct kna_streams_member *streams;  /* streams only (admin_streams_results.c) */
} kna_group_member;

/* A key/value pair of a streams topic's configs or a member's tags. */
typedef struct kna_kv {
    char *key, *value;
} kna_kv;

/* Java's StreamsGroupSubtopologyDescription.TopicInfo: an internal
 * topic's partition count, replication factor (0: not enforced / the
 * broker's default) and configs. */
typedef struct kna_topic_info {
    int32_t partitions;
    int16_t replication_factor;
    kna_kv *configs;
    size_t config_count;
} kna_topic_info;

/* A streams group's subtopology: its id and four topic-name lists
 * (KN_SUBTOPOLOGY_*); the two internal kinds (state changelog,
 * repartition source) also have a kna_topic_info per name, in
 * infos[kind - KN_SUBTOPOLOGY_STATE_CHANGELOG]. */
typedef struct kna_subtopology {
    char *id;
    char **topics[4];
    size_t topic_count[4];
    kna_topic_info *infos[2];
} kna_subtopology;

/* What StreamsGroupDescribe says of a member beyond the common fields
 * and tasks (Java's StreamsGroupMemberDescription). */
typedef struct kna_streams_member {
    char *rack;                               /* NULL: none */
    int32_t topology_epoch;
    char *endpoint_host;                      /* NULL: no user endpoint */
    int endpoint_port;
    kna_kv *tags;                             /* client tags, the broker's order */
    size_t tag_count;
    kn_topic_partition_list *task_offsets[2]; /* by KN_TASK_OFFSETS / _END_OFFSETS */
    bool is_classic;
} kna_streams_member;

/* Frees what the streams parts of a member and a subtopology own
 * (admin_streams_results.c); NULL-safe, leaves the structs themselves. */
void kna_streams_member_free(kna_streams_member *sm);
void kna_topic_infos_free(kna_topic_info *infos, size_t count);
/* Copies n key/value pairs (kn_str key, value at the given offsets of
 * each element of stride bytes): 0 or KN_ERR__NOMEM, *out freed by the
 * caller either way with kna_kvs_free. */
int kna_kvs_copy(kna_kv **out, size_t *count, const void *items, int32_t n, size_t stride, size_t key_off,
                 size_t value_off);
void kna_kvs_free(kna_kv *kv, size_t count);

typedef struct kna_group_desc {
    char *group_id;
    int err;
    char *message;
    char *state, *type, *assignor;
    char *protocol_type; /* classic groups only */
    bool is_simple;
    int32_t coordinator, group_epoch, assignment_epoch, authorized_ops;
    kna_group_member *members;
    size_t member_count;
    int32_t topology_epoch; /* streams only, else -1 */
    kna_subtopology *subtopologies;
    size_t subtopology_count;
} kna_group_desc;

struct kn_group_descriptions {
    kna_group_desc *items;
    size_t count;
};

typedef struct kna_group_offsets_entry {
    char *group;
    int err;
    char *message;
    kn_topic_partition_list *parts; /* never NULL once built */
    int64_t *lags;                  /* share groups: one per parts entry; else NULL */
} kna_group_offsets_entry;

struct kn_group_offsets {
    kna_group_offsets_entry *items;
    size_t count;
};

/* Shared by the group calls of every group type (admin_groups.c). */
/* Checks a names array (NULL entries refused, naming fn). */
bool kna_check_names(const char *const *names, size_t n, const char *fn, char *errstr, size_t errstr_size);
/* Items for the distinct names of in[] (borrowed); *np gets their
 * count. NULL on no memory. */
kna_group_item *kna_group_items(const char *const *in, size_t n, size_t *np);
/* The selected items' groups as a string array in one allocation *bufp. */
int kna_selected_names(const kna_group_call *call, const bool *sel, kp_str_array *out, void **bufp);
/* A kn_group_descriptions with one entry per items[i] (ids copied,
 * epochs -1, no authorized operations). NULL on no memory. */
kn_group_descriptions *kna_descriptions_new(const kna_group_item *items, size_t n);
/* Copies one member's common fields into m (zeroed); NOMEM or 0. */
int kna_member_copy(kna_group_member *m, kn_str id, kn_str instance, kn_str client, kn_str host, int32_t epoch);
/* A kn_group_offsets with one entry per items[i] (groups copied, empty
 * lists). NULL on no memory (admin_group_offsets.c). */
kn_group_offsets *kna_offsets_new(const kna_group_item *items, size_t n);

/* ---- the steps every group type's calls share ----------------------- */

/* A describe call's context (call->ctx), whatever the group type:
 * desc->items[i] matches the call's items[i]; classic: DescribeGroups
 * takes a group of any protocol type (describe_classic_groups). */
typedef struct kna_describe_ctx {
    kn_group_descriptions *desc;
    int flags; /* KN_ADMIN_GROUP_* */
    bool classic;
} kna_describe_ctx;

/* Describes the distinct groups of groups[] at their coordinators: call
 * has what, api_key, versions, build and absorb set (the rest is filled
 * here, batched); ctx has flags and classic set and gets desc. *descp
 * gets one description per distinct group, each with its own error.
 * Returns 0, or the whole call's error with errstr set (naming fn)
 * (admin_group_describe.c). */
int kna_describe_groups_run(kn_admin *admin, const char *fn, const char *const *groups, size_t count,
                            int timeout_ms, kna_group_call *call, kna_describe_ctx *ctx,
                            kn_group_descriptions **descp, char *errstr, size_t errstr_size);

/* Defines fn, the kna_group_call build of a KIP-848-style describe
 * request (ConsumerGroupDescribe, ShareGroupDescribe,
 * StreamsGroupDescribe: the same two fields under three generated
 * types Req): the selected groups, and the authorized operations when
 * the call's kna_describe_ctx flags ask for them. */
#define KNA_DESCRIBE_BUILD(fn, Req)                                                                    \
    static int fn(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {                    \
        Req *req = reqv;                                                                               \
        const kna_describe_ctx *ctx = call->ctx;                                                       \
        Req##_init(req);                                                                               \
        req->include_authorized_operations = (ctx->flags & KN_ADMIN_GROUP_AUTHORIZED_OPERATIONS) != 0; \
        return kna_selected_names(call, sel, &req->group_ids, bufp);                                   \
    }

/* One group of a KIP-848-style describe response (ConsumerGroupDescribe,
 * ShareGroupDescribe, StreamsGroupDescribe): the fields they share. */
typedef struct kna_described_group {
    kn_str group_id;
    int16_t error_code;
    kn_str error_message;
    kn_str state;
    const char *type; /* "consumer", "share", "streams" */
    int32_t group_epoch, assignment_epoch, authorized_ops;
    int32_t member_count;
} kna_described_group;

/* Records g's answer for the selected item it names and, when it
 * succeeded, fills that item's description with g's shared fields
 * (coordinator node, epochs, operations, state, type) and room for its
 * members (member_count stays 0: the caller adds them). Returns the
 * description to finish, or NULL (not asked, failed, or no memory:
 * *errp is then KN_ERR__NOMEM, else 0). */
kna_group_desc *kna_describe_start(kna_group_call *call, const bool *sel, int32_t node,
                                   const kna_described_group *g, int *errp);

/* Adds topic's partitions[] to l (topic copied, "" for null);
 * KN_ERR__NOMEM or 0. */
int kna_tplist_add_topic(kn_topic_partition_list *l, kn_str topic, const kp_int32_array *partitions);

/* The offsets of the groups specs[] name (a group given twice: the first
 * spec wins), each asked at its coordinator: call has what, api_key,
 * versions, build and absorb set (the rest is filled here, batched);
 * absorb gets a kna_offsets_query. Returns 0 with *offsetsp set, or an
 * error with errstr set naming fn (admin_group_offsets.c). */
typedef struct kna_offsets_query {
    kn_group_offsets *out;                  /* items[i] matches call items[i] */
    const kn_topic_partition_list **wanted; /* per item; NULL: all */
    bool require_stable;
} kna_offsets_query;
int kna_list_offsets_run(kn_admin *admin, const char *fn, const kn_group_offsets_spec *specs, size_t count,
                         bool require_stable, int timeout_ms, kna_group_call *call, kn_group_offsets **offsetsp,
                         char *errstr, size_t errstr_size);

/* One group's partition offsets changed (alter, delete) in one call:
 * call has what, api_key, versions, build and absorb set; build and
 * absorb get a kna_partitions_ctx whose parts is a copy of input (errors
 * cleared) that becomes *resultp's only entry. refuse_negative: an entry
 * with a negative offset fails alone (_INVALID_ARG) and is not sent.
 * Returns 0, or an error with errstr set naming fn
 * (admin_group_offsets.c). */
typedef struct kna_partitions_ctx {
    kn_topic_partition_list *parts; /* the result: a copy of the input with errors */
    const bool *skip;               /* entries not sent (failed client-side) */
} kna_partitions_ctx;
int kna_partition_offsets_run(kn_admin *admin, const char *fn, const char *group,
                              const kn_topic_partition_list *input, bool refuse_negative, int timeout_ms,
                              kna_group_call *call, kn_group_offsets **resultp, char *errstr, size_t errstr_size);
/* The distinct topics of l's entries not skipped (skip may be NULL), in
 * first-appearance order, into out (room for every entry); how many. */
size_t kna_topics_of(const kn_topic_partition_list *l, const bool *skip, const char **out);

/* How many items sel selects, and in *entriesp the entries of their
 * kna_offsets_query wanted lists: what an offsets-fetch request holds. */
size_t kna_wanted_size(const kna_group_call *call, const bool *sel, size_t *entriesp);
/* The partitions of l's entries for topic into parts; how many. */
int32_t kna_partitions_of(const kn_topic_partition_list *l, const char *topic, int32_t *parts);

/* Distinct non-NULL names of in[0..n) in first-appearance order into
 * out (caller's array of n); returns how many. */
size_t kna_distinct(const char *const *in, size_t n, const char **out);
/* Moves the items' final error and message into (err, message) slots. */
void kna_take_item_error(kna_group_item *it, int *errp, char **messagep);
/* Sets *dst to a copy of the slice (NULL for a null slice); false on no memory. */
bool kna_set_str(char **dst, kn_str s);

/* Copies a (possibly null) slice into a new NUL-terminated string;
 * *okp is cleared on allocation failure. NULL for a null slice. */
char *kna_strdup_str(kn_str s, bool *okp);

#endif

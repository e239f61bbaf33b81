/*
 * kafka_native_admin.h: the public admin client (topics, cluster, configs,
 * consumer, share and streams groups, offsets, ACLs, quotas, transactions,
 * KRaft voters, ...: docs/admin.md lists them against Java's Admin).
 *
 * A kn_admin owns one network client (its own background thread and
 * broker connections). Every operation is synchronous: it blocks the
 * calling thread until the cluster answered for every item or timeout_ms
 * passed (like Java's `all().get()`), then hands back an opaque result
 * object with per-item results, so one bad topic never fails the others.
 *
 * Return convention of every operation: KN_OK when the call itself went
 * through (per-item errors are inside the result, which the caller owns
 * and destroys); otherwise an error for the whole call (KN_ERR__TIMED_OUT,
 * KN_ERR__TRANSPORT, KN_ERR__INVALID_ARG, ...) with errstr filled and no
 * result object. timeout_ms < 0 uses default.api.timeout.ms.
 *
 * Call an admin client from one thread at a time. Result objects are
 * plain data: any thread may read them.
 */
#ifndef KAFKA_NATIVE_ADMIN_H
#define KAFKA_NATIVE_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_native_export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kn_conf kn_conf;
typedef struct kn_admin kn_admin;

/* Creates an admin client from conf (copied: the caller keeps and may
 * destroy its conf right away). Returns NULL with errstr filled when the
 * configuration is invalid or resources are short (the code:
 * kn_last_error()). Broker connections are made lazily, so a dead
 * cluster is reported by the first operation. Owned by the caller:
 * kn_admin_close then kn_admin_destroy. */
KN_API kn_admin *kn_admin_new(const kn_conf *conf, char *errstr, size_t errstr_size);
/* Closes connections and stops the network thread. Operations are
 * synchronous, so none is in flight when the caller closes: timeout_ms
 * (kept for the one lifecycle all clients share; see "Lifecycle" in
 * docs/architecture.md) bounds nothing today. Operations after it fail
 * with KN_ERR__CLOSED; the handle stays valid until kn_admin_destroy.
 * Idempotent; NULL is a no-op. Returns KN_OK (in another process than
 * the creator's it does nothing: see kn_admin_forked). */
KN_API int kn_admin_close(kn_admin *admin, int timeout_ms);
/* Frees the client, closing it first if that was not done. NULL is a
 * no-op. In another process than the creator's (after a fork) it does
 * nothing: the threads are not there (see kn_admin_forked). */
KN_API void kn_admin_destroy(kn_admin *admin);
/* Non-zero when admin was created in another process (this one is a
 * fork() child of it): every operation then fails with KN_ERR__FORKED,
 * and kn_admin_destroy leaves the copy alone (leaked: its threads and
 * the locks they may have held at the fork exist only in the parent).
 * Create clients after forking. */
KN_API int kn_admin_forked(const kn_admin *admin);

/* ---- Topic specifications (input of create_topics) ------------------ */

typedef struct kn_new_topic kn_new_topic;

/* A topic to create. partitions -1 and replication_factor -1 mean the
 * broker's defaults (num.partitions, default.replication.factor).
 * name is copied. Returns NULL on NULL name or out of memory. Caller owns
 * the result (kn_new_topic_destroy). */
KN_API kn_new_topic *kn_new_topic_new(const char *name, int32_t partitions, int16_t replication_factor);
KN_API void kn_new_topic_destroy(kn_new_topic *topic);
/* Adds a topic config (e.g. "cleanup.policy" = "compact"); both copied.
 * value NULL sends a null value. Returns KN_OK, KN_ERR__INVALID_ARG or
 * KN_ERR__NOMEM. */
KN_API int kn_new_topic_set_config(kn_new_topic *topic, const char *key, const char *value);
/* Places partition `partition` on the given brokers (the first one is
 * the preferred leader); ids are copied. With an explicit assignment the
 * topic must be created with partitions -1 and replication_factor -1,
 * which the broker checks. Returns KN_OK, KN_ERR__INVALID_ARG or
 * KN_ERR__NOMEM. */
KN_API int kn_new_topic_set_replica_assignment(kn_new_topic *topic, int32_t partition, const int32_t *broker_ids,
                                               size_t broker_count);

/* ---- Per-topic results of create_topics / delete_topics ------------- */

typedef struct kn_topic_results kn_topic_results;

/* One entry per distinct requested name, in request order. */
KN_API size_t kn_topic_results_count(const kn_topic_results *results);
/* Topic name: valid until the results are destroyed. */
KN_API const char *kn_topic_results_name(const kn_topic_results *results, size_t i);
/* KN_OK or the topic's error (KN_ERR_TOPIC_ALREADY_EXISTS, ...). */
KN_API int kn_topic_results_error(const kn_topic_results *results, size_t i);
/* The broker's message for that error (or a library message), NULL when
 * the topic succeeded. Valid until the results are destroyed. */
KN_API const char *kn_topic_results_error_message(const kn_topic_results *results, size_t i);
/* The topic id as Kafka prints it (22 chars of URL-safe base64), or NULL
 * when the broker did not tell it. */
KN_API const char *kn_topic_results_topic_id(const kn_topic_results *results, size_t i);
/* create_topics only: the partition count and replication factor the
 * topic got (-1 if unknown, e.g. on error). */
KN_API int32_t kn_topic_results_partitions(const kn_topic_results *results, size_t i);
KN_API int32_t kn_topic_results_replication_factor(const kn_topic_results *results, size_t i);
KN_API void kn_topic_results_destroy(kn_topic_results *results);

/* Flags for kn_admin_create_topics(). */
#define KN_ADMIN_VALIDATE_ONLY 0x1 /* check the request, create nothing */

/* Creates topics. The request goes to the controller as the metadata
 * names it (a KRaft broker forwards it), and is retried against a fresh
 * controller on NOT_CONTROLLER until timeout_ms. topics are not taken
 * over: the caller still destroys them. On KN_OK, *resultsp (caller owns)
 * has one entry per distinct name, in request order. As in Java, a name
 * given twice is sent once (the first spec wins) and an empty name fails
 * that entry with INVALID_TOPIC_EXCEPTION without being sent. Creation is
 * not waited for: see kn_admin_wait_for_topics(). */
KN_API int kn_admin_create_topics(kn_admin *admin, kn_new_topic *const *topics, size_t topic_count, int flags,
                                  int timeout_ms, kn_topic_results **resultsp, char *errstr, size_t errstr_size);

/* Deletes topics by name, routed like create. An unknown topic gets
 * UNKNOWN_TOPIC_OR_PARTITION in its own entry. *resultsp as above. */
KN_API int kn_admin_delete_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                                  kn_topic_results **resultsp, char *errstr, size_t errstr_size);

/* ---- list_topics ----------------------------------------------------- */

typedef struct kn_topic_list kn_topic_list;

#define KN_ADMIN_LIST_INTERNAL 0x1 /* include internal topics (__consumer_offsets) */

/* Lists the cluster's topics (sorted by name) from a fresh Metadata
 * request to any broker. *listp is owned by the caller. */
KN_API int kn_admin_list_topics(kn_admin *admin, int flags, int timeout_ms, kn_topic_list **listp, char *errstr,
                                size_t errstr_size);
KN_API size_t kn_topic_list_count(const kn_topic_list *list);
KN_API const char *kn_topic_list_name(const kn_topic_list *list, size_t i);
KN_API const char *kn_topic_list_topic_id(const kn_topic_list *list, size_t i);
KN_API int kn_topic_list_is_internal(const kn_topic_list *list, size_t i);
KN_API void kn_topic_list_destroy(kn_topic_list *list);

/* ---- describe_topics ------------------------------------------------- */

typedef struct kn_topic_descriptions kn_topic_descriptions;
typedef struct kn_partition_info kn_partition_info;

/* Describes topics by name from a fresh Metadata request. One entry per
 * requested name, in request order; an unknown topic has error
 * UNKNOWN_TOPIC_OR_PARTITION and no partitions. *descp: caller owns. */
KN_API int kn_admin_describe_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                                    kn_topic_descriptions **descp, char *errstr, size_t errstr_size);
KN_API size_t kn_topic_descriptions_count(const kn_topic_descriptions *desc);
KN_API const char *kn_topic_descriptions_name(const kn_topic_descriptions *desc, size_t i);
KN_API int kn_topic_descriptions_error(const kn_topic_descriptions *desc, size_t i);
KN_API const char *kn_topic_descriptions_error_message(const kn_topic_descriptions *desc, size_t i);
KN_API const char *kn_topic_descriptions_topic_id(const kn_topic_descriptions *desc, size_t i);
KN_API int kn_topic_descriptions_is_internal(const kn_topic_descriptions *desc, size_t i);
/* Partitions, sorted by partition id. */
KN_API size_t kn_topic_descriptions_partition_count(const kn_topic_descriptions *desc, size_t i);
/* Partition p of topic i; valid until desc is destroyed. NULL if out of range. */
KN_API const kn_partition_info *kn_topic_descriptions_partition(const kn_topic_descriptions *desc, size_t i,
                                                                size_t p);
KN_API void kn_topic_descriptions_destroy(kn_topic_descriptions *desc);

KN_API int32_t kn_partition_info_id(const kn_partition_info *part);
/* Leader broker id, -1 when the partition has no leader. */
KN_API int32_t kn_partition_info_leader(const kn_partition_info *part);
KN_API int32_t kn_partition_info_leader_epoch(const kn_partition_info *part);
/* The partition's own error (e.g. LEADER_NOT_AVAILABLE), KN_OK if none. */
KN_API int kn_partition_info_error(const kn_partition_info *part);
/* Broker id arrays; *countp gets the length. Valid until desc is destroyed. */
KN_API const int32_t *kn_partition_info_replicas(const kn_partition_info *part, size_t *countp);
KN_API const int32_t *kn_partition_info_isr(const kn_partition_info *part, size_t *countp);
KN_API const int32_t *kn_partition_info_offline(const kn_partition_info *part, size_t *countp);

/* ---- describe_cluster ------------------------------------------------ */

typedef struct kn_cluster_description kn_cluster_description;

/* Describes the cluster via DescribeCluster (Metadata on brokers that
 * lack it). *descp: caller owns. */
KN_API int kn_admin_describe_cluster(kn_admin *admin, int timeout_ms, kn_cluster_description **descp, char *errstr,
                                     size_t errstr_size);
/* NULL if the broker did not tell. */
KN_API const char *kn_cluster_description_cluster_id(const kn_cluster_description *desc);
KN_API int32_t kn_cluster_description_controller_id(const kn_cluster_description *desc);
/* Brokers sorted by id. */
KN_API size_t kn_cluster_description_broker_count(const kn_cluster_description *desc);
KN_API int32_t kn_cluster_description_broker_id(const kn_cluster_description *desc, size_t i);
KN_API const char *kn_cluster_description_broker_host(const kn_cluster_description *desc, size_t i);
KN_API int32_t kn_cluster_description_broker_port(const kn_cluster_description *desc, size_t i);
/* NULL when the broker has no rack. */
KN_API const char *kn_cluster_description_broker_rack(const kn_cluster_description *desc, size_t i);
KN_API void kn_cluster_description_destroy(kn_cluster_description *desc);

/* ---- configs: describe_configs, incremental_alter_configs, alter_configs
 *
 * A config resource is (type, name), as Java's ConfigResource. Types use
 * Kafka's wire numbers: */
#define KN_CONFIG_RESOURCE_TOPIC          2
#define KN_CONFIG_RESOURCE_BROKER         4 /* name: a broker id, or "" for the cluster default */
#define KN_CONFIG_RESOURCE_BROKER_LOGGER  8 /* name: a broker id */
#define KN_CONFIG_RESOURCE_CLIENT_METRICS 16
#define KN_CONFIG_RESOURCE_GROUP          32

/* Input only: the library reads it during the call and keeps nothing. */
typedef struct kn_config_resource {
    int8_t type;      /* KN_CONFIG_RESOURCE_* */
    const char *name; /* topic, broker id, group, ... */
} kn_config_resource;

/* Java's ConfigEntry.ConfigSource, by wire number. */
#define KN_CONFIG_SOURCE_UNKNOWN                       0
#define KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG          1
#define KN_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG         2
#define KN_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG 3
#define KN_CONFIG_SOURCE_STATIC_BROKER_CONFIG          4
#define KN_CONFIG_SOURCE_DEFAULT_CONFIG                5
#define KN_CONFIG_SOURCE_DYNAMIC_BROKER_LOGGER_CONFIG  6
#define KN_CONFIG_SOURCE_DYNAMIC_CLIENT_METRICS_CONFIG 7
#define KN_CONFIG_SOURCE_DYNAMIC_GROUP_CONFIG          8

/* Java's enum names: "DYNAMIC_TOPIC_CONFIG", ...; "UNKNOWN" for others.
 * Static strings. */
KN_API const char *kn_config_source_name(int source);
/* Java's ConfigEntry.ConfigType names ("BOOLEAN", "STRING", "INT",
 * "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD", "UNKNOWN"). */
KN_API const char *kn_config_type_name(int type);
/* "topic", "broker", "broker_logger", "client_metrics", "group", or
 * NULL for a number that is no resource type; and back (-1 if unknown). */
KN_API const char *kn_config_resource_type_name(int type);
KN_API int kn_config_resource_type_from_name(const char *name);

typedef struct kn_config_descriptions kn_config_descriptions;
typedef struct kn_config_entry kn_config_entry;

/* Flags for kn_admin_describe_configs() (DescribeConfigsOptions). */
#define KN_ADMIN_CONFIG_SYNONYMS      0x1 /* includeSynonyms */
#define KN_ADMIN_CONFIG_DOCUMENTATION 0x2 /* includeDocumentation */

/* Describes every config of each resource (Java's describeConfigs).
 * Routing as Java: a BROKER resource with a broker id and a
 * BROKER_LOGGER resource go to that broker; the rest in one request to
 * any broker. One entry per distinct resource, in request order; a
 * missing topic gets UNKNOWN_TOPIC_OR_PARTITION in its own entry, a
 * broker name that is no id gets INVALID_REQUEST without a request.
 * resources are only read. *descp: caller owns
 * (kn_config_descriptions_destroy). */
KN_API int kn_admin_describe_configs(kn_admin *admin, const kn_config_resource *resources, size_t count, int flags,
                                     int timeout_ms, kn_config_descriptions **descp, char *errstr,
                                     size_t errstr_size);
KN_API size_t kn_config_descriptions_count(const kn_config_descriptions *desc);
KN_API int kn_config_descriptions_resource_type(const kn_config_descriptions *desc, size_t i);
KN_API const char *kn_config_descriptions_resource_name(const kn_config_descriptions *desc, size_t i);
KN_API int kn_config_descriptions_error(const kn_config_descriptions *desc, size_t i);
/* NULL when the resource succeeded. */
KN_API const char *kn_config_descriptions_error_message(const kn_config_descriptions *desc, size_t i);
/* Entries in the broker's order. Valid until desc is destroyed. */
KN_API size_t kn_config_descriptions_entry_count(const kn_config_descriptions *desc, size_t i);
KN_API const kn_config_entry *kn_config_descriptions_entry(const kn_config_descriptions *desc, size_t i, size_t e);
/* The entry named name, or NULL. */
KN_API const kn_config_entry *kn_config_descriptions_find(const kn_config_descriptions *desc, size_t i,
                                                          const char *name);
KN_API void kn_config_descriptions_destroy(kn_config_descriptions *desc);

KN_API const char *kn_config_entry_name(const kn_config_entry *entry);
/* NULL when the value is null or sensitive (the broker hides it). */
KN_API const char *kn_config_entry_value(const kn_config_entry *entry);
KN_API int kn_config_entry_source(const kn_config_entry *entry); /* KN_CONFIG_SOURCE_* */
KN_API int kn_config_entry_is_sensitive(const kn_config_entry *entry);
KN_API int kn_config_entry_is_read_only(const kn_config_entry *entry);
/* The wire number of the type (0 unless documentation or a v3+ broker
 * told it): kn_config_type_name() names it. */
KN_API int kn_config_entry_type(const kn_config_entry *entry);
/* NULL unless KN_ADMIN_CONFIG_DOCUMENTATION was asked and the broker has some. */
KN_API const char *kn_config_entry_documentation(const kn_config_entry *entry);
/* Synonyms (KN_ADMIN_CONFIG_SYNONYMS), highest precedence first, the
 * entry's own source included, as the broker sends them. */
KN_API size_t kn_config_entry_synonym_count(const kn_config_entry *entry);
KN_API const char *kn_config_entry_synonym_name(const kn_config_entry *entry, size_t s);
KN_API const char *kn_config_entry_synonym_value(const kn_config_entry *entry, size_t s);
KN_API int kn_config_entry_synonym_source(const kn_config_entry *entry, size_t s);

/* Operations of Java's AlterConfigOp.OpType, by wire number. */
#define KN_CONFIG_OP_SET      0
#define KN_CONFIG_OP_DELETE   1 /* back to the default; value ignored */
#define KN_CONFIG_OP_APPEND   2 /* list configs: add value's items */
#define KN_CONFIG_OP_SUBTRACT 3 /* list configs: remove value's items */

/* One change to one resource's config. Input only (read during the call). */
typedef struct kn_config_op {
    int8_t resource_type; /* KN_CONFIG_RESOURCE_* */
    const char *resource_name;
    int8_t op;         /* KN_CONFIG_OP_* (alter_configs: SET only) */
    const char *name;  /* config key */
    const char *value; /* NULL for DELETE */
} kn_config_op;

typedef struct kn_config_results kn_config_results;

/* Java's incrementalAlterConfigs: ops are grouped by resource (first
 * appearance order) and each resource succeeds or fails as a whole, with
 * the broker's error naming the key (INVALID_CONFIG "Unknown topic config
 * name: x", ...). Routed like describe_configs. KN_ADMIN_VALIDATE_ONLY
 * checks without changing anything. *resultsp: caller owns. */
KN_API int kn_admin_incremental_alter_configs(kn_admin *admin, const kn_config_op *ops, size_t op_count, int flags,
                                              int timeout_ms, kn_config_results **resultsp, char *errstr,
                                              size_t errstr_size);
/* Java's (deprecated) alterConfigs: each named resource's dynamic config
 * is REPLACED by the given (name, value) pairs (op must be
 * KN_CONFIG_OP_SET); keys not given go back to their defaults. A
 * resource with no pairs is sent with an empty set by giving one op with
 * name NULL. */
KN_API int kn_admin_alter_configs(kn_admin *admin, const kn_config_op *ops, size_t op_count, int flags,
                                  int timeout_ms, kn_config_results **resultsp, char *errstr, size_t errstr_size);
/* One entry per distinct resource, in first-appearance order. */
KN_API size_t kn_config_results_count(const kn_config_results *results);
KN_API int kn_config_results_resource_type(const kn_config_results *results, size_t i);
KN_API const char *kn_config_results_resource_name(const kn_config_results *results, size_t i);
KN_API int kn_config_results_error(const kn_config_results *results, size_t i);
KN_API const char *kn_config_results_error_message(const kn_config_results *results, size_t i);
KN_API void kn_config_results_destroy(kn_config_results *results);

/* ---- consumer groups --------------------------------------------------
 * Group calls go to each group's coordinator (FindCoordinator), several
 * groups per request where the API allows (KIP-699), and are retried on
 * NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE (after a new lookup) and
 * COORDINATOR_LOAD_IN_PROGRESS until timeout_ms, as Java does. Results
 * are per group (and per partition or member inside a group); a group
 * still unanswered at the deadline gets KN_ERR__TIMED_OUT. Partition
 * lists are the consumer's kn_topic_partition_list. */

typedef struct kn_topic_partition_list kn_topic_partition_list;

/* Per-group outcome of delete_consumer_groups (and per-member outcome of
 * remove_members_from_consumer_group, where name is the member). */
typedef struct kn_group_results kn_group_results;
KN_API size_t kn_group_results_count(const kn_group_results *results);
KN_API const char *kn_group_results_name(const kn_group_results *results, size_t i);
KN_API int kn_group_results_error(const kn_group_results *results, size_t i);
KN_API const char *kn_group_results_error_message(const kn_group_results *results, size_t i);
KN_API void kn_group_results_destroy(kn_group_results *results);

/* Deletes groups (Java's deleteConsumerGroups; DeleteGroups). One entry
 * per distinct group in request order: NON_EMPTY_GROUP for a group with
 * members, GROUP_ID_NOT_FOUND for an unknown one. *resultsp: caller owns. */
KN_API int kn_admin_delete_consumer_groups(kn_admin *admin, const char *const *groups, size_t count, int timeout_ms,
                                           kn_group_results **resultsp, char *errstr, size_t errstr_size);

/* ---- list_groups ---- */

typedef struct kn_group_list kn_group_list;

/* Lists the groups of every broker (ListGroups to each, merged, sorted by
 * group id), as Java's listGroups. types / states filter on the broker
 * (ListGroups v5 / v4): types "consumer", "classic", "share", "streams";
 * states "Stable", "Empty", ... (case-insensitive); none: all. A broker
 * that failed does not fail the call while another answered:
 * kn_group_list_error says so. *listp: caller owns. */
KN_API int kn_admin_list_groups(kn_admin *admin, const char *const *types, size_t type_count,
                                const char *const *states, size_t state_count, int timeout_ms, kn_group_list **listp,
                                char *errstr, size_t errstr_size);
KN_API size_t kn_group_list_count(const kn_group_list *list);
KN_API const char *kn_group_list_group_id(const kn_group_list *list, size_t i);
/* "consumer" for groups of consumers (either protocol), "" for a
 * simple (commit-only) group, "connect", ... */
KN_API const char *kn_group_list_protocol_type(const kn_group_list *list, size_t i);
/* "Stable", "Empty", ...; NULL when the broker did not say. */
KN_API const char *kn_group_list_state(const kn_group_list *list, size_t i);
/* "consumer", "classic", "share", "streams"; NULL when not said. */
KN_API const char *kn_group_list_type(const kn_group_list *list, size_t i);
/* KN_OK, or the first broker's error (the listing then misses that
 * broker's groups, like Java's listGroups().errors()). */
KN_API int kn_group_list_error(const kn_group_list *list);
KN_API const char *kn_group_list_error_message(const kn_group_list *list);
KN_API void kn_group_list_destroy(kn_group_list *list);

/* ---- describe_consumer_groups ---- */

typedef struct kn_group_descriptions kn_group_descriptions;

#define KN_ADMIN_GROUP_AUTHORIZED_OPERATIONS 0x1 /* includeAuthorizedOperations */

/* Describes consumer groups (Java's describeConsumerGroups): a KIP-848
 * group through ConsumerGroupDescribe, a classic one (which that API
 * answers GROUP_ID_NOT_FOUND) through DescribeGroups, with its members'
 * assignments decoded. An unknown group gets GROUP_ID_NOT_FOUND; a
 * classic group of another protocol type (e.g. connect) gets
 * INVALID_GROUP_ID naming it. *descp: caller owns. */
KN_API int kn_admin_describe_consumer_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                             int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                             size_t errstr_size);
/* Java's describeClassicGroups: DescribeGroups only, for classic groups
 * of any protocol type (consumer, connect, ...): a consumer group's
 * members have their assignments decoded, other members an empty one.
 * An unknown group or a KIP-848 group gets GROUP_ID_NOT_FOUND.
 * kn_group_descriptions_protocol_type names the group's protocol type.
 * *descp: caller owns. */
KN_API int kn_admin_describe_classic_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                            int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                            size_t errstr_size);
KN_API size_t kn_group_descriptions_count(const kn_group_descriptions *desc);
KN_API const char *kn_group_descriptions_group_id(const kn_group_descriptions *desc, size_t i);
KN_API int kn_group_descriptions_error(const kn_group_descriptions *desc, size_t i);
KN_API const char *kn_group_descriptions_error_message(const kn_group_descriptions *desc, size_t i);
/* "Stable", "Empty", "PreparingRebalance", "Assigning", "Reconciling", ... */
KN_API const char *kn_group_descriptions_state(const kn_group_descriptions *desc, size_t i);
/* "consumer" (KIP-848) or "classic". */
KN_API const char *kn_group_descriptions_type(const kn_group_descriptions *desc, size_t i);
/* The assignor ("uniform", "range", "cooperative-sticky", ...), "" if none. */
KN_API const char *kn_group_descriptions_assignor(const kn_group_descriptions *desc, size_t i);
/* A classic group with protocol type "" (offsets committed without a
 * group membership). */
KN_API int kn_group_descriptions_is_simple(const kn_group_descriptions *desc, size_t i);
/* A classic group's protocol type ("consumer", "connect", "" for a
 * simple group); NULL for KIP-848 groups. */
KN_API const char *kn_group_descriptions_protocol_type(const kn_group_descriptions *desc, size_t i);
KN_API int32_t kn_group_descriptions_coordinator(const kn_group_descriptions *desc, size_t i);
/* KIP-848 only (-1 for classic groups). */
KN_API int32_t kn_group_descriptions_group_epoch(const kn_group_descriptions *desc, size_t i);
KN_API int32_t kn_group_descriptions_assignment_epoch(const kn_group_descriptions *desc, size_t i);
/* Bit set of Kafka's AclOperation codes; INT32_MIN when not asked. */
KN_API int32_t kn_group_descriptions_authorized_operations(const kn_group_descriptions *desc, size_t i);
KN_API size_t kn_group_descriptions_member_count(const kn_group_descriptions *desc, size_t i);
KN_API const char *kn_group_descriptions_member_id(const kn_group_descriptions *desc, size_t i, size_t m);
/* NULL for a dynamic member. */
KN_API const char *kn_group_descriptions_member_instance_id(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API const char *kn_group_descriptions_member_client_id(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API const char *kn_group_descriptions_member_host(const kn_group_descriptions *desc, size_t i, size_t m);
/* KIP-848: the member epoch (-1 classic). */
KN_API int32_t kn_group_descriptions_member_epoch(const kn_group_descriptions *desc, size_t i, size_t m);
/* The member's current assignment; for KIP-848 groups also the target
 * it is moving to (NULL for classic groups). Owned by desc. */
KN_API const kn_topic_partition_list *kn_group_descriptions_member_assignment(const kn_group_descriptions *desc,
                                                                              size_t i, size_t m);
KN_API const kn_topic_partition_list *
kn_group_descriptions_member_target_assignment(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API void kn_group_descriptions_destroy(kn_group_descriptions *desc);

/* ---- consumer group offsets ---- */

typedef struct kn_group_offsets kn_group_offsets;

/* One group of list_consumer_group_offsets: partitions NULL for all the
 * group committed (Java's ListConsumerGroupOffsetsSpec). */
typedef struct kn_group_offsets_spec {
    const char *group;
    const kn_topic_partition_list *partitions;
} kn_group_offsets_spec;

#define KN_ADMIN_REQUIRE_STABLE 0x1 /* requireStable: wait out open transactions */

/* Committed offsets of several groups at once (KIP-709, OffsetFetch v8+,
 * batched per coordinator). Each group's list holds offset (-1: none
 * committed), leader epoch, metadata and a per-partition error. *offsetsp:
 * caller owns. */
KN_API int kn_admin_list_consumer_group_offsets(kn_admin *admin, const kn_group_offsets_spec *specs, size_t count,
                                                int flags, int timeout_ms, kn_group_offsets **offsetsp, char *errstr,
                                                size_t errstr_size);
KN_API size_t kn_group_offsets_count(const kn_group_offsets *offsets);
KN_API const char *kn_group_offsets_group(const kn_group_offsets *offsets, size_t i);
/* The group's own error (then its list is empty). */
KN_API int kn_group_offsets_error(const kn_group_offsets *offsets, size_t i);
KN_API const char *kn_group_offsets_error_message(const kn_group_offsets *offsets, size_t i);
/* Owned by offsets; never NULL for a valid i. */
KN_API const kn_topic_partition_list *kn_group_offsets_partitions(const kn_group_offsets *offsets, size_t i);
KN_API void kn_group_offsets_destroy(kn_group_offsets *offsets);

/* Commits offsets for a group that has no active members (Java's
 * alterConsumerGroupOffsets: OffsetCommit with generation -1): offset,
 * leader epoch and metadata of each entry of `offsets`. The result
 * (count 1) holds the group and a copy of the list with each partition's
 * error: UNKNOWN_MEMBER_ID while the group is active, a negative offset
 * fails its own entry with _INVALID_ARG without being sent. */
KN_API int kn_admin_alter_consumer_group_offsets(kn_admin *admin, const char *group,
                                                 const kn_topic_partition_list *offsets, int timeout_ms,
                                                 kn_group_offsets **resultp, char *errstr, size_t errstr_size);
/* Deletes committed offsets of a group (OffsetDelete): the group error
 * (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP) or per partition
 * (GROUP_SUBSCRIBED_TO_TOPIC while members consume the topic). */
KN_API int kn_admin_delete_consumer_group_offsets(kn_admin *admin, const char *group,
                                                  const kn_topic_partition_list *partitions, int timeout_ms,
                                                  kn_group_offsets **resultp, char *errstr, size_t errstr_size);

/* Removes members from a group (LeaveGroup v3+), by group.instance.id;
 * instance_count 0 removes every member (Java's removeAll(): the group
 * is described first). reason may be NULL. One entry per member
 * (named by instance id, or member id for removeAll) with its error;
 * a group-level error is given to every member. */
KN_API int kn_admin_remove_members_from_consumer_group(kn_admin *admin, const char *group,
                                                       const char *const *instance_ids, size_t instance_count,
                                                       const char *reason, int timeout_ms,
                                                       kn_group_results **resultsp, char *errstr,
                                                       size_t errstr_size);

/* ---- share groups (KIP-932) ----------------------------------------
 * Routed and retried like the consumer-group calls (each group's
 * coordinator, several groups per request where the API allows). */

/* Java's describeShareGroups (ShareGroupDescribe): type "share", state,
 * group epoch, assignment epoch, assignor ("simple"), coordinator, and
 * each member's id, client id, host, epoch and assignment (no instance
 * id, no target assignment). An unknown group, or a group that is not a
 * share group, gets GROUP_ID_NOT_FOUND. *descp: caller owns. */
KN_API int kn_admin_describe_share_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                          int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                          size_t errstr_size);
/* Java's listShareGroupOffsets (DescribeShareGroupOffsets): per group,
 * the start offset of each partition the group has state for (spec
 * partitions NULL: every one), its leader epoch, its lag
 * (kn_group_offsets_lag) and a per-partition error. A partition without
 * a start offset has offset -1. *offsetsp: caller owns. */
KN_API int kn_admin_list_share_group_offsets(kn_admin *admin, const kn_group_offsets_spec *specs, size_t count,
                                             int timeout_ms, kn_group_offsets **offsetsp, char *errstr,
                                             size_t errstr_size);
/* Lag of entry k of group i's list (list_share_group_offsets only): -1
 * when unknown (the broker did not say, or not a share group's list). */
KN_API int64_t kn_group_offsets_lag(const kn_group_offsets *offsets, size_t i, size_t k);
/* Java's alterShareGroupOffsets (AlterShareGroupOffsets): sets each
 * partition's start offset (the entries' offsets; a negative one fails
 * its entry with _INVALID_ARG unsent) for a share group with no active
 * members. The result (count 1) has the group's error
 * (NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND) or a copy
 * of the list with each partition's error. */
KN_API int kn_admin_alter_share_group_offsets(kn_admin *admin, const char *group,
                                              const kn_topic_partition_list *offsets, int timeout_ms,
                                              kn_group_offsets **resultp, char *errstr, size_t errstr_size);
/* Java's deleteShareGroupOffsets (DeleteShareGroupOffsets): forgets the
 * group's state for whole topics. One entry per distinct topic with its
 * error; a group-level error (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND) is
 * given to every topic. */
KN_API int kn_admin_delete_share_group_offsets(kn_admin *admin, const char *group, const char *const *topics,
                                               size_t topic_count, int timeout_ms, kn_group_results **resultsp,
                                               char *errstr, size_t errstr_size);
/* Java's deleteShareGroups: DeleteGroups, as delete_consumer_groups. */
KN_API int kn_admin_delete_share_groups(kn_admin *admin, const char *const *groups, size_t count, int timeout_ms,
                                        kn_group_results **resultsp, char *errstr, size_t errstr_size);

/* ---- streams groups (KIP-1071) --------------------------------------
 * Offsets of a streams group are committed offsets like a consumer
 * group's: the offset calls are the consumer-group ones (OffsetFetch,
 * OffsetCommit, OffsetDelete), under Java's names. */

/* Java's describeStreamsGroups (StreamsGroupDescribe): type "streams",
 * state, epochs, topology epoch and subtopologies, and each member's
 * ids, host, epoch, process id and tasks. A member's assignment and
 * target assignment (kn_group_descriptions_member_assignment / _target_)
 * are its active tasks, as lists whose "topic" is the subtopology id and
 * whose partition is the task's partition. An unknown group, or one that
 * is not a streams group, gets GROUP_ID_NOT_FOUND. */
KN_API int kn_admin_describe_streams_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                            int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                            size_t errstr_size);
/* Streams groups only (-1 / 0 / NULL otherwise). */
KN_API int32_t kn_group_descriptions_topology_epoch(const kn_group_descriptions *desc, size_t i);
KN_API size_t kn_group_descriptions_subtopology_count(const kn_group_descriptions *desc, size_t i);
KN_API const char *kn_group_descriptions_subtopology_id(const kn_group_descriptions *desc, size_t i, size_t s);

/* Which topics of a subtopology (Java's StreamsGroupSubtopologyDescription). */
#define KN_SUBTOPOLOGY_SOURCE 0            /* sourceTopics */
#define KN_SUBTOPOLOGY_REPARTITION_SINK 1  /* repartitionSinkTopics */
#define KN_SUBTOPOLOGY_STATE_CHANGELOG 2   /* stateChangelogTopics (names) */
#define KN_SUBTOPOLOGY_REPARTITION_SOURCE 3 /* repartitionSourceTopics (names) */
KN_API size_t kn_group_descriptions_subtopology_topic_count(const kn_group_descriptions *desc, size_t i, size_t s,
                                                           int kind);
KN_API const char *kn_group_descriptions_subtopology_topic(const kn_group_descriptions *desc, size_t i, size_t s,
                                                          int kind, size_t t);
KN_API const char *kn_group_descriptions_member_process_id(const kn_group_descriptions *desc, size_t i, size_t m);

/* Which tasks of a streams member (Java's StreamsGroupMemberAssignment). */
#define KN_TASKS_ACTIVE 0
#define KN_TASKS_STANDBY 1
#define KN_TASKS_WARMUP 2
#define KN_TASKS_TARGET_ACTIVE 3
#define KN_TASKS_TARGET_STANDBY 4
#define KN_TASKS_TARGET_WARMUP 5
/* The member's tasks of that kind ("topic" = subtopology id), owned by
 * desc; NULL for a member of another group type or a bad kind. */
KN_API const kn_topic_partition_list *kn_group_descriptions_member_tasks(const kn_group_descriptions *desc,
                                                                         size_t i, size_t m, int kind);

/* An internal topic t of kind KN_SUBTOPOLOGY_STATE_CHANGELOG or
 * KN_SUBTOPOLOGY_REPARTITION_SOURCE (Java's TopicInfo): its partition
 * count and replication factor as the application declared them (0: not
 * enforced / the broker's default; -1 for another kind or out of range)
 * and its topic configs, key c of config_count with its value in *value.
 * Strings owned by desc. */
KN_API int32_t kn_group_descriptions_subtopology_topic_partitions(const kn_group_descriptions *desc, size_t i,
                                                                  size_t s, int kind, size_t t);
KN_API int32_t kn_group_descriptions_subtopology_topic_replication_factor(const kn_group_descriptions *desc,
                                                                          size_t i, size_t s, int kind, size_t t);
KN_API size_t kn_group_descriptions_subtopology_topic_config_count(const kn_group_descriptions *desc, size_t i,
                                                                   size_t s, int kind, size_t t);
KN_API const char *kn_group_descriptions_subtopology_topic_config(const kn_group_descriptions *desc, size_t i,
                                                                  size_t s, int kind, size_t t, size_t c,
                                                                  const char **value);

/* A streams member's rack id (NULL: none), the topology epoch it runs,
 * whether it is a classic member not yet upgraded (0/1), its user
 * endpoint for interactive queries (host, NULL when it has none; *port
 * set when not NULL) and its client tags (key k of tag_count, value in
 * *value). -1 / NULL / 0 for members of other group types. */
KN_API const char *kn_group_descriptions_member_rack(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API int32_t kn_group_descriptions_member_topology_epoch(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API int kn_group_descriptions_member_is_classic(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API const char *kn_group_descriptions_member_user_endpoint(const kn_group_descriptions *desc, size_t i,
                                                             size_t m, int *port);
KN_API size_t kn_group_descriptions_member_client_tag_count(const kn_group_descriptions *desc, size_t i, size_t m);
KN_API const char *kn_group_descriptions_member_client_tag(const kn_group_descriptions *desc, size_t i, size_t m,
                                                          size_t k, const char **value);

/* A streams member's cumulative changelog offsets per task (Java's
 * taskOffsets / taskEndOffsets): entries whose "topic" is the
 * subtopology id, partition the task's, offset the offset; owned by
 * desc, NULL for members of other group types or a bad kind. Kafka 4.3's
 * coordinator keeps none and sends both empty. */
#define KN_TASK_OFFSETS 0
#define KN_TASK_END_OFFSETS 1
KN_API const kn_topic_partition_list *kn_group_descriptions_member_task_offsets(const kn_group_descriptions *desc,
                                                                                size_t i, size_t m, int kind);

/* Java's listStreamsGroupOffsets, alterStreamsGroupOffsets,
 * deleteStreamsGroupOffsets and deleteStreamsGroups: the consumer-group
 * calls (same arguments, same results). */
KN_API int kn_admin_list_streams_group_offsets(kn_admin *admin, const kn_group_offsets_spec *specs, size_t count,
                                               int flags, int timeout_ms, kn_group_offsets **offsetsp, char *errstr,
                                               size_t errstr_size);
KN_API int kn_admin_alter_streams_group_offsets(kn_admin *admin, const char *group,
                                                const kn_topic_partition_list *offsets, int timeout_ms,
                                                kn_group_offsets **resultp, char *errstr, size_t errstr_size);
KN_API int kn_admin_delete_streams_group_offsets(kn_admin *admin, const char *group,
                                                 const kn_topic_partition_list *partitions, int timeout_ms,
                                                 kn_group_offsets **resultp, char *errstr, size_t errstr_size);
KN_API int kn_admin_delete_streams_groups(kn_admin *admin, const char *const *groups, size_t count, int timeout_ms,
                                          kn_group_results **resultsp, char *errstr, size_t errstr_size);

/* ---- KRaft voters (KIP-853) -----------------------------------------
 * Change the controller quorum of a cluster with dynamic voters
 * (kraft.version 1). One call, one outcome: the return value is the
 * broker's error code (KN_OK when applied), errstr its message. */

/* One listener of a new voter (Java's RaftVoterEndpoint). */
typedef struct kn_raft_voter_endpoint {
    const char *name; /* the controller listener's name, e.g. "CONTROLLER" */
    const char *host;
    int port;
} kn_raft_voter_endpoint;

/* Java's addRaftVoter (AddRaftVoter): voter_id with its metadata log
 * directory id (22-char text uuid) and endpoints. cluster_id may be NULL
 * (not checked by the quorum). */
KN_API int kn_admin_add_raft_voter(kn_admin *admin, int32_t voter_id, const char *directory_id,
                                   const kn_raft_voter_endpoint *endpoints, size_t endpoint_count,
                                   const char *cluster_id, int timeout_ms, char *errstr, size_t errstr_size);
/* Java's removeRaftVoter (RemoveRaftVoter). */
KN_API int kn_admin_remove_raft_voter(kn_admin *admin, int32_t voter_id, const char *directory_id,
                                      const char *cluster_id, int timeout_ms, char *errstr, size_t errstr_size);

/* ---- create_partitions ---------------------------------------------- */

/* Input only (read during the call): grow topic to total_count
 * partitions (Java's NewPartitions.increaseTo). assignments, when not
 * NULL, places the new partitions: assignment_count rows of `replicas`
 * broker ids each, row by row (the first id of a row is the preferred
 * leader). */
typedef struct kn_new_partitions {
    const char *topic;
    int32_t total_count;
    const int32_t *assignments;
    size_t assignment_count;
    size_t replicas;
} kn_new_partitions;

/* Java's createPartitions: routed to the controller like create_topics
 * and retried on NOT_CONTROLLER / THROTTLING_QUOTA_EXCEEDED. Per-topic
 * results in a kn_topic_results (caller owns): a count that does not
 * grow the topic fails that topic alone with INVALID_PARTITIONS ("The topic t
 * currently has 3 partition(s); 2 would not be an increase."),
 * a missing topic with UNKNOWN_TOPIC_OR_PARTITION. A topic given twice
 * is sent once. KN_ADMIN_VALIDATE_ONLY checks without creating. */
KN_API int kn_admin_create_partitions(kn_admin *admin, const kn_new_partitions *specs, size_t count, int flags,
                                      int timeout_ms, kn_topic_results **resultsp, char *errstr, size_t errstr_size);

/* ---- describe_log_dirs ------------------------------------------------ */

typedef struct kn_log_dirs kn_log_dirs;

/* Java's describeLogDirs: DescribeLogDirs (every topic) to each named
 * broker. One entry per distinct broker in request order; a broker
 * that is not in the cluster fails alone with BROKER_NOT_AVAILABLE
 * (without waiting for it). *dirsp: caller owns. */
KN_API int kn_admin_describe_log_dirs(kn_admin *admin, const int32_t *brokers, size_t count, int timeout_ms,
                                      kn_log_dirs **dirsp, char *errstr, size_t errstr_size);
KN_API size_t kn_log_dirs_broker_count(const kn_log_dirs *dirs);
KN_API int32_t kn_log_dirs_broker_id(const kn_log_dirs *dirs, size_t b);
/* The broker's own failure (then it has no dirs). */
KN_API int kn_log_dirs_broker_error(const kn_log_dirs *dirs, size_t b);
KN_API const char *kn_log_dirs_broker_error_message(const kn_log_dirs *dirs, size_t b);
KN_API size_t kn_log_dirs_dir_count(const kn_log_dirs *dirs, size_t b);
KN_API const char *kn_log_dirs_dir_path(const kn_log_dirs *dirs, size_t b, size_t d);
/* KN_OK, or e.g. KAFKA_STORAGE_ERROR for an offline dir. */
KN_API int kn_log_dirs_dir_error(const kn_log_dirs *dirs, size_t b, size_t d);
/* -1 when the broker does not say (DescribeLogDirs < v4). */
KN_API int64_t kn_log_dirs_dir_total_bytes(const kn_log_dirs *dirs, size_t b, size_t d);
KN_API int64_t kn_log_dirs_dir_usable_bytes(const kn_log_dirs *dirs, size_t b, size_t d);
KN_API size_t kn_log_dirs_replica_count(const kn_log_dirs *dirs, size_t b, size_t d);
KN_API const char *kn_log_dirs_replica_topic(const kn_log_dirs *dirs, size_t b, size_t d, size_t r);
KN_API int32_t kn_log_dirs_replica_partition(const kn_log_dirs *dirs, size_t b, size_t d, size_t r);
KN_API int64_t kn_log_dirs_replica_size(const kn_log_dirs *dirs, size_t b, size_t d, size_t r);
KN_API int64_t kn_log_dirs_replica_offset_lag(const kn_log_dirs *dirs, size_t b, size_t d, size_t r);
KN_API int kn_log_dirs_replica_is_future(const kn_log_dirs *dirs, size_t b, size_t d, size_t r);
KN_API void kn_log_dirs_destroy(kn_log_dirs *dirs);

/* ---- describe_features, describe_metadata_quorum ---------------------- */

typedef struct kn_features kn_features;

/* Java's describeFeatures: the finalized feature levels of the cluster
 * (metadata.version, kraft.version, group.version, ...) with their
 * epoch, and the ranges the answering broker supports, from an
 * ApiVersions v3+ answer of any broker. *featuresp: caller owns. */
KN_API int kn_admin_describe_features(kn_admin *admin, int timeout_ms, kn_features **featuresp, char *errstr,
                                      size_t errstr_size);
/* -1 when the broker has none yet. */
KN_API int64_t kn_features_finalized_epoch(const kn_features *f);
KN_API size_t kn_features_finalized_count(const kn_features *f);
KN_API const char *kn_features_finalized_name(const kn_features *f, size_t i);
KN_API int16_t kn_features_finalized_min_level(const kn_features *f, size_t i);
KN_API int16_t kn_features_finalized_max_level(const kn_features *f, size_t i);
KN_API size_t kn_features_supported_count(const kn_features *f);
KN_API const char *kn_features_supported_name(const kn_features *f, size_t i);
KN_API int16_t kn_features_supported_min_version(const kn_features *f, size_t i);
KN_API int16_t kn_features_supported_max_version(const kn_features *f, size_t i);
KN_API void kn_features_destroy(kn_features *f);

typedef struct kn_quorum_info kn_quorum_info;

/* Java's describeMetadataQuorum: DescribeQuorum for __cluster_metadata,
 * sent to any broker (which forwards it to the active controller).
 * Voters and observers with their log end offsets and fetch times
 * (-1 when unknown). *infop: caller owns. */
KN_API int kn_admin_describe_metadata_quorum(kn_admin *admin, int timeout_ms, kn_quorum_info **infop, char *errstr,
                                             size_t errstr_size);
KN_API int32_t kn_quorum_info_leader_id(const kn_quorum_info *q);
KN_API int32_t kn_quorum_info_leader_epoch(const kn_quorum_info *q);
KN_API int64_t kn_quorum_info_high_watermark(const kn_quorum_info *q);
/* observer 0: voters, 1: observers. */
KN_API size_t kn_quorum_info_replica_count(const kn_quorum_info *q, int observer);
KN_API int32_t kn_quorum_info_replica_id(const kn_quorum_info *q, int observer, size_t i);
KN_API int64_t kn_quorum_info_replica_log_end_offset(const kn_quorum_info *q, int observer, size_t i);
KN_API int64_t kn_quorum_info_replica_last_fetch_ms(const kn_quorum_info *q, int observer, size_t i);
KN_API int64_t kn_quorum_info_replica_last_caught_up_ms(const kn_quorum_info *q, int observer, size_t i);
KN_API void kn_quorum_info_destroy(kn_quorum_info *q);

/* ---- client quotas ---------------------------------------------------- */

/* An entity is up to KN_QUOTA_ENTITY_MAX (type, name) parts, as Java's
 * ClientQuotaEntity: types "user", "client-id", "ip"; name NULL is the
 * type's default entity. Input only (read during the call). */
#define KN_QUOTA_ENTITY_MAX 3
typedef struct kn_quota_entity {
    const char *types[KN_QUOTA_ENTITY_MAX]; /* NULL ends the list */
    const char *names[KN_QUOTA_ENTITY_MAX];
} kn_quota_entity;

/* One filter component (Java's ClientQuotaFilterComponent). */
#define KN_QUOTA_MATCH_EXACT   0 /* name == match */
#define KN_QUOTA_MATCH_DEFAULT 1 /* the default entity of type */
#define KN_QUOTA_MATCH_ANY     2 /* any entity of type (named or default) */
typedef struct kn_quota_filter {
    const char *type;
    int8_t match_type;
    const char *match; /* KN_QUOTA_MATCH_EXACT only */
} kn_quota_filter;

typedef struct kn_quota_descriptions kn_quota_descriptions;

/* Java's describeClientQuotas (DescribeClientQuotas to any broker).
 * strict: only entities with exactly the filtered types. Entities are
 * listed as the broker sends them. *descp: caller owns. */
KN_API int kn_admin_describe_client_quotas(kn_admin *admin, const kn_quota_filter *filters, size_t count, int strict,
                                           int timeout_ms, kn_quota_descriptions **descp, char *errstr,
                                           size_t errstr_size);
KN_API size_t kn_quota_descriptions_count(const kn_quota_descriptions *d);
/* The entity's parts: count, then type and name (NULL: default). */
KN_API size_t kn_quota_descriptions_part_count(const kn_quota_descriptions *d, size_t i);
KN_API const char *kn_quota_descriptions_part_type(const kn_quota_descriptions *d, size_t i, size_t p);
KN_API const char *kn_quota_descriptions_part_name(const kn_quota_descriptions *d, size_t i, size_t p);
KN_API size_t kn_quota_descriptions_value_count(const kn_quota_descriptions *d, size_t i);
KN_API const char *kn_quota_descriptions_value_key(const kn_quota_descriptions *d, size_t i, size_t v);
KN_API double kn_quota_descriptions_value(const kn_quota_descriptions *d, size_t i, size_t v);
KN_API void kn_quota_descriptions_destroy(kn_quota_descriptions *d);

/* One change (Java's ClientQuotaAlteration.Op): set key to value, or
 * remove it. Input only. */
typedef struct kn_quota_op {
    kn_quota_entity entity;
    const char *key; /* "producer_byte_rate", "consumer_byte_rate", "request_percentage", ... */
    double value;
    int remove;
} kn_quota_op;

/* Java's alterClientQuotas: ops grouped by entity (first-appearance
 * order), one result per entity in a kn_quota_descriptions whose
 * entries carry no values but an error (kn_quota_descriptions_error):
 * an unknown key or a bad value fails its entity alone. Sent to any
 * broker (forwarded to the controller). KN_ADMIN_VALIDATE_ONLY checks
 * only. *resultsp: caller owns. */
KN_API int kn_admin_alter_client_quotas(kn_admin *admin, const kn_quota_op *ops, size_t count, int flags,
                                        int timeout_ms, kn_quota_descriptions **resultsp, char *errstr,
                                        size_t errstr_size);
KN_API int kn_quota_descriptions_error(const kn_quota_descriptions *d, size_t i);
KN_API const char *kn_quota_descriptions_error_message(const kn_quota_descriptions *d, size_t i);

/* ---- SCRAM credentials ------------------------------------------------ */

#define KN_SCRAM_SHA_256 1
#define KN_SCRAM_SHA_512 2

typedef struct kn_scram_credentials kn_scram_credentials;

/* Java's describeUserScramCredentials: users NULL/count 0 lists every
 * user with credentials; a named user without any gets
 * RESOURCE_NOT_FOUND alone. Sent to any broker. *credsp: caller owns. */
KN_API int kn_admin_describe_user_scram_credentials(kn_admin *admin, const char *const *users, size_t count,
                                                    int timeout_ms, kn_scram_credentials **credsp, char *errstr,
                                                    size_t errstr_size);
KN_API size_t kn_scram_credentials_count(const kn_scram_credentials *c);
KN_API const char *kn_scram_credentials_user(const kn_scram_credentials *c, size_t i);
KN_API int kn_scram_credentials_error(const kn_scram_credentials *c, size_t i);
KN_API const char *kn_scram_credentials_error_message(const kn_scram_credentials *c, size_t i);
/* describe only: the user's (mechanism, iterations) pairs. */
KN_API size_t kn_scram_credentials_mechanism_count(const kn_scram_credentials *c, size_t i);
KN_API int kn_scram_credentials_mechanism(const kn_scram_credentials *c, size_t i, size_t k);
KN_API int32_t kn_scram_credentials_iterations(const kn_scram_credentials *c, size_t i, size_t k);
KN_API void kn_scram_credentials_destroy(kn_scram_credentials *c);

/* One change (Java's UserScramCredentialUpsertion / Deletion). Input
 * only: the password is read during the call and never kept. */
typedef struct kn_scram_op {
    const char *user;
    int mechanism;        /* KN_SCRAM_SHA_256 / _512 */
    const char *password; /* NULL: delete the user's credential for mechanism */
    int32_t iterations;   /* upsert: the broker wants >= 4096 */
    const uint8_t *salt;  /* NULL: a random salt, made as Java makes it */
    size_t salt_len;
} kn_scram_op;

/* Java's alterUserScramCredentials: the password is salted here, as
 * Java does (PBKDF2-HMAC with the mechanism's hash: SCRAM's Hi()), and
 * only the salt and salted password are sent. One result per distinct
 * user (first-appearance order) with the broker's error for it
 * (UNACCEPTABLE_CREDENTIAL for too few iterations, RESOURCE_NOT_FOUND
 * deleting a credential that is not there, ...). *resultsp: caller owns. */
KN_API int kn_admin_alter_user_scram_credentials(kn_admin *admin, const kn_scram_op *ops, size_t count,
                                                 int timeout_ms, kn_scram_credentials **resultsp, char *errstr,
                                                 size_t errstr_size);

/* ---- ACLs --------------------------------------------------------------
 *
 * Java's AclBinding / AclBindingFilter as one struct, with Kafka's wire
 * numbers for the enums. As a binding (create_acls) every field is
 * definite; as a filter (describe_acls, delete_acls) a NULL string and
 * the ANY values match anything, PATTERN_MATCH matches every pattern
 * that applies to the name (literal, prefixed, or the "*" wildcard).
 * Input only: read during the call, never kept. */
#define KN_ACL_RESOURCE_ANY              1
#define KN_ACL_RESOURCE_TOPIC            2
#define KN_ACL_RESOURCE_GROUP            3
#define KN_ACL_RESOURCE_CLUSTER          4 /* name "kafka-cluster" */
#define KN_ACL_RESOURCE_TRANSACTIONAL_ID 5
#define KN_ACL_RESOURCE_DELEGATION_TOKEN 6
#define KN_ACL_RESOURCE_USER             7

#define KN_ACL_PATTERN_ANY      1 /* filters only */
#define KN_ACL_PATTERN_MATCH    2 /* filters only */
#define KN_ACL_PATTERN_LITERAL  3
#define KN_ACL_PATTERN_PREFIXED 4

#define KN_ACL_OP_ANY              1 /* filters only */
#define KN_ACL_OP_ALL              2
#define KN_ACL_OP_READ             3
#define KN_ACL_OP_WRITE            4
#define KN_ACL_OP_CREATE           5
#define KN_ACL_OP_DELETE           6
#define KN_ACL_OP_ALTER            7
#define KN_ACL_OP_DESCRIBE         8
#define KN_ACL_OP_CLUSTER_ACTION   9
#define KN_ACL_OP_DESCRIBE_CONFIGS 10
#define KN_ACL_OP_ALTER_CONFIGS    11
#define KN_ACL_OP_IDEMPOTENT_WRITE 12
#define KN_ACL_OP_CREATE_TOKENS    13
#define KN_ACL_OP_DESCRIBE_TOKENS  14
#define KN_ACL_OP_TWO_PHASE_COMMIT 15

#define KN_ACL_PERMISSION_ANY   1 /* filters only */
#define KN_ACL_PERMISSION_DENY  2
#define KN_ACL_PERMISSION_ALLOW 3

typedef struct kn_acl_binding {
    int8_t resource_type; /* KN_ACL_RESOURCE_* */
    const char *resource_name;
    int8_t pattern_type; /* KN_ACL_PATTERN_* */
    const char *principal; /* "User:alice" */
    const char *host;      /* "*" for any host */
    int8_t operation;      /* KN_ACL_OP_* */
    int8_t permission;     /* KN_ACL_PERMISSION_* */
} kn_acl_binding;

/* Which enum kn_acl_enum_name() / kn_acl_enum_from_name() name. */
#define KN_ACL_ENUM_RESOURCE   0
#define KN_ACL_ENUM_PATTERN    1
#define KN_ACL_ENUM_OPERATION  2
#define KN_ACL_ENUM_PERMISSION 3
/* Java's enum constant name ("TOPIC", "PREFIXED", "IDEMPOTENT_WRITE",
 * "DENY"), "UNKNOWN" for a number that is none. Static strings. */
KN_API const char *kn_acl_enum_name(int kind, int value);
/* Back from a name, case-insensitively; -1 when it is none. */
KN_API int kn_acl_enum_from_name(int kind, const char *name);

typedef struct kn_acl_results kn_acl_results;

/* Java's createAcls (CreateAcls v1+ to any broker). One entry per
 * distinct binding, in request order, holding that binding and its
 * error: a binding that is not definite (an ANY or MATCH value, a NULL
 * string) fails alone with INVALID_REQUEST "Invalid ACL creation: ..."
 * without being sent, as Java does; the broker's per-binding errors
 * (e.g. SECURITY_DISABLED without an authorizer) likewise. Creating an
 * ACL that exists succeeds. *resultsp: caller owns. */
KN_API int kn_admin_create_acls(kn_admin *admin, const kn_acl_binding *acls, size_t count, int timeout_ms,
                                kn_acl_results **resultsp, char *errstr, size_t errstr_size);
/* Java's describeAcls (DescribeAcls v1+ to any broker): one entry whose
 * bindings are every ACL the filter matches. A filter with an UNKNOWN
 * (0 or out of range) enum value is KN_ERR__INVALID_ARG; the broker's
 * error (SECURITY_DISABLED, ...) fails the call with that code. */
KN_API int kn_admin_describe_acls(kn_admin *admin, const kn_acl_binding *filter, int timeout_ms,
                                  kn_acl_results **resultsp, char *errstr, size_t errstr_size);
/* Java's deleteAcls (DeleteAcls v1+ to any broker): one entry per
 * distinct filter, in request order, with the filter's error or the
 * bindings it matched and deleted (each with its own error). */
KN_API int kn_admin_delete_acls(kn_admin *admin, const kn_acl_binding *filters, size_t count, int timeout_ms,
                                kn_acl_results **resultsp, char *errstr, size_t errstr_size);
KN_API size_t kn_acl_results_count(const kn_acl_results *r);
/* The entry's (binding's or filter's) error, NULL message when none. */
KN_API int kn_acl_results_error(const kn_acl_results *r, size_t i);
KN_API const char *kn_acl_results_error_message(const kn_acl_results *r, size_t i);
/* The entry's bindings: create, the binding itself; describe, the
 * matches; delete, the deleted matches. Strings live as long as r. */
KN_API size_t kn_acl_results_binding_count(const kn_acl_results *r, size_t i);
KN_API const kn_acl_binding *kn_acl_results_binding(const kn_acl_results *r, size_t i, size_t b);
/* delete only: a matched binding's own error (KN_OK when deleted). */
KN_API int kn_acl_results_binding_error(const kn_acl_results *r, size_t i, size_t b);
KN_API const char *kn_acl_results_binding_error_message(const kn_acl_results *r, size_t i, size_t b);
KN_API void kn_acl_results_destroy(kn_acl_results *r);

/* ---- transactions and producers ------------------------------------------ */

typedef struct kn_txn_descriptions kn_txn_descriptions;

/* Java's describeTransactions: DescribeTransactions to each id's
 * transaction coordinator (found through the client's coordinator
 * cache; ids batched per coordinator), retried on NOT_COORDINATOR /
 * COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS until
 * timeout_ms. One entry per distinct id, in request order; an unknown id
 * fails alone with TRANSACTIONAL_ID_NOT_FOUND. *descp: caller owns. */
KN_API int kn_admin_describe_transactions(kn_admin *admin, const char *const *ids, size_t count, int timeout_ms,
                                          kn_txn_descriptions **descp, char *errstr, size_t errstr_size);
KN_API size_t kn_txn_descriptions_count(const kn_txn_descriptions *d);
KN_API const char *kn_txn_descriptions_id(const kn_txn_descriptions *d, size_t i);
KN_API int kn_txn_descriptions_error(const kn_txn_descriptions *d, size_t i);
KN_API const char *kn_txn_descriptions_error_message(const kn_txn_descriptions *d, size_t i);
KN_API int32_t kn_txn_descriptions_coordinator(const kn_txn_descriptions *d, size_t i);
/* The coordinator's state name ("Empty", "Ongoing", "PrepareCommit",
 * "CompleteCommit", "PrepareAbort", "CompleteAbort", ...). */
KN_API const char *kn_txn_descriptions_state(const kn_txn_descriptions *d, size_t i);
KN_API int64_t kn_txn_descriptions_producer_id(const kn_txn_descriptions *d, size_t i);
KN_API int32_t kn_txn_descriptions_producer_epoch(const kn_txn_descriptions *d, size_t i);
KN_API int32_t kn_txn_descriptions_timeout_ms(const kn_txn_descriptions *d, size_t i);
/* -1 when no transaction is open (Java's empty OptionalLong). */
KN_API int64_t kn_txn_descriptions_start_time_ms(const kn_txn_descriptions *d, size_t i);
/* The partitions in the open transaction (offsets unused); valid until
 * d is destroyed, never NULL for an entry without error. */
KN_API const kn_topic_partition_list *kn_txn_descriptions_partitions(const kn_txn_descriptions *d, size_t i);
KN_API void kn_txn_descriptions_destroy(kn_txn_descriptions *d);

/* Java's fenceProducers: InitProducerId for each transactional id at its
 * transaction coordinator, which bumps the epoch (aborting an open
 * transaction) so the id's current producer is fenced. Results in a
 * kn_txn_descriptions whose entries carry only the id, error, producer
 * id and new epoch. transaction_timeout_ms <= 0 uses the call's timeout
 * (Java's default). */
KN_API int kn_admin_fence_producers(kn_admin *admin, const char *const *ids, size_t count, int transaction_timeout_ms,
                                    int timeout_ms, kn_txn_descriptions **resultsp, char *errstr, size_t errstr_size);

/* Java's ListTransactionsOptions, all optional (NULL / 0: no filter). */
typedef struct kn_txn_list_filter {
    const char *const *states; /* e.g. "Ongoing" */
    size_t state_count;
    const int64_t *producer_ids;
    size_t producer_id_count;
    int64_t duration_ms;    /* > 0: open for longer than this (ListTransactions v1+) */
    const char *id_pattern; /* a regex over transactional ids (v2+, KIP-1152) */
} kn_txn_list_filter;

typedef struct kn_txn_list kn_txn_list;

/* Java's listTransactions: ListTransactions to every broker of fresh
 * metadata, merged and sorted by id. A broker that failed leaves its
 * error in kn_txn_list_error (the call fails only when none answered).
 * A filter the broker cannot serve (duration on v0, pattern below v2)
 * fails the call with KN_ERR__UNSUPPORTED_VERSION. *listp: caller owns. */
KN_API int kn_admin_list_transactions(kn_admin *admin, const kn_txn_list_filter *filter, int timeout_ms,
                                      kn_txn_list **listp, char *errstr, size_t errstr_size);
KN_API size_t kn_txn_list_count(const kn_txn_list *l);
KN_API const char *kn_txn_list_id(const kn_txn_list *l, size_t i);
KN_API int64_t kn_txn_list_producer_id(const kn_txn_list *l, size_t i);
KN_API const char *kn_txn_list_state(const kn_txn_list *l, size_t i);
/* The first failed broker's error and message (KN_OK / NULL when all answered). */
KN_API int kn_txn_list_error(const kn_txn_list *l);
KN_API const char *kn_txn_list_error_message(const kn_txn_list *l);
KN_API void kn_txn_list_destroy(kn_txn_list *l);

typedef struct kn_producer_states kn_producer_states;

/* Java's describeProducers: DescribeProducers to each partition's leader
 * (from fresh metadata, one request per leader, merged), retried on a
 * leader change until timeout_ms; a missing topic or partition fails
 * alone. One entry per distinct partition, in request order, with the
 * partition's active (idempotent or transactional) producers. Offsets
 * of parts are unused. *statesp: caller owns. */
KN_API int kn_admin_describe_producers(kn_admin *admin, const kn_topic_partition_list *parts, int timeout_ms,
                                       kn_producer_states **statesp, char *errstr, size_t errstr_size);
KN_API size_t kn_producer_states_count(const kn_producer_states *s);
KN_API const char *kn_producer_states_topic(const kn_producer_states *s, size_t i);
KN_API int32_t kn_producer_states_partition(const kn_producer_states *s, size_t i);
KN_API int kn_producer_states_error(const kn_producer_states *s, size_t i);
KN_API const char *kn_producer_states_error_message(const kn_producer_states *s, size_t i);
KN_API size_t kn_producer_states_producer_count(const kn_producer_states *s, size_t i);
KN_API int64_t kn_producer_states_producer_id(const kn_producer_states *s, size_t i, size_t k);
KN_API int32_t kn_producer_states_producer_epoch(const kn_producer_states *s, size_t i, size_t k);
KN_API int32_t kn_producer_states_last_sequence(const kn_producer_states *s, size_t i, size_t k);
KN_API int64_t kn_producer_states_last_timestamp(const kn_producer_states *s, size_t i, size_t k);
/* -1 when none (Java's empty OptionalInt / OptionalLong). */
KN_API int32_t kn_producer_states_coordinator_epoch(const kn_producer_states *s, size_t i, size_t k);
KN_API int64_t kn_producer_states_txn_start_offset(const kn_producer_states *s, size_t i, size_t k);
KN_API void kn_producer_states_destroy(kn_producer_states *s);

/* Java's abortTransaction (AbortTransactionSpec): writes an ABORT marker
 * for (producer_id, producer_epoch, coordinator_epoch) to topic /
 * partition with WriteTxnMarkers at the partition's leader, ending a
 * hanging transaction (take the values from describe_producers). KN_OK
 * when the marker was written; else the partition's error (e.g.
 * INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) or the
 * call's, with errstr set. */
KN_API int kn_admin_abort_transaction(kn_admin *admin, const char *topic, int32_t partition, int64_t producer_id,
                                      int16_t producer_epoch, int32_t coordinator_epoch, int timeout_ms, char *errstr,
                                      size_t errstr_size);

/* ---- delegation tokens ------------------------------------------------------
 *
 * The broker issues tokens only on an authenticated (SASL) connection
 * that did not itself log in with a token, and only with
 * delegation.token.secret.key set; elsewhere the calls fail with
 * DELEGATION_TOKEN_REQUEST_NOT_ALLOWED or DELEGATION_TOKEN_AUTH_DISABLED.
 * A token logs in over SCRAM: username the token id, password its HMAC
 * in base64 (kn_delegation_tokens_hmac_base64) and tokenauth=true in the
 * JAAS options. Principals are written "User:name". */

typedef struct kn_delegation_tokens kn_delegation_tokens;

/* Java's createDelegationToken (CreateDelegationToken to any broker):
 * renewers may renew it besides its owner; owner NULL is the requester
 * (another owner needs CreateTokens on that user, v3+); max_lifetime_ms
 * <= 0 takes the broker's delegation.token.max.lifetime.ms. A broker
 * error fails the call with its code. *tokensp (one token): caller owns. */
KN_API int kn_admin_create_delegation_token(kn_admin *admin, const char *const *renewers, size_t renewer_count,
                                            const char *owner, int64_t max_lifetime_ms, int timeout_ms,
                                            kn_delegation_tokens **tokensp, char *errstr, size_t errstr_size);
/* Java's describeDelegationToken: the tokens of the given owners (owners
 * NULL / count 0: every token the requester may describe). */
KN_API int kn_admin_describe_delegation_tokens(kn_admin *admin, const char *const *owners, size_t owner_count,
                                               int timeout_ms, kn_delegation_tokens **tokensp, char *errstr,
                                               size_t errstr_size);
/* Java's renewDelegationToken / expireDelegationToken by the token's
 * HMAC: renew extends the expiry by period_ms (capped by the token's max
 * time); expire sets it to now + period_ms (< 0: expire now). *expiryp
 * (may be NULL) gets the new expiry timestamp. */
KN_API int kn_admin_renew_delegation_token(kn_admin *admin, const uint8_t *hmac, size_t hmac_len, int64_t period_ms,
                                           int timeout_ms, int64_t *expiryp, char *errstr, size_t errstr_size);
KN_API int kn_admin_expire_delegation_token(kn_admin *admin, const uint8_t *hmac, size_t hmac_len, int64_t period_ms,
                                            int timeout_ms, int64_t *expiryp, char *errstr, size_t errstr_size);
KN_API size_t kn_delegation_tokens_count(const kn_delegation_tokens *t);
KN_API const char *kn_delegation_tokens_id(const kn_delegation_tokens *t, size_t i);
/* The HMAC bytes (*lenp gets the length) and their base64 (the SCRAM
 * password). Valid until t is destroyed. */
KN_API const uint8_t *kn_delegation_tokens_hmac(const kn_delegation_tokens *t, size_t i, size_t *lenp);
KN_API const char *kn_delegation_tokens_hmac_base64(const kn_delegation_tokens *t, size_t i);
/* "User:alice" */
KN_API const char *kn_delegation_tokens_owner(const kn_delegation_tokens *t, size_t i);
KN_API const char *kn_delegation_tokens_requester(const kn_delegation_tokens *t, size_t i);
KN_API int64_t kn_delegation_tokens_issue_ms(const kn_delegation_tokens *t, size_t i);
KN_API int64_t kn_delegation_tokens_expiry_ms(const kn_delegation_tokens *t, size_t i);
KN_API int64_t kn_delegation_tokens_max_ms(const kn_delegation_tokens *t, size_t i);
KN_API size_t kn_delegation_tokens_renewer_count(const kn_delegation_tokens *t, size_t i);
KN_API const char *kn_delegation_tokens_renewer(const kn_delegation_tokens *t, size_t i, size_t r);
KN_API void kn_delegation_tokens_destroy(kn_delegation_tokens *t);

/* ---- leaders and reassignments ----------------------------------------------- */

#define KN_ELECTION_PREFERRED 0
#define KN_ELECTION_UNCLEAN   1

/* Java's electLeaders (ElectLeaders to the controller, retried on
 * NOT_CONTROLLER): parts NULL means every partition (the result then has
 * the partitions an election was attempted for). *resultsp (caller owns)
 * has one entry per partition with its error (KN_OK: elected;
 * ELECTION_NOT_NEEDED: the preferred replica leads already;
 * UNKNOWN_TOPIC_OR_PARTITION, ...); offsets unused. A whole-request
 * error (CLUSTER_AUTHORIZATION_FAILED) fails the call. */
KN_API int kn_admin_elect_leaders(kn_admin *admin, int election_type, const kn_topic_partition_list *parts,
                                  int timeout_ms, kn_topic_partition_list **resultsp, char *errstr, size_t errstr_size);

/* One change of Java's alterPartitionReassignments: move topic/partition
 * to replicas (the first is the preferred leader), or cancel its ongoing
 * reassignment (replicas NULL). Input only. */
typedef struct kn_reassignment {
    const char *topic;
    int32_t partition;
    const int32_t *replicas; /* NULL: cancel */
    size_t replica_count;
} kn_reassignment;

/* Java's alterPartitionReassignments (to the controller). Per-partition
 * errors in *resultsp (caller owns): NO_REASSIGNMENT_IN_PROGRESS for a
 * cancel with nothing to cancel, INVALID_REPLICA_ASSIGNMENT, ... */
KN_API int kn_admin_alter_partition_reassignments(kn_admin *admin, const kn_reassignment *changes, size_t count,
                                                  int timeout_ms, kn_topic_partition_list **resultsp, char *errstr,
                                                  size_t errstr_size);

typedef struct kn_reassignments kn_reassignments;

/* Java's listPartitionReassignments (to the controller): the ongoing
 * reassignments of parts (NULL: of every partition). *listp: caller owns. */
KN_API int kn_admin_list_partition_reassignments(kn_admin *admin, const kn_topic_partition_list *parts, int timeout_ms,
                                                 kn_reassignments **listp, char *errstr, size_t errstr_size);
KN_API size_t kn_reassignments_count(const kn_reassignments *r);
KN_API const char *kn_reassignments_topic(const kn_reassignments *r, size_t i);
KN_API int32_t kn_reassignments_partition(const kn_reassignments *r, size_t i);
/* which: 0 replicas, 1 adding, 2 removing; *countp gets the length. */
KN_API const int32_t *kn_reassignments_replicas(const kn_reassignments *r, size_t i, int which, size_t *countp);
KN_API void kn_reassignments_destroy(kn_reassignments *r);

/* ---- update_features, unregister_broker, list_config_resources ---------------- */

/* Java's FeatureUpdate.UpgradeType, by wire number. */
#define KN_FEATURE_UPGRADE          1
#define KN_FEATURE_SAFE_DOWNGRADE   2
#define KN_FEATURE_UNSAFE_DOWNGRADE 3

/* One change (Java's FeatureUpdate): max_version_level 0 with a
 * downgrade type removes the feature. Input only. */
typedef struct kn_feature_update {
    const char *feature; /* "group.version", "transaction.version", ... */
    int16_t max_version_level;
    int upgrade_type; /* KN_FEATURE_* */
} kn_feature_update;

/* Java's updateFeatures (UpdateFeatures to the controller, resent on
 * NOT_CONTROLLER); KN_ADMIN_VALIDATE_ONLY checks without applying. The
 * broker answers all or nothing: KN_OK when every update was applied (or
 * would be), else its error (INVALID_UPDATE_VERSION, ...) with errstr
 * naming the reason, for the whole call. */
KN_API int kn_admin_update_features(kn_admin *admin, const kn_feature_update *updates, size_t count, int flags,
                                    int timeout_ms, char *errstr, size_t errstr_size);

/* Java's unregisterBroker (UnregisterBroker to any broker, forwarded to
 * the controller): removes a broker that is gone for good from the
 * cluster metadata. KN_OK, or the error (BROKER_ID_NOT_REGISTERED, ...). */
KN_API int kn_admin_unregister_broker(kn_admin *admin, int32_t broker_id, int timeout_ms, char *errstr,
                                      size_t errstr_size);

typedef struct kn_config_resource_list kn_config_resource_list;

/* Java's listConfigResources (ListConfigResources v1+, KIP-1142, to any
 * broker): the resources of the given KN_CONFIG_RESOURCE_* types that
 * have configs (types NULL / 0: every type the broker lists); Java's
 * deprecated listClientMetricsResources is the CLIENT_METRICS type.
 * *listp: caller owns. */
KN_API int kn_admin_list_config_resources(kn_admin *admin, const int8_t *types, size_t type_count, int timeout_ms,
                                          kn_config_resource_list **listp, char *errstr, size_t errstr_size);
KN_API size_t kn_config_resource_list_count(const kn_config_resource_list *l);
KN_API int kn_config_resource_list_type(const kn_config_resource_list *l, size_t i);
KN_API const char *kn_config_resource_list_name(const kn_config_resource_list *l, size_t i);
KN_API void kn_config_resource_list_destroy(kn_config_resource_list *l);

/* ---- replica log dirs ------------------------------------------------------------ */

/* One replica (Java's TopicPartitionReplica) and, for alter, the log dir
 * to move it to. Input only. */
typedef struct kn_replica_dir {
    const char *topic;
    int32_t partition;
    int32_t broker;
    const char *dir; /* alter only: an absolute log dir of that broker */
} kn_replica_dir;

typedef struct kn_replica_log_dirs kn_replica_log_dirs;

/* Java's describeReplicaLogDirs: DescribeLogDirs for the replicas' topic
 * partitions to each named broker. One entry per distinct replica, in
 * request order: the dir holding it (NULL when the broker has no such
 * replica, as Java's empty ReplicaLogDirInfo) and its offset lag, and
 * the future dir of a move in progress. A broker not in the cluster
 * fails its replicas with BROKER_NOT_AVAILABLE. *dirsp: caller owns. */
KN_API int kn_admin_describe_replica_log_dirs(kn_admin *admin, const kn_replica_dir *replicas, size_t count,
                                              int timeout_ms, kn_replica_log_dirs **dirsp, char *errstr,
                                              size_t errstr_size);
/* Java's alterReplicaLogDirs: AlterReplicaLogDirs to each broker; the
 * results carry each replica's error (LOG_DIR_NOT_FOUND for a dir the
 * broker does not have, REPLICA_NOT_AVAILABLE, ...). */
KN_API int kn_admin_alter_replica_log_dirs(kn_admin *admin, const kn_replica_dir *moves, size_t count, int timeout_ms,
                                           kn_replica_log_dirs **resultsp, char *errstr, size_t errstr_size);
KN_API size_t kn_replica_log_dirs_count(const kn_replica_log_dirs *d);
KN_API const char *kn_replica_log_dirs_topic(const kn_replica_log_dirs *d, size_t i);
KN_API int32_t kn_replica_log_dirs_partition(const kn_replica_log_dirs *d, size_t i);
KN_API int32_t kn_replica_log_dirs_broker(const kn_replica_log_dirs *d, size_t i);
KN_API int kn_replica_log_dirs_error(const kn_replica_log_dirs *d, size_t i);
KN_API const char *kn_replica_log_dirs_error_message(const kn_replica_log_dirs *d, size_t i);
KN_API const char *kn_replica_log_dirs_current_dir(const kn_replica_log_dirs *d, size_t i);
KN_API int64_t kn_replica_log_dirs_current_lag(const kn_replica_log_dirs *d, size_t i);
KN_API const char *kn_replica_log_dirs_future_dir(const kn_replica_log_dirs *d, size_t i);
KN_API int64_t kn_replica_log_dirs_future_lag(const kn_replica_log_dirs *d, size_t i);
KN_API void kn_replica_log_dirs_destroy(kn_replica_log_dirs *d);

/* ---- list_offsets ------------------------------------------------------ */

/* What to look up for a partition (Java's OffsetSpec), written as the
 * offset of its kn_topic_partition_list entry; an offset >= 0 is a
 * timestamp (ms): the first offset whose record timestamp is >= it. */
#define KN_OFFSET_SPEC_LATEST         (-1)
#define KN_OFFSET_SPEC_EARLIEST       (-2)
#define KN_OFFSET_SPEC_MAX_TIMESTAMP  (-3) /* the record with the highest timestamp (ListOffsets v7+) */
#define KN_OFFSET_SPEC_EARLIEST_LOCAL (-4) /* first offset in local storage (tiered storage, v8+) */
#define KN_OFFSET_SPEC_LATEST_TIERED  (-5) /* last offset in remote storage (v9+) */

#define KN_ADMIN_READ_COMMITTED 0x1 /* isolation.level read_committed: latest = last stable offset */

typedef struct kn_offset_results kn_offset_results;

/* Java's listOffsets: partitions are looked up in fresh metadata and
 * asked of their leaders (one ListOffsets per leader), the answers
 * merged. A partition whose leader moved (NOT_LEADER_OR_FOLLOWER, ...) is
 * asked again after a metadata refresh until timeout_ms; a missing topic
 * or partition gets UNKNOWN_TOPIC_OR_PARTITION alone. specs is read only.
 * One entry per distinct partition, in request order. *resultsp: caller
 * owns. */
KN_API int kn_admin_list_offsets(kn_admin *admin, const kn_topic_partition_list *specs, int flags, int timeout_ms,
                                 kn_offset_results **resultsp, char *errstr, size_t errstr_size);
KN_API size_t kn_offset_results_count(const kn_offset_results *results);
KN_API const char *kn_offset_results_topic(const kn_offset_results *results, size_t i);
KN_API int32_t kn_offset_results_partition(const kn_offset_results *results, size_t i);
KN_API int kn_offset_results_error(const kn_offset_results *results, size_t i);
KN_API const char *kn_offset_results_error_message(const kn_offset_results *results, size_t i);
/* -1 when there is none (e.g. a timestamp after the last record). */
KN_API int64_t kn_offset_results_offset(const kn_offset_results *results, size_t i);
/* The record's timestamp for timestamp and max-timestamp lookups, else -1. */
KN_API int64_t kn_offset_results_timestamp(const kn_offset_results *results, size_t i);
KN_API int32_t kn_offset_results_leader_epoch(const kn_offset_results *results, size_t i);
KN_API void kn_offset_results_destroy(kn_offset_results *results);

/* Java's deleteRecords: deletes the records of each partition before the
 * entry's offset (KN_OFFSET_END, -1: before the high watermark), routed
 * and retried like list_offsets. In the results, offset is the
 * partition's new low watermark (log start); an offset past the high
 * watermark fails its partition with OFFSET_OUT_OF_RANGE. */
KN_API int kn_admin_delete_records(kn_admin *admin, const kn_topic_partition_list *before, int timeout_ms,
                                   kn_offset_results **resultsp, char *errstr, size_t errstr_size);

/* ---- convenience ----------------------------------------------------- */

/* Waits until fresh metadata shows every named topic with all of its
 * partitions led (what a producer or consumer needs right after
 * create_topics, which Java does not wait for). KN_OK, or
 * KN_ERR__TIMED_OUT with errstr naming a topic still missing. */
KN_API int kn_admin_wait_for_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                                    char *errstr, size_t errstr_size);

#ifdef __cplusplus
}
#endif
#endif

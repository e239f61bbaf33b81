/*
 * kafka_native_admin.h: the public admin client (topics and cluster).
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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kn_conf kn_conf;
typedef struct kn_admin kn_admin;

/* Creates an admin client from conf (copied: the caller keeps and may
 * destroy its conf right away). Returns NULL with errstr filled when the
 * configuration is invalid or resources are short. Broker connections
 * are made lazily, so a dead cluster is reported by the first operation. */
kn_admin *kn_admin_new(const kn_conf *conf, char *errstr, size_t errstr_size);
/* Closes connections, stops the network thread, frees the client.
 * NULL is a no-op. */
void kn_admin_destroy(kn_admin *admin);

/* ---- Topic specifications (input of create_topics) ------------------ */

typedef struct kn_new_topic kn_new_topic;

/* A topic to create. partitions -1 and replication_factor -1 mean the
 * broker's defaults (num.partitions, default.replication.factor).
 * name is copied. Returns NULL on NULL name or out of memory. Caller owns
 * the result (kn_new_topic_destroy). */
kn_new_topic *kn_new_topic_new(const char *name, int32_t partitions, int16_t replication_factor);
void kn_new_topic_destroy(kn_new_topic *topic);
/* Adds a topic config (e.g. "cleanup.policy" = "compact"); both copied.
 * value NULL sends a null value. Returns KN_OK, KN_ERR__INVALID_ARG or
 * KN_ERR__NOMEM. */
int kn_new_topic_set_config(kn_new_topic *topic, const char *key, const char *value);
/* Places partition `partition` on the given brokers (the first one is
 * the preferred leader); ids are copied. With an explicit assignment the
 * topic must be created with partitions -1 and replication_factor -1,
 * which the broker checks. Returns KN_OK, KN_ERR__INVALID_ARG or
 * KN_ERR__NOMEM. */
int kn_new_topic_set_replica_assignment(kn_new_topic *topic, int32_t partition, const int32_t *broker_ids,
                                        size_t broker_count);

/* ---- Per-topic results of create_topics / delete_topics ------------- */

typedef struct kn_topic_results kn_topic_results;

/* One entry per distinct requested name, in request order. */
size_t kn_topic_results_count(const kn_topic_results *results);
/* Topic name: valid until the results are destroyed. */
const char *kn_topic_results_name(const kn_topic_results *results, size_t i);
/* KN_OK or the topic's error (KN_ERR_TOPIC_ALREADY_EXISTS, ...). */
int kn_topic_results_error(const kn_topic_results *results, size_t i);
/* The broker's message for that error (or a library message), NULL when
 * the topic succeeded. Valid until the results are destroyed. */
const char *kn_topic_results_error_message(const kn_topic_results *results, size_t i);
/* The topic id as Kafka prints it (22 chars of URL-safe base64), or NULL
 * when the broker did not tell it. */
const char *kn_topic_results_topic_id(const kn_topic_results *results, size_t i);
/* create_topics only: the partition count and replication factor the
 * topic got (-1 if unknown, e.g. on error). */
int32_t kn_topic_results_partitions(const kn_topic_results *results, size_t i);
int32_t kn_topic_results_replication_factor(const kn_topic_results *results, size_t i);
void kn_topic_results_destroy(kn_topic_results *results);

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
int kn_admin_create_topics(kn_admin *admin, kn_new_topic *const *topics, size_t topic_count, int flags,
                           int timeout_ms, kn_topic_results **resultsp, char *errstr, size_t errstr_size);

/* Deletes topics by name, routed like create. An unknown topic gets
 * UNKNOWN_TOPIC_OR_PARTITION in its own entry. *resultsp as above. */
int kn_admin_delete_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                           kn_topic_results **resultsp, char *errstr, size_t errstr_size);

/* ---- list_topics ----------------------------------------------------- */

typedef struct kn_topic_list kn_topic_list;

#define KN_ADMIN_LIST_INTERNAL 0x1 /* include internal topics (__consumer_offsets) */

/* Lists the cluster's topics (sorted by name) from a fresh Metadata
 * request to any broker. *listp is owned by the caller. */
int kn_admin_list_topics(kn_admin *admin, int flags, int timeout_ms, kn_topic_list **listp, char *errstr,
                         size_t errstr_size);
size_t kn_topic_list_count(const kn_topic_list *list);
const char *kn_topic_list_name(const kn_topic_list *list, size_t i);
const char *kn_topic_list_topic_id(const kn_topic_list *list, size_t i);
int kn_topic_list_is_internal(const kn_topic_list *list, size_t i);
void kn_topic_list_destroy(kn_topic_list *list);

/* ---- describe_topics ------------------------------------------------- */

typedef struct kn_topic_descriptions kn_topic_descriptions;
typedef struct kn_partition_info kn_partition_info;

/* Describes topics by name from a fresh Metadata request. One entry per
 * requested name, in request order; an unknown topic has error
 * UNKNOWN_TOPIC_OR_PARTITION and no partitions. *descp: caller owns. */
int kn_admin_describe_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                             kn_topic_descriptions **descp, char *errstr, size_t errstr_size);
size_t kn_topic_descriptions_count(const kn_topic_descriptions *desc);
const char *kn_topic_descriptions_name(const kn_topic_descriptions *desc, size_t i);
int kn_topic_descriptions_error(const kn_topic_descriptions *desc, size_t i);
const char *kn_topic_descriptions_error_message(const kn_topic_descriptions *desc, size_t i);
const char *kn_topic_descriptions_topic_id(const kn_topic_descriptions *desc, size_t i);
int kn_topic_descriptions_is_internal(const kn_topic_descriptions *desc, size_t i);
/* Partitions, sorted by partition id. */
size_t kn_topic_descriptions_partition_count(const kn_topic_descriptions *desc, size_t i);
/* Partition p of topic i; valid until desc is destroyed. NULL if out of range. */
const kn_partition_info *kn_topic_descriptions_partition(const kn_topic_descriptions *desc, size_t i,
                                                         size_t p);
void kn_topic_descriptions_destroy(kn_topic_descriptions *desc);

int32_t kn_partition_info_id(const kn_partition_info *part);
/* Leader broker id, -1 when the partition has no leader. */
int32_t kn_partition_info_leader(const kn_partition_info *part);
int32_t kn_partition_info_leader_epoch(const kn_partition_info *part);
/* The partition's own error (e.g. LEADER_NOT_AVAILABLE), KN_OK if none. */
int kn_partition_info_error(const kn_partition_info *part);
/* Broker id arrays; *countp gets the length. Valid until desc is destroyed. */
const int32_t *kn_partition_info_replicas(const kn_partition_info *part, size_t *countp);
const int32_t *kn_partition_info_isr(const kn_partition_info *part, size_t *countp);
const int32_t *kn_partition_info_offline(const kn_partition_info *part, size_t *countp);

/* ---- describe_cluster ------------------------------------------------ */

typedef struct kn_cluster_description kn_cluster_description;

/* Describes the cluster via DescribeCluster (Metadata on brokers that
 * lack it). *descp: caller owns. */
int kn_admin_describe_cluster(kn_admin *admin, int timeout_ms, kn_cluster_description **descp, char *errstr,
                              size_t errstr_size);
/* NULL if the broker did not tell. */
const char *kn_cluster_description_cluster_id(const kn_cluster_description *desc);
int32_t kn_cluster_description_controller_id(const kn_cluster_description *desc);
/* Brokers sorted by id. */
size_t kn_cluster_description_broker_count(const kn_cluster_description *desc);
int32_t kn_cluster_description_broker_id(const kn_cluster_description *desc, size_t i);
const char *kn_cluster_description_broker_host(const kn_cluster_description *desc, size_t i);
int32_t kn_cluster_description_broker_port(const kn_cluster_description *desc, size_t i);
/* NULL when the broker has no rack. */
const char *kn_cluster_description_broker_rack(const kn_cluster_description *desc, size_t i);
void kn_cluster_description_destroy(kn_cluster_description *desc);

/* ---- convenience ----------------------------------------------------- */

/* Waits until fresh metadata shows every named topic with all of its
 * partitions led (what a producer or consumer needs right after
 * create_topics, which Java does not wait for). KN_OK, or
 * KN_ERR__TIMED_OUT with errstr naming a topic still missing. */
int kn_admin_wait_for_topics(kn_admin *admin, const char *const *names, size_t name_count, int timeout_ms,
                             char *errstr, size_t errstr_size);

#ifdef __cplusplus
}
#endif
#endif

/*
 * assignor.h: consumer group partition assignors as pure functions.
 *
 * The group leader feeds every member's subscription and the cluster view
 * (topic -> partition count, optionally each partition's replica racks)
 * into an assignor and gets each member's partitions back. The built-in
 * assignors ("range", "roundrobin", "sticky", "cooperative-sticky")
 * reproduce the Java client 4.x assignment for assignment, including the
 * places where Java's result depends on HashMap iteration order (see
 * java_order.h); tests/c/test_assignor_java.c proves it against Java.
 *
 * This module owns: the data model (kn_asg_*), the assignor vtable, the
 * per-client list of assignors (built-in and custom, by name) and the
 * output's memory. It does not own group membership (JoinGroup/SyncGroup)
 * nor the wire blobs (consumer_protocol.h).
 *
 * Memory: inputs are only read, never kept. An output's partition arrays
 * and user data are owned by the output (kn_asg_output_free); the topic
 * pointers inside it point at the input's topic names (built-ins use
 * in->topics[i].name), so the input's topic strings must outlive it.
 */
#ifndef KN_ASSIGNOR_H
#define KN_ASSIGNOR_H

#include <stddef.h>
#include <stdint.h>

#define KN_ASG_EAGER       0x1u
#define KN_ASG_COOPERATIVE 0x2u

/* Java's AbstractStickyAssignor.DEFAULT_GENERATION: no generation known. */
#define KN_ASG_NO_GENERATION (-1)

/* One partition; topic is a NUL-terminated name (see ownership above). */
typedef struct kn_asg_tp {
    const char *topic;
    int32_t partition;
} kn_asg_tp;

/* One member's subscription, as decoded from its JoinGroup metadata. */
typedef struct kn_asg_member {
    const char *member_id;         /* required, unique in the group */
    const char *group_instance_id; /* NULL: dynamic member */
    const char *const *topics;     /* subscribed topics */
    int32_t topic_cnt;
    const kn_asg_tp *owned; /* owned partitions (subscription v1+) */
    int32_t owned_cnt;
    int32_t generation; /* subscription v2+ generation, -1 unknown */
    const char *rack;   /* NULL: no rack (v3+) */
    const uint8_t *user_data;
    int32_t user_data_len; /* -1: null user data */
} kn_asg_member;

/* Replica racks of one partition (replicas without a rack are left out). */
typedef struct kn_asg_racks {
    const char *const *names;
    int32_t cnt;
} kn_asg_racks;

/* One topic of the cluster view. A subscribed topic absent from the view
 * (or with 0 partitions) is skipped, like Java does for topics without
 * metadata. */
typedef struct kn_asg_topic {
    const char *name;
    int32_t partition_cnt;
    const kn_asg_racks *racks; /* NULL, or partition_cnt entries */
} kn_asg_topic;

typedef struct kn_asg_input {
    const kn_asg_member *members; /* in JoinGroup response order */
    int32_t member_cnt;
    const kn_asg_topic *topics;
    int32_t topic_cnt;
} kn_asg_input;

/* What one member gets. parts and user_data are owned by the output. */
typedef struct kn_asg_assignment {
    kn_asg_tp *parts;
    int32_t part_cnt;
    int32_t part_cap;
    uint8_t *user_data;
    int32_t user_data_len; /* -1: null */
} kn_asg_assignment;

/* members[i] is for input->members[i]. Built-ins list each member's
 * partitions sorted by (topic, partition). */
typedef struct kn_asg_output {
    kn_asg_assignment *members;
    int32_t member_cnt;
} kn_asg_output;

typedef struct kn_assignor kn_assignor;

/* Fills out (already sized to in->member_cnt, all empty) from in. Returns
 * 0 or an error code with errstr filled; on error the caller frees out. */
typedef int (*kn_asg_assign_fn)(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out,
                                char *errstr, size_t errstr_size);

struct kn_assignor {
    const char *name;   /* "range", ... or the custom name */
    unsigned protocols; /* KN_ASG_EAGER | KN_ASG_COOPERATIVE */
    kn_asg_assign_fn assign;
    void *opaque; /* custom assignors' state; NULL for built-ins */
};

/* Runs asg over in: sizes out, calls assign, frees out on error. out is
 * owned by the caller afterwards (kn_asg_output_free). Rejects malformed
 * input (NULL ids, duplicate member ids or topic names, negative counts)
 * with KN_ERR__INVALID_ARG. */
int kn_asg_run(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
               size_t errstr_size);

/* Appends one partition to member i's assignment (for custom assignors).
 * topic must outlive out. Returns 0 or KN_ERR__NOMEM. */
int kn_asg_output_add(kn_asg_output *out, int32_t member, const char *topic, int32_t partition);
/* Copies len bytes (len -1: null) as member i's assignment user data.
 * Returns 0 or KN_ERR__NOMEM. */
int kn_asg_output_set_user_data(kn_asg_output *out, int32_t member, const uint8_t *data, int32_t len);
/* Frees everything out owns and zeroes it; safe on a zeroed output. */
void kn_asg_output_free(kn_asg_output *out);

#endif

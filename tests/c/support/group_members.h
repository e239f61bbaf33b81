/*
 * group_members.h: consumer group members as processes for the group
 * integration tests (see group_members.c). Member logs are the lines
 * kn_group_member writes (tests/c/support/member/kn_group_member.c).
 */
#ifndef KN_TEST_GROUP_MEMBERS_H
#define KN_TEST_GROUP_MEMBERS_H

#include "kn_test.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kafka_native.h"

#define NPART       6
#define MAX_EVENTS  4096
#define MAX_MEMBERS 4
#define WAIT_MS     60000

typedef struct member {
    char name[16];
    char log[256];
    char err[300]; /* stderr: library warnings, sanitizer reports */
    pid_t pid;
} member;

typedef enum { EV_ASSIGNED, EV_REVOKED, EV_LOST } ev_kind;

typedef struct event {
    long long ts;
    int member;
    int seq; /* order within the member's log */
    ev_kind kind;
    char changed[512];
    char own[512];
} event;

typedef struct logs {
    event ev[MAX_EVENTS];
    int nev;
    /* per topic-index/partition: consumed offsets bitmap and values ok */
    int nrec;
    int bad_values;
    char bad[256];
} logs;

/* Consumed offsets per partition across all members' logs. */
typedef struct consumed {
    unsigned char *seen[NPART];
    int64_t cap;
    int64_t first_after[NPART]; /* first offset member `after_member` read after `after_ts` */
    int64_t last_commit[NPART]; /* last COMMIT offset of `commit_member` */
    int64_t last_read[NPART];   /* last offset `commit_member` read */
    int64_t dups;               /* records read more than once (all members) */
    char first_dup[128];        /* "<member> <partition> <offset>" of the first */
} consumed;

/* cmocka teardown: kills every member still running (a failed test
 * leaves the test function at the failed assertion). */
int kill_leftovers(void **state);

/* Starts a member; extra: NULL-terminated further arguments. */
void member_start(member *m, const char *name, const char *group, const char *first, ...);

/* Waits (bounded) for the member to exit; returns its status. */
int member_wait(member *m, int timeout_ms);

/* SIGTERM (a clean close) and wait; fails unless it exits 0. */
void member_stop(member *m);

/* SIGKILL and wait. */
void member_kill(member *m);

/* Whether "t:p" is in a list "t:p,t:p" or "-". */
bool list_has(const char *list, const char *topic, int p);

/* Entries in a list ("-": 0). */
int list_count(const char *list);

/* The member's latest OWN list ("" before any event). */
void member_own(const member *m, char *out, size_t n);

/* Waits until every member i owns want[i] partitions (bounded). */
void wait_owns(member *ms, int count, const int *want);

/* Reads every member's events into lg (in per-member order). */
void read_events(member *ms, int count, logs *lg);

/* Replays the merged events; fails if a partition of topic is ever owned
 * by two members. killed: a member whose ownership ends at kill_ts
 * (SIGKILL or fencing leaves no release line there); its events after
 * kill_ts count again. */
void check_exclusive(logs *lg, int count, const char *const *topics, int ntopics, int nparts, int killed,
                     long long kill_ts);

/* A producer on the test broker (linger.ms 1); fails the test if not. */
kn_producer *new_producer(void);

/* Appends n records to each of nparts partitions of topic; the value of
 * offset o in partition p is "p<p>-<o>" (topics start empty). */
void produce(kn_producer *pr, const char *topic, int nparts, int64_t *next, int n);

/* Reads every REC / COMMIT line of topic into cs (values checked against
 * what produce() wrote; a wrong value fails the test). */
void read_records(member *ms, int count, const char *topic, consumed *cs, int after_member,
                  long long after_ts, int commit_member);

/* Whether every produced offset (below next[p]) was read. */
bool all_consumed(const consumed *cs, const int64_t *next, int nparts);

/* read_records until all_consumed (bounded by WAIT_MS; then fails
 * naming the first missing offset). */
void wait_consumed(member *ms, int count, const char *topic, consumed *cs, const int64_t *next,
                   int after_member, long long after_ts, int commit_member);

/* Bitmaps for offsets below 100000 per partition. */
void consumed_init(consumed *cs);

void consumed_free(consumed *cs);

/* Creates topic with the admin client and waits until it is known. */
void create_topic_rf(const char *topic, int partitions, int replication);

void create_topic(const char *topic, int partitions);

/* CLOCK_REALTIME ms (the members' log timestamps). */
long long real_ms(void);

/* A produce-and-consume group scenario: a fresh topic of NPART
 * partitions, a group name of this run, a producer, the next offset per
 * partition (what produce() wrote) and the records the members read. */
typedef struct scenario {
    char topic[256], group[64];
    kn_producer *pr;
    int64_t next[NPART];
    consumed cs;
} scenario;

/* topic = kn_test_topic(topic_tag), created with the given replication
 * factor; group = "g-<group_tag>-<pid>". */
void scenario_begin(scenario *s, const char *topic_tag, const char *group_tag, int replication);

/* Closes the producer, frees the records read and removes the count
 * members' logs. */
void scenario_end(scenario *s, member *ms, int count);

/* The group's committed offsets for partitions 0..NPART-1 of topic,
 * read by a consumer that is not a member (every member has left). */
void committed_offsets(const char *group, const char *topic, int64_t *out);

/* Fails if a member's log has an ERROR line (a commit or poll error the
 * application saw). */
void assert_no_errors(const member *ms, int count);

/* The end of a commit scenario, once every member has left: no member
 * saw an error, every record of topic was read exactly once (cs), and
 * the group's committed offsets stand at next[p], the end of every
 * partition. */
void check_read_once_committed(member *ms, int count, const char *group, const char *topic, consumed *cs,
                               const int64_t *next);

/* Deletes the members' log files. */
void remove_logs(member *ms, int count);

#endif

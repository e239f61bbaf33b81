/*
 * oracle_lines.h: the line-by-line comparison the group admin tests
 * (it_admin_share, it_admin_streams) make against the Java Admin client
 * (tools/java/admin-oracle <kind>): each side prints one line per fact,
 * sorted where Java's order is not defined, and the two lists must be
 * equal. Lines are owned strings (free_lines).
 */
#ifndef KN_TEST_ORACLE_LINES_H
#define KN_TEST_ORACLE_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define ORACLE_MAX_LINES 256

typedef struct lines {
    char *v[ORACLE_MAX_LINES];
    size_t n;
} lines;

/* Appends a formatted line (fails the test past ORACLE_MAX_LINES). */
void add_line(lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void free_lines(lines *l);
/* Sorts the lines as strings. */
void sort_lines(lines *l);
/* Appends src's lines, sorted, to dst, and empties src. */
void move_sorted_lines(lines *dst, lines *src);
/* Whether a line contains needle. */
bool has_line(const lines *l, const char *needle);
/* "topic-p,..." sorted as strings (the oracle's form) into out. */
void oracle_tps(const kn_topic_partition_list *l, char *out, size_t size);
/* A new admin client on the test broker (fails the test otherwise). */
kn_admin *oracle_admin_new(void);
/* The oracle's lines: tools/java/admin-oracle KIND KAFKA_BOOTSTRAP
 * args... (fails the test when it fails). */
void oracle_java_lines(const char *kind, const char *const *args, size_t n, lines *out);
/* Fails the test at the first line where ours and java differ (or on a
 * different count); prints ours when equal. */
void oracle_assert_same(const lines *ours, const lines *java);
/* Runs our_lines(a, groups, n, ours) and the oracle's `kind` for the
 * same groups, fails the test at the first differing line, and prints
 * ours; ours keeps its lines for further checks. */
void oracle_same_as_java(kn_admin *a, const char *kind, const char *const *groups, size_t n,
                         void (*our_lines)(kn_admin *, const char *const *, size_t, lines *), lines *ours);

#endif

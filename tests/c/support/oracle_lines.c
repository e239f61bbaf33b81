/*
 * oracle_lines.c: see oracle_lines.h.
 */
#include "oracle_lines.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn_test.h"

void add_line(lines *l, const char *fmt, ...) {
    if (l->n == ORACLE_MAX_LINES)
        fail_msg("more than %d lines", ORACLE_MAX_LINES);
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    l->v[l->n++] = strdup(buf);
}

void free_lines(lines *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void sort_lines(lines *l) { qsort(l->v, l->n, sizeof(l->v[0]), cmp_str); }

void move_sorted_lines(lines *dst, lines *src) {
    sort_lines(src);
    for (size_t k = 0; k < src->n; k++)
        add_line(dst, "%s", src->v[k]);
    free_lines(src);
}

bool has_line(const lines *l, const char *needle) {
    for (size_t i = 0; i < l->n; i++)
        if (strstr(l->v[i], needle))
            return true;
    return false;
}

void oracle_tps(const kn_topic_partition_list *l, char *out, size_t size) {
    lines v = {0};
    for (size_t i = 0; i < kn_topic_partition_list_count(l); i++)
        add_line(&v, "%s-%d", kn_topic_partition_list_topic(l, i), (int)kn_topic_partition_list_partition(l, i));
    sort_lines(&v);
    out[0] = '\0';
    for (size_t i = 0; i < v.n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? "," : "", v.v[i]);
    }
    free_lines(&v);
}

kn_admin *oracle_admin_new(void) {
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    return a;
}

void oracle_java_lines(const char *kind, const char *const *groups, size_t n, lines *out) {
    char cmd[2048];
    int w = snprintf(cmd, sizeof cmd, "%s %s %s", kn_test_source_path("tools/java/admin-oracle"), kind,
                     kn_test_bootstrap());
    for (size_t i = 0; i < n; i++)
        w += snprintf(cmd + w, sizeof cmd - (size_t)w, " %s", groups[i]);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char buf[4096];
    while (fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\n")] = '\0';
        add_line(out, "%s", buf);
    }
    if (pclose(p) != 0)
        fail_msg("%s failed", cmd);
}

void oracle_same_as_java(kn_admin *a, const char *kind, const char *const *groups, size_t n,
                         void (*our_lines)(kn_admin *, const char *const *, size_t, lines *), lines *ours) {
    lines java = {0};
    our_lines(a, groups, n, ours);
    oracle_java_lines(kind, groups, n, &java);
    oracle_assert_same(ours, &java);
    free_lines(&java);
}

void oracle_assert_same(const lines *ours, const lines *java) {
    size_t k = ours->n < java->n ? ours->n : java->n;
    for (size_t i = 0; i < k; i++)
        if (strcmp(ours->v[i], java->v[i]))
            fail_msg("line %zu differs:\n ours: %s\n java: %s", i, ours->v[i], java->v[i]);
    if (ours->n != java->n)
        fail_msg("%zu lines from us, %zu from Java", ours->n, java->n);
    for (size_t i = 0; i < ours->n; i++)
        print_message("  %s\n", ours->v[i]);
}

/*
 * subscription.c: what a group member subscribes to. Owns the sorted
 * topic list (given names, the topics a pattern matches in the last
 * all-topics metadata snapshot, or for a broker-side regex the topics
 * of the coordinator's last target) and the leader's memory of the partition
 * counts its last assignment was computed from, so a partition count
 * change triggers a rejoin. All calls run with c->lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/group/group.h"
#include "kn_alloc.h"

static int kng_strcmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void kng_free_strs(char **v, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        kn_free(v[i]);
    kn_free(v);
}

int kng_set_topics(kng_group *g, const char *const *topics, size_t count) {
    char **v = count ? kn_calloc(count, sizeof(*v)) : NULL;
    if (count && !v)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < count; i++)
        if (!(v[i] = kn_strdup(topics[i]))) {
            kng_free_strs(v, (int32_t)i);
            return KN_ERR__NOMEM;
        }
    if (count)
        qsort(v, count, sizeof(*v), kng_strcmp);
    int32_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (n && strcmp(v[n - 1], v[i]) == 0) {
            kn_free(v[i]);
            continue;
        }
        v[n++] = v[i];
    }
    kng_free_strs(g->topics, g->topic_cnt);
    g->topics = v;
    g->topic_cnt = n;
    return 0;
}

bool kng_subscribed_to(const kng_group *g, const char *topic) {
    int32_t lo = 0, hi = g->topic_cnt;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        int cmp = strcmp(g->topics[mid], topic);
        if (cmp == 0)
            return true;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool kng_match_pattern(kng_group *g, const knw_metadata *md) {
    if (!g->has_pattern || !md || !md->all_topics)
        return false;
    const char **m = md->topic_count ? kn_calloc((size_t)md->topic_count, sizeof(*m)) : NULL;
    if (md->topic_count && !m)
        return false;
    int32_t n = 0;
    /* md->topics is sorted by name, like g->topics. */
    for (int32_t i = 0; i < md->topic_count; i++) {
        const knw_topic *t = &md->topics[i];
        if (t->error != 0 || (t->is_internal && g->exclude_internal))
            continue;
        if (regexec(&g->re, t->name, 0, NULL, 0) == 0)
            m[n++] = t->name;
    }
    bool same = n == g->topic_cnt;
    for (int32_t i = 0; same && i < n; i++)
        same = strcmp(m[i], g->topics[i]) == 0;
    if (!same && kng_set_topics(g, m, (size_t)n) != 0)
        same = true; /* out of memory: keep the old set, try next time */
    kn_free(m);
    return !same;
}

bool kng_metadata_ready(const kng_group *g, const knw_metadata *md) {
    for (int32_t i = 0; i < g->topic_cnt; i++)
        if (!md || !knw_metadata_topic(md, g->topics[i]))
            return false;
    return true;
}

bool kng_counts_changed(const kng_group *g, const knw_metadata *md) {
    if (!md)
        return false;
    for (int32_t i = 0; i < g->asg_topic_cnt; i++) {
        const knw_topic *t = knw_metadata_topic(md, g->asg_topics[i]);
        /* A topic missing from a partial snapshot says nothing. */
        if (t && t->error == 0 && t->partition_count != g->asg_counts[i])
            return true;
    }
    return false;
}

void kng_remember_counts(kng_group *g, const knw_metadata *md, const char *const *topics, int32_t cnt) {
    kng_free_strs(g->asg_topics, g->asg_topic_cnt);
    kn_free(g->asg_counts);
    g->asg_topics = NULL;
    g->asg_counts = NULL;
    g->asg_topic_cnt = 0;
    if (cnt <= 0)
        return;
    g->asg_topics = kn_calloc((size_t)cnt, sizeof(char *));
    g->asg_counts = kn_calloc((size_t)cnt, sizeof(int32_t));
    if (!g->asg_topics || !g->asg_counts) {
        kn_free(g->asg_topics);
        kn_free(g->asg_counts);
        g->asg_topics = NULL;
        g->asg_counts = NULL;
        return;
    }
    for (int32_t i = 0; i < cnt; i++) {
        /* A topic without metadata counts as 0 partitions, so its
         * appearance later is a change too. */
        const knw_topic *t = knw_metadata_topic(md, topics[i]);
        char *name = kn_strdup(topics[i]);
        if (!name)
            break;
        g->asg_topics[g->asg_topic_cnt] = name;
        g->asg_counts[g->asg_topic_cnt++] = t && t->error == 0 ? t->partition_count : 0;
    }
}

void kng_regex_topics(kng_group *g, const kn_topic_partition_list *l) {
    size_t n = l ? kn_topic_partition_list_count(l) : 0;
    const char **v = n ? kn_calloc(n, sizeof(*v)) : NULL;
    if (n && !v)
        return; /* out of memory: subscription() shows the old set */
    for (size_t i = 0; i < n; i++)
        v[i] = kn_topic_partition_list_topic(l, i);
    kng_set_topics(g, v, n); /* sorts and deduplicates */
    kn_free(v);
}

void kng_subscription_clear(kng_group *g) {
    kng_free_strs(g->topics, g->topic_cnt);
    g->topics = NULL;
    g->topic_cnt = 0;
    if (g->has_pattern)
        regfree(&g->re);
    g->has_pattern = false;
    kn_free(g->pattern);
    g->pattern = NULL;
    kn_free(g->regex);
    g->regex = NULL; /* regex_sent stays: the next heartbeat clears it */
    kng_remember_counts(g, NULL, NULL, 0);
}

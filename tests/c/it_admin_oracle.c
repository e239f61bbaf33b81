/*
 * it_admin_oracle.c: our admin answers against the Java Admin client's,
 * field by field (issue #15's oracle). tools/java/admin-oracle prints
 * Java's describeConfigs (topic and broker, with synonyms and
 * documentation) and describeConsumerGroups (a simple group, an unknown
 * group, a live KIP-848 group, a live classic group with a static
 * member: members, assignments, epochs) and describeAcls (three filters
 * over ACLs this test creates: MATCH, a principal on a literal topic,
 * a principal over any resource) canonically; this test prints ours the
 * same way and compares every line. The scenario (a topic with a dynamic config, a group with
 * a committed offset) is set up by our admin first.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS   30000
#define MAX_LINES    4096
#define LINE_MAX_LEN 4096

typedef struct lines {
    char *v[MAX_LINES];
    size_t n;
} lines;

static void add_line(lines *l, const char *s) {
    if (l->n == MAX_LINES)
        fail_msg("more than %d lines", MAX_LINES);
    l->v[l->n++] = strdup(s);
}

static void free_lines(lines *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
}

/* Java's String of a possibly null value, newlines flattened. */
static const char *jstr(const char *s, char *buf, size_t size) {
    if (!s)
        return "null";
    snprintf(buf, size, "%s", s);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return buf;
}

static int cmp_entry(const void *a, const void *b) {
    return strcmp(kn_config_entry_name(*(const kn_config_entry *const *)a),
                  kn_config_entry_name(*(const kn_config_entry *const *)b));
}

static void our_configs(kn_admin *admin, const char *topic, const char *broker, lines *out) {
    kn_config_resource res[2] = {{KN_CONFIG_RESOURCE_TOPIC, topic}, {KN_CONFIG_RESOURCE_BROKER, broker}};
    kn_config_descriptions *d = NULL;
    char errstr[512] = "";
    if (kn_admin_describe_configs(admin, res, 2, KN_ADMIN_CONFIG_SYNONYMS | KN_ADMIN_CONFIG_DOCUMENTATION,
                                  TIMEOUT_MS, &d, errstr, sizeof(errstr)))
        fail_msg("describe_configs: %s", errstr);
    static char line[LINE_MAX_LEN * 2], syn[LINE_MAX_LEN], v[LINE_MAX_LEN], doc[LINE_MAX_LEN],
        sv[LINE_MAX_LEN];
    for (size_t r = 0; r < 2; r++) {
        if (kn_config_descriptions_error(d, r))
            fail_msg("%s: %s", res[r].name, kn_config_descriptions_error_message(d, r));
        size_t n = kn_config_descriptions_entry_count(d, r);
        const kn_config_entry **es = calloc(n ? n : 1, sizeof(*es));
        for (size_t e = 0; e < n; e++)
            es[e] = kn_config_descriptions_entry(d, r, e);
        qsort(es, n, sizeof(*es), cmp_entry);
        for (size_t e = 0; e < n; e++) {
            const kn_config_entry *x = es[e];
            syn[0] = '\0';
            for (size_t s = 0; s < kn_config_entry_synonym_count(x); s++) {
                size_t len = strlen(syn);
                int w =
                    snprintf(syn + len, sizeof(syn) - len, "%s=%s@%s;", kn_config_entry_synonym_name(x, s),
                             jstr(kn_config_entry_synonym_value(x, s), sv, sizeof(sv)),
                             kn_config_source_name(kn_config_entry_synonym_source(x, s)));
                if (w < 0 || (size_t)w >= sizeof(syn) - len)
                    fail_msg("synonyms of %s too long", kn_config_entry_name(x));
            }
            int w = snprintf(line, sizeof(line),
                             "config %s:%s %s=%s source=%s ro=%s sensitive=%s type=%s syn=%s doc=%s",
                             kn_config_resource_type_name(res[r].type), res[r].name, kn_config_entry_name(x),
                             jstr(kn_config_entry_value(x), v, sizeof(v)),
                             kn_config_source_name(kn_config_entry_source(x)),
                             kn_config_entry_is_read_only(x) ? "true" : "false",
                             kn_config_entry_is_sensitive(x) ? "true" : "false",
                             kn_config_type_name(kn_config_entry_type(x)), syn,
                             jstr(kn_config_entry_documentation(x), doc, sizeof(doc)));
            if (w < 0 || (size_t)w >= sizeof(line))
                fail_msg("line for %s too long", kn_config_entry_name(x));
            add_line(out, line);
        }
        free(es);
    }
    kn_config_descriptions_destroy(d);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "topic-p,..." sorted as the oracle sorts them (strings). */
static void tps(const kn_topic_partition_list *l, char *out, size_t size) {
    size_t n = kn_topic_partition_list_count(l);
    char **v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        char b[300];
        snprintf(b, sizeof(b), "%s-%d", kn_topic_partition_list_topic(l, i),
                 (int)kn_topic_partition_list_partition(l, i));
        v[i] = strdup(b);
    }
    qsort(v, n, sizeof(*v), cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? "," : "", v[i]);
        free(v[i]);
    }
    free(v);
}

static void our_groups(kn_admin *admin, const char *const *groups, size_t n, lines *out) {
    kn_group_descriptions *d = NULL;
    char errstr[512] = "", line[4096];
    if (kn_admin_describe_consumer_groups(admin, groups, n, 0, TIMEOUT_MS, &d, errstr, sizeof(errstr)))
        fail_msg("describe_consumer_groups: %s", errstr);
    for (size_t i = 0; i < n; i++) {
        char epoch[24] = "-", aepoch[24] = "-";
        if (kn_group_descriptions_group_epoch(d, i) >= 0) {
            snprintf(epoch, sizeof(epoch), "%d", (int)kn_group_descriptions_group_epoch(d, i));
            snprintf(aepoch, sizeof(aepoch), "%d", (int)kn_group_descriptions_assignment_epoch(d, i));
        }
        if (kn_group_descriptions_error(d, i))
            snprintf(line, sizeof(line), "group %s error=%s", groups[i],
                     kn_err_name(kn_group_descriptions_error(d, i)));
        else
            snprintf(line, sizeof(line),
                     "group %s state=%s type=%s simple=%s assignor=%s coordinator=%d members=%zu "
                     "epoch=%s assignment_epoch=%s",
                     groups[i], kn_group_descriptions_state(d, i), kn_group_descriptions_type(d, i),
                     kn_group_descriptions_is_simple(d, i) ? "true" : "false",
                     kn_group_descriptions_assignor(d, i), (int)kn_group_descriptions_coordinator(d, i),
                     kn_group_descriptions_member_count(d, i), epoch, aepoch);
        add_line(out, line);
        size_t nm = kn_group_descriptions_member_count(d, i);
        size_t order[64];
        assert_true(nm <= 64);
        for (size_t m = 0; m < nm; m++)
            order[m] = m;
        for (size_t a = 0; a < nm; a++) /* by member id, as the oracle prints them */
            for (size_t b = a + 1; b < nm; b++)
                if (strcmp(kn_group_descriptions_member_id(d, i, order[b]),
                           kn_group_descriptions_member_id(d, i, order[a])) < 0) {
                    size_t t = order[a];
                    order[a] = order[b];
                    order[b] = t;
                }
        for (size_t k = 0; k < nm; k++) {
            size_t m = order[k];
            char as[1024], target[1024] = "-", mepoch[24] = "-";
            tps(kn_group_descriptions_member_assignment(d, i, m), as, sizeof(as));
            if (kn_group_descriptions_member_target_assignment(d, i, m))
                tps(kn_group_descriptions_member_target_assignment(d, i, m), target, sizeof(target));
            if (kn_group_descriptions_member_epoch(d, i, m) >= 0)
                snprintf(mepoch, sizeof(mepoch), "%d", (int)kn_group_descriptions_member_epoch(d, i, m));
            const char *inst = kn_group_descriptions_member_instance_id(d, i, m);
            int w = snprintf(line, sizeof(line),
                             "member %s id=%s instance=%s client=%s host=%s epoch=%s assignment=%s target=%s",
                             groups[i], kn_group_descriptions_member_id(d, i, m), inst ? inst : "null",
                             kn_group_descriptions_member_client_id(d, i, m),
                             kn_group_descriptions_member_host(d, i, m), mepoch, as, target);
            if (w < 0 || (size_t)w >= sizeof(line))
                fail_msg("member line too long");
            add_line(out, line);
        }
    }
    kn_group_descriptions_destroy(d);
}

/* The oracle's three describeAcls filters on topic's ACLs, each filter's
 * bindings as sorted lines "acl F TYPE:name:PATTERN principal host OP
 * PERM" (Java's enum names). */
static void our_acls(kn_admin *admin, const char *topic, lines *out) {
    char p[240], q[240], errstr[512] = "";
    snprintf(p, sizeof p, "User:%s-p", topic);
    snprintf(q, sizeof q, "User:%s-q", topic);
    const kn_acl_binding filters[3] = {
        {KN_ACL_RESOURCE_ANY, topic, KN_ACL_PATTERN_MATCH, NULL, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY},
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, p, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY},
        {KN_ACL_RESOURCE_ANY, NULL, KN_ACL_PATTERN_ANY, q, NULL, KN_ACL_OP_ANY, KN_ACL_PERMISSION_ANY},
    };
    for (int f = 0; f < 3; f++) {
        kn_acl_results *r = NULL;
        if (kn_admin_describe_acls(admin, &filters[f], TIMEOUT_MS, &r, errstr, sizeof errstr) != KN_OK)
            fail_msg("describe_acls: %s", errstr);
        lines l = {0};
        for (size_t b = 0; b < kn_acl_results_binding_count(r, 0); b++) {
            const kn_acl_binding *x = kn_acl_results_binding(r, 0, b);
            char line[LINE_MAX_LEN];
            snprintf(line, sizeof line, "acl %d %s:%s:%s %s %s %s %s", f,
                     kn_acl_enum_name(KN_ACL_ENUM_RESOURCE, x->resource_type), x->resource_name,
                     kn_acl_enum_name(KN_ACL_ENUM_PATTERN, x->pattern_type), x->principal, x->host,
                     kn_acl_enum_name(KN_ACL_ENUM_OPERATION, x->operation),
                     kn_acl_enum_name(KN_ACL_ENUM_PERMISSION, x->permission));
            add_line(&l, line);
        }
        kn_acl_results_destroy(r);
        qsort(l.v, l.n, sizeof(l.v[0]), cmp_str);
        for (size_t i = 0; i < l.n; i++)
            add_line(out, l.v[i]);
        free_lines(&l);
    }
}

static void test_oracle(void **state) {
    (void)state;
    char topic[200], group[200], unknown[200], broker[16], errstr[512] = "";
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("oracle"));
    snprintf(group, sizeof(group), "%s", kn_test_topic("oracle-group"));
    snprintf(unknown, sizeof(unknown), "%s", kn_test_topic("oracle-none"));
    kn_test_create_topic(topic, 1);
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    assert_non_null(admin);
    kn_cluster_description *cd = NULL;
    assert_int_equal(kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr)), KN_OK);
    snprintf(broker, sizeof(broker), "%d", (int)kn_cluster_description_broker_id(cd, 0));
    kn_cluster_description_destroy(cd);

    /* The scenario: a dynamic topic config, a group with an offset. */
    kn_config_op op = {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "123456"};
    kn_config_results *cr = NULL;
    assert_int_equal(
        kn_admin_incremental_alter_configs(admin, &op, 1, 0, TIMEOUT_MS, &cr, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_config_results_error(cr, 0), KN_OK);
    kn_config_results_destroy(cr);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, 0, 3);
    kn_group_offsets *go = NULL;
    assert_int_equal(
        kn_admin_alter_consumer_group_offsets(admin, group, l, TIMEOUT_MS, &go, errstr, sizeof(errstr)),
        KN_OK);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(l);

    /* ACLs on the topic (and a group of its name) for two principals
     * that never log in: nothing else is affected by them. */
    char pp[240], pq[240];
    snprintf(pp, sizeof pp, "User:%s-p", topic);
    snprintf(pq, sizeof pq, "User:%s-q", topic);
    const kn_acl_binding acls[] = {
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, pp, "*", KN_ACL_OP_READ,
         KN_ACL_PERMISSION_ALLOW},
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_LITERAL, pp, "127.0.0.1", KN_ACL_OP_WRITE,
         KN_ACL_PERMISSION_DENY},
        {KN_ACL_RESOURCE_TOPIC, topic, KN_ACL_PATTERN_PREFIXED, pq, "*", KN_ACL_OP_DESCRIBE,
         KN_ACL_PERMISSION_ALLOW},
        {KN_ACL_RESOURCE_GROUP, topic, KN_ACL_PATTERN_LITERAL, pp, "*", KN_ACL_OP_READ,
         KN_ACL_PERMISSION_ALLOW},
    };
    kn_acl_results *ar = NULL;
    assert_int_equal(kn_admin_create_acls(admin, acls, 4, TIMEOUT_MS, &ar, errstr, sizeof(errstr)), KN_OK);
    for (size_t i = 0; i < 4; i++)
        if (kn_acl_results_error(ar, i))
            fail_msg("create_acls %zu: %s", i, kn_acl_results_error_message(ar, i));
    kn_acl_results_destroy(ar);

    /* Two live groups: a KIP-848 member and a static classic member. */
    char g848[200], gclassic[200], es[512];
    snprintf(g848, sizeof(g848), "%s", kn_test_topic("oracle-848"));
    snprintf(gclassic, sizeof(gclassic), "%s", kn_test_topic("oracle-classic"));
    kn_consumer *cs[2];
    const char *protos[2] = {"consumer", "classic"}, *gids[2] = {g848, gclassic};
    for (int i = 0; i < 2; i++) {
        kn_conf *cc = kn_conf_new(KN_CLIENT_CONSUMER);
        kn_test_conf_set(cc, "bootstrap.servers", kn_test_bootstrap());
        kn_test_conf_set(cc, "group.id", gids[i]);
        kn_test_conf_set(cc, "group.protocol", protos[i]);
        kn_test_conf_set(cc, "client.id", "oracle-member");
        if (i == 1)
            kn_test_conf_set(cc, "group.instance.id", "oracle-static");
        cs[i] = kn_consumer_new(cc, es, sizeof es);
        kn_conf_destroy(cc);
        assert_non_null(cs[i]);
        const char *topics[1] = {topic};
        assert_int_equal(kn_consumer_subscribe(cs[i], topics, 1, NULL, NULL), KN_OK);
    }
    int64_t joined = kn_test_now_ms() + 60000;
    for (int ready = 0; ready < 2;) {
        ready = 0;
        for (int i = 0; i < 2; i++) {
            kn_records *r = NULL;
            assert_int_equal(kn_consumer_poll(cs[i], 100, &r, es, sizeof es), KN_OK);
            kn_records_free(r);
            kn_topic_partition_list *a = kn_consumer_assignment(cs[i]);
            ready += kn_topic_partition_list_count(a) == 1;
            kn_topic_partition_list_destroy(a);
        }
        if (kn_test_now_ms() > joined)
            fail_msg("the members did not join within 60 s");
    }

    /* Ours, once the broker shows the new config (applied a moment
     * after the alter is acknowledged), then Java's. */
    lines ours = {0}, java = {0};
    const char *groups[4] = {group, unknown, g848, gclassic};
    char want[300];
    snprintf(want, sizeof(want), "retention.ms=123456 source=DYNAMIC_TOPIC_CONFIG");
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        our_configs(admin, topic, broker, &ours);
        bool seen = false;
        for (size_t i = 0; i < ours.n && !seen; i++)
            seen = strstr(ours.v[i], want) != NULL;
        if (seen)
            break;
        free_lines(&ours);
        if (kn_test_now_ms() > until)
            fail_msg("retention.ms=123456 never showed");
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    /* every ACL visible (applied from the metadata log) before both read them */
    until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        lines acl = {0};
        our_acls(admin, topic, &acl);
        size_t n = acl.n;
        free_lines(&acl);
        if (n == 4 + 2 + 1)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("%zu ACL lines, want 7", n);
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    our_acls(admin, topic, &ours);
    our_groups(admin, groups, 4, &ours);

    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s %s %s %s %s %s %s %s", kn_test_source_path("tools/java/admin-oracle"),
             kn_test_bootstrap(), topic, broker, group, unknown, g848, gclassic);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char buf[LINE_MAX_LEN * 2];
    while (fgets(buf, sizeof(buf), p)) {
        buf[strcspn(buf, "\n")] = '\0';
        add_line(&java, buf);
    }
    if (pclose(p) != 0)
        fail_msg("%s failed", cmd);

    size_t n = ours.n < java.n ? ours.n : java.n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ours.v[i], java.v[i]) != 0)
            fail_msg("line %zu differs:\n ours: %s\n java: %s", i, ours.v[i], java.v[i]);
    if (ours.n != java.n)
        fail_msg("%zu lines from us, %zu from Java (first extra: %s)", ours.n, java.n,
                 ours.n > java.n ? ours.v[n] : java.v[n]);
    assert_true(ours.n > 100); /* topic and broker configs, four groups */
    size_t members = 0;
    for (size_t i = 0; i < ours.n; i++)
        members += strncmp(ours.v[i], "member ", 7) == 0 && strstr(ours.v[i], "assignment=") &&
                   !strstr(ours.v[i], "assignment= ");
    assert_int_equal(members, 2); /* one per live group, each with its partition */
    free_lines(&ours);
    free_lines(&java);
    for (int i = 0; i < 2; i++) {
        kn_consumer_close(cs[i], -1);
        kn_consumer_destroy(cs[i]);
    }
    const kn_acl_binding mine = {KN_ACL_RESOURCE_ANY,  topic, KN_ACL_PATTERN_ANY, NULL, NULL, KN_ACL_OP_ANY,
                                 KN_ACL_PERMISSION_ANY};
    assert_int_equal(kn_admin_delete_acls(admin, &mine, 1, TIMEOUT_MS, &ar, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_acl_results_binding_count(ar, 0), 4);
    kn_acl_results_destroy(ar);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_oracle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

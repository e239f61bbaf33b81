/*
 * test_assignor_java.c: the built-in assignors and the consumer-protocol
 * blobs against what the Java client computes
 * (tests/data/java-assignor-answers.txt, written by
 * tools/java/gen-assignor-answers; its header describes the format).
 * Every scenario's assignment must be identical, member by member; every
 * blob byte-identical, and Java's blobs must decode back to their inputs.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "consumer/assignor/assignor.h"
#include "consumer/assignor/consumer_protocol.h"
#include "consumer/assignor/registry.h"
#include "kafka_native.h"
#include "kn_alloc.h"

#define JA_MAX_MEMBERS 64
#define JA_MAX_TOPICS  16
#define JA_MAX_LIST    1024

/* ---- small parsing helpers; all memory in one arena per scenario ---- */

static char *ja_dup(kn_arena *a, const char *s) {
    size_t n = strlen(s);
    char *d = kn_arena_alloc(a, n + 1);
    assert_non_null(d);
    memcpy(d, s, n);
    return d;
}

/* Splits s (modified in place) at sep, keeping every field. */
static int32_t ja_split_raw(char *s, char sep, char **out, int32_t max) {
    int32_t n = 0;
    for (char *p = s;;) {
        assert_true(n < max);
        out[n++] = p;
        char *q = strchr(p, sep);
        if (!q)
            break;
        *q = 0;
        p = q + 1;
    }
    return n;
}

/* Like ja_split_raw, but '.' or '-' alone is the empty list. */
static int32_t ja_split(char *s, char sep, char **out, int32_t max) {
    if (strcmp(s, ".") == 0 || strcmp(s, "-") == 0)
        return 0;
    return ja_split_raw(s, sep, out, max);
}

static int32_t ja_tps(kn_arena *a, char *s, kn_asg_tp **out) {
    char *items[JA_MAX_LIST];
    int32_t n = ja_split(s, ',', items, JA_MAX_LIST);
    *out = kn_arena_calloc(a, (size_t)(n ? n : 1), sizeof **out);
    for (int32_t i = 0; i < n; i++) {
        char *c = strrchr(items[i], ':');
        assert_non_null(c);
        *c = 0;
        (*out)[i].topic = ja_dup(a, items[i]);
        (*out)[i].partition = atoi(c + 1);
    }
    return n;
}

/* Hex ("-" null, "." empty) into a. */
static int32_t ja_hex(kn_arena *a, const char *s, uint8_t **out) {
    *out = NULL;
    if (strcmp(s, "-") == 0)
        return -1;
    if (strcmp(s, ".") == 0) {
        *out = kn_arena_alloc(a, 1);
        return 0;
    }
    size_t n = strlen(s) / 2;
    *out = kn_arena_alloc(a, n);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
        (*out)[i] = (uint8_t)v;
    }
    return (int32_t)n;
}

static void ja_tohex(const uint8_t *p, size_t n, char *out) {
    if (n == 0) {
        strcpy(out, ".");
        return;
    }
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static void ja_fmt_tps(const kn_asg_tp *p, int32_t n, char *out, size_t size) {
    size_t off = 0;
    out[0] = 0;
    if (n == 0) {
        snprintf(out, size, ".");
        return;
    }
    for (int32_t i = 0; i < n; i++)
        off +=
            (size_t)snprintf(out + off, size - off, "%s%s:%d", i ? "," : "", p[i].topic, (int)p[i].partition);
}

static FILE *ja_open(void) {
    FILE *f = fopen(kn_test_source_path("tests/data/java-assignor-answers.txt"), "r");
    if (!f)
        fail_msg("cannot open tests/data/java-assignor-answers.txt (run tools/java/gen-assignor-answers)");
    return f;
}

/* ---- scenarios ---- */

typedef struct ja_scn {
    kn_arena a;
    int id;
    kn_asg_topic topics[JA_MAX_TOPICS];
    int32_t nt;
    kn_asg_member members[JA_MAX_MEMBERS];
    int32_t nm;
    int checked;
    int skipped;
} ja_scn;

static void ja_scn_reset(ja_scn *s, int id) {
    /* the checked count survives: it totals over the file */
    kn_arena_destroy(&s->a);
    kn_arena_init(&s->a, 1 << 16);
    s->id = id;
    s->nt = 0;
    s->nm = 0;
}

static void ja_parse_topic(ja_scn *s, char *line) {
    char name[64], racks[1 << 14];
    int cnt;
    assert_int_equal(sscanf(line, "T %63s %d %16383s", name, &cnt, racks), 3);
    assert_true(s->nt < JA_MAX_TOPICS);
    kn_asg_topic *t = &s->topics[s->nt++];
    t->name = ja_dup(&s->a, name);
    t->partition_cnt = cnt;
    t->racks = NULL;
    if (strcmp(racks, "-") == 0)
        return;
    kn_asg_racks *r = kn_arena_calloc(&s->a, (size_t)cnt, sizeof *r);
    char *parts[JA_MAX_LIST];
    int32_t np = ja_split_raw(racks, '/', parts, JA_MAX_LIST);
    assert_int_equal(np, cnt);
    for (int32_t p = 0; p < np; p++) {
        char *names[8];
        int32_t n = ja_split(parts[p], ',', names, 8);
        const char **v = kn_arena_calloc(&s->a, 8, sizeof *v);
        for (int32_t i = 0; i < n; i++)
            v[i] = ja_dup(&s->a, names[i]);
        r[p].names = v;
        r[p].cnt = n;
    }
    t->racks = r;
}

static void ja_parse_member(ja_scn *s, char *line) {
    char id[64], inst[64], rack[64], topics[512], owned[1 << 14], ud[1 << 15];
    int gen;
    assert_int_equal(
        sscanf(line, "M %63s %63s %63s %511s %d %16383s %32767s", id, inst, rack, topics, &gen, owned, ud),
        7);
    assert_true(s->nm < JA_MAX_MEMBERS);
    kn_asg_member *m = &s->members[s->nm++];
    memset(m, 0, sizeof *m);
    m->member_id = ja_dup(&s->a, id);
    m->group_instance_id = strcmp(inst, "-") ? ja_dup(&s->a, inst) : NULL;
    m->rack = strcmp(rack, "-") ? ja_dup(&s->a, rack) : NULL;
    char *tv[JA_MAX_TOPICS];
    m->topic_cnt = ja_split(topics, ',', tv, JA_MAX_TOPICS);
    const char **tl = kn_arena_calloc(&s->a, JA_MAX_TOPICS, sizeof *tl);
    for (int32_t i = 0; i < m->topic_cnt; i++)
        tl[i] = ja_dup(&s->a, tv[i]);
    m->topics = tl;
    m->generation = gen;
    kn_asg_tp *o;
    m->owned_cnt = ja_tps(&s->a, owned, &o);
    m->owned = o;
    uint8_t *u;
    m->user_data_len = ja_hex(&s->a, ud, &u);
    m->user_data = u;
}

/* One "A assignor member list" block: runs the assignor once per
 * scenario (cached in out) and compares the member's partitions. */
typedef struct ja_run {
    char name[32];
    kn_asg_output out;
    int rc;
    int have;
} ja_run;

static void ja_check_assignment(ja_scn *s, ja_run *run, char *line) {
    char name[32], member[64], want[1 << 14];
    assert_int_equal(sscanf(line, "A %31s %63s %16383s", name, member, want), 3);
    const kn_assignor *asg = kn_asg_builtin(name);
    assert_non_null(asg);
    if (!run->have || strcmp(run->name, name) != 0) {
        if (run->have)
            kn_asg_output_free(&run->out);
        snprintf(run->name, sizeof run->name, "%s", name);
        kn_asg_input in = {s->members, s->nm, s->topics, s->nt};
        char err[256] = "";
        run->rc = kn_asg_run(asg, &in, &run->out, err, sizeof err);
        if (run->rc)
            fail_msg("scenario %d %s: error %d %s", s->id, name, run->rc, err);
        run->have = 1;
    }
    int32_t mi = -1;
    for (int32_t i = 0; i < s->nm; i++)
        if (strcmp(s->members[i].member_id, member) == 0)
            mi = i;
    assert_true(mi >= 0);
    static char got[1 << 16];
    ja_fmt_tps(run->out.members[mi].parts, run->out.members[mi].part_cnt, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("scenario %d, %s, member %s:\n java: %s\n ours: %s", s->id, name, member, want, got);
    s->checked++;
}

static void test_java_assignments(void **state) {
    FILE *f = ja_open();
    static char line[1 << 16];
    ja_scn s;
    memset(&s, 0, sizeof s);
    kn_arena_init(&s.a, 1 << 16);
    ja_run run;
    memset(&run, 0, sizeof run);
    int scenarios = 0, java_errors = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#')
            continue;
        if (strncmp(line, "@blobs", 6) == 0)
            break;
        if (strncmp(line, "@scenario ", 10) == 0) {
            if (run.have)
                kn_asg_output_free(&run.out);
            run.have = 0;
            ja_scn_reset(&s, atoi(line + 10));
            scenarios++;
        } else if (line[0] == 'T') {
            ja_parse_topic(&s, line);
        } else if (line[0] == 'M') {
            ja_parse_member(&s, line);
        } else if (line[0] == 'A') {
            ja_check_assignment(&s, &run, line);
        } else if (line[0] == 'E') {
            /* Java's assignor threw on this input: ours must fail too. */
            char name[32];
            assert_int_equal(sscanf(line, "E %31s", name), 1);
            kn_asg_input in = {s.members, s.nm, s.topics, s.nt};
            kn_asg_output out;
            char err[256] = "";
            int rc = kn_asg_run(kn_asg_builtin(name), &in, &out, err, sizeof err);
            if (rc != KN_ERR__FAIL)
                fail_msg("scenario %d %s: Java throws, we returned %d", s.id, name, rc);
            java_errors++;
        }
    }
    if (run.have)
        kn_asg_output_free(&run.out);
    kn_arena_destroy(&s.a);
    fclose(f);
    assert_true(scenarios >= 540);
    /* 540 scenarios x 4 assignors x members, less the Java failures */
    assert_true(s.checked >= 10000);
    print_message("%d scenarios, %d member assignments identical, %d Java failures matched\n", scenarios,
                  s.checked, java_errors);
}

/* ---- blobs ---- */

static int ja_str_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int ja_tp_cmp(const void *a, const void *b) {
    const kn_asg_tp *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

static void ja_blob_sub(kn_arena *a, char *line) {
    int v, gen;
    char topics[512], owned[1 << 14], rack[64], ud[1 << 15], hex[1 << 16];
    assert_int_equal(
        sscanf(line, "SUB %d %511s %16383s %d %63s %32767s %65535s", &v, topics, owned, &gen, rack, ud, hex),
        7);
    kn_asg_member m;
    memset(&m, 0, sizeof m);
    char *tv[JA_MAX_TOPICS];
    m.topic_cnt = ja_split(topics, ',', tv, JA_MAX_TOPICS);
    m.topics = (const char *const *)tv;
    kn_asg_tp *o;
    m.owned_cnt = ja_tps(a, owned, &o);
    m.owned = o;
    m.generation = gen;
    m.rack = strcmp(rack, "-") ? rack : NULL;
    uint8_t *u;
    m.user_data_len = ja_hex(a, ud, &u);
    m.user_data = u;
    uint8_t *buf;
    size_t len;
    assert_int_equal(kn_cp_subscription_encode(&m, (int16_t)v, &buf, &len), 0);
    static char got[1 << 17];
    ja_tohex(buf, len, got);
    if (strcmp(got, hex) != 0)
        fail_msg("subscription v%d:\n java: %s\n ours: %s", v, hex, got);
    kn_free(buf);

    /* Java's blob decodes back to what that version carries */
    uint8_t *jb;
    int32_t jn = ja_hex(a, hex, &jb);
    kn_asg_member d;
    int16_t dv;
    char err[256];
    assert_int_equal(kn_cp_subscription_decode(jb, (size_t)jn, a, &d, &dv, err, sizeof err), 0);
    assert_int_equal(dv, v);
    assert_int_equal(d.topic_cnt, m.topic_cnt);
    qsort(tv, (size_t)m.topic_cnt, sizeof *tv, ja_str_cmp);
    for (int32_t i = 0; i < d.topic_cnt; i++)
        assert_string_equal(d.topics[i], tv[i]);
    assert_int_equal(d.user_data_len, m.user_data_len);
    if (m.user_data_len > 0)
        assert_memory_equal(d.user_data, m.user_data, (size_t)m.user_data_len);
    if (v >= 1) {
        assert_int_equal(d.owned_cnt, m.owned_cnt);
        qsort(o, (size_t)m.owned_cnt, sizeof *o, ja_tp_cmp);
        for (int32_t i = 0; i < d.owned_cnt; i++) {
            assert_string_equal(d.owned[i].topic, o[i].topic);
            assert_int_equal(d.owned[i].partition, o[i].partition);
        }
    } else {
        assert_int_equal(d.owned_cnt, 0);
    }
    assert_int_equal(d.generation, v >= 2 ? gen : -1);
    if (v >= 3 && m.rack)
        assert_string_equal(d.rack, m.rack);
    else
        assert_null(d.rack);
}

static void ja_blob_asn(kn_arena *a, char *line) {
    int v;
    char parts[1 << 14], ud[64], hex[1 << 16];
    assert_int_equal(sscanf(line, "ASN %d %16383s %63s %65535s", &v, parts, ud, hex), 4);
    kn_asg_tp *p;
    int32_t n = ja_tps(a, parts, &p);
    uint8_t *u;
    int32_t un = ja_hex(a, ud, &u);
    uint8_t *buf;
    size_t len;
    assert_int_equal(kn_cp_assignment_encode(p, n, u, un, (int16_t)v, &buf, &len), 0);
    static char got[1 << 17];
    ja_tohex(buf, len, got);
    if (strcmp(got, hex) != 0)
        fail_msg("assignment v%d:\n java: %s\n ours: %s", v, hex, got);
    kn_free(buf);
    uint8_t *jb;
    int32_t jn = ja_hex(a, hex, &jb);
    kn_asg_tp *dp;
    int32_t dn, dun;
    const uint8_t *du;
    int16_t dv;
    char err[256];
    assert_int_equal(kn_cp_assignment_decode(jb, (size_t)jn, a, &dp, &dn, &du, &dun, &dv, err, sizeof err),
                     0);
    assert_int_equal(dv, v);
    assert_int_equal(dn, n);
    /* grouped by topic: same multiset; compare sorted */
    qsort(p, (size_t)n, sizeof *p, ja_tp_cmp);
    qsort(dp, (size_t)dn, sizeof *dp, ja_tp_cmp);
    for (int32_t i = 0; i < n; i++) {
        assert_string_equal(dp[i].topic, p[i].topic);
        assert_int_equal(dp[i].partition, p[i].partition);
    }
    assert_int_equal(dun, un);
    if (un > 0)
        assert_memory_equal(du, u, (size_t)un);
}

static void ja_blob_stk(kn_arena *a, char *line) {
    int gen;
    char parts[1 << 14], hex[1 << 16];
    assert_int_equal(sscanf(line, "STK %d %16383s %65535s", &gen, parts, hex), 3);
    kn_asg_tp *p;
    int32_t n = ja_tps(a, parts, &p);
    uint8_t *buf;
    size_t len;
    assert_int_equal(kn_cp_sticky_user_data_encode(p, n, gen, &buf, &len), 0);
    static char got[1 << 17];
    ja_tohex(buf, len, got);
    if (strcmp(got, hex) != 0)
        fail_msg("sticky user data:\n java: %s\n ours: %s", hex, got);
    kn_free(buf);
    uint8_t *jb;
    int32_t jn = ja_hex(a, hex, &jb);
    kn_asg_tp *dp;
    int32_t dn, dgen;
    bool has;
    assert_int_equal(kn_cp_sticky_user_data_decode(jb, jn, a, &dp, &dn, &has, &dgen), 0);
    assert_true(has);
    assert_int_equal(dgen, gen);
    assert_int_equal(dn, n);
    qsort(p, (size_t)n, sizeof *p, ja_tp_cmp);
    qsort(dp, (size_t)dn, sizeof *dp, ja_tp_cmp);
    for (int32_t i = 0; i < n; i++) {
        assert_string_equal(dp[i].topic, p[i].topic);
        assert_int_equal(dp[i].partition, p[i].partition);
    }
}

static void test_java_blobs(void **state) {
    FILE *f = ja_open();
    static char line[1 << 17];
    int in_blobs = 0, sub = 0, asn = 0, stk = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "@blobs", 6) == 0) {
            in_blobs = 1;
            continue;
        }
        if (!in_blobs)
            continue;
        kn_arena a;
        kn_arena_init(&a, 1 << 16);
        if (strncmp(line, "SUB ", 4) == 0) {
            ja_blob_sub(&a, line);
            sub++;
        } else if (strncmp(line, "ASN ", 4) == 0) {
            ja_blob_asn(&a, line);
            asn++;
        } else if (strncmp(line, "STK ", 4) == 0) {
            ja_blob_stk(&a, line);
            stk++;
        }
        kn_arena_destroy(&a);
    }
    fclose(f);
    assert_true(sub >= 40 && asn >= 40 && stk >= 10);
    print_message("%d subscription, %d assignment, %d sticky user data blobs\n", sub, asn, stk);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_assignments),
        cmocka_unit_test(test_java_blobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * assignor.c: running an assignor: input validation and the output's
 * memory. The built-in table and the per-consumer list are registry.c;
 * the indexed view the built-in algorithms share is asg_int.c.
 */
#include "consumer/assignor/assignor.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"

/* ---- output ---- */

int kn_asg_output_add(kn_asg_output *out, int32_t member, const char *topic, int32_t partition) {
    kn_asg_assignment *a = &out->members[member];
    if (a->part_cnt == a->part_cap) {
        int32_t cap = a->part_cap ? a->part_cap * 2 : 8;
        kn_asg_tp *p = kn_realloc(a->parts, (size_t)cap * sizeof *p);
        if (!p)
            return KN_ERR__NOMEM;
        a->parts = p;
        a->part_cap = cap;
    }
    a->parts[a->part_cnt++] = (kn_asg_tp){topic, partition};
    return 0;
}

int kn_asg_output_set_user_data(kn_asg_output *out, int32_t member, const uint8_t *data, int32_t len) {
    kn_asg_assignment *a = &out->members[member];
    kn_free(a->user_data);
    a->user_data = NULL;
    a->user_data_len = -1;
    if (len < 0)
        return 0;
    a->user_data = kn_malloc(len ? (size_t)len : 1);
    if (!a->user_data)
        return KN_ERR__NOMEM;
    if (len)
        memcpy(a->user_data, data, (size_t)len);
    a->user_data_len = len;
    return 0;
}

void kn_asg_output_free(kn_asg_output *out) {
    for (int32_t i = 0; out->members && i < out->member_cnt; i++) {
        kn_free(out->members[i].parts);
        kn_free(out->members[i].user_data);
    }
    kn_free(out->members);
    out->members = NULL;
    out->member_cnt = 0;
}

/* ---- validation and run ---- */

static int asg_str_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Fails when two of the n strings are equal (n small enough to sort). */
static int asg_check_unique(const char **v, int32_t n, const char *what, char *errstr, size_t errstr_size) {
    qsort(v, (size_t)n, sizeof *v, asg_str_cmp);
    for (int32_t i = 1; i < n; i++)
        if (strcmp(v[i - 1], v[i]) == 0) {
            kn_errstr_set(errstr, errstr_size, "duplicate %s \"%s\"", what, v[i]);
            return KN_ERR__INVALID_ARG;
        }
    return 0;
}

static int asg_validate(const kn_asg_input *in, char *errstr, size_t errstr_size) {
    if (in->member_cnt < 0 || in->topic_cnt < 0 || (in->member_cnt && !in->members) ||
        (in->topic_cnt && !in->topics)) {
        kn_errstr_set(errstr, errstr_size, "negative count or NULL array in assignor input");
        return KN_ERR__INVALID_ARG;
    }
    int32_t n = in->member_cnt > in->topic_cnt ? in->member_cnt : in->topic_cnt;
    const char **v = kn_malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return KN_ERR__NOMEM;
    int rc = 0;
    for (int32_t i = 0; i < in->member_cnt && !rc; i++) {
        const kn_asg_member *m = &in->members[i];
        if (!m->member_id || m->topic_cnt < 0 || m->owned_cnt < 0 || (m->topic_cnt && !m->topics) ||
            (m->owned_cnt && !m->owned) || (m->user_data_len > 0 && !m->user_data)) {
            kn_errstr_set(errstr, errstr_size, "member %d: NULL id, negative count or NULL array", (int)i);
            rc = KN_ERR__INVALID_ARG;
        }
        for (int32_t j = 0; !rc && j < m->topic_cnt; j++)
            if (!m->topics[j]) {
                kn_errstr_set(errstr, errstr_size, "member %s: NULL topic", m->member_id);
                rc = KN_ERR__INVALID_ARG;
            }
        for (int32_t j = 0; !rc && j < m->owned_cnt; j++)
            if (!m->owned[j].topic) {
                kn_errstr_set(errstr, errstr_size, "member %s: NULL owned topic", m->member_id);
                rc = KN_ERR__INVALID_ARG;
            }
        v[i] = m->member_id;
    }
    if (!rc)
        rc = asg_check_unique(v, in->member_cnt, "member id", errstr, errstr_size);
    for (int32_t i = 0; i < in->topic_cnt && !rc; i++) {
        const kn_asg_topic *t = &in->topics[i];
        if (!t->name || t->partition_cnt < 0) {
            kn_errstr_set(errstr, errstr_size, "topic %d: NULL name or negative partition count", (int)i);
            rc = KN_ERR__INVALID_ARG;
        }
        for (int32_t p = 0; !rc && t->racks && p < t->partition_cnt; p++)
            for (int32_t r = 0; !rc && r < t->racks[p].cnt; r++)
                if (!t->racks[p].names || !t->racks[p].names[r]) {
                    kn_errstr_set(errstr, errstr_size, "topic %s: NULL rack name", t->name);
                    rc = KN_ERR__INVALID_ARG;
                }
        v[i] = t->name;
    }
    if (!rc)
        rc = asg_check_unique(v, in->topic_cnt, "topic", errstr, errstr_size);
    kn_free(v);
    return rc;
}

int kn_asg_run(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
               size_t errstr_size) {
    if (!out)
        return KN_ERR__INVALID_ARG;
    out->members = NULL;
    out->member_cnt = 0;
    if (!asg || !asg->assign || !in) {
        kn_errstr_set(errstr, errstr_size, "no assignor or no input");
        return KN_ERR__INVALID_ARG;
    }
    int rc = asg_validate(in, errstr, errstr_size);
    if (rc)
        return rc;
    out->members = kn_calloc((size_t)(in->member_cnt ? in->member_cnt : 1), sizeof *out->members);
    if (!out->members)
        return KN_ERR__NOMEM;
    out->member_cnt = in->member_cnt;
    for (int32_t i = 0; i < in->member_cnt; i++)
        out->members[i].user_data_len = -1;
    rc = asg->assign(asg, in, out, errstr, errstr_size);
    if (rc)
        kn_asg_output_free(out);
    return rc;
}

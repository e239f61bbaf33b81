/*
 * assignor.c: the assignor table and list, input validation, the indexed
 * view of an input (asg_ctx) and the output's memory.
 */
#include "consumer/assignor/assignor.h"

#include <stdlib.h>
#include <string.h>

#include "consumer/assignor/asg_int.h"
#include "consumer/assignor/java_order.h"
#include "error.h"
#include "kn_alloc.h"

static const kn_assignor asg_builtins[] = {
    {"range", KN_ASG_EAGER, asg_range_assign, NULL},
    {"roundrobin", KN_ASG_EAGER, asg_roundrobin_assign, NULL},
    {"sticky", KN_ASG_EAGER, asg_sticky_assign, NULL},
    {"cooperative-sticky", KN_ASG_COOPERATIVE | KN_ASG_EAGER, asg_coop_sticky_assign, NULL},
};

const kn_assignor *kn_asg_builtin(const char *name) {
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof asg_builtins / sizeof asg_builtins[0]; i++)
        if (strcmp(asg_builtins[i].name, name) == 0)
            return &asg_builtins[i];
    return NULL;
}

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

static int asg_tp_cmp(const void *a, const void *b) {
    const kn_asg_tp *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c)
        return c;
    return (x->partition > y->partition) - (x->partition < y->partition);
}

void asg_output_sort(kn_asg_output *out) {
    for (int32_t i = 0; i < out->member_cnt; i++)
        if (out->members[i].part_cnt > 1)
            qsort(out->members[i].parts, (size_t)out->members[i].part_cnt, sizeof(kn_asg_tp), asg_tp_cmp);
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

/* ---- indexed view ---- */

typedef struct asg_named {
    const char *name;
    int32_t idx;
} asg_named;

static int asg_named_cmp(const void *a, const void *b) {
    return strcmp(((const asg_named *)a)->name, ((const asg_named *)b)->name);
}

/* Java MemberInfo.compareTo: members with a group.instance.id first,
 * ordered by it; then the others by member id. Ties keep the map order. */
static int asg_member_info_cmp(const kn_asg_member *x, const kn_asg_member *y) {
    if (x->group_instance_id && y->group_instance_id)
        return strcmp(x->group_instance_id, y->group_instance_id);
    if (x->group_instance_id)
        return -1;
    if (y->group_instance_id)
        return 1;
    return strcmp(x->member_id, y->member_id);
}

static void asg_sort_members(const kn_asg_input *in, int32_t *v, int32_t n) {
    /* insertion sort: stable, and groups are small (hundreds at most) */
    for (int32_t i = 1; i < n; i++) {
        int32_t x = v[i], j = i - 1;
        while (j >= 0 && asg_member_info_cmp(&in->members[v[j]], &in->members[x]) > 0) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

int32_t asg_topic_find(const asg_ctx *ctx, const char *name) {
    int32_t lo = 0, hi = ctx->nt - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ctx->t_name[mid], name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int32_t asg_part_find(const asg_ctx *ctx, const char *topic, int32_t partition) {
    int32_t t = asg_topic_find(ctx, topic);
    if (t < 0 || partition < 0 || partition >= ctx->t_cnt[t])
        return -1;
    return ctx->t_base[t] + partition;
}

const kn_asg_racks *asg_part_racks(const asg_ctx *ctx, int32_t g) {
    int32_t t = ctx->p_topic[g];
    const kn_asg_topic *vt = &ctx->in->topics[ctx->t_in[t]];
    return vt->racks ? &vt->racks[g - ctx->t_base[t]] : NULL;
}

bool asg_racks_contain(const kn_asg_racks *r, const char *rack) {
    if (!r || !rack)
        return false;
    for (int32_t i = 0; i < r->cnt; i++)
        if (strcmp(r->names[i], rack) == 0)
            return true;
    return false;
}

int asg_emit(const asg_ctx *ctx, kn_asg_output *out, int32_t m, int32_t g) {
    return kn_asg_output_add(out, m, ctx->t_name[ctx->p_topic[g]], asg_part_num(ctx, g));
}

void asg_ctx_free(asg_ctx *ctx) {
    kn_free(ctx->t_in);
    kn_free(ctx->t_name);
    kn_free(ctx->t_cnt);
    kn_free(ctx->t_base);
    kn_free(ctx->t_hash);
    kn_free(ctx->p_topic);
    kn_free(ctx->sub);
    kn_free(ctx->m_hash);
    kn_free(ctx->m_jorder);
    kn_free(ctx->m_sorted);
    kn_free(ctx->m_rack);
    memset(ctx, 0, sizeof *ctx);
}

int asg_ctx_init(asg_ctx *ctx, const kn_asg_input *in, char *errstr, size_t errstr_size) {
    memset(ctx, 0, sizeof *ctx);
    ctx->in = in;
    int32_t nm = ctx->nm = in->member_cnt;
    size_t nm1 = (size_t)(nm ? nm : 1), nv1 = (size_t)(in->topic_cnt ? in->topic_cnt : 1);
    asg_named *view = kn_malloc(nv1 * sizeof *view);
    uint8_t *used = kn_calloc(nv1, 1);
    ctx->m_hash = kn_malloc(nm1 * sizeof *ctx->m_hash);
    ctx->m_jorder = kn_malloc(nm1 * sizeof *ctx->m_jorder);
    ctx->m_sorted = kn_malloc(nm1 * sizeof *ctx->m_sorted);
    ctx->m_rack = kn_malloc(nm1 * sizeof *ctx->m_rack);
    if (!view || !used || !ctx->m_hash || !ctx->m_jorder || !ctx->m_sorted || !ctx->m_rack)
        goto nomem;

    /* Active topics: in the view with > 0 partitions and subscribed. */
    for (int32_t i = 0; i < in->topic_cnt; i++)
        view[i] = (asg_named){in->topics[i].name, i};
    qsort(view, (size_t)in->topic_cnt, sizeof *view, asg_named_cmp);
    for (int32_t m = 0; m < nm; m++)
        for (int32_t j = 0; j < in->members[m].topic_cnt; j++) {
            int32_t lo = 0, hi = in->topic_cnt - 1;
            while (lo <= hi) {
                int32_t mid = lo + (hi - lo) / 2;
                int c = strcmp(view[mid].name, in->members[m].topics[j]);
                if (c == 0) {
                    used[view[mid].idx] = 1;
                    break;
                }
                if (c < 0)
                    lo = mid + 1;
                else
                    hi = mid - 1;
            }
        }
    int32_t nt = 0;
    for (int32_t i = 0; i < in->topic_cnt; i++)
        if (used[view[i].idx] && in->topics[view[i].idx].partition_cnt > 0)
            view[nt++] = view[i];
    ctx->nt = nt;
    size_t nt1 = (size_t)(nt ? nt : 1);
    ctx->t_in = kn_malloc(nt1 * sizeof *ctx->t_in);
    ctx->t_name = kn_malloc(nt1 * sizeof *ctx->t_name);
    ctx->t_cnt = kn_malloc(nt1 * sizeof *ctx->t_cnt);
    ctx->t_base = kn_malloc(nt1 * sizeof *ctx->t_base);
    ctx->t_hash = kn_malloc(nt1 * sizeof *ctx->t_hash);
    ctx->sub = kn_calloc(nm1 * nt1, 1);
    if (!ctx->t_in || !ctx->t_name || !ctx->t_cnt || !ctx->t_base || !ctx->t_hash || !ctx->sub)
        goto nomem;
    int64_t np = 0;
    for (int32_t t = 0; t < nt; t++) {
        ctx->t_in[t] = view[t].idx;
        ctx->t_name[t] = view[t].name;
        ctx->t_cnt[t] = in->topics[view[t].idx].partition_cnt;
        ctx->t_base[t] = (int32_t)np;
        ctx->t_hash[t] = kn_jorder_str_hash(ctx->t_name[t]);
        np += ctx->t_cnt[t];
        if (np > (1 << 24)) {
            kn_errstr_set(errstr, errstr_size, "more than %d partitions to assign", 1 << 24);
            kn_free(view);
            kn_free(used);
            asg_ctx_free(ctx);
            return KN_ERR__INVALID_ARG;
        }
    }
    ctx->np = (int32_t)np;
    ctx->p_topic = kn_malloc((size_t)(np ? np : 1) * sizeof *ctx->p_topic);
    if (!ctx->p_topic)
        goto nomem;
    for (int32_t t = 0; t < nt; t++)
        for (int32_t p = 0; p < ctx->t_cnt[t]; p++)
            ctx->p_topic[ctx->t_base[t] + p] = t;
    for (int32_t m = 0; m < nm; m++) {
        const kn_asg_member *mb = &in->members[m];
        for (int32_t j = 0; j < mb->topic_cnt; j++) {
            int32_t t = asg_topic_find(ctx, mb->topics[j]);
            if (t >= 0)
                ctx->sub[(size_t)m * (size_t)nt + (size_t)t] = 1;
        }
        ctx->m_hash[m] = kn_jorder_str_hash(mb->member_id);
        ctx->m_jorder[m] = m;
        ctx->m_rack[m] = mb->rack && mb->rack[0] ? mb->rack : NULL;
    }
    if (kn_jorder_sort(ctx->m_jorder, nm, ctx->m_hash, kn_jorder_cap(nm)))
        goto nomem;
    memcpy(ctx->m_sorted, ctx->m_jorder, (size_t)nm * sizeof *ctx->m_sorted);
    asg_sort_members(in, ctx->m_sorted, nm);
    kn_free(view);
    kn_free(used);
    return 0;
nomem:
    kn_free(view);
    kn_free(used);
    asg_ctx_free(ctx);
    kn_errstr_set(errstr, errstr_size, "out of memory");
    return KN_ERR__NOMEM;
}

/* ---- list ---- */

struct kn_asg_list {
    kn_assignor *items;
    char **names; /* owned copies for custom entries, NULL for built-ins */
    int32_t cnt;
    int32_t cap;
};

kn_asg_list *kn_asg_list_new(void) { return kn_calloc(1, sizeof(kn_asg_list)); }

void kn_asg_list_destroy(kn_asg_list *l) {
    if (!l)
        return;
    for (int32_t i = 0; i < l->cnt; i++)
        kn_free(l->names[i]);
    kn_free(l->names);
    kn_free(l->items);
    kn_free(l);
}

static int asg_list_push(kn_asg_list *l, kn_assignor a, char *owned_name, char *errstr, size_t errstr_size) {
    if (kn_asg_list_find(l, a.name)) {
        kn_errstr_set(errstr, errstr_size, "assignor \"%s\" listed twice", a.name);
        kn_free(owned_name);
        return KN_ERR__INVALID_ARG;
    }
    if (l->cnt == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 4;
        kn_assignor *it = kn_realloc(l->items, (size_t)cap * sizeof *it);
        if (!it) {
            kn_free(owned_name);
            return KN_ERR__NOMEM;
        }
        l->items = it;
        char **nm = kn_realloc(l->names, (size_t)cap * sizeof *nm);
        if (!nm) {
            kn_free(owned_name);
            return KN_ERR__NOMEM;
        }
        l->names = nm;
        l->cap = cap;
    }
    l->items[l->cnt] = a;
    l->names[l->cnt] = owned_name;
    l->cnt++;
    return 0;
}

int kn_asg_list_add_builtin(kn_asg_list *l, const char *name, char *errstr, size_t errstr_size) {
    const kn_assignor *b = kn_asg_builtin(name);
    if (!b) {
        kn_errstr_set(errstr, errstr_size,
                      "unknown assignor \"%s\" (built-ins: range, roundrobin, sticky, cooperative-sticky)",
                      name ? name : "(null)");
        return KN_ERR__INVALID_ARG;
    }
    return asg_list_push(l, *b, NULL, errstr, errstr_size);
}

int kn_asg_list_add_custom(kn_asg_list *l, const char *name, unsigned protocols, kn_asg_assign_fn assign,
                           void *opaque, char *errstr, size_t errstr_size) {
    if (!name || !*name || !assign || !(protocols & (KN_ASG_EAGER | KN_ASG_COOPERATIVE)) ||
        (protocols & ~(KN_ASG_EAGER | KN_ASG_COOPERATIVE))) {
        kn_errstr_set(errstr, errstr_size, "custom assignor needs a name, an assign function and protocols");
        return KN_ERR__INVALID_ARG;
    }
    char *copy = kn_strdup(name);
    if (!copy)
        return KN_ERR__NOMEM;
    return asg_list_push(l, (kn_assignor){copy, protocols, assign, opaque}, copy, errstr, errstr_size);
}

int32_t kn_asg_list_count(const kn_asg_list *l) { return l->cnt; }

const kn_assignor *kn_asg_list_at(const kn_asg_list *l, int32_t i) {
    return i >= 0 && i < l->cnt ? &l->items[i] : NULL;
}

const kn_assignor *kn_asg_list_find(const kn_asg_list *l, const char *name) {
    if (!name)
        return NULL;
    for (int32_t i = 0; i < l->cnt; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    return NULL;
}

/*
 * asg_int.c: what the built-in algorithms share (asg_int.h): the
 * indexed view of an input (asg_ctx), member orders as Java walks them,
 * and sorted output.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/assignor/asg_int.h"
#include "consumer/assignor/java_order.h"
#include "error.h"
#include "kn_alloc.h"

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

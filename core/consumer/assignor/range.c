/*
 * range.c: the "range" assignor (Java RangeAssignor, 4.x).
 *
 * Per topic, the subscribed members in MemberInfo order (static members
 * by group.instance.id first, then by member id) each take a contiguous
 * run of partitions; the first (partitions % members) take one more.
 * When members and partition replicas carry racks and some partitions are
 * not on every rack, a rack-matching pass runs first: it only hands a
 * member partitions on its rack, within the same per-member quotas, and
 * topics with the same members and partition count are matched together
 * (partition p of all of them to one member) to keep co-partitioning.
 * The plain range pass then places whatever is left.
 */
#include <stdbool.h>
#include <string.h>

#include "consumer/assignor/asg_int.h"
#include "error.h"
#include "kn_alloc.h"

typedef struct rg_topic {
    int32_t t;
    int32_t *cons; /* subscribed members, MemberInfo order */
    int32_t ncons;
    bool has_racks; /* some member has a rack: partition racks are looked at */
    bool needs_rack;
    uint8_t *assigned; /* per partition */
    int32_t unassigned;
    int32_t *nassigned; /* per member (all nm) */
    int32_t per;
    int32_t extra;
    int32_t group; /* rack-matching group, -1 none yet */
} rg_topic;

static bool rg_racks_match(const asg_ctx *ctx, const rg_topic *st, int32_t m, int32_t p) {
    const char *rack = ctx->m_rack[m];
    if (!rack)
        return true;
    if (!st->has_racks)
        return false;
    return asg_racks_contain(asg_part_racks(ctx, ctx->t_base[st->t] + p), rack);
}

static int32_t rg_max_assignable(const rg_topic *st, int32_t m) {
    int32_t v = st->per + (st->extra > 0 ? 1 : 0) - st->nassigned[m];
    return v > 0 ? v : 0;
}

/* Assigns the listed partitions of st to m, as one Java assign() call. */
static int rg_assign(const asg_ctx *ctx, kn_asg_output *out, rg_topic *st, int32_t m, const int32_t *parts,
                     int32_t k) {
    for (int32_t i = 0; i < k; i++) {
        int rc = asg_emit(ctx, out, m, ctx->t_base[st->t] + parts[i]);
        if (rc)
            return rc;
        st->assigned[parts[i]] = 1;
    }
    st->unassigned -= k;
    st->nassigned[m] += k;
    if (st->nassigned[m] > st->per)
        st->extra--;
    return 0;
}

static int rg_assign_ranges(const asg_ctx *ctx, kn_asg_output *out, rg_topic *st, bool rack_match,
                            int32_t *scratch) {
    for (int32_t i = 0; i < st->ncons; i++) {
        if (st->unassigned == 0)
            break;
        int32_t m = st->cons[i], limit = rg_max_assignable(st, m), k = 0;
        for (int32_t p = 0; p < ctx->t_cnt[st->t] && k < limit; p++)
            if (!st->assigned[p] && (!rack_match || rg_racks_match(ctx, st, m, p)))
                scratch[k++] = p;
        if (k == 0)
            continue;
        int rc = rg_assign(ctx, out, st, m, scratch, k);
        if (rc)
            return rc;
    }
    return 0;
}

static int rg_copartitioned(const asg_ctx *ctx, kn_asg_output *out, rg_topic *states, const int32_t *grp,
                            int32_t ng, int32_t np, uint8_t *gone) {
    const rg_topic *first = &states[grp[0]];
    int32_t remaining = first->ncons;
    memset(gone, 0, (size_t)(first->ncons ? first->ncons : 1));
    for (int32_t p = 0; p < np; p++) {
        int32_t ci = -1;
        for (int32_t i = 0; i < first->ncons && ci < 0; i++) {
            if (gone[i])
                continue;
            bool all = true;
            for (int32_t g = 0; g < ng && all; g++)
                all = rg_racks_match(ctx, &states[grp[g]], first->cons[i], p) &&
                      rg_max_assignable(&states[grp[g]], first->cons[i]) > 0;
            if (all)
                ci = i;
        }
        if (ci < 0)
            continue;
        int32_t m = first->cons[ci];
        for (int32_t g = 0; g < ng; g++) {
            int rc = rg_assign(ctx, out, &states[grp[g]], m, &p, 1);
            if (rc)
                return rc;
        }
        bool any = false;
        for (int32_t g = 0; g < ng && !any; g++)
            any = rg_max_assignable(&states[grp[g]], m) > 0;
        if (!any) {
            gone[ci] = 1;
            if (--remaining == 0)
                break;
        }
    }
    return 0;
}

static bool rg_same_key(const asg_ctx *ctx, const rg_topic *a, const rg_topic *b) {
    if (a->ncons != b->ncons || memcmp(a->cons, b->cons, (size_t)a->ncons * sizeof *a->cons) != 0)
        return false;
    int32_t na = a->has_racks ? ctx->t_cnt[a->t] : 0, nb = b->has_racks ? ctx->t_cnt[b->t] : 0;
    return na == nb;
}

/* Java's useRackAwareAssignment for one topic. */
static bool rg_needs_rack(const asg_ctx *ctx, const rg_topic *st) {
    if (!st->has_racks)
        return false;
    /* union of partition racks, and whether every partition has all of them */
    const char **uni = NULL;
    int32_t nu = 0, cap = 0;
    bool ok = true, overlap = false;
    int32_t base = ctx->t_base[st->t];
    for (int32_t p = 0; p < ctx->t_cnt[st->t] && ok; p++) {
        const kn_asg_racks *r = asg_part_racks(ctx, base + p);
        for (int32_t i = 0; r && i < r->cnt; i++) {
            bool seen = false;
            for (int32_t j = 0; j < nu && !seen; j++)
                seen = strcmp(uni[j], r->names[i]) == 0;
            if (seen)
                continue;
            if (nu == cap) {
                cap = cap ? cap * 2 : 8;
                const char **nv = kn_realloc(uni, (size_t)cap * sizeof *nv);
                if (!nv) {
                    ok = false;
                    break;
                }
                uni = nv;
            }
            uni[nu++] = r->names[i];
        }
    }
    if (!ok) { /* out of memory: fall back to plain range, still a valid assignment */
        kn_free(uni);
        return false;
    }
    for (int32_t i = 0; i < st->ncons && !overlap; i++)
        for (int32_t j = 0; j < nu && !overlap; j++)
            overlap = ctx->m_rack[st->cons[i]] && strcmp(ctx->m_rack[st->cons[i]], uni[j]) == 0;
    bool all_equal = true;
    for (int32_t p = 0; p < ctx->t_cnt[st->t] && all_equal; p++) {
        const kn_asg_racks *r = asg_part_racks(ctx, base + p);
        /* distinct count of this partition's racks must equal the union's */
        int32_t d = 0;
        for (int32_t i = 0; r && i < r->cnt; i++) {
            bool dup = false;
            for (int32_t j = 0; j < i && !dup; j++)
                dup = strcmp(r->names[j], r->names[i]) == 0;
            d += !dup;
        }
        all_equal = d == nu;
    }
    kn_free(uni);
    return overlap && !all_equal;
}

int asg_range_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                     size_t errstr_size) {
    asg_ctx ctx;
    int rc = asg_ctx_init(&ctx, in, errstr, errstr_size);
    if (rc)
        return rc;
    int32_t nt = ctx.nt, nm = ctx.nm, maxp = 1;
    for (int32_t t = 0; t < nt; t++)
        if (ctx.t_cnt[t] > maxp)
            maxp = ctx.t_cnt[t];
    rg_topic *st = kn_calloc((size_t)(nt ? nt : 1), sizeof *st);
    int32_t *scratch = kn_malloc((size_t)maxp * sizeof *scratch);
    int32_t *grp = kn_malloc((size_t)(nt ? nt : 1) * sizeof *grp);
    uint8_t *gone = kn_malloc((size_t)(nm ? nm : 1));
    rc = KN_ERR__NOMEM;
    if (!st || !scratch || !grp || !gone)
        goto done;
    bool use_rack = false;
    for (int32_t t = 0; t < nt; t++) {
        rg_topic *s = &st[t];
        s->t = t;
        s->group = -1;
        s->cons = kn_malloc((size_t)(nm ? nm : 1) * sizeof *s->cons);
        s->nassigned = kn_calloc((size_t)(nm ? nm : 1), sizeof *s->nassigned);
        s->assigned = kn_calloc((size_t)ctx.t_cnt[t], 1);
        if (!s->cons || !s->nassigned || !s->assigned)
            goto done;
        for (int32_t i = 0; i < nm; i++) {
            int32_t m = ctx.m_sorted[i];
            if (asg_subscribes(&ctx, m, t)) {
                s->cons[s->ncons++] = m;
                if (ctx.m_rack[m])
                    s->has_racks = true;
            }
        }
        s->unassigned = ctx.t_cnt[t];
        s->per = s->ncons ? ctx.t_cnt[t] / s->ncons : 0;
        s->extra = s->ncons ? ctx.t_cnt[t] % s->ncons : 0;
        s->needs_rack = rg_needs_rack(&ctx, s);
        use_rack |= s->needs_rack;
    }
    if (use_rack) {
        /* Group topics by (members, partition count when racks are known);
         * groups are independent, so their order does not matter. */
        for (int32_t t = 0; t < nt; t++) {
            if (st[t].group >= 0)
                continue;
            int32_t ng = 0;
            for (int32_t u = t; u < nt; u++)
                if (st[u].group < 0 && rg_same_key(&ctx, &st[t], &st[u])) {
                    st[u].group = t;
                    grp[ng++] = u;
                }
            if (ng > 1) {
                int32_t np = st[t].has_racks ? ctx.t_cnt[t] : 0;
                if ((rc = rg_copartitioned(&ctx, out, st, grp, ng, np, gone)) != 0)
                    goto done;
            } else if (st[t].needs_rack) {
                if ((rc = rg_assign_ranges(&ctx, out, &st[t], true, scratch)) != 0)
                    goto done;
            }
        }
    }
    for (int32_t t = 0; t < nt; t++)
        if ((rc = rg_assign_ranges(&ctx, out, &st[t], false, scratch)) != 0)
            goto done;
    asg_output_sort(out);
    rc = 0;
done:
    if (rc == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "range assignor: out of memory");
    for (int32_t t = 0; st && t < nt; t++) {
        kn_free(st[t].cons);
        kn_free(st[t].nassigned);
        kn_free(st[t].assigned);
    }
    kn_free(st);
    kn_free(scratch);
    kn_free(grp);
    kn_free(gone);
    asg_ctx_free(&ctx);
    return rc;
}

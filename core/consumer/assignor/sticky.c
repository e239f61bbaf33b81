/*
 * sticky.c: the "sticky" and "cooperative-sticky" assignors (Java
 * StickyAssignor / CooperativeStickyAssignor over AbstractStickyAssignor,
 * 4.x): each member's previous partitions and generation (member data),
 * resolution of partitions claimed by several members (the highest
 * generation wins; a tie in one generation leaves it unowned), rack info,
 * and the constrained builder used when every member subscribes to the
 * same topics: members keep up to their quota of owned partitions, the
 * rest are dealt round-robin (rack-matched first). The general builder is
 * in sticky_general.c.
 *
 * cooperative-sticky then removes from the result every partition that
 * moves away from a member that owned it in this round: the owner revokes
 * it first and the follow-up rebalance hands it over.
 *
 * Java walks members in its HashMap order in the conflict resolution and
 * quota steps, which changes the result; ctx.m_jorder reproduces it.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/assignor/consumer_protocol.h"
#include "consumer/assignor/sticky_int.h"
#include "error.h"
#include "kn_alloc.h"

/* ---- int lists ---- */

int stk_push(stk_list *l, int32_t x) {
    if (l->n == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 8;
        int32_t *v = kn_realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return KN_ERR__NOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

void stk_remove_at(stk_list *l, int32_t i) {
    memmove(&l->v[i], &l->v[i + 1], (size_t)(l->n - i - 1) * sizeof *l->v);
    l->n--;
}

bool stk_remove(stk_list *l, int32_t x) {
    for (int32_t i = 0; i < l->n; i++)
        if (l->v[i] == x) {
            stk_remove_at(l, i);
            return true;
        }
    return false;
}

bool stk_contains(const stk_list *l, int32_t x) {
    for (int32_t i = 0; i < l->n; i++)
        if (l->v[i] == x)
            return true;
    return false;
}

void stk_list_free(stk_list *l) {
    kn_free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- member data, conflicts, racks ---- */

/* StickyAssignor.memberData / CooperativeStickyAssignor.memberData. */
static int stk_member_data(stk *s, bool coop) {
    const kn_asg_input *in = s->ctx.in;
    for (int32_t m = 0; m < s->ctx.nm; m++) {
        const kn_asg_member *mb = &in->members[m];
        const kn_asg_tp *parts = NULL;
        int32_t n = 0;
        if (coop) {
            parts = mb->owned;
            n = mb->owned_cnt;
            if (mb->generation >= 0) {
                s->md_has_gen[m] = true;
                s->md_gen[m] = mb->generation;
            } else {
                kn_cp_coop_user_data_decode(mb->user_data, mb->user_data_len, &s->md_has_gen[m],
                                            &s->md_gen[m]);
            }
        } else {
            kn_asg_tp *dp;
            int rc = kn_cp_sticky_user_data_decode(mb->user_data, mb->user_data_len, &s->arena, &dp, &n,
                                                   &s->md_has_gen[m], &s->md_gen[m]);
            if (rc)
                return rc;
            parts = dp;
        }
        /* partitions of topics without metadata are dropped here, as Java
         * drops them; a partition number past the topic's count cannot be
         * represented and is dropped too (Java would carry it along) */
        for (int32_t i = 0; i < n; i++) {
            int32_t g = asg_part_find(&s->ctx, parts[i].topic, parts[i].partition);
            if (g >= 0 && stk_push(&s->md_parts[m], g))
                return KN_ERR__NOMEM;
        }
    }
    return 0;
}

static bool stk_same_topics(const kn_asg_member *first, const kn_asg_member *m) {
    /* Java: m's topic list size equals the first member's topic set size,
     * and the set contains every topic of m */
    int32_t distinct = 0;
    for (int32_t i = 0; i < first->topic_cnt; i++) {
        bool dup = false;
        for (int32_t j = 0; j < i && !dup; j++)
            dup = strcmp(first->topics[i], first->topics[j]) == 0;
        distinct += !dup;
    }
    if (m->topic_cnt != distinct)
        return false;
    for (int32_t i = 0; i < m->topic_cnt; i++) {
        bool found = false;
        for (int32_t j = 0; j < first->topic_cnt && !found; j++)
            found = strcmp(m->topics[i], first->topics[j]) == 0;
        if (!found)
            return false;
    }
    return true;
}

/* AbstractStickyAssignor.allSubscriptionsEqual: also fills owned, multi
 * and max_gen. */
static int stk_all_equal(stk *s) {
    const kn_asg_input *in = s->ctx.in;
    int32_t *prev_owner = kn_malloc((size_t)(s->ctx.np ? s->ctx.np : 1) * sizeof *prev_owner);
    if (!prev_owner)
        return KN_ERR__NOMEM;
    for (int32_t g = 0; g < s->ctx.np; g++)
        prev_owner[g] = -1;
    s->all_equal = true;
    int32_t first = -1;
    for (int32_t k = 0; k < s->ctx.nm; k++) {
        int32_t m = s->ctx.m_jorder[k];
        const kn_asg_member *mb = &in->members[m];
        if (first < 0 || in->members[first].topic_cnt == 0)
            first = m; /* Java refills its set while it is empty */
        else if (s->all_equal && !stk_same_topics(&in->members[first], mb))
            s->all_equal = false;
        int32_t gen = s->md_has_gen[m] ? s->md_gen[m] : KN_ASG_NO_GENERATION;
        if (gen > s->max_gen)
            s->max_gen = gen;
        for (int32_t i = 0; i < s->md_parts[m].n; i++) {
            int32_t g = s->md_parts[m].v[i], other = prev_owner[g];
            if (other < 0) {
                if (stk_push(&s->owned[m], g))
                    goto nomem;
                prev_owner[g] = m;
                continue;
            }
            /* Java compares with the other's subscription generation */
            int32_t ogen = in->members[other].generation >= 0 ? in->members[other].generation : -1;
            if (gen == ogen) {
                s->multi[g] = 1;
                stk_remove(&s->owned[other], g);
                prev_owner[g] = m;
            } else if (gen > ogen) {
                if (stk_push(&s->owned[m], g))
                    goto nomem;
                stk_remove(&s->owned[other], g);
                prev_owner[g] = m;
            }
        }
    }
    kn_free(prev_owner);
    return 0;
nomem:
    kn_free(prev_owner);
    return KN_ERR__NOMEM;
}

bool stk_racks_mismatch(const stk *s, int32_t m, int32_t g) {
    const char *rack = stk_crack(s, m);
    return rack && !asg_racks_contain(asg_part_racks(&s->ctx, g), rack);
}

/* Java RackInfo: whether rack-aware assignment is on, and the number of
 * same-rack members per partition (used to order unassigned partitions). */
static int stk_rack_info(stk *s) {
    const asg_ctx *c = &s->ctx;
    bool any_member = false;
    for (int32_t m = 0; m < c->nm; m++)
        any_member |= c->m_rack[m] != NULL;
    if (!any_member)
        return 0;
    s->ncons_by_part = kn_calloc((size_t)(c->np ? c->np : 1), sizeof *s->ncons_by_part);
    if (!s->ncons_by_part)
        return KN_ERR__NOMEM;
    /* union of partition racks */
    const char **uni = NULL;
    int32_t nu = 0, cap = 0;
    for (int32_t g = 0; g < c->np; g++) {
        const kn_asg_racks *r = asg_part_racks(c, g);
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
                    kn_free(uni);
                    return KN_ERR__NOMEM;
                }
                uni = nv;
            }
            uni[nu++] = r->names[i];
        }
    }
    bool overlap = false, all_equal = true;
    for (int32_t m = 0; m < c->nm && !overlap; m++)
        for (int32_t j = 0; c->m_rack[m] && j < nu && !overlap; j++)
            overlap = strcmp(c->m_rack[m], uni[j]) == 0;
    for (int32_t g = 0; g < c->np; g++) {
        const kn_asg_racks *r = asg_part_racks(c, g);
        int32_t d = 0, sum = 0;
        for (int32_t i = 0; r && i < r->cnt; i++) {
            bool dup = false;
            for (int32_t j = 0; j < i && !dup; j++)
                dup = strcmp(r->names[j], r->names[i]) == 0;
            if (dup)
                continue;
            d++;
            for (int32_t m = 0; m < c->nm; m++)
                sum += c->m_rack[m] && strcmp(c->m_rack[m], r->names[i]) == 0;
        }
        if (d != nu)
            all_equal = false;
        s->ncons_by_part[g] = sum;
    }
    kn_free(uni);
    s->rack_use = overlap && !all_equal;
    return 0;
}

/* ---- constrained builder ---- */

typedef struct stk_cons {
    stk *s;
    int32_t min_quota, max_quota, expected_over, current_over;
    stk_list under;         /* unfilledMembersWithUnderMinQuotaPartitions */
    stk_list exact;         /* unfilledMembersWithExactlyMinQuotaPartitions */
    int32_t *maybe_revoked; /* per partition: member or -1 */
} stk_cons;

static int stk_assign_new(stk_cons *b, int32_t g, int32_t m) {
    stk *s = b->s;
    if (stk_push(&s->result[m], g))
        return -1;
    if ((b->maybe_revoked[g] >= 0 && b->maybe_revoked[g] != m) || s->multi[g])
        s->transfer[g] = m;
    return s->result[m].n;
}

static void stk_sort_members(const asg_ctx *c, stk_list *l) {
    for (int32_t i = 1; i < l->n; i++) {
        int32_t x = l->v[i], j = i - 1;
        while (j >= 0 && strcmp(c->in->members[l->v[j]].member_id, c->in->members[x].member_id) > 0) {
            l->v[j + 1] = l->v[j];
            j--;
        }
        l->v[j + 1] = x;
    }
}

/* RackInfo.nextRackConsumer */
static int32_t stk_next_rack_consumer(const stk *s, int32_t g, const stk_list *l, int32_t first) {
    const kn_asg_racks *r = asg_part_racks(&s->ctx, g);
    if (!r || r->cnt == 0)
        return -1;
    for (int32_t i = 0; i < l->n; i++) {
        int32_t idx = (first + i) % l->n;
        const char *rack = stk_crack(s, l->v[idx]);
        if (rack && asg_racks_contain(r, rack))
            return idx;
    }
    return -1;
}

static int stk_cons_owned(stk_cons *b, int32_t *sorted) {
    stk *s = b->s;
    const asg_ctx *c = &s->ctx;
    for (int32_t k = 0; k < c->nm; k++) {
        int32_t m = c->m_jorder[k], n = 0;
        const stk_list *own = &s->owned[m];
        for (int32_t i = 0; i < own->n; i++) {
            int32_t g = own->v[i];
            if (stk_racks_mismatch(s, m, g))
                b->maybe_revoked[g] = m;
            else
                sorted[n++] = g;
        }
        /* by partition number, then topic (Java's comparator) */
        for (int32_t i = 1; i < n; i++) {
            int32_t x = sorted[i], j = i - 1;
            while (j >= 0 && (asg_part_num(c, sorted[j]) > asg_part_num(c, x) ||
                              (asg_part_num(c, sorted[j]) == asg_part_num(c, x) && sorted[j] > x))) {
                sorted[j + 1] = sorted[j];
                j--;
            }
            sorted[j + 1] = x;
        }
        int32_t w = 0;
        for (int32_t i = 0; i < n; i++)
            if (!s->multi[sorted[i]])
                sorted[w++] = sorted[i];
        n = w;
        int32_t keep;
        if (n < b->min_quota) {
            keep = n;
            if (stk_push(&b->under, m))
                return KN_ERR__NOMEM;
        } else if (n >= b->max_quota && b->current_over < b->expected_over) {
            b->current_over++;
            if (b->current_over == b->expected_over)
                b->exact.n = 0;
            keep = b->max_quota;
        } else {
            keep = b->min_quota;
            if (b->current_over < b->expected_over && stk_push(&b->exact, m))
                return KN_ERR__NOMEM;
        }
        for (int32_t i = 0; i < n; i++) {
            if (i < keep) {
                if (stk_push(&s->result[m], sorted[i]))
                    return KN_ERR__NOMEM;
            } else {
                b->maybe_revoked[sorted[i]] = m;
            }
        }
    }
    return 0;
}

static int stk_cons_rack_rr(stk_cons *b, stk_list *unassigned) {
    stk *s = b->s;
    if (!s->rack_use)
        return 0;
    int32_t next = 0, w = 0;
    for (int32_t i = 0; i < unassigned->n; i++) {
        int32_t g = unassigned->v[i], m = -1;
        int32_t idx = stk_next_rack_consumer(s, g, &b->under, next);
        if (idx >= 0) {
            m = b->under.v[idx];
            int32_t cnt = s->result[m].n + 1;
            if (cnt >= b->min_quota) {
                stk_remove(&b->under, m);
                if (cnt < b->max_quota && b->current_over < b->expected_over && stk_push(&b->exact, m))
                    return KN_ERR__NOMEM;
            } else {
                idx++;
            }
            next = b->under.n == 0 ? 0 : idx % b->under.n;
        } else if (b->exact.n > 0) {
            int32_t first = stk_next_rack_consumer(s, g, &b->exact, 0);
            if (first >= 0) {
                m = b->exact.v[first];
                if (s->result[m].n + 1 == b->max_quota) {
                    stk_remove_at(&b->exact, first);
                    b->current_over++;
                    if (b->current_over == b->expected_over)
                        b->exact.n = 0;
                }
            }
        }
        if (m >= 0) {
            if (stk_assign_new(b, g, m) < 0)
                return KN_ERR__NOMEM;
        } else {
            unassigned->v[w++] = g;
        }
    }
    unassigned->n = w;
    return 0;
}

static int stk_cons_rr(stk_cons *b, const stk_list *unassigned, char *errstr, size_t errstr_size) {
    int32_t it = 0; /* iterator over b->under: index of the next element */
    for (int32_t i = 0; i < unassigned->n; i++) {
        int32_t g = unassigned->v[i], m;
        if (it < b->under.n) {
            m = b->under.v[it++];
        } else if (b->under.n == 0 && b->exact.n == 0) {
            kn_errstr_set(errstr, errstr_size, "sticky: no more unfilled consumers to be assigned");
            return KN_ERR__FAIL;
        } else if (b->under.n == 0) {
            m = b->exact.v[0];
            stk_remove_at(&b->exact, 0);
        } else {
            it = 0;
            m = b->under.v[it++];
        }
        int32_t cnt = stk_assign_new(b, g, m);
        if (cnt < 0)
            return KN_ERR__NOMEM;
        if (cnt == b->min_quota && it > 0) {
            stk_remove_at(&b->under, --it);
            if (stk_push(&b->exact, m))
                return KN_ERR__NOMEM;
        } else if (cnt == b->max_quota) {
            b->current_over++;
        }
    }
    return 0;
}

static int stk_constrained_build(stk *s, char *errstr, size_t errstr_size) {
    const asg_ctx *c = &s->ctx;
    stk_cons b;
    memset(&b, 0, sizeof b);
    b.s = s;
    int32_t np = c->np, nm = c->nm;
    b.min_quota = np / nm;
    b.max_quota = (np + nm - 1) / nm;
    b.expected_over = np % nm;
    stk_list unassigned = {0};
    int32_t *sorted = kn_malloc((size_t)(np ? np : 1) * sizeof *sorted);
    uint8_t *taken = kn_calloc((size_t)(np ? np : 1), 1);
    b.maybe_revoked = kn_malloc((size_t)(np ? np : 1) * sizeof *b.maybe_revoked);
    s->transfer = kn_malloc((size_t)(np ? np : 1) * sizeof *s->transfer);
    int rc = KN_ERR__NOMEM;
    if (!sorted || !taken || !b.maybe_revoked || !s->transfer)
        goto done;
    for (int32_t g = 0; g < np; g++)
        b.maybe_revoked[g] = s->transfer[g] = -1;
    if ((rc = stk_cons_owned(&b, sorted)) != 0)
        goto done;
    for (int32_t m = 0; m < nm; m++)
        for (int32_t i = 0; i < s->result[m].n; i++)
            taken[s->result[m].v[i]] = 1;
    rc = KN_ERR__NOMEM;
    for (int32_t g = 0; g < np; g++)
        if (!taken[g] && stk_push(&unassigned, g))
            goto done;
    stk_sort_members(c, &b.under);
    stk_sort_members(c, &b.exact);
    if (s->ncons_by_part) { /* stable sort by same-rack member count */
        for (int32_t i = 1; i < unassigned.n; i++) {
            int32_t x = unassigned.v[i], j = i - 1;
            while (j >= 0 && s->ncons_by_part[unassigned.v[j]] > s->ncons_by_part[x]) {
                unassigned.v[j + 1] = unassigned.v[j];
                j--;
            }
            unassigned.v[j + 1] = x;
        }
    }
    if ((rc = stk_cons_rack_rr(&b, &unassigned)) != 0)
        goto done;
    if ((rc = stk_cons_rr(&b, &unassigned, errstr, errstr_size)) != 0)
        goto done;
    /* verifyUnfilledMembers */
    if (b.under.n > 0) {
        if (b.current_over != b.expected_over) {
            kn_errstr_set(errstr, errstr_size, "sticky: expected members over the min quota not reached");
            rc = KN_ERR__FAIL;
            goto done;
        }
        for (int32_t i = 0; i < b.under.n; i++)
            if (s->result[b.under.v[i]].n != b.min_quota) {
                kn_errstr_set(errstr, errstr_size, "sticky: member %s below the min quota",
                              c->in->members[b.under.v[i]].member_id);
                rc = KN_ERR__FAIL;
                goto done;
            }
    }
    rc = 0;
done:
    kn_free(sorted);
    kn_free(taken);
    kn_free(b.maybe_revoked);
    stk_list_free(&unassigned);
    stk_list_free(&b.under);
    stk_list_free(&b.exact);
    return rc;
}

/* ---- entry points ---- */

static void stk_free(stk *s) {
    for (int32_t m = 0; m < s->ctx.nm; m++) {
        if (s->owned)
            stk_list_free(&s->owned[m]);
        if (s->md_parts)
            stk_list_free(&s->md_parts[m]);
        if (s->result)
            stk_list_free(&s->result[m]);
    }
    kn_free(s->owned);
    kn_free(s->md_parts);
    kn_free(s->result);
    kn_free(s->multi);
    kn_free(s->md_has_gen);
    kn_free(s->md_gen);
    kn_free(s->ncons_by_part);
    kn_free(s->transfer);
    kn_arena_destroy(&s->arena);
    asg_ctx_free(&s->ctx);
}

/* Cooperative: partitions that change owner in this round (general
 * builder): added to a member that did not own them and revoked from a
 * member that did (by the owned lists of the subscriptions). */
static int stk_coop_transfers(stk *s) {
    const asg_ctx *c = &s->ctx;
    int32_t np = c->np;
    int32_t *added = kn_malloc((size_t)(np ? np : 1) * sizeof *added);
    uint8_t *revoked = kn_calloc((size_t)(np ? np : 1), 1);
    uint8_t *mine = kn_calloc((size_t)(np ? np : 1), 1);
    s->transfer = kn_malloc((size_t)(np ? np : 1) * sizeof *s->transfer);
    if (!added || !revoked || !mine || !s->transfer) {
        kn_free(added);
        kn_free(revoked);
        kn_free(mine);
        return KN_ERR__NOMEM;
    }
    for (int32_t g = 0; g < np; g++)
        added[g] = s->transfer[g] = -1;
    for (int32_t k = 0; k < c->nm; k++) {
        int32_t m = c->m_jorder[k];
        const kn_asg_member *mb = &c->in->members[m];
        for (int32_t i = 0; i < mb->owned_cnt; i++) {
            int32_t g = asg_part_find(c, mb->owned[i].topic, mb->owned[i].partition);
            if (g >= 0)
                mine[g] = 1;
        }
        for (int32_t i = 0; i < s->result[m].n; i++)
            if (!mine[s->result[m].v[i]])
                added[s->result[m].v[i]] = m;
        for (int32_t i = 0; i < mb->owned_cnt; i++) {
            int32_t g = asg_part_find(c, mb->owned[i].topic, mb->owned[i].partition);
            if (g >= 0) {
                mine[g] = 0;
                if (!stk_contains(&s->result[m], g))
                    revoked[g] = 1;
            }
        }
    }
    for (int32_t g = 0; g < np; g++)
        if (added[g] >= 0 && revoked[g])
            s->transfer[g] = added[g];
    kn_free(added);
    kn_free(revoked);
    kn_free(mine);
    return 0;
}

static int stk_assign(const kn_asg_input *in, kn_asg_output *out, bool coop, char *errstr,
                      size_t errstr_size) {
    stk s;
    memset(&s, 0, sizeof s);
    kn_arena_init(&s.arena, 4096);
    int rc = asg_ctx_init(&s.ctx, in, errstr, errstr_size);
    if (rc) {
        kn_arena_destroy(&s.arena);
        return rc;
    }
    int32_t nm = s.ctx.nm, np = s.ctx.np;
    s.max_gen = KN_ASG_NO_GENERATION;
    s.owned = kn_calloc((size_t)(nm ? nm : 1), sizeof *s.owned);
    s.md_parts = kn_calloc((size_t)(nm ? nm : 1), sizeof *s.md_parts);
    s.result = kn_calloc((size_t)(nm ? nm : 1), sizeof *s.result);
    s.md_has_gen = kn_calloc((size_t)(nm ? nm : 1), sizeof *s.md_has_gen);
    s.md_gen = kn_calloc((size_t)(nm ? nm : 1), sizeof *s.md_gen);
    s.multi = kn_calloc((size_t)(np ? np : 1), 1);
    rc = KN_ERR__NOMEM;
    if (!s.owned || !s.md_parts || !s.result || !s.md_has_gen || !s.md_gen || !s.multi)
        goto done;
    if (nm == 0) {
        rc = 0;
        goto done;
    }
    if ((rc = stk_member_data(&s, coop)) != 0 || (rc = stk_all_equal(&s)) != 0 ||
        (rc = stk_rack_info(&s)) != 0)
        goto done;
    if (s.all_equal)
        rc = stk_constrained_build(&s, errstr, errstr_size);
    else
        rc = stk_general_build(&s, errstr, errstr_size);
    if (rc)
        goto done;
    if (coop) {
        if (!s.all_equal && (rc = stk_coop_transfers(&s)) != 0)
            goto done;
        for (int32_t g = 0; g < np; g++)
            if (s.transfer[g] >= 0)
                stk_remove(&s.result[s.transfer[g]], g);
    }
    for (int32_t m = 0; m < nm; m++)
        for (int32_t i = 0; i < s.result[m].n; i++)
            if ((rc = asg_emit(&s.ctx, out, m, s.result[m].v[i])) != 0)
                goto done;
    asg_output_sort(out);
    rc = 0;
done:
    if (rc == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "sticky assignor: out of memory");
    stk_free(&s);
    return rc;
}

int asg_sticky_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                      size_t errstr_size) {
    return stk_assign(in, out, false, errstr, errstr_size);
}

int asg_coop_sticky_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                           size_t errstr_size) {
    return stk_assign(in, out, true, errstr, errstr_size);
}

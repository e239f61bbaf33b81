/*
 * sticky_general.c: the sticky assignors' general builder (Java
 * AbstractStickyAssignor.GeneralAssignmentBuilder), used when members
 * subscribe to different topics.
 *
 * Members keep the owned partitions they still subscribe to (and whose
 * rack matches); unassigned partitions go to the member with the fewest
 * partitions that can take them; then partitions move, one at a time,
 * from members with more than one partition above another subscriber,
 * preferring to hand a partition back to its previous-generation owner,
 * until the assignment is balanced. A reassignment that does not improve
 * the balance score is undone. Partition movements are recorded so that
 * a move reverses an earlier one where possible (stickiness); which of
 * several such partitions Java picks depends on its HashSet order, which
 * is reproduced (java_order.h).
 *
 * Where Java's builder throws (a NullPointerException when a partition's
 * previous owner was set aside as unable to take part in reassignment),
 * this returns KN_ERR__FAIL, as a Java leader would fail the assignment.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/assignor/java_order.h"
#include "consumer/assignor/sticky_int.h"
#include "error.h"
#include "kn_alloc.h"

typedef struct mv_elem {
    int32_t g;
    int32_t seq;
} mv_elem;

/* One (topic, src -> dst) HashSet of moved partitions. */
typedef struct mv_set {
    int32_t topic, src, dst;
    int32_t cap; /* Java HashSet table capacity */
    int32_t next_seq;
    mv_elem *e;
    int32_t n, ecap;
    bool live;
} mv_set;

typedef struct gen {
    stk *s;
    const asg_ctx *c;
    int32_t *cpc;  /* currentPartitionConsumer, -1 none */
    bool *present; /* member still in currentAssignment (not set aside) */
    int32_t *ss;   /* sortedCurrentSubscriptions */
    int32_t ss_n;
    int32_t *tcons_n; /* potential consumers per topic */
    int32_t **tcons;  /* potential consumers per topic, subscription map order */
    int32_t *maxsize; /* per member: partitions of all its topics */
    int32_t *prev_m, *prev_gen;
    stk_list all; /* sortedAllPartitions */
    stk_list unassigned;
    bool revocation_required;
    /* partition movements */
    int32_t *mv_src, *mv_dst;
    int32_t *topic_sets;
    mv_set *sets;
    int32_t nsets, setcap;
} gen;

#define GEN_THROW (-1)

/* ---- sorted member set: (partition count, member id) ---- */

static int gen_key_cmp(const gen *G, int32_t a, int32_t b) {
    int32_t na = G->s->result[a].n, nb = G->s->result[b].n;
    if (na != nb)
        return na < nb ? -1 : 1;
    return strcmp(G->c->in->members[a].member_id, G->c->in->members[b].member_id);
}

static int32_t gen_ss_pos(const gen *G, int32_t m) {
    int32_t lo = 0, hi = G->ss_n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (gen_key_cmp(G, G->ss[mid], m) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void gen_ss_add(gen *G, int32_t m) {
    int32_t p = gen_ss_pos(G, m);
    if (p < G->ss_n && G->ss[p] == m)
        return;
    memmove(&G->ss[p + 1], &G->ss[p], (size_t)(G->ss_n - p) * sizeof *G->ss);
    G->ss[p] = m;
    G->ss_n++;
}

static void gen_ss_remove(gen *G, int32_t m) {
    int32_t p = gen_ss_pos(G, m);
    if (p < G->ss_n && G->ss[p] == m) {
        memmove(&G->ss[p], &G->ss[p + 1], (size_t)(G->ss_n - p - 1) * sizeof *G->ss);
        G->ss_n--;
    }
}

/* ---- partition movements ---- */

static mv_set *mv_find(gen *G, int32_t t, int32_t src, int32_t dst) {
    for (int32_t i = 0; i < G->nsets; i++) {
        mv_set *m = &G->sets[i];
        if (m->live && m->topic == t && m->src == src && m->dst == dst)
            return m;
    }
    return NULL;
}

static int mv_add_record(gen *G, int32_t g, int32_t src, int32_t dst) {
    int32_t t = G->c->p_topic[g];
    G->mv_src[g] = src;
    G->mv_dst[g] = dst;
    mv_set *m = mv_find(G, t, src, dst);
    if (!m) {
        if (G->nsets == G->setcap) {
            int32_t cap = G->setcap ? G->setcap * 2 : 16;
            mv_set *ns = kn_realloc(G->sets, (size_t)cap * sizeof *ns);
            if (!ns)
                return KN_ERR__NOMEM;
            G->sets = ns;
            G->setcap = cap;
        }
        m = &G->sets[G->nsets++];
        memset(m, 0, sizeof *m);
        m->topic = t;
        m->src = src;
        m->dst = dst;
        m->cap = 16;
        m->live = true;
        G->topic_sets[t]++;
    }
    if (m->n == m->ecap) {
        int32_t cap = m->ecap ? m->ecap * 2 : 8;
        mv_elem *ne = kn_realloc(m->e, (size_t)cap * sizeof *ne);
        if (!ne)
            return KN_ERR__NOMEM;
        m->e = ne;
        m->ecap = cap;
    }
    m->e[m->n++] = (mv_elem){g, m->next_seq++};
    if (m->n > m->cap / 4 * 3)
        m->cap *= 2;
    return 0;
}

static void mv_remove_record(gen *G, int32_t g) {
    int32_t t = G->c->p_topic[g];
    mv_set *m = mv_find(G, t, G->mv_src[g], G->mv_dst[g]);
    G->mv_src[g] = G->mv_dst[g] = -1;
    if (!m)
        return;
    for (int32_t i = 0; i < m->n; i++)
        if (m->e[i].g == g) {
            memmove(&m->e[i], &m->e[i + 1], (size_t)(m->n - i - 1) * sizeof *m->e);
            m->n--;
            break;
        }
    if (m->n == 0) {
        m->live = false;
        kn_free(m->e);
        m->e = NULL;
        m->ecap = 0;
        G->topic_sets[t]--;
    }
}

static int mv_move(gen *G, int32_t g, int32_t old, int32_t nw) {
    if (G->mv_src[g] >= 0) {
        int32_t src = G->mv_src[g];
        mv_remove_record(G, g);
        if (src != nw)
            return mv_add_record(G, g, src, nw);
        return 0;
    }
    return mv_add_record(G, g, old, nw);
}

/* First element of the set in Java HashSet iteration order. */
static int32_t mv_first(const gen *G, const mv_set *m) {
    int32_t best = -1;
    uint32_t bb = 0;
    int32_t bs = 0;
    for (int32_t i = 0; i < m->n; i++) {
        int32_t g = m->e[i].g, t = G->c->p_topic[g];
        uint32_t b = kn_jorder_bucket(kn_jorder_tp_hash(G->c->t_hash[t], asg_part_num(G->c, g)), m->cap);
        if (best < 0 || b < bb || (b == bb && m->e[i].seq < bs)) {
            best = g;
            bb = b;
            bs = m->e[i].seq;
        }
    }
    return best;
}

static int32_t mv_actual(gen *G, int32_t g, int32_t old, int32_t nw) {
    int32_t t = G->c->p_topic[g];
    if (G->topic_sets[t] == 0)
        return g;
    if (G->mv_src[g] >= 0)
        old = G->mv_src[g];
    mv_set *m = mv_find(G, t, nw, old);
    return m ? mv_first(G, m) : g;
}

/* ---- moves ---- */

static int gen_process_move(gen *G, int32_t g, int32_t nw) {
    int32_t old = G->cpc[g];
    gen_ss_remove(G, old);
    gen_ss_remove(G, nw);
    int rc = mv_move(G, g, old, nw);
    if (rc)
        return rc;
    stk_remove(&G->s->result[old], g);
    if (stk_push(&G->s->result[nw], g))
        return KN_ERR__NOMEM;
    G->cpc[g] = nw;
    gen_ss_add(G, nw);
    gen_ss_add(G, old);
    return 0;
}

static int gen_reassign_to(gen *G, int32_t g, int32_t nw) {
    return gen_process_move(G, mv_actual(G, g, G->cpc[g], nw), nw);
}

static int gen_reassign(gen *G, int32_t g) {
    int32_t t = G->c->p_topic[g];
    for (int32_t i = 0; i < G->ss_n; i++)
        if (asg_subscribes(G->c, G->ss[i], t))
            return gen_reassign_to(G, g, G->ss[i]);
    return KN_ERR__FAIL; /* Java asserts a subscriber exists */
}

/* 1 balanced, 0 not, GEN_THROW where Java dereferences null. */
static int gen_is_balanced(const gen *G) {
    const stk *s = G->s;
    if (G->ss_n == 0)
        return GEN_THROW;
    int32_t min = s->result[G->ss[0]].n, max = s->result[G->ss[G->ss_n - 1]].n;
    if (min >= max - 1)
        return 1;
    for (int32_t i = 0; i < G->ss_n; i++) {
        int32_t m = G->ss[i], cnt = s->result[m].n;
        if (cnt == G->maxsize[m])
            continue;
        const kn_asg_member *mb = &G->c->in->members[m];
        for (int32_t j = 0; j < mb->topic_cnt; j++) {
            int32_t t = asg_topic_find(G->c, mb->topics[j]);
            if (t < 0)
                continue;
            for (int32_t p = 0; p < G->c->t_cnt[t]; p++) {
                int32_t g = G->c->t_base[t] + p, other = G->cpc[g];
                if (other == m)
                    continue;
                if (other < 0 || !G->present[other])
                    return GEN_THROW;
                if (cnt + 1 < s->result[other].n)
                    return 0;
            }
        }
    }
    return 1;
}

static int gen_perform(gen *G, const stk_list *list, bool *performed) {
    const stk *s = G->s;
    bool modified;
    *performed = false;
    do {
        modified = false;
        for (int32_t i = 0; i < list->n; i++) {
            int b = gen_is_balanced(G);
            if (b == GEN_THROW)
                return KN_ERR__FAIL;
            if (b)
                break;
            int32_t g = list->v[i], t = G->c->p_topic[g], m = G->cpc[g];
            if (m < 0 || !G->present[m])
                return KN_ERR__FAIL;
            int32_t size = s->result[m].n;
            if (G->prev_m[g] >= 0) {
                int32_t pm = G->prev_m[g];
                if (!G->present[pm])
                    return KN_ERR__FAIL;
                if (size > s->result[pm].n + 1) {
                    int rc = gen_reassign_to(G, g, pm);
                    if (rc)
                        return rc;
                    *performed = modified = true;
                    continue;
                }
            }
            const char *crack = stk_crack(s, m);
            const kn_asg_racks *pr = asg_part_racks(G->c, g);
            bool found = false;
            if (crack && pr && pr->cnt > 0 && asg_racks_contain(pr, crack)) {
                for (int32_t k = 0; k < G->tcons_n[t] && !found; k++) {
                    int32_t o = G->tcons[t][k];
                    const char *orack = stk_crack(s, o);
                    if (!orack || !asg_racks_contain(pr, orack))
                        continue;
                    if (!G->present[o])
                        return KN_ERR__FAIL;
                    if (size > s->result[o].n + 1) {
                        int rc = gen_reassign(G, g);
                        if (rc)
                            return rc;
                        *performed = modified = found = true;
                    }
                }
            }
            if (!found) {
                for (int32_t k = 0; k < G->tcons_n[t]; k++) {
                    int32_t o = G->tcons[t][k];
                    if (!G->present[o])
                        return KN_ERR__FAIL;
                    if (size > s->result[o].n + 1) {
                        int rc = gen_reassign(G, g);
                        if (rc)
                            return rc;
                        *performed = modified = true;
                        break;
                    }
                }
            }
        }
    } while (modified);
    return 0;
}

/* maybeAssign: each partition to the first member (fewest partitions)
 * that subscribes to it (and, on the rack pass, whose rack matches). */
static int gen_maybe_assign(gen *G, stk_list *list, bool rack, bool remove) {
    int32_t w = 0;
    for (int32_t i = 0; i < list->n; i++) {
        int32_t g = list->v[i], t = G->c->p_topic[g];
        bool assigned = false;
        for (int32_t k = 0; G->tcons_n[t] > 0 && k < G->ss_n && !assigned; k++) {
            int32_t m = G->ss[k];
            if (asg_subscribes(G->c, m, t) && (!rack || !stk_racks_mismatch(G->s, m, g))) {
                gen_ss_remove(G, m);
                if (stk_push(&G->s->result[m], g))
                    return KN_ERR__NOMEM;
                G->cpc[g] = m;
                gen_ss_add(G, m);
                assigned = true;
            }
        }
        if (!(assigned && remove))
            list->v[w++] = g;
    }
    list->n = w;
    return 0;
}

static int64_t gen_score(const gen *G, const stk_list *lists) {
    int64_t score = 0;
    for (int32_t a = 0; a < G->c->nm; a++)
        for (int32_t b = a + 1; G->present[a] && b < G->c->nm; b++)
            if (G->present[b])
                score += llabs((long long)lists[a].n - lists[b].n);
    return score;
}

static bool gen_can_participate(const gen *G, int32_t m) {
    const stk_list *l = &G->s->result[m];
    if (l->n < G->maxsize[m])
        return true;
    for (int32_t i = 0; i < l->n; i++)
        if (G->tcons_n[G->c->p_topic[l->v[i]]] >= 2)
            return true;
    return false;
}

static void gen_filter_fixed(stk_list *l, const uint8_t *fixed) {
    int32_t w = 0;
    for (int32_t i = 0; i < l->n; i++)
        if (!fixed[l->v[i]])
            l->v[w++] = l->v[i];
    l->n = w;
}

static int gen_balance(gen *G) {
    stk *s = G->s;
    const asg_ctx *c = G->c;
    int32_t nm = c->nm, np = c->np;
    int rc = KN_ERR__NOMEM;
    stk_list tmp = {0};
    stk_list *pre = kn_calloc((size_t)nm, sizeof *pre);
    int32_t *pre_cpc = kn_malloc((size_t)(np ? np : 1) * sizeof *pre_cpc);
    uint8_t *fixed = kn_calloc((size_t)(np ? np : 1), 1);
    if (!pre || !pre_cpc || !fixed)
        goto done;
    bool initializing = s->result[G->ss[G->ss_n - 1]].n == 0;
    stk_list *to_assign = &G->unassigned;
    if (s->rack_use) {
        for (int32_t i = 0; i < G->unassigned.n; i++)
            if (stk_push(&tmp, G->unassigned.v[i]))
                goto done;
        if ((rc = gen_maybe_assign(G, &tmp, true, true)) != 0)
            goto done;
        to_assign = &tmp;
    }
    /* without removal: the list keeps its partitions */
    stk_list keep = *to_assign;
    int32_t *copy = kn_malloc((size_t)(keep.n ? keep.n : 1) * sizeof *copy);
    if (!copy) {
        rc = KN_ERR__NOMEM;
        goto done;
    }
    if (keep.n)
        memcpy(copy, keep.v, (size_t)keep.n * sizeof *copy);
    keep.v = copy;
    rc = gen_maybe_assign(G, &keep, false, false);
    kn_free(copy);
    if (rc)
        goto done;
    for (int32_t t = 0; t < c->nt; t++)
        if (G->tcons_n[t] < 2)
            for (int32_t p = 0; p < c->t_cnt[t]; p++)
                fixed[c->t_base[t] + p] = 1;
    gen_filter_fixed(&G->all, fixed);
    gen_filter_fixed(&G->unassigned, fixed);
    for (int32_t m = 0; m < nm; m++)
        if (!gen_can_participate(G, m)) {
            gen_ss_remove(G, m);
            G->present[m] = false;
        }
    rc = KN_ERR__NOMEM;
    for (int32_t m = 0; m < nm; m++)
        for (int32_t i = 0; G->present[m] && i < s->result[m].n; i++)
            if (stk_push(&pre[m], s->result[m].v[i]))
                goto done;
    memcpy(pre_cpc, G->cpc, (size_t)np * sizeof *pre_cpc);
    bool performed = false;
    if (!G->revocation_required && (rc = gen_perform(G, &G->unassigned, &performed)) != 0)
        goto done;
    if ((rc = gen_perform(G, &G->all, &performed)) != 0)
        goto done;
    if (!initializing && performed && gen_score(G, s->result) >= gen_score(G, pre)) {
        for (int32_t m = 0; m < nm; m++) {
            if (!G->present[m])
                continue;
            stk_list t = s->result[m];
            s->result[m] = pre[m];
            pre[m] = t;
        }
        memcpy(G->cpc, pre_cpc, (size_t)np * sizeof *pre_cpc);
    }
    for (int32_t m = 0; m < nm; m++)
        G->present[m] = true;
    rc = 0;
done:
    for (int32_t m = 0; pre && m < nm; m++)
        stk_list_free(&pre[m]);
    kn_free(pre);
    kn_free(pre_cpc);
    kn_free(fixed);
    stk_list_free(&tmp);
    return rc;
}

/* ---- setup ---- */

static void gen_free(gen *G) {
    for (int32_t t = 0; G->tcons && t < G->c->nt; t++)
        kn_free(G->tcons[t]);
    kn_free(G->tcons);
    kn_free(G->tcons_n);
    kn_free(G->cpc);
    kn_free(G->present);
    kn_free(G->ss);
    kn_free(G->maxsize);
    kn_free(G->prev_m);
    kn_free(G->prev_gen);
    kn_free(G->mv_src);
    kn_free(G->mv_dst);
    kn_free(G->topic_sets);
    for (int32_t i = 0; i < G->nsets; i++)
        kn_free(G->sets[i].e);
    kn_free(G->sets);
    stk_list_free(&G->all);
    stk_list_free(&G->unassigned);
}

static void gen_update_prev(gen *G, const stk_list *parts, int32_t m, int32_t generation) {
    for (int32_t i = 0; i < parts->n; i++) {
        int32_t g = parts->v[i];
        if (G->prev_m[g] < 0 || generation > G->prev_gen[g]) {
            G->prev_m[g] = m;
            G->prev_gen[g] = generation;
        }
    }
}

int stk_general_build(stk *s, char *errstr, size_t errstr_size) {
    const asg_ctx *c = &s->ctx;
    int32_t nm = c->nm, np = c->np, nt = c->nt;
    size_t np1 = (size_t)(np ? np : 1), nt1 = (size_t)(nt ? nt : 1);
    gen G;
    memset(&G, 0, sizeof G);
    G.s = s;
    G.c = c;
    int rc = KN_ERR__NOMEM;
    G.cpc = kn_malloc(np1 * sizeof *G.cpc);
    G.present = kn_malloc((size_t)nm * sizeof *G.present);
    G.ss = kn_malloc((size_t)nm * sizeof *G.ss);
    G.tcons_n = kn_calloc(nt1, sizeof *G.tcons_n);
    G.tcons = kn_calloc(nt1, sizeof *G.tcons);
    G.maxsize = kn_calloc((size_t)nm, sizeof *G.maxsize);
    G.prev_m = kn_malloc(np1 * sizeof *G.prev_m);
    G.prev_gen = kn_malloc(np1 * sizeof *G.prev_gen);
    G.mv_src = kn_malloc(np1 * sizeof *G.mv_src);
    G.mv_dst = kn_malloc(np1 * sizeof *G.mv_dst);
    G.topic_sets = kn_calloc(nt1, sizeof *G.topic_sets);
    if (!G.cpc || !G.present || !G.ss || !G.tcons_n || !G.tcons || !G.maxsize || !G.prev_m || !G.prev_gen ||
        !G.mv_src || !G.mv_dst || !G.topic_sets)
        goto done;
    for (int32_t g = 0; g < np; g++)
        G.cpc[g] = G.prev_m[g] = G.prev_gen[g] = G.mv_src[g] = G.mv_dst[g] = -1;
    for (int32_t t = 0; t < nt; t++) {
        G.tcons[t] = kn_malloc((size_t)nm * sizeof **G.tcons);
        if (!G.tcons[t])
            goto done;
    }
    /* potential consumers per topic (subscription order) and each member's
     * largest possible assignment */
    for (int32_t k = 0; k < nm; k++) {
        int32_t m = c->m_jorder[k];
        const kn_asg_member *mb = &c->in->members[m];
        int32_t ntop = 0, sum = 0;
        G.present[m] = true;
        for (int32_t j = 0; j < mb->topic_cnt; j++) {
            int32_t t = asg_topic_find(c, mb->topics[j]);
            if (t < 0)
                continue;
            ntop++;
            sum += c->t_cnt[t];
            if (G.tcons_n[t] < nm) /* a topic listed twice by one member is kept once */
                G.tcons[t][G.tcons_n[t]++] = m;
        }
        G.maxsize[m] = ntop == nt ? np : sum;
    }
    /* result starts as the owned partitions; currentPartitionConsumer */
    for (int32_t k = 0; k < nm; k++) {
        int32_t m = c->m_jorder[k];
        for (int32_t i = 0; i < s->owned[m].n; i++) {
            if (stk_push(&s->result[m], s->owned[m].v[i]))
                goto done;
            G.cpc[s->owned[m].v[i]] = m;
        }
    }
    /* sortedAllPartitions: topics by (potential consumers, name) */
    {
        int32_t *tord = kn_malloc(nt1 * sizeof *tord);
        if (!tord)
            goto done;
        for (int32_t t = 0; t < nt; t++)
            tord[t] = t;
        for (int32_t i = 1; i < nt; i++) {
            int32_t x = tord[i], j = i - 1;
            while (j >= 0 && G.tcons_n[tord[j]] > G.tcons_n[x]) {
                tord[j + 1] = tord[j];
                j--;
            }
            tord[j + 1] = x;
        }
        for (int32_t i = 0; i < nt; i++)
            for (int32_t p = 0; p < c->t_cnt[tord[i]]; p++)
                if (stk_push(&G.all, c->t_base[tord[i]] + p)) {
                    kn_free(tord);
                    goto done;
                }
        kn_free(tord);
    }
    /* prevAssignment: partitions of older generations */
    for (int32_t k = 0; k < nm; k++) {
        int32_t m = c->m_jorder[k];
        if (s->md_has_gen[m] && s->md_gen[m] < s->max_gen)
            gen_update_prev(&G, &s->md_parts[m], m, s->md_gen[m]);
        else if (!s->md_has_gen[m] && s->max_gen > KN_ASG_NO_GENERATION)
            gen_update_prev(&G, &s->md_parts[m], m, KN_ASG_NO_GENERATION);
    }
    /* assignOwnedPartitions: drop what a member no longer subscribes to
     * or whose rack does not match */
    uint8_t *assigned = kn_calloc(np1, 1);
    if (!assigned)
        goto done;
    for (int32_t k = 0; k < nm; k++) {
        int32_t m = c->m_jorder[k];
        stk_list *l = &s->result[m];
        int32_t w = 0;
        for (int32_t i = 0; i < l->n; i++) {
            int32_t g = l->v[i];
            if (!asg_subscribes(c, m, c->p_topic[g]) || stk_racks_mismatch(s, m, g)) {
                G.revocation_required = true;
                continue;
            }
            l->v[w++] = g;
            assigned[g] = 1;
        }
        l->n = w;
    }
    for (int32_t i = 0; i < G.all.n; i++)
        if (!assigned[G.all.v[i]] && stk_push(&G.unassigned, G.all.v[i])) {
            kn_free(assigned);
            goto done;
        }
    kn_free(assigned);
    for (int32_t m = 0; m < nm; m++)
        gen_ss_add(&G, m);
    rc = gen_balance(&G);
    if (rc == KN_ERR__FAIL)
        kn_errstr_set(errstr, errstr_size,
                      "sticky: the Java assignor fails on this input (a previous owner cannot take part "
                      "in reassignment)");
done:
    gen_free(&G);
    return rc;
}

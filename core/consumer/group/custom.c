/*
 * custom.c: custom partition assignors offered by the application
 * (kn_consumer_add_assignor), for the classic protocol.
 *
 * Owns the adapter between the public kn_assign_cb / kn_assignor_ctx and
 * the assignor module's vtable (kn_asg_list_add_custom): the consumer's
 * assignor list is rebuilt with the custom ones first. A custom
 * assignor is user code, so the leader step that runs it is parked for
 * poll (classic.c, KNG_LEADER) instead of running on the network thread.
 */
#include <string.h>

#include "consumer/group/group.h"
#include "error.h"
#include "kn_alloc.h"

struct kn_assignor_ctx {
    const kn_asg_input *in;
    kn_asg_output *out;
};

typedef struct kng_custom {
    kn_consumer *c;
    char *name;
    unsigned protocols;
    kn_assign_cb *cb;
    void *opaque;
} kng_custom;

int32_t kn_assignor_ctx_member_count(const kn_assignor_ctx *ctx) { return ctx ? ctx->in->member_cnt : 0; }

static const kn_asg_member *kng_ctx_member(const kn_assignor_ctx *ctx, int32_t m) {
    return ctx && m >= 0 && m < ctx->in->member_cnt ? &ctx->in->members[m] : NULL;
}

const char *kn_assignor_ctx_member_id(const kn_assignor_ctx *ctx, int32_t member) {
    const kn_asg_member *m = kng_ctx_member(ctx, member);
    return m ? m->member_id : NULL;
}

const char *kn_assignor_ctx_member_instance_id(const kn_assignor_ctx *ctx, int32_t member) {
    const kn_asg_member *m = kng_ctx_member(ctx, member);
    return m ? m->group_instance_id : NULL;
}

int32_t kn_assignor_ctx_member_topic_count(const kn_assignor_ctx *ctx, int32_t member) {
    const kn_asg_member *m = kng_ctx_member(ctx, member);
    return m ? m->topic_cnt : 0;
}

const char *kn_assignor_ctx_member_topic(const kn_assignor_ctx *ctx, int32_t member, int32_t i) {
    const kn_asg_member *m = kng_ctx_member(ctx, member);
    return m && i >= 0 && i < m->topic_cnt ? m->topics[i] : NULL;
}

static const kn_asg_topic *kng_ctx_topic(const kn_assignor_ctx *ctx, const char *topic) {
    for (int32_t i = 0; ctx && topic && i < ctx->in->topic_cnt; i++)
        if (strcmp(ctx->in->topics[i].name, topic) == 0)
            return &ctx->in->topics[i];
    return NULL;
}

int32_t kn_assignor_ctx_partition_count(const kn_assignor_ctx *ctx, const char *topic) {
    const kn_asg_topic *t = kng_ctx_topic(ctx, topic);
    return t ? t->partition_cnt : 0;
}

int kn_assignor_ctx_assign(kn_assignor_ctx *ctx, int32_t member, const char *topic, int32_t partition) {
    const kn_asg_topic *t = kng_ctx_topic(ctx, topic);
    if (!kng_ctx_member(ctx, member) || !t || partition < 0 || partition >= t->partition_cnt)
        return KN_ERR__INVALID_ARG;
    /* The input's name outlives the output, as kn_asg_output_add wants. */
    return kn_asg_output_add(ctx->out, member, t->name, partition);
}

static int kng_custom_assign(const kn_assignor *asg, const kn_asg_input *in, kn_asg_output *out, char *errstr,
                             size_t n) {
    kng_custom *cu = asg->opaque;
    kn_assignor_ctx ctx = {in, out};
    knc_cb_enter(cu->c);
    int rc = cu->cb(cu->c, &ctx, cu->opaque);
    knc_cb_leave(cu->c);
    if (rc)
        kn_errstr_set(errstr, n, "custom assignor \"%s\" returned %s", asg->name, kn_err_name(rc));
    return rc;
}

/* Rebuilds g->asgs: the custom assignors, then the configured built-ins. */
static int kng_rebuild(kng_group *g, char *errstr, size_t n) {
    kn_asg_list *l = kn_asg_list_new();
    if (!l)
        return KN_ERR__NOMEM;
    int err = 0;
    bool coop = true;
    for (int32_t i = 0; !err && i < g->custom_cnt; i++) {
        kng_custom *cu = g->customs[i];
        err = kn_asg_list_add_custom(l, cu->name, cu->protocols, kng_custom_assign, cu, errstr, n);
        coop = coop && (cu->protocols & KN_ASG_COOPERATIVE);
    }
    for (int32_t i = 0; !err && g->asgs && i < kn_asg_list_count(g->asgs); i++) {
        const kn_assignor *a = kn_asg_list_at(g->asgs, i);
        if (a->opaque)
            continue; /* a custom one: already added */
        err = kn_asg_list_add_builtin(l, a->name, errstr, n);
        coop = coop && (a->protocols & KN_ASG_COOPERATIVE);
    }
    if (err) {
        kn_asg_list_destroy(l);
        return err;
    }
    kn_asg_list_destroy(g->asgs);
    g->asgs = l;
    g->cooperative = coop;
    return 0;
}

int kn_consumer_add_assignor(kn_consumer *c, const char *name, int cooperative, kn_assign_cb *cb,
                             void *opaque) {
    if (!c || !name || !*name || !cb)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    int err = 0;
    if (!g || g->consumer_protocol || g->state != KNG_IDLE) {
        err = KN_ERR__STATE;
    } else if (kn_asg_list_find(g->asgs, name)) {
        err = KN_ERR__INVALID_ARG;
    } else {
        kng_custom *cu = kn_calloc(1, sizeof(*cu));
        kng_custom **v = kn_realloc(g->customs, (size_t)(g->custom_cnt + 1) * sizeof(*v));
        if (v)
            g->customs = v;
        if (!cu || !v || !(cu->name = kn_strdup(name))) {
            kn_free(cu);
            err = KN_ERR__NOMEM;
        } else {
            cu->c = c;
            cu->cb = cb;
            cu->opaque = opaque;
            cu->protocols = KN_ASG_EAGER | (cooperative ? KN_ASG_COOPERATIVE : 0u);
            g->customs[g->custom_cnt++] = cu;
            char errstr[256];
            if ((err = kng_rebuild(g, errstr, sizeof errstr)) != 0) {
                g->custom_cnt--;
                kn_free(cu->name);
                kn_free(cu);
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

void kng_custom_destroy(kng_group *g) {
    for (int32_t i = 0; i < g->custom_cnt; i++) {
        kn_free(g->customs[i]->name);
        kn_free(g->customs[i]);
    }
    kn_free(g->customs);
    g->customs = NULL;
    g->custom_cnt = 0;
}

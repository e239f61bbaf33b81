/*
 * registry.c: which assignors exist: the built-in table (range,
 * roundrobin, sticky, cooperative-sticky, whose algorithms live beside
 * it) and the ordered list a consumer offers (partition.assignment.strategy
 * plus custom ones, kn_consumer_add_assignor).
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/assignor/asg_int.h"
#include "consumer/assignor/registry.h"
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

/* ---- the per-consumer list ---- */

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

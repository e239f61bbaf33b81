/*
 * registry.h: which assignors exist (registry.c): the built-in table and
 * the ordered list of assignors a consumer offers.
 */
#ifndef KN_ASSIGNOR_REGISTRY_H
#define KN_ASSIGNOR_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "consumer/assignor/assignor.h"

/* The built-in assignor of that name, or NULL. Static storage. */
const kn_assignor *kn_asg_builtin(const char *name);

/* An ordered list of assignors a consumer offers (partition.assignment.strategy),
 * built-in and custom. Per client; no globals. */
typedef struct kn_asg_list kn_asg_list;

/* Returns a new empty list owned by the caller (kn_asg_list_destroy), or NULL. */
kn_asg_list *kn_asg_list_new(void);
void kn_asg_list_destroy(kn_asg_list *l);
/* Appends the built-in named name. KN_ERR__INVALID_ARG (unknown or
 * duplicate name, errstr says which) or KN_ERR__NOMEM. */
int kn_asg_list_add_builtin(kn_asg_list *l, const char *name, char *errstr, size_t errstr_size);
/* Appends a custom assignor. name is copied; opaque is passed through to
 * assign and never freed by the list. */
int kn_asg_list_add_custom(kn_asg_list *l, const char *name, unsigned protocols, kn_asg_assign_fn assign,
                           void *opaque, char *errstr, size_t errstr_size);
int32_t kn_asg_list_count(const kn_asg_list *l);
const kn_assignor *kn_asg_list_at(const kn_asg_list *l, int32_t i);
/* The assignor named name (the coordinator's chosen protocol), or NULL. */
const kn_assignor *kn_asg_list_find(const kn_asg_list *l, const char *name);

#endif

/*
 * admin_config_results.c: the config calls' result objects
 * (kn_config_descriptions with their kn_config_entry, kn_config_results),
 * the resource set both are built on, and the names of Kafka's config
 * enums (resource types, sources, types) as Java spells them. Every
 * string is an owned copy; each object is freed by its own _destroy.
 */
#include <string.h>

#include "admin/admin.h"
#include "kn_alloc.h"

/* ---- names ----------------------------------------------------------- */

const char *kn_config_source_name(int source) {
    static const char *const names[] = {
        "UNKNOWN",
        "DYNAMIC_TOPIC_CONFIG",
        "DYNAMIC_BROKER_CONFIG",
        "DYNAMIC_DEFAULT_BROKER_CONFIG",
        "STATIC_BROKER_CONFIG",
        "DEFAULT_CONFIG",
        "DYNAMIC_BROKER_LOGGER_CONFIG",
        "DYNAMIC_CLIENT_METRICS_CONFIG",
        "DYNAMIC_GROUP_CONFIG",
    };
    if (source < 0 || (size_t)source >= sizeof(names) / sizeof(names[0]))
        return "UNKNOWN";
    return names[source];
}

const char *kn_config_type_name(int type) {
    static const char *const names[] = {"UNKNOWN", "BOOLEAN", "STRING", "INT",   "SHORT",
                                        "LONG",    "DOUBLE",  "LIST",   "CLASS", "PASSWORD"};
    if (type < 0 || (size_t)type >= sizeof(names) / sizeof(names[0]))
        return "UNKNOWN";
    return names[type];
}

static const struct {
    int type;
    const char *name;
} kna_resource_types[] = {
    {KN_CONFIG_RESOURCE_TOPIC, "topic"},
    {KN_CONFIG_RESOURCE_BROKER, "broker"},
    {KN_CONFIG_RESOURCE_BROKER_LOGGER, "broker_logger"},
    {KN_CONFIG_RESOURCE_CLIENT_METRICS, "client_metrics"},
    {KN_CONFIG_RESOURCE_GROUP, "group"},
};

const char *kn_config_resource_type_name(int type) {
    for (size_t i = 0; i < sizeof(kna_resource_types) / sizeof(kna_resource_types[0]); i++)
        if (kna_resource_types[i].type == type)
            return kna_resource_types[i].name;
    return NULL;
}

int kn_config_resource_type_from_name(const char *name) {
    for (size_t i = 0; name && i < sizeof(kna_resource_types) / sizeof(kna_resource_types[0]); i++)
        if (strcmp(kna_resource_types[i].name, name) == 0)
            return kna_resource_types[i].type;
    return -1;
}

/* ---- the resource set ------------------------------------------------ */

static void kna_entry_clear(kn_config_entry *e) {
    kn_free(e->name);
    kn_free(e->value);
    kn_free(e->documentation);
    for (size_t s = 0; s < e->synonym_count; s++) {
        kn_free(e->synonyms[s].name);
        kn_free(e->synonyms[s].value);
    }
    kn_free(e->synonyms);
}

void kna_config_set_clear(kna_config_set *set) {
    for (size_t i = 0; i < set->count; i++) {
        kna_config_res *r = &set->items[i];
        kn_free(r->name);
        kn_free(r->message);
        for (size_t e = 0; e < r->entry_count; e++)
            kna_entry_clear(&r->entries[e]);
        kn_free(r->entries);
    }
    kn_free(set->items);
    set->items = NULL;
    set->count = 0;
}

ptrdiff_t kna_config_set_find(const kna_config_set *set, int8_t type, kn_str name) {
    if (name.len < 0)
        return -1;
    for (size_t i = 0; i < set->count; i++) {
        const kna_config_res *r = &set->items[i];
        if (r->type == type && strlen(r->name) == (size_t)name.len &&
            memcmp(r->name, name.ptr, (size_t)name.len) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

int kna_config_set_add(kna_config_set *set, size_t cap, int8_t type, const char *name, size_t *idxp) {
    kn_str key = {name, (int32_t)strlen(name)};
    ptrdiff_t found = kna_config_set_find(set, type, key);
    if (found >= 0) {
        *idxp = (size_t)found;
        return 0;
    }
    if (!set->items) {
        set->items = kn_calloc(cap ? cap : 1, sizeof(*set->items));
        if (!set->items)
            return KN_ERR__NOMEM;
    }
    if (set->count >= cap)
        return KN_ERR__INVALID_ARG; /* the caller sized cap to its input */
    kna_config_res *r = &set->items[set->count];
    memset(r, 0, sizeof(*r));
    r->name = kn_strdup(name);
    if (!r->name)
        return KN_ERR__NOMEM;
    r->type = type;
    r->pending = true;
    *idxp = set->count++;
    return 0;
}

int kna_config_set_error(kna_config_set *set, size_t i, int err, const char *msg, int32_t len) {
    kna_config_res *r = &set->items[i];
    r->err = err;
    r->pending = false;
    kn_free(r->message);
    r->message = NULL;
    if (err && msg && len >= 0) {
        r->message = kn_strndup(msg, (size_t)len);
        if (!r->message)
            return KN_ERR__NOMEM;
    }
    return 0;
}

#define KNA_RES(obj, i) ((obj) && (i) < (obj)->set.count ? &(obj)->set.items[i] : NULL)

/* ---- kn_config_descriptions ------------------------------------------ */

size_t kn_config_descriptions_count(const kn_config_descriptions *desc) { return desc ? desc->set.count : 0; }

int kn_config_descriptions_resource_type(const kn_config_descriptions *desc, size_t i) {
    const kna_config_res *r = KNA_RES(desc, i);
    return r ? r->type : -1;
}

const char *kn_config_descriptions_resource_name(const kn_config_descriptions *desc, size_t i) {
    const kna_config_res *r = KNA_RES(desc, i);
    return r ? r->name : NULL;
}

int kn_config_descriptions_error(const kn_config_descriptions *desc, size_t i) {
    const kna_config_res *r = KNA_RES(desc, i);
    return r ? r->err : KN_ERR__INVALID_ARG;
}

const char *kn_config_descriptions_error_message(const kn_config_descriptions *desc, size_t i) {
    const kna_config_res *r = KNA_RES(desc, i);
    if (!r || !r->err)
        return NULL;
    return r->message ? r->message : kn_err_message(r->err);
}

size_t kn_config_descriptions_entry_count(const kn_config_descriptions *desc, size_t i) {
    const kna_config_res *r = KNA_RES(desc, i);
    return r ? r->entry_count : 0;
}

const kn_config_entry *kn_config_descriptions_entry(const kn_config_descriptions *desc, size_t i, size_t e) {
    const kna_config_res *r = KNA_RES(desc, i);
    return r && e < r->entry_count ? &r->entries[e] : NULL;
}

const kn_config_entry *kn_config_descriptions_find(const kn_config_descriptions *desc, size_t i,
                                                   const char *name) {
    const kna_config_res *r = KNA_RES(desc, i);
    for (size_t e = 0; r && name && e < r->entry_count; e++)
        if (strcmp(r->entries[e].name, name) == 0)
            return &r->entries[e];
    return NULL;
}

void kn_config_descriptions_destroy(kn_config_descriptions *desc) {
    if (!desc)
        return;
    kna_config_set_clear(&desc->set);
    kn_free(desc);
}

const char *kn_config_entry_name(const kn_config_entry *e) { return e ? e->name : NULL; }
const char *kn_config_entry_value(const kn_config_entry *e) { return e ? e->value : NULL; }
int kn_config_entry_source(const kn_config_entry *e) { return e ? e->source : 0; }
int kn_config_entry_is_sensitive(const kn_config_entry *e) { return e && e->is_sensitive; }
int kn_config_entry_is_read_only(const kn_config_entry *e) { return e && e->is_read_only; }
int kn_config_entry_type(const kn_config_entry *e) { return e ? e->type : 0; }
const char *kn_config_entry_documentation(const kn_config_entry *e) { return e ? e->documentation : NULL; }
size_t kn_config_entry_synonym_count(const kn_config_entry *e) { return e ? e->synonym_count : 0; }

const char *kn_config_entry_synonym_name(const kn_config_entry *e, size_t s) {
    return e && s < e->synonym_count ? e->synonyms[s].name : NULL;
}

const char *kn_config_entry_synonym_value(const kn_config_entry *e, size_t s) {
    return e && s < e->synonym_count ? e->synonyms[s].value : NULL;
}

int kn_config_entry_synonym_source(const kn_config_entry *e, size_t s) {
    return e && s < e->synonym_count ? e->synonyms[s].source : 0;
}

/* ---- kn_config_results ----------------------------------------------- */

size_t kn_config_results_count(const kn_config_results *res) { return res ? res->set.count : 0; }

int kn_config_results_resource_type(const kn_config_results *res, size_t i) {
    const kna_config_res *r = KNA_RES(res, i);
    return r ? r->type : -1;
}

const char *kn_config_results_resource_name(const kn_config_results *res, size_t i) {
    const kna_config_res *r = KNA_RES(res, i);
    return r ? r->name : NULL;
}

int kn_config_results_error(const kn_config_results *res, size_t i) {
    const kna_config_res *r = KNA_RES(res, i);
    return r ? r->err : KN_ERR__INVALID_ARG;
}

const char *kn_config_results_error_message(const kn_config_results *res, size_t i) {
    const kna_config_res *r = KNA_RES(res, i);
    if (!r || !r->err)
        return NULL;
    return r->message ? r->message : kn_err_message(r->err);
}

void kn_config_results_destroy(kn_config_results *res) {
    if (!res)
        return;
    kna_config_set_clear(&res->set);
    kn_free(res);
}

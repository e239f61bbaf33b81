/*
 * otlp.c: OTLP MetricsData encoding and KIP-714 metric naming (see
 * otlp.h). Field numbers are opentelemetry-proto's (metrics/v1,
 * common/v1, resource/v1).
 */
#include "telemetry/otlp.h"

#include <ctype.h>
#include <string.h>

#include "error.h"
#include "telemetry/pb.h"

/* MetricsData */
#define F_MD_RESOURCE_METRICS 1
/* ResourceMetrics */
#define F_RM_RESOURCE 1
#define F_RM_SCOPE_METRICS 2
/* Resource */
#define F_RES_ATTRIBUTES 1
/* ScopeMetrics */
#define F_SM_METRICS 2
/* Metric */
#define F_M_NAME 1
#define F_M_DESCRIPTION 2
#define F_M_GAUGE 5
#define F_M_SUM 7
/* Gauge, Sum */
#define F_DATA_POINTS 1
#define F_SUM_TEMPORALITY 2
#define F_SUM_MONOTONIC 3
/* NumberDataPoint */
#define F_NDP_START_TIME 2
#define F_NDP_TIME 3
#define F_NDP_AS_DOUBLE 4
#define F_NDP_ATTRIBUTES 7
/* KeyValue, AnyValue */
#define F_KV_KEY 1
#define F_KV_VALUE 2
#define F_AV_STRING 1

static void key_value(kn_wr *w, uint32_t field, const char *key, const char *value) {
    size_t kv = knt_pb_begin(w, field);
    knt_pb_string(w, F_KV_KEY, key);
    size_t av = knt_pb_begin(w, F_KV_VALUE);
    knt_pb_string(w, F_AV_STRING, value);
    knt_pb_end(w, av);
    knt_pb_end(w, kv);
}

void knt_otlp_begin(knt_otlp *o, const kn_metric_tag *resource, size_t n_resource, size_t max) {
    kn_wr_init(&o->w, 1024, max);
    o->metrics = 0;
    o->rm_off = knt_pb_begin(&o->w, F_MD_RESOURCE_METRICS);
    size_t res = knt_pb_begin(&o->w, F_RM_RESOURCE);
    for (size_t i = 0; i < n_resource; i++)
        key_value(&o->w, F_RES_ATTRIBUTES, resource[i].key, resource[i].value);
    knt_pb_end(&o->w, res);
    o->sm_off = knt_pb_begin(&o->w, F_RM_SCOPE_METRICS);
}

void knt_otlp_add(knt_otlp *o, const knt_point *p) {
    kn_wr *w = &o->w;
    size_t m = knt_pb_begin(w, F_SM_METRICS);
    knt_pb_string(w, F_M_NAME, p->name);
    knt_pb_string(w, F_M_DESCRIPTION, p->description);
    size_t data = knt_pb_begin(w, p->sum ? F_M_SUM : F_M_GAUGE);
    size_t dp = knt_pb_begin(w, F_DATA_POINTS);
    for (size_t i = 0; i < p->n_attrs; i++)
        key_value(w, F_NDP_ATTRIBUTES, p->attrs[i].key, p->attrs[i].value);
    if (p->sum)
        knt_pb_fixed64(w, F_NDP_START_TIME, p->start_ns);
    knt_pb_fixed64(w, F_NDP_TIME, p->time_ns);
    knt_pb_double(w, F_NDP_AS_DOUBLE, p->value);
    knt_pb_end(w, dp);
    if (p->sum) {
        knt_pb_varint(w, F_SUM_TEMPORALITY, (uint64_t)p->temporality);
        knt_pb_varint(w, F_SUM_MONOTONIC, 1);
    }
    knt_pb_end(w, data);
    knt_pb_end(w, m);
    o->metrics++;
}

int knt_otlp_finish(knt_otlp *o, uint8_t **out, size_t *len) {
    knt_pb_end(&o->w, o->sm_off);
    knt_pb_end(&o->w, o->rm_off);
    if (o->w.err) {
        int err = o->w.err;
        kn_wr_free(&o->w);
        return err;
    }
    *out = kn_wr_detach(&o->w, len);
    return 0;
}

/* Lower case, '-' -> sep, appended at buf[*at]; false when full. */
static bool put_clean(char *buf, size_t size, size_t *at, const char *s, char sep) {
    for (; *s; s++) {
        if (*at + 1 >= size)
            return false;
        char c = *s == '-' ? sep : (char)tolower((unsigned char)*s);
        buf[(*at)++] = c;
    }
    buf[*at] = '\0';
    return true;
}

static bool put_str(char *buf, size_t size, size_t *at, const char *s) {
    size_t n = strlen(s);
    if (*at + n + 1 > size)
        return false;
    memcpy(buf + *at, s, n + 1);
    *at += n;
    return true;
}

bool knt_otlp_name(char *buf, size_t size, const char *group, const char *name) {
    size_t at = 0;
    if (size == 0 || !put_str(buf, size, &at, "org.apache.kafka."))
        return false;
    size_t g = at;
    if (!put_clean(buf, size, &at, group, '.'))
        return false;
    /* Java drops every ".metrics" from the cleaned group
     * ("producer-metrics" -> "producer"). */
    char *hit;
    while ((hit = strstr(buf + g, ".metrics")) != NULL) {
        memmove(hit, hit + 8, strlen(hit + 8) + 1);
        at -= 8;
    }
    return put_str(buf, size, &at, ".") && put_clean(buf, size, &at, name, '.');
}

bool knt_otlp_tag_key(char *buf, size_t size, const char *key) {
    size_t at = 0;
    if (size == 0)
        return false;
    buf[0] = '\0';
    return put_clean(buf, size, &at, key, '_');
}

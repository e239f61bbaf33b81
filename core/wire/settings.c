/*
 * settings.c: the wire layer's view of a kn_conf, read once when a
 * client is built (see knw_settings in wire_int.h). Defaults follow the
 * Java client 4.3; values that Java hard-codes per client kind (max
 * in-flight for consumer and admin, auto topic creation) are set here.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "tls/tls_ctx.h"
#include "wire/wire_int.h"

void knw_settings_defaults(knw_settings *s, const char *kind) {
    memset(s, 0, sizeof *s);
    snprintf(s->kind, sizeof s->kind, "%s", kind ? kind : "client");
    s->request_timeout_ms = 30000;
    s->setup_timeout_ms = 10000;
    s->setup_timeout_max_ms = 30000;
    s->reconnect_backoff_ms = 50;
    s->reconnect_backoff_max_ms = 1000;
    s->retry_backoff_ms = 100;
    s->retry_backoff_max_ms = 1000;
    s->metadata_max_age_ms = 300000;
    s->metrics_window_ms = 30000;
    s->metrics_num_samples = 2;
    s->rebootstrap = true;
    s->rebootstrap_trigger_ms = 300000;
    /* Java: producer max.in.flight.requests.per.connection (5), the
     * consumer's network client 100, the admin client 1. */
    s->max_in_flight = !strcmp(s->kind, "consumer") ? 100 : !strcmp(s->kind, "admin") ? 1 : 5;
    s->connections_max_idle_ms = !strcmp(s->kind, "admin") ? 300000 : 540000;
    s->send_buffer_bytes = 131072;
    s->receive_buffer_bytes = !strcmp(s->kind, "producer") ? 32768 : 65536;
    s->keepalive = true; /* Java always sets SO_KEEPALIVE */
    /* The Java producer lets the broker auto-create topics it asks
     * about; admin never does; the consumer follows
     * allow.auto.create.topics (read in knw_settings_from_conf). */
    s->allow_auto_topic_creation = !strcmp(s->kind, "producer");
    s->max_response_bytes = 100u << 20;
    s->log_level = -1;
}

void knw_settings_free(knw_settings *s) {
    knw_hostports_free(s->bootstrap, s->bootstrap_count);
    s->bootstrap = NULL;
    s->bootstrap_count = 0;
    kn_free(s->client_id);
    s->client_id = NULL;
    knw_sasl_conf_free(s->sasl);
    s->sasl = NULL;
    knw_tls_ctx_free(s->tls_ctx);
    s->tls_ctx = NULL;
}

int knw_settings_copy(knw_settings *dst, const knw_settings *src) {
    *dst = *src;
    dst->bootstrap = NULL;
    dst->client_id = NULL;
    dst->sasl = NULL;
    knw_tls_ctx_ref(dst->tls_ctx); /* shared, not copied */
    if (knw_sasl_conf_copy(&dst->sasl, src->sasl))
        goto nomem;
    if (src->client_id && !(dst->client_id = kn_strdup(src->client_id)))
        goto nomem;
    if (src->bootstrap_count) {
        dst->bootstrap = kn_calloc((size_t)src->bootstrap_count, sizeof *dst->bootstrap);
        if (!dst->bootstrap)
            goto nomem;
        dst->bootstrap_count = 0;
        for (int i = 0; i < src->bootstrap_count; i++) {
            dst->bootstrap[i].host = kn_strdup(src->bootstrap[i].host);
            dst->bootstrap[i].port = src->bootstrap[i].port;
            if (!dst->bootstrap[i].host)
                goto nomem;
            dst->bootstrap_count++;
        }
    }
    return 0;
nomem:
    knw_settings_free(dst);
    return KN_ERR__NOMEM;
}

int knw_settings_set_bootstrap(knw_settings *s, const char *list, char *errstr, size_t errstr_size) {
    knw_hostport *hp;
    int n;
    int rc = knw_parse_hostports(list, &hp, &n, errstr, errstr_size);
    if (rc)
        return rc;
    knw_hostports_free(s->bootstrap, s->bootstrap_count);
    s->bootstrap = hp;
    s->bootstrap_count = n;
    return 0;
}

static int clamp_int(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < 0 ? 0 : (int)v; }

int knw_settings_from_conf(knw_settings *s, const kn_conf *conf, const char *kind, char *errstr,
                           size_t errstr_size) {
    knw_settings_defaults(s, kind);
    kn_client_type type = kn_conf_client_type(conf);
    s->log_fn = kn_conf_log_cb(conf, &s->log_level, &s->log_opaque);

    const char *sp = kn_conf_get_str(conf, "security.protocol");
    /* SASL_SSL is SASL over the TLS transport. */
    s->tls = sp && (!strcasecmp(sp, "SSL") || !strcasecmp(sp, "SASL_SSL"));
    bool sasl = sp && (!strcasecmp(sp, "SASL_PLAINTEXT") || !strcasecmp(sp, "SASL_SSL"));
    if (sp && !s->tls && !sasl && strcasecmp(sp, "PLAINTEXT")) {
        kn_errstr_set(errstr, errstr_size,
                      "security.protocol: \"%s\" is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", sp);
        return KN_ERR__CONFIG;
    }
    /* The TLS context is loaded once per client: every connection shares
     * its trust store and key (and bad files fail here, not at connect). */
    if (s->tls) {
        int trc = knw_tls_ctx_new(conf, &s->tls_ctx, &s->tls_verify_host, errstr, errstr_size);
        if (trc)
            return trc;
    }

    /* SASL (sasl/sasl.c): mechanism and sasl.jaas.config are checked
     * now, so a bad credential config fails the constructor. */
    char **items = NULL;
    int count = 0;
    int rc = knw_sasl_conf_from(conf, &s->sasl, errstr, errstr_size);
    if (!rc)
        rc = kn_conf_get_list(conf, "bootstrap.servers", &items, &count);
    if (rc)
        goto fail;
    size_t total = 1;
    for (int i = 0; i < count; i++)
        total += strlen(items[i]) + 1;
    char *joined = kn_malloc(total);
    if (!joined) {
        kn_conf_list_free(items, count);
        rc = KN_ERR__NOMEM;
        goto fail;
    }
    joined[0] = 0;
    for (int i = 0; i < count; i++) {
        if (i)
            strcat(joined, ",");
        strcat(joined, items[i]);
    }
    kn_conf_list_free(items, count);
    rc = knw_settings_set_bootstrap(s, joined, errstr, errstr_size);
    kn_free(joined);
    if (rc)
        goto fail;

    const char *dns = kn_conf_get_str(conf, "client.dns.lookup");
    s->dns_canonical = dns && !strcmp(dns, "resolve_canonical_bootstrap_servers_only");
    if (s->dns_canonical) {
        rc = knw_canonicalize_hostports(&s->bootstrap, &s->bootstrap_count, errstr, errstr_size);
        if (rc)
            goto fail;
    }

    const char *cid = kn_conf_get_str(conf, "client.id");
    if (cid && *cid) {
        s->client_id = kn_strdup(cid);
    } else {
        /* Java's defaults: producer-N, consumer-<group>-N, adminclient-N. */
        static _Atomic int seq;
        int n = atomic_fetch_add(&seq, 1) + 1;
        char buf[300];
        if (type == KN_CLIENT_CONSUMER) {
            const char *gid = kn_conf_get_str(conf, "group.id");
            if (gid && *gid)
                snprintf(buf, sizeof buf, "consumer-%.200s-%d", gid, n);
            else
                snprintf(buf, sizeof buf, "consumer-%d", n);
        } else {
            snprintf(buf, sizeof buf, "%s-%d", type == KN_CLIENT_ADMIN ? "adminclient" : s->kind, n);
        }
        s->client_id = kn_strdup(buf);
    }
    if (!s->client_id) {
        rc = KN_ERR__NOMEM;
        goto fail;
    }

    s->request_timeout_ms = clamp_int(kn_conf_get_int(conf, "request.timeout.ms"));
    s->setup_timeout_ms = clamp_int(kn_conf_get_int(conf, "socket.connection.setup.timeout.ms"));
    s->setup_timeout_max_ms = clamp_int(kn_conf_get_int(conf, "socket.connection.setup.timeout.max.ms"));
    s->reconnect_backoff_ms = clamp_int(kn_conf_get_int(conf, "reconnect.backoff.ms"));
    s->reconnect_backoff_max_ms = clamp_int(kn_conf_get_int(conf, "reconnect.backoff.max.ms"));
    s->retry_backoff_ms = clamp_int(kn_conf_get_int(conf, "retry.backoff.ms"));
    s->retry_backoff_max_ms = clamp_int(kn_conf_get_int(conf, "retry.backoff.max.ms"));
    s->metadata_max_age_ms = kn_conf_get_int(conf, "metadata.max.age.ms");
    const char *mrs = kn_conf_get_str(conf, "metadata.recovery.strategy");
    s->rebootstrap = !mrs || !strcmp(mrs, "rebootstrap");
    s->rebootstrap_trigger_ms = kn_conf_get_int(conf, "metadata.recovery.rebootstrap.trigger.ms");
    s->connections_max_idle_ms = kn_conf_get_int(conf, "connections.max.idle.ms");
    s->metrics_window_ms = kn_conf_get_int(conf, "metrics.sample.window.ms");
    s->metrics_num_samples = clamp_int(kn_conf_get_int(conf, "metrics.num.samples"));
    s->send_buffer_bytes = (int)kn_conf_get_int(conf, "send.buffer.bytes");
    s->receive_buffer_bytes = (int)kn_conf_get_int(conf, "receive.buffer.bytes");
    if (type == KN_CLIENT_PRODUCER)
        s->max_in_flight = clamp_int(kn_conf_get_int(conf, "max.in.flight.requests.per.connection"));
    if (type == KN_CLIENT_CONSUMER)
        s->allow_auto_topic_creation = kn_conf_get_bool(conf, "allow.auto.create.topics") != 0;
    if (s->max_in_flight < 1)
        s->max_in_flight = 1;
    /* A response may be as large as the receive budget allows; never
     * trust a frame size above max(that, 100 MiB). */
    if (type == KN_CLIENT_CONSUMER) {
        int64_t fmb = kn_conf_get_int(conf, "fetch.max.bytes");
        if (fmb + (1 << 20) > (int64_t)s->max_response_bytes)
            s->max_response_bytes = (size_t)fmb + (1u << 20);
    }
    return 0;
fail:
    knw_settings_free(s);
    return rc;
}

/*
 * sasl_gssapi.c: the GSSAPI mechanism (RFC 4752, Kerberos V5 through
 * the system's libgssapi_krb5), as the Java client's GssKrb5Client
 * speaks it to a Kafka broker.
 *
 *   client: gss_init_sec_context token (AP-REQ; mutual authentication)
 *   broker: AP-REP               -> client checks it, context complete,
 *                                   answers with the (empty) last token
 *   broker: wrap(layers, max size) -> client: wrap(0x01 "no security
 *                                   layer", size 0, authzid = its principal)
 *   broker: success, empty       -> done
 *
 * The broker is named service@host (GSS_C_NT_HOSTBASED_SERVICE) with
 * service from the JAAS serviceName option or sasl.kerberos.service.name
 * and host the name the connection was made to (bootstrap.servers or the
 * broker's advertised host), as Java's client does.
 *
 * The first step may wait on the KDC, so it runs on the client's
 * Kerberos thread (gssapi_worker.c): start() submits it and answers
 * KNW_SASL_WAIT until the thread has the token; the exchange waits in
 * sasl.c (knw_sasl_service) meanwhile. step() runs on the network
 * thread: its GSS calls are local.
 *
 * Credentials come from sasl.jaas.config's Krb5LoginModule options
 * (gssapi_worker.h); check() refuses a config that cannot log in.
 */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/gssapi_worker.h"
#include "wire/sasl/sasl.h"

#define KRB5_MODULE "com.sun.security.auth.module.Krb5LoginModule"

static bool jaas_true(const knw_sasl_conf *conf, const char *key) {
    const char *v = knw_jaas_get(&conf->jaas, key);
    return v && !strcmp(v, "true");
}

static int gs_check(const knw_sasl_conf *conf, char *errstr, size_t n) {
    if (!conf->krb_service || !*conf->krb_service) {
        kn_errstr_set(
            errstr, n,
            "sasl.kerberos.service.name is required for sasl.mechanism GSSAPI: the Kerberos service "
            "name the brokers run as (usually kafka), or serviceName in sasl.jaas.config");
        return KN_ERR__CONFIG;
    }
    if (jaas_true(conf, "useKeyTab")) {
        const char *miss = !knw_jaas_get(&conf->jaas, "keyTab")      ? "keyTab"
                           : !knw_jaas_get(&conf->jaas, "principal") ? "principal"
                                                                     : NULL;
        if (miss) {
            kn_errstr_set(errstr, n,
                          "sasl.jaas.config: %s is required with useKeyTab=true for sasl.mechanism GSSAPI",
                          miss);
            return KN_ERR__CONFIG;
        }
    } else if (!jaas_true(conf, "useTicketCache")) {
        /* Java would prompt for a password here and fail the same way. */
        kn_errstr_set(errstr, n,
                      "sasl.jaas.config: Krb5LoginModule needs useKeyTab=true (with keyTab and principal) or "
                      "useTicketCache=true for sasl.mechanism GSSAPI: there is no password prompt");
        return KN_ERR__CONFIG;
    }
    return 0;
}

#ifdef KN_HAVE_GSSAPI

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>

typedef enum gs_phase { GS_WAIT, GS_CONTEXT, GS_LAYER, GS_LAYER_SENT } gs_phase;

typedef struct gs_state {
    knw_krb *krb;
    knw_krb_job *job;
    gs_phase phase;
    gss_ctx_id_t ctx;
    gss_name_t target;
} gs_state;

static void gs_free(void *state) {
    gs_state *st = state;
    if (!st)
        return;
    OM_uint32 min2;
    knw_krb_abandon(st->krb, st->job);
    if (st->ctx != GSS_C_NO_CONTEXT)
        gss_delete_sec_context(&min2, &st->ctx, GSS_C_NO_BUFFER);
    if (st->target != GSS_C_NO_NAME)
        gss_release_name(&min2, &st->target);
    kn_free(st);
}

/* A GSS buffer into an owned sasl buffer (an empty one is a valid
 * token: the last step of the context exchange is often empty). */
static int put_token(const gss_buffer_desc *b, knw_sasl_buf *out, char *errstr, size_t n) {
    if (!(out->ptr = kn_malloc(b->length ? b->length : 1))) {
        kn_errstr_set(errstr, n, "out of memory");
        return KN_ERR__NOMEM;
    }
    if (b->length)
        memcpy(out->ptr, b->value, b->length);
    out->len = b->length;
    return 0;
}

static int gs_start(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out,
                    char *errstr, size_t n) {
    gs_state *st = *state;
    if (!st) {
        /* A new exchange: hand the KDC-bound first step to the thread. */
        if (!conf->krb || !(st = kn_calloc(1, sizeof *st))) {
            kn_errstr_set(errstr, n,
                          conf->krb ? "out of memory" : "GSSAPI: the client has no Kerberos state");
            return conf->krb ? KN_ERR__NOMEM : KN_ERR__AUTHENTICATION;
        }
        st->krb = conf->krb;
        st->ctx = GSS_C_NO_CONTEXT;
        st->target = GSS_C_NO_NAME;
        if (!(st->job = knw_krb_submit(conf->krb, host))) {
            kn_free(st);
            kn_errstr_set(errstr, n, "out of memory");
            return KN_ERR__NOMEM;
        }
        *state = st;
        return KNW_SASL_WAIT;
    }
    void *ctx = NULL, *name = NULL;
    int err = 0;
    if (!knw_krb_collect(st->krb, st->job, &ctx, &name, &out->ptr, &out->len, &err, errstr, n))
        return KNW_SASL_WAIT;
    st->job = NULL;
    if (err)
        return err;
    st->ctx = ctx;
    st->target = name;
    st->phase = GS_CONTEXT;
    return 0;
}

static int gs_step(void *state, const uint8_t *in, size_t in_len, knw_sasl_buf *out, char *errstr, size_t n) {
    gs_state *st = state;
    OM_uint32 major, minor, min2;
    char status[300];
    gss_buffer_desc inb = {in_len, (void *)in}, outb = GSS_C_EMPTY_BUFFER;
    int rc = KN_ERR__AUTHENTICATION;
    switch (st->phase) {
    case GS_CONTEXT:
        /* The broker's AP-REP: proves it holds the service key. */
        major =
            gss_init_sec_context(&minor, GSS_C_NO_CREDENTIAL, &st->ctx, st->target, (gss_OID)gss_mech_krb5,
                                 GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG, 0,
                                 GSS_C_NO_CHANNEL_BINDINGS, &inb, NULL, &outb, NULL, NULL);
        if (GSS_ERROR(major)) {
            kn_errstr_set(errstr, n, "GSSAPI: the broker's Kerberos reply failed: %s",
                          knw_gss_status(major, minor, status, sizeof status));
            break;
        }
        if (major == GSS_S_COMPLETE)
            st->phase = GS_LAYER;
        rc = put_token(&outb, out, errstr, n);
        if (!rc)
            rc = KNW_SASL_SEND;
        break;
    case GS_LAYER: {
        /* RFC 4752 3.1: the broker's offer: a bitmask of layers and its
         * maximum message size. Java's client takes "no security layer"
         * (Kafka protects bytes with TLS instead) and names itself. */
        int conf_state = 0;
        major = gss_unwrap(&minor, st->ctx, &inb, &outb, &conf_state, NULL);
        if (GSS_ERROR(major)) {
            kn_errstr_set(errstr, n, "GSSAPI: cannot unwrap the broker's security layer offer: %s",
                          knw_gss_status(major, minor, status, sizeof status));
            break;
        }
        if (outb.length != 4 || !(((const uint8_t *)outb.value)[0] & 0x01)) {
            if (outb.length != 4)
                kn_errstr_set(errstr, n, "GSSAPI: the broker's security layer offer is %zu bytes, not 4",
                              (size_t)outb.length);
            else
                kn_errstr_set(errstr, n,
                              "GSSAPI: the broker does not offer \"no security layer\" (offer 0x%02x)",
                              (unsigned)((const uint8_t *)outb.value)[0]);
            break;
        }
        gss_release_buffer(&min2, &outb);
        gss_name_t src = GSS_C_NO_NAME;
        gss_buffer_desc who = GSS_C_EMPTY_BUFFER;
        major = gss_inquire_context(&minor, st->ctx, &src, NULL, NULL, NULL, NULL, NULL, NULL);
        if (!GSS_ERROR(major))
            major = gss_display_name(&minor, src, &who, NULL);
        if (src != GSS_C_NO_NAME)
            gss_release_name(&min2, &src);
        if (GSS_ERROR(major) || who.length > 1024) {
            kn_errstr_set(errstr, n, "GSSAPI: cannot name the client principal: %s",
                          knw_gss_status(major, minor, status, sizeof status));
            gss_release_buffer(&min2, &who);
            break;
        }
        uint8_t msg[4 + 1024];
        msg[0] = 0x01; /* no security layer */
        msg[1] = msg[2] = msg[3] = 0;
        memcpy(msg + 4, who.value, who.length);
        gss_buffer_desc reply = {4 + who.length, msg};
        major = gss_wrap(&minor, st->ctx, 0, GSS_C_QOP_DEFAULT, &reply, NULL, &outb);
        gss_release_buffer(&min2, &who);
        if (GSS_ERROR(major)) {
            kn_errstr_set(errstr, n, "GSSAPI: cannot wrap the security layer answer: %s",
                          knw_gss_status(major, minor, status, sizeof status));
            break;
        }
        st->phase = GS_LAYER_SENT;
        rc = put_token(&outb, out, errstr, n);
        if (!rc)
            rc = KNW_SASL_SEND;
        break;
    }
    case GS_LAYER_SENT:
        if (in_len == 0) {
            rc = KNW_SASL_DONE;
            break;
        }
        kn_errstr_set(errstr, n, "GSSAPI: the broker sent %zu bytes after the exchange was complete", in_len);
        break;
    case GS_WAIT:
        kn_errstr_set(errstr, n, "GSSAPI: a server token before the first client token");
        break;
    }
    gss_release_buffer(&min2, &outb);
    return rc;
}

const knw_sasl_mech knw_sasl_gssapi = {
    .name = "GSSAPI",
    .login_module = KRB5_MODULE,
    .check = gs_check,
    .start = gs_start,
    .step = gs_step,
    .free = gs_free,
};

#else

/* Not in the mechanism table (sasl.c); kept so check() is built. */
const knw_sasl_mech knw_sasl_gssapi = {
    .name = "GSSAPI",
    .login_module = KRB5_MODULE,
    .check = gs_check,
};

#endif

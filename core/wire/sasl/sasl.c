/*
 * sasl.c: the SASL mechanism table and a client's SASL settings
 * (sasl.h): which mechanism sasl.mechanism names, its sasl.jaas.config
 * or callback, checked when the client is built. The exchange on a
 * connection that uses them is core/wire/conn_sasl.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/oidc.h"
#include "wire/sasl/sasl.h"

/* ---- the mechanism table ---- */

static const knw_sasl_mech *const mechs[] = {&knw_sasl_plain, &knw_sasl_scram_sha256, &knw_sasl_scram_sha512,
                                             &knw_sasl_oauthbearer,
#ifdef KN_HAVE_GSSAPI
                                             &knw_sasl_gssapi,
#endif
};

const knw_sasl_mech *knw_sasl_mech_find(const char *name) {
    for (size_t i = 0; i < sizeof mechs / sizeof mechs[0]; i++)
        if (name && !strcmp(mechs[i]->name, name))
            return mechs[i];
    return NULL;
}

const char *knw_sasl_mech_list(char *buf, size_t size) {
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof mechs / sizeof mechs[0] && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "", mechs[i]->name);
    return buf;
}

/* ---- configuration ---- */

void knw_sasl_conf_free(knw_sasl_conf *sc) {
    if (!sc)
        return;
    kn_free(sc->mechanism);
    kn_free(sc->krb_service);
    knw_jaas_free(&sc->jaas);
    knw_oidc_free(sc->oidc);
    kn_free(sc);
}

int knw_sasl_conf_copy(knw_sasl_conf **dst, const knw_sasl_conf *src) {
    *dst = NULL;
    if (!src)
        return 0;
    knw_sasl_conf *sc = kn_calloc(1, sizeof *sc);
    if (!sc)
        return KN_ERR__NOMEM;
    sc->mech = src->mech;
    sc->token_fn = src->token_fn;
    sc->token_opaque = src->token_opaque;
    sc->refresh_window_factor = src->refresh_window_factor;
    sc->refresh_window_jitter = src->refresh_window_jitter;
    sc->refresh_min_period_ms = src->refresh_min_period_ms;
    sc->refresh_buffer_ms = src->refresh_buffer_ms;
    sc->store = src->store;
    sc->krb_renew_factor = src->krb_renew_factor;
    sc->krb_renew_jitter = src->krb_renew_jitter;
    sc->krb_min_relogin_ms = src->krb_min_relogin_ms;
    sc->krb = src->krb;
    knw_oidc_ref(sc->oidc = src->oidc);
    if (!(sc->mechanism = kn_strdup(src->mechanism)) || knw_jaas_copy(&sc->jaas, &src->jaas) ||
        (src->krb_service && !(sc->krb_service = kn_strdup(src->krb_service)))) {
        knw_sasl_conf_free(sc);
        return KN_ERR__NOMEM;
    }
    *dst = sc;
    return 0;
}

int knw_sasl_conf_from(const kn_conf *conf, knw_sasl_conf **out, char *errstr, size_t n) {
    *out = NULL;
    const char *sp = kn_conf_get_str(conf, "security.protocol");
    if (!sp || strncasecmp(sp, "SASL_", 5) != 0)
        return 0;
    const char *mname = kn_conf_get_str(conf, "sasl.mechanism");
    const knw_sasl_mech *mech = knw_sasl_mech_find(mname);
    if (!mech && mname && !strcmp(mname, "GSSAPI")) {
        kn_errstr_set(errstr, n,
                      "sasl.mechanism GSSAPI is not in this build: libgssapi_krb5 (Debian libkrb5-dev) was not "
                      "found when kafka-native was built");
        return KN_ERR__CONFIG;
    }
    if (!mech) {
        char list[128];
        kn_errstr_set(errstr, n, "sasl.mechanism %s is not supported (supported: %s)",
                      mname ? mname : "(null)", knw_sasl_mech_list(list, sizeof list));
        return KN_ERR__CONFIG;
    }
    const char *jaas = kn_conf_get_str(conf, "sasl.jaas.config");
    void *token_opaque = NULL;
    kn_oauthbearer_token_cb *token_fn = mech == &knw_sasl_oauthbearer ? kn_conf_oauthbearer_token_cb(conf, &token_opaque)
                                                                      : NULL;
    if ((!jaas || !*jaas) && token_fn)
        jaas = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;";
    if (!jaas || !*jaas) {
        kn_errstr_set(errstr, n,
                      "sasl.jaas.config is required for sasl.mechanism %s (e.g. %s required username=\"...\" "
                      "password=\"...\";)",
                      mech->name, mech->login_module);
        return KN_ERR__CONFIG;
    }
    knw_sasl_conf *sc = kn_calloc(1, sizeof *sc);
    if (!sc)
        return KN_ERR__NOMEM;
    sc->mech = mech;
    sc->token_fn = token_fn;
    sc->token_opaque = token_opaque;
    sc->refresh_window_factor = kn_conf_get_double(conf, "sasl.login.refresh.window.factor");
    sc->refresh_window_jitter = kn_conf_get_double(conf, "sasl.login.refresh.window.jitter");
    sc->refresh_min_period_ms = kn_conf_get_int(conf, "sasl.login.refresh.min.period.seconds") * 1000;
    sc->refresh_buffer_ms = kn_conf_get_int(conf, "sasl.login.refresh.buffer.seconds") * 1000;
    int rc = (sc->mechanism = kn_strdup(mech->name)) ? 0 : KN_ERR__NOMEM;
    if (!rc)
        rc = knw_jaas_parse(jaas, &sc->jaas, errstr, n);
    if (!rc && mech == &knw_sasl_gssapi) {
        /* Java: the JAAS serviceName option, else the client key. */
        const char *svc = knw_jaas_get(&sc->jaas, "serviceName");
        if (!svc)
            svc = kn_conf_get_str(conf, "sasl.kerberos.service.name");
        sc->krb_renew_factor = kn_conf_get_double(conf, "sasl.kerberos.ticket.renew.window.factor");
        sc->krb_renew_jitter = kn_conf_get_double(conf, "sasl.kerberos.ticket.renew.jitter");
        sc->krb_min_relogin_ms = kn_conf_get_int(conf, "sasl.kerberos.min.time.before.relogin");
        if (svc && !(sc->krb_service = kn_strdup(svc)))
            rc = KN_ERR__NOMEM;
    }
    if (!rc && strcmp(sc->jaas.login_module, mech->login_module) != 0) {
        kn_errstr_set(errstr, n,
                      "sasl.jaas.config: login module %.200s does not provide credentials for "
                      "sasl.mechanism %s (use %s)",
                      sc->jaas.login_module, mech->name, mech->login_module);
        rc = KN_ERR__CONFIG;
    }
    /* OAUTHBEARER from the token endpoint (KIP-768), when configured. */
    if (!rc && mech == &knw_sasl_oauthbearer && !token_fn)
        rc = knw_oidc_from(conf, &sc->jaas, &sc->oidc, errstr, n);
    if (!rc)
        rc = mech->check(sc, errstr, n);
    if (rc) {
        knw_sasl_conf_free(sc);
        return rc;
    }
    *out = sc;
    return 0;
}

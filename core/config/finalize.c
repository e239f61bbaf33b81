/*
 * finalize.c: kn_conf_finalize, the rules that span several keys, as the
 * Java 4.x clients apply them when a client is constructed
 * (ProducerConfig/ConsumerConfig postProcessParsedConfig, KafkaProducer's
 * delivery timeout, the admin client's bootstrap addresses, ...).
 *
 * Like Java, a rule broken by values the user set explicitly is an
 * error, while a default that conflicts with them is quietly adjusted
 * (kn_conf_derive) where Java adjusts it: e.g. acks=1 alone turns the
 * default enable.idempotence=true off, acks=1 with an explicit
 * enable.idempotence=true is an error.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"

/* Maximum in-flight requests a broker tracks per idempotent producer. */
#define KN_MAX_IN_FLIGHT_IDEMPOTENT 5

/* host:port, [v6]:port, optionally after "scheme://" (Java's
 * ClientUtils accepts "PLAINTEXT://host:9092" too). */
static int valid_address(const char *s) {
    const char *scheme = strstr(s, "://");
    if (scheme)
        s = scheme + 3;
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return 0;
    long port = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return 0;
        port = port * 10 + (*p - '0');
        if (port > 65535)
            return 0;
    }
    const char *h = s, *he = colon;
    if (*h == '[') {
        if (he[-1] != ']' || he - h < 3)
            return 0;
        h++;
        he--;
    }
    for (const char *p = h; p < he; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-%._:", *p))
            return 0;
    return he > h;
}

static int check_addresses(const kn_conf *conf, const char *key, int *countp, char *errstr, size_t size) {
    char **items;
    int n;
    if (kn_conf_get_list(conf, key, &items, &n) != KN_OK) {
        kn_errstr_set(errstr, size, "out of memory");
        return KN_ERR__NOMEM;
    }
    int err = KN_OK;
    for (int i = 0; i < n && !err; i++) {
        if (!valid_address(items[i])) {
            kn_errstr_set(errstr, size, "invalid url in %s: \"%s\" (expected host:port)", key, items[i]);
            err = KN_ERR__CONFIG;
        }
    }
    kn_conf_list_free(items, n);
    *countp = n;
    return err;
}

static int finalize_bootstrap(kn_conf *conf, char *errstr, size_t size) {
    int nservers = 0, ncontrollers = 0, err;
    kn_client_type type = kn_conf_client_type(conf);
    if (type != KN_CLIENT_ADMIN && !kn_conf_is_set(conf, "bootstrap.servers")) {
        kn_errstr_set(errstr, size, "missing required configuration \"bootstrap.servers\" which has no default value");
        return KN_ERR__CONFIG;
    }
    if ((err = check_addresses(conf, "bootstrap.servers", &nservers, errstr, size)))
        return err;
    if (type == KN_CLIENT_ADMIN) {
        if ((err = check_addresses(conf, "bootstrap.controllers", &ncontrollers, errstr, size)))
            return err;
        if (nservers && ncontrollers) {
            kn_errstr_set(errstr, size, "you cannot set both bootstrap.servers and bootstrap.controllers");
            return KN_ERR__CONFIG;
        }
        if (!nservers && !ncontrollers) {
            kn_errstr_set(errstr, size, "you must set either bootstrap.servers or bootstrap.controllers");
            return KN_ERR__CONFIG;
        }
    } else if (!nservers) {
        kn_errstr_set(errstr, size, "no bootstrap urls given in bootstrap.servers");
        return KN_ERR__CONFIG;
    }
    return KN_OK;
}

static int finalize_common(kn_conf *conf, char *errstr, size_t size) {
    const char *proto = kn_conf_get_str(conf, "security.protocol");
    if (proto && strncmp(proto, "SASL_", 5) == 0) {
        const char *mech = kn_conf_get_str(conf, "sasl.mechanism");
        if (!mech || !*mech) {
            kn_errstr_set(errstr, size,
                          "sasl.mechanism must be a non-empty string when security.protocol is %s", proto);
            return KN_ERR__CONFIG;
        }
    }
    /* Java: setting only the initial reconnect backoff means a fixed
     * backoff, so the maximum follows it. */
    if (kn_conf_is_set(conf, "reconnect.backoff.ms") && !kn_conf_is_set(conf, "reconnect.backoff.max.ms")) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRId64, kn_conf_get_int(conf, "reconnect.backoff.ms"));
        if (kn_conf_derive(conf, "reconnect.backoff.max.ms", buf) != KN_OK)
            return KN_ERR__NOMEM;
    }
    return KN_OK;
}

static int finalize_producer(kn_conf *conf, char *errstr, size_t size) {
    int idempotence = kn_conf_get_bool(conf, "enable.idempotence");
    int explicit_idempotence = kn_conf_is_set(conf, "enable.idempotence");
    if (idempotence) {
        int disable = 0;
        const char *acks = kn_conf_get_str(conf, "acks");
        int acks_all = acks && (strcmp(acks, "all") == 0 || strcmp(acks, "-1") == 0);
        if (kn_conf_get_int(conf, "retries") == 0) {
            if (explicit_idempotence) {
                kn_errstr_set(errstr, size, "must set retries to non-zero when using the idempotent producer");
                return KN_ERR__CONFIG;
            }
            disable = 1;
        }
        if (!acks_all) {
            if (explicit_idempotence) {
                kn_errstr_set(errstr, size,
                              "must set acks to all in order to use the idempotent producer "
                              "(otherwise idempotence cannot be guaranteed)");
                return KN_ERR__CONFIG;
            }
            disable = 1;
        }
        /* Java 4.x: too many in-flight requests is an error whenever
         * idempotence is on, even by default (set enable.idempotence=false
         * to use more). */
        int64_t in_flight = kn_conf_get_int(conf, "max.in.flight.requests.per.connection");
        if (in_flight > KN_MAX_IN_FLIGHT_IDEMPOTENT) {
            kn_errstr_set(errstr, size,
                          "to use the idempotent producer, max.in.flight.requests.per.connection must be set to "
                          "at most %d (current value %" PRId64 "); set enable.idempotence=false to allow more",
                          KN_MAX_IN_FLIGHT_IDEMPOTENT, in_flight);
            return KN_ERR__CONFIG;
        }
        if (disable) {
            if (kn_conf_derive(conf, "enable.idempotence", "false") != KN_OK)
                return KN_ERR__NOMEM;
            idempotence = 0;
        }
    }
    if (!idempotence && kn_conf_is_set(conf, "transactional.id")) {
        kn_errstr_set(errstr, size, "cannot set a transactional.id without also enabling idempotence");
        return KN_ERR__CONFIG;
    }

    /* With two-phase commit an external coordinator ends transactions,
     * so the broker-side transaction timeout cannot apply. */
    if (kn_conf_get_bool(conf, "transaction.two.phase.commit.enable") &&
        kn_conf_is_set(conf, "transaction.timeout.ms")) {
        kn_errstr_set(errstr, size,
                      "cannot set transaction.timeout.ms when transaction.two.phase.commit.enable is set to true "
                      "(transactions do not expire with two-phase commit)");
        return KN_ERR__CONFIG;
    }

    int64_t delivery = kn_conf_get_int(conf, "delivery.timeout.ms");
    int64_t linger = kn_conf_get_int(conf, "linger.ms");
    if (linger > INT32_MAX)
        linger = INT32_MAX;
    int64_t floor = linger + kn_conf_get_int(conf, "request.timeout.ms");
    if (floor > INT32_MAX)
        floor = INT32_MAX;
    if (delivery < floor) {
        if (kn_conf_is_set(conf, "delivery.timeout.ms")) {
            kn_errstr_set(errstr, size,
                          "delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms "
                          "(%" PRId64 " < %" PRId64 ")",
                          delivery, floor);
            return KN_ERR__CONFIG;
        }
        /* Java raises the default to the floor for compatibility. */
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRId64, floor);
        if (kn_conf_derive(conf, "delivery.timeout.ms", buf) != KN_OK)
            return KN_ERR__NOMEM;
    }
    return KN_OK;
}

/* Kafka's rule for static member ids: 1..249 of [a-zA-Z0-9._-], not
 * "." or "..". */
static int valid_group_instance_id(const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n > 249 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)id[i]) && !strchr("._-", id[i]))
            return 0;
    return 1;
}

/* Explicitly set to something other than blanks: Java's test for the
 * keys a group protocol does not use. */
static int set_non_blank(const kn_conf *conf, const char *key) {
    if (!kn_conf_is_set(conf, key))
        return 0;
    char buf[8];
    size_t n = sizeof(buf);
    return kn_conf_get(conf, key, buf, &n) == KN_OK && n > 1;
}

static int finalize_consumer(kn_conf *conf, char *errstr, size_t size) {
    /* Java's *_PROTOCOL_UNSUPPORTED_CONFIGS: settings the chosen group
     * protocol does not use are errors when set to a non-blank value.
     * The share.* keys belong to share consumers, never to these. */
    const char *protocol = kn_conf_get_str(conf, "group.protocol");
    int consumer_protocol = protocol && strcmp(protocol, "consumer") == 0;
    static const char *const consumer_unsupported[] = {"partition.assignment.strategy", "heartbeat.interval.ms",
                                                       "session.timeout.ms", "share.acknowledgement.mode",
                                                       "share.acquire.mode", NULL};
    static const char *const classic_unsupported[] = {"group.remote.assignor", "share.acknowledgement.mode",
                                                      "share.acquire.mode", NULL};
    const char *const *unsupported = consumer_protocol ? consumer_unsupported : classic_unsupported;
    char list[200] = "";
    for (size_t i = 0; unsupported[i]; i++)
        if (set_non_blank(conf, unsupported[i]))
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? ", " : "", unsupported[i]);
    if (list[0]) {
        kn_errstr_set(errstr, size, "%s cannot be set when group.protocol=%s", list,
                      consumer_protocol ? "CONSUMER" : "CLASSIC");
        return KN_ERR__CONFIG;
    }

    const char *group_id = kn_conf_get_str(conf, "group.id");
    if (!group_id) {
        if (!kn_conf_is_set(conf, "enable.auto.commit")) {
            if (kn_conf_derive(conf, "enable.auto.commit", "false") != KN_OK)
                return KN_ERR__NOMEM;
        } else if (kn_conf_get_bool(conf, "enable.auto.commit")) {
            kn_errstr_set(errstr, size,
                          "enable.auto.commit cannot be set to true when default group id (null) is used");
            return KN_ERR__CONFIG;
        }
    }
    const char *instance_id = kn_conf_get_str(conf, "group.instance.id");
    if (instance_id && !valid_group_instance_id(instance_id)) {
        kn_errstr_set(errstr, size,
                      "group.instance.id \"%s\" is illegal: it must be 1 to 249 characters of ASCII "
                      "alphanumerics, '.', '_' and '-', and not \".\" or \"..\"",
                      instance_id);
        return KN_ERR__CONFIG;
    }
    if (group_id && !consumer_protocol &&
        kn_conf_get_int(conf, "heartbeat.interval.ms") >= kn_conf_get_int(conf, "session.timeout.ms")) {
        kn_errstr_set(errstr, size, "heartbeat.interval.ms (%" PRId64 ") must be lower than session.timeout.ms (%" PRId64 ")",
                      kn_conf_get_int(conf, "heartbeat.interval.ms"), kn_conf_get_int(conf, "session.timeout.ms"));
        return KN_ERR__CONFIG;
    }
    return KN_OK;
}

int kn_conf_finalize(kn_conf *conf, char *errstr, size_t errstr_size) {
    if (!conf) {
        kn_errstr_set(errstr, errstr_size, "kn_conf_finalize: NULL conf");
        return KN_ERR__INVALID_ARG;
    }
    int err = finalize_bootstrap(conf, errstr, errstr_size);
    if (!err)
        err = finalize_common(conf, errstr, errstr_size);
    if (!err && kn_conf_client_type(conf) == KN_CLIENT_PRODUCER)
        err = finalize_producer(conf, errstr, errstr_size);
    if (!err && kn_conf_client_type(conf) == KN_CLIENT_CONSUMER)
        err = finalize_consumer(conf, errstr, errstr_size);
    if (err == KN_ERR__NOMEM)
        kn_errstr_set(errstr, errstr_size, "out of memory finalizing the configuration");
    return err;
}

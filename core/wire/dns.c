/*
 * dns.c: getaddrinfo wrapper, bootstrap list parsing and canonical
 * bootstrap expansion (see dns.h).
 */
#include "wire/dns.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"

void knw_addrs_free(knw_addrs *a) {
    if (!a)
        return;
    kn_free(a->addrs);
    a->addrs = NULL;
    a->count = 0;
}

int knw_dns_resolve(const char *host, int port, knw_addrs *out, char *errstr, size_t errstr_size) {
    out->addrs = NULL;
    out->count = 0;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc == EAI_BADFLAGS || (rc != 0 && rc != EAI_SYSTEM && hints.ai_flags)) {
        /* AI_ADDRCONFIG hides loopback-only hosts on boxes with no
         * other interface configured: retry without it. */
        hints.ai_flags = 0;
        rc = getaddrinfo(host, portstr, &hints, &res);
    }
    if (rc != 0) {
        kn_errstr_set(errstr, errstr_size, "resolve %s:%d: %s", host, port, gai_strerror(rc));
        return KN_ERR__RESOLVE;
    }
    int n = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
        n++;
    out->addrs = kn_calloc((size_t)n ? (size_t)n : 1, sizeof *out->addrs);
    if (!out->addrs) {
        freeaddrinfo(res);
        kn_errstr_set(errstr, errstr_size, "resolve %s:%d: out of memory", host, port);
        return KN_ERR__NOMEM;
    }
    /* Two passes: IPv4 first, then IPv6; duplicates (same sockaddr) are
     * dropped since getaddrinfo repeats them per protocol. */
    for (int pass = 0; pass < 2; pass++) {
        int want = pass == 0 ? AF_INET : AF_INET6;
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            if (ai->ai_family != want || ai->ai_addrlen > sizeof(struct sockaddr_storage))
                continue;
            bool dup = false;
            for (int i = 0; i < out->count && !dup; i++)
                dup = out->addrs[i].len == ai->ai_addrlen &&
                      !memcmp(&out->addrs[i].sa, ai->ai_addr, ai->ai_addrlen);
            if (dup)
                continue;
            knw_addr *a = &out->addrs[out->count++];
            memcpy(&a->sa, ai->ai_addr, ai->ai_addrlen);
            a->len = ai->ai_addrlen;
            a->family = ai->ai_family;
        }
    }
    freeaddrinfo(res);
    if (out->count == 0) {
        knw_addrs_free(out);
        kn_errstr_set(errstr, errstr_size, "resolve %s:%d: no IPv4/IPv6 address", host, port);
        return KN_ERR__RESOLVE;
    }
    return 0;
}

const char *knw_addr_str(const knw_addr *a, char *buf, size_t size) {
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (a->family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&a->sa;
        inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof ip);
        port = ntohs(s4->sin_port);
        snprintf(buf, size, "%s:%d", ip, port);
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a->sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof ip);
        port = ntohs(s6->sin6_port);
        snprintf(buf, size, "[%s]:%d", ip, port);
    }
    return buf;
}

void knw_hostports_free(knw_hostport *hp, int count) {
    if (!hp)
        return;
    for (int i = 0; i < count; i++)
        kn_free(hp[i].host);
    kn_free(hp);
}

static int parse_one(const char *s, size_t n, knw_hostport *out, char *errstr, size_t errstr_size) {
    const char *colon = NULL;
    const char *host = s;
    size_t hlen;
    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close || close + 1 >= s + n || close[1] != ':')
            goto bad;
        host = s + 1;
        hlen = (size_t)(close - s - 1);
        colon = close + 1;
    } else {
        for (size_t i = n; i > 0; i--)
            if (s[i - 1] == ':') {
                colon = s + i - 1;
                break;
            }
        if (!colon)
            goto bad;
        hlen = (size_t)(colon - s);
    }
    if (hlen == 0)
        goto bad;
    char portbuf[8];
    size_t plen = (size_t)(s + n - colon - 1);
    if (plen == 0 || plen >= sizeof portbuf)
        goto bad;
    memcpy(portbuf, colon + 1, plen);
    portbuf[plen] = 0;
    char *end;
    long port = strtol(portbuf, &end, 10);
    if (*end || port < 1 || port > 65535)
        goto bad;
    out->host = kn_strndup(host, hlen);
    out->port = (int)port;
    return out->host ? 0 : KN_ERR__NOMEM;
bad:
    kn_errstr_set(errstr, errstr_size, "bootstrap.servers: invalid entry \"%.*s\" (expected host:port)",
                  (int)n, s);
    return KN_ERR__CONFIG;
}

int knw_parse_hostports(const char *list, knw_hostport **out, int *count, char *errstr, size_t errstr_size) {
    *out = NULL;
    *count = 0;
    if (!list) {
        kn_errstr_set(errstr, errstr_size, "bootstrap.servers is required");
        return KN_ERR__CONFIG;
    }
    int cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    knw_hostport *hp = kn_calloc((size_t)cap, sizeof *hp);
    if (!hp)
        return KN_ERR__NOMEM;
    int n = 0;
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        if (!e)
            e = p + strlen(p);
        const char *a = p, *b = e;
        while (a < b && (*a == ' ' || *a == '\t' || *a == '\n'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n'))
            b--;
        if (b > a) {
            int rc = parse_one(a, (size_t)(b - a), &hp[n], errstr, errstr_size);
            if (rc) {
                knw_hostports_free(hp, n);
                return rc;
            }
            n++;
        }
        p = *e ? e + 1 : e;
    }
    if (n == 0) {
        kn_free(hp);
        kn_errstr_set(errstr, errstr_size, "bootstrap.servers is empty");
        return KN_ERR__CONFIG;
    }
    *out = hp;
    *count = n;
    return 0;
}

int knw_canonicalize_hostports(knw_hostport **hps, int *count, char *errstr, size_t errstr_size) {
    knw_hostport *in = *hps;
    int n_in = *count, n_out = 0, cap = 0;
    knw_hostport *out = NULL;
    char last_err[256] = "";
    for (int i = 0; i < n_in; i++) {
        knw_addrs addrs;
        if (knw_dns_resolve(in[i].host, in[i].port, &addrs, last_err, sizeof last_err))
            continue;
        for (int j = 0; j < addrs.count; j++) {
            char name[NI_MAXHOST];
            if (getnameinfo((const struct sockaddr *)&addrs.addrs[j].sa, addrs.addrs[j].len, name,
                            sizeof name, NULL, 0, 0) != 0)
                continue;
            bool dup = false;
            for (int k = 0; k < n_out && !dup; k++)
                dup = out[k].port == in[i].port && !strcmp(out[k].host, name);
            if (dup)
                continue;
            if (n_out == cap) {
                int ncap = cap ? cap * 2 : 4;
                knw_hostport *grown = kn_realloc(out, (size_t)ncap * sizeof *out);
                if (!grown) {
                    knw_addrs_free(&addrs);
                    knw_hostports_free(out, n_out);
                    return KN_ERR__NOMEM;
                }
                out = grown;
                cap = ncap;
            }
            out[n_out].host = kn_strdup(name);
            out[n_out].port = in[i].port;
            if (!out[n_out].host) {
                knw_addrs_free(&addrs);
                knw_hostports_free(out, n_out);
                return KN_ERR__NOMEM;
            }
            n_out++;
        }
        knw_addrs_free(&addrs);
    }
    if (n_out == 0) {
        kn_free(out);
        kn_errstr_set(errstr, errstr_size, "No resolvable bootstrap urls given in bootstrap.servers%s%s",
                      last_err[0] ? ": " : "", last_err);
        return KN_ERR__CONFIG;
    }
    knw_hostports_free(in, n_in);
    *hps = out;
    *count = n_out;
    return 0;
}

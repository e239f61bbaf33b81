/*
 * dns.h: name resolution for broker connections.
 *
 * knw_dns_resolve is the blocking lookup: every returned address is
 * kept, IPv4 before IPv6 (a "localhost" whose ::1 has no listener must
 * not hide 127.0.0.1). It never runs on the network thread: connections
 * resolve through resolver.h (a resolver thread and a 30 s cache).
 * bootstrap.servers parsing and the
 * resolve_canonical_bootstrap_servers_only expansion (run once, on the
 * thread that builds the client) live here too.
 */
#ifndef KNW_DNS_H
#define KNW_DNS_H

#include <stddef.h>
#include <sys/socket.h>

typedef struct knw_addr {
    struct sockaddr_storage sa;
    socklen_t len;
    int family;
} knw_addr;

typedef struct knw_addrs {
    knw_addr *addrs; /* owned (kn_free) */
    int count;
} knw_addrs;

/* Resolves host:port into out (IPv4 first, duplicates removed). Returns
 * 0, or KN_ERR__RESOLVE with errstr filled. out is owned by the caller:
 * knw_addrs_free(). */
int knw_dns_resolve(const char *host, int port, knw_addrs *out, char *errstr, size_t errstr_size);
void knw_addrs_free(knw_addrs *a);
/* "1.2.3.4:9092" / "[::1]:9092" into buf. */
const char *knw_addr_str(const knw_addr *a, char *buf, size_t size);

/* One bootstrap.servers entry. */
typedef struct knw_hostport {
    char *host; /* owned */
    int port;
} knw_hostport;

/* Parses "h1:p1,h2:p2" (spaces ignored, "[v6]:p" accepted) into a new
 * array (caller frees with knw_hostports_free). Returns 0 or
 * KN_ERR__CONFIG naming the bad entry. */
int knw_parse_hostports(const char *list, knw_hostport **out, int *count, char *errstr, size_t errstr_size);
void knw_hostports_free(knw_hostport *hp, int count);
/* client.dns.lookup=resolve_canonical_bootstrap_servers_only: replaces
 * each entry with the canonical names of its addresses (reverse lookup),
 * as Java does when building its bootstrap list. Returns 0 or
 * KN_ERR__CONFIG when no entry resolves. */
int knw_canonicalize_hostports(knw_hostport **hps, int *count, char *errstr, size_t errstr_size);

#endif

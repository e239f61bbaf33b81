/*
 * gssapi_worker.h: a client's Kerberos login and the thread that runs
 * the GSS-API calls that may wait on the KDC, for the GSSAPI SASL
 * mechanism (sasl_gssapi.c).
 *
 * Why a thread: the first gss_init_sec_context of an exchange asks the
 * KDC for a service ticket (and, after a keytab login is due, a new
 * TGT): a network round trip that takes milliseconds on loopback and
 * seconds against a slow or unreachable KDC. On the network thread that
 * would stall every other broker's traffic, so the network thread only
 * queues a job (knw_krb_submit) and picks the answer up after this
 * thread calls wake (the client wakes its loop: a callback, so this
 * module needs nothing of wire/), as core/wire/resolver.c does for names. The
 * later steps of an exchange (checking the broker's AP-REP, the RFC
 * 4752 security-layer wrap/unwrap) are local computations and run on
 * the network thread.
 *
 * Credentials (sasl.jaas.config's Krb5LoginModule options):
 *   - useKeyTab=true keyTab=... principal=...: the client logs in from
 *     its keytab (krb5_get_init_creds_keytab) into a MEMORY credential
 *     cache of its own (no process-wide KRB5_CLIENT_KTNAME or
 *     KRB5CCNAME is touched), and logs in again before the TGT expires
 *     at Java's point: start + lifetime * (sasl.kerberos.ticket.renew.
 *     window.factor + random * sasl.kerberos.ticket.renew.jitter), not
 *     sooner than sasl.kerberos.min.time.before.relogin after the last
 *     login unless the ticket would expire first. A KIP-368
 *     re-authentication then uses the new ticket.
 *   - useTicketCache=true (without useKeyTab): the ticket cache named
 *     by the ticketCache option, or the default one (KRB5CCNAME,
 *     default_ccache_name), kept fresh by whoever runs kinit.
 *
 * Ownership: the client owns its knw_krb (created when it is built,
 * knw_krb_stop joins the thread before the loop goes, knw_krb_free after
 * the connections are freed). A job belongs to the connection that
 * submitted it; a job abandoned while the thread runs it is freed by
 * the thread. lock guards the queue and the job states.
 */
#ifndef KNW_SASL_GSSAPI_WORKER_H
#define KNW_SASL_GSSAPI_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct knw_krb knw_krb;
typedef struct knw_krb_job knw_krb_job;
typedef struct knw_sasl_conf knw_sasl_conf;
struct kn_logger;

/* The client's worker for a GSSAPI conf (NULL for other mechanisms or
 * a build without Kerberos): 0 with *out set, or an error with errstr.
 * The thread starts at the first job. */
int knw_krb_new(const knw_sasl_conf *conf, void (*wake)(void *), void *wake_arg, struct kn_logger *log, knw_krb **out,
                char *errstr, size_t errstr_size);
/* Stops and joins the thread (a job in progress finishes first). */
void knw_krb_stop(knw_krb *k);
void knw_krb_free(knw_krb *k);

/* Network thread: queues the first step of an exchange with the broker
 * at host. NULL when out of memory. */
knw_krb_job *knw_krb_submit(knw_krb *k, const char *host);
/* Network thread: true once the job is done; then the GSS context
 * (a gss_ctx_id_t) and the broker's name (a gss_name_t), both owned
 * by the caller from here, the first token
 * (kn_malloc'd, owned by the caller) or the error (*err non-zero with
 * errstr) are handed over and the job is freed. */
bool knw_krb_collect(knw_krb *k, knw_krb_job *job, void **gss_ctx, void **gss_name, uint8_t **token,
                     size_t *token_len, int *err, char *errstr, size_t errstr_size);
/* Drops a job whose connection went away (any state). */
void knw_krb_abandon(knw_krb *k, knw_krb_job *job);

/* The service name (sasl.kerberos.service.name) of the client. */
const char *knw_krb_service(const knw_krb *k);

/* Stats for tests: keytab logins done, and the longest a job took on
 * the thread (ms): the time the network thread did not wait. */
int64_t knw_krb_logins(const knw_krb *k);
int64_t knw_krb_max_job_ms(const knw_krb *k);

/* Java's KerberosLogin refresh point of a TGT valid [start, end) got at
 * now (ms): start + (end - start) * (factor + jitter * r), r in [0, 1],
 * moved to now + min_relogin_ms if sooner, unless that is past end. */
int64_t knw_krb_relogin_point(double factor, double jitter, int64_t min_relogin_ms, double r, int64_t start,
                              int64_t end, int64_t now);

/* "<major text>: <minor text>" of a GSS-API status pair into buf. */
const char *knw_gss_status(uint32_t major, uint32_t minor, char *buf, size_t size);

#endif

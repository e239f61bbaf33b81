/*
 * gssapi_worker.c: the client's Kerberos login (keytab or ticket cache)
 * and the thread that runs the KDC-bound first GSS-API step of each
 * GSSAPI exchange (see gssapi_worker.h).
 *
 * Thread: knw_krb_main owns the krb5_context and the MEMORY ccache; the
 * network thread only touches the queue and the jobs under lock.
 */
#include "wire/sasl/gssapi_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "wire/sasl/sasl.h"

#ifdef KN_HAVE_GSSAPI

#include <pthread.h>
#include <time.h>

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>

typedef enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_ABANDONED } job_state;

struct knw_krb_job {
    knw_krb_job *next;
    job_state state;
    char *host; /* owned */
    /* results */
    gss_ctx_id_t ctx;
    gss_name_t target; /* the broker's name, canonical for krb5 */
    uint8_t *token;
    size_t token_len;
    int err;
    char errstr[400];
};

struct knw_krb {
    /* settings, read-only */
    char *service, *keytab, *principal, *ticket_cache; /* owned */
    bool use_keytab;
    double renew_factor, renew_jitter;
    int64_t min_relogin_ms;
    void (*wake)(void *); /* the client wakes its network loop */
    void *wake_arg;
    struct kn_logger *log;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool started, stop;
    knw_krb_job *todo, *todo_tail; /* guarded by lock */
    int64_t logins, max_job_ms;    /* guarded by lock */

    /* the thread's own */
    krb5_context kctx;
    krb5_ccache mem; /* keytab logins go here */
    char mem_name[64];
    bool logged_in;
    int64_t tgt_start_ms, tgt_end_ms, last_login_ms, relogin_at_ms;
};

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *knw_gss_status(uint32_t major, uint32_t minor, char *buf, size_t size) {
    size_t off = 0;
    buf[0] = 0;
    /* The routine and calling errors, then the mechanism's (krb5) text. */
    for (int pass = 0; pass < 2; pass++) {
        OM_uint32 code = pass ? minor : major, msg_ctx = 0, min2;
        if (pass && !minor)
            break;
        do {
            gss_buffer_desc txt = GSS_C_EMPTY_BUFFER;
            if (GSS_ERROR(gss_display_status(&min2, code, pass ? GSS_C_MECH_CODE : GSS_C_GSS_CODE,
                                             pass ? (gss_OID)gss_mech_krb5 : GSS_C_NO_OID, &msg_ctx, &txt)))
                break;
            if (off < size)
                off += (size_t)snprintf(buf + off, size - off, "%s%.*s", off ? ": " : "", (int)txt.length,
                                        (const char *)txt.value);
            gss_release_buffer(&min2, &txt);
        } while (msg_ctx);
    }
    return buf;
}

/* krb5's message for code into errstr after prefix. */
static void krb_err(knw_krb *k, krb5_error_code code, char *errstr, size_t n, const char *prefix) {
    const char *m = krb5_get_error_message(k->kctx, code);
    kn_errstr_set(errstr, n, "%s: %s", prefix, m ? m : "unknown Kerberos error");
    krb5_free_error_message(k->kctx, m);
}

int64_t knw_krb_relogin_point(double factor, double jitter, int64_t min_relogin_ms, double r, int64_t start,
                              int64_t end, int64_t now) {
    int64_t at = start + (int64_t)((double)(end - start) * (factor + jitter * r));
    /* Not sooner than min.time.before.relogin after this login, unless
     * that would let the ticket expire. */
    if (at < now + min_relogin_ms && now + min_relogin_ms < end)
        at = now + min_relogin_ms;
    return at;
}

static int64_t relogin_point(const knw_krb *k, int64_t start, int64_t end, int64_t now) {
    return knw_krb_relogin_point(k->renew_factor, k->renew_jitter, k->min_relogin_ms,
                                 (double)random() / (double)RAND_MAX, start, end, now);
}

/* Keytab login into the MEMORY ccache (thread). */
static int login(knw_krb *k, char *errstr, size_t n) {
    krb5_principal princ = NULL;
    krb5_keytab kt = NULL;
    krb5_creds creds;
    krb5_get_init_creds_opt *opt = NULL;
    bool have_creds = false;
    char what[600];
    int rc = KN_ERR__AUTHENTICATION;
    memset(&creds, 0, sizeof creds);
    snprintf(what, sizeof what, "Kerberos login of %s from keytab %s failed", k->principal, k->keytab);
    krb5_error_code code = krb5_parse_name(k->kctx, k->principal, &princ);
    if (!code)
        code = krb5_kt_resolve(k->kctx, k->keytab, &kt);
    if (!code)
        code = krb5_get_init_creds_opt_alloc(k->kctx, &opt);
    if (!code) {
        krb5_get_init_creds_opt_set_forwardable(opt, 0);
        code = krb5_get_init_creds_keytab(k->kctx, &creds, princ, kt, 0, NULL, opt);
        have_creds = !code;
    }
    if (!code)
        code = krb5_cc_initialize(k->kctx, k->mem, princ);
    if (!code)
        code = krb5_cc_store_cred(k->kctx, k->mem, &creds);
    if (code) {
        krb_err(k, code, errstr, n, what);
        goto done;
    }
    int64_t now = wall_ms();
    k->tgt_start_ms = (int64_t)creds.times.starttime * 1000;
    if (!k->tgt_start_ms)
        k->tgt_start_ms = (int64_t)creds.times.authtime * 1000;
    k->tgt_end_ms = (int64_t)creds.times.endtime * 1000;
    k->last_login_ms = now;
    k->relogin_at_ms = relogin_point(k, k->tgt_start_ms, k->tgt_end_ms, now);
    k->logged_in = true;
    pthread_mutex_lock(&k->lock);
    k->logins++;
    pthread_mutex_unlock(&k->lock);
    kn_log(k->log, KN_LOG_DEBUG,
           "GSSAPI: logged in as %s from its keytab: TGT valid for %lld s, re-login in %lld s", k->principal,
           (long long)((k->tgt_end_ms - now) / 1000), (long long)((k->relogin_at_ms - now) / 1000));
    rc = 0;
done:
    if (have_creds)
        krb5_free_cred_contents(k->kctx, &creds);
    if (opt)
        krb5_get_init_creds_opt_free(k->kctx, opt);
    if (kt)
        krb5_kt_close(k->kctx, kt);
    if (princ)
        krb5_free_principal(k->kctx, princ);
    return rc;
}

/* The first step of an exchange with the broker at job->host (thread). */
static void run_job(knw_krb *k, knw_krb_job *job) {
    OM_uint32 major = 0, minor = 0, min2;
    gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
    gss_name_t name_in = GSS_C_NO_NAME;
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    char status[300], target_text[300];
    snprintf(target_text, sizeof target_text, "%s@%s", k->service, job->host);
    if (k->use_keytab) {
        int64_t now = wall_ms();
        /* Due, or the TGT has run out (min.time.before.relogin never
         * keeps an expired ticket in use). */
        if ((!k->logged_in || now >= k->relogin_at_ms || now >= k->tgt_end_ms) &&
            login(k, job->errstr, sizeof job->errstr)) {
            job->err = KN_ERR__AUTHENTICATION;
            return;
        }
    }
    gss_key_value_element_desc el = {"ccache", k->use_keytab ? k->mem_name : k->ticket_cache};
    gss_key_value_set_desc store = {1, &el};
    gss_OID_set_desc mechs = {1, (gss_OID)gss_mech_krb5};
    if (el.value)
        major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &store,
                                      &cred, NULL, NULL);
    else
        major = gss_acquire_cred(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &cred, NULL,
                                 NULL);
    if (GSS_ERROR(major)) {
        kn_errstr_set(job->errstr, sizeof job->errstr, "GSSAPI: no Kerberos credentials (%s%s): %s",
                      k->use_keytab ? "keytab login of " : "ticket cache ",
                      k->use_keytab ? k->principal
                      : el.value    ? el.value
                                    : "default",
                      knw_gss_status(major, minor, status, sizeof status));
        job->err = KN_ERR__AUTHENTICATION;
        goto done;
    }
    gss_buffer_desc name = {strlen(target_text), target_text};
    /* Canonicalized here, once: any lookup it needs stays on this
     * thread, and the network thread's later steps reuse the name. */
    major = gss_import_name(&minor, &name, GSS_C_NT_HOSTBASED_SERVICE, &name_in);
    if (!GSS_ERROR(major))
        major = gss_canonicalize_name(&minor, name_in, (gss_OID)gss_mech_krb5, &job->target);
    if (!GSS_ERROR(major))
        major = gss_init_sec_context(&minor, cred, &job->ctx, job->target, (gss_OID)gss_mech_krb5,
                                     GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG, 0,
                                     GSS_C_NO_CHANNEL_BINDINGS, GSS_C_NO_BUFFER, NULL, &out, NULL, NULL);
    if (GSS_ERROR(major)) {
        kn_errstr_set(job->errstr, sizeof job->errstr, "GSSAPI: gss_init_sec_context for %s failed: %s",
                      target_text, knw_gss_status(major, minor, status, sizeof status));
        job->err = KN_ERR__AUTHENTICATION;
        goto done;
    }
    if (out.length == 0 || out.length > KNW_SASL_MAX_TOKEN_BYTES || !(job->token = kn_malloc(out.length))) {
        kn_errstr_set(job->errstr, sizeof job->errstr,
                      "GSSAPI: gss_init_sec_context for %s gave %zu token bytes", target_text,
                      (size_t)out.length);
        job->err = out.length ? KN_ERR__NOMEM : KN_ERR__AUTHENTICATION;
        goto done;
    }
    memcpy(job->token, out.value, out.length);
    job->token_len = out.length;
done:
    gss_release_buffer(&min2, &out);
    if (name_in != GSS_C_NO_NAME)
        gss_release_name(&min2, &name_in);
    if (cred != GSS_C_NO_CREDENTIAL)
        gss_release_cred(&min2, &cred);
    if (job->err && job->ctx != GSS_C_NO_CONTEXT)
        gss_delete_sec_context(&min2, &job->ctx, GSS_C_NO_BUFFER);
}

static void job_free(knw_krb_job *job) {
    if (!job)
        return;
    OM_uint32 min2;
    if (job->ctx != GSS_C_NO_CONTEXT)
        gss_delete_sec_context(&min2, &job->ctx, GSS_C_NO_BUFFER);
    if (job->target != GSS_C_NO_NAME)
        gss_release_name(&min2, &job->target);
    kn_free(job->token);
    kn_free(job->host);
    kn_free(job);
}

static void *krb_main(void *arg) {
    knw_krb *k = arg;
    pthread_mutex_lock(&k->lock);
    for (;;) {
        while (!k->stop && !k->todo) {
            if (k->use_keytab && k->logged_in) {
                /* Log in again at the refresh point even with no exchange
                 * due, so the next one finds a fresh TGT (Java's
                 * KerberosLogin thread). */
                int64_t wait = k->relogin_at_ms - wall_ms();
                if (wait <= 0)
                    break;
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += wait / 1000;
                ts.tv_nsec += (long)(wait % 1000) * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&k->cond, &k->lock, &ts);
            } else {
                pthread_cond_wait(&k->cond, &k->lock);
            }
        }
        if (k->stop)
            break;
        knw_krb_job *job = k->todo;
        if (!job) {
            /* The refresh point came: log in ahead of the next exchange. */
            pthread_mutex_unlock(&k->lock);
            char err[400];
            if (login(k, err, sizeof err)) {
                kn_log(k->log, KN_LOG_WARN, "GSSAPI: %s (tried again at the next authentication)", err);
                k->logged_in = false;
            }
            pthread_mutex_lock(&k->lock);
            continue;
        }
        k->todo = job->next;
        if (!k->todo)
            k->todo_tail = NULL;
        job->next = NULL;
        job->state = JOB_RUNNING;
        pthread_mutex_unlock(&k->lock);
        int64_t t0 = mono_ms();
        run_job(k, job);
        int64_t took = mono_ms() - t0;
        /* Logged before the hand-over: the job is not ours after it. */
        kn_log(k->log, KN_LOG_DEBUG,
               "GSSAPI: the first step for %s@%s took %lld ms off the network thread%s%s", k->service,
               job->host, (long long)took, job->err ? ": " : "", job->err ? job->errstr : "");
        pthread_mutex_lock(&k->lock);
        if (took > k->max_job_ms)
            k->max_job_ms = took;
        if (job->state == JOB_ABANDONED) {
            job_free(job);
        } else {
            job->state = JOB_DONE;
            k->wake(k->wake_arg);
        }
    }
    pthread_mutex_unlock(&k->lock);
    return NULL;
}

int knw_krb_new(const knw_sasl_conf *conf, void (*wake)(void *), void *wake_arg, struct kn_logger *log, knw_krb **out,
                char *errstr, size_t n) {
    *out = NULL;
    if (!conf || conf->mech != &knw_sasl_gssapi)
        return 0;
    knw_krb *k = kn_calloc(1, sizeof *k);
    if (!k)
        goto nomem;
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->cond, NULL);
    k->wake = wake;
    k->wake_arg = wake_arg;
    k->log = log;
    const char *kt = knw_jaas_get(&conf->jaas, "keyTab");
    const char *princ = knw_jaas_get(&conf->jaas, "principal");
    const char *cache = knw_jaas_get(&conf->jaas, "ticketCache");
    const char *use_kt = knw_jaas_get(&conf->jaas, "useKeyTab");
    k->use_keytab = use_kt && !strcmp(use_kt, "true");
    k->renew_factor = conf->krb_renew_factor;
    k->renew_jitter = conf->krb_renew_jitter;
    k->min_relogin_ms = conf->krb_min_relogin_ms;
    if (!(k->service = kn_strdup(conf->krb_service)) || (k->use_keytab && !(k->keytab = kn_strdup(kt))) ||
        (k->use_keytab && !(k->principal = kn_strdup(princ))) ||
        (!k->use_keytab && cache && !(k->ticket_cache = kn_strdup(cache))))
        goto nomem;
    krb5_error_code code = krb5_init_context(&k->kctx);
    if (code) {
        kn_errstr_set(errstr, n,
                      "GSSAPI: cannot initialize Kerberos (krb5_init_context error %d: is krb5.conf valid?)",
                      (int)code);
        knw_krb_free(k);
        return KN_ERR__CONFIG;
    }
    /* A credential cache of this client's own: keytab logins never touch
     * the process's default cache or environment. */
    snprintf(k->mem_name, sizeof k->mem_name, "MEMORY:kn-%p", (void *)k);
    if (k->use_keytab && (code = krb5_cc_resolve(k->kctx, k->mem_name, &k->mem))) {
        krb_err(k, code, errstr, n, "GSSAPI: cannot make the client's credential cache");
        knw_krb_free(k);
        return KN_ERR__CONFIG;
    }
    *out = k;
    return 0;
nomem:
    knw_krb_free(k);
    kn_errstr_set(errstr, n, "out of memory");
    return KN_ERR__NOMEM;
}

void knw_krb_stop(knw_krb *k) {
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    k->stop = true;
    pthread_cond_broadcast(&k->cond);
    bool started = k->started;
    k->started = false;
    pthread_mutex_unlock(&k->lock);
    if (started)
        pthread_join(k->thread, NULL);
}

void knw_krb_free(knw_krb *k) {
    if (!k)
        return;
    knw_krb_stop(k);
    /* Jobs still queued belong to their connections, already freed
     * (knw_krb_abandon unlinked them); nothing is left here. */
    if (k->mem)
        krb5_cc_destroy(k->kctx, k->mem);
    if (k->kctx)
        krb5_free_context(k->kctx);
    kn_free(k->service);
    kn_free(k->keytab);
    kn_free(k->principal);
    kn_free(k->ticket_cache);
    pthread_cond_destroy(&k->cond);
    pthread_mutex_destroy(&k->lock);
    kn_free(k);
}

knw_krb_job *knw_krb_submit(knw_krb *k, const char *host) {
    knw_krb_job *job = kn_calloc(1, sizeof *job);
    if (!job || !(job->host = kn_strdup(host))) {
        kn_free(job);
        return NULL;
    }
    job->ctx = GSS_C_NO_CONTEXT;
    job->target = GSS_C_NO_NAME;
    pthread_mutex_lock(&k->lock);
    if (!k->started && !k->stop) {
        if (pthread_create(&k->thread, NULL, krb_main, k) == 0) {
            k->started = true;
            pthread_setname_np(k->thread, "kn-krb5");
        }
    }
    if (!k->started) {
        job->state = JOB_DONE;
        job->err = KN_ERR__AUTHENTICATION;
        kn_errstr_set(job->errstr, sizeof job->errstr, "GSSAPI: cannot start the Kerberos thread");
    } else {
        job->state = JOB_QUEUED;
        if (k->todo_tail)
            k->todo_tail->next = job;
        else
            k->todo = job;
        k->todo_tail = job;
        pthread_cond_signal(&k->cond);
    }
    pthread_mutex_unlock(&k->lock);
    return job;
}

bool knw_krb_collect(knw_krb *k, knw_krb_job *job, void **gss_ctx, void **gss_name, uint8_t **token,
                     size_t *token_len, int *err, char *errstr, size_t n) {
    pthread_mutex_lock(&k->lock);
    bool done = job->state == JOB_DONE;
    pthread_mutex_unlock(&k->lock);
    if (!done)
        return false;
    *err = job->err;
    if (job->err) {
        kn_errstr_set(errstr, n, "%s", job->errstr);
    } else {
        *gss_ctx = job->ctx;
        job->ctx = GSS_C_NO_CONTEXT;
        *gss_name = job->target;
        job->target = GSS_C_NO_NAME;
        *token = job->token;
        *token_len = job->token_len;
        job->token = NULL;
    }
    job_free(job);
    return true;
}

void knw_krb_abandon(knw_krb *k, knw_krb_job *job) {
    if (!job)
        return;
    pthread_mutex_lock(&k->lock);
    if (job->state == JOB_RUNNING) {
        job->state = JOB_ABANDONED; /* the thread frees it */
        job = NULL;
    } else if (job->state == JOB_QUEUED) {
        knw_krb_job **pp = &k->todo, *prev = NULL;
        while (*pp && *pp != job) {
            prev = *pp;
            pp = &(*pp)->next;
        }
        if (*pp)
            *pp = job->next;
        if (k->todo_tail == job)
            k->todo_tail = prev;
    }
    pthread_mutex_unlock(&k->lock);
    job_free(job);
}

const char *knw_krb_service(const knw_krb *k) { return k->service; }

int64_t knw_krb_logins(const knw_krb *k) {
    pthread_mutex_lock((pthread_mutex_t *)&k->lock);
    int64_t v = k->logins;
    pthread_mutex_unlock((pthread_mutex_t *)&k->lock);
    return v;
}

int64_t knw_krb_max_job_ms(const knw_krb *k) {
    pthread_mutex_lock((pthread_mutex_t *)&k->lock);
    int64_t v = k->max_job_ms;
    pthread_mutex_unlock((pthread_mutex_t *)&k->lock);
    return v;
}

#else /* no Kerberos in this build: GSSAPI is not in the mechanism table */

int knw_krb_new(const knw_sasl_conf *conf, void (*wake)(void *), void *wake_arg, struct kn_logger *log, knw_krb **out,
                char *errstr, size_t n) {
    (void)conf, (void)wake, (void)wake_arg, (void)log, (void)errstr, (void)n;
    *out = NULL;
    return 0;
}
void knw_krb_stop(knw_krb *k) { (void)k; }
void knw_krb_free(knw_krb *k) { (void)k; }

#endif

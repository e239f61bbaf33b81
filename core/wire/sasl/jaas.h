/*
 * jaas.h: the client's sasl.jaas.config, parsed the way the Java client
 * parses it (org.apache.kafka.common.security.JaasConfig over a
 * java.io.StreamTokenizer):
 *
 *   <LoginModuleClass> <flag> [<key>=<value>]* ;
 *
 * flag is required, requisite, sufficient or optional (any case);
 * values are words or quoted strings ("..." or '...', with the
 * tokenizer's backslash escapes); // and / * * / comments are skipped.
 * A client's config must hold exactly one login module (as Java).
 *
 * Owns: a knw_jaas owns every string in it (knw_jaas_free). Error
 * messages name keys and positions, never values: values are secrets.
 */
#ifndef KNW_SASL_JAAS_H
#define KNW_SASL_JAAS_H

#include <stddef.h>

typedef enum knw_jaas_flag {
    KNW_JAAS_REQUIRED = 0,
    KNW_JAAS_REQUISITE,
    KNW_JAAS_SUFFICIENT,
    KNW_JAAS_OPTIONAL,
} knw_jaas_flag;

typedef struct knw_jaas_option {
    char *key;   /* owned */
    char *value; /* owned */
} knw_jaas_option;

typedef struct knw_jaas {
    char *login_module; /* owned; NULL when not parsed */
    knw_jaas_flag flag;
    knw_jaas_option *options; /* owned array */
    int option_count;
} knw_jaas;

/* Caps that keep a hostile config from growing without bound. */
#define KNW_JAAS_MAX_TEXT    (64 * 1024)
#define KNW_JAAS_MAX_OPTIONS 64

/* Parses text into *out (zeroed first). Returns 0, KN_ERR__CONFIG with
 * errstr ("sasl.jaas.config: Value not specified for key 'password' in
 * JAAS config"), or KN_ERR__NOMEM. *out holds nothing on error. */
int knw_jaas_parse(const char *text, knw_jaas *out, char *errstr, size_t errstr_size);
/* The value of key (last one wins, as Java's map), or NULL. Borrowed. */
const char *knw_jaas_get(const knw_jaas *j, const char *key);
/* Deep copy; 0 or KN_ERR__NOMEM (dst then empty). */
int knw_jaas_copy(knw_jaas *dst, const knw_jaas *src);
/* Frees every string (clearing secrets first) and zeroes j. */
void knw_jaas_free(knw_jaas *j);
/* "required", "requisite", ... */
const char *knw_jaas_flag_name(knw_jaas_flag f);

#endif

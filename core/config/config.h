/*
 * config.h: the library-internal side of kn_conf: typed getters that
 * client constructors call when a client is built, and the explicit-set
 * test that Java's "originals().containsKey" rules need.
 *
 * Calling a getter with a key absent from the catalog, or of another
 * type than the getter's, is a programming error: it asserts in debug
 * builds and returns 0 / NULL. A null value (no default, not set) reads
 * as 0 / false / NULL / the empty list.
 */
#ifndef KN_CONF_CONFIG_H
#define KN_CONF_CONFIG_H
#include <stdint.h>

#include "config/catalog.h"
#include "kafka_native.h"

/* The log handler of kn_conf_set_log_cb (NULL: stderr) with its level
 * (-1: the process default) and opaque. */
kn_log_cb *kn_conf_log_cb(const kn_conf *conf, int *max_level, void **opaque);
/* The OAUTHBEARER token callback of kn_conf_set_oauthbearer_token_cb (NULL: none). */
kn_oauthbearer_token_cb *kn_conf_oauthbearer_token_cb(const kn_conf *conf, void **opaque);
/* int, long and short keys. */
int64_t kn_conf_get_int(const kn_conf *conf, const char *key);
/* boolean keys: 1 or 0. */
int kn_conf_get_bool(const kn_conf *conf, const char *key);
/* double keys. */
double kn_conf_get_double(const kn_conf *conf, const char *key);
/* string, password and class keys: the value, or NULL when it is null.
 * Borrowed: valid until the key is set again or conf is destroyed. */
const char *kn_conf_get_str(const kn_conf *conf, const char *key);
/* list keys: *items is a new array of *count new strings (no NULL
 * terminator needed; one is added anyway). Owned by the caller:
 * kn_conf_list_free. Returns KN_OK, KN_ERR__NOMEM, or (for a key that
 * is not a list of this client type) KN_ERR__INVALID_ARG; on error
 * *items is NULL and *count 0. */
int kn_conf_get_list(const kn_conf *conf, const char *key, char ***items, int *count);
void kn_conf_list_free(char **items, int count);

/* 1 if the user set key (kn_conf_set / properties), 0 if it holds its
 * default or a value kn_conf_finalize derived. */
int kn_conf_is_set(const kn_conf *conf, const char *key);

/* Internal: replaces key's value with a derived one (not user-set), as
 * kn_conf_finalize does when Java would adjust a default. value is
 * copied; NULL makes it null. Returns KN_OK or KN_ERR__NOMEM. */
int kn_conf_derive(kn_conf *conf, const char *key, const char *value);

/* Internal: kn_conf_load_properties on text already in memory (data,
 * len bytes, need not end in NUL); path only names it in errors. The
 * parser itself, separate so tests/fuzz/fuzz_properties.c can feed it. */
int kn_conf_parse_properties(kn_conf *conf, const char *path, const char *data, size_t len, char *errstr,
                             size_t errstr_size);

#endif

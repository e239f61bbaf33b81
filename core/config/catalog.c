/*
 * catalog.c: key lookup over the generated and extra tables, and the
 * validation and canonical form of one value against its key's type and
 * validator (the checks Java's ConfigDef makes when a value is parsed).
 * Stateless; the kn_conf object that stores values is in config.c.
 */
#include "config/catalog.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"

size_t kn_conf_key_count(void) { return kn_conf_catalog_count + kn_conf_extra_count; }

const kn_conf_key *kn_conf_key_at(size_t i) {
    if (i < kn_conf_catalog_count)
        return &kn_conf_catalog[i];
    return &kn_conf_extra_keys[i - kn_conf_catalog_count];
}

long kn_conf_key_find(const char *name) {
    size_t lo = 0, hi = kn_conf_catalog_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, kn_conf_catalog[mid].name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (size_t i = 0; i < kn_conf_extra_count; i++)
        if (strcmp(name, kn_conf_extra_keys[i].name) == 0)
            return (long)(kn_conf_catalog_count + i);
    return -1;
}

static int type_idx(kn_client_type type) {
    return type == KN_CLIENT_PRODUCER ? KN_CONF_IDX_PRODUCER
           : type == KN_CLIENT_CONSUMER ? KN_CONF_IDX_CONSUMER
                                        : KN_CONF_IDX_ADMIN;
}

const char *kn_conf_key_default(const kn_conf_key *k, kn_client_type type) {
    return k->def[type_idx(type)];
}

const char *kn_conf_type_name(kn_conf_type type) {
    switch (type) {
    case KN_CONF_BOOLEAN: return "boolean";
    case KN_CONF_SHORT: return "short";
    case KN_CONF_INT: return "int";
    case KN_CONF_LONG: return "long";
    case KN_CONF_DOUBLE: return "double";
    case KN_CONF_STRING: return "string";
    case KN_CONF_LIST: return "list";
    case KN_CONF_CLASS: return "class";
    case KN_CONF_PASSWORD: return "password";
    }
    return "?";
}

/* Java's String.trim(): strips every char <= ' '. Returns a pointer
 * into s and the trimmed length. */
static const char *trim(const char *s, size_t *lenp) {
    size_t len = strlen(s);
    while (len > 0 && (unsigned char)*s <= ' ')
        s++, len--;
    while (len > 0 && (unsigned char)s[len - 1] <= ' ')
        len--;
    *lenp = len;
    return s;
}

int kn_conf_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    size_t len;
    const char *p = trim(s, &len);
    char buf[32];
    /* Java's parseInt/parseLong: optional sign then decimal digits only. */
    if (len == 0 || len >= sizeof(buf))
        return KN_ERR__CONFIG;
    memcpy(buf, p, len);
    buf[len] = 0;
    size_t i = (buf[0] == '-' || buf[0] == '+') ? 1 : 0;
    if (buf[i] == 0)
        return KN_ERR__CONFIG;
    for (size_t j = i; buf[j]; j++)
        if (buf[j] < '0' || buf[j] > '9')
            return KN_ERR__CONFIG;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return KN_ERR__CONFIG;
    *out = (int64_t)v;
    return KN_OK;
}

int kn_conf_parse_double(const char *s, double *out) {
    size_t len;
    const char *p = trim(s, &len);
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return KN_ERR__CONFIG;
    memcpy(buf, p, len);
    buf[len] = 0;
    /* Refuse hex floats, inf and nan, which strtod takes but a Kafka
     * double setting never means. */
    for (size_t i = 0; buf[i]; i++)
        if (!strchr("0123456789+-.eE", buf[i]))
            return KN_ERR__CONFIG;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno == ERANGE || !isfinite(v))
        return KN_ERR__CONFIG;
    *out = v;
    return KN_OK;
}

int kn_conf_parse_bool(const char *s) {
    size_t len;
    const char *p = trim(s, &len);
    if (len == 4 && strncasecmp(p, "true", 4) == 0)
        return 1;
    if (len == 5 && strncasecmp(p, "false", 5) == 0)
        return 0;
    return -1;
}

/* "a, b, c" of a NULL-terminated list, into buf. */
static void join_values(const char *const *values, char *buf, size_t size) {
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; values && values[i]; i++) {
        int n = snprintf(buf + off, size - off, "%s%s", i ? ", " : "", values[i]);
        if (n < 0 || (size_t)n >= size - off)
            break;
        off += (size_t)n;
    }
}

static const char *int_type_desc(kn_conf_type t) {
    return t == KN_CONF_SHORT ? "a 16-bit integer"
           : t == KN_CONF_INT ? "a 32-bit integer"
                              : "a 64-bit integer";
}

static int range_error(const kn_conf_key *k, const char *value, char *errstr, size_t size) {
    char lo[40] = "", hi[40] = "";
    if (k->type == KN_CONF_DOUBLE) {
        snprintf(lo, sizeof(lo), "%g", k->dmin);
        snprintf(hi, sizeof(hi), "%g", k->dmax);
    } else {
        snprintf(lo, sizeof(lo), "%" PRId64, k->imin);
        snprintf(hi, sizeof(hi), "%" PRId64, k->imax);
    }
    if (k->check == KN_CHECK_RANGE_OR)
        kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected a value in [%s, %s] or %" PRId64,
                      value, k->name, lo, hi, k->extra);
    else if (k->has_min && k->has_max)
        kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected a value in [%s, %s]", value,
                      k->name, lo, hi);
    else if (k->has_min)
        kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected a value >= %s", value, k->name,
                      lo);
    else
        kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected a value <= %s", value, k->name,
                      hi);
    return KN_ERR__CONFIG;
}

static int check_int(const kn_conf_key *k, const char *value, char **canon, char *errstr, size_t size) {
    int64_t lo = k->type == KN_CONF_SHORT ? INT16_MIN : k->type == KN_CONF_INT ? INT32_MIN : INT64_MIN;
    int64_t hi = k->type == KN_CONF_SHORT ? INT16_MAX : k->type == KN_CONF_INT ? INT32_MAX : INT64_MAX;
    int64_t v;
    if (kn_conf_parse_int(value, lo, hi, &v) != KN_OK) {
        kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected %s (%" PRId64 " to %" PRId64 ")",
                      value, k->name, int_type_desc(k->type), lo, hi);
        return KN_ERR__CONFIG;
    }
    if (k->check == KN_CHECK_RANGE || k->check == KN_CHECK_RANGE_OR) {
        int ok = (!k->has_min || v >= k->imin) && (!k->has_max || v <= k->imax);
        if (!ok && !(k->check == KN_CHECK_RANGE_OR && v == k->extra))
            return range_error(k, value, errstr, size);
    }
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, v);
    *canon = kn_strdup(buf);
    return *canon ? KN_OK : KN_ERR__NOMEM;
}

/* Shortest %g form that reads back as the same double. */
static void format_double(double v, char *buf, size_t size) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static int check_double(const kn_conf_key *k, const char *value, char **canon, char *errstr,
                        size_t size) {
    double v;
    if (kn_conf_parse_double(value, &v) != KN_OK) {
        kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected a decimal number", value,
                      k->name);
        return KN_ERR__CONFIG;
    }
    if (k->check == KN_CHECK_RANGE && ((k->has_min && v < k->dmin) || (k->has_max && v > k->dmax)))
        return range_error(k, value, errstr, size);
    char buf[40];
    format_double(v, buf, sizeof(buf));
    *canon = kn_strdup(buf);
    return *canon ? KN_OK : KN_ERR__NOMEM;
}

static const char *find_value(const char *const *values, const char *s, size_t len, int icase) {
    for (size_t i = 0; values && values[i]; i++)
        if (strlen(values[i]) == len &&
            (icase ? strncasecmp(values[i], s, len) == 0 : strncmp(values[i], s, len) == 0))
            return values[i];
    return NULL;
}

/* ISO-8601 duration as java.time.Duration.parse takes it, restricted to
 * non-negative values: [+]P[nD][T[nH][nM][n[.n]S]], case-insensitive. */
static int valid_duration(const char *s, size_t len) {
    size_t i = 0;
    if (i < len && s[i] == '+')
        i++;
    if (i >= len || (s[i] != 'P' && s[i] != 'p'))
        return 0;
    i++;
    int any = 0, in_time = 0;
    const char *units = "DdHhMmSs";
    int last_unit = -1;
    while (i < len) {
        if ((s[i] == 'T' || s[i] == 't') && !in_time) {
            in_time = 1;
            i++;
            if (i >= len)
                return 0;
            continue;
        }
        size_t start = i;
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
        int frac = 0;
        if (i < len && (s[i] == '.' || s[i] == ',')) {
            frac = 1;
            i++;
            while (i < len && isdigit((unsigned char)s[i]))
                i++;
        }
        if (i == start || i >= len)
            return 0;
        const char *u = strchr(units, s[i]);
        if (!u)
            return 0;
        int unit = (int)(u - units) / 2; /* 0 D, 1 H, 2 M, 3 S */
        if ((unit == 0) == in_time || unit <= last_unit || (frac && unit != 3))
            return 0;
        last_unit = unit;
        any = 1;
        i++;
    }
    return any;
}

static int check_string(const kn_conf_key *k, const char *value, char **canon, char *errstr,
                        size_t size) {
    size_t len;
    const char *p = trim(value, &len);
    char list[512];
    switch ((kn_conf_check)k->check) {
    case KN_CHECK_ENUM: {
        const char *v = find_value(k->values, p, len, k->icase);
        if (!v) {
            join_values(k->values, list, sizeof(list));
            kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: expected one of %s%s", value, k->name,
                          list, k->icase ? " (any case)" : "");
            return KN_ERR__CONFIG;
        }
        *canon = kn_strdup(v);
        return *canon ? KN_OK : KN_ERR__NOMEM;
    }
    case KN_CHECK_NONEMPTY:
        if (len == 0) {
            kn_errstr_set(errstr, size,
                          "invalid value \"%s\" for %s: expected a non-empty string (leave it unset for none)",
                          value, k->name);
            return KN_ERR__CONFIG;
        }
        break;
    case KN_CHECK_OFFSET_RESET: {
        /* Java's AutoOffsetResetStrategy: exact lower-case words; only
         * the ISO-8601 part after "by_duration:" ignores case. */
        static const char *const words[] = {"latest", "earliest", "none", NULL};
        const char *v = find_value(words, p, len, 0);
        if (v) {
            *canon = kn_strdup(v);
            return *canon ? KN_OK : KN_ERR__NOMEM;
        }
        static const char prefix[] = "by_duration:";
        size_t plen = sizeof(prefix) - 1;
        if (len > plen && strncmp(p, prefix, plen) == 0 && valid_duration(p + plen, len - plen)) {
            *canon = kn_strndup(p, len);
            return *canon ? KN_OK : KN_ERR__NOMEM;
        }
        kn_errstr_set(errstr, size,
                      "invalid value \"%s\" for %s: expected one of latest, earliest, none, "
                      "by_duration:<ISO-8601 duration, e.g. PT1H> (not negative)",
                      value, k->name);
        return KN_ERR__CONFIG;
    }
    case KN_CHECK_SUPPORTED:
        if (len == 0) {
            *canon = NULL;
            return KN_OK;
        }
        if (!find_value(k->values, p, len, 0)) {
            join_values(k->values, list, sizeof(list));
            if (list[0])
                kn_errstr_set(errstr, size, "unsupported value \"%s\" for %s: this library supports only %s",
                              value, k->name, list);
            else
                kn_errstr_set(errstr, size,
                              "unsupported value \"%s\" for %s: Java classes cannot be loaded by this "
                              "library; leave it unset (see docs/configuration.md for the C/Lua equivalent)",
                              value, k->name);
            return KN_ERR__CONFIG;
        }
        break;
    default:
        break;
    }
    if (k->type == KN_CONF_CLASS && len == 0) {
        *canon = NULL;
        return KN_OK;
    }
    *canon = kn_strndup(p, len);
    return *canon ? KN_OK : KN_ERR__NOMEM;
}

/* Items split on ',' with surrounding whitespace dropped, as Java's
 * ConfigDef does; an empty value is the empty list. */
static int check_list(const kn_conf_key *k, const char *value, char **canon, char *errstr, size_t size) {
    size_t len;
    const char *p = trim(value, &len);
    char *out = kn_malloc(len + 1);
    if (!out)
        return KN_ERR__NOMEM;
    size_t off = 0;
    const char *end = p + len;
    const char *item = p;
    while (len > 0) {
        const char *comma = memchr(item, ',', (size_t)(end - item));
        const char *stop = comma ? comma : end;
        const char *a = item, *b = stop;
        while (a < b && (unsigned char)*a <= ' ')
            a++;
        while (b > a && (unsigned char)b[-1] <= ' ')
            b--;
        if (a == b) {
            kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: empty item in a comma-separated list",
                          value, k->name);
            kn_free(out);
            return KN_ERR__CONFIG;
        }
        if (k->check == KN_CHECK_SUPPORTED && !find_value(k->values, a, (size_t)(b - a), 0)) {
            char list[512];
            join_values(k->values, list, sizeof(list));
            if (list[0])
                kn_errstr_set(errstr, size,
                              "unsupported item \"%.*s\" in %s: this library supports only %s", (int)(b - a),
                              a, k->name, list);
            else
                kn_errstr_set(errstr, size,
                              "unsupported value \"%s\" for %s: Java classes cannot be loaded by this "
                              "library; leave it empty (see docs/configuration.md for the C/Lua equivalent)",
                              value, k->name);
            kn_free(out);
            return KN_ERR__CONFIG;
        }
        /* Java 4.x refuses duplicates in its lists; for the others a
         * repeated item is a mistake too. */
        for (size_t s = 0; s < off;) {
            const char *c = memchr(out + s, ',', off - s);
            size_t e = c ? (size_t)(c - out) : off;
            if (e - s == (size_t)(b - a) && memcmp(out + s, a, e - s) == 0) {
                kn_errstr_set(errstr, size, "invalid value \"%s\" for %s: \"%.*s\" is listed twice", value,
                              k->name, (int)(b - a), a);
                kn_free(out);
                return KN_ERR__CONFIG;
            }
            s = e + 1;
        }
        if (off)
            out[off++] = ',';
        memcpy(out + off, a, (size_t)(b - a));
        off += (size_t)(b - a);
        if (!comma)
            break;
        item = comma + 1;
    }
    out[off] = 0;
    *canon = out;
    return KN_OK;
}

int kn_conf_key_validate(const kn_conf_key *k, const char *value, char **canon, char *errstr,
                         size_t errstr_size) {
    *canon = NULL;
    switch (k->type) {
    case KN_CONF_BOOLEAN: {
        int b = kn_conf_parse_bool(value);
        if (b < 0) {
            kn_errstr_set(errstr, errstr_size, "invalid value \"%s\" for %s: expected true or false", value,
                          k->name);
            return KN_ERR__CONFIG;
        }
        *canon = kn_strdup(b ? "true" : "false");
        return *canon ? KN_OK : KN_ERR__NOMEM;
    }
    case KN_CONF_SHORT:
    case KN_CONF_INT:
    case KN_CONF_LONG:
        return check_int(k, value, canon, errstr, errstr_size);
    case KN_CONF_DOUBLE:
        return check_double(k, value, canon, errstr, errstr_size);
    case KN_CONF_LIST:
        return check_list(k, value, canon, errstr, errstr_size);
    case KN_CONF_PASSWORD: {
        /* Java 4.x trims passwords like every other string value. */
        size_t len;
        const char *p = trim(value, &len);
        *canon = kn_strndup(p, len);
        return *canon ? KN_OK : KN_ERR__NOMEM;
    }
    case KN_CONF_STRING:
    case KN_CONF_CLASS:
        return check_string(k, value, canon, errstr, errstr_size);
    }
    kn_errstr_set(errstr, errstr_size, "%s: unknown type", k->name);
    return KN_ERR__CONFIG;
}

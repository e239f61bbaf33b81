/*
 * jaas.c: the sasl.jaas.config parser (see jaas.h). A small tokenizer
 * with java.io.StreamTokenizer's rules as Kafka's JaasConfig sets them
 * up (words, both quote characters with their escapes, numbers, slash
 * comments, '-', '_' and '$' as word characters), then JaasConfig's
 * grammar and messages.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/jaas.h"

enum { TK_EOF = -1, TK_WORD = -2, TK_QUOTED = -3, TK_NUMBER = -4, TK_ERROR = -5 };

typedef struct tokenizer {
    const char *s;
    size_t len, pos;
    int type;     /* TK_* or the ordinary character */
    char *sval;   /* owned: word or quoted string (NULL for others) */
    size_t start; /* byte offset of the current token */
    const char *err;
} tokenizer;

/* StreamTokenizer's defaults: letters and bytes 160..255 are word
 * characters; JaasConfig adds '-', '_' and '$'. Bytes 128..159 are
 * ordinary there, but UTF-8 continuation bytes land in that range, so
 * every byte >= 128 is a word character here (a UTF-8 user name in an
 * unquoted value then reads as one word, as a Java String would). */
static bool is_alpha(unsigned char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch >= 128 || ch == '_' || ch == '$' ||
           ch == '-';
}
static bool is_digit(unsigned char ch) { return (ch >= '0' && ch <= '9') || ch == '.' || ch == '-'; }
static bool is_space(unsigned char ch) { return ch <= ' '; }

static void tk_clear(tokenizer *t) {
    if (t->sval) {
        OPENSSL_cleanse(t->sval, strlen(t->sval));
        kn_free(t->sval);
        t->sval = NULL;
    }
}

/* Skips whitespace and comments; false on an unterminated comment. */
static bool skip_blank(tokenizer *t) {
    for (;;) {
        while (t->pos < t->len && is_space((unsigned char)t->s[t->pos]))
            t->pos++;
        if (t->pos >= t->len || t->s[t->pos] != '/')
            return true;
        if (t->pos + 1 < t->len && t->s[t->pos + 1] == '*') {
            const char *end = NULL;
            for (size_t i = t->pos + 2; i + 1 < t->len; i++)
                if (t->s[i] == '*' && t->s[i + 1] == '/') {
                    end = t->s + i;
                    break;
                }
            if (!end) {
                t->err = "unterminated /* comment";
                return false;
            }
            t->pos = (size_t)(end - t->s) + 2;
            continue;
        }
        /* "//" and, as '/' is StreamTokenizer's comment character, a
         * lone '/' both run to the end of the line. */
        while (t->pos < t->len && t->s[t->pos] != '\n' && t->s[t->pos] != '\r')
            t->pos++;
    }
}

/* A quoted string with StreamTokenizer's escapes: \a \b \f \n \r \t \v,
 * octal \ooo (up to 0377), any other escaped character as itself. It
 * ends at the matching quote; a line end or the end of the text first
 * is an error here (StreamTokenizer would silently cut the value). */
static int read_quoted(tokenizer *t) {
    char q = t->s[t->pos++];
    char *out = kn_malloc(t->len - t->pos + 1);
    if (!out)
        return KN_ERR__NOMEM;
    size_t o = 0;
    for (;;) {
        if (t->pos >= t->len || t->s[t->pos] == '\n' || t->s[t->pos] == '\r') {
            OPENSSL_cleanse(out, o);
            kn_free(out);
            t->err = "unterminated quoted string";
            return TK_ERROR;
        }
        char ch = t->s[t->pos++];
        if (ch == q)
            break;
        if (ch == '\\' && t->pos < t->len) {
            char e = t->s[t->pos++];
            switch (e) {
            case 'a':
                ch = 7;
                break;
            case 'b':
                ch = '\b';
                break;
            case 'f':
                ch = '\f';
                break;
            case 'n':
                ch = '\n';
                break;
            case 'r':
                ch = '\r';
                break;
            case 't':
                ch = '\t';
                break;
            case 'v':
                ch = '\v';
                break;
            default:
                if (e >= '0' && e <= '7') {
                    int v = e - '0';
                    int max = e <= '3' ? 2 : 1; /* \377 at most */
                    for (int i = 0; i < max && t->pos < t->len && t->s[t->pos] >= '0' && t->s[t->pos] <= '7';
                         i++)
                        v = v * 8 + (t->s[t->pos++] - '0');
                    ch = (char)v;
                } else {
                    ch = e;
                }
            }
        }
        out[o++] = ch;
    }
    out[o] = 0;
    t->sval = out;
    return TK_QUOTED;
}

static int next_token(tokenizer *t) {
    tk_clear(t);
    if (!skip_blank(t))
        return t->type = TK_ERROR;
    t->start = t->pos;
    if (t->pos >= t->len)
        return t->type = TK_EOF;
    unsigned char ch = (unsigned char)t->s[t->pos];
    if (ch == '"' || ch == '\'') {
        int rc = read_quoted(t);
        return t->type = rc;
    }
    /* StreamTokenizer tries a number first, so a value starting with a
     * digit, '.' or '-' is a number and has no string value. */
    if (is_digit(ch)) {
        size_t p = t->pos + 1;
        while (p < t->len && ((t->s[p] >= '0' && t->s[p] <= '9') || t->s[p] == '.'))
            p++;
        t->pos = p;
        return t->type = TK_NUMBER;
    }
    if (is_alpha(ch)) {
        size_t p = t->pos;
        while (p < t->len && (is_alpha((unsigned char)t->s[p]) || is_digit((unsigned char)t->s[p]) ||
                              (t->s[p] >= '0' && t->s[p] <= '9')))
            p++;
        t->sval = kn_strndup(t->s + t->pos, p - t->pos);
        if (!t->sval)
            return t->type = KN_ERR__NOMEM;
        t->pos = p;
        return t->type = TK_WORD;
    }
    t->pos++;
    return t->type = ch;
}

const char *knw_jaas_flag_name(knw_jaas_flag f) {
    switch (f) {
    case KNW_JAAS_REQUIRED:
        return "required";
    case KNW_JAAS_REQUISITE:
        return "requisite";
    case KNW_JAAS_SUFFICIENT:
        return "sufficient";
    case KNW_JAAS_OPTIONAL:
        return "optional";
    }
    return "?";
}

void knw_jaas_free(knw_jaas *j) {
    if (!j)
        return;
    kn_free(j->login_module);
    for (int i = 0; i < j->option_count; i++) {
        kn_free(j->options[i].key);
        if (j->options[i].value) {
            OPENSSL_cleanse(j->options[i].value, strlen(j->options[i].value));
            kn_free(j->options[i].value);
        }
    }
    kn_free(j->options);
    memset(j, 0, sizeof *j);
}

const char *knw_jaas_get(const knw_jaas *j, const char *key) {
    for (int i = j->option_count - 1; i >= 0; i--)
        if (!strcmp(j->options[i].key, key))
            return j->options[i].value;
    return NULL;
}

static bool has_value(const tokenizer *t) { return t->type == TK_WORD || t->type == TK_QUOTED; }

/* Errors as Java words them, with the byte offset: never a value. */
static int parse_entry(tokenizer *t, knw_jaas *j, char *errstr, size_t n) {
    if (!has_value(t)) {
        kn_errstr_set(errstr, n, "sasl.jaas.config: expected a login module class name at byte %zu",
                      t->start);
        return KN_ERR__CONFIG;
    }
    j->login_module = t->sval;
    t->sval = NULL;
    int tt = next_token(t);
    if (tt == KN_ERR__NOMEM)
        return tt;
    if (tt == TK_EOF || !has_value(t)) {
        kn_errstr_set(errstr, n, "sasl.jaas.config: Login module control flag not specified in JAAS config");
        return KN_ERR__CONFIG;
    }
    static const char *const flags[] = {"required", "requisite", "sufficient", "optional"};
    int f = -1;
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(t->sval, flags[i]))
            f = i;
    if (f < 0) {
        /* The flag position holds no secret: name it, as Java does. */
        kn_errstr_set(errstr, n,
                      "sasl.jaas.config: Invalid login module control flag '%.40s' in JAAS config "
                      "(expected required, requisite, sufficient or optional)",
                      t->sval);
        return KN_ERR__CONFIG;
    }
    j->flag = (knw_jaas_flag)f;
    for (;;) {
        tt = next_token(t);
        if (tt == KN_ERR__NOMEM)
            return tt;
        if (tt == TK_ERROR) {
            kn_errstr_set(errstr, n, "sasl.jaas.config: %s at byte %zu", t->err, t->start);
            return KN_ERR__CONFIG;
        }
        if (tt == TK_EOF || tt == ';')
            break;
        if (!has_value(t)) {
            kn_errstr_set(errstr, n, "sasl.jaas.config: expected an option name at byte %zu", t->start);
            return KN_ERR__CONFIG;
        }
        char *key = t->sval;
        t->sval = NULL;
        char keyshow[64];
        snprintf(keyshow, sizeof keyshow, "%s", key);
        int eq = next_token(t);
        int vt = eq == '=' ? next_token(t) : eq;
        if (eq == KN_ERR__NOMEM || vt == KN_ERR__NOMEM) {
            kn_free(key);
            return KN_ERR__NOMEM;
        }
        if (eq != '=' || !has_value(t)) {
            kn_free(key);
            if (vt == TK_ERROR)
                kn_errstr_set(errstr, n, "sasl.jaas.config: %s in the value of key '%s'", t->err, keyshow);
            else
                kn_errstr_set(errstr, n,
                              "sasl.jaas.config: Value not specified for key '%s' in JAAS config%s", keyshow,
                              vt == TK_NUMBER ? " (quote values that start with a digit)" : "");
            return KN_ERR__CONFIG;
        }
        if (j->option_count >= KNW_JAAS_MAX_OPTIONS) {
            kn_free(key);
            kn_errstr_set(errstr, n, "sasl.jaas.config: more than %d options", KNW_JAAS_MAX_OPTIONS);
            return KN_ERR__CONFIG;
        }
        knw_jaas_option *no = kn_realloc(j->options, (size_t)(j->option_count + 1) * sizeof *no);
        if (!no) {
            kn_free(key);
            return KN_ERR__NOMEM;
        }
        j->options = no;
        j->options[j->option_count].key = key;
        j->options[j->option_count].value = t->sval;
        t->sval = NULL;
        j->option_count++;
    }
    if (t->type != ';') {
        kn_errstr_set(errstr, n, "sasl.jaas.config: JAAS config entry not terminated by semi-colon");
        return KN_ERR__CONFIG;
    }
    return 0;
}

int knw_jaas_parse(const char *text, knw_jaas *out, char *errstr, size_t errstr_size) {
    memset(out, 0, sizeof *out);
    if (!text) {
        kn_errstr_set(errstr, errstr_size, "sasl.jaas.config is not set");
        return KN_ERR__CONFIG;
    }
    size_t len = strlen(text);
    if (len > KNW_JAAS_MAX_TEXT) {
        kn_errstr_set(errstr, errstr_size, "sasl.jaas.config: longer than %d bytes", KNW_JAAS_MAX_TEXT);
        return KN_ERR__CONFIG;
    }
    tokenizer t = {.s = text, .len = len};
    int rc = 0, entries = 0;
    for (;;) {
        int tt = next_token(&t);
        if (tt == KN_ERR__NOMEM) {
            rc = tt;
            break;
        }
        if (tt == TK_ERROR) {
            kn_errstr_set(errstr, errstr_size, "sasl.jaas.config: %s at byte %zu", t.err, t.start);
            rc = KN_ERR__CONFIG;
            break;
        }
        if (tt == TK_EOF)
            break;
        if (++entries > 1) {
            /* Java counts every entry first; one is enough to refuse. */
            kn_errstr_set(errstr, errstr_size,
                          "sasl.jaas.config: JAAS config property contains more than one login module, "
                          "should be 1 module");
            rc = KN_ERR__CONFIG;
            break;
        }
        rc = parse_entry(&t, out, errstr, errstr_size);
        if (rc)
            break;
    }
    if (!rc && entries == 0) {
        kn_errstr_set(errstr, errstr_size, "sasl.jaas.config: Login module not specified in JAAS config");
        rc = KN_ERR__CONFIG;
    }
    tk_clear(&t);
    if (rc) {
        knw_jaas_free(out);
        if (rc == KN_ERR__NOMEM)
            kn_errstr_set(errstr, errstr_size, "out of memory parsing sasl.jaas.config");
    }
    return rc;
}

int knw_jaas_copy(knw_jaas *dst, const knw_jaas *src) {
    memset(dst, 0, sizeof *dst);
    if (!src->login_module)
        return 0;
    dst->flag = src->flag;
    if (!(dst->login_module = kn_strdup(src->login_module)))
        goto nomem;
    if (src->option_count) {
        dst->options = kn_calloc((size_t)src->option_count, sizeof *dst->options);
        if (!dst->options)
            goto nomem;
        for (int i = 0; i < src->option_count; i++) {
            dst->options[i].key = kn_strdup(src->options[i].key);
            dst->options[i].value = kn_strdup(src->options[i].value);
            dst->option_count++;
            if (!dst->options[i].key || !dst->options[i].value)
                goto nomem;
        }
    }
    return 0;
nomem:
    knw_jaas_free(dst);
    return KN_ERR__NOMEM;
}

/*
 * properties.c: kn_conf_load_properties, a reader for Java .properties
 * files with java.util.Properties.load's rules: logical lines joined by
 * a trailing odd backslash (the continuation's leading blanks dropped),
 * '#'/'!' comment lines, a key ended by an unescaped '=', ':' or blank,
 * escapes \t \n \r \f \uXXXX and "\x" = x. Differences from Java, on
 * purpose: bytes are taken as UTF-8 (Java's InputStream loader reads
 * Latin-1) and \uXXXX is written out as UTF-8; a malformed \u escape is
 * an error with its line number, as Java's is an exception.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"

/* A properties file larger than this is certainly not configuration. */
#define KN_PROPS_MAX_BYTES (16u * 1024 * 1024)

typedef struct props_buf {
    char *p;
    size_t len, cap;
} props_buf;

static int buf_put(props_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 128;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = kn_realloc(b->p, cap);
        if (!np)
            return KN_ERR__NOMEM;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return KN_OK;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

static int read_file(const char *path, char **data, size_t *len, char *errstr, size_t size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        kn_errstr_set(errstr, size, "%s: cannot open: %s", path, strerror(errno));
        return KN_ERR__CONFIG;
    }
    props_buf b = {0};
    char chunk[4096];
    size_t n;
    int err = KN_OK;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (b.len + n > KN_PROPS_MAX_BYTES) {
            kn_errstr_set(errstr, size, "%s: larger than %u bytes", path, KN_PROPS_MAX_BYTES);
            err = KN_ERR__CONFIG;
            break;
        }
        if ((err = buf_put(&b, chunk, n)) != KN_OK) {
            kn_errstr_set(errstr, size, "%s: out of memory", path);
            break;
        }
    }
    if (!err && ferror(f)) {
        kn_errstr_set(errstr, size, "%s: read error", path);
        err = KN_ERR__CONFIG;
    }
    fclose(f);
    if (err) {
        kn_free(b.p);
        return err;
    }
    if (!b.p && buf_put(&b, "", 0) != KN_OK)
        return KN_ERR__NOMEM;
    *data = b.p;
    *len = b.len;
    return KN_OK;
}

/* Appends code point cp as UTF-8. */
static int put_utf8(props_buf *b, unsigned long cp) {
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_put(b, u, n);
}

static int hex4(const char *s, size_t avail, unsigned long *out) {
    if (avail < 4)
        return -1;
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + (unsigned long)d;
    }
    *out = v;
    return 0;
}

/* Unescapes s[0..n) into out. Returns KN_OK, KN_ERR__NOMEM, or
 * KN_ERR__CONFIG for a malformed \u escape. */
static int unescape(const char *s, size_t n, props_buf *out) {
    out->len = 0;
    if (buf_put(out, "", 0) != KN_OK)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < n;) {
        size_t run = i;
        while (run < n && s[run] != '\\')
            run++;
        if (run > i && buf_put(out, s + i, run - i) != KN_OK)
            return KN_ERR__NOMEM;
        if (run >= n)
            break;
        i = run + 1; /* past the backslash */
        if (i >= n)
            break; /* a lone trailing backslash (end of file) means nothing */
        char c = s[i++];
        int err = KN_OK;
        if (c == 'u') {
            unsigned long cp;
            if (hex4(s + i, n - i, &cp) != 0)
                return KN_ERR__CONFIG;
            i += 4;
            unsigned long lo;
            /* A UTF-16 surrogate pair written as two escapes is one
             * character. */
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u' &&
                hex4(s + i + 2, n - i - 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            err = put_utf8(out, cp);
        } else {
            char e = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
            err = buf_put(out, &e, 1);
        }
        if (err)
            return err;
    }
    return KN_OK;
}

/* Splits one logical line (continuations already joined, escapes still
 * in place) into raw key and value ranges. */
static void split_line(const char *s, size_t n, size_t *klen, size_t *vstart) {
    size_t i = 0;
    int has_sep = 0;
    while (i < n) {
        char c = s[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '=' || c == ':') {
            has_sep = 1;
            break;
        }
        if (is_blank(c))
            break;
        i++;
    }
    if (i > n)
        i = n;
    *klen = i;
    size_t v = i;
    if (has_sep) {
        v++;
    } else {
        while (v < n && is_blank(s[v]))
            v++;
        if (v < n && (s[v] == '=' || s[v] == ':'))
            v++;
    }
    while (v < n && is_blank(s[v]))
        v++;
    *vstart = v;
}

int kn_conf_load_properties(kn_conf *conf, const char *path, char *errstr, size_t errstr_size) {
    if (!conf || !path) {
        kn_errstr_set(errstr, errstr_size, "kn_conf_load_properties: NULL %s", conf ? "path" : "conf");
        return KN_ERR__INVALID_ARG;
    }
    char *data;
    size_t len;
    int err = read_file(path, &data, &len, errstr, errstr_size);
    if (err)
        return err;
    err = kn_conf_parse_properties(conf, path, data, len, errstr, errstr_size);
    kn_free(data);
    return err;
}

int kn_conf_parse_properties(kn_conf *conf, const char *path, const char *data, size_t len, char *errstr,
                             size_t errstr_size) {
    int err = 0;
    props_buf logical = {0}, key = {0}, val = {0};
    size_t pos = 0, lineno = 0;
    char sub[512];

    while (pos < len && !err) {
        /* One logical line, possibly several natural lines. */
        logical.len = 0;
        size_t first_line = lineno + 1;
        int first = 1, is_comment = 0;
        for (;;) {
            size_t start = pos;
            while (pos < len && data[pos] != '\n' && data[pos] != '\r')
                pos++;
            size_t end = pos;
            if (pos < len && data[pos] == '\r') {
                pos++;
                if (pos < len && data[pos] == '\n')
                    pos++;
            } else if (pos < len && data[pos] == '\n') {
                pos++;
            }
            lineno++;
            /* Leading blanks are dropped on every natural line. */
            while (start < end && is_blank(data[start]))
                start++;
            if (first && (start == end || data[start] == '#' || data[start] == '!')) {
                is_comment = 1; /* blank or comment: never continued */
                break;
            }
            first = 0;
            size_t bs = 0;
            while (bs < end - start && data[end - 1 - bs] == '\\')
                bs++;
            int cont = bs % 2 == 1;
            if (buf_put(&logical, data + start, end - start - (cont ? 1 : 0)) != KN_OK) {
                kn_errstr_set(errstr, errstr_size, "%s:%zu: out of memory", path, lineno);
                err = KN_ERR__NOMEM;
                break;
            }
            if (!cont || pos >= len)
                break;
        }
        /* A lone "\" continued into a blank line leaves nothing. */
        if (err || is_comment || logical.len == 0)
            continue;
        size_t klen, vstart;
        split_line(logical.p, logical.len, &klen, &vstart);
        int e1 = unescape(logical.p, klen, &key);
        int e2 = e1 ? e1 : unescape(logical.p + vstart, logical.len - vstart, &val);
        if (e1 || e2) {
            err = e1 ? e1 : e2;
            if (err == KN_ERR__CONFIG)
                kn_errstr_set(errstr, errstr_size, "%s:%zu: malformed \\uXXXX escape", path, first_line);
            else
                kn_errstr_set(errstr, errstr_size, "%s:%zu: out of memory", path, first_line);
            break;
        }
        err = kn_conf_set(conf, key.p, val.p, sub, sizeof(sub));
        if (err)
            kn_errstr_set(errstr, errstr_size, "%s:%zu: %s", path, first_line, sub);
    }
    kn_free(logical.p);
    kn_free(key.p);
    kn_free(val.p);
    return err;
}

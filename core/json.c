/*
 * json.c: the bounded JSON reader (see json.h). A recursive-descent
 * validator over a (pointer, length) span: every read is checked
 * against the end, nesting is capped, and the first error records its
 * byte offset. Looking up a member and walking an array re-run the
 * validator over a span already known to be valid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"

typedef struct jp {
    const char *s;
    size_t len, pos;
    int depth;
    const char *err; /* static text; NULL while fine */
    size_t err_pos;
} jp;

static bool fail(jp *p, const char *why) {
    if (!p->err) {
        p->err = why;
        p->err_pos = p->pos;
    }
    return false;
}

static void ws(jp *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool string(jp *p) {
    if (p->pos >= p->len || p->s[p->pos] != '"')
        return fail(p, "expected a string");
    p->pos++;
    while (p->pos < p->len) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            return true;
        }
        if (c < 0x20)
            return fail(p, "a control character inside a string");
        if (c == '\\') {
            if (p->pos + 1 >= p->len)
                break;
            char e = p->s[p->pos + 1];
            if (e == 'u') {
                if (p->pos + 6 > p->len)
                    break;
                for (int i = 2; i < 6; i++)
                    if (hexval(p->s[p->pos + i]) < 0)
                        return fail(p, "a bad \\u escape");
                p->pos += 6;
                continue;
            }
            if (!e || !strchr("\"\\/bfnrt", e))
                return fail(p, "a bad escape");
            p->pos += 2;
            continue;
        }
        p->pos++;
    }
    return fail(p, "an unterminated string");
}

static bool digits(jp *p) {
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
        p->pos++;
    return p->pos > start;
}

static bool number(jp *p) {
    if (p->pos < p->len && p->s[p->pos] == '-')
        p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '0')
        p->pos++;
    else if (!digits(p))
        return fail(p, "a bad number");
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        if (!digits(p))
            return fail(p, "a bad number");
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (!digits(p))
            return fail(p, "a bad number");
    }
    return true;
}

static bool literal(jp *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return fail(p, "an unexpected character");
    p->pos += n;
    return true;
}

/* Compares a valid string token (quotes included) with key. */
static bool key_equals(const char *tok, size_t tok_len, const char *key) {
    kn_json_val v = {KN_JSON_STRING, tok, tok_len};
    char buf[256];
    size_t n;
    return kn_json_string(&v, buf, sizeof buf, &n) == 0 && n == strlen(key) && memcmp(buf, key, n) == 0;
}

static bool value(jp *p, kn_json_val *out, const char *find, kn_json_val *found);

static bool object(jp *p, const char *find, kn_json_val *found) {
    p->pos++; /* '{' */
    ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return true;
    }
    for (;;) {
        ws(p);
        size_t k = p->pos;
        if (!string(p))
            return false;
        size_t klen = p->pos - k;
        ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':')
            return fail(p, "expected ':'");
        p->pos++;
        ws(p);
        kn_json_val v;
        if (!value(p, &v, NULL, NULL))
            return false;
        if (find && key_equals(p->s + k, klen, find))
            *found = v; /* the last one wins */
        ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return true;
        }
        return fail(p, "expected ',' or '}'");
    }
}

static bool array(jp *p) {
    p->pos++; /* '[' */
    ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return true;
    }
    for (;;) {
        ws(p);
        kn_json_val v;
        if (!value(p, &v, NULL, NULL))
            return false;
        ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return true;
        }
        return fail(p, "expected ',' or ']'");
    }
}

static bool value(jp *p, kn_json_val *out, const char *find, kn_json_val *found) {
    if (p->pos >= p->len)
        return fail(p, "unexpected end of input");
    size_t start = p->pos;
    char c = p->s[p->pos];
    bool ok;
    if (c == '{' || c == '[') {
        if (++p->depth > KN_JSON_MAX_DEPTH)
            return fail(p, "nested too deeply");
        out->type = c == '{' ? KN_JSON_OBJECT : KN_JSON_ARRAY;
        ok = c == '{' ? object(p, find, found) : array(p);
        p->depth--;
    } else if (c == '"') {
        out->type = KN_JSON_STRING;
        ok = string(p);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        out->type = KN_JSON_NUMBER;
        ok = number(p);
    } else if (c == 't' || c == 'f') {
        out->type = KN_JSON_BOOL;
        ok = literal(p, c == 't' ? "true" : "false");
    } else if (c == 'n') {
        out->type = KN_JSON_NULL;
        ok = literal(p, "null");
    } else {
        return fail(p, "an unexpected character");
    }
    out->ptr = p->s + start;
    out->len = p->pos - start;
    return ok;
}

/* The whole document: one value, whitespace around it. */
static bool document(jp *p, kn_json_val *root, const char *find, kn_json_val *found) {
    ws(p);
    if (!value(p, root, find, found))
        return false;
    ws(p);
    if (p->pos != p->len)
        return fail(p, "text after the end of the document");
    return true;
}

static void report(const jp *p, char *errstr, size_t n) {
    kn_errstr_set(errstr, n, "malformed JSON at byte %zu: %s", p->err_pos, p->err ? p->err : "invalid");
}

int kn_json_check(const char *doc, size_t len, char *errstr, size_t n) {
    jp p = {.s = doc, .len = len};
    kn_json_val root;
    if (!doc || !document(&p, &root, NULL, NULL)) {
        report(&p, errstr, n);
        return -1;
    }
    return 0;
}

kn_json_type kn_json_root_type(const char *doc, size_t len) {
    jp p = {.s = doc, .len = len};
    kn_json_val root = {0};
    return document(&p, &root, NULL, NULL) ? root.type : KN_JSON_NONE;
}

int kn_json_get(const char *doc, size_t len, const char *key, kn_json_val *out, char *errstr, size_t n) {
    jp p = {.s = doc, .len = len};
    kn_json_val root = {0};
    memset(out, 0, sizeof *out);
    ws(&p);
    /* Only the top-level object's members are looked at. */
    bool top_object = p.pos < p.len && doc[p.pos] == '{';
    if (!doc || !document(&p, &root, top_object ? key : NULL, out)) {
        report(&p, errstr, n);
        memset(out, 0, sizeof *out);
        return -1;
    }
    if (root.type != KN_JSON_OBJECT) {
        kn_errstr_set(errstr, n, "malformed JSON: the document is not an object");
        return -1;
    }
    return 0;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static uint32_t hex4(const char *s) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 4 | (uint32_t)hexval(s[i]);
    return v;
}

int kn_json_string(const kn_json_val *v, char *out, size_t cap, size_t *out_len) {
    if (v->type != KN_JSON_STRING || v->len < 2 || cap == 0)
        return -1;
    const char *s = v->ptr + 1, *end = v->ptr + v->len - 1;
    size_t o = 0;
    while (s < end) {
        char tmp[4];
        size_t n = 1;
        if (*s != '\\') {
            tmp[0] = *s++;
        } else {
            char e = s[1];
            s += 2;
            switch (e) {
            case 'b':
                tmp[0] = '\b';
                break;
            case 'f':
                tmp[0] = '\f';
                break;
            case 'n':
                tmp[0] = '\n';
                break;
            case 'r':
                tmp[0] = '\r';
                break;
            case 't':
                tmp[0] = '\t';
                break;
            case 'u': {
                if (end - s < 4)
                    return -1;
                uint32_t cp = hex4(s);
                s += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && end - s >= 6 && s[0] == '\\' && s[1] == 'u') {
                    uint32_t lo = hex4(s + 2);
                    if (lo >= 0xDC00 && lo < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        s += 6;
                    }
                }
                if (cp == 0)
                    return -1; /* a NUL would cut the C string */
                n = put_utf8(tmp, cp);
                break;
            }
            default:
                tmp[0] = e;
                break; /* " \ / */
            }
        }
        if (o + n + 1 > cap)
            return -1;
        memcpy(out + o, tmp, n);
        o += n;
    }
    out[o] = 0;
    if (out_len)
        *out_len = o;
    return 0;
}

int kn_json_number(const kn_json_val *v, double *out) {
    char buf[64];
    if (v->type != KN_JSON_NUMBER || v->len == 0 || v->len >= sizeof buf)
        return -1;
    memcpy(buf, v->ptr, v->len);
    buf[v->len] = 0;
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (*end || errno == ERANGE)
        return -1;
    *out = d;
    return 0;
}

bool kn_json_array_next(const kn_json_val *arr, size_t *pos, kn_json_val *elem) {
    if (arr->type != KN_JSON_ARRAY || arr->len < 2)
        return false;
    jp p = {.s = arr->ptr, .len = arr->len - 1, .pos = *pos ? *pos : 1};
    ws(&p);
    if (p.pos < p.len && p.s[p.pos] == ',') {
        p.pos++;
        ws(&p);
    }
    if (p.pos >= p.len)
        return false;
    if (!value(&p, elem, NULL, NULL))
        return false;
    *pos = p.pos;
    return true;
}

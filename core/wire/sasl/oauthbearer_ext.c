/*
 * oauthbearer_ext.c: RFC 7628 extension key and value syntax (see
 * oauthbearer_ext.h).
 */
#include "wire/sasl/oauthbearer_ext.h"

#include <string.h>

bool knw_oauthbearer_ext_key_ok(const char *k) {
    if (!*k || !strcmp(k, "auth"))
        return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z')))
            return false;
    return true;
}

bool knw_oauthbearer_ext_value_ok(const char *v) {
    if (!*v)
        return false;
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        if (!((c >= 0x21 && c <= 0x7e) || c == ' ' || c == '\t' || c == '\r' || c == '\n'))
            return false;
    }
    return true;
}

bool knw_oauthbearer_ext_ok(const char *key, const char *value) {
    return knw_oauthbearer_ext_key_ok(key) && knw_oauthbearer_ext_value_ok(value);
}

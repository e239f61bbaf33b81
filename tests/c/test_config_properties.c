/*
 * test_config_properties.c: kn_conf_load_properties against Java
 * .properties syntax: separators, comments, continuation lines, escapes
 * (\uXXXX included), line endings, and errors naming file and line.
 * Files are written to a temporary directory by each test.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"

static char tmp_path[256];

/* Writes text (len bytes) to a fresh temporary file; returns its path. */
static const char *write_props(const char *text, size_t len) {
    snprintf(tmp_path, sizeof(tmp_path), "/tmp/kn-test-props-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    return tmp_path;
}
#define PROPS(lit) write_props(lit, sizeof(lit) - 1)

static void value_is(kn_conf *conf, const char *key, const char *want) {
    char buf[512];
    size_t n = sizeof(buf);
    int rc = kn_conf_get(conf, key, buf, &n);
    if (rc != KN_OK || strcmp(buf, want) != 0)
        fail_msg("%s: rc %d \"%s\", want \"%s\"", key, rc, buf, want);
}

static kn_conf *load_ok(kn_client_type type, const char *path) {
    kn_conf *conf = kn_conf_new(type);
    char err[512] = "";
    int rc = kn_conf_load_properties(conf, path, err, sizeof(err));
    unlink(path);
    if (rc != KN_OK)
        fail_msg("load failed: %d %s", rc, err);
    return conf;
}

static void load_fails(kn_client_type type, const char *path, const char *want1, const char *want2) {
    kn_conf *conf = kn_conf_new(type);
    char err[512] = "";
    int rc = kn_conf_load_properties(conf, path, err, sizeof(err));
    unlink(path);
    assert_int_equal(rc, KN_ERR__CONFIG);
    if (!strstr(err, want1) || (want2 && !strstr(err, want2)))
        fail_msg("error \"%s\" lacks \"%s\" / \"%s\"", err, want1, want2 ? want2 : "");
    kn_conf_destroy(conf);
}

static void test_separators_and_comments(void **state) {
    kn_conf *c = load_ok(KN_CLIENT_CONSUMER, PROPS("# a comment\n"
                                                    "! another comment\n"
                                                    "   # indented comment\n"
                                                    "\n"
                                                    "   \t\n"
                                                    "group.id=g1\n"
                                                    "client.id : spaced colon\n"
                                                    "client.rack   rack-a\n"
                                                    "  fetch.min.bytes=   10\n"
                                                    "fetch.max.wait.ms:100\n"));
    value_is(c, "group.id", "g1");
    value_is(c, "client.id", "spaced colon");
    value_is(c, "client.rack", "rack-a");
    value_is(c, "fetch.min.bytes", "10");
    value_is(c, "fetch.max.wait.ms", "100");
    kn_conf_destroy(c);
    /* Java keeps "# not a comment" in the value; it then fails as a boolean
     * on the right line. */
    load_fails(KN_CLIENT_CONSUMER, PROPS("group.id=g\nenable.auto.commit = false # no\n"), ":2:",
               "enable.auto.commit");
}

static void test_escape_values(void **state) {
    kn_conf *c = load_ok(KN_CLIENT_PRODUCER, PROPS("bootstrap.servers = a:1, \\\n"
                                                    "        b:2, \\\n"
                                                    "   c:3\n"
                                                    "client.id = x\\ty\\\\z\\=e\\:c\\#h\n"
                                                    "transactional.id = caf\\u00e9-\\u20AC-\\uD83D\\uDE00\n"
                                                    "sasl.jaas.config = line1 \\\n"
                                                    "   # not a comment inside a continuation\n"
                                                    "ac\\\n"
                                                    "  ks = 1\n"));
    value_is(c, "bootstrap.servers", "a:1,b:2,c:3");
    /* client.id is trimmed (Java trims strings) but inner escapes stay. */
    value_is(c, "client.id", "x\ty\\z=e:c#h");
    value_is(c, "transactional.id", "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80");
    value_is(c, "sasl.jaas.config", "line1 # not a comment inside a continuation");
    /* A key can be continued too. */
    value_is(c, "acks", "1");
    kn_conf_destroy(c);
}

static void test_escaped_key_and_line_endings(void **state) {
    /* An escaped blank or '=' belongs to the key. */
    load_fails(KN_CLIENT_PRODUCER, PROPS("linger.ms=1\nmy\\ key\\=x = 1\n"), ":2:",
               "unknown configuration key \"my key=x\"");
    /* CRLF and lone CR line endings; continuation across CRLF; no final
     * newline. */
    kn_conf *c = load_ok(KN_CLIENT_PRODUCER, PROPS("linger.ms=7\r\nbatch.size=\\\r\n  100\rclient.id=end"));
    value_is(c, "linger.ms", "7");
    value_is(c, "batch.size", "100");
    value_is(c, "client.id", "end");
    kn_conf_destroy(c);
    /* Even backslashes do not continue; the last key wins. */
    c = load_ok(KN_CLIENT_PRODUCER, PROPS("client.id=a\\\\\nclient.id=b\\\\\\\\\nlinger.ms=3\nlinger.ms=4\n"));
    value_is(c, "client.id", "b\\\\");
    value_is(c, "linger.ms", "4");
    kn_conf_destroy(c);
    /* A key alone has the empty value. */
    c = load_ok(KN_CLIENT_PRODUCER, PROPS("client.id\n"));
    value_is(c, "client.id", "");
    kn_conf_destroy(c);
}

static void test_errors_name_file_and_line(void **state) {
    load_fails(KN_CLIENT_PRODUCER, PROPS("# header\n\nacks=all\nacks=fast\n"), ":4: invalid value \"fast\" for acks",
               "all, -1, 0, 1");
    const char *p = PROPS("linger.ms=1\n\\\n\nbootstrap.server=x:1\n");
    char path[256];
    snprintf(path, sizeof(path), "%s", p);
    load_fails(KN_CLIENT_PRODUCER, p, path, ":4: unknown configuration key \"bootstrap.server\"");
    /* The error line is where the logical line starts. */
    load_fails(KN_CLIENT_PRODUCER, PROPS("linger.ms=1\nbatch.size=\\\n  x\\\n  y\n"), ":2:", "batch.size");
    load_fails(KN_CLIENT_PRODUCER, PROPS("linger.ms=1\nclient.id=bad\\u00zz\n"), ":2: malformed \\uXXXX", NULL);
    load_fails(KN_CLIENT_PRODUCER, PROPS("client.id=short\\u12"), ":1: malformed", NULL);
    load_fails(KN_CLIENT_CONSUMER, "/nonexistent/kn-test.properties", "/nonexistent/kn-test.properties",
               "cannot open");
    /* Entries before the error stay set. */
    kn_conf *c = kn_conf_new(KN_CLIENT_PRODUCER);
    char err[256];
    const char *q = PROPS("linger.ms=9\nnope=1\n");
    assert_int_equal(kn_conf_load_properties(c, q, err, sizeof(err)), KN_ERR__CONFIG);
    unlink(q);
    value_is(c, "linger.ms", "9");
    kn_conf_destroy(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_separators_and_comments),
        cmocka_unit_test(test_escape_values),
        cmocka_unit_test(test_escaped_key_and_line_endings),
        cmocka_unit_test(test_errors_name_file_and_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

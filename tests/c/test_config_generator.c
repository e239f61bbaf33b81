/*
 * test_config_generator.c: tools/gen/genconfig.lua against the Kafka 4.3
 * config catalog: the committed catalog_generated.c is exactly what the
 * generator makes (no drift, no hand edits), and a default written as a
 * Java symbol the generator does not know stops it instead of slipping
 * into the table. Needs lua5.4 and the catalog
 * (../shared/kafka-protocol/client-configs-4.3.0.json or
 * $KN_CONFIG_CATALOG); without the catalog the tests are skipped, never
 * passed.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char generator[4096], generated[4096], catalog[4096];

static int setup(void **state) {
    snprintf(generator, sizeof(generator), "%s", kn_test_source_path("tools/gen/genconfig.lua"));
    snprintf(generated, sizeof(generated), "%s", kn_test_source_path("core/config/catalog_generated.c"));
    const char *env = getenv("KN_CONFIG_CATALOG");
    snprintf(catalog, sizeof(catalog), "%s",
             env && *env ? env : kn_test_source_path("../shared/kafka-protocol/client-configs-4.3.0.json"));
    return 0;
}

static void need_catalog(void) {
    if (access(catalog, R_OK) != 0) {
        fprintf(stderr, "config catalog %s not found: skipping\n", catalog);
        skip();
    }
}

/* Runs cmd through the shell; returns its exit status, stderr into err. */
static int run(const char *cmd, char *err, size_t size) {
    char full[16384];
    char errfile[] = "/tmp/kn-test-gen-err-XXXXXX";
    int fd = mkstemp(errfile);
    assert_true(fd >= 0);
    close(fd);
    snprintf(full, sizeof(full), "%s 2>%s", cmd, errfile);
    int st = system(full);
    FILE *f = fopen(errfile, "r");
    size_t n = f ? fread(err, 1, size - 1, f) : 0;
    err[n] = 0;
    if (f)
        fclose(f);
    unlink(errfile);
    assert_true(st != -1 && WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void test_generated_file_is_up_to_date(void **state) {
    need_catalog();
    char cmd[16384], err[4096];
    snprintf(cmd, sizeof(cmd), "lua5.4 '%s' --check '%s' '%s' >/dev/null", generator, catalog, generated);
    int rc = run(cmd, err, sizeof(err));
    if (rc != 0)
        fail_msg("genconfig --check failed (%d): %s", rc, err);
}

/* Copies the catalog with one default replaced, runs the generator on it. */
static int generate_with(const char *from, const char *to, char *err, size_t size) {
    char tmp_cat[] = "/tmp/kn-test-catalog-XXXXXX";
    char tmp_out[] = "/tmp/kn-test-catalog-out-XXXXXX";
    int fd1 = mkstemp(tmp_cat), fd2 = mkstemp(tmp_out);
    assert_true(fd1 >= 0 && fd2 >= 0);
    close(fd2);
    FILE *in = fopen(catalog, "rb");
    assert_non_null(in);
    static char text[4 << 20];
    size_t n = fread(text, 1, sizeof(text) - 1, in);
    fclose(in);
    text[n] = 0;
    char *at = strstr(text, from);
    assert_non_null(at);
    FILE *out = fdopen(fd1, "wb");
    fwrite(text, 1, (size_t)(at - text), out);
    fputs(to, out);
    fputs(at + strlen(from), out);
    fclose(out);
    char cmd[16384];
    snprintf(cmd, sizeof(cmd), "lua5.4 '%s' '%s' '%s'", generator, tmp_cat, tmp_out);
    int rc = run(cmd, err, size);
    unlink(tmp_cat);
    unlink(tmp_out);
    return rc;
}

static void test_unknown_symbol_stops_generator(void **state) {
    need_catalog();
    char err[4096];
    /* The untouched catalog generates (the harness itself works). */
    assert_int_equal(generate_with("\"30 * 1000\"", "\"30 * 1000\"", err, sizeof(err)), 0);
    /* Arithmetic is evaluated, so a new product is fine... */
    assert_int_equal(generate_with("\"30 * 1000\"", "\"31 * 1000L\"", err, sizeof(err)), 0);
    /* ...but an unknown symbol is not. */
    assert_int_not_equal(generate_with("\"CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS\"",
                                       "\"CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS_V2\"", err, sizeof(err)),
                         0);
    assert_non_null(strstr(err, "unknown default symbol"));
    assert_non_null(strstr(err, "DEFAULT_RETRY_BACKOFF_MS_V2"));
    assert_int_not_equal(generate_with("\"30 * 1000\"", "\"30 * SECONDS\"", err, sizeof(err)), 0);
    assert_non_null(strstr(err, "30 * SECONDS"));
}

int main(void) {
    /* Without the catalog nothing can be checked: report a skip to ctest
     * (exit 77, SKIP_RETURN_CODE) so it is never counted as a pass. */
    setup(NULL);
    if (access(catalog, R_OK) != 0) {
        fprintf(stderr, "SKIP: config catalog %s not found\n", catalog);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_generated_file_is_up_to_date, setup),
        cmocka_unit_test_setup(test_unknown_symbol_stops_generator, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

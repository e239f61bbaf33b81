/*
 * known_answers.c: see known_answers.h.
 */
#include "known_answers.h"

#include <stdlib.h>
#include <string.h>

#include "kn_test.h"

FILE *ka_open_section(const char *name, int *count) {
    FILE *f = fopen(kn_test_source_path("tests/data/java-known-answers.txt"), "r");
    if (!f)
        fail_msg("cannot open tests/data/java-known-answers.txt (run tools/java/gen-known-answers)");
    char line[256], want[64];
    snprintf(want, sizeof want, "@%s ", name);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, want, strlen(want)) == 0) {
            *count = atoi(line + strlen(want));
            return f;
        }
    fclose(f);
    fail_msg("section @%s missing from java-known-answers.txt", name);
    return NULL;
}

uint64_t ka_step(uint64_t *x) {
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x;
}

size_t ka_lcg_key(uint64_t *x, uint8_t *buf) {
    size_t len = 1 + (size_t)((ka_step(x) >> 33) % 64);
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(ka_step(x) >> 56);
    return len;
}

void ka_fixed_key(uint8_t *buf, size_t len) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)((i * 7 + 3) & 0xff);
}

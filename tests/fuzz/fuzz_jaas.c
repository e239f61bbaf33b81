/*
 * fuzz_jaas.c: libFuzzer target over the sasl.jaas.config parser
 * (core/wire/sasl/jaas.c): tokenizer, quoting and escapes, comments,
 * the entry grammar, and a copy and free of whatever parsed. The input
 * is the config text (cut at its first NUL, as a C string would be).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kn_alloc.h"
#include "wire/sasl/jaas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = kn_malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    knw_jaas j, copy;
    char err[256];
    if (knw_jaas_parse(text, &j, err, sizeof err) == 0) {
        volatile size_t sink = strlen(j.login_module);
        for (int i = 0; i < j.option_count; i++)
            sink += strlen(j.options[i].key) + strlen(j.options[i].value);
        (void)knw_jaas_get(&j, "password");
        if (knw_jaas_copy(&copy, &j) == 0)
            knw_jaas_free(&copy);
        knw_jaas_free(&j);
        (void)sink;
    }
    kn_free(text);
    return 0;
}

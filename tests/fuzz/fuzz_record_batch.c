/*
 * fuzz_record_batch.c: libFuzzer target over the record batch decoder:
 * the records-blob splitter, batch parsing, decompression into a capped
 * scratch buffer, the record iterator, header iteration and control
 * record parsing. The first input byte picks options (bit 0: verify the
 * CRC; without it the fuzzer reaches the record parser directly); the
 * rest is the blob. Any crash, sanitizer report or unbounded loop is a
 * bug: every length comes from the input and none may be trusted.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto/record_batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    int flags = (data[0] & 1) ? KN_RB_VERIFY_CRC : 0;
    data++;
    size--;
    /* 4 MiB cap: small enough that bombs are cut off quickly. */
    kn_wr scratch;
    kn_wr_init(&scratch, 0, (size_t)4 << 20);
    kn_records_iter it;
    kn_records_iter_init(&it, data, size);
    kn_rb b;
    char es[256];
    volatile uint64_t sink = 0;
    for (int batches = 0; batches < 1000; batches++) {
        if (kn_records_next(&it, &b, flags, es, sizeof es) != 1)
            break;
        sink += (uint64_t)kn_rb_last_offset(&b);
        if (kn_rb_records_begin(&b, &scratch, es, sizeof es) != 0)
            continue;
        kn_record r;
        /* recordCount bounds the loop; each record consumes >= 1 byte. */
        while (kn_rb_next(&b, &r, es, sizeof es) == 1) {
            sink += (uint64_t)r.offset + (uint64_t)r.timestamp;
            if (r.key.len > 0)
                sink += r.key.ptr[r.key.len - 1];
            if (r.value.len > 0)
                sink += r.value.ptr[r.value.len - 1];
            kn_record_hdr_iter hi;
            kn_rb_kv kv;
            kn_record_headers(&r, &hi);
            while (kn_record_hdr_next(&hi, &kv))
                sink += (uint64_t)kv.key.len + (uint64_t)kv.value.len;
            if (kn_rb_is_control(&b))
                sink += (uint64_t)kn_record_control_type(&r);
        }
    }
    kn_wr_free(&scratch);
    (void)sink;
    return 0;
}

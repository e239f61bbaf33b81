/*
 * crc32c.h: CRC-32C (Castagnoli), the checksum of Kafka record batch v2
 * (computed over the bytes from the attributes field to the end).
 *
 * One public entry point picks, once per process, the SSE4.2 `crc32`
 * instruction path when the CPU has it and a portable slicing-by-8 table
 * path otherwise; both are exposed for tests so each is checked against
 * the same known answers. No memory is owned here: the tables are static
 * and built once (thread-safe) on first use.
 */
#ifndef KN_CRC32C_H
#define KN_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Continues a CRC-32C: crc is the previous result (0 to start), the
 * return value is the finished CRC of everything fed so far, exactly as
 * java.util.zip.CRC32C would report it. kn_crc32c(0, "123456789", 9) is
 * 0xE3069283. */
uint32_t kn_crc32c(uint32_t crc, const void *buf, size_t len);

/* The two implementations behind kn_crc32c (same convention), for tests
 * and benchmarks. kn_crc32c_hw must only be called when
 * kn_crc32c_hw_available() is true. */
uint32_t kn_crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t kn_crc32c_hw(uint32_t crc, const void *buf, size_t len);
bool kn_crc32c_hw_available(void);

#endif

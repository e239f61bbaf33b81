/*
 * known_answers.h: reading tests/data/java-known-answers.txt, the values
 * the Java client computed (tools/java/gen-known-answers), and
 * regenerating the inputs exactly as the file's header describes.
 */
#ifndef KN_KNOWN_ANSWERS_H
#define KN_KNOWN_ANSWERS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* '@NAME COUNT' starts a section of COUNT lines: returns the file
 * positioned after that line (caller fcloses) and sets *count; fails the
 * test if the file or section is missing. */
FILE *ka_open_section(const char *name, int *count);

#define KA_LCG_START 0x6b61666b616e6174ull
/* One step of the file's 64-bit LCG. */
uint64_t ka_step(uint64_t *x);
/* Next LCG key into buf (>= 64 bytes); returns its length. */
size_t ka_lcg_key(uint64_t *x, uint8_t *buf);
/* The fixed key of length len: byte i is (i*7+3) & 0xff. */
void ka_fixed_key(uint8_t *buf, size_t len);

#endif

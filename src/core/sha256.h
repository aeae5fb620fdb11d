/* SHA-256 (FIPS 180-4), incremental: the text cache's keys (prompt + encoder fingerprint). */
#ifndef LTX2_CORE_SHA256_H
#define LTX2_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ltx2_sha256 {
    uint32_t h[8];
    uint64_t bytes;     /* message length so far */
    uint8_t block[64];  /* pending bytes */
    size_t fill;
} ltx2_sha256;

void ltx2_sha256_init(ltx2_sha256 *s);
void ltx2_sha256_update(ltx2_sha256 *s, const void *data, size_t n);
/* The digest; s is spent afterwards. */
void ltx2_sha256_final(ltx2_sha256 *s, uint8_t out[32]);
/* The digest of s as 64 lowercase hex digits and a NUL. */
void ltx2_sha256_hex(ltx2_sha256 *s, char out[65]);

#endif

/* formats/digest.h: SHA-256 (nettle) for program hashes and final-state
 * digests, and hex conversion. */
#ifndef RNR_FORMATS_DIGEST_H
#define RNR_FORMATS_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define RNR_SHA256_SIZE 32
#define RNR_SHA256_HEX 65   /* 64 hex digits and a NUL */

/* An incremental SHA-256; the caller owns the storage (no allocation). */
typedef struct rnr_sha256 {
    uint64_t opaque[32];
} rnr_sha256;

void rnr_sha256_init(rnr_sha256 *s);
void rnr_sha256_update(rnr_sha256 *s, const void *p, size_t n);
void rnr_sha256_final(rnr_sha256 *s, uint8_t out[RNR_SHA256_SIZE]);

/* Hashes a whole file; 0, or -1 with "PATH: reason" in err. */
int rnr_sha256_file(const char *path, uint8_t out[RNR_SHA256_SIZE], char *err, size_t errlen);

/* Lower-case hex of N bytes into out (2N+1 bytes). */
void rnr_hex(const uint8_t *p, size_t n, char *out);
/* Value of one hex digit (either case), or -1. */
int rnr_hex_digit(int c);
/* Parses exactly 2N hex digits; 0 or -1. */
int rnr_unhex(const char *s, uint8_t *out, size_t n);

#endif

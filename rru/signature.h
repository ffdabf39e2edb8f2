/* rru/signature.h: the read or write signature of one RRU cluster: the set
 * of cache lines the cluster accessed, kept exactly (a hash set) or as a
 * Bloom filter of a configurable size (false positives, never false
 * negatives). */
#ifndef RNR_RRU_SIGNATURE_H
#define RNR_RRU_SIGNATURE_H

#include <stdint.h>

typedef struct sig sig;

#define SIG_MIN_BITS 64u
#define SIG_MAX_BITS (1u << 24)

/* A new empty signature: BITS = 0 is an exact set; otherwise a Bloom filter
 * of BITS bits (rounded up to a power of two, SIG_MIN_BITS..SIG_MAX_BITS)
 * with HASHES hash functions (1..8). Aborts when out of memory. */
sig *sig_new(uint32_t bits, uint32_t hashes);
void sig_free(sig *s);

/* Empties the signature; cost proportional to what was inserted. */
void sig_clear(sig *s);
void sig_insert(sig *s, uint64_t line);
/* 1 if LINE may be in the set (exact: is in the set), 0 if it is not. */
int sig_test(const sig *s, uint64_t line);
/* The same with H = sig_hash(LINE) computed once for several tests. */
uint64_t sig_hash(uint64_t line);
int sig_test_hashed(const sig *s, uint64_t line, uint64_t h);
/* 1 if nothing was inserted since the last clear. */
int sig_empty(const sig *s);
/* Lines inserted since the last clear (distinct for exact sets; every
 * insertion for Bloom filters). */
uint64_t sig_count(const sig *s);

#endif

/* rru/signature.c: exact and Bloom-filter line signatures. The exact set is
 * an open-addressing table whose slots carry a generation number, so that
 * clearing it is O(1): a slot belongs to the set only if its generation is
 * the current one. */
#include "rru/signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"

typedef struct sig_slot {
    uint64_t line;
    uint32_t gen;
} sig_slot;

struct sig {
    uint32_t bloom_bits;   /* 0 = exact */
    uint32_t hashes;
    uint64_t count;
    /* exact */
    sig_slot *slot;
    uint32_t cap;          /* power of two */
    uint32_t gen;          /* current generation, >= 1 */
    /* exact: a 1024-bit summary of the set (one hashed bit per line), so
     * that a test of a line not in the set (the common case: every snoop
     * checks every cluster of every other core) usually costs one load
     * instead of a probe of the table. No false negatives. */
    uint64_t summary[16];
    /* Bloom */
    uint64_t *bits;
};

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

sig *sig_new(uint32_t bits, uint32_t hashes)
{
    sig *s = xcalloc(1, sizeof *s);
    if (bits) {
        uint32_t b = SIG_MIN_BITS;
        while (b < bits && b < SIG_MAX_BITS)
            b <<= 1;
        s->bloom_bits = b;
        s->hashes = hashes < 1 ? 1 : hashes > 8 ? 8 : hashes;
        s->bits = xcalloc(b / 64, sizeof *s->bits);
    } else {
        s->cap = 16;
        s->gen = 1;
        s->slot = xcalloc(s->cap, sizeof *s->slot);
    }
    return s;
}

void sig_free(sig *s)
{
    if (!s)
        return;
    free(s->slot);
    free(s->bits);
    free(s);
}

void sig_clear(sig *s)
{
    if (s->count == 0)
        return;
    s->count = 0;
    if (s->bits) {
        memset(s->bits, 0, s->bloom_bits / 8);
        return;
    }
    memset(s->summary, 0, sizeof s->summary);
    if (++s->gen == 0) {              /* wrapped: forget every old slot */
        memset(s->slot, 0, (size_t)s->cap * sizeof *s->slot);
        s->gen = 1;
    }
}

/* Exact set: the slot holding LINE, or the empty slot where it belongs. */
static sig_slot *find(const sig *s, uint64_t line)
{
    uint32_t mask = s->cap - 1;
    uint32_t i = (uint32_t)mix64(line) & mask;
    while (s->slot[i].gen == s->gen && s->slot[i].line != line)
        i = (i + 1) & mask;
    return &s->slot[i];
}

static void grow(sig *s)
{
    sig_slot *old = s->slot;
    uint32_t old_cap = s->cap, gen = s->gen;
    s->cap *= 2;
    s->slot = xcalloc(s->cap, sizeof *s->slot);
    s->gen = 1;
    for (uint32_t i = 0; i < old_cap; i++) {
        if (old[i].gen != gen)
            continue;
        sig_slot *d = find(s, old[i].line);
        d->line = old[i].line;
        d->gen = 1;
    }
    free(old);
}

void sig_insert(sig *s, uint64_t line)
{
    if (s->bits) {
        uint64_t h = mix64(line), h2 = (h >> 32) | 1;
        uint32_t mask = s->bloom_bits - 1;
        for (uint32_t k = 0; k < s->hashes; k++) {
            uint32_t b = (uint32_t)(h + k * h2) & mask;
            s->bits[b >> 6] |= 1ull << (b & 63);
        }
        s->count++;
        return;
    }
    uint32_t sb = (uint32_t)(mix64(line) >> 54);   /* the top 10 bits: the summary bit */
    s->summary[sb >> 6] |= 1ull << (sb & 63);
    sig_slot *d = find(s, line);
    if (d->gen == s->gen)
        return;
    d->line = line;
    d->gen = s->gen;
    if (++s->count * 2 > s->cap)
        grow(s);
}

uint64_t sig_hash(uint64_t line) { return mix64(line); }

int sig_test_hashed(const sig *s, uint64_t line, uint64_t h)
{
    if (s->count == 0)
        return 0;
    if (s->bits) {
        uint64_t h2 = (h >> 32) | 1;
        uint32_t mask = s->bloom_bits - 1;
        for (uint32_t k = 0; k < s->hashes; k++) {
            uint32_t b = (uint32_t)(h + k * h2) & mask;
            if (!(s->bits[b >> 6] & (1ull << (b & 63))))
                return 0;
        }
        return 1;
    }
    uint32_t sb = (uint32_t)(h >> 54);
    if (!(s->summary[sb >> 6] & (1ull << (sb & 63))))
        return 0;
    return find(s, line)->gen == s->gen;
}

int sig_test(const sig *s, uint64_t line) { return sig_test_hashed(s, line, mix64(line)); }

int sig_empty(const sig *s) { return s->count == 0; }
uint64_t sig_count(const sig *s) { return s->count; }

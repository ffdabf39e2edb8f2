/* rru/signature.c: exact and Bloom-filter line signatures.
 *
 * The exact set groups lines by 64: a line's key is its value rotated right
 * by 6 bits (a bijection, so any 64-bit value works; for a line address,
 * whose low 6 bits are zero, the key is the line index), the group is the
 * key without its low 6 bits (for addresses: the 4 KiB page) and the low 6
 * bits pick a bit of the group's 64-bit mask. Groups live in an
 * open-addressing table; a slot is empty iff its mask is 0 (a group in the
 * set has at least one line). A cluster that streams through memory thus
 * costs one slot per page instead of one per line, which keeps the tables
 * of all clusters of all cores in cache, and consecutive inserts of one
 * page hit a one-slot cache. Clearing zeroes the slots in use (listed in
 * `used`): the cost is proportional to what was inserted. */
#include "rru/signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"

typedef struct sig_slot {
    uint64_t group;
    uint64_t mask;         /* lines of the group in the set; 0 = empty slot */
} sig_slot;

struct sig {
    /* What an insert reads first, together in one cache line. */
    uint64_t *bits;        /* Bloom: the bit array; NULL for exact sets */
    sig_slot *last;        /* exact: the slot of the last insert, or NULL */
    uint64_t count;
    uint32_t bloom_bits;   /* 0 = exact */
    uint32_t hashes;
    /* exact */
    sig_slot *slot;
    uint32_t cap;          /* power of two */
    uint32_t shift;        /* 64 - log2(cap) */
    uint32_t *used;        /* indices of the slots in use */
    uint32_t nused;
    /* exact: a 1024-bit summary of the set (one hashed bit per group), so
     * that a test of a line not in the set (the common case: every snoop
     * checks every cluster of every other core) usually costs one load
     * instead of a probe of the table. No false negatives. */
    uint64_t summary[16];
};

static inline uint64_t key_of(uint64_t line) { return line >> 6 | line << 58; }
static inline uint64_t slot_hash(uint64_t group) { return group * 0x9e3779b97f4a7c15ull; }
static inline uint32_t summary_bit(uint64_t group)
{
    return (uint32_t)((group * 0xd6e8feb86659fd93ull) >> 54);
}

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
        s->shift = 64 - 4;
        s->slot = xcalloc(s->cap, sizeof *s->slot);
        s->used = xcalloc(s->cap, sizeof *s->used);
    }
    return s;
}

void sig_free(sig *s)
{
    if (!s)
        return;
    free(s->slot);
    free(s->used);
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
    for (uint32_t i = 0; i < s->nused; i++)
        s->slot[s->used[i]].mask = 0;
    s->nused = 0;
    s->last = NULL;
}

/* Exact set: the slot holding GROUP, or the empty slot where it belongs
 * (the table is never more than half full, so one exists). */
static sig_slot *find(const sig *s, uint64_t group)
{
    uint32_t mask = s->cap - 1;
    uint32_t i = (uint32_t)(slot_hash(group) >> s->shift);
    while (s->slot[i].mask && s->slot[i].group != group)
        i = (i + 1) & mask;
    return &s->slot[i];
}

static void grow(sig *s)
{
    sig_slot *old = s->slot;
    uint32_t *old_used = s->used, n = s->nused;
    s->cap *= 2;
    s->shift--;
    s->slot = xcalloc(s->cap, sizeof *s->slot);
    s->used = xcalloc(s->cap, sizeof *s->used);
    s->nused = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sig_slot *o = &old[old_used[i]];
        sig_slot *d = find(s, o->group);
        *d = *o;
        s->used[s->nused++] = (uint32_t)(d - s->slot);
    }
    s->last = NULL;
    free(old);
    free(old_used);
}

/* The parts of an insert that are not a hit on the last group, out of
 * line: the common case then needs no stack frame. */
static __attribute__((noinline)) void bloom_insert(sig *s, uint64_t line)
{
    uint64_t h = mix64(line), h2 = (h >> 32) | 1;
    uint32_t mask = s->bloom_bits - 1;
    for (uint32_t k = 0; k < s->hashes; k++) {
        uint32_t b = (uint32_t)(h + k * h2) & mask;
        s->bits[b >> 6] |= 1ull << (b & 63);
    }
    s->count++;
}

static __attribute__((noinline)) void group_insert(sig *s, uint64_t group, uint64_t bit)
{
    sig_slot *d = find(s, group);
    if (!d->mask) {
        uint32_t sb = summary_bit(group);
        s->summary[sb >> 6] |= 1ull << (sb & 63);
        d->group = group;
        d->mask = bit;
        s->count++;
        s->used[s->nused++] = (uint32_t)(d - s->slot);
        if (s->nused * 2 > s->cap) {
            grow(s);   /* forgets last */
            return;
        }
    } else if (!(d->mask & bit)) {
        d->mask |= bit;
        s->count++;
    }
    s->last = d;
}

void sig_insert(sig *s, uint64_t line)
{
    if (s->bits) {
        bloom_insert(s, line);
        return;
    }
    const uint64_t key = key_of(line), group = key >> 6, bit = 1ull << (key & 63);
    sig_slot *d = s->last;
    if (d && d->group == group) {
        s->count += !(d->mask & bit);
        d->mask |= bit;
        return;
    }
    group_insert(s, group, bit);
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
    uint64_t key = key_of(line), group = key >> 6;
    uint32_t sb = summary_bit(group);
    if (!(s->summary[sb >> 6] & (1ull << (sb & 63))))
        return 0;
    return (find(s, group)->mask >> (key & 63)) & 1;
}

int sig_test(const sig *s, uint64_t line) { return sig_test_hashed(s, line, mix64(line)); }

int sig_empty(const sig *s) { return s->count == 0; }
uint64_t sig_count(const sig *s) { return s->count; }

/* workloads/malloc_stress.c: heavy malloc/calloc/realloc/free of small,
 * medium and large (mmap-backed) blocks in a seeded random pattern; every
 * block is filled and checked before it is freed.
 * Usage: malloc_stress [OPS] (default 5000). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 512

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The byte expected at offset I of slot S's block. Blocks are filled with
 * memset (as programs do) and then marked at a stride, so that big blocks
 * cost little to fill yet a wrong or moved byte is still caught. */
static unsigned char pattern(size_t slot, size_t i)
{
    return i % 61 == 0 ? (unsigned char)(slot * 31 + i * 7) : (unsigned char)slot;
}

static void fill(unsigned char *p, size_t slot, size_t from, size_t to)
{
    memset(p + from, (unsigned char)slot, to - from);
    for (size_t i = (from + 60) / 61 * 61; i < to; i += 61)
        p[i] = pattern(slot, i);
}

int main(int argc, char **argv)
{
    long ops = argc > 1 ? strtol(argv[1], NULL, 0) : 5000;
    static unsigned char *blk[SLOTS];
    static size_t len[SLOTS];
    uint64_t allocated = 0, bad = 0, big = 0;
    for (long op = 0; op < ops; op++) {
        size_t s = next() % SLOTS;
        if (blk[s]) {
            for (size_t i = 0; i < len[s]; i += 1 + len[s] / 64)
                bad += blk[s][i] != pattern(s, i);
            for (size_t i = 0; i < len[s]; i += 61 * (1 + len[s] / 4096))
                bad += blk[s][i] != pattern(s, i);
            if (next() % 4 == 0) {
                size_t nl = len[s] + next() % 4096;
                unsigned char *p = realloc(blk[s], nl);
                if (!p)
                    return 2;
                for (size_t i = 0; i < len[s]; i += 1 + len[s] / 64)
                    bad += p[i] != pattern(s, i);
                fill(p, s, len[s], nl);
                blk[s] = p;
                len[s] = nl;
                continue;
            }
            free(blk[s]);
            blk[s] = NULL;
            continue;
        }
        uint64_t r = next();
        size_t n = r % 100 < 85 ? 1 + r % 256 : r % 100 < 98 ? 1 + r % 65536 : 200000 + r % 800000;
        big += n >= 200000;
        unsigned char *p = (r >> 32) % 3 == 0 ? calloc(1, n) : malloc(n);
        if (!p)
            return 2;
        if ((r >> 32) % 3 == 0)
            for (size_t i = 0; i < n; i += 1 + n / 64)
                bad += p[i] != 0;
        fill(p, s, 0, n);
        blk[s] = p;
        len[s] = n;
        allocated += n;
    }
    size_t live = 0;
    for (size_t s = 0; s < SLOTS; s++) {
        live += blk[s] != NULL;
        free(blk[s]);
    }
    printf("ops %ld allocated %" PRIu64 " big %" PRIu64 " live %zu bad %" PRIu64 "\n", ops,
           allocated, big, live, bad);
    return bad != 0;
}

/* workloads/suite/radix.c: research suite, parallel radix sort of 32-bit
 * integer keys, 8 bits per pass (4 passes). Each pass: every thread counts
 * the digits of its slice into its own histogram row, barrier, every
 * thread derives where its keys of each digit go (the keys of smaller
 * digits, then those of the same digit in lower-numbered threads), then
 * scatters its slice into the other buffer, barrier. The scatter writes
 * all over the destination: threads' writes meet in shared cache lines.
 *
 * Usage: radix [-t THREADS] [-s small|large|N]   N keys
 * (small 131072, large 2097152; 8 threads by default).
 *
 * Check: the output is sorted and is a permutation of the input (an
 * order-independent sum of hashed keys must match). The sort is stable and
 * deterministic, so the printed checksum (a position-weighted hash) does not
 * depend on the interleaving or the thread count. -x overwrites one key of
 * the result with its (different) left neighbour: still sorted, but no
 * longer a permutation. */
#include "suite.h"

#define DIGIT_BITS 8
#define RADIX (1 << DIGIT_BITS)
#define PASSES (32 / DIGIT_BITS)
#define SEED 0x4ad1ull

static suite_opts opt;
static long nkeys;
static uint32_t *keys[2];
static uint32_t (*histogram)[RADIX];    /* one row per thread */
static pthread_barrier_t barrier;
static uint64_t in_sum[SUITE_MAX_THREADS], out_sum[SUITE_MAX_THREADS], position_sum[SUITE_MAX_THREADS];
static long unsorted_at[SUITE_MAX_THREADS];

static unsigned digit(uint32_t key, int pass) { return (key >> (pass * DIGIT_BITS)) & (RADIX - 1); }

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    long lo, hi;
    suite_slice(nkeys, opt.threads, id, &lo, &hi);
    uint64_t sum = 0;
    for (long i = lo; i < hi; i++) {
        keys[0][i] = (uint32_t)suite_random(SEED, (uint64_t)i);
        sum += suite_mix(keys[0][i]);
    }
    in_sum[id] = sum;

    for (int pass = 0; pass < PASSES; pass++) {
        const uint32_t *src = keys[pass & 1];
        uint32_t *dst = keys[(pass + 1) & 1];
        uint32_t count[RADIX] = {0};
        for (long i = lo; i < hi; i++)
            count[digit(src[i], pass)]++;
        memcpy(histogram[id], count, sizeof count);
        pthread_barrier_wait(&barrier);

        long offset[RADIX], base = 0;
        for (int d = 0; d < RADIX; d++) {
            long mine = base;
            for (int t = 0; t < opt.threads; t++) {
                if (t < id)
                    mine += histogram[t][d];
                base += histogram[t][d];
            }
            offset[d] = mine;
        }
        for (long i = lo; i < hi; i++)
            dst[offset[digit(src[i], pass)]++] = src[i];
        pthread_barrier_wait(&barrier);
    }

    uint32_t *out = keys[PASSES & 1];
    if (opt.inject) {
        for (long i = nkeys / 2; id == 0 && i < nkeys; i++)
            if (i > 0 && out[i] != out[i - 1]) {
                out[i] = out[i - 1];
                break;
            }
        pthread_barrier_wait(&barrier);
    }
    uint64_t psum = 0;
    sum = 0;
    unsorted_at[id] = -1;
    for (long i = lo; i < hi; i++) {
        if (i > 0 && out[i - 1] > out[i] && unsorted_at[id] < 0)
            unsorted_at[id] = i;
        sum += suite_mix(out[i]);
        psum += suite_mix(out[i] ^ ((uint64_t)i << 32));
    }
    out_sum[id] = sum;
    position_sum[id] = psum;
    return NULL;
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "radix", "keys", 131072, 2097152);
    nkeys = opt.size;
    keys[0] = suite_alloc((size_t)nkeys, sizeof(uint32_t));
    keys[1] = suite_alloc((size_t)nkeys, sizeof(uint32_t));
    histogram = suite_alloc((size_t)opt.threads, sizeof *histogram);
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.threads);
    suite_run_threads(opt.threads, worker);

    uint64_t want = 0, got = 0, checksum = 0;
    long unsorted = -1;
    for (int t = 0; t < opt.threads; t++) {
        want += in_sum[t];
        got += out_sum[t];
        checksum += position_sum[t];
        if (unsorted < 0)
            unsorted = unsorted_at[t];
    }
    int ok = unsorted < 0 && want == got;
    printf("radix n=%ld threads=%d %s checksum=%016" PRIx64 "\n", nkeys, opt.threads, ok ? "ok" : "FAILED",
           checksum);
    if (unsorted >= 0)
        suite_complain(opt.name, "keys %ld and %ld are out of order", unsorted - 1, unsorted);
    if (want != got)
        suite_complain(opt.name, "the output is not a permutation of the input (key hash sums %016" PRIx64
                       " and %016" PRIx64 ")", want, got);
    return ok ? 0 : 1;
}

/* workloads/intmath.c: integer arithmetic (RV64IM: add, shifts, mul, div,
 * rem and their edge cases, 128-bit products), plus a long integer loop for
 * benchmarks. Usage: intmath [ITERATIONS] (default 20000). */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Values that hit the edges of division and overflow. */
static const int64_t edge[] = {
    0, 1, -1, 2, -2, 3, 7, -7, 255, 65536, INT32_MAX, INT32_MIN,
    (int64_t)INT32_MAX + 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, 0x123456789abcdefLL,
};
#define NEDGE (sizeof edge / sizeof edge[0])

/* The compiler must not fold the operations: values pass through here. */
static volatile int64_t sink_v;
static int64_t opaque(int64_t v) { sink_v = v; return sink_v; }

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t edge_cases(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < NEDGE; i++) {
        for (size_t j = 0; j < NEDGE; j++) {
            int64_t a = opaque(edge[i]), b = opaque(edge[j]);
            uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
            h = mix(h, ua + ub);
            h = mix(h, ua - ub);
            h = mix(h, ua * ub);
            /* RISC-V defines division by zero and overflow; C does not, so
             * the C-level results are spelled out here the way the ISA gives
             * them (x/0 = -1, x%0 = x, MIN/-1 = MIN, MIN%-1 = 0). */
            int64_t q, r;
            if (b == 0) { q = -1; r = a; }
            else if (a == INT64_MIN && b == -1) { q = INT64_MIN; r = 0; }
            else { q = a / b; r = a % b; }
            h = mix(h, (uint64_t)q);
            h = mix(h, (uint64_t)r);
            h = mix(h, ub ? ua / ub : UINT64_MAX);
            h = mix(h, ub ? ua % ub : ua);
            h = mix(h, (uint64_t)(((__int128)a * b) >> 64));
            h = mix(h, (uint64_t)(((unsigned __int128)ua * ub) >> 64));
            h = mix(h, (uint64_t)(((__int128)a * (unsigned __int128)ub) >> 64));
            h = mix(h, ua << (ub & 63));
            h = mix(h, ua >> (ub & 63));
            h = mix(h, (uint64_t)(a >> (ub & 63)));
            int32_t a32 = (int32_t)a, b32 = (int32_t)b;
            h = mix(h, (uint64_t)(int64_t)(int32_t)((uint32_t)a32 * (uint32_t)b32));
            if (b32 != 0 && !(a32 == INT32_MIN && b32 == -1))
                h = mix(h, (uint64_t)(int64_t)(a32 / b32 + a32 % b32));
            h = mix(h, (uint64_t)(int64_t)(int32_t)((uint32_t)a32 << (b & 31)));
            h = mix(h, (uint64_t)(int64_t)(a32 >> (b & 31)));
            h = mix(h, (uint64_t)(a < b) + 2 * (uint64_t)(ua < ub));
        }
    }
    return h;
}

static int popcount_ref(uint64_t v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* The benchmark loop: a xorshift generator, a running hash, a division now
 * and then; about 20 instructions per iteration. */
static uint64_t loop(uint64_t iterations)
{
    uint64_t x = 88172645463325252ull, acc = 0;
    for (uint64_t i = 0; i < iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += (x & 0xffff) * (i | 1);
        acc ^= acc >> 11;
        if ((i & 1023) == 0)
            acc += x / ((i >> 10) + 3);
    }
    return acc;
}

int main(int argc, char **argv)
{
    uint64_t iterations = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000;
    printf("edge hash: %016" PRIx64 "\n", edge_cases());
    uint64_t pc = 0;
    for (int i = 0; i < 64; i++)
        pc += (uint64_t)popcount_ref(0x0123456789abcdefull * (uint64_t)i);
    printf("popcounts: %" PRIu64 "\n", pc);
    long long ll = LLONG_MIN;
    printf("limits: %lld %lld %llu %d %u\n", ll, LLONG_MAX, ULLONG_MAX, INT_MIN, UINT_MAX);
    printf("loop(%" PRIu64 "): %016" PRIx64 "\n", iterations, loop(iterations));
    return 0;
}

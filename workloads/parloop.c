/* workloads/parloop.c: THREADS threads each run the integer loop of
 * intmath on their own seed (no sharing but the final join), so that
 * simulated cores run in parallel; prints the XOR of the per-thread
 * results, which does not depend on the interleaving.
 * Usage: parloop [THREADS [ITERATIONS_PER_THREAD]] (default 4, 20000). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t iterations;

static uint64_t loop(uint64_t seed, uint64_t n)
{
    uint64_t x = 88172645463325252ull ^ (seed * 0x9e3779b97f4a7c15ull), acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += (x & 0xffff) * (i | 1);
        acc ^= acc >> 11;
    }
    return acc;
}

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    return (void *)(uintptr_t)loop(id, iterations);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    iterations = argc > 2 ? strtoull(argv[2], NULL, 0) : 20000;
    if (n < 1 || n > 1024)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    uint64_t x = 0;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        x ^= (uint64_t)(uintptr_t)r;
    }
    printf("parloop: threads %d iterations %" PRIu64 " result %016" PRIx64 "\n", n, iterations, x);
    free(t);
    return 0;
}

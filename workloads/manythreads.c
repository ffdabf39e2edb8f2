/* workloads/manythreads.c: many more threads than CPUs, created in waves;
 * each does a little work, some yield or sleep, all are joined, and the
 * sum of their results is checked. Usage: manythreads [THREADS [WORK]]
 * (default 40 threads, 300 steps each). */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long work;

static uint64_t f(uint64_t id)
{
    uint64_t x = id + 1;
    for (long i = 0; i < work; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    if (id % 5 == 0)
        sched_yield();
    if (id % 7 == 0) {
        struct timespec ts = {0, 1000 * (long)id};
        nanosleep(&ts, NULL);
    }
    return (void *)(uintptr_t)f(id);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    work = argc > 2 ? atol(argv[2]) : 300;
    if (n < 1 || n > 4096 || work < 0)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)n);
    uint64_t sum = 0, expect = 0;
    int wave = 16;
    for (int base = 0; base < n; base += wave) {
        int end = base + wave < n ? base + wave : n;
        for (int i = base; i < end; i++)
            if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
                return 3;
        /* The main thread keeps the older wave running while it starts more. */
        for (int i = base; i < end; i++) {
            void *r;
            pthread_join(t[i], &r);
            sum += (uint64_t)(uintptr_t)r;
        }
    }
    for (int i = 0; i < n; i++)
        expect += f((uint64_t)i);
    printf("manythreads: threads %d sum %016" PRIx64 " %s\n", n, sum, sum == expect ? "ok" : "WRONG");
    free(t);
    return sum == expect ? 0 : 1;
}

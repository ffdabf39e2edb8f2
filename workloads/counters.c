/* workloads/counters.c: threads read the time, cycle and instret counters
 * directly (rdtime, rdcycle, rdinstret, as timing code does) and check
 * that each only grows. With "mix" it also prints a value mixed from
 * every reading, which differs from run to run of different seeds and
 * must be reproduced exactly by a replay (the readings are inputs).
 * Usage: counters [THREADS] [mix] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16

static inline uint64_t rd_time(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

static inline uint64_t rd_cycle(void)
{
    uint64_t v;
    __asm__ volatile("rdcycle %0" : "=r"(v));
    return v;
}

static inline uint64_t rd_instret(void)
{
    uint64_t v;
    __asm__ volatile("rdinstret %0" : "=r"(v));
    return v;
}

static uint64_t mix[MAX_THREADS];
static int grows[MAX_THREADS];

static void *reader(void *arg)
{
    long i = (long)arg;
    uint64_t t0 = rd_time(), c0 = rd_cycle(), n0 = rd_instret(), h = 0;
    int ok = 1;
    for (int k = 0; k < 500; k++) {
        uint64_t t = rd_time(), c = rd_cycle(), n = rd_instret();
        ok &= t >= t0 && c >= c0 && n > n0;
        h = h * 1099511628211ull ^ t ^ (c << 1) ^ (n << 2);
        t0 = t, c0 = c, n0 = n;
    }
    mix[i] = h;
    grows[i] = ok;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: counters [THREADS 1..%d] [mix]\n", MAX_THREADS);
        return 2;
    }
    pthread_t th[MAX_THREADS];
    for (long i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, reader, (void *)i);
    uint64_t all = 0;
    int ok = 1;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        all ^= mix[i];
        ok &= grows[i];
    }
    printf("%d threads: time, cycle and instret only grow: %d\n", threads, ok);
    if (argc > 2 && strcmp(argv[2], "mix") == 0)
        printf("mix %016llx\n", (unsigned long long)all);
    return 0;
}

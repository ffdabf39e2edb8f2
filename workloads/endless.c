/* workloads/endless.c: THREADS threads that compute and share a counter
 * until SECONDS of simulated time have passed (default: for ever), printing
 * a line now and then. The recorder's tests interrupt or kill recordings of
 * it. Usage: endless [THREADS [SECONDS]] (default 4, 0 = no end). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_long shared;
static double limit;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *spin(void *arg)
{
    long id = (long)arg, local = 0;
    double start = now();
    for (long i = 1;; i++) {
        local = local * 31 + i;
        if (i % 1000 == 0)
            atomic_fetch_add(&shared, 1);
        if (i % 2000000 == 0) {
            printf("thread %ld: %ld\n", id, atomic_load(&shared));
            if (limit > 0 && now() - start > limit)
                break;
        }
    }
    return (void *)local;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    limit = argc > 2 ? atof(argv[2]) : 0;
    if (n < 1 || n > 64)
        return 2;
    pthread_t t[64];
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, spin, (void *)i);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("endless: done, shared %ld\n", atomic_load(&shared));
    return 0;
}

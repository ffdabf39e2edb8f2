/* workloads/mutex.c: THREADS threads each add 1..ITERS to a shared total
 * under a pthread mutex (with a trylock path too); the total must be
 * THREADS * ITERS * (ITERS + 1) / 2. Usage: mutex [THREADS [ITERS]]
 * (default 4 threads, 2000 iterations). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t total, trylocks;
static long iters;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 1; i <= iters; i++) {
        if (i % 8 == 0 && pthread_mutex_trylock(&lock) == 0) {
            trylocks++;
        } else {
            pthread_mutex_lock(&lock);
        }
        total += (uint64_t)i;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 2000;
    if (nthreads < 1 || nthreads > 1024 || iters < 1)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)nthreads);
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 3;
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    uint64_t expect = (uint64_t)nthreads * (uint64_t)iters * (uint64_t)(iters + 1) / 2;
    printf("mutex: threads %d total %" PRIu64 " expected %" PRIu64 " %s\n", nthreads, total, expect,
           total == expect ? "ok" : "WRONG");
    free(t);
    return total == expect ? 0 : 1;
}

/* workloads/racy.c: a deliberately racy counter: THREADS threads increment
 * a plain shared variable with a load, some work and a store, so increments
 * are lost depending on the interleaving. Prints the final value (at most
 * THREADS * ITERS). Usage: racy [THREADS [ITERS]] (default 4, 500). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long counter;
static long iters;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) {
        long v = counter;
        for (volatile int k = 0; k < 3; k++)
            ;
        counter = v + 1;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 500;
    if (n < 1 || n > 1024 || iters < 1)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("racy: threads %d counter %ld of %ld\n", n, counter, (long)n * iters);
    free(t);
    return 0;
}

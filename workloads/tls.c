/* workloads/tls.c: thread-local storage (__thread and _Thread_local, with
 * initialisers, in .tdata and .tbss): each thread sums into its own copy;
 * the copies must not interfere. Usage: tls [THREADS [ITERS]]
 * (default 4 threads, 1000 iterations). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static __thread uint64_t tl_sum = 7;            /* .tdata */
static _Thread_local uint64_t tl_count;         /* .tbss */
static __thread char tl_name[16] = "main";
static long iters;
static uint64_t results[1024];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    int ok = tl_sum == 7 && tl_count == 0 && tl_name[0] == 'm';
    snprintf(tl_name, sizeof tl_name, "t%d", id);
    for (long i = 0; i < iters; i++) {
        tl_sum += (uint64_t)id;
        tl_count++;
    }
    ok &= tl_name[0] == 't' && atoi(tl_name + 1) == id;
    results[id] = ok ? tl_sum + tl_count * 1000000 : 0;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 1000;
    if (n < 1 || n > 1023 || iters < 1)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i + 1));
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    int ok = tl_sum == 7 && tl_count == 0;
    uint64_t total = 0;
    for (int i = 1; i <= n; i++) {
        uint64_t expect = 7 + (uint64_t)i * (uint64_t)iters + (uint64_t)iters * 1000000;
        ok &= results[i] == expect;
        total += results[i];
    }
    printf("tls: threads %d total %" PRIu64 " main %s %" PRIu64 " %s\n", n, total, tl_name, tl_sum,
           ok ? "ok" : "WRONG");
    free(t);
    return ok ? 0 : 1;
}

/* workloads/condvar.c: a bounded buffer with a mutex and two condition
 * variables; PRODUCERS put ITEMS values each, as many consumers take them.
 * The sum taken must equal the sum put. Usage: condvar [PRODUCERS [ITEMS]]
 * (default 3 producers, 500 items each). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CAP 8
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static uint64_t buf[CAP];
static int head, count;
static long items;
static uint64_t taken_sum, taken_count;

static void *producer(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg * 1000003u;
    for (long i = 0; i < items; i++) {
        pthread_mutex_lock(&lock);
        while (count == CAP)
            pthread_cond_wait(&not_full, &lock);
        buf[(head + count) % CAP] = base + (uint64_t)i;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (long i = 0; i < items; i++) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&not_empty, &lock);
        uint64_t v = buf[head];
        head = (head + 1) % CAP;
        count--;
        taken_sum += v;
        taken_count++;
        pthread_cond_broadcast(&not_full);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int np = argc > 1 ? atoi(argv[1]) : 3;
    items = argc > 2 ? atol(argv[2]) : 500;
    if (np < 1 || np > 256 || items < 1)
        return 2;
    pthread_t *t = malloc(sizeof *t * 2 * (size_t)np);
    for (int i = 0; i < np; i++) {
        pthread_create(&t[2 * i], NULL, producer, (void *)(uintptr_t)(i + 1));
        pthread_create(&t[2 * i + 1], NULL, consumer, NULL);
    }
    for (int i = 0; i < 2 * np; i++)
        pthread_join(t[i], NULL);
    uint64_t expect = 0;
    for (int p = 1; p <= np; p++)
        expect += (uint64_t)p * 1000003u * (uint64_t)items + (uint64_t)items * (uint64_t)(items - 1) / 2;
    int ok = taken_sum == expect && taken_count == (uint64_t)np * (uint64_t)items;
    printf("condvar: producers %d taken %" PRIu64 " sum %" PRIu64 " expected %" PRIu64 " %s\n", np,
           taken_count, taken_sum, expect, ok ? "ok" : "WRONG");
    free(t);
    return ok ? 0 : 1;
}

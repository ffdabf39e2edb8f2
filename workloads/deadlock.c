/* workloads/deadlock.c: two threads take two mutexes in opposite orders
 * and wait for each other at a barrier in between, so they deadlock every
 * time; the main thread then blocks in pthread_join. A run must end with a
 * deadlock report, not hang. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static void *other(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&b);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&a);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_barrier_init(&both_hold_one, NULL, 2);
    printf("deadlock: starting\n");
    fflush(stdout);
    pthread_create(&t, NULL, other, NULL);
    pthread_mutex_lock(&a);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&b);
    pthread_join(t, NULL);
    printf("deadlock: not reached\n");
    return 0;
}

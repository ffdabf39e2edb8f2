/* workloads/robust.c: robust mutexes, which the kernel releases when their
 * owner ends (the robust futex list of set_robust_list): a thread ends
 * holding one, and the next locker gets EOWNERDEAD and makes it
 * consistent; a thread ends holding one while another waits for it, which
 * is woken with EOWNERDEAD; a mutex left inconsistent is not recoverable.
 *
 * Usage: robust */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t a, b, c;
static pthread_barrier_t held;

static const char *name(int r)
{
    return r == 0 ? "0" : r == EOWNERDEAD ? "EOWNERDEAD" : r == ENOTRECOVERABLE ? "ENOTRECOVERABLE"
                                                                                : strerror(r);
}

static void *take_and_end(void *arg)
{
    pthread_mutex_lock(arg);
    return NULL;
}

static void *take_wait_end(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&b);
    pthread_barrier_wait(&held);
    /* Let the main thread block on b before this thread ends. */
    struct timespec ms = {0, 2000000};
    nanosleep(&ms, NULL);
    return NULL;
}

static void init_robust(pthread_mutex_t *m)
{
    pthread_mutexattr_t at;
    pthread_mutexattr_init(&at);
    pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(m, &at);
    pthread_mutexattr_destroy(&at);
}

int main(void)
{
    init_robust(&a);
    init_robust(&b);
    init_robust(&c);
    pthread_t t;

    pthread_create(&t, NULL, take_and_end, &a);
    pthread_join(t, NULL);
    int r = pthread_mutex_lock(&a);
    printf("owner ended: lock %s", name(r));
    if (r == EOWNERDEAD)
        printf(", consistent %s", name(pthread_mutex_consistent(&a)));
    printf(", unlock %s, lock again %s, unlock %s\n", name(pthread_mutex_unlock(&a)),
           name(pthread_mutex_lock(&a)), name(pthread_mutex_unlock(&a)));

    pthread_barrier_init(&held, NULL, 2);
    pthread_create(&t, NULL, take_wait_end, NULL);
    pthread_barrier_wait(&held);
    r = pthread_mutex_lock(&b);
    printf("waiting when the owner ended: lock %s", name(r));
    if (r == EOWNERDEAD)
        printf(", consistent %s", name(pthread_mutex_consistent(&b)));
    printf(", unlock %s\n", name(pthread_mutex_unlock(&b)));
    pthread_join(t, NULL);

    pthread_create(&t, NULL, take_and_end, &c);
    pthread_join(t, NULL);
    r = pthread_mutex_lock(&c);
    printf("left inconsistent: lock %s, unlock %s", name(r), name(pthread_mutex_unlock(&c)));
    printf(", lock again %s\n", name(pthread_mutex_lock(&c)));
    return 0;
}

/* workloads/exitblocked.c: the process ends while two of its threads are
 * still blocked in system calls (one reading an empty pipe, one waiting
 * on a condition variable), as a program with idle worker threads ends:
 * by exit(3) from main, or by abort() with "abort".
 * Usage: exitblocked [abort] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int ready;

static void *reader(void *arg)
{
    (void)arg;
    char c;
    pthread_mutex_lock(&lock);
    ready++;
    pthread_mutex_unlock(&lock);
    return read(fds[0], &c, 1) == 1 ? (void *)1 : NULL;   /* nobody writes */
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    ready++;
    pthread_cond_wait(&never, &lock);   /* nobody signals */
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (pipe(fds) != 0)
        return 1;
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    for (;;) {
        pthread_mutex_lock(&lock);
        int n = ready;
        pthread_mutex_unlock(&lock);
        if (n == 2)
            break;
        sched_yield();
    }
    for (volatile int i = 0; i < 20000; i++)
        ;
    printf("both workers are blocked; main ends the process\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort();
    exit(3);
}

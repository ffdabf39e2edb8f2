/* workloads/chatter.c: threads that interleave their output: each of
 * THREADS threads writes LINES lines to stdout with write(2) (one line per
 * call, so lines never tear) and every fourth line with writev(2) to
 * stderr, while they also update a shared counter under a mutex. The
 * order of the lines depends on the interleaving: a replay must reproduce
 * it. Usage: chatter [THREADS [LINES]] (default 4, 20). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total, lines;

static void *talker(void *arg)
{
    long id = (long)arg;
    char buf[96];
    for (long i = 0; i < lines; i++) {
        pthread_mutex_lock(&lock);
        long seen = ++total;
        pthread_mutex_unlock(&lock);
        int n = snprintf(buf, sizeof buf, "thread %ld line %ld total %ld\n", id, i, seen);
        if (write(1, buf, (size_t)n) != n)
            return (void *)1;
        if (i % 4 == 3) {
            struct iovec v[2] = {{"note: ", 6}, {buf, (size_t)n}};
            if (writev(2, v, 2) != n + 6)
                return (void *)1;
        }
        for (volatile int k = 0; k < 50 * (int)(id + 1); k++)
            ;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    lines = argc > 2 ? atol(argv[2]) : 20;
    if (n < 1 || n > 64 || lines < 1)
        return 2;
    pthread_t t[64];
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, talker, (void *)i) != 0)
            return 1;
    long bad = 0;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    printf("chatter: %d threads, %ld lines, total %ld\n", n, lines, total);
    return bad ? 1 : 0;
}

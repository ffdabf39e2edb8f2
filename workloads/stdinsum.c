/* workloads/stdinsum.c: threads share standard input. THREADS workers
 * take turns (a mutex) reading it in pieces of 1 to 13 bytes with read(2)
 * and fold each piece into one checksum, in the order the bytes arrive;
 * after end of file, read() and stdio say end of file again. Prints the
 * byte and line counts and the checksum (the same for any interleaving);
 * with -v also what each worker read (which depends on the interleaving).
 * Usage: stdinsum [-v] [THREADS] (default 3). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long sum, bytes, lines, reads;
static unsigned long got[MAX_THREADS];

static void *worker(void *arg)
{
    long id = (long)arg;
    char buf[16];
    for (;;) {
        pthread_mutex_lock(&mu);
        size_t want = 1 + (reads++ * 7 + (unsigned long)id) % 13;
        ssize_t k = read(0, buf, want);
        for (ssize_t i = 0; i < k; i++) {
            sum = sum * 131 + (unsigned char)buf[i];
            lines += buf[i] == '\n';
        }
        if (k > 0) {
            bytes += (unsigned long)k;
            got[id] += (unsigned long)k;
        }
        pthread_mutex_unlock(&mu);
        if (k < 0)
            perror("read");
        if (k <= 0)
            return NULL;
    }
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    long n = argc > 1 + verbose ? atol(argv[1 + verbose]) : 3;
    if (n < 1 || n > MAX_THREADS) {
        fprintf(stderr, "usage: stdinsum [-v] [THREADS 1-%d]\n", MAX_THREADS);
        return 2;
    }
    pthread_t t[MAX_THREADS];
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%lu bytes, %lu lines, checksum %016lx\n", bytes, lines, sum);
    char c;
    printf("read after end of file: %zd\n", read(0, &c, 1));
    printf("getchar after end of file: %s\n", getchar() == EOF ? "EOF" : "a byte");
    if (verbose)
        for (long i = 0; i < n; i++)
            printf("worker %ld read %lu bytes\n", i, got[i]);
    return 0;
}

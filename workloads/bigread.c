/* workloads/bigread.c: one read() system call fills a large buffer that
 * other threads wrote before and read after: the call's own chunk touches
 * more lines than one MSP window of the recorder covers (at the default
 * MSP, 128 KiB are 2,048 lines, each a bus transaction of the calling
 * core). The threads first write their stripes of the buffer (so the call
 * takes every line from another core), wait at a barrier while the main
 * thread reads KIB KiB (default 128) of FILE (default: the program
 * itself) with one read() call, then hash their stripes again. Prints the
 * byte count and checksums.
 * Usage: bigread [KIB] [THREADS] [FILE] */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 16
#define LINE 64

static uint8_t *buf;
static size_t len;
static unsigned nthreads;
static pthread_barrier_t filled, done;
static uint64_t part[MAX_THREADS];

static uint64_t hash(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Thread T owns every NTHREADS-th line of the buffer, starting at line T. */
static void *worker(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    for (size_t at = (size_t)t * LINE; at < len; at += (size_t)nthreads * LINE)
        memset(buf + at, (int)(t + 1), len - at < LINE ? len - at : LINE);
    pthread_barrier_wait(&filled);   /* main reads the file */
    pthread_barrier_wait(&done);
    uint64_t h = 1469598103934665603ull;
    for (size_t at = (size_t)t * LINE; at < len; at += (size_t)nthreads * LINE)
        h = hash(h, buf + at, len - at < LINE ? len - at : LINE);
    part[t] = h;
    return NULL;
}

int main(int argc, char **argv)
{
    len = (argc > 1 ? (size_t)atol(argv[1]) : 128) * 1024;
    nthreads = argc > 2 ? (unsigned)atoi(argv[2]) : 3;
    const char *path = argc > 3 ? argv[3] : argv[0];
    if (len == 0 || nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "usage: bigread [KIB] [THREADS 1..%d] [FILE]\n", MAX_THREADS);
        return 2;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    buf = malloc(len);
    if (!buf)
        return 1;
    pthread_t th[MAX_THREADS];
    pthread_barrier_init(&filled, NULL, nthreads + 1);
    pthread_barrier_init(&done, NULL, nthreads + 1);
    for (unsigned t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t);
    pthread_barrier_wait(&filled);
    ssize_t n = read(fd, buf, len);   /* the one long system call */
    pthread_barrier_wait(&done);
    for (unsigned t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    close(fd);
    uint64_t all = 1469598103934665603ull;
    for (unsigned t = 0; t < nthreads; t++)
        all = hash(all, (const uint8_t *)&part[t], sizeof part[t]);
    printf("read %zd of %zu bytes, stripes %016" PRIx64 ", whole %016" PRIx64 "\n", n, len, all,
           hash(1469598103934665603ull, buf, n > 0 ? (size_t)n : 0));
    free(buf);
    return n < 0;
}

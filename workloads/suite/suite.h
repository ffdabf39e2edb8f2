/* workloads/suite/suite.h: what the research-suite programs share: the
 * command line (-t THREADS, -s small|large|N, the hidden -x), starting and
 * joining the worker threads, a counter-based random generator, checksums
 * and the failure report. Header only: each program is one .c file. */
#ifndef RNR_WORKLOADS_SUITE_H
#define RNR_WORKLOADS_SUITE_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUITE_MAX_THREADS 256

/* Parsed command line. size is the problem size of the program's own
 * unit (points, matrix order, keys, ...); inject asks for a deliberate
 * error that the self-check must catch (-x, left out of the usage line). */
typedef struct suite_opts {
    const char *name;
    int threads;
    long size;
    int inject;
} suite_opts;

/* Bad usage: one line on stderr, exit status 2. */
static inline void suite_usage(const char *name, const char *units)
{
    fprintf(stderr, "usage: %s [-t THREADS] [-s small|large|N]   (N: %s)\n", name, units);
    exit(2);
}

/* Reads -t, -s and -x; -s takes "small", "large" or a positive number.
 * THREADS defaults to 8 (the default simulated CPU count). */
static inline suite_opts suite_parse(int argc, char **argv, const char *name, const char *units,
                                     long small, long large)
{
    suite_opts o = {name, 8, small, 0};
    int c;
    while ((c = getopt(argc, argv, "t:s:x")) != -1) {
        char *end;
        switch (c) {
        case 't':
            errno = 0;
            o.threads = (int)strtol(optarg, &end, 10);
            if (errno || *end || o.threads < 1 || o.threads > SUITE_MAX_THREADS)
                suite_usage(name, units);
            break;
        case 's':
            if (strcmp(optarg, "small") == 0) {
                o.size = small;
            } else if (strcmp(optarg, "large") == 0) {
                o.size = large;
            } else {
                errno = 0;
                o.size = strtol(optarg, &end, 10);
                if (errno || *end || o.size < 1)
                    suite_usage(name, units);
            }
            break;
        case 'x':
            o.inject = 1;
            break;
        default:
            suite_usage(name, units);
        }
    }
    if (optind != argc)
        suite_usage(name, units);
    return o;
}

/* A failed self-check: one line on stderr; the caller exits with 1. */
static inline void suite_complain(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: check failed: ", name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Runs WORKER(0) on the calling thread and WORKER(1..threads-1) on new
 * threads, and returns when all have returned. Exits with 3 if a thread
 * cannot be created. */
static inline void suite_run_threads(int threads, void *(*worker)(void *))
{
    pthread_t tid[SUITE_MAX_THREADS];
    for (int i = 1; i < threads; i++) {
        int rc = pthread_create(&tid[i], NULL, worker, (void *)(intptr_t)i);
        if (rc != 0) {
            fprintf(stderr, "pthread_create: %s\n", strerror(rc));
            exit(3);
        }
    }
    worker((void *)(intptr_t)0);
    for (int i = 1; i < threads; i++)
        pthread_join(tid[i], NULL);
}

/* Calloc that exits with 3 when memory runs out. */
static inline void *suite_alloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "out of memory (%zu x %zu bytes)\n", n, size);
        exit(3);
    }
    return p;
}

/* The half-open range [*lo, *hi) of N items that part ID of PARTS owns. */
static inline void suite_slice(long n, int parts, int id, long *lo, long *hi)
{
    *lo = n * id / parts;
    *hi = n * (id + 1) / parts;
}

/* Counter-based random numbers: the value for (SEED, INDEX) does not
 * depend on which thread asks or when, so inputs are the same for any
 * thread count. */
static inline uint64_t suite_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline uint64_t suite_random(uint64_t seed, uint64_t index)
{
    return suite_mix(suite_mix(seed) ^ index);
}
/* Uniform in [0, 1) with 53 random bits. */
static inline double suite_unit(uint64_t seed, uint64_t index)
{
    return (double)(suite_random(seed, index) >> 11) * 0x1p-53;
}

/* The larger of two errors, or NaN if either is NaN, so that a NaN
 * anywhere fails the tolerance test that follows. */
static inline double suite_worse(double a, double b)
{
    return a != a || b != b ? a + b : a > b ? a : b;
}

/* FNV-1a over bytes, for result checksums. Start with SUITE_FNV_START. */
#define SUITE_FNV_START 0xcbf29ce484222325ull
static inline uint64_t suite_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

#endif

/* workloads/memhog.c: takes memory until the system refuses (or up to a
 * cap), then prints how much it got and the errno, gives it all back and
 * takes one block again. Under `rnr run --mem-limit` (or Linux's
 * RLIMIT_AS) the refusal is ENOMEM (EAGAIN for pthread_create) near the
 * limit.
 * Usage: memhog MODE BLOCK MAX [LIMIT]
 *   MODE   malloc   malloc(BLOCK) blocks, never touched past their header
 *          touch    malloc(BLOCK) blocks, every byte written
 *          mmap     anonymous mmap(BLOCK) mappings, untouched
 *          brk      sbrk(BLOCK) steps of the heap
 *          mremap   one mapping grown in place by BLOCK bytes at a time
 *          threads  threads with BLOCK-byte stacks, waiting until released
 *   BLOCK  bytes, with an optional K, M or G suffix (as MAX and LIMIT)
 *   MAX    take at most MAX bytes (0: no cap); reaching it is "no error"
 *   LIMIT  first lower the soft RLIMIT_AS to LIMIT bytes (setrlimit)
 * Prints: the RLIMIT_AS the process starts with, then one line
 * "MODE got BYTES bytes in N blocks, then ERRNO", then "released: ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *err_name(int e)
{
    switch (e) {
    case ENOMEM: return "ENOMEM";
    case EAGAIN: return "EAGAIN";
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    case 0: return "no error";
    default: return "another errno";
    }
}

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    default: return v;
    }
}

static void print_limit(const char *what, rlim_t v)
{
    if (v == RLIM_INFINITY)
        printf(" %s unlimited", what);
    else
        printf(" %s %llu", what, (unsigned long long)v);
}

/* ---- threads that wait until released ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released;

static void *waiter(void *arg)
{
    pthread_mutex_lock(&lock);
    while (!released)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return arg;
}

static uint64_t block, max;

/* Whether another block stays within the cap. */
static int below_cap(uint64_t got) { return !max || (got <= max && block <= max - got); }

static int take_threads(uint64_t *got, uint64_t *n)
{
    enum { MAX_THREADS = 256 };
    static pthread_t th[MAX_THREADS];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, block);
    int e = 0;
    while (*n < MAX_THREADS && below_cap(*got)) {
        if ((e = pthread_create(&th[*n], &attr, waiter, NULL)) != 0)
            break;
        *got += block;
        ++*n;
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (uint64_t i = 0; i < *n; i++)
        pthread_join(th[i], NULL);
    return e;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: memhog malloc|touch|mmap|brk|mremap|threads BLOCK MAX [LIMIT]\n");
        return 2;
    }
    const char *mode = argv[1];
    block = parse_size(argv[2]);
    max = parse_size(argv[3]);
    if (block < sizeof(void *)) {
        fprintf(stderr, "memhog: BLOCK too small\n");
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0) {
        printf("getrlimit %s\n", err_name(errno));
        return 1;
    }
    printf("rlimit_as");
    print_limit("cur", rl.rlim_cur);
    print_limit("max", rl.rlim_max);
    printf("\n");
    if (argc > 4) {
        struct rlimit lower = {parse_size(argv[4]), rl.rlim_max};
        printf("setrlimit %s", setrlimit(RLIMIT_AS, &lower) == 0 ? "ok" : err_name(errno));
        if (rl.rlim_max != RLIM_INFINITY) {
            /* An unprivileged process cannot raise its hard limit. */
            struct rlimit higher = {lower.rlim_cur, rl.rlim_max + 4096};
            printf(", raising the hard limit %s", setrlimit(RLIMIT_AS, &higher) == 0 ? "ok"
                                                                                     : err_name(errno));
        }
        printf("\n");
    }
    fflush(stdout);

    uint64_t got = 0, n = 0;
    int e = 0;
    if (strcmp(mode, "malloc") == 0 || strcmp(mode, "touch") == 0) {
        /* A list through the blocks: only their first bytes are written
         * (where malloc keeps its own header anyway), unless touching. */
        void **head = NULL;
        while (below_cap(got)) {
            errno = 0;
            void **b = malloc(block);
            if (!b) {
                e = errno;
                break;
            }
            if (mode[0] == 't')
                memset(b, (int)(n & 0xff) | 1, block);
            *b = head;
            head = b;
            got += block;
            n++;
        }
        while (head) {
            void **next = *head;
            free(head);
            head = next;
        }
        void *again = malloc(block);
        printf("%s got %llu bytes in %llu blocks, then %s\n", mode, (unsigned long long)got,
               (unsigned long long)n, err_name(e));
        printf("released: %s\n", again ? "ok" : err_name(errno));
        free(again);
    } else if (strcmp(mode, "mmap") == 0) {
        /* Never touched. Placed top-down, each right below the one
         * before, so that one munmap releases them all. */
        const uint64_t step = (block + 4095) & ~(uint64_t)4095;
        char *last = NULL;
        while (below_cap(got)) {
            char *m = mmap(NULL, block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) {
                e = errno;
                break;
            }
            if (last && m != last - step) {
                printf("mmap: not below the last mapping\n");
                return 1;
            }
            last = m;
            got += block;
            n++;
        }
        printf("mmap got %llu bytes in %llu blocks, then %s\n", (unsigned long long)got,
               (unsigned long long)n, err_name(e));
        int un = n ? munmap(last, n * step) : 0;
        char *m = mmap(NULL, block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        printf("released: %s\n", un == 0 && m != MAP_FAILED ? "ok" : err_name(errno));
    } else if (strcmp(mode, "brk") == 0) {
        void *start = sbrk(0);
        while (below_cap(got)) {
            if (sbrk((intptr_t)block) == (void *)-1) {
                e = errno;
                break;
            }
            got += block;
            n++;
        }
        printf("brk got %llu bytes in %llu blocks, then %s\n", (unsigned long long)got,
               (unsigned long long)n, err_name(e));
        int ok = brk(start) == 0 && sbrk((intptr_t)block) != (void *)-1;
        printf("released: %s\n", ok ? "ok" : err_name(errno));
    } else if (strcmp(mode, "mremap") == 0) {
        /* Far from everything else, so that it has room to grow. */
        char *m = mmap((void *)(uintptr_t)0x2000000000ull, block, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            printf("mmap %s\n", err_name(errno));
            return 1;
        }
        got = block;
        n = 1;
        while (below_cap(got)) {
            if (mremap(m, got, got + block, 0) == MAP_FAILED) {
                e = errno;
                break;
            }
            got += block;
            n++;
        }
        printf("mremap got %llu bytes in %llu blocks, then %s\n", (unsigned long long)got,
               (unsigned long long)n, err_name(e));
        int ok = mremap(m, got, block, 0) == m && mremap(m, block, 2 * block, 0) == m;
        printf("released: %s\n", ok ? "ok" : err_name(errno));
    } else if (strcmp(mode, "threads") == 0) {
        e = take_threads(&got, &n);
        printf("threads got %llu bytes in %llu blocks, then %s\n", (unsigned long long)got,
               (unsigned long long)n, err_name(e));
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, block);
        int ok = pthread_create(&t, &attr, waiter, NULL) == 0 && pthread_join(t, NULL) == 0;
        pthread_attr_destroy(&attr);
        printf("released: %s\n", ok ? "ok" : "failed");
    } else {
        fprintf(stderr, "memhog: unknown mode '%s'\n", mode);
        return 2;
    }
    return 0;
}

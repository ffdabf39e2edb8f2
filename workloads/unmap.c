/* workloads/unmap.c: address-space changes under other threads' feet. A
 * worker fills and sums a mapping while the main thread, after a handshake
 * through a shared flag, makes half of it read-only (mprotect), unmaps the
 * other half (munmap) and maps a fresh page at the same address (mmap with
 * MAP_FIXED), which the worker then reads back as zeros; a second round
 * grows and shrinks the heap (brk through malloc of large blocks) and
 * remaps a buffer (mremap). Prints what each thread saw.
 * Usage: unmap [ROUNDS] (default 4). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 8
#define PAGE 4096

static unsigned char *volatile region;
static atomic_int phase;
static long rounds;

static void wait_phase(int want)
{
    while (atomic_load(&phase) < want)
        sched_yield();
}

static void *worker(void *arg)
{
    (void)arg;
    for (long r = 0; r < rounds; r++) {
        int base = (int)r * 4;
        wait_phase(base + 1);
        /* Phase 1: fill the whole region and sum it. */
        unsigned long sum = 0;
        for (int i = 0; i < PAGES * PAGE; i += 64) {
            region[i] = (unsigned char)(i / 64 + r);
            sum += region[i];
        }
        printf("worker round %ld: filled, sum %lu\n", r, sum);
        atomic_store(&phase, base + 2);
        /* Phase 3: the first half is read-only now, the second half a fresh
         * zero page at the same address. */
        wait_phase(base + 3);
        unsigned long ro = 0, fresh = 0;
        for (int i = 0; i < PAGES / 2 * PAGE; i += 64)
            ro += region[i];
        for (int i = PAGES / 2 * PAGE; i < PAGES * PAGE; i += 64)
            fresh += region[i];
        printf("worker round %ld: read-only sum %lu, fresh sum %lu\n", r, ro, fresh);
        atomic_store(&phase, base + 4);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 4;
    if (rounds < 1 || rounds > 1000)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    for (long r = 0; r < rounds; r++) {
        int base = (int)r * 4;
        unsigned char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        region = p;
        atomic_store(&phase, base + 1);
        wait_phase(base + 2);
        if (mprotect(p, PAGES / 2 * PAGE, PROT_READ) != 0 ||
            munmap(p + PAGES / 2 * PAGE, PAGES / 2 * PAGE) != 0)
            return 1;
        void *q = mmap(p + PAGES / 2 * PAGE, PAGES / 2 * PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (q == MAP_FAILED)
            return 1;
        atomic_store(&phase, base + 3);
        wait_phase(base + 4);
        /* The heap: large blocks come from brk or mmap, and go back. */
        char *big = malloc(200000 + (size_t)r * 4096);
        memset(big, (int)r, 200000);
        char *grown = mremap(p + PAGES / 2 * PAGE, PAGES / 2 * PAGE, PAGES / 4 * PAGE, 0);
        printf("main round %ld: heap byte %d, shrunk %s\n", r, big[199999],
               grown == MAP_FAILED ? "no" : "yes");
        free(big);
        munmap(p, PAGES / 2 * PAGE);
        munmap(p + PAGES / 2 * PAGE, PAGES / 4 * PAGE);
    }
    pthread_join(t, NULL);
    printf("unmap: %ld rounds\n", rounds);
    return 0;
}

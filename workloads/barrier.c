/* workloads/barrier.c: THREADS threads run PHASES phases of a 1-D stencil
 * (each cell becomes a mix of its neighbours), separated by a pthread
 * barrier; the result must equal a sequential computation of the same
 * stencil. Usage: barrier [THREADS [PHASES]] (default 4 threads, 30 phases). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELLS 256
static uint64_t grid[2][CELLS], check[2][CELLS];
static pthread_barrier_t bar;
static int nthreads, phases;

static uint64_t step(const uint64_t *g, int i)
{
    uint64_t l = g[(i + CELLS - 1) % CELLS], c = g[i], r = g[(i + 1) % CELLS];
    return (l * 3 + c * 5 + r * 7) ^ (c >> 3);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    int lo = CELLS * id / nthreads, hi = CELLS * (id + 1) / nthreads;
    for (int p = 0; p < phases; p++) {
        const uint64_t *src = grid[p & 1];
        uint64_t *dst = grid[(p + 1) & 1];
        for (int i = lo; i < hi; i++)
            dst[i] = step(src, i);
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = argc > 1 ? atoi(argv[1]) : 4;
    phases = argc > 2 ? atoi(argv[2]) : 30;
    if (nthreads < 1 || nthreads > CELLS || phases < 0)
        return 2;
    for (int i = 0; i < CELLS; i++)
        grid[0][i] = check[0][i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    pthread_t *t = malloc(sizeof *t * (size_t)nthreads);
    for (int i = 1; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    worker((void *)0);
    for (int i = 1; i < nthreads; i++)
        pthread_join(t[i], NULL);
    for (int p = 0; p < phases; p++)
        for (int i = 0; i < CELLS; i++)
            check[(p + 1) & 1][i] = step(check[p & 1], i);
    uint64_t h = 0;
    for (int i = 0; i < CELLS; i++)
        h = h * 1099511628211ull + grid[phases & 1][i];
    int ok = memcmp(grid[phases & 1], check[phases & 1], sizeof grid[0]) == 0;
    printf("barrier: threads %d phases %d hash %016" PRIx64 " %s\n", nthreads, phases, h,
           ok ? "ok" : "WRONG");
    pthread_barrier_destroy(&bar);
    free(t);
    return ok ? 0 : 1;
}

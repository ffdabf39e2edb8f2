/* workloads/suite/ocean.c: research suite, a red-black successive
 * over-relaxation (Gauss-Seidel with an over-relaxation factor) solver for
 * the Poisson equation on an (n+2) x (n+2) grid with a zero boundary, the
 * inner loop of ocean-circulation codes. Threads own bands of rows. Each
 * iteration relaxes the red cells (i + j even), barrier, then the black
 * ones; each thread then folds the largest change it made into a global
 * maximum under a lock, barrier, and all threads read it to decide whether
 * to stop. Neighbouring bands read each other's edge rows.
 *
 * Usage: ocean [-t THREADS] [-s small|large|N]   N interior cells per side
 * (small 48, large 128; 8 threads by default).
 *
 * The right-hand side is chosen so that the exact discrete solution is
 * sin(pi x) sin(pi y). Check: the iteration converges (largest change under
 * 1e-11 within the iteration limit) to within 1e-7 of that solution, and a
 * serial run of the same number of iterations gives a bit-for-bit identical
 * grid: a red cell depends only on black ones and the other way round, so
 * the result cannot depend on the interleaving, and a maximum does not
 * depend on the order it is folded in, so neither does the iteration count.
 * -x nudges one cell of the parallel run's initial guess. */
#include <math.h>

#include "suite.h"

#define TOLERANCE 1e-11
#define SOLUTION_ERROR 1e-7

static suite_opts opt;
static long n, side;            /* interior cells per side, n + 2 */
static double *grid, *serial, *rhs, omega;
static long max_iterations, iterations;
static pthread_barrier_t barrier;
static pthread_mutex_t change_lock = PTHREAD_MUTEX_INITIALIZER;
static double largest_change[3];    /* per iteration, modulo 3 */

/* Relaxes the cells of COLOR in interior rows [lo, hi) of U; returns the
 * largest change. One function for the parallel and the serial run, so
 * that both round the same way. */
static __attribute__((noinline)) double relax(double *u, int color, long lo, long hi)
{
    double worst = 0;
    for (long i = lo; i < hi; i++)
        for (long j = 1 + ((i + 1 + color) & 1); j <= n; j += 2) {
            double *c = u + i * side + j;
            double gs = 0.25 * (c[-1] + c[1] + c[-side] + c[side] - rhs[i * side + j]);
            double delta = omega * (gs - *c);
            *c += delta;
            if (fabs(delta) > worst)
                worst = fabs(delta);
        }
    return worst;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    long lo, hi;
    suite_slice(n, opt.threads, id, &lo, &hi);
    lo++, hi++;                 /* interior rows are 1..n */
    for (long it = 0;; it++) {
        if (id == 0)
            largest_change[(it + 1) % 3] = 0;
        double mine = relax(grid, 0, lo, hi);
        pthread_barrier_wait(&barrier);
        mine = fmax(mine, relax(grid, 1, lo, hi));
        pthread_mutex_lock(&change_lock);
        if (mine > largest_change[it % 3])
            largest_change[it % 3] = mine;
        pthread_mutex_unlock(&change_lock);
        pthread_barrier_wait(&barrier);
        if (largest_change[it % 3] < TOLERANCE || it + 1 == max_iterations) {
            if (id == 0)
                iterations = it + 1;
            return NULL;
        }
    }
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "ocean", "interior cells per side", 48, 128);
    n = opt.size;
    side = n + 2;
    double h = 1.0 / (double)(n + 1);
    omega = 2.0 / (1.0 + sin(M_PI * h));
    max_iterations = 50 * (n + 2);
    grid = suite_alloc((size_t)(side * side), sizeof(double));
    serial = suite_alloc((size_t)(side * side), sizeof(double));
    rhs = suite_alloc((size_t)(side * side), sizeof(double));
    /* (sum of the 4 neighbours - 4 u) = rhs holds exactly for u = exact(). */
    double scale = -4.0 * (1.0 - cos(M_PI * h));
    for (long i = 1; i <= n; i++)
        for (long j = 1; j <= n; j++)
            rhs[i * side + j] = scale * sin(M_PI * (double)i * h) * sin(M_PI * (double)j * h);
    if (opt.inject)
        grid[(n / 2 + 1) * side + n / 2 + 1] = 1e-3;
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.threads);
    suite_run_threads(opt.threads, worker);

    for (long it = 0; it < iterations; it++) {
        relax(serial, 0, 1, n + 1);
        relax(serial, 1, 1, n + 1);
    }
    double error = 0;
    for (long i = 1; i <= n; i++)
        for (long j = 1; j <= n; j++)
            error = suite_worse(error, fabs(grid[i * side + j] - sin(M_PI * (double)i * h) * sin(M_PI * (double)j * h)));
    int converged = largest_change[(iterations - 1) % 3] < TOLERANCE;
    int same = memcmp(grid, serial, sizeof(double) * (size_t)(side * side)) == 0;
    int ok = converged && error <= SOLUTION_ERROR && same;
    printf("ocean n=%ld threads=%d %s iterations=%ld checksum=%016" PRIx64 "\n", n, opt.threads,
           ok ? "ok" : "FAILED", iterations, suite_fnv(SUITE_FNV_START, grid, sizeof(double) * (size_t)(side * side)));
    if (!converged)
        suite_complain(opt.name, "no convergence in %ld iterations (last change %.3g)", iterations,
                       largest_change[(iterations - 1) % 3]);
    if (!(error <= SOLUTION_ERROR))
        suite_complain(opt.name, "%.3g away from the exact solution (tolerance %.3g)", error, SOLUTION_ERROR);
    if (!same)
        suite_complain(opt.name, "the grid differs from a serial run of the same %ld iterations", iterations);
    return ok ? 0 : 1;
}

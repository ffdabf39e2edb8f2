/* workloads/suite/lu.c: research suite, blocked dense LU factorization
 * without pivoting of a diagonally dominant n x n matrix. The matrix is
 * kept as contiguous 16 x 16 blocks; block (I, J) belongs to one thread of
 * a pr x pc thread grid (a 2-D scatter), which alone writes it. Step K:
 * the diagonal block is factored, barrier, the blocks of row K and column
 * K are solved against it, barrier, every interior block takes its rank-16
 * update. (The next diagonal block has the same owner as its last update,
 * so two barriers per step suffice.)
 *
 * Usage: lu [-t THREADS] [-s small|large|N]   N the matrix order
 * (small 160, large 384; 8 threads by default).
 *
 * Check: the residual max |L*U - A| (computed in parallel over rows, A
 * regenerated from its seed) relative to max |A| must stay under a
 * tolerance. Each block is updated by its owner in the order of K, so the
 * factors, and the printed checksum, do not depend on the interleaving or
 * the thread count. -x changes one element of U after the factorization. */
#include <math.h>

#include "suite.h"

#define B 16                    /* block order */
#define SEED 0x10ull

static suite_opts opt;
static long n, nb;              /* order, blocks per side */
static int grid_rows, grid_cols;
static double *mat;             /* nb*nb blocks of B*B, row-major inside a block */
static pthread_barrier_t barrier;
static double thread_resid[SUITE_MAX_THREADS];

static double *block(long bi, long bj) { return mat + (bi * nb + bj) * B * B; }
static double *elem(long i, long j) { return block(i / B, j / B) + (i % B) * B + j % B; }
static long extent(long bi) { return n - bi * B < B ? n - bi * B : B; }
static int owner(long bi, long bj) { return (int)(bi % grid_rows) * grid_cols + (int)(bj % grid_cols); }

/* The input: random in [-1, 1) off the diagonal, n + 1 on it. */
static double original(long i, long j)
{
    return i == j ? (double)n + 1 : 2 * suite_unit(SEED, (uint64_t)(i * n + j)) - 1;
}

/* In-place LU of the diagonal block (unit L below, U on and above). */
static void factor_diagonal(double *a, long bk)
{
    for (long k = 0; k < bk; k++)
        for (long i = k + 1; i < bk; i++) {
            double l = a[i * B + k] /= a[k * B + k];
            for (long j = k + 1; j < bk; j++)
                a[i * B + j] -= l * a[k * B + j];
        }
}

/* Row block: A := L^-1 A, with L the unit lower part of DIAG. */
static void solve_row(double *a, const double *diag, long bk, long cols)
{
    for (long k = 0; k < bk; k++)
        for (long i = k + 1; i < bk; i++) {
            double l = diag[i * B + k];
            for (long j = 0; j < cols; j++)
                a[i * B + j] -= l * a[k * B + j];
        }
}

/* Column block: A := A U^-1, with U the upper part of DIAG. */
static void solve_column(double *a, const double *diag, long rows, long bk)
{
    for (long i = 0; i < rows; i++)
        for (long k = 0; k < bk; k++) {
            double l = a[i * B + k] /= diag[k * B + k];
            for (long j = k + 1; j < bk; j++)
                a[i * B + j] -= l * diag[k * B + j];
        }
}

/* Interior block: C := C - L * U (rows x inner) * (inner x cols). */
static void update_interior(double *c, const double *l, const double *u, long rows, long inner, long cols)
{
    for (long i = 0; i < rows; i++)
        for (long k = 0; k < inner; k++) {
            double f = l[i * B + k];
            for (long j = 0; j < cols; j++)
                c[i * B + j] -= f * u[k * B + j];
        }
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (long bi = 0; bi < nb; bi++)
        for (long bj = 0; bj < nb; bj++)
            if (owner(bi, bj) == id)
                for (long i = bi * B; i < bi * B + extent(bi); i++)
                    for (long j = bj * B; j < bj * B + extent(bj); j++)
                        *elem(i, j) = original(i, j);
    pthread_barrier_wait(&barrier);

    for (long k = 0; k < nb; k++) {
        long bk = extent(k);
        if (owner(k, k) == id)
            factor_diagonal(block(k, k), bk);
        pthread_barrier_wait(&barrier);
        for (long x = k + 1; x < nb; x++) {
            if (owner(k, x) == id)
                solve_row(block(k, x), block(k, k), bk, extent(x));
            if (owner(x, k) == id)
                solve_column(block(x, k), block(k, k), extent(x), bk);
        }
        pthread_barrier_wait(&barrier);
        for (long bi = k + 1; bi < nb; bi++)
            for (long bj = k + 1; bj < nb; bj++)
                if (owner(bi, bj) == id)
                    update_interior(block(bi, bj), block(bi, k), block(k, bj), extent(bi), bk, extent(bj));
    }
    pthread_barrier_wait(&barrier);
    if (opt.inject) {
        if (id == 0)
            *elem(n - 1, n - 1) += 1.0;
        pthread_barrier_wait(&barrier);
    }

    /* Residual of rows [lo, hi): row i of L*U is the sum over k <= i of
     * L[i][k] (1 for k = i) times row k of U (its elements j >= k). */
    long lo, hi;
    suite_slice(n, opt.threads, id, &lo, &hi);
    double worst = 0, *acc = suite_alloc((size_t)n, sizeof(double));
    for (long i = lo; i < hi; i++) {
        memset(acc, 0, sizeof(double) * (size_t)n);
        for (long k = 0; k <= i; k++) {
            double l = k < i ? *elem(i, k) : 1.0;
            for (long bj = k / B; bj < nb; bj++) {
                const double *u = block(k / B, bj) + (k % B) * B;
                for (long j = bj == k / B ? k % B : 0; j < extent(bj); j++)
                    acc[bj * B + j] += l * u[j];
            }
        }
        for (long j = 0; j < n; j++) {
            worst = suite_worse(worst, fabs(acc[j] - original(i, j)));
        }
    }
    free(acc);
    thread_resid[id] = worst;
    return NULL;
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "lu", "the matrix order", 160, 384);
    n = opt.size;
    nb = (n + B - 1) / B;
    for (grid_rows = 1; (grid_rows + 1) * (grid_rows + 1) <= opt.threads; grid_rows++)
        ;
    while (opt.threads % grid_rows)
        grid_rows--;
    grid_cols = opt.threads / grid_rows;
    mat = suite_alloc((size_t)(nb * nb * B * B), sizeof(double));
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.threads);
    suite_run_threads(opt.threads, worker);

    double resid = 0;
    for (int t = 0; t < opt.threads; t++)
        resid = suite_worse(resid, thread_resid[t]);
    resid /= (double)n + 1;     /* max |A| */
    uint64_t h = SUITE_FNV_START;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            h = suite_fnv(h, elem(i, j), sizeof(double));
    double tol = 1e-14 * (double)n;
    int ok = resid <= tol;
    printf("lu n=%ld threads=%d %s checksum=%016" PRIx64 "\n", n, opt.threads, ok ? "ok" : "FAILED", h);
    if (!ok) {
        suite_complain(opt.name, "relative residual max |L*U - A| = %.3g (tolerance %.3g)", resid, tol);
        return 1;
    }
    return 0;
}

/* workloads/suite/fft.c: research suite, a parallel complex FFT in the
 * six-step form: the N points are an m x m matrix (N = m*m), transformed by
 * row FFTs of length m between blocked transposes, with a twiddle step in
 * the middle. Threads own bands of rows; a barrier separates the phases.
 *
 * Usage: fft [-t THREADS] [-s small|large|N]   N points, a power of 4 >= 16
 * (small 16384, large 262144; 8 threads by default).
 *
 * Check: a few output bins against a naive DFT, then the inverse transform
 * (the same code with conjugate roots) must give back the input; both within
 * a tolerance. Every value is computed by one thread in a fixed order, so
 * the result does not depend on the interleaving or the thread count and the
 * printed checksum is exact. -x adds 1 to one output bin before the inverse
 * transform (the check must then fail). */
#include <math.h>

#include "suite.h"

typedef struct { double re, im; } cplx;

#define SAMPLES 16              /* output bins checked against a naive DFT */
#define TILE 8                  /* transpose tile: 8 x 8 points */
#define SEED 0xff7ull

static suite_opts opt;
static long npoints, m;         /* N = m * m */
static cplx *input, *buf_a, *buf_b, *roots;  /* roots[k] = exp(-2 pi i k / N) */
static long *bitrev;            /* bit reversal of log2(m) bits */
static pthread_barrier_t barrier;
static uint64_t *row_hash;      /* per output row, combined in order */
static double sample_err[SAMPLES], thread_err[SUITE_MAX_THREADS];
static long sample_bin[SAMPLES];

static cplx mul(cplx a, cplx b) { return (cplx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static cplx root(long k, int inverse)
{
    cplx w = roots[k];
    if (inverse)
        w.im = -w.im;
    return w;
}

/* In-place radix-2 FFT of one row of m points. */
static void row_fft(cplx *row, int inverse)
{
    for (long i = 0; i < m; i++)
        if (bitrev[i] > i) {
            cplx t = row[i];
            row[i] = row[bitrev[i]];
            row[bitrev[i]] = t;
        }
    for (long len = 2; len <= m; len *= 2) {
        long half = len / 2, stride = npoints / len;
        for (long base = 0; base < m; base += len)
            for (long j = 0; j < half; j++) {
                cplx w = root(j * stride, inverse);
                cplx t = mul(w, row[base + j + half]), u = row[base + j];
                row[base + j] = (cplx){u.re + t.re, u.im + t.im};
                row[base + j + half] = (cplx){u.re - t.re, u.im - t.im};
            }
    }
}

/* dst = transpose(src) for the rows [lo, hi) of dst, tile by tile. */
static void transpose(cplx *dst, const cplx *src, long lo, long hi)
{
    for (long r0 = lo; r0 < hi; r0 += TILE)
        for (long c0 = 0; c0 < m; c0 += TILE)
            for (long r = r0; r < r0 + TILE && r < hi; r++)
                for (long c = c0; c < c0 + TILE && c < m; c++)
                    dst[r * m + c] = src[c * m + r];
}

/* The six steps on rows [lo, hi): transpose SRC into T1, row FFTs and
 * twiddles, transpose into T2, row FFTs, transpose back into T1, which
 * holds the result in natural order. SRC may be T2 when it is not needed
 * afterwards. */
static void six_step(const cplx *src, cplx *t1, cplx *t2, long lo, long hi, int inverse)
{
    transpose(t1, src, lo, hi);
    pthread_barrier_wait(&barrier);
    for (long r = lo; r < hi; r++) {
        row_fft(t1 + r * m, inverse);
        for (long c = 1; r > 0 && c < m; c++)
            t1[r * m + c] = mul(t1[r * m + c], root(r * c, inverse));
    }
    pthread_barrier_wait(&barrier);
    transpose(t2, t1, lo, hi);
    pthread_barrier_wait(&barrier);
    for (long r = lo; r < hi; r++)
        row_fft(t2 + r * m, inverse);
    pthread_barrier_wait(&barrier);
    transpose(t1, t2, lo, hi);
    pthread_barrier_wait(&barrier);
}

/* Bin K of the DFT of the input, summed naively. */
static cplx naive_bin(long k)
{
    cplx s = {0, 0};
    for (long j = 0; j < npoints; j++) {
        cplx t = mul(input[j], roots[(long)(((unsigned long)j * (unsigned long)k) % (unsigned long)npoints)]);
        s.re += t.re;
        s.im += t.im;
    }
    return s;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    long lo, hi;
    suite_slice(npoints, opt.threads, id, &lo, &hi);
    for (long k = lo; k < hi; k++) {
        double a = -2.0 * M_PI * (double)k / (double)npoints;
        roots[k] = (cplx){cos(a), sin(a)};
        input[k] = (cplx){2 * suite_unit(SEED, 2 * (uint64_t)k) - 1, 2 * suite_unit(SEED, 2 * (uint64_t)k + 1) - 1};
    }
    suite_slice(m, opt.threads, id, &lo, &hi);
    pthread_barrier_wait(&barrier);

    six_step(input, buf_a, buf_b, lo, hi, 0);   /* forward: result in buf_a */
    for (long r = lo; r < hi; r++)
        row_hash[r] = suite_fnv(SUITE_FNV_START, buf_a + r * m, sizeof(cplx) * (size_t)m);
    for (int s = id; s < SAMPLES; s += opt.threads) {
        cplx want = naive_bin(sample_bin[s]), got = buf_a[sample_bin[s]];
        sample_err[s] = hypot(want.re - got.re, want.im - got.im);
    }
    pthread_barrier_wait(&barrier);
    if (opt.inject) {
        if (id == 0)
            buf_a[npoints / 3].re += 1.0;
        pthread_barrier_wait(&barrier);
    }
    six_step(buf_a, buf_b, buf_a, lo, hi, 1);   /* inverse: result in buf_b */

    double worst = 0;
    for (long i = lo * m; i < hi * m; i++) {
        cplx y = buf_b[i], x = input[i];
        double e = hypot(y.re / (double)npoints - x.re, y.im / (double)npoints - x.im);
        worst = suite_worse(worst, e);
    }
    thread_err[id] = worst;
    return NULL;
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "fft", "points, a power of 4 >= 16", 16384, 262144);
    npoints = opt.size;
    int log4 = 0;
    while ((1l << (2 * log4)) < npoints)
        log4++;
    if (npoints < 16 || (1l << (2 * log4)) != npoints)
        suite_usage(opt.name, "points, a power of 4 >= 16");
    m = 1l << log4;
    input = suite_alloc((size_t)npoints, sizeof(cplx));
    buf_a = suite_alloc((size_t)npoints, sizeof(cplx));
    buf_b = suite_alloc((size_t)npoints, sizeof(cplx));
    roots = suite_alloc((size_t)npoints, sizeof(cplx));
    bitrev = suite_alloc((size_t)m, sizeof(long));
    row_hash = suite_alloc((size_t)m, sizeof(uint64_t));
    for (long i = 0; i < m; i++)
        for (int b = 0; b < log4; b++)
            bitrev[i] |= ((i >> b) & 1) << (log4 - 1 - b);
    sample_bin[0] = 0;
    sample_bin[1] = npoints / 2;
    for (int s = 2; s < SAMPLES; s++)
        sample_bin[s] = (long)(suite_random(SEED + 1, (uint64_t)s) % (uint64_t)npoints);
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.threads);
    suite_run_threads(opt.threads, worker);

    double dft_err = 0, roundtrip_err = 0;
    for (int s = 0; s < SAMPLES; s++)
        dft_err = suite_worse(dft_err, sample_err[s]);
    for (int t = 0; t < opt.threads; t++)
        roundtrip_err = suite_worse(roundtrip_err, thread_err[t]);
    uint64_t h = SUITE_FNV_START;
    for (long r = 0; r < m; r++)
        h = suite_fnv(h, &row_hash[r], sizeof row_hash[r]);
    /* Rounding grows with log N and the bins with sqrt(N); these bounds
     * leave a wide margin over what a correct transform shows. */
    double dft_tol = 1e-11 * (double)npoints, roundtrip_tol = 1e-12 * (double)log4;
    int ok = dft_err <= dft_tol && roundtrip_err <= roundtrip_tol;
    printf("fft n=%ld threads=%d %s checksum=%016" PRIx64 "\n", npoints, opt.threads, ok ? "ok" : "FAILED", h);
    if (!ok) {
        suite_complain(opt.name, "DFT bins off by %.3g (tolerance %.3g), roundtrip off by %.3g (tolerance %.3g)",
                       dft_err, dft_tol, roundtrip_err, roundtrip_tol);
        return 1;
    }
    return 0;
}

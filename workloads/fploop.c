/* workloads/fploop.c: a double-precision multiply-add benchmark over arrays
 * that stay in cache: daxpy (y = a*x + y), a cubic by Horner's rule (three
 * fmadd.d per element) and a dot product. The results are printed exactly
 * (%a), so any difference in rounding shows in the output.
 * Usage: fploop [PASSES] (default 2100: about 50 million instructions). */
#include <stdio.h>
#include <stdlib.h>

#define N 1024

static double x[N], y[N];

static void daxpy(double a, const double *restrict xs, double *restrict ys, int n)
{
    for (int i = 0; i < n; i++)
        ys[i] = a * xs[i] + ys[i];
}

/* y = ((c3 x + c2) x + c1) x + y / 2: y stays near twice the cubic. */
static void horner(const double *restrict xs, double *restrict ys, int n)
{
    const double c3 = 0.125, c2 = -0.75, c1 = 1.1, c0 = 0.5;
    for (int i = 0; i < n; i++) {
        double v = xs[i];
        ys[i] = ((c3 * v + c2) * v + c1) * v + ys[i] * c0;
    }
}

static double dot(const double *xs, const double *ys, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s = xs[i] * ys[i] + s;
    return s;
}

int main(int argc, char **argv)
{
    long passes = argc > 1 ? strtol(argv[1], NULL, 0) : 2100;
    for (int i = 0; i < N; i++) {
        x[i] = 1.0 + (double)i / 1000.0;
        y[i] = 0.5 / (double)(i + 1);
    }
    /* a alternates in sign, so y stays bounded; every step rounds. */
    const double a = 1.0 / 3.0;
    double acc = 0;
    for (long p = 0; p < passes; p++) {
        daxpy((p & 1) ? -a : a, x, y, N);
        horner(x, y, N);
        acc += dot(x, y, N);
    }
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += y[i];
    printf("fploop(%ld): acc %a (%.17g) sum %a (%.17g)\n", passes, acc, acc, sum, sum);
    return 0;
}

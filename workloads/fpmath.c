/* workloads/fpmath.c: floating point (F and D: arithmetic, fused
 * multiply-add, conversions, comparisons, NaN and infinity, libm) and
 * printf of doubles (%f %e %g %a, rounding of halfway cases).
 * Usage: fpmath [N] (default 2000 terms of the series). */
#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double vd;
static double opq(double v) { vd = v; return vd; }
static volatile float vf;
static float opqf(float v) { vf = v; return vf; }

static uint64_t bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 0) : 2000;

    /* Series: pi by Leibniz, e by factorials, harmonic numbers. */
    double pi = 0, e = 0, fact = 1, harm = 0;
    float pif = 0;
    for (long k = 0; k < n; k++) {
        pi += (k & 1 ? -4.0 : 4.0) / (2.0 * (double)k + 1.0);
        pif += (k & 1 ? -4.0f : 4.0f) / (2.0f * (float)k + 1.0f);
        if (k < 25) {
            e += 1.0 / fact;
            fact *= (double)(k + 1);
        }
        harm += 1.0 / (double)(k + 1);
    }
    printf("pi~ %.15f  pif~ %.7f  e~ %.17g  H(%ld)= %.12e\n", pi, (double)pif, e, n, harm);

    /* printf formatting and rounding. */
    const double samples[] = {0.0, -0.0, 1.0, 0.1, 1.0 / 3, 2.5, 0.125, 1e300, 1e-300,
                              5e-324, DBL_MAX, DBL_MIN, 123456789.125, -2.675, 0.5, 1.5};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        double d = samples[i];
        printf("[%zu] %a | %.3e | %g | %.17g | %.0f | %.2f | %10.4f\n", i, d, d, d, d, d, d, d);
    }
    printf("inf/nan: %f %f %g %a\n", opq(INFINITY), -opq(INFINITY), opq(NAN), opq(INFINITY));

    /* Special values and exceptions. */
    /* Operands are read (volatile) after the flags are cleared and results
     * stored (volatile) before they are tested, so the compiler cannot move
     * the operation across either call. */
    feclearexcept(FE_ALL_EXCEPT);
    vd = opq(1.0) / opq(0.0);
    int div0 = fetestexcept(FE_DIVBYZERO) != 0;
    double q = vd;
    feclearexcept(FE_ALL_EXCEPT);
    vd = opq(0.0) / opq(0.0);
    int inv = fetestexcept(FE_INVALID) != 0;
    double nn = vd;
    feclearexcept(FE_ALL_EXCEPT);
    vd = opq(1.0) / opq(3.0);
    int inexact = fetestexcept(FE_INEXACT) != 0;
    double in = vd;
    feclearexcept(FE_ALL_EXCEPT);
    vf = opqf(3.0e38f) * opqf(10.0f);
    int overflow = fetestexcept(FE_OVERFLOW) != 0;
    feclearexcept(FE_ALL_EXCEPT);
    vd = opq(1e-300) * opq(1e-300);
    int underflow = fetestexcept(FE_UNDERFLOW) != 0;
    feclearexcept(FE_ALL_EXCEPT);
    vd = opq(2.0) * opq(3.0);
    int exact = fetestexcept(FE_ALL_EXCEPT) == 0;
    printf("overflow=%d underflow=%d exact=%d\n", overflow, underflow, exact);
    printf("1/0=%g div0=%d  0/0 is nan=%d invalid=%d  1/3 inexact=%d %.17g\n", q, div0, isnan(nn),
           inv, inexact, in);
    printf("nan bits %016" PRIx64 " %08" PRIx32 "\n", bits(nn), fbits(opqf(0.0f) / opqf(0.0f)));

    /* Rounding modes. */
    const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
    const char *names[] = {"nearest", "down", "up", "zero"};
    for (int m = 0; m < 4; m++) {
        fesetround(modes[m]);
        double a = opq(1.0) / opq(3.0), b = opq(-2.0) / opq(3.0);
        long r1 = lrint(opq(2.5)), r2 = lrint(opq(-2.5)), r3 = lrint(opq(3.5));
        float fa = opqf(1.0f) / opqf(3.0f);
        printf("%-7s %016" PRIx64 " %016" PRIx64 " %08" PRIx32 " lrint %ld %ld %ld\n", names[m],
               bits(a), bits(b), fbits(fa), r1, r2, r3);
    }
    fesetround(FE_TONEAREST);

    /* Conversions, including saturation of out-of-range values. */
    const double conv[] = {-1.5, -0.5, 0.5, 1.5, 2.5, 1e19, -1e19, 4294967296.0, -2147483649.0};
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++) {
        double d = opq(conv[i]);
        long long ll = (d >= -9.2e18 && d <= 9.2e18) ? (long long)d : (d > 0 ? 1 : -1);
        printf("conv %g -> %lld round %g floor %g ceil %g trunc %g\n", d, ll, round(d), floor(d),
               ceil(d), trunc(d));
    }

    /* Fused multiply-add and libm. */
    double x = opq(0.1), y = opq(10.0), c = opq(-1.0);
    printf("fma %a vs %a\n", fma(x, y, c), x * y + c);
    printf("fmaf %a\n", (double)fmaf(opqf(0.1f), opqf(10.0f), opqf(-1.0f)));
    printf("sqrt2 %.17g cbrt %.17g\n", sqrt(opq(2.0)), cbrt(opq(27.5)));
    printf("exp %.17g log %.17g pow %.17g\n", exp(opq(1.5)), log(opq(10.0)), pow(opq(2.0), opq(0.5)));
    printf("sin %.17g cos %.17g atan2 %.17g\n", sin(opq(1.0)), cos(opq(1.0)), atan2(opq(1.0), opq(-2.0)));
    printf("fmin %g fmax %g signbit %d copysign %g\n", fmin(opq(-0.0), opq(0.0)),
           fmax(opq(NAN), opq(3.0)), signbit(opq(-0.0)) != 0, copysign(opq(3.0), opq(-0.0)));
    printf("strtod %.17g %a\n", strtod("3.14159265358979323846", NULL), strtod("0x1.8p-3", NULL));
    printf("float %.9g %.9g %.9g\n", (double)opqf(1e-45f), (double)(opqf(16777216.0f) + 1.0f),
           (double)sqrtf(opqf(2.0f)));
    return 0;
}

/* tests/test_rru_fp.c: the IEEE-754 implementation (rru/softfp.c) and the
 * F/D instructions. Differential: against the host FPU (x86-64 SSE, which
 * like RISC-V detects tininess after rounding) in RNE, RTZ, RDN and RUP on
 * random and edge operands, results and all five flags; RMM, which no host
 * mode provides, against "ties away": the nearest result, or on an exact tie
 * (decided in a wider host format where the check is exact) the one away
 * from zero. Then hand-picked RISC-V rules: NaN boxing, canonical NaNs,
 * fmin/fmax, saturating conversions, fclass, invalid rounding modes.
 *
 * Under valgrind (RNR_VALGRIND set) the host-FPU comparisons are skipped:
 * valgrind does not model rounding modes or exception flags. */
#include <check.h>
#include <fenv.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "rru/fastfp.h"
#include "rru/hart.h"
#include "rru/softfp.h"
#include "tests/rru_enc.h"
#include "tests/testutil.h"

/* An assertion for hot loops: Check records every passing ck_assert (a
 * write to its pipe), which would dominate these tests' run time. */
#define CHECK(cond, ...)                     \
    do {                                     \
        if (!(cond))                         \
            ck_abort_msg(__VA_ARGS__);       \
    } while (0)

static const int host_mode[4] = { FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD };

static unsigned host_flags(void)
{
    unsigned f = 0;
    if (fetestexcept(FE_INEXACT)) f |= SF_NX;
    if (fetestexcept(FE_UNDERFLOW)) f |= SF_UF;
    if (fetestexcept(FE_OVERFLOW)) f |= SF_OF;
    if (fetestexcept(FE_DIVBYZERO)) f |= SF_DZ;
    if (fetestexcept(FE_INVALID)) f |= SF_NV;
    return f;
}

static float f_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t b_of_f(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static double d_of(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static uint64_t b_of_d(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }

/* ---- operands: edge values, random bits, and near misses ---- */

static uint64_t edge_value(int fmt, uint64_t *rng)
{
    static const uint32_t e32[] = { 0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00000,
                                    0xffc00001, 0x00000001, 0x807fffff, 0x00800000, 0x80800000,
                                    0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x3f800001,
                                    0x4b000000, 0x4f000000, 0xcf000000, 0x5f000000, 0x00400000,
                                    0x3effffff, 0x3f000000, 0x3fc00000 };
    static const uint64_t e64[] = { 0, 0x8000000000000000ull, 0x7ff0000000000000ull,
                                    0xfff0000000000000ull, 0x7ff8000000000000ull,
                                    0x7ff4000000000000ull, 0xfff8000000000001ull, 1,
                                    0x800fffffffffffffull, 0x0010000000000000ull,
                                    0x8010000000000000ull, 0x7fefffffffffffffull,
                                    0xffefffffffffffffull, 0x3ff0000000000000ull,
                                    0xbff0000000000000ull, 0x3ff0000000000001ull,
                                    0x41e0000000000000ull, 0xc1e0000000000000ull,
                                    0x43e0000000000000ull, 0xc3e0000000000000ull,
                                    0x41efffffffe00000ull, 0x3fe0000000000000ull,
                                    0x3ff8000000000000ull, 0x0008000000000000ull };
    return fmt == SF_F32 ? e32[tu_below(rng, sizeof e32 / 4)] : e64[tu_below(rng, sizeof e64 / 8)];
}

/* A random operand: specials, uniform bits, exponents near the ends, or
 * small integers; PARTNER (if nonzero) invites cancellation and ties. */
static uint64_t operand(int fmt, uint64_t *rng, uint64_t partner, int have_partner)
{
    const int fb = fmt == SF_F32 ? 23 : 52, eb = fmt == SF_F32 ? 8 : 11;
    const uint64_t fmask = (1ull << fb) - 1, emaxv = (1ull << eb) - 1;
    uint64_t sign = tu_below(rng, 2) << (fb + eb);
    switch (tu_below(rng, 8)) {
    case 0: return edge_value(fmt, rng);
    case 1: case 2: {
        uint64_t v = tu_rand(rng);
        return fmt == SF_F32 ? (uint32_t)v : v;
    }
    case 3: /* near underflow */
        return sign | (tu_below(rng, 3) << fb) | (tu_rand(rng) & fmask);
    case 4: /* near overflow */
        return sign | ((emaxv - 1 - tu_below(rng, 3)) << fb) | (tu_rand(rng) & fmask);
    case 5: { /* short significands: exact results and ties */
        uint64_t e = (uint64_t)((1 << (eb - 1)) - 1) + tu_below(rng, 40) - 20;
        uint64_t frac = (tu_rand(rng) & fmask) & ~((1ull << (fb - tu_below(rng, 6))) - 1);
        return sign | (e << fb) | frac;
    }
    default:
        if (have_partner) { /* partner with a nudged exponent or last bits */
            uint64_t v = partner ^ (tu_rand(rng) & (tu_below(rng, 2) ? 7 : 0xff));
            if (tu_below(rng, 2))
                v += (tu_below(rng, 60) - 30) << fb;
            return fmt == SF_F32 ? (uint32_t)v : v;
        }
        return sign | ((uint64_t)((1 << (eb - 1)) - 1 + tu_below(rng, 8)) << fb) | (tu_rand(rng) & fmask);
    }
}

/* ---- the host's answer ---- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA, OP_CVT, OP_EQ, OP_LT, OP_LE, OP_COUNT };
static const char *const op_name[OP_COUNT] = { "add", "sub", "mul", "div", "sqrt", "fma", "cvt",
                                               "eq", "lt", "le" };

static volatile float vf[3];
static volatile double vd[3];
static volatile float rf;
static volatile double rd;
static volatile int ri;

/* Host result (bits; for comparisons 0/1) and flags, in host rounding
 * mode MODE. cvt converts to the other format. */
static uint64_t host_op(int fmt, int op, uint64_t a, uint64_t b, uint64_t c, int mode, unsigned *fl)
{
    fesetround(mode);
    feclearexcept(FE_ALL_EXCEPT);
    uint64_t r = 0;
    if (fmt == SF_F32) {
        vf[0] = f_of((uint32_t)a); vf[1] = f_of((uint32_t)b); vf[2] = f_of((uint32_t)c);
        switch (op) {
        case OP_ADD: rf = vf[0] + vf[1]; break;
        case OP_SUB: rf = vf[0] - vf[1]; break;
        case OP_MUL: rf = vf[0] * vf[1]; break;
        case OP_DIV: rf = vf[0] / vf[1]; break;
        case OP_SQRT: rf = sqrtf(vf[0]); break;
        case OP_FMA: rf = fmaf(vf[0], vf[1], vf[2]); break;
        case OP_CVT: rd = (double)vf[0]; break;
        case OP_EQ: ri = vf[0] == vf[1]; break;
        case OP_LT: ri = vf[0] < vf[1]; break;
        case OP_LE: ri = vf[0] <= vf[1]; break;
        }
        r = op == OP_CVT ? b_of_d(rd) : op >= OP_EQ ? (uint64_t)ri : b_of_f(rf);
    } else {
        vd[0] = d_of(a); vd[1] = d_of(b); vd[2] = d_of(c);
        switch (op) {
        case OP_ADD: rd = vd[0] + vd[1]; break;
        case OP_SUB: rd = vd[0] - vd[1]; break;
        case OP_MUL: rd = vd[0] * vd[1]; break;
        case OP_DIV: rd = vd[0] / vd[1]; break;
        case OP_SQRT: rd = sqrt(vd[0]); break;
        case OP_FMA: rd = fma(vd[0], vd[1], vd[2]); break;
        case OP_CVT: rf = (float)vd[0]; break;
        case OP_EQ: ri = vd[0] == vd[1]; break;
        case OP_LT: ri = vd[0] < vd[1]; break;
        case OP_LE: ri = vd[0] <= vd[1]; break;
        }
        r = op == OP_CVT ? b_of_f(rf) : op >= OP_EQ ? (uint64_t)ri : b_of_d(rd);
    }
    *fl = host_flags();
    fesetround(FE_TONEAREST);
    return r;
}

static uint64_t soft_op(int fmt, int op, uint64_t a, uint64_t b, uint64_t c, int rm, unsigned *fl)
{
    *fl = 0;
    switch (op) {
    case OP_ADD: return sf_add(fmt, a, b, rm, fl);
    case OP_SUB: return sf_sub(fmt, a, b, rm, fl);
    case OP_MUL: return sf_mul(fmt, a, b, rm, fl);
    case OP_DIV: return sf_div(fmt, a, b, rm, fl);
    case OP_SQRT: return sf_sqrt(fmt, a, rm, fl);
    case OP_FMA: return sf_fma(fmt, a, b, c, 0, 0, rm, fl);
    case OP_CVT: return sf_convert(fmt == SF_F32 ? SF_F64 : SF_F32, fmt, a, rm, fl);
    case OP_EQ: return (uint64_t)sf_eq(fmt, a, b, fl);
    case OP_LT: return (uint64_t)sf_lt(fmt, a, b, fl);
    default: return (uint64_t)sf_le(fmt, a, b, fl);
    }
}

static int result_fmt(int fmt, int op) { return op == OP_CVT ? !fmt : fmt; }

static int is_nan_bits(int fmt, uint64_t v)
{
    return fmt == SF_F32 ? isnan(f_of((uint32_t)v)) : isnan(d_of(v));
}

static int inf_times_zero(int fmt, uint64_t a, uint64_t b)
{
    double x = fmt ? d_of(a) : f_of((uint32_t)a), y = fmt ? d_of(b) : f_of((uint32_t)b);
    return (isinf(x) && y == 0) || (x == 0 && isinf(y));
}

START_TEST(rru_fp_matches_host_fpu_in_four_rounding_modes)
{
    if (tu_under_valgrind())
        return;
    const int fmt = _i & 1, op = _i >> 1;
    uint64_t seed = tu_seed(500 + (uint64_t)_i), rng = seed;
    for (int k = 0; k < 30000; k++) {
        uint64_t a = operand(fmt, &rng, 0, 0);
        uint64_t b = operand(fmt, &rng, a, 1);
        uint64_t c = operand(fmt, &rng, b, 1);
        if (op == OP_FMA && tu_below(&rng, 3) == 0) {   /* c near -a*b: cancellation */
            unsigned ignored = 0;
            c = sf_mul(fmt, a, b, SF_RNE, &ignored) ^ (fmt ? 1ull << 63 : 1ull << 31);
            c ^= tu_below(&rng, 4);
        }
        for (int m = 0; m < 4; m++) {
            unsigned hf, sfl;
            uint64_t want = host_op(fmt, op, a, b, c, host_mode[m], &hf);
            uint64_t got = soft_op(fmt, op, a, b, c, m, &sfl);
            int rf_ = result_fmt(fmt, op);
            if (op < OP_EQ && is_nan_bits(rf_, want))
                want = rf_ == SF_F32 ? SF32_CANONICAL_NAN : SF64_CANONICAL_NAN;
            /* RISC-V (unlike x86 FMA) raises invalid for 0 x inf + qNaN. */
            if (op == OP_FMA && inf_times_zero(fmt, a, b))
                hf |= SF_NV;
            CHECK(got == want && sfl == hf,
                          "seed %llu: %s.%c rm %d (0x%llx, 0x%llx, 0x%llx): got 0x%llx flags %02x,"
                          " host 0x%llx flags %02x",
                          (unsigned long long)seed, op_name[op], fmt ? 'd' : 's', m,
                          (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                          (unsigned long long)got, sfl, (unsigned long long)want, hf);
        }
    }
}
END_TEST

/* ---- RMM: ties away from zero ---- */

static volatile __float128 vq[4];

/* Is the exact result of OP a tie between LO (toward zero) and its
 * successor away from zero? Decided in double (binary32 ops) or binary128
 * (binary64 ops) where every check below is exact or reports inexact. */
static int exact_tie(int fmt, int op, uint64_t a, uint64_t b, uint64_t c, uint64_t lo, int sign)
{
    int tie;
    if (fmt == SF_F32) {
        float l = f_of((uint32_t)lo);
        float hi = nextafterf(l, sign ? -INFINITY : INFINITY);
        double mid = ((double)l + (double)hi) / 2;
        double A = f_of((uint32_t)a), B = f_of((uint32_t)b), C = f_of((uint32_t)c);
        volatile double v;
        feclearexcept(FE_ALL_EXCEPT);   /* nextafter may have raised some */
        switch (op) {
        case OP_ADD: v = A + B; tie = !fetestexcept(FE_INEXACT) && v == mid; break;
        case OP_SUB: v = A - B; tie = !fetestexcept(FE_INEXACT) && v == mid; break;
        case OP_MUL: v = A * B; tie = v == mid; break;
        case OP_DIV: v = mid * B; tie = v == A; break;
        case OP_SQRT: v = mid * mid; tie = v == A; break;
        case OP_FMA: v = A * B + C; tie = !fetestexcept(FE_INEXACT) && v == mid; break;
        default: tie = 0;
        }
    } else {
        double l = d_of(lo);
        double hi = nextafter(l, sign ? -INFINITY : INFINITY);
        vq[0] = d_of(a); vq[1] = d_of(b); vq[2] = d_of(c);
        __float128 mid = ((__float128)l + (__float128)hi) / 2;
        feclearexcept(FE_ALL_EXCEPT);
        switch (op) {
        case OP_ADD: vq[3] = vq[0] + vq[1]; tie = !fetestexcept(FE_INEXACT) && vq[3] == mid; break;
        case OP_SUB: vq[3] = vq[0] - vq[1]; tie = !fetestexcept(FE_INEXACT) && vq[3] == mid; break;
        case OP_MUL: vq[3] = vq[0] * vq[1]; tie = vq[3] == mid; break;
        case OP_DIV: vq[3] = mid * vq[1]; tie = vq[3] == vq[0]; break;
        case OP_SQRT: vq[3] = mid * mid; tie = vq[3] == vq[0]; break;
        case OP_FMA:
            vq[3] = vq[0] * vq[1];
            vq[3] = vq[3] + vq[2];
            tie = !fetestexcept(FE_INEXACT) && vq[3] == mid;
            break;
        default: tie = 0;
        }
    }
    return tie;
}

START_TEST(rru_fp_rmm_rounds_ties_away_from_zero)
{
    if (tu_under_valgrind())
        return;
    const int fmt = _i & 1, op = (_i >> 1) % 6;   /* add sub mul div sqrt fma */
    uint64_t seed = tu_seed(900 + (uint64_t)_i), rng = seed;
    unsigned ties = 0;
    for (int k = 0; k < 30000; k++) {
        uint64_t a = operand(fmt, &rng, 0, 0), b = operand(fmt, &rng, a, 1), c = operand(fmt, &rng, b, 1);
        if (k % 3 == 0) {
            /* Build a tie on purpose: b is half an ulp of a (add/sub), etc. */
            int fb = fmt ? 52 : 23;
            uint64_t e = (a >> fb) & (fmt ? 0x7ff : 0xff);
            if (e > (uint64_t)fb + 2 && e < (fmt ? 0x7feu : 0xfeu))
                b = (a & (fmt ? 1ull << 63 : 1ull << 31)) | ((e - (uint64_t)fb - 1) << fb);
            if (op == OP_FMA)
                c = b, b = fmt ? 0x3ff0000000000000ull : 0x3f800000u;
        }
        unsigned rtz_fl, rne_fl, got_fl;
        uint64_t lo = host_op(fmt, op, a, b, c, FE_TOWARDZERO, &rtz_fl);
        uint64_t rne = host_op(fmt, op, a, b, c, FE_TONEAREST, &rne_fl);
        uint64_t got = soft_op(fmt, op, a, b, c, SF_RMM, &got_fl);
        if (is_nan_bits(fmt, rne)) {
            if (op == OP_FMA && inf_times_zero(fmt, a, b))
                rne_fl |= SF_NV;
            CHECK(got == (fmt ? SF64_CANONICAL_NAN : SF32_CANONICAL_NAN) && got_fl == rne_fl,
                  "seed %llu: NaN case %llx %llx %llx", (unsigned long long)seed,
                  (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
            continue;
        }
        uint64_t want = rne;
        int sign = (int)(lo >> (fmt ? 63 : 31));
        if ((rne_fl & SF_NX) && exact_tie(fmt, op, a, b, c, lo, sign)) {
            ties++;
            want = fmt ? b_of_d(nextafter(d_of(lo), sign ? -INFINITY : INFINITY))
                       : b_of_f(nextafterf(f_of((uint32_t)lo), sign ? -INFINITY : INFINITY));
        }
        unsigned mask = SF_NV | SF_DZ | SF_NX;
        CHECK(got == want && (got_fl & mask) == (rne_fl & mask),
                      "seed %llu: %s.%c RMM (0x%llx, 0x%llx, 0x%llx): got 0x%llx/%02x want 0x%llx/%02x",
                      (unsigned long long)seed, op_name[op], fmt ? 'd' : 's', (unsigned long long)a,
                      (unsigned long long)b, (unsigned long long)c, (unsigned long long)got, got_fl,
                      (unsigned long long)want, rne_fl);
        /* Overflow is raised exactly when a finite input gives infinity. */
        int inf_out = fmt ? isinf(d_of(got)) : isinf(f_of((uint32_t)got));
        if (!(rne_fl & SF_DZ) && !(rne_fl & SF_NV)) {
            int inf_in = fmt ? (isinf(d_of(a)) || isinf(d_of(b)) || (op == OP_FMA && isinf(d_of(c))))
                             : (isinf(f_of((uint32_t)a)) || isinf(f_of((uint32_t)b)) ||
                                (op == OP_FMA && isinf(f_of((uint32_t)c))));
            if (op == OP_SQRT)
                inf_in = fmt ? isinf(d_of(a)) : isinf(f_of((uint32_t)a));
            CHECK(!!(got_fl & SF_OF) == (inf_out && !inf_in), "seed %llu: overflow flag of %llx",
                  (unsigned long long)seed, (unsigned long long)got);
        }
    }
    if (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_FMA)
        ck_assert_uint_gt(ties, 10);   /* the tie path was exercised */
    fesetround(FE_TONEAREST);
}
END_TEST

/* ---- conversions to integers, all five modes, against a rule oracle ---- */

START_TEST(rru_fp_to_int_saturates_and_rounds_in_all_modes)
{
    if (tu_under_valgrind())
        return;
    const int fmt = _i & 1;
    uint64_t seed = tu_seed(1300 + (uint64_t)_i), rng = seed;
    static const int widths[2] = { 32, 64 };
    for (int k = 0; k < 40000; k++) {
        uint64_t a = operand(fmt, &rng, 0, 0);
        if (k & 1) {   /* values near the integer ranges' ends and halves */
            double base[] = { 2147483647.0, 2147483648.0, -2147483648.0, 4294967295.0,
                              4294967296.0, 9223372036854775807.0, -9223372036854775808.0,
                              18446744073709551615.0, 0.5, 1.5, 2.5, -0.5, -1.5, -0.7, 0.3 };
            double v = base[tu_below(&rng, sizeof base / sizeof base[0])];
            v += (double)((int64_t)tu_below(&rng, 5) - 2) * (fabs(v) > 1e6 ? 1.0 : 0.25);
            a = fmt ? b_of_d(v) : b_of_f((float)v);
        }
        double x = fmt ? d_of(a) : (double)f_of((uint32_t)a);
        for (int rm = 0; rm < 5; rm++) {
            double r;
            if (rm == SF_RMM) {
                r = round(x);
            } else {
                fesetround(host_mode[rm]);
                r = nearbyint(x);
                fesetround(FE_TONEAREST);
            }
            for (int w = 0; w < 2; w++) {
                for (int sg = 0; sg < 2; sg++) {
                    int width = widths[w];
                    double lo = sg ? -ldexp(1, width - 1) : 0;
                    double hi_excl = sg ? ldexp(1, width - 1) : ldexp(1, width);
                    uint64_t max = sg ? (width == 32 ? 0x7fffffffull : 0x7fffffffffffffffull)
                                      : (width == 32 ? 0xffffffffull : ~0ull);
                    uint64_t min = sg ? (width == 32 ? 0xffffffff80000000ull : 0x8000000000000000ull) : 0;
                    uint64_t want;
                    unsigned wfl = 0;
                    if (isnan(x)) {
                        want = max;
                        wfl = SF_NV;
                    } else if (r < lo || r >= hi_excl) {
                        want = r < 0 ? min : max;
                        wfl = SF_NV;
                    } else {
                        want = r < 0 ? (uint64_t)(int64_t)r : (uint64_t)r;
                        wfl = r != x ? SF_NX : 0;
                    }
                    if (width == 32)
                        want = (uint64_t)(int64_t)(int32_t)(uint32_t)want;
                    unsigned fl = 0;
                    uint64_t got = sf_to_int(fmt, a, sg, width, rm, &fl);
                    CHECK(got == want && fl == wfl,
                                  "seed %llu: fcvt.%s%s.%c rm %d of %.17g (0x%llx): got 0x%llx/%02x"
                                  " want 0x%llx/%02x", (unsigned long long)seed,
                                  width == 32 ? "w" : "l", sg ? "" : "u", fmt ? 'd' : 's', rm, x,
                                  (unsigned long long)a, (unsigned long long)got, fl,
                                  (unsigned long long)want, wfl);
                }
            }
        }
    }
}
END_TEST

START_TEST(rru_fp_from_int_matches_host)
{
    if (tu_under_valgrind())
        return;
    const int fmt = _i & 1;
    uint64_t seed = tu_seed(1700 + (uint64_t)_i), rng = seed;
    for (int k = 0; k < 40000; k++) {
        uint64_t v = tu_rand(&rng) >> tu_below(&rng, 64);
        if (tu_below(&rng, 2))
            v = (uint64_t)0 - v;
        for (int m = 0; m < 4; m++) {
            for (int kind = 0; kind < 4; kind++) {   /* w, wu, l, lu */
                int sg = !(kind & 1), width = kind < 2 ? 32 : 64;
                fesetround(host_mode[m]);
                feclearexcept(FE_ALL_EXCEPT);
                uint64_t want;
                if (fmt == SF_F32) {
                    switch (kind) {
                    case 0: rf = (float)(int32_t)v; break;
                    case 1: rf = (float)(uint32_t)v; break;
                    case 2: rf = (float)(int64_t)v; break;
                    default: rf = (float)v; break;
                    }
                    want = b_of_f(rf);
                } else {
                    switch (kind) {
                    case 0: rd = (double)(int32_t)v; break;
                    case 1: rd = (double)(uint32_t)v; break;
                    case 2: rd = (double)(int64_t)v; break;
                    default: rd = (double)v; break;
                    }
                    want = b_of_d(rd);
                }
                unsigned hf = host_flags();
                fesetround(FE_TONEAREST);
                unsigned fl = 0;
                uint64_t got = sf_from_int(fmt, v, sg, width, m, &fl);
                CHECK(got == want && fl == hf, "seed %llu: kind %d rm %d of 0x%llx",
                              (unsigned long long)seed, kind, m, (unsigned long long)v);
            }
        }
    }
}
END_TEST

/* ---- RISC-V rules ---- */

START_TEST(rru_fp_min_max_follow_the_2_2_rules)
{
    struct { uint32_t a, b, min, max; unsigned fl; } c32[] = {
        { 0x80000000, 0x00000000, 0x80000000, 0x00000000, 0 },         /* -0 < +0 */
        { 0x00000000, 0x80000000, 0x80000000, 0x00000000, 0 },
        { 0x7fc00000, 0x3f800000, 0x3f800000, 0x3f800000, 0 },         /* qNaN: the other */
        { 0x3f800000, 0x7fa00000, 0x3f800000, 0x3f800000, SF_NV },     /* sNaN: other, NV */
        { 0x7fa00000, 0x7fc00001, 0x7fc00000, 0x7fc00000, SF_NV },     /* both NaN: canonical */
        { 0xff800000, 0x7f800000, 0xff800000, 0x7f800000, 0 },
        { 0xbf800000, 0x3f800000, 0xbf800000, 0x3f800000, 0 },
    };
    for (size_t k = 0; k < sizeof c32 / sizeof c32[0]; k++) {
        unsigned fl = 0;
        ck_assert_uint_eq(sf_min(SF_F32, c32[k].a, c32[k].b, &fl), c32[k].min);
        ck_assert_uint_eq(sf_max(SF_F32, c32[k].a, c32[k].b, &fl), c32[k].max);
        ck_assert_uint_eq(fl, c32[k].fl);
    }
    unsigned fl = 0;
    ck_assert_uint_eq(sf_min(SF_F64, 0x7ff0000000000001ull, 0x7ff8000000000000ull, &fl),
                      SF64_CANONICAL_NAN);
    ck_assert_uint_eq(fl, SF_NV);
}
END_TEST

START_TEST(rru_fp_special_cases_of_the_isa)
{
    unsigned fl = 0;
    /* fma: 0 x inf + qNaN is invalid. */
    ck_assert_uint_eq(sf_fma(SF_F32, 0, 0x7f800000, 0x7fc00000, 0, 0, SF_RNE, &fl), SF32_CANONICAL_NAN);
    ck_assert_uint_eq(fl, SF_NV);
    /* x - x is +0, -0 in RDN; fma exact zero likewise. */
    fl = 0;
    ck_assert_uint_eq(sf_sub(SF_F64, 0x3ff0000000000000ull, 0x3ff0000000000000ull, SF_RNE, &fl), 0);
    ck_assert_uint_eq(sf_sub(SF_F64, 0x3ff0000000000000ull, 0x3ff0000000000000ull, SF_RDN, &fl),
                      0x8000000000000000ull);
    ck_assert_uint_eq(sf_fma(SF_F32, 0x3f800000, 0x3f800000, 0xbf800000, 0, 0, SF_RDN, &fl), 0x80000000);
    ck_assert_uint_eq(fl, 0);
    /* sqrt(-0) = -0; sqrt(-1) invalid. */
    ck_assert_uint_eq(sf_sqrt(SF_F32, 0x80000000, SF_RNE, &fl), 0x80000000);
    ck_assert_uint_eq(sf_sqrt(SF_F32, 0xbf800000, SF_RNE, &fl), SF32_CANONICAL_NAN);
    ck_assert_uint_eq(fl, SF_NV);
    /* 1/0 divide-by-zero; 0/0 invalid. */
    fl = 0;
    ck_assert_uint_eq(sf_div(SF_F64, 0xbff0000000000000ull, 0, SF_RNE, &fl), 0xfff0000000000000ull);
    ck_assert_uint_eq(fl, SF_DZ);
    /* RMM ties: 1 + 2^-24 in single rounds away (RNE would keep 1). */
    fl = 0;
    ck_assert_uint_eq(sf_add(SF_F32, 0x3f800000, 0x33800000, SF_RMM, &fl), 0x3f800001);
    ck_assert_uint_eq(sf_add(SF_F32, 0x3f800000, 0x33800000, SF_RNE, &fl), 0x3f800000);
    ck_assert_uint_eq(sf_add(SF_F32, 0xbf800000, 0xb3800000, SF_RMM, &fl), 0xbf800001);
    /* Tininess after rounding: the largest subnormal + half ulp rounds up
     * to the smallest normal in RNE: no underflow; in RTZ it stays tiny. */
    fl = 0;
    uint64_t r = sf_add(SF_F32, 0x007fffff, 0x00000000, SF_RNE, &fl);
    ck_assert_uint_eq(r, 0x007fffff);
    ck_assert_uint_eq(fl, 0);   /* exact subnormal: no underflow */
    fl = 0;   /* 0x00ffffff * 0.5: exactly between 0x007fffff and 0x00800000 */
    ck_assert_uint_eq(sf_mul(SF_F32, 0x00ffffff, 0x3f000000, SF_RNE, &fl), 0x00800000);
    /* 2^-126 - 2^-150 has 24 bits: with an unbounded exponent it stays
     * below 2^-126, so it is tiny although the result is the min normal. */
    ck_assert_uint_eq(fl, SF_NX | SF_UF);
    fl = 0;   /* (1 - 2^-23) * 2^-126 (1 + 2^-23) = 2^-126 (1 - 2^-46): rounds to 2^-126 */
    ck_assert_uint_eq(sf_mul(SF_F32, 0x3f7ffffe, 0x00800001, SF_RNE, &fl), 0x00800000);
    ck_assert_uint_eq(fl, SF_NX);   /* even with an unbounded exponent: not tiny */
    fl = 0;
    ck_assert_uint_eq(sf_mul(SF_F32, 0x3f7ffffe, 0x00800001, SF_RTZ, &fl), 0x007fffff);
    ck_assert_uint_eq(fl, SF_NX | SF_UF);
    /* Saturating conversions. */
    fl = 0;
    ck_assert_uint_eq(sf_to_int(SF_F32, SF32_CANONICAL_NAN, 1, 32, SF_RNE, &fl), 0x7fffffff);
    ck_assert_uint_eq(sf_to_int(SF_F32, 0xff800000, 1, 64, SF_RNE, &fl), 0x8000000000000000ull);
    ck_assert_uint_eq(sf_to_int(SF_F64, 0xbff0000000000000ull, 0, 32, SF_RNE, &fl), 0);
    ck_assert_uint_eq(sf_to_int(SF_F64, 0x7ff0000000000000ull, 0, 32, SF_RNE, &fl), ~0ull);
    ck_assert_uint_eq(fl, SF_NV);
    fl = 0;
    ck_assert_uint_eq(sf_to_int(SF_F64, 0xbfd3333333333333ull /* -0.3 */, 0, 64, SF_RTZ, &fl), 0);
    ck_assert_uint_eq(fl, SF_NX);
    /* fclass: one bit per class. */
    uint32_t cls[] = { 0xff800000, 0xbf800000, 0x807fffff, 0x80000000, 0x00000000, 0x00000001,
                       0x3f800000, 0x7f800000, 0x7fa00000, 0x7fc00000 };
    for (unsigned k = 0; k < 10; k++)
        ck_assert_uint_eq(sf_class(SF_F32, cls[k]), 1u << k);
    /* Narrowing a signalling NaN: invalid, canonical. */
    fl = 0;
    ck_assert_uint_eq(sf_convert(SF_F32, SF_F64, 0x7ff0000000000001ull, SF_RNE, &fl), SF32_CANONICAL_NAN);
    ck_assert_uint_eq(fl, SF_NV);
}
END_TEST

/* ---- the instructions: boxing, flags accrue, rounding-mode field ---- */

static rru_hart *fp_hart(rru_mem **m, const uint32_t *code, size_t n)
{
    *m = test_mem(code, n);
    rru_hart *h = rru_hart_new(*m, 0);
    rru_ctx c;
    rru_ctx_init(&c, TEST_CODE);
    rru_hart_load(h, &c);
    return h;
}

#define FADD_S(rd, rs1, rs2, rm) enc_r(0x53, rm, 0x00, rd, rs1, rs2)
#define FADD_D(rd, rs1, rs2, rm) enc_r(0x53, rm, 0x01, rd, rs1, rs2)
#define FSGNJN_S(rd, rs1, rs2) enc_r(0x53, 1, 0x10, rd, rs1, rs2)
#define FCVT_D_S(rd, rs1, rm) enc_r(0x53, rm, 0x21, rd, rs1, 0)
#define FCLASS_S(rd, rs1) enc_r(0x53, 1, 0x70, rd, rs1, 0)
#define FMV_X_W(rd, rs1) enc_r(0x53, 0, 0x70, rd, rs1, 0)

START_TEST(rru_fp_instructions_box_singles_and_accrue_flags)
{
    uint32_t code[] = {
        FADD_S(3, 1, 2, 7),      /* f3 = f1 + f2 (dynamic rm) */
        FSGNJN_S(4, 5, 5),       /* f5 improperly boxed: reads as canonical NaN */
        FCLASS_S(A0, 5),         /* quiet NaN class */
        FMV_X_W(A1, 5),          /* raw low bits, sign-extended, no unboxing */
        FADD_D(6, 1, 1, 0),      /* a boxed single read as a double: a NaN */
        FCVT_D_S(7, 2, 0),
        I_ECALL,
    };
    rru_mem *m;
    rru_hart *h = fp_hart(&m, code, sizeof code / 4);
    rru_ctx *c = rru_hart_ctx(h);
    c->f[1] = 0xffffffff3f800000ull;   /* 1.0f */
    c->f[2] = 0xffffffff33800000ull;   /* 2^-24 */
    c->f[5] = 0x00000000bf800000ull;   /* not boxed */
    c->frm = SF_RUP;
    c->fflags = SF_DZ;                  /* accrued: stays set */
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(h, 100, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(c->f[3], 0xffffffff3f800001ull);   /* RUP */
    ck_assert_uint_eq(c->f[4], 0xffffffffffc00000ull);   /* -canonical NaN, boxed */
    ck_assert_uint_eq(c->x[A0], 1u << 9);
    ck_assert_uint_eq(c->x[A1], 0xffffffffbf800000ull);
    ck_assert_uint_eq(c->f[6], SF64_CANONICAL_NAN);
    ck_assert_uint_eq(c->f[7], 0x3e70000000000000ull);   /* 2^-24 exactly */
    ck_assert_uint_eq(c->fflags, SF_DZ | SF_NX);
    rru_hart_free(h);
    rru_mem_free(m);

    /* Invalid rounding modes: static 5 and 6, and dynamic with frm >= 5,
     * even for exact conversions. */
    uint32_t bad[] = { FADD_S(3, 1, 2, 5), FADD_D(3, 1, 2, 6), FADD_S(3, 1, 2, 7), FCVT_D_S(3, 1, 7) };
    for (int k = 0; k < 4; k++) {
        uint32_t c2[] = { bad[k], I_ECALL };
        h = fp_hart(&m, c2, 2);
        rru_hart_ctx(h)->frm = 5 + (unsigned)(k & 1) * 2;
        ck_assert_int_eq(rru_hart_execute(h, 10, &st), RRU_STOP_ILLEGAL);
        ck_assert_int_eq(st.signal, SIGILL);
        rru_hart_free(h);
        rru_mem_free(m);
    }
}
END_TEST

/* ---- the host-FPU fast path (rru/fastfp.c) against softfp ----
 *
 * Every operation of rru/fastfp.h must give softfp's bits and flags for
 * every input, mode and accrued-flags value. The operands aim at the fast
 * path's edges: results near its range limits (the smallest normal, the
 * exactness bound 2^-959 of binary64, 2^(emax-2) where TwoSum's operands
 * stop, the largest finite), exact ties, exact results, cancellation,
 * subnormals, NaNs with payloads, infinities and signed zeros. It uses no
 * host flags or modes, so it also runs under valgrind (fewer cases). */

enum { FOP_ADD, FOP_SUB, FOP_MUL, FOP_DIV, FOP_SQRT, FOP_FMADD, FOP_FMSUB, FOP_FNMSUB,
       FOP_FNMADD, FOP_COUNT };
static const char *const fop_name[FOP_COUNT] = { "fadd", "fsub", "fmul", "fdiv", "fsqrt", "fmadd",
                                                 "fmsub", "fnmsub", "fnmadd" };

/* The inline common case of rru/fastfp.h, as the instruction bodies use it. */
static int run_rne_inline(int fmt, int op, uint64_t a, uint64_t b, uint64_t c, uint64_t *v)
{
    const uint64_t sb = fmt ? 1ull << 63 : 1ull << 31;
    switch (op) {
    case FOP_ADD: return ffp_rne_add(fmt, a, b, v);
    case FOP_SUB: return ffp_rne_sub(fmt, a, b, v);
    case FOP_MUL: return ffp_rne_mul(fmt, a, b, v);
    case FOP_DIV: return ffp_rne_div(fmt, a, b, v);
    case FOP_SQRT: return ffp_rne_sqrt(fmt, a, v);
    default: {
        const int k = op - FOP_FMADD;
        return fmt && ffp_rne_fma64(a ^ (k >> 1 ? sb : 0), b, c ^ (k & 1 ? sb : 0), v);
    }
    }
}

static uint64_t run_fop(int fast, int fmt, int op, uint64_t a, uint64_t b, uint64_t c, int rm,
                        unsigned *fl)
{
    uint64_t v;
    if (fast && rm == SF_RNE && (*fl & SF_NX) && run_rne_inline(fmt, op, a, b, c, &v))
        return v;
    switch (op) {
    case FOP_ADD: return (fast ? ffp_add : sf_add)(fmt, a, b, rm, fl);
    case FOP_SUB: return (fast ? ffp_sub : sf_sub)(fmt, a, b, rm, fl);
    case FOP_MUL: return (fast ? ffp_mul : sf_mul)(fmt, a, b, rm, fl);
    case FOP_DIV: return (fast ? ffp_div : sf_div)(fmt, a, b, rm, fl);
    case FOP_SQRT: return (fast ? ffp_sqrt : sf_sqrt)(fmt, a, rm, fl);
    default: {
        const int k = op - FOP_FMADD;   /* fmadd 00, fmsub 01, fnmsub 10, fnmadd 11 */
        return (fast ? ffp_fma : sf_fma)(fmt, a, b, c, k >> 1, k & 1, rm, fl);
    }
    }
}

static double val_of(int fmt, uint64_t v) { return fmt ? d_of(v) : (double)f_of((uint32_t)v); }
static uint64_t bits_from(int fmt, double x) { return fmt ? b_of_d(x) : b_of_f((float)x); }
static uint64_t width_mask(int fmt) { return fmt ? ~0ull : 0xffffffffull; }

/* V moved by a few steps of its bit pattern (ulps of magnitude). */
static uint64_t nudge(int fmt, uint64_t v, uint64_t *rng)
{
    if (tu_below(rng, 3) == 0)
        return v;
    return (v + tu_below(rng, 9) - 4) & width_mask(fmt);
}

/* A value of the fast path's edges: +-2^e (1 + small), e near a limit. */
static double edge_target(int fmt, uint64_t *rng)
{
    static const int e64[] = { -1022, -1021, -1020, -970, -969, -968, -960, -959, -958, -1, 0,
                               1, 1019, 1020, 1021, 1022, 1023 };
    static const int e32[] = { -126, -125, -124, -104, -103, -102, -1, 0, 1, 124, 125, 126, 127 };
    int e = fmt ? e64[tu_below(rng, sizeof e64 / sizeof e64[0])]
                : e32[tu_below(rng, sizeof e32 / sizeof e32[0])];
    double m;
    switch (tu_below(rng, 4)) {
    case 0: m = 1; break;                                   /* a binade's smallest */
    case 1: m = 2 - ldexp(1, fmt ? -52 : -23); break;       /* its largest */
    default:
        m = 1 + ldexp((double)tu_below(rng, 1u << 20), -(int)tu_below(rng, 60) - 1);
        if (m >= 2)
            m = 1;
    }
    return (tu_below(rng, 2) ? -1 : 1) * ldexp(m, e);
}

/* A NaN with a random payload, quiet or signalling. */
static uint64_t payload_nan(int fmt, uint64_t *rng)
{
    uint64_t v = tu_rand(rng);
    if (fmt) {
        v = (v & 0x800fffffffffffffull) | 0x7ff0000000000000ull;
        return (v & 0xfffffffffffffull) ? v : v | 1;
    }
    v = (v & 0x807fffffull) | 0x7f800000ull;
    return (v & 0x7fffffull) ? v : v | 1;
}

/* A random value with exponent (unbiased) in [lo, hi] and random bits. */
static uint64_t random_in(int fmt, uint64_t *rng, int lo, int hi)
{
    const int fb = fmt ? 52 : 23, bias = fmt ? 1023 : 127;
    int e = lo + (int)tu_below(rng, (uint64_t)(hi - lo + 1));
    if (e < 1 - bias)
        e = 1 - bias;
    if (e > bias)
        e = bias;
    uint64_t v = ((uint64_t)(e + bias) << fb) | (tu_rand(rng) & ((1ull << fb) - 1));
    return v | (tu_below(rng, 2) << (fmt ? 63 : 31));
}

/* Odd m * 2^s with m of H bits: two of them multiply to a tie about half the time. */
static uint64_t tie_factor(int fmt, uint64_t *rng, int s)
{
    const int h = fmt ? 27 : 13;
    double m = (double)((1ull << (h - 1)) | tu_below(rng, 1ull << (h - 1)) | 1);
    return bits_from(fmt, (tu_below(rng, 2) ? -1 : 1) * ldexp(m, s));
}

static void fast_operands(int fmt, int op, uint64_t *rng, uint64_t *a, uint64_t *b, uint64_t *c)
{
    const int fb = fmt ? 52 : 23, range = fmt ? 1000 : 120;
    const int is_fma = op >= FOP_FMADD;
    *a = operand(fmt, rng, 0, 0);
    *b = operand(fmt, rng, *a, 1);
    *c = operand(fmt, rng, *b, 1);
    switch (tu_below(rng, 8)) {
    case 0: /* as they are: specials, random bits, near the format's ends */
        break;
    case 1: case 2: case 3: { /* the result near an edge of the fast path */
        double t = edge_target(fmt, rng);
        int spread = (int)tu_below(rng, 2) ? 3 : (fmt ? 60 : 20);
        *a = random_in(fmt, rng, -spread, spread);
        if (tu_below(rng, 4) == 0)   /* an operand far from the result */
            *a = random_in(fmt, rng, -range, range);
        double x = val_of(fmt, *a);
        switch (op) {
        case FOP_ADD: *b = bits_from(fmt, t - x); break;
        case FOP_SUB: *b = bits_from(fmt, x - t); break;
        case FOP_MUL: *b = bits_from(fmt, t / x); break;
        case FOP_DIV: *b = *a; *a = bits_from(fmt, t * x); break;
        case FOP_SQRT: *a = bits_from(fmt, tu_below(rng, 2) ? fabs(t) : t * t); break;
        default: {
            double y = val_of(fmt, *b = random_in(fmt, rng, -spread, spread));
            *c = bits_from(fmt, t - x * y);
            if (op == FOP_FMSUB || op == FOP_FNMADD)
                *c ^= fmt ? 1ull << 63 : 1ull << 31;
            break;
        }
        }
        *a = nudge(fmt, *a, rng);
        *b = nudge(fmt, *b, rng);
        *c = nudge(fmt, *c, rng);
        break;
    }
    case 4: { /* exact ties */
        int s1 = (int)tu_below(rng, 2 * (uint64_t)range) - range;
        int s2 = (int)tu_below(rng, 40) - 20 - s1 / 2;
        if (op == FOP_ADD || op == FOP_SUB) {
            *a = random_in(fmt, rng, -range, range);
            int ea = (int)((*a >> fb) & (fmt ? 0x7ff : 0xff)) - (fmt ? 1023 : 127);
            double half = ldexp((double)(2 * tu_below(rng, 4) + 1), ea - fb - 1);
            *b = bits_from(fmt, tu_below(rng, 2) ? half : -half);
        } else {
            *a = tie_factor(fmt, rng, s1);
            *b = tie_factor(fmt, rng, s2);
            int q = s1 + s2 + 1 + (int)tu_below(rng, (uint64_t)fb + 4);
            *c = bits_from(fmt, (tu_below(rng, 2) ? -1 : 1) * ldexp(1, q));
            if (tu_below(rng, 4) == 0)
                *c = 0;
        }
        break;
    }
    case 5: /* cancellation: c near -a*b, b near a */
        if (is_fma) {
            unsigned ignored = 0;
            *c = sf_mul(fmt, *a, *b, SF_RNE, &ignored) ^ (fmt ? 1ull << 63 : 1ull << 31);
            if (op == FOP_FMSUB || op == FOP_FNMADD)
                *c ^= fmt ? 1ull << 63 : 1ull << 31;
            *c = nudge(fmt, *c, rng);
        } else {
            *b = nudge(fmt, *a ^ (op == FOP_ADD ? (fmt ? 1ull << 63 : 1ull << 31) : 0), rng);
        }
        break;
    case 6: /* NaNs with payloads, infinities, zeros among ordinary values */
        *a = random_in(fmt, rng, -8, 8);
        *b = random_in(fmt, rng, -8, 8);
        *c = random_in(fmt, rng, -8, 8);
        uint64_t *which = tu_below(rng, 2) ? a : tu_below(rng, 2) ? b : c;
        switch (tu_below(rng, 4)) {
        case 0: *which = payload_nan(fmt, rng); break;
        case 1: *which = bits_from(fmt, tu_below(rng, 2) ? INFINITY : -INFINITY); break;
        case 2: *which = tu_below(rng, 2) ? 0 : (fmt ? 1ull << 63 : 1ull << 31); break;
        default: /* a subnormal: random bits, exponent field cleared */
            *which = tu_rand(rng) & (fmt ? 0x800fffffffffffffull : 0x807fffffull);
            break;
        }
        break;
    default: /* ordinary values, the common case */
        *a = random_in(fmt, rng, -30, 30);
        *b = random_in(fmt, rng, -30, 30);
        *c = random_in(fmt, rng, -30, 30);
        if (tu_below(rng, 2)) {   /* short significands: exact results */
            uint64_t keep = ~((1ull << (fb - tu_below(rng, 12))) - 1);
            *a &= keep;
            *b &= keep;
            *c &= keep;
        }
        break;
    }
    if (!fmt) {
        *a &= 0xffffffffu;
        *b &= 0xffffffffu;
        *c &= 0xffffffffu;
    }
}

START_TEST(rru_fp_fast_path_matches_softfp_bit_for_bit)
{
    ck_assert_msg(ffp_host_ready(), "the host FP environment is not the default one");
    const int fmt = _i & 1, op = _i >> 1;
    const uint64_t seed = tu_seed(2100 + (uint64_t)_i);
    uint64_t rng = seed;
    const int n = tu_under_valgrind() ? 10000 : 120000;
    unsigned normal = 0, ties = 0;
    for (int k = 0; k < n; k++) {
        uint64_t a, b, c;
        fast_operands(fmt, op, &rng, &a, &b, &c);
        const unsigned accrued[3] = { 0, SF_NX, (unsigned)tu_below(&rng, 32) };
        for (int rm = 0; rm <= SF_RMM; rm++) {
            for (int f = 0; f < 3; f++) {
                unsigned fast_fl = accrued[f], soft_fl = accrued[f];
                uint64_t got = run_fop(1, fmt, op, a, b, c, rm, &fast_fl);
                uint64_t want = run_fop(0, fmt, op, a, b, c, rm, &soft_fl);
                CHECK(got == want && fast_fl == soft_fl,
                      "seed %llu: %s.%c rm %d flags %02x (0x%llx, 0x%llx, 0x%llx): fast 0x%llx/%02x,"
                      " softfp 0x%llx/%02x", (unsigned long long)seed, fop_name[op], fmt ? 'd' : 's',
                      rm, accrued[f], (unsigned long long)a, (unsigned long long)b,
                      (unsigned long long)c, (unsigned long long)got, fast_fl,
                      (unsigned long long)want, soft_fl);
            }
        }
        /* What the operands reached: normal results (where the fast path
         * works), and RMM ties (where RMM and RNE differ by the tie rule). */
        unsigned f0 = 0, f4 = 0;
        uint64_t rne = run_fop(0, fmt, op, a, b, c, SF_RNE, &f0);
        uint64_t rmm = run_fop(0, fmt, op, a, b, c, SF_RMM, &f4);
        uint64_t e = fmt ? (rne >> 52) & 0x7ff : (rne >> 23) & 0xff;
        normal += e != 0 && e != (fmt ? 0x7ffu : 0xffu);
        ties += rne != rmm && !(f0 & SF_OF);
    }
    ck_assert_uint_gt(normal, (unsigned)n / 2);
    if (op != FOP_DIV && op != FOP_SQRT)   /* quotients and roots are never ties */
        ck_assert_uint_gt(ties, (unsigned)n / 50);
}
END_TEST

/* Comparisons, min/max and conversions: fast path against softfp. KIND
 * (_i >> 1): eq lt le min max, to_int, from_int, convert; FMT (_i & 1) the
 * floating-point format (convert: the source). */
enum { FK_EQ, FK_LT, FK_LE, FK_MIN, FK_MAX, FK_TO_INT, FK_FROM_INT, FK_CONVERT, FK_COUNT };
static const char *const fk_name[FK_COUNT] = { "feq", "flt", "fle", "fmin", "fmax", "fcvt.int",
                                               "fcvt.from_int", "fcvt.fmt" };

static uint64_t run_fk(int fast, int fmt, int kind, int variant, uint64_t a, uint64_t b, int rm,
                       unsigned *fl)
{
    const int sg = !(variant & 1), width = variant < 2 ? 32 : 64;
    switch (kind) {
    case FK_EQ: return (uint64_t)(fast ? ffp_eq : sf_eq)(fmt, a, b, fl);
    case FK_LT: return (uint64_t)(fast ? ffp_lt : sf_lt)(fmt, a, b, fl);
    case FK_LE: return (uint64_t)(fast ? ffp_le : sf_le)(fmt, a, b, fl);
    case FK_MIN: return (fast ? ffp_min : sf_min)(fmt, a, b, fl);
    case FK_MAX: return (fast ? ffp_max : sf_max)(fmt, a, b, fl);
    case FK_TO_INT: return (fast ? ffp_to_int : sf_to_int)(fmt, a, sg, width, rm, fl);
    case FK_FROM_INT: return (fast ? ffp_from_int : sf_from_int)(fmt, a, sg, width, rm, fl);
    default: return (fast ? ffp_convert : sf_convert)(!fmt, fmt, a, rm, fl);
    }
}

static uint64_t conv_operand(int fmt, int kind, uint64_t *rng)
{
    static const double near_int[] = { 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, -0.75, 3.5,
                                       2147483647.0, 2147483648.0, -2147483648.0,
                                       -2147483649.0, 4294967295.0, 4294967296.0,
                                       9007199254740992.0, -9223372036854775808.0 };
    switch (kind) {
    case FK_TO_INT:
        switch (tu_below(rng, 4)) {
        case 0: {
            double v = near_int[tu_below(rng, sizeof near_int / sizeof near_int[0])];
            v += (double)((int64_t)tu_below(rng, 9) - 4) * (fabs(v) > 1e6 ? 0.5 : 0.125);
            return nudge(fmt, bits_from(fmt, v), rng);
        }
        case 1: return random_in(fmt, rng, -3, 33);
        case 2: /* integers and halves */
            return bits_from(fmt, (double)((int64_t)(tu_rand(rng) >> tu_below(rng, 64)) >> 2) / 4);
        default: return operand(fmt, rng, 0, 0);
        }
    case FK_FROM_INT: {
        uint64_t v = tu_rand(rng) >> tu_below(rng, 64);
        if (tu_below(rng, 3) == 0)   /* the exact limits 2^24, 2^53 and around */
            v = (1ull << (tu_below(rng, 2) ? 24 : 53)) + tu_below(rng, 9) - 4;
        return tu_below(rng, 2) ? (uint64_t)0 - v : v;
    }
    case FK_CONVERT:
        if (fmt && tu_below(rng, 2)) {   /* binary64 near binary32's range, ties, edges */
            double t = edge_target(0, rng);
            uint64_t v = b_of_d(t);
            if (tu_below(rng, 2))
                v += (tu_below(rng, 2) ? 1ull << 28 : 0) + tu_below(rng, 3) - 1;   /* ties */
            else
                v ^= tu_rand(rng) & 0x1fffffffull;
            return v;
        }
        return tu_below(rng, 8) ? operand(fmt, rng, 0, 0) : payload_nan(fmt, rng);
    default:
        return tu_below(rng, 8) ? operand(fmt, rng, 0, 0) : payload_nan(fmt, rng);
    }
}

START_TEST(rru_fp_fast_compares_and_conversions_match_softfp)
{
    const int fmt = _i & 1, kind = _i >> 1;
    const uint64_t seed = tu_seed(2300 + (uint64_t)_i);
    uint64_t rng = seed;
    const int n = tu_under_valgrind() ? 10000 : 150000;
    for (int k = 0; k < n; k++) {
        uint64_t a = conv_operand(fmt, kind, &rng), b = 0;
        if (kind < FK_TO_INT) {
            b = tu_below(&rng, 4)   ? operand(fmt, &rng, a, 1)
                : tu_below(&rng, 2) ? a
                                    : payload_nan(fmt, &rng);
            if (tu_below(&rng, 8) == 0)   /* +-0 against +-0 */
                a &= fmt ? 1ull << 63 : 1ull << 31, b &= fmt ? 1ull << 63 : 1ull << 31;
        }
        if (!fmt && kind != FK_FROM_INT)
            a &= 0xffffffffu, b &= 0xffffffffu;
        const unsigned accrued[2] = { 0, (unsigned)tu_below(&rng, 32) };
        /* Integer width and signedness, and the mode, matter only to some. */
        const int variants = kind == FK_TO_INT || kind == FK_FROM_INT ? 4 : 1;
        const int modes = kind >= FK_TO_INT ? SF_RMM + 1 : 1;
        for (int variant = 0; variant < variants; variant++) {
            for (int rm = 0; rm < modes; rm++) {
                for (int f = 0; f < 2; f++) {
                    unsigned fast_fl = accrued[f], soft_fl = accrued[f];
                    uint64_t got = run_fk(1, fmt, kind, variant, a, b, rm, &fast_fl);
                    uint64_t want = run_fk(0, fmt, kind, variant, a, b, rm, &soft_fl);
                    CHECK(got == want && fast_fl == soft_fl,
                          "seed %llu: %s.%c variant %d rm %d flags %02x (0x%llx, 0x%llx): fast"
                          " 0x%llx/%02x, softfp 0x%llx/%02x", (unsigned long long)seed,
                          fk_name[kind], fmt ? 'd' : 's', variant, rm, accrued[f],
                          (unsigned long long)a, (unsigned long long)b, (unsigned long long)got,
                          fast_fl, (unsigned long long)want, soft_fl);
                }
            }
        }
    }
}
END_TEST

/* The same through the instructions, two harts in lock-step, one on the
 * fast path and one on softfp only: random F/D instructions with random rm
 * fields (dynamic included, frm 0..7, so invalid modes trap on both),
 * singles boxed or not, random accrued flags; every register, fflags and
 * stop must agree after every instruction. */
typedef struct fp_insn_kind {
    uint32_t base;     /* opcode, funct7/fmt (and rs2 for unary ones) */
    int r4;            /* fused: rs3 in use */
    int unary;         /* rs2 is part of the encoding */
    int has_rm;        /* the rm field is a rounding mode (else fixed funct3) */
    uint32_t funct3;   /* the fixed funct3 if !has_rm */
    int fmt, fop;      /* operand format; FOP_* for arithmetic, -1 otherwise */
    int int_src;       /* rs1 is an integer register */
} fp_insn_kind;

static const fp_insn_kind fp_kinds[] = {
#define AR(f7, fmt, fop) { enc_r(0x53, 0, f7, 0, 0, 0), 0, fop == FOP_SQRT, 1, 0, fmt, fop, 0 }
#define R4(opc, fmt, fop) { enc_r4(opc, 0, fmt, 0, 0, 0, 0), 1, 0, 1, 0, fmt, fop, 0 }
#define CMP_(f7, f3, fmt) { enc_r(0x53, 0, f7, 0, 0, 0), 0, 0, 0, f3, fmt, -1, 0 }
#define CVT(f7, rs2, fmt, int_src) { enc_r(0x53, 0, f7, 0, 0, rs2), 0, 1, 1, 0, fmt, -1, int_src }
    AR(0x00, 0, FOP_ADD), AR(0x01, 1, FOP_ADD), AR(0x04, 0, FOP_SUB), AR(0x05, 1, FOP_SUB),
    AR(0x08, 0, FOP_MUL), AR(0x09, 1, FOP_MUL), AR(0x0c, 0, FOP_DIV), AR(0x0d, 1, FOP_DIV),
    AR(0x2c, 0, FOP_SQRT), AR(0x2d, 1, FOP_SQRT),
    R4(0x43, 0, FOP_FMADD), R4(0x43, 1, FOP_FMADD), R4(0x47, 0, FOP_FMSUB),
    R4(0x47, 1, FOP_FMSUB), R4(0x4b, 0, FOP_FNMSUB), R4(0x4b, 1, FOP_FNMSUB),
    R4(0x4f, 0, FOP_FNMADD), R4(0x4f, 1, FOP_FNMADD),
    /* min/max, compares: flags accrue on top of the old ones */
    CMP_(0x14, 0, 0), CMP_(0x15, 1, 1), CMP_(0x50, 2, 0), CMP_(0x51, 1, 1), CMP_(0x51, 0, 1),
    /* conversions: fcvt.w.d, fcvt.lu.s, fcvt.s.d, fcvt.d.s, fcvt.d.l, fcvt.s.wu */
    CVT(0x61, 0, 1, 0), CVT(0x60, 3, 0, 0), CVT(0x20, 1, 1, 0), CVT(0x21, 0, 0, 0),
    CVT(0x69, 2, 1, 1), CVT(0x68, 1, 0, 1),
#undef AR
#undef R4
#undef CMP_
#undef CVT
};
#define FP_NKINDS (sizeof fp_kinds / sizeof fp_kinds[0])
#define FP_PROG 256

/* A register value for format FMT: boxed if single, now and then not. */
static uint64_t reg_value(int fmt, uint64_t v, uint64_t *rng)
{
    if (fmt)
        return v;
    if (tu_below(rng, 8) == 0)   /* not a valid single: reads as the canonical NaN */
        return (tu_rand(rng) & 0xffffffff00000000ull) | (uint32_t)v;
    return 0xffffffff00000000ull | (uint32_t)v;
}

START_TEST(rru_fp_fast_path_instructions_match_softfp_harts)
{
    uint64_t seed = tu_seed(2200), rng = seed;
    static const unsigned rms[] = { 0, 0, 1, 2, 3, 4, 7, 7, 7, 7, 5, 6 };
    uint32_t code[FP_PROG + 1];
    unsigned kind[FP_PROG];
    for (unsigned i = 0; i < FP_PROG; i++) {
        const fp_insn_kind *k = &fp_kinds[kind[i] = (unsigned)tu_below(&rng, FP_NKINDS)];
        uint32_t rm = k->has_rm ? rms[tu_below(&rng, sizeof rms / sizeof rms[0])] : k->funct3;
        code[i] = k->base | rm << 12 | (uint32_t)tu_below(&rng, 32) << 7 |
                  (uint32_t)tu_below(&rng, 32) << 15;
        if (!k->unary)
            code[i] |= (uint32_t)tu_below(&rng, 32) << 20;
        if (k->r4)
            code[i] |= (uint32_t)tu_below(&rng, 32) << 27;
    }
    code[FP_PROG] = I_ECALL;
    rru_mem *m1, *m2;
    rru_hart *fast = fp_hart(&m1, code, FP_PROG + 1), *soft = fp_hart(&m2, code, FP_PROG + 1);
    rru_hart_set_softfp_only(soft, 1);
    rru_ctx *cf = rru_hart_ctx(fast), *cs = rru_hart_ctx(soft);
    const int steps = tu_under_valgrind() ? 10000 : 200000;
    for (int n = 0; n < steps; n++) {
        unsigned i = n % FP_PROG;
        const fp_insn_kind *k = &fp_kinds[kind[i]];
        const uint32_t w = code[i];
        uint64_t a, b, c;
        if (k->fop >= 0) {
            fast_operands(k->fmt, k->fop, &rng, &a, &b, &c);
        } else {
            a = operand(k->fmt, &rng, 0, 0);
            b = operand(k->fmt, &rng, a, 1);
            c = 0;
        }
        /* Sources: rs1 (integer or FP), rs2, rs3; a register used twice
         * keeps the last value. */
        if (k->int_src)
            cf->x[(w >> 15) & 31] = tu_below(&rng, 2) ? a : tu_rand(&rng) >> tu_below(&rng, 64);
        else
            cf->f[(w >> 15) & 31] = reg_value(k->fmt, a, &rng);
        if (!k->unary)
            cf->f[(w >> 20) & 31] = reg_value(k->fmt, b, &rng);
        if (k->r4)
            cf->f[w >> 27] = reg_value(k->fmt, c, &rng);
        cf->frm = (uint32_t)(tu_below(&rng, 8) == 0 ? 5 + tu_below(&rng, 3) : tu_below(&rng, 5));
        cf->fflags = (uint32_t)(tu_below(&rng, 2) ? 0 : tu_below(&rng, 32));
        cf->pc = TEST_CODE + 4 * i;
        cf->x[0] = 0;
        *cs = *cf;
        rru_stop st_fast, st_soft;
        rru_stop_reason r_fast = rru_hart_execute(fast, 1, &st_fast);
        rru_stop_reason r_soft = rru_hart_execute(soft, 1, &st_soft);
        CHECK(r_fast == r_soft && memcmp(cf, cs, sizeof *cf) == 0,
              "seed %llu: insn 0x%08x (frm %u) differs: stops %d/%d, fflags %02x/%02x,"
              " pc 0x%llx/0x%llx", (unsigned long long)seed, w, cf->frm, r_fast, r_soft, cf->fflags,
              cs->fflags, (unsigned long long)cf->pc, (unsigned long long)cs->pc);
    }
    rru_hart_free(fast);
    rru_hart_free(soft);
    rru_mem_free(m1);
    rru_mem_free(m2);
}
END_TEST

TU_SUITE(rru_fp)
{
    Suite *s = suite_create("rru_fp");
    TCase *tc = tu_tcase(s, "host", 120);
    tcase_add_loop_test(tc, rru_fp_matches_host_fpu_in_four_rounding_modes, 0, 2 * OP_COUNT);
    tcase_add_loop_test(tc, rru_fp_rmm_rounds_ties_away_from_zero, 0, 12);
    tcase_add_loop_test(tc, rru_fp_to_int_saturates_and_rounds_in_all_modes, 0, 2);
    tcase_add_loop_test(tc, rru_fp_from_int_matches_host, 0, 2);
    tc = tu_tcase(s, "fast", 240);
    tcase_add_loop_test(tc, rru_fp_fast_path_matches_softfp_bit_for_bit, 0, 2 * FOP_COUNT);
    tcase_add_loop_test(tc, rru_fp_fast_compares_and_conversions_match_softfp, 0, 2 * FK_COUNT);
    tcase_add_test(tc, rru_fp_fast_path_instructions_match_softfp_harts);
    tc = tu_tcase(s, "rules", 30);
    tcase_add_test(tc, rru_fp_min_max_follow_the_2_2_rules);
    tcase_add_test(tc, rru_fp_special_cases_of_the_isa);
    tcase_add_test(tc, rru_fp_instructions_box_singles_and_accrue_flags);
    return s;
}

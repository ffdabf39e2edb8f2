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

static int under_valgrind(void) { return getenv("RNR_VALGRIND") != NULL; }

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
    if (under_valgrind())
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
    if (under_valgrind())
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
    if (under_valgrind())
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
    if (under_valgrind())
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

TU_SUITE(rru_fp)
{
    Suite *s = suite_create("rru_fp");
    TCase *tc = tu_tcase(s, "host", 120);
    tcase_add_loop_test(tc, rru_fp_matches_host_fpu_in_four_rounding_modes, 0, 2 * OP_COUNT);
    tcase_add_loop_test(tc, rru_fp_rmm_rounds_ties_away_from_zero, 0, 12);
    tcase_add_loop_test(tc, rru_fp_to_int_saturates_and_rounds_in_all_modes, 0, 2);
    tcase_add_loop_test(tc, rru_fp_from_int_matches_host, 0, 2);
    tc = tu_tcase(s, "rules", 30);
    tcase_add_test(tc, rru_fp_min_max_follow_the_2_2_rules);
    tcase_add_test(tc, rru_fp_special_cases_of_the_isa);
    tcase_add_test(tc, rru_fp_instructions_box_singles_and_accrue_flags);
    return s;
}

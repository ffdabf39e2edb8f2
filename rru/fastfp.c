/* rru/fastfp.c: F/D operations on the host FPU (or in integer code) where
 * the result is provably the RISC-V one, and through rru/softfp.c
 * everywhere else. Built
 * with -ffp-contract=off -fno-math-errno (rru/module.mk); the checks below
 * refuse x87 evaluation and -ffast-math.
 *
 * Why it is exact. The host computes R = RN(x op y), round to nearest even,
 * in the operation's own format (binary32 operations in binary32, or in
 * binary64 from exact binary64 intermediates). The fast path takes R only
 * when its biased exponent lies in [LO, HI], where LO >= 2 and HI is one
 * below the largest finite exponent. Then:
 *
 *  - R is finite and normal, and so are its neighbours R-ulp and R+ulp (one
 *    step of the bit pattern). Every NaN result (any NaN operand, invalid
 *    operations), every infinity (overflow, division by zero) and every zero
 *    or tiny result falls outside the range and goes to softfp. So NV, DZ,
 *    OF and UF are never raised here: a result whose exact value lies
 *    within half an ulp of R is neither tiny nor overflowing in any mode.
 *  - The exact result X lies between R and its neighbour N on the side of
 *    E = X - R, with |E| <= |N - R| / 2. Hence, with the sign of E: RNE is
 *    R; RTZ, RDN and RUP are R or N as the sign of E and of R say; RMM
 *    differs from RNE only when |E| = |N - R| / 2 exactly (a tie) and N is
 *    farther from zero. Inexact (NX) is E != 0.
 *  - If NX is already accrued and the mode is RNE, the result is R and the
 *    flags do not change: no exactness test is needed (the common case).
 *
 * E comes from error-free transformations, each exact under the range
 * checks made before it (q(v) is the exponent of v's last significant bit,
 * e(v) that of its first; binary64: p = 53, emin = -1022, smallest quantum
 * 2^-1074; every remainder below is a multiple of some 2^m with m >= -1074
 * and below 2^(m+53) in magnitude, hence representable, hence computed
 * exactly by one fma):
 *
 *  - add: TwoSum (Knuth): s = x+y, yv = s-x, xv = s-yv, E = (x-xv)+(y-yv)
 *    is exact in round-to-nearest for all finite x, y unless an
 *    intermediate overflows, which |x|, |y| < 2^(emax-2) excludes.
 *  - mul: E = fma(x, y, -R). x*y and R are multiples of 2^(q(x)+q(y)) and
 *    |E| <= ulp(R)/2 < 2^(q(x)+q(y)+53); q(v) >= e(v) - 52 and
 *    |R| >= 2^-959 give q(x)+q(y) >= -1065.
 *  - div: rho = fma(-R, y, x) = x - R*y, and E has the sign of rho/y. R*y
 *    is a multiple of 2^(q(R)+q(y)), x of 2^q(x) with q(x) >= q(R)+q(y)-1
 *    (x ~ R*y), |rho| <= |y| ulp(R)/2 < 2^(q(R)+q(y)+52); |x| >= 2^-959
 *    makes the quantum at least 2^-1074. (Ties cannot happen: a midpoint
 *    has p+1 significant bits and so cannot be a quotient of p-bit numbers.)
 *  - sqrt: rho = fma(-R, R, x) = x - R^2, sign of E. R^2 is a multiple of
 *    2^(2q(R)), x of a larger power, |rho| <= ulp(R)/2 (2R + ulp(R)/2) <
 *    2^(2q(R)+53); |x| >= 2^-959 gives 2q(R) >= -1064. (No ties either.)
 *  - fma: only when the product is exact (fma(x, y, -RN(x*y)) = 0, itself
 *    exact for |RN(x*y)| >= 2^-959 as for mul) or zero: then x*y + z =
 *    p + z and E is TwoSum's error of p + z (whose rounded sum is R). An
 *    inexact product outside RNE-with-NX goes to softfp.
 *  - binary32: x*y (48 bits) and the double's exponent range make products
 *    exact in binary64; x - R*y, x - R^2 and double(x*y) - R are then exact
 *    subtractions of values within a factor of two (Sterbenz). Addition
 *    uses TwoSum in binary32. fma: s + t = x*y + z exactly (TwoSum in
 *    binary64); s rounded to odd (s, or its odd neighbour toward t when
 *    t != 0) and then to binary32 is RN(x*y + z), since 53 >= 24 + 2; E =
 *    (s - R) + t, the first term exact by Sterbenz, summed by TwoSum.
 *
 * All of it assumes the host's default environment: round to nearest even,
 * gradual underflow (no FTZ/DAZ), traps masked. ffp_host_ready() checks
 * that; rru_hart_run consults it on every entry. */
#if defined(__x86_64__)
#include <xmmintrin.h>
#else
#include <fenv.h>
#endif

#include "rru/fastfp.h"
#include "rru/softfp.h"

/* rru/fastfp.h refuses FLT_EVAL_METHOD != 0 and -ffast-math. */
#if defined(__i386__) && !defined(__SSE2_MATH__)
#error "rru/fastfp.c must not use x87 arithmetic"
#endif

#define SIGN64 0x8000000000000000ull
#define SIGN32 0x80000000u

/* Biased exponents of results taken from the host (see above). */
#define D_LO FFP_D_LO
#define D_HI FFP_D_HI
#define F_LO FFP_F_LO
#define F_HI FFP_F_HI
/* Operands of TwoSum: below 2^(emax-2), so that every intermediate stays
 * below 3 * 2^(emax-1) and nothing overflows. (A conservative bound: the
 * tests find no overflow without it either.) */
#define D_SUM_HI 2043u
#define F_SUM_HI 251u

static inline double dbl(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static inline uint64_t dbits(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }
static inline float flt(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t fbits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

static inline unsigned dexp(uint64_t b) { return (unsigned)(b >> 52) & 0x7ff; }
static inline unsigned fexp(uint32_t b) { return (b >> 23) & 0xff; }
static inline int d_ok(uint64_t r) { return dexp(r) - D_LO <= D_HI - D_LO; }
static inline int f_ok(uint32_t r) { return fexp(r) - F_LO <= F_HI - F_LO; }

static inline int sgn(double v) { return (v > 0) - (v < 0); }

int ffp_host_ready(void)
{
#if defined(__x86_64__)
    /* MXCSR: rounding control 0, FTZ and DAZ clear, all six traps masked. */
    return (_mm_getcsr() & 0xffc0u) == 0x1f80u;
#else
    return fegetround() == FE_TONEAREST;
#endif
}

/* The result in mode RM, from R (bits of the host's RNE result, in range),
 * NEG its sign, ES the sign of E = exact - R, TIE whether |E| is half the
 * gap to the neighbour on E's side. A step of the bit pattern is one ulp of
 * magnitude. */
static inline uint64_t in_mode(uint64_t r, int neg, int es, int tie, int rm)
{
    const int away = es != 0 && (es > 0) != neg;   /* exact farther from zero */
    switch (rm) {
    case SF_RTZ: return es != 0 && !away ? r - 1 : r;
    case SF_RDN: return es < 0 ? (neg ? r + 1 : r - 1) : r;
    case SF_RUP: return es > 0 ? (neg ? r - 1 : r + 1) : r;
    case SF_RMM: return tie && away ? r + 1 : r;
    default: return r;
    }
}

/* Is E (exact, nonzero) half the gap from R to its neighbour on E's side?
 * The gap is exact (neighbours), and so is 2E. */
static int tie64(uint64_t r, double e)
{
    const uint64_t n = (e > 0) != (int)(r >> 63) ? r + 1 : r - 1;
    return e + e == dbl(n) - dbl(r);
}

static int tie32(uint32_t r, double e)
{
    const uint32_t n = (e > 0) != (int)(r >> 31) ? r + 1 : r - 1;
    return e + e == (double)flt(n) - (double)flt(r);
}

static inline uint64_t finish64(uint64_t r, int es, int tie, int rm, unsigned *flags)
{
    if (es)
        *flags |= SF_NX;
    return in_mode(r, (int)(r >> 63), es, tie, rm);
}

static inline uint64_t finish32(uint32_t r, int es, int tie, int rm, unsigned *flags)
{
    if (es)
        *flags |= SF_NX;
    return in_mode(r, (int)(r >> 31), es, tie, rm);
}

/* Each fast function returns 1 with *out (and *flags updated), or 0 with
 * nothing changed: then softfp decides. */

/* ---- binary64 ---- */

static int add64(uint64_t a, uint64_t b, int rm, unsigned *flags, uint64_t *out)
{
    const double x = dbl(a), y = dbl(b), s = x + y;
    const uint64_t r = dbits(s);
    if (!d_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    if (dexp(a) > D_SUM_HI || dexp(b) > D_SUM_HI)
        return 0;
    const double yv = s - x, xv = s - yv;
    const double e = (x - xv) + (y - yv);
    const int es = sgn(e);
    *out = finish64(r, es, rm == SF_RMM && es && tie64(r, e), rm, flags);
    return 1;
}

static int mul64(uint64_t a, uint64_t b, int rm, unsigned *flags, uint64_t *out)
{
    const double x = dbl(a), y = dbl(b), p = x * y;
    const uint64_t r = dbits(p);
    if (!d_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    const double e = fma(x, y, -p);
    const int es = sgn(e);
    *out = finish64(r, es, rm == SF_RMM && es && tie64(r, e), rm, flags);
    return 1;
}

static int div64(uint64_t a, uint64_t b, int rm, unsigned *flags, uint64_t *out)
{
    const double x = dbl(a), y = dbl(b), q = x / y;
    const uint64_t r = dbits(q);
    if (!d_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    if (dexp(a) < D_LO)
        return 0;
    const double rho = fma(-q, y, x);
    *out = finish64(r, y < 0 ? -sgn(rho) : sgn(rho), 0, rm, flags);
    return 1;
}

static int sqrt64(uint64_t a, int rm, unsigned *flags, uint64_t *out)
{
    const double x = dbl(a), s = sqrt(x);
    const uint64_t r = dbits(s);
    if (!d_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    if (dexp(a) < D_LO)
        return 0;
    *out = finish64(r, sgn(fma(-s, s, x)), 0, rm, flags);
    return 1;
}

static int fma64(uint64_t a, uint64_t b, uint64_t c, int rm, unsigned *flags, uint64_t *out)
{
    const double x = dbl(a), y = dbl(b), z = dbl(c), f = fma(x, y, z);
    const uint64_t r = dbits(f);
    if (!d_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    if (x == 0 || y == 0) {   /* f = z exactly (y, x finite: f is) */
        *out = finish64(r, 0, 0, rm, flags);
        return 1;
    }
    const double p = x * y;
    if (dexp(dbits(p)) - D_LO > D_SUM_HI - D_LO || dexp(c) > D_SUM_HI || fma(x, y, -p) != 0)
        return 0;
    const double zv = f - p, pv = f - zv;
    const double e = (p - pv) + (z - zv);
    const int es = sgn(e);
    *out = finish64(r, es, rm == SF_RMM && es && tie64(r, e), rm, flags);
    return 1;
}

/* ---- binary32 ---- */

static int add32(uint32_t a, uint32_t b, int rm, unsigned *flags, uint64_t *out)
{
    const float x = flt(a), y = flt(b), s = x + y;
    const uint32_t r = fbits(s);
    if (!f_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    if (fexp(a) > F_SUM_HI || fexp(b) > F_SUM_HI)
        return 0;
    const float yv = s - x, xv = s - yv;
    const float e = (x - xv) + (y - yv);
    const int es = sgn(e);
    *out = finish32(r, es, rm == SF_RMM && es && tie32(r, e), rm, flags);
    return 1;
}

static int mul32(uint32_t a, uint32_t b, int rm, unsigned *flags, uint64_t *out)
{
    const double pd = (double)flt(a) * (double)flt(b);   /* exact */
    const float p = (float)pd;
    const uint32_t r = fbits(p);
    if (!f_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    const double e = pd - (double)p;
    const int es = sgn(e);
    *out = finish32(r, es, rm == SF_RMM && es && tie32(r, e), rm, flags);
    return 1;
}

static int div32(uint32_t a, uint32_t b, int rm, unsigned *flags, uint64_t *out)
{
    const float x = flt(a), y = flt(b), q = x / y;
    const uint32_t r = fbits(q);
    if (!f_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    const double rho = (double)x - (double)q * (double)y;
    *out = finish32(r, y < 0 ? -sgn(rho) : sgn(rho), 0, rm, flags);
    return 1;
}

static int sqrt32(uint32_t a, int rm, unsigned *flags, uint64_t *out)
{
    const float x = flt(a), s = sqrtf(x);
    const uint32_t r = fbits(s);
    if (!f_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    *out = finish32(r, sgn((double)x - (double)s * (double)s), 0, rm, flags);
    return 1;
}

static int fma32(uint32_t a, uint32_t b, uint32_t c, int rm, unsigned *flags, uint64_t *out)
{
    const double x = flt(a), y = flt(b), z = flt(c), p = x * y;   /* exact */
    const double s = p + z, zv = s - p, pv = s - zv;
    const double t = (p - pv) + (z - zv);                          /* s + t = x*y + z */
    uint64_t so = dbits(s);
    if (dexp(so) == 0x7ff)                                         /* an infinity or NaN */
        return 0;
    if (t != 0 && !(so & 1))                                       /* round to odd */
        so = (t > 0) != (int)(so >> 63) ? so + 1 : so - 1;
    const float f = (float)dbl(so);
    const uint32_t r = fbits(f);
    if (!f_ok(r))
        return 0;
    if (rm == SF_RNE && (*flags & SF_NX)) {
        *out = r;
        return 1;
    }
    const double g = s - (double)f, e1 = g + t, tv = e1 - g, gv = e1 - tv;
    const double e2 = (g - gv) + (t - tv);                         /* E = e1 + e2 */
    const int es = sgn(e1);
    *out = finish32(r, es, rm == SF_RMM && es && e2 == 0 && tie32(r, e1), rm, flags);
    return 1;
}

/* ---- comparisons and min/max: integer code once NaNs are excluded ---- */

static inline int any_nan(int fmt, uint64_t a, uint64_t b)
{
    if (fmt == SF_F64)
        return (a & ~SIGN64) > 0x7ff0000000000000ull || (b & ~SIGN64) > 0x7ff0000000000000ull;
    return (a & ~(uint64_t)SIGN32) > 0x7f800000u || (b & ~(uint64_t)SIGN32) > 0x7f800000u;
}

/* Unsigned order of the key = numeric order of non-NaN values, -0 < +0. */
static inline uint64_t order_key(int fmt, uint64_t x)
{
    const uint64_t sb = fmt == SF_F64 ? SIGN64 : SIGN32;
    return (x & sb) ? ~x & (sb | (sb - 1)) : x | sb;
}

static inline int both_zero(int fmt, uint64_t a, uint64_t b)
{
    return ((a | b) & ((fmt == SF_F64 ? SIGN64 : SIGN32) - 1)) == 0;
}

uint64_t ffp_min(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    if (any_nan(fmt, a, b))
        return sf_min(fmt, a, b, flags);
    return order_key(fmt, a) < order_key(fmt, b) ? a : b;
}

uint64_t ffp_max(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    if (any_nan(fmt, a, b))
        return sf_max(fmt, a, b, flags);
    return order_key(fmt, a) < order_key(fmt, b) ? b : a;
}

int ffp_eq(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    if (any_nan(fmt, a, b))
        return sf_eq(fmt, a, b, flags);
    return a == b || both_zero(fmt, a, b);
}

int ffp_lt(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    if (any_nan(fmt, a, b))
        return sf_lt(fmt, a, b, flags);
    return !both_zero(fmt, a, b) && order_key(fmt, a) < order_key(fmt, b);
}

int ffp_le(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    if (any_nan(fmt, a, b))
        return sf_le(fmt, a, b, flags);
    return both_zero(fmt, a, b) || order_key(fmt, a) <= order_key(fmt, b);
}

/* ---- conversions ---- */

/* To an integer, for |x| < 2^31 (not NaN): t = trunc(x) by the host (exact),
 * f = x - t exact (x and t within a factor of two, or t = 0), then one step
 * by the mode. Results outside the target's range go to softfp, which
 * raises invalid without inexact. */
uint64_t ffp_to_int(int fmt, uint64_t a, int is_signed, int width, int rm, unsigned *flags)
{
    const double x = fmt == SF_F64 ? dbl(a) : (double)flt((uint32_t)a);
    if (!(fabs(x) < 2147483648.0))   /* NaN fails too */
        return sf_to_int(fmt, a, is_signed, width, rm, flags);
    const int64_t t = (int64_t)x;
    const double f = x - (double)t;
    int64_t r = t;
    if (f != 0) {
        const int64_t away = f > 0 ? t + 1 : t - 1;
        const double af = fabs(f);
        switch (rm) {
        case SF_RNE: r = af > 0.5 || (af == 0.5 && (t & 1)) ? away : t; break;
        case SF_RDN: r = f < 0 ? t - 1 : t; break;
        case SF_RUP: r = f > 0 ? t + 1 : t; break;
        case SF_RMM: r = af >= 0.5 ? away : t; break;
        default: break;
        }
    }
    if (is_signed ? (width == 32 && (r < INT32_MIN || r > INT32_MAX)) : r < 0)
        return sf_to_int(fmt, a, is_signed, width, rm, flags);
    if (f != 0)
        *flags |= SF_NX;
    return width == 32 ? (uint64_t)(int64_t)(int32_t)(uint32_t)r : (uint64_t)r;
}

/* From an integer: exact, by the host, below 2^53 (binary64) or 2^24. */
uint64_t ffp_from_int(int fmt, uint64_t v, int is_signed, int width, int rm, unsigned *flags)
{
    int64_t i;
    if (width == 32)
        i = is_signed ? (int64_t)(int32_t)(uint32_t)v : (int64_t)(uint32_t)v;
    else if (is_signed || v < (1ull << 63))
        i = (int64_t)v;
    else
        return sf_from_int(fmt, v, is_signed, width, rm, flags);
    const int64_t lim = fmt == SF_F64 ? 1ll << 53 : 1ll << 24;
    if (i <= -lim || i >= lim)
        return sf_from_int(fmt, v, is_signed, width, rm, flags);
    return fmt == SF_F64 ? dbits((double)i) : fbits((float)i);
}

/* binary32 -> binary64 is exact for every non-NaN; binary64 -> binary32
 * takes the host's RNE result R in range, with E = x - R exact (Sterbenz). */
uint64_t ffp_convert(int to, int from, uint64_t a, int rm, unsigned *flags)
{
    if (to == SF_F64 && from == SF_F32) {
        if ((a & 0x7fffffffu) <= 0x7f800000u)
            return dbits((double)flt((uint32_t)a));
    } else if (to == SF_F32 && from == SF_F64) {
        const double x = dbl(a);
        const float f = (float)x;
        const uint32_t r = fbits(f);
        if (f_ok(r)) {
            if (rm == SF_RNE && (*flags & SF_NX))
                return r;
            const double e = x - (double)f;
            const int es = sgn(e);
            return finish32(r, es, rm == SF_RMM && es && tie32(r, e), rm, flags);
        }
    }
    return sf_convert(to, from, a, rm, flags);
}

/* ---- the interface of softfp ---- */

uint64_t ffp_add(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    uint64_t r;
    if (fmt == SF_F64 ? add64(a, b, rm, flags, &r) : add32((uint32_t)a, (uint32_t)b, rm, flags, &r))
        return r;
    return sf_add(fmt, a, b, rm, flags);
}

uint64_t ffp_sub(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    uint64_t r;
    if (fmt == SF_F64 ? add64(a, b ^ SIGN64, rm, flags, &r)
                      : add32((uint32_t)a, (uint32_t)b ^ SIGN32, rm, flags, &r))
        return r;
    return sf_sub(fmt, a, b, rm, flags);
}

uint64_t ffp_mul(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    uint64_t r;
    if (fmt == SF_F64 ? mul64(a, b, rm, flags, &r) : mul32((uint32_t)a, (uint32_t)b, rm, flags, &r))
        return r;
    return sf_mul(fmt, a, b, rm, flags);
}

uint64_t ffp_div(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    uint64_t r;
    if (fmt == SF_F64 ? div64(a, b, rm, flags, &r) : div32((uint32_t)a, (uint32_t)b, rm, flags, &r))
        return r;
    return sf_div(fmt, a, b, rm, flags);
}

uint64_t ffp_sqrt(int fmt, uint64_t a, int rm, unsigned *flags)
{
    uint64_t r;
    if (fmt == SF_F64 ? sqrt64(a, rm, flags, &r) : sqrt32((uint32_t)a, rm, flags, &r))
        return r;
    return sf_sqrt(fmt, a, rm, flags);
}

uint64_t ffp_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int neg_prod, int neg_c, int rm,
                 unsigned *flags)
{
    uint64_t r;
    int ok;
    if (fmt == SF_F64)
        ok = fma64(neg_prod ? a ^ SIGN64 : a, b, neg_c ? c ^ SIGN64 : c, rm, flags, &r);
    else
        ok = fma32((uint32_t)a ^ (neg_prod ? SIGN32 : 0), (uint32_t)b,
                   (uint32_t)c ^ (neg_c ? SIGN32 : 0), rm, flags, &r);
    if (ok)
        return r;
    return sf_fma(fmt, a, b, c, neg_prod, neg_c, rm, flags);
}

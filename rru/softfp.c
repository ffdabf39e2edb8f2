/* rru/softfp.c: IEEE-754 binary32/binary64 in integer arithmetic. Every
 * finite operation is reduced to an exact (or exactly-sticky) significand
 * and exponent, then rounded once by round_pack. No host floating point. */
#include "rru/softfp.h"

typedef unsigned __int128 u128;

typedef struct fmtinfo {
    int fbits;   /* fraction bits */
    int ebits;   /* exponent bits */
    int bias;
} fmtinfo;

static const fmtinfo FMT[2] = { { 23, 8, 127 }, { 52, 11, 1023 } };

enum { C_ZERO, C_FINITE, C_INF, C_QNAN, C_SNAN };

/* An unpacked value: (-1)^sign * sig * 2^exp for finite nonzero values. */
typedef struct unp {
    int sign, cls, exp;
    u128 sig;
} unp;

static int is_nan(const unp *u) { return u->cls == C_QNAN || u->cls == C_SNAN; }

static unp unpack(int fmt, uint64_t bits)
{
    const fmtinfo *f = &FMT[fmt];
    unp u;
    const uint64_t emax = (1u << f->ebits) - 1;
    uint64_t e = (bits >> f->fbits) & emax;
    uint64_t m = bits & ((1ull << f->fbits) - 1);
    u.sign = (int)((bits >> (f->fbits + f->ebits)) & 1);
    u.exp = 0;
    u.sig = 0;
    if (e == emax) {
        u.cls = m == 0 ? C_INF : ((m >> (f->fbits - 1)) & 1) ? C_QNAN : C_SNAN;
    } else if (e == 0) {
        u.cls = m == 0 ? C_ZERO : C_FINITE;
        u.sig = m;
        u.exp = 1 - f->bias - f->fbits;
    } else {
        u.cls = C_FINITE;
        u.sig = m | (1ull << f->fbits);
        u.exp = (int)e - f->bias - f->fbits;
    }
    return u;
}

static uint64_t pack(int fmt, int sign, uint64_t biased, uint64_t frac)
{
    const fmtinfo *f = &FMT[fmt];
    return ((uint64_t)sign << (f->fbits + f->ebits)) | (biased << f->fbits) | frac;
}

static uint64_t canon(int fmt) { return fmt == SF_F32 ? SF32_CANONICAL_NAN : SF64_CANONICAL_NAN; }
static uint64_t zero(int fmt, int sign) { return pack(fmt, sign, 0, 0); }
static uint64_t inf(int fmt, int sign) { return pack(fmt, sign, (1u << FMT[fmt].ebits) - 1, 0); }

static uint64_t max_finite(int fmt, int sign)
{
    const fmtinfo *f = &FMT[fmt];
    return pack(fmt, sign, (1u << f->ebits) - 2, (1ull << f->fbits) - 1);
}

static int msb128(u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)x);
}

/* x >> n (n >= 1), with the round bit (the highest bit shifted out) and
 * sticky (any lower bit shifted out). n <= 0 shifts left exactly. */
static u128 shr_rs(u128 x, int n, int *r, int *s)
{
    if (n <= 0) {
        *r = *s = 0;
        return x << -n;
    }
    if (n > 128) {
        *r = 0;
        *s = x != 0;
        return 0;
    }
    if (n == 128) {
        *r = (int)(x >> 127);
        *s = (x << 1) != 0;
        return 0;
    }
    *r = (int)((x >> (n - 1)) & 1);
    *s = (x & (((u128)1 << (n - 1)) - 1)) != 0;
    return x >> n;
}

/* Whether to add one unit in the last place. */
static int round_up(int rm, int sign, int lsb, int r, int s)
{
    switch (rm) {
    case SF_RNE: return r && (s || lsb);
    case SF_RTZ: return 0;
    case SF_RDN: return sign && (r || s);
    case SF_RUP: return !sign && (r || s);
    default: return r;   /* RMM: ties away from zero */
    }
}

static uint64_t overflow_result(int fmt, int sign, int rm)
{
    switch (rm) {
    case SF_RTZ: return max_finite(fmt, sign);
    case SF_RDN: return sign ? inf(fmt, 1) : max_finite(fmt, 0);
    case SF_RUP: return sign ? max_finite(fmt, 1) : inf(fmt, 0);
    default: return inf(fmt, sign);
    }
}

/* Rounds (-1)^sign * (sig + f) * 2^exp, where sig != 0 and f is in [0, 1)
 * and nonzero iff sticky, to the format. When sticky is set the caller
 * provides at least p+2 significant bits, so f lies below the round bit. */
static uint64_t round_pack(int fmt, int sign, int exp, u128 sig, int sticky, int rm,
                           unsigned *flags)
{
    const fmtinfo *f = &FMT[fmt];
    const int p = f->fbits + 1, emin = 1 - f->bias, emax = f->bias;
    const int E = exp + msb128(sig);           /* value in [2^E, 2^(E+1)) */
    int q = E - f->fbits;                       /* exponent of the result's last bit */
    if (q < emin - f->fbits)
        q = emin - f->fbits;                    /* subnormal: fewer bits */
    int r, s;
    u128 kept = shr_rs(sig, q - exp, &r, &s);
    s |= sticky;
    const int inexact = r | s;
    if (round_up(rm, sign, (int)(kept & 1), r, s))
        kept++;
    if (kept >> p) {                            /* carried into a new bit: exact */
        kept >>= 1;
        q++;
    }
    if (inexact && E < emin) {
        /* Tininess after rounding: would the result, rounded to p bits with
         * an unbounded exponent, be below 2^emin? Only E = emin-1 can reach it. */
        int tiny = 1;
        if (E == emin - 1) {
            int r2, s2;
            u128 k2 = shr_rs(sig, E - f->fbits - exp, &r2, &s2);
            s2 |= sticky;
            if (round_up(rm, sign, (int)(k2 & 1), r2, s2))
                k2++;
            tiny = !(k2 >> p);
        }
        if (tiny)
            *flags |= SF_UF;
    }
    if (inexact)
        *flags |= SF_NX;
    if (kept == 0)
        return zero(fmt, sign);
    if (msb128(kept) < f->fbits)
        return pack(fmt, sign, 0, (uint64_t)kept);   /* subnormal */
    const int e = q + f->fbits;
    if (e > emax) {
        *flags |= SF_OF | SF_NX;
        return overflow_result(fmt, sign, rm);
    }
    return pack(fmt, sign, (uint64_t)(e + f->bias), (uint64_t)kept & ((1ull << f->fbits) - 1));
}

/* A finite nonzero value exactly as it is (for x + 0 and the like). */
static uint64_t repack(int fmt, const unp *u)
{
    unsigned ignored = 0;
    return round_pack(fmt, u->sign, u->exp, u->sig, 0, SF_RNE, &ignored);
}

/* (-1)^sa*ma*2^ea + (-1)^sb*mb*2^eb for nonzero significands of at most 124
 * bits: both are normalized to bit 124, the smaller is shifted right with
 * everything shifted out jammed into its last bit. With 70 or more bits
 * beyond any format's precision this rounds exactly like the true sum;
 * cancellation of more than one bit needs an exponent difference of at most
 * one, where the shift loses nothing. Returns 0 if the sum is exactly 0. */
static int add_sig(int sa, u128 ma, int ea, int sb, u128 mb, int eb, int *sign, u128 *sig,
                   int *exp)
{
    int sh = 124 - msb128(ma);
    ma <<= sh;
    ea -= sh;
    sh = 124 - msb128(mb);
    mb <<= sh;
    eb -= sh;
    if (ea < eb || (ea == eb && ma < mb)) {
        int ts = sa; sa = sb; sb = ts;
        u128 tm = ma; ma = mb; mb = tm;
        int te = ea; ea = eb; eb = te;
    }
    int r, s;
    u128 small = shr_rs(mb, ea - eb, &r, &s);
    if (r | s)
        small |= 1;
    *sig = sa == sb ? ma + small : ma - small;
    *sign = sa;
    *exp = ea;
    return *sig != 0;
}

static uint64_t add_op(int fmt, uint64_t a, uint64_t b, int neg_b, int rm, unsigned *fl)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    B.sign ^= neg_b;
    if (is_nan(&A) || is_nan(&B)) {
        if (A.cls == C_SNAN || B.cls == C_SNAN)
            *fl |= SF_NV;
        return canon(fmt);
    }
    if (A.cls == C_INF) {
        if (B.cls == C_INF && A.sign != B.sign) {
            *fl |= SF_NV;
            return canon(fmt);
        }
        return inf(fmt, A.sign);
    }
    if (B.cls == C_INF)
        return inf(fmt, B.sign);
    if (A.cls == C_ZERO && B.cls == C_ZERO)
        return zero(fmt, A.sign == B.sign ? A.sign : rm == SF_RDN);
    if (A.cls == C_ZERO)
        return repack(fmt, &B);
    if (B.cls == C_ZERO)
        return repack(fmt, &A);
    int s, e;
    u128 m;
    if (!add_sig(A.sign, A.sig, A.exp, B.sign, B.sig, B.exp, &s, &m, &e))
        return zero(fmt, rm == SF_RDN);
    return round_pack(fmt, s, e, m, 0, rm, fl);
}

uint64_t sf_add(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    return add_op(fmt, a, b, 0, rm, flags);
}

uint64_t sf_sub(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    return add_op(fmt, a, b, 1, rm, flags);
}

uint64_t sf_mul(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    const int sign = A.sign ^ B.sign;
    if (is_nan(&A) || is_nan(&B)) {
        if (A.cls == C_SNAN || B.cls == C_SNAN)
            *flags |= SF_NV;
        return canon(fmt);
    }
    if (A.cls == C_INF || B.cls == C_INF) {
        if (A.cls == C_ZERO || B.cls == C_ZERO) {
            *flags |= SF_NV;
            return canon(fmt);
        }
        return inf(fmt, sign);
    }
    if (A.cls == C_ZERO || B.cls == C_ZERO)
        return zero(fmt, sign);
    return round_pack(fmt, sign, A.exp + B.exp, A.sig * B.sig, 0, rm, flags);
}

uint64_t sf_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int neg_prod, int neg_c, int rm,
                unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b), C = unpack(fmt, c);
    C.sign ^= neg_c;
    const int ps = A.sign ^ B.sign ^ neg_prod;
    if (A.cls == C_SNAN || B.cls == C_SNAN || C.cls == C_SNAN)
        *flags |= SF_NV;
    if ((A.cls == C_INF && B.cls == C_ZERO) || (A.cls == C_ZERO && B.cls == C_INF)) {
        *flags |= SF_NV;   /* even when c is a quiet NaN */
        return canon(fmt);
    }
    if (is_nan(&A) || is_nan(&B) || is_nan(&C))
        return canon(fmt);
    if (A.cls == C_INF || B.cls == C_INF) {
        if (C.cls == C_INF && C.sign != ps) {
            *flags |= SF_NV;
            return canon(fmt);
        }
        return inf(fmt, ps);
    }
    if (C.cls == C_INF)
        return inf(fmt, C.sign);
    if (A.cls == C_ZERO || B.cls == C_ZERO) {
        if (C.cls == C_ZERO)
            return zero(fmt, ps == C.sign ? ps : rm == SF_RDN);
        return repack(fmt, &C);
    }
    u128 mp = A.sig * B.sig;   /* exact: at most 106 bits */
    int ep = A.exp + B.exp;
    if (C.cls == C_ZERO)
        return round_pack(fmt, ps, ep, mp, 0, rm, flags);
    int s, e;
    u128 m;
    if (!add_sig(ps, mp, ep, C.sign, C.sig, C.exp, &s, &m, &e))
        return zero(fmt, rm == SF_RDN);
    return round_pack(fmt, s, e, m, 0, rm, flags);
}

uint64_t sf_div(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    const int sign = A.sign ^ B.sign;
    if (is_nan(&A) || is_nan(&B)) {
        if (A.cls == C_SNAN || B.cls == C_SNAN)
            *flags |= SF_NV;
        return canon(fmt);
    }
    if (A.cls == C_INF) {
        if (B.cls == C_INF) {
            *flags |= SF_NV;
            return canon(fmt);
        }
        return inf(fmt, sign);
    }
    if (B.cls == C_INF)
        return zero(fmt, sign);
    if (B.cls == C_ZERO) {
        if (A.cls == C_ZERO) {
            *flags |= SF_NV;
            return canon(fmt);
        }
        *flags |= SF_DZ;
        return inf(fmt, sign);
    }
    if (A.cls == C_ZERO)
        return zero(fmt, sign);
    /* Dividend at bit 125, divisor below bit 53: a quotient of 72+ bits. */
    int sh = 125 - msb128(A.sig);
    u128 n = A.sig << sh;
    u128 q = n / B.sig, r = n % B.sig;
    return round_pack(fmt, sign, A.exp - sh - B.exp, q, r != 0, rm, flags);
}

/* floor(sqrt(x)) by the binary digit-by-digit method; *rem = x - root^2. */
static u128 isqrt128(u128 x, u128 *rem)
{
    u128 res = 0, one = (u128)1 << 126;
    while (one > x)
        one >>= 2;
    while (one) {
        if (x >= res + one) {
            x -= res + one;
            res = (res >> 1) + one;
        } else {
            res >>= 1;
        }
        one >>= 2;
    }
    *rem = x;
    return res;
}

uint64_t sf_sqrt(int fmt, uint64_t a, int rm, unsigned *flags)
{
    unp A = unpack(fmt, a);
    if (is_nan(&A)) {
        if (A.cls == C_SNAN)
            *flags |= SF_NV;
        return canon(fmt);
    }
    if (A.cls == C_ZERO)
        return a;   /* sqrt(-0) = -0 */
    if (A.sign) {
        *flags |= SF_NV;
        return canon(fmt);
    }
    if (A.cls == C_INF)
        return a;
    /* Significand near bit 124 with an even exponent: a root of 62+ bits. */
    int sh = 124 - msb128(A.sig);
    if ((A.exp - sh) & 1)
        sh++;
    u128 m = A.sig << sh, rem;
    int e = A.exp - sh;
    u128 root = isqrt128(m, &rem);
    return round_pack(fmt, 0, e / 2, root, rem != 0, rm, flags);
}

/* ---- comparisons and classification ---- */

static uint64_t sign_bit(int fmt) { return 1ull << (fmt == SF_F32 ? 31 : 63); }

/* A key whose unsigned order is the numeric order of non-NaN values, with
 * -0 just below +0. */
static uint64_t order_key(int fmt, uint64_t x)
{
    const uint64_t sb = sign_bit(fmt), mask = sb | (sb - 1);
    x &= mask;
    return (x & sb) ? (~x & mask) : (x | sb);
}

static int both_zero(int fmt, uint64_t a, uint64_t b)
{
    const uint64_t mag = sign_bit(fmt) - 1;
    return (a & mag) == 0 && (b & mag) == 0;
}

static uint64_t min_max(int fmt, uint64_t a, uint64_t b, int want_max, unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    if (A.cls == C_SNAN || B.cls == C_SNAN)
        *flags |= SF_NV;
    if (is_nan(&A) && is_nan(&B))
        return canon(fmt);
    if (is_nan(&A))
        return b;
    if (is_nan(&B))
        return a;
    int a_less = order_key(fmt, a) < order_key(fmt, b);
    return (a_less != want_max) ? a : b;
}

uint64_t sf_min(int fmt, uint64_t a, uint64_t b, unsigned *flags) { return min_max(fmt, a, b, 0, flags); }
uint64_t sf_max(int fmt, uint64_t a, uint64_t b, unsigned *flags) { return min_max(fmt, a, b, 1, flags); }

int sf_eq(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    if (is_nan(&A) || is_nan(&B)) {
        if (A.cls == C_SNAN || B.cls == C_SNAN)
            *flags |= SF_NV;
        return 0;
    }
    return both_zero(fmt, a, b) || a == b;
}

int sf_lt(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    if (is_nan(&A) || is_nan(&B)) {
        *flags |= SF_NV;
        return 0;
    }
    return !both_zero(fmt, a, b) && order_key(fmt, a) < order_key(fmt, b);
}

int sf_le(int fmt, uint64_t a, uint64_t b, unsigned *flags)
{
    unp A = unpack(fmt, a), B = unpack(fmt, b);
    if (is_nan(&A) || is_nan(&B)) {
        *flags |= SF_NV;
        return 0;
    }
    return both_zero(fmt, a, b) || order_key(fmt, a) <= order_key(fmt, b);
}

unsigned sf_class(int fmt, uint64_t a)
{
    const fmtinfo *f = &FMT[fmt];
    unp A = unpack(fmt, a);
    int subnormal = ((a >> f->fbits) & ((1u << f->ebits) - 1)) == 0;
    switch (A.cls) {
    case C_INF: return A.sign ? 1u << 0 : 1u << 7;
    case C_ZERO: return A.sign ? 1u << 3 : 1u << 4;
    case C_SNAN: return 1u << 8;
    case C_QNAN: return 1u << 9;
    default:
        if (subnormal)
            return A.sign ? 1u << 2 : 1u << 5;
        return A.sign ? 1u << 1 : 1u << 6;
    }
}

/* ---- conversions ---- */

uint64_t sf_to_int(int fmt, uint64_t a, int is_signed, int width, int rm, unsigned *flags)
{
    const u128 umax = width == 64 ? (u128)UINT64_MAX : (u128)UINT32_MAX;
    const u128 smax = width == 64 ? (u128)INT64_MAX : (u128)INT32_MAX;
    const uint64_t max = is_signed ? (uint64_t)smax : (uint64_t)umax;
    const uint64_t min = is_signed ? (uint64_t)-(int64_t)(smax) - 1 : 0;
    uint64_t result;
    unp A = unpack(fmt, a);
    if (is_nan(&A)) {
        *flags |= SF_NV;
        result = max;
    } else if (A.cls == C_INF) {
        *flags |= SF_NV;
        result = A.sign ? min : max;
    } else if (A.cls == C_ZERO) {
        result = 0;
    } else {
        int r = 0, s = 0;
        u128 mag;
        if (A.exp >= 0) {
            mag = (msb128(A.sig) + A.exp >= 66) ? ((u128)1 << 66) : A.sig << A.exp;
        } else {
            mag = shr_rs(A.sig, -A.exp, &r, &s);
            if (round_up(rm, A.sign, (int)(mag & 1), r, s))
                mag++;
        }
        u128 limit = is_signed ? (A.sign ? smax + 1 : smax) : (A.sign ? 0 : umax);
        if (mag > limit) {
            *flags |= SF_NV;
            result = A.sign ? min : max;
        } else {
            if (r | s)
                *flags |= SF_NX;
            result = A.sign ? (uint64_t)0 - (uint64_t)mag : (uint64_t)mag;
        }
    }
    if (width == 32)
        result = (uint64_t)(int64_t)(int32_t)(uint32_t)result;
    return result;
}

uint64_t sf_from_int(int fmt, uint64_t v, int is_signed, int width, int rm, unsigned *flags)
{
    if (width == 32)
        v = is_signed ? (uint64_t)(int64_t)(int32_t)(uint32_t)v : (uint32_t)v;
    int sign = is_signed && (int64_t)v < 0;
    uint64_t mag = sign ? (uint64_t)0 - v : v;
    if (mag == 0)
        return zero(fmt, 0);
    return round_pack(fmt, sign, 0, mag, 0, rm, flags);
}

uint64_t sf_convert(int to, int from, uint64_t a, int rm, unsigned *flags)
{
    unp A = unpack(from, a);
    if (is_nan(&A)) {
        if (A.cls == C_SNAN)
            *flags |= SF_NV;
        return canon(to);
    }
    if (A.cls == C_INF)
        return inf(to, A.sign);
    if (A.cls == C_ZERO)
        return zero(to, A.sign);
    return round_pack(to, A.sign, A.exp, A.sig, 0, rm, flags);
}

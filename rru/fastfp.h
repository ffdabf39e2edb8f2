/* rru/fastfp.h: the F/D operations of rru/softfp.h on the host FPU (or in
 * plain integer code) where the result is provably the RISC-V one, and
 * through softfp everywhere else.
 * Each ffp_X takes the arguments of sf_X and returns the same bits and ORs
 * the same flags into *flags, for every input, every rounding mode and every
 * value of *flags (the accrued flags may be passed: an inexact flag already
 * set saves the exactness test). The proofs are in rru/fastfp.c and
 * docs/machine.md ("Floating point").
 *
 * Precondition: the host floating-point environment is the default one
 * (round to nearest even, no flush-to-zero, no denormals-are-zero, traps
 * masked); ffp_host_ready() checks it. Callers that cannot promise it call
 * softfp directly. */
#ifndef RNR_RRU_FASTFP_H
#define RNR_RRU_FASTFP_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "rru/fastfp.h needs arithmetic in the operands' own formats (SSE2, never x87)"
#endif
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "rru/fastfp.h must not be built with -ffast-math"
#endif

/* Biased exponents of the results taken from the host: [LO, HI]. */
#define FFP_D_LO 64u     /* binary64 |R| >= 2^-959: its remainders are exact */
#define FFP_D_HI 2045u   /* |R| < 2^1023: R + ulp is finite */
#define FFP_F_LO 2u
#define FFP_F_HI 253u

/* 1 if the host floating-point environment is the default one (see above). */
int ffp_host_ready(void);

uint64_t ffp_add(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_sub(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_mul(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_div(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_sqrt(int fmt, uint64_t a, int rm, unsigned *flags);
uint64_t ffp_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int neg_prod, int neg_c, int rm,
                 unsigned *flags);
uint64_t ffp_min(int fmt, uint64_t a, uint64_t b, unsigned *flags);
uint64_t ffp_max(int fmt, uint64_t a, uint64_t b, unsigned *flags);
int ffp_eq(int fmt, uint64_t a, uint64_t b, unsigned *flags);
int ffp_lt(int fmt, uint64_t a, uint64_t b, unsigned *flags);
int ffp_le(int fmt, uint64_t a, uint64_t b, unsigned *flags);
uint64_t ffp_to_int(int fmt, uint64_t a, int is_signed, int width, int rm, unsigned *flags);
uint64_t ffp_from_int(int fmt, uint64_t v, int is_signed, int width, int rm, unsigned *flags);
uint64_t ffp_convert(int to, int from, uint64_t a, int rm, unsigned *flags);

/* ---- inline: the common case ----
 * Round to nearest even with NX already accrued, in the default host
 * environment: the host's result R is the answer whenever its exponent is
 * in [LO, HI] (rru/fastfp.c). Each ffp_rne_X returns 1 with the result in
 * *out, or 0 when ffp_X (or sf_X) must decide. One host operation each, so
 * contraction cannot change them. FMT is a constant at every call. */

static inline int ffp_rne_result(int fmt, uint64_t r, uint64_t *out)
{
    const unsigned e = fmt ? (unsigned)(r >> 52) & 0x7ff : (unsigned)(r >> 23) & 0xff;
    if (fmt ? e - FFP_D_LO > FFP_D_HI - FFP_D_LO : e - FFP_F_LO > FFP_F_HI - FFP_F_LO)
        return 0;
    *out = r;
    return 1;
}

/* Binary OP on the host in format FMT, to bits. */
#define FFP_HOST2(fmt, a, b, expr)                                              \
    do {                                                                        \
        if (fmt) {                                                              \
            double x_, y_, r_;                                                  \
            uint64_t ab_ = (a), bb_ = (b), rb_;                                 \
            memcpy(&x_, &ab_, 8);                                               \
            memcpy(&y_, &bb_, 8);                                               \
            r_ = expr;                                                          \
            memcpy(&rb_, &r_, 8);                                               \
            return ffp_rne_result(fmt, rb_, out);                               \
        } else {                                                                \
            float x_, y_, r_;                                                   \
            uint32_t ab_ = (uint32_t)(a), bb_ = (uint32_t)(b), rb_;             \
            memcpy(&x_, &ab_, 4);                                               \
            memcpy(&y_, &bb_, 4);                                               \
            r_ = expr;                                                          \
            memcpy(&rb_, &r_, 4);                                               \
            return ffp_rne_result(fmt, rb_, out);                               \
        }                                                                       \
    } while (0)

static inline int ffp_rne_add(int fmt, uint64_t a, uint64_t b, uint64_t *out)
{
    FFP_HOST2(fmt, a, b, x_ + y_);
}
static inline int ffp_rne_sub(int fmt, uint64_t a, uint64_t b, uint64_t *out)
{
    FFP_HOST2(fmt, a, b, x_ - y_);
}
static inline int ffp_rne_mul(int fmt, uint64_t a, uint64_t b, uint64_t *out)
{
    FFP_HOST2(fmt, a, b, x_ * y_);
}
static inline int ffp_rne_div(int fmt, uint64_t a, uint64_t b, uint64_t *out)
{
    FFP_HOST2(fmt, a, b, x_ / y_);
}
static inline int ffp_rne_sqrt(int fmt, uint64_t a, uint64_t *out)
{
    FFP_HOST2(fmt, a, a, fmt ? sqrt(x_) : sqrtf(x_));
}
/* binary64 only (binary32 needs more than one host operation). */
static inline int ffp_rne_fma64(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    double x, y, z, r;
    uint64_t rb;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    memcpy(&z, &c, 8);
    r = fma(x, y, z);
    memcpy(&rb, &r, 8);
    return ffp_rne_result(1, rb, out);
}

#endif

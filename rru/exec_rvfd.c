/* rru/exec_rvfd.c: bodies of the F and D extensions, on rru/softfp.c, with
 * the arithmetic through rru/fastfp.c (the host FPU where that is exact)
 * while the hart's fp_fast is set.
 * Singles live NaN-boxed in 64-bit registers: a single whose upper half is
 * not all ones reads as the canonical NaN; every single result is boxed.
 * Every instruction with an rm field traps as illegal on an invalid rounding
 * mode (static 5 or 6, or dynamic with frm >= 5), exact ones included. */
#include "rru/fastfp.h"
#include "rru/internal.h"
#include "rru/softfp.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)
#define F(r) (h->ctx.f[(r)])
#define BOX32(v) (0xffffffff00000000ull | (uint32_t)(v))

static inline uint64_t unbox(uint64_t v)
{
    return (v >> 32) == 0xffffffffu ? (uint32_t)v : SF32_CANONICAL_NAN;
}

/* Operand of format FMT (0 single, 1 double) from register R. */
static inline uint64_t src(rru_hart *h, int fmt, unsigned r) { return fmt ? F(r) : unbox(F(r)); }
static inline void put(rru_hart *h, int fmt, unsigned r, uint64_t v) { F(r) = fmt ? v : BOX32(v); }

static inline int rounding(const rru_hart *h, const rru_insn *d)
{
    unsigned rm = d->rm == 7 ? h->ctx.frm : d->rm;
    return rm <= SF_RMM ? (int)rm : -1;
}

/* The operations OR their flags straight into the accrued ones, FL
 * (fastfp uses an NX already set to skip its exactness test). */
#define NEED_RM                                                 \
    int rm = rounding(h, d);                                    \
    if (RRU_UNLIKELY(rm < 0))                                   \
        return rru_trap(h, d, RRU_CAUSE_ILLEGAL, d->raw)

#define FL (&h->ctx.fflags)

#define DONE return rru_next(h, d)

/* The arithmetic: host FPU where exact, or the software path only. */
#define ARITH(name) (h->fp_fast ? ffp_##name : sf_##name)
/* The common case, inline: RNE with inexact accrued (rru/fastfp.h). */
#define RNE_NX (rm == SF_RNE && (h->ctx.fflags & SF_NX) && h->fp_fast)

/* ---- loads, stores, moves ---- */

BODY(flw)
{
    const uint64_t a = X(RS1) + (uint64_t)IMM;
    const uint8_t *p = rru_load_direct(h, a, 4);
    if (RRU_UNLIKELY(!p))
        return rru_load_slow(h, d, a);
    uint32_t v;
    memcpy(&v, p, 4);
    F(RD) = BOX32(v);
    return rru_next(h, d);
}

BODY(fld)
{
    const uint64_t a = X(RS1) + (uint64_t)IMM;
    const uint8_t *p = rru_load_direct(h, a, 8);
    if (RRU_UNLIKELY(!p))
        return rru_load_slow(h, d, a);
    memcpy(&F(RD), p, 8);
    return rru_next(h, d);
}

BODY(fsw)
{
    const uint64_t a = X(RS1) + (uint64_t)IMM;
    uint8_t *p = rru_store_direct(h, a, 4);
    if (RRU_UNLIKELY(!p))
        return rru_store_slow(h, d, a, F(RS2));
    const uint32_t v = (uint32_t)F(RS2);
    memcpy(p, &v, 4);
    return rru_next(h, d);
}

BODY(fsd)
{
    const uint64_t a = X(RS1) + (uint64_t)IMM;
    uint8_t *p = rru_store_direct(h, a, 8);
    if (RRU_UNLIKELY(!p))
        return rru_store_slow(h, d, a, F(RS2));
    memcpy(p, &F(RS2), 8);
    return rru_next(h, d);
}

BODY(fmv_x_w) { X(RD) = (uint64_t)(int64_t)(int32_t)(uint32_t)F(RS1); return rru_next(h, d); }
BODY(fmv_w_x) { F(RD) = BOX32(X(RS1)); return rru_next(h, d); }
BODY(fmv_x_d) { X(RD) = F(RS1); return rru_next(h, d); }
BODY(fmv_d_x) { F(RD) = X(RS1); return rru_next(h, d); }

/* ---- arithmetic ---- */

#define ARITH2(name, fmt, fn)                                               \
    BODY(name)                                                              \
    {                                                                       \
        NEED_RM;                                                            \
        uint64_t a = src(h, fmt, RS1), b = src(h, fmt, RS2), v;             \
        if (!(RNE_NX && ffp_rne_##fn(fmt, a, b, &v)))                       \
            v = ARITH(fn)(fmt, a, b, rm, FL);                               \
        put(h, fmt, RD, v);                                                 \
        DONE;                                                               \
    }
ARITH2(fadd_s, SF_F32, add)
ARITH2(fsub_s, SF_F32, sub)
ARITH2(fmul_s, SF_F32, mul)
ARITH2(fdiv_s, SF_F32, div)
ARITH2(fadd_d, SF_F64, add)
ARITH2(fsub_d, SF_F64, sub)
ARITH2(fmul_d, SF_F64, mul)
ARITH2(fdiv_d, SF_F64, div)

#define SQRT(name, fmt)                                                     \
    BODY(name)                                                              \
    {                                                                       \
        NEED_RM;                                                            \
        uint64_t a = src(h, fmt, RS1), v;                                   \
        if (!(RNE_NX && ffp_rne_sqrt(fmt, a, &v)))                          \
            v = ARITH(sqrt)(fmt, a, rm, FL);                                \
        put(h, fmt, RD, v);                                                 \
        DONE;                                                               \
    }
SQRT(fsqrt_s, SF_F32)
SQRT(fsqrt_d, SF_F64)

/* The inline case applies the negations to the operands: exact. */
#define FMA(name, fmt, neg_prod, neg_c)                                         \
    BODY(name)                                                                  \
    {                                                                           \
        NEED_RM;                                                                \
        uint64_t a = src(h, fmt, RS1), b = src(h, fmt, RS2);                    \
        uint64_t c = src(h, fmt, d->rs3), v;                                    \
        if (!(fmt == SF_F64 && RNE_NX &&                                        \
              ffp_rne_fma64(a ^ ((uint64_t)(neg_prod) << 63), b,                \
                            c ^ ((uint64_t)(neg_c) << 63), &v)))                \
            v = ARITH(fma)(fmt, a, b, c, neg_prod, neg_c, rm, FL);              \
        put(h, fmt, RD, v);                                                     \
        DONE;                                                                   \
    }
FMA(fmadd_s, SF_F32, 0, 0)
FMA(fmsub_s, SF_F32, 0, 1)
FMA(fnmsub_s, SF_F32, 1, 0)
FMA(fnmadd_s, SF_F32, 1, 1)
FMA(fmadd_d, SF_F64, 0, 0)
FMA(fmsub_d, SF_F64, 0, 1)
FMA(fnmsub_d, SF_F64, 1, 0)
FMA(fnmadd_d, SF_F64, 1, 1)

/* ---- sign injection, min/max, compare, classify ---- */

#define SIGN(fmt) ((fmt) ? 1ull << 63 : 1ull << 31)
#define SGNJ(name, fmt, expr)                                   \
    BODY(name)                                                  \
    {                                                           \
        uint64_t a = src(h, fmt, RS1), b = src(h, fmt, RS2);    \
        uint64_t sb = SIGN(fmt);                                \
        put(h, fmt, RD, (a & ~sb) | ((expr) & sb));             \
        return rru_next(h, d);                                  \
    }
SGNJ(fsgnj_s, SF_F32, b)
SGNJ(fsgnjn_s, SF_F32, ~b)
SGNJ(fsgnjx_s, SF_F32, a ^ b)
SGNJ(fsgnj_d, SF_F64, b)
SGNJ(fsgnjn_d, SF_F64, ~b)
SGNJ(fsgnjx_d, SF_F64, a ^ b)

#define MINMAX(name, fmt, fn)                                               \
    BODY(name)                                                              \
    {                                                                       \
        put(h, fmt, RD, ARITH(fn)(fmt, src(h, fmt, RS1), src(h, fmt, RS2), FL)); \
        DONE;                                                               \
    }
MINMAX(fmin_s, SF_F32, min)
MINMAX(fmax_s, SF_F32, max)
MINMAX(fmin_d, SF_F64, min)
MINMAX(fmax_d, SF_F64, max)

#define CMP(name, fmt, fn)                                                          \
    BODY(name)                                                                      \
    {                                                                               \
        X(RD) = (uint64_t)ARITH(fn)(fmt, src(h, fmt, RS1), src(h, fmt, RS2), FL);   \
        DONE;                                                                       \
    }
CMP(feq_s, SF_F32, eq)
CMP(flt_s, SF_F32, lt)
CMP(fle_s, SF_F32, le)
CMP(feq_d, SF_F64, eq)
CMP(flt_d, SF_F64, lt)
CMP(fle_d, SF_F64, le)

BODY(fclass_s) { X(RD) = sf_class(SF_F32, src(h, SF_F32, RS1)); return rru_next(h, d); }
BODY(fclass_d) { X(RD) = sf_class(SF_F64, src(h, SF_F64, RS1)); return rru_next(h, d); }

/* ---- conversions ---- */

#define TO_INT(name, fmt, is_signed, width)                                         \
    BODY(name)                                                                      \
    {                                                                               \
        NEED_RM;                                                                    \
        X(RD) = ARITH(to_int)(fmt, src(h, fmt, RS1), is_signed, width, rm, FL);     \
        DONE;                                                                       \
    }
TO_INT(fcvt_w_s, SF_F32, 1, 32)
TO_INT(fcvt_wu_s, SF_F32, 0, 32)
TO_INT(fcvt_l_s, SF_F32, 1, 64)
TO_INT(fcvt_lu_s, SF_F32, 0, 64)
TO_INT(fcvt_w_d, SF_F64, 1, 32)
TO_INT(fcvt_wu_d, SF_F64, 0, 32)
TO_INT(fcvt_l_d, SF_F64, 1, 64)
TO_INT(fcvt_lu_d, SF_F64, 0, 64)

#define FROM_INT(name, fmt, is_signed, width)                                       \
    BODY(name)                                                                      \
    {                                                                               \
        NEED_RM;                                                                    \
        put(h, fmt, RD, ARITH(from_int)(fmt, X(RS1), is_signed, width, rm, FL));    \
        DONE;                                                                       \
    }
FROM_INT(fcvt_s_w, SF_F32, 1, 32)
FROM_INT(fcvt_s_wu, SF_F32, 0, 32)
FROM_INT(fcvt_s_l, SF_F32, 1, 64)
FROM_INT(fcvt_s_lu, SF_F32, 0, 64)
FROM_INT(fcvt_d_w, SF_F64, 1, 32)
FROM_INT(fcvt_d_wu, SF_F64, 0, 32)
FROM_INT(fcvt_d_l, SF_F64, 1, 64)
FROM_INT(fcvt_d_lu, SF_F64, 0, 64)

BODY(fcvt_s_d)
{
    NEED_RM;
    put(h, SF_F32, RD, ARITH(convert)(SF_F32, SF_F64, src(h, SF_F64, RS1), rm, FL));
    DONE;
}

BODY(fcvt_d_s)
{
    NEED_RM;
    put(h, SF_F64, RD, ARITH(convert)(SF_F64, SF_F32, src(h, SF_F32, RS1), rm, FL));
    DONE;
}

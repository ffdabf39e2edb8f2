/* rru/exec_rvm.c: bodies of the M extension (multiply, divide). Division by
 * zero and overflow give the results the ISA defines, never a host trap. */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)
/* A forwarding variant (rru_fwd_row; see exec_rvi.c). */
#define VBODY(name) static int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)
#define W(expr) ((uint64_t)(int64_t)(int32_t)(uint32_t)(expr))
#define S(x) ((int64_t)(x))

typedef __int128 i128;
typedef unsigned __int128 u128;

static uint64_t div_s(int64_t a, int64_t b)
{
    if (b == 0)
        return ~0ull;
    if (a == INT64_MIN && b == -1)
        return (uint64_t)a;
    return (uint64_t)(a / b);
}
static uint64_t rem_s(int64_t a, int64_t b)
{
    if (b == 0)
        return (uint64_t)a;
    if (a == INT64_MIN && b == -1)
        return 0;
    return (uint64_t)(a % b);
}
static uint64_t div_u(uint64_t a, uint64_t b) { return b ? a / b : ~0ull; }
static uint64_t rem_u(uint64_t a, uint64_t b) { return b ? a % b : a; }

static uint64_t div_sw(int32_t a, int32_t b)
{
    if (b == 0)
        return ~0ull;
    if (a == INT32_MIN && b == -1)
        return (uint64_t)(int64_t)a;
    return (uint64_t)(int64_t)(a / b);
}
static uint64_t rem_sw(int32_t a, int32_t b)
{
    if (b == 0)
        return (uint64_t)(int64_t)a;
    if (a == INT32_MIN && b == -1)
        return 0;
    return (uint64_t)(int64_t)(a % b);
}

/* An integer result R: written to rd and passed on to the next body. */
static inline int result(rru_hart *h, const rru_insn *d, uint64_t r)
{
    X(RD) = r;
    return rru_next_v(h, d, r);
}

/* The operation on a, b (the values of rs1, rs2), its plain body and its
 * forwarding variants: _v1 takes rs1 from fv, _v2 rs2, _v12 both. */
#define RR_BODIES(name, expr)                                                   \
    static inline uint64_t op_##name(uint64_t a, uint64_t b) { return (expr); } \
    BODY(name) { return result(h, d, op_##name(X(RS1), X(RS2))); }             \
    VBODY(name##_v1) { return result(h, d, op_##name(fv, X(RS2))); }           \
    VBODY(name##_v2) { return result(h, d, op_##name(X(RS1), fv)); }           \
    VBODY(name##_v12) { return result(h, d, op_##name(fv, fv)); }
#define RR_ROW(name, expr) {RRU_OP_##name, rru_x_##name##_v1, rru_x_##name##_v2, rru_x_##name##_v12},

#define RVM_RR(M)                                                               \
    M(mul, a * b)                                                               \
    M(mulh, (uint64_t)(((i128)S(a) * (i128)S(b)) >> 64))                        \
    M(mulhsu, (uint64_t)(((i128)S(a) * (i128)(u128)b) >> 64))                   \
    M(mulhu, (uint64_t)(((u128)a * (u128)b) >> 64))                             \
    M(div, div_s(S(a), S(b)))                                                   \
    M(divu, div_u(a, b))                                                        \
    M(rem, rem_s(S(a), S(b)))                                                   \
    M(remu, rem_u(a, b))                                                        \
    M(mulw, W((uint32_t)a * (uint32_t)b))                                       \
    M(divw, div_sw((int32_t)a, (int32_t)b))                                     \
    M(divuw, W((uint32_t)b ? (uint32_t)a / (uint32_t)b : ~0u))                  \
    M(remw, rem_sw((int32_t)a, (int32_t)b))                                     \
    M(remuw, W((uint32_t)b ? (uint32_t)a % (uint32_t)b : (uint32_t)a))

RVM_RR(RR_BODIES)

const rru_fwd_row rru_fwd_rvm[] = {RVM_RR(RR_ROW)};
const unsigned rru_fwd_rvm_n = sizeof rru_fwd_rvm / sizeof rru_fwd_rvm[0];

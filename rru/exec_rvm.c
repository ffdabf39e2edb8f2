/* rru/exec_rvm.c: bodies of the M extension (multiply, divide). Division by
 * zero and overflow give the results the ISA defines, never a host trap. */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d)
#define ALU(name, expr) BODY(name) { X(RD) = (expr); return rru_next(h, d); }
#define W(expr) ((uint64_t)(int64_t)(int32_t)(uint32_t)(expr))

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

ALU(mul, X(RS1) * X(RS2))
ALU(mulh, (uint64_t)(((i128)XS(RS1) * (i128)XS(RS2)) >> 64))
ALU(mulhsu, (uint64_t)(((i128)XS(RS1) * (i128)(u128)X(RS2)) >> 64))
ALU(mulhu, (uint64_t)(((u128)X(RS1) * (u128)X(RS2)) >> 64))
ALU(div, div_s(XS(RS1), XS(RS2)))
ALU(divu, div_u(X(RS1), X(RS2)))
ALU(rem, rem_s(XS(RS1), XS(RS2)))
ALU(remu, rem_u(X(RS1), X(RS2)))
ALU(mulw, W((uint32_t)X(RS1) * (uint32_t)X(RS2)))
ALU(divw, div_sw((int32_t)X(RS1), (int32_t)X(RS2)))
ALU(divuw, W((uint32_t)X(RS2) ? (uint32_t)X(RS1) / (uint32_t)X(RS2) : ~0u))
ALU(remw, rem_sw((int32_t)X(RS1), (int32_t)X(RS2)))
ALU(remuw, W((uint32_t)X(RS2) ? (uint32_t)X(RS1) % (uint32_t)X(RS2) : (uint32_t)X(RS1)))

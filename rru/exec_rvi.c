/* rru/exec_rvi.c: bodies of the RV64I instructions (and Zifencei). */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)
/* A forwarding variant (rru_fwd_row): FV is x[rd] of the previous
 * instruction, which the decoder found to be the operand taken from it. */
#define VBODY(name) static int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)

BODY(lui) { X(RD) = (uint64_t)IMM; return rru_next_v(h, d, (uint64_t)IMM); }
BODY(auipc) { X(RD) = d->pc + (uint64_t)IMM; return rru_next_v(h, d, d->pc + (uint64_t)IMM); }

/* Control transfers end their block: they leave it through rru_jump. */
BODY(jal)
{
    X(RD) = NEXT_PC;
    return rru_jump(h, d, d->pc + (uint64_t)IMM);
}

BODY(jalr)
{
    uint64_t target = (X(RS1) + (uint64_t)IMM) & ~1ull;
    X(RD) = NEXT_PC;
    return rru_jump(h, d, target);
}

/* An integer result R: written to rd and passed on to the next body. */
static inline int result(rru_hart *h, const rru_insn *d, uint64_t r)
{
    X(RD) = r;
    return rru_next_v(h, d, r);
}

/* Each kind of body below is one inline operation on its operands (a, b:
 * the values of rs1, rs2), then the plain body, which reads them from the
 * context, and its forwarding variants: _v1 takes rs1 from fv, _v2 rs2,
 * _v12 both. The lists make the bodies and the rows of rru_fwd_rvi. */

#define BRANCH(name, cond)                                                      \
    static inline int op_##name(rru_hart *h, const rru_insn *d, uint64_t a,    \
                                uint64_t b)                                     \
    {                                                                           \
        if (cond)                                                               \
            return rru_jump(h, d, d->pc + (uint64_t)IMM);                       \
        return rru_next(h, d);                                                  \
    }
#define LOAD(name, type)                                                        \
    static inline int op_##name(rru_hart *h, const rru_insn *d, uint64_t a,    \
                                uint64_t b)                                     \
    {                                                                           \
        a += (uint64_t)IMM;                                                     \
        const uint8_t *p = rru_load_direct(h, a, sizeof(type));                 \
        if (RRU_UNLIKELY(!p))                                                   \
            return rru_load_slow(h, d, a);                                      \
        type x;                                                                 \
        memcpy(&x, p, sizeof x);                                                \
        return result(h, d, (uint64_t)(int64_t)x);                              \
    }
#define STORE(name, type)                                                       \
    static inline int op_##name(rru_hart *h, const rru_insn *d, uint64_t a,    \
                                uint64_t b)                                     \
    {                                                                           \
        a += (uint64_t)IMM;                                                     \
        uint8_t *p = rru_store_direct(h, a, sizeof(type));                      \
        if (RRU_UNLIKELY(!p))                                                   \
            return rru_store_slow(h, d, a, b);                                  \
        type x = (type)b;                                                       \
        memcpy(p, &x, sizeof x);                                                \
        return rru_next(h, d);                                                  \
    }
/* ALU: register-register; ALUI: register-immediate (b unused). */
#define ALU(name, expr)                                                         \
    static inline int op_##name(rru_hart *h, const rru_insn *d, uint64_t a,    \
                                uint64_t b)                                     \
    {                                                                           \
        return result(h, d, (expr));                                            \
    }
#define ALUI ALU

/* Both operands: the plain body and three variants. */
#define RR_BODIES(kind, name, ...)                                              \
    kind(name, __VA_ARGS__)                                                     \
    BODY(name) { return op_##name(h, d, X(RS1), X(RS2)); }                      \
    VBODY(name##_v1) { return op_##name(h, d, fv, X(RS2)); }                    \
    VBODY(name##_v2) { return op_##name(h, d, X(RS1), fv); }                    \
    VBODY(name##_v12) { return op_##name(h, d, fv, fv); }
#define RR_ROW(kind, name, ...) {RRU_OP_##name, rru_x_##name##_v1, rru_x_##name##_v2, rru_x_##name##_v12},
/* rs1 only. */
#define R1_BODIES(kind, name, ...)                                              \
    kind(name, __VA_ARGS__)                                                     \
    BODY(name) { return op_##name(h, d, X(RS1), 0); }                           \
    VBODY(name##_v1) { return op_##name(h, d, fv, 0); }
#define R1_ROW(kind, name, ...) {RRU_OP_##name, rru_x_##name##_v1, NULL, NULL},

#define W(expr) ((uint64_t)(int64_t)(int32_t)(uint32_t)(expr))
#define S(x) ((int64_t)(x))

#define RVI_RR(M)                                                               \
    M(BRANCH, beq, a == b)                                                      \
    M(BRANCH, bne, a != b)                                                      \
    M(BRANCH, blt, S(a) < S(b))                                                 \
    M(BRANCH, bge, S(a) >= S(b))                                                \
    M(BRANCH, bltu, a < b)                                                      \
    M(BRANCH, bgeu, a >= b)                                                     \
    M(STORE, sb, uint8_t)                                                       \
    M(STORE, sh, uint16_t)                                                      \
    M(STORE, sw, uint32_t)                                                      \
    M(STORE, sd, uint64_t)                                                      \
    M(ALU, add, a + b)                                                          \
    M(ALU, sub, a - b)                                                          \
    M(ALU, sll, a << (b & 63))                                                  \
    M(ALU, slt, S(a) < S(b))                                                    \
    M(ALU, sltu, a < b)                                                         \
    M(ALU, xor, a ^ b)                                                          \
    M(ALU, srl, a >> (b & 63))                                                  \
    M(ALU, sra, (uint64_t)(S(a) >> (b & 63)))                                   \
    M(ALU, or, a | b)                                                           \
    M(ALU, and, a & b)                                                          \
    M(ALU, addw, W(a + b))                                                      \
    M(ALU, subw, W(a - b))                                                      \
    M(ALU, sllw, W((uint32_t)a << (b & 31)))                                    \
    M(ALU, srlw, W((uint32_t)a >> (b & 31)))                                    \
    M(ALU, sraw, (uint64_t)(int64_t)((int32_t)a >> (b & 31)))

#define RVI_R1(M)                                                               \
    M(LOAD, lb, int8_t)                                                         \
    M(LOAD, lh, int16_t)                                                        \
    M(LOAD, lw, int32_t)                                                        \
    M(LOAD, ld, int64_t)                                                        \
    M(LOAD, lbu, uint8_t)                                                       \
    M(LOAD, lhu, uint16_t)                                                      \
    M(LOAD, lwu, uint32_t)                                                      \
    M(ALUI, addi, a + (uint64_t)IMM)                                            \
    M(ALUI, slti, S(a) < IMM)                                                   \
    M(ALUI, sltiu, a < (uint64_t)IMM)                                           \
    M(ALUI, xori, a ^ (uint64_t)IMM)                                            \
    M(ALUI, ori, a | (uint64_t)IMM)                                             \
    M(ALUI, andi, a & (uint64_t)IMM)                                            \
    M(ALUI, slli, a << IMM)                                                     \
    M(ALUI, srli, a >> IMM)                                                     \
    M(ALUI, srai, (uint64_t)(S(a) >> IMM))                                      \
    M(ALUI, addiw, W(a + (uint64_t)IMM))                                        \
    M(ALUI, slliw, W((uint32_t)a << IMM))                                       \
    M(ALUI, srliw, W((uint32_t)a >> IMM))                                       \
    M(ALUI, sraiw, (uint64_t)(int64_t)((int32_t)a >> IMM))

RVI_RR(RR_BODIES)
RVI_R1(R1_BODIES)

const rru_fwd_row rru_fwd_rvi[] = {RVI_RR(RR_ROW) RVI_R1(R1_ROW)};
const unsigned rru_fwd_rvi_n = sizeof rru_fwd_rvi / sizeof rru_fwd_rvi[0];

/* One total order of accesses: every fence is already satisfied. */
BODY(fence) { return rru_next(h, d); }

BODY(fence_i)
{
    h->ctx.pc = NEXT_PC;
    return rru_exit(h, d, RRU_X_FENCEI);
}

BODY(ecall)
{
    h->ctx.pc = NEXT_PC;
    return rru_exit(h, d, RRU_X_ECALL);
}

BODY(ebreak) { return rru_trap(h, d, RRU_CAUSE_BREAKPOINT, d->pc); }
BODY(illegal) { return rru_trap(h, d, RRU_CAUSE_ILLEGAL, d->raw); }

/* The sentinel after the last instruction of a cut block: the run stops. */
BODY(end)
{
    h->ctx.pc = d->pc;
    return rru_exit(h, d, RRU_X_END);
}

/* The sentinel after the last instruction of a decoded block (its end
 * falls through to the next pc: a branch not taken, or the block is full
 * or at the end of its page). */
BODY(fall) { return rru_leave(h, d, &h->cur_blk->link[RRU_WAY_FALL], d->pc, RRU_X_END); }

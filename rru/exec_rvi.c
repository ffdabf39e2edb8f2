/* rru/exec_rvi.c: bodies of the RV64I instructions (and Zifencei). */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d)

BODY(lui) { X(RD) = (uint64_t)IMM; return rru_next(h, d); }
BODY(auipc) { X(RD) = d->pc + (uint64_t)IMM; return rru_next(h, d); }

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

#define BRANCH(name, cond)                                                      \
    BODY(name)                                                                  \
    {                                                                           \
        if (cond)                                                               \
            return rru_jump(h, d, d->pc + (uint64_t)IMM);                       \
        return rru_next(h, d);                                                  \
    }
BRANCH(beq, X(RS1) == X(RS2))
BRANCH(bne, X(RS1) != X(RS2))
BRANCH(blt, XS(RS1) < XS(RS2))
BRANCH(bge, XS(RS1) >= XS(RS2))
BRANCH(bltu, X(RS1) < X(RS2))
BRANCH(bgeu, X(RS1) >= X(RS2))

#define LOAD(name, type, size)                                          \
    BODY(name)                                                          \
    {                                                                   \
        const uint64_t a = X(RS1) + (uint64_t)IMM;                      \
        const uint8_t *p = rru_load_direct(h, a, size);                 \
        if (RRU_UNLIKELY(!p))                                           \
            return rru_load_slow(h, d, a);                              \
        type v;                                                         \
        memcpy(&v, p, size);                                            \
        X(RD) = (uint64_t)(int64_t)v;                                   \
        return rru_next(h, d);                                          \
    }
LOAD(lb, int8_t, 1)
LOAD(lh, int16_t, 2)
LOAD(lw, int32_t, 4)
LOAD(ld, int64_t, 8)
LOAD(lbu, uint8_t, 1)
LOAD(lhu, uint16_t, 2)
LOAD(lwu, uint32_t, 4)

#define STORE(name, type, size)                                         \
    BODY(name)                                                          \
    {                                                                   \
        const uint64_t a = X(RS1) + (uint64_t)IMM;                      \
        uint8_t *p = rru_store_direct(h, a, size);                      \
        if (RRU_UNLIKELY(!p))                                           \
            return rru_store_slow(h, d, a, X(RS2));                     \
        type v = (type)X(RS2);                                          \
        memcpy(p, &v, size);                                            \
        return rru_next(h, d);                                          \
    }
STORE(sb, uint8_t, 1)
STORE(sh, uint16_t, 2)
STORE(sw, uint32_t, 4)
STORE(sd, uint64_t, 8)

#define ALU(name, expr) BODY(name) { X(RD) = (expr); return rru_next(h, d); }
#define W(expr) ((uint64_t)(int64_t)(int32_t)(uint32_t)(expr))
ALU(addi, X(RS1) + (uint64_t)IMM)
ALU(slti, XS(RS1) < IMM)
ALU(sltiu, X(RS1) < (uint64_t)IMM)
ALU(xori, X(RS1) ^ (uint64_t)IMM)
ALU(ori, X(RS1) | (uint64_t)IMM)
ALU(andi, X(RS1) & (uint64_t)IMM)
ALU(slli, X(RS1) << IMM)
ALU(srli, X(RS1) >> IMM)
ALU(srai, (uint64_t)(XS(RS1) >> IMM))
ALU(add, X(RS1) + X(RS2))
ALU(sub, X(RS1) - X(RS2))
ALU(sll, X(RS1) << (X(RS2) & 63))
ALU(slt, XS(RS1) < XS(RS2))
ALU(sltu, X(RS1) < X(RS2))
ALU(xor, X(RS1) ^ X(RS2))
ALU(srl, X(RS1) >> (X(RS2) & 63))
ALU(sra, (uint64_t)(XS(RS1) >> (X(RS2) & 63)))
ALU(or, X(RS1) | X(RS2))
ALU(and, X(RS1) & X(RS2))
ALU(addiw, W(X(RS1) + (uint64_t)IMM))
ALU(slliw, W((uint32_t)X(RS1) << IMM))
ALU(srliw, W((uint32_t)X(RS1) >> IMM))
ALU(sraiw, (uint64_t)(int64_t)((int32_t)X(RS1) >> IMM))
ALU(addw, W(X(RS1) + X(RS2)))
ALU(subw, W(X(RS1) - X(RS2)))
ALU(sllw, W((uint32_t)X(RS1) << (X(RS2) & 31)))
ALU(srlw, W((uint32_t)X(RS1) >> (X(RS2) & 31)))
ALU(sraw, (uint64_t)(int64_t)((int32_t)X(RS1) >> (X(RS2) & 31)))

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

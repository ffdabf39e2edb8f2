/* rru/exec_rvi.c: bodies of the RV64I instructions (and Zifencei). */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d)

BODY(lui) { X(RD) = (uint64_t)IMM; return RRU_X_NEXT; }
BODY(auipc) { X(RD) = d->pc + (uint64_t)IMM; return RRU_X_NEXT; }

BODY(jal)
{
    X(RD) = NEXT_PC;
    h->ctx.pc = d->pc + (uint64_t)IMM;
    return RRU_X_JUMP;
}

BODY(jalr)
{
    uint64_t target = (X(RS1) + (uint64_t)IMM) & ~1ull;
    X(RD) = NEXT_PC;
    h->ctx.pc = target;
    return RRU_X_JUMP;
}

#define BRANCH(name, cond)                                  \
    BODY(name)                                              \
    {                                                       \
        if (cond) {                                         \
            h->ctx.pc = d->pc + (uint64_t)IMM;              \
            return RRU_X_JUMP;                              \
        }                                                   \
        return RRU_X_NEXT;                                  \
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
        type v;                                                         \
        int s = rru_load(h, d, X(RS1) + (uint64_t)IMM, size, &v);      \
        if (RRU_UNLIKELY(s))                                            \
            return s;                                                   \
        X(RD) = (uint64_t)(int64_t)v;                                   \
        return RRU_X_NEXT;                                              \
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
        type v = (type)X(RS2);                                          \
        return rru_store(h, d, X(RS1) + (uint64_t)IMM, size, &v);       \
    }
STORE(sb, uint8_t, 1)
STORE(sh, uint16_t, 2)
STORE(sw, uint32_t, 4)
STORE(sd, uint64_t, 8)

#define ALU(name, expr) BODY(name) { X(RD) = (expr); return RRU_X_NEXT; }
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
BODY(fence) { return RRU_X_NEXT; }

BODY(fence_i)
{
    h->ctx.pc = NEXT_PC;
    return RRU_X_FENCEI;
}

BODY(ecall)
{
    h->ctx.pc = NEXT_PC;
    return RRU_X_ECALL;
}

BODY(ebreak) { return rru_trap(h, RRU_CAUSE_BREAKPOINT, d->pc); }
BODY(illegal) { return rru_trap(h, RRU_CAUSE_ILLEGAL, d->raw); }

/* The sentinel after the last instruction of a block. */
BODY(end)
{
    h->ctx.pc = d->pc;
    return RRU_X_END;
}

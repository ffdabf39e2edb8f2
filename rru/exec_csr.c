/* rru/exec_csr.c: bodies of Zicsr: fflags, frm, fcsr, and the read-only
 * counters cycle, time, instret (nondeterministic inputs: their reads go
 * through the environment's csr_read). Anything else is illegal, as a write
 * to a counter is. */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)

static int csr_known(unsigned csr)
{
    switch (csr) {
    case RRU_CSR_FFLAGS: case RRU_CSR_FRM: case RRU_CSR_FCSR:
    case RRU_CSR_CYCLE: case RRU_CSR_TIME: case RRU_CSR_INSTRET:
        return 1;
    default:
        return 0;
    }
}

static int csr_read_only(unsigned csr) { return (csr >> 10) == 3; }

static uint64_t csr_read(rru_hart *h, const rru_insn *d, unsigned csr)
{
    uint64_t v;
    switch (csr) {
    case RRU_CSR_FFLAGS: return h->ctx.fflags & 0x1f;
    case RRU_CSR_FRM: return h->ctx.frm & 7;
    case RRU_CSR_FCSR: return ((h->ctx.frm & 7) << 5) | (h->ctx.fflags & 0x1f);
    case RRU_CSR_CYCLE: v = rru_now(h, d); break;
    case RRU_CSR_TIME: v = rru_now(h, d) / h->time_div; break;
    default: v = h->ctx.instret + rru_insn_index(h, d); break;
    }
    if (h->env && h->env->csr_read) {
        h->cur_d = d;
        v = h->env->csr_read(h->env_ctx, h, csr, v);
        h->cur_d = NULL;
    }
    return v;
}

static void csr_write(rru_hart *h, unsigned csr, uint64_t v)
{
    switch (csr) {
    case RRU_CSR_FFLAGS: h->ctx.fflags = (uint32_t)v & 0x1f; break;
    case RRU_CSR_FRM: h->ctx.frm = (uint32_t)v & 7; break;
    default:
        h->ctx.fflags = (uint32_t)v & 0x1f;
        h->ctx.frm = ((uint32_t)v >> 5) & 7;
        break;
    }
}

enum { OP_W, OP_S, OP_C };

/* rd == 32 means rd was x0 (no read for csrrw); write says whether the
 * instruction writes (csrrs/c only with a nonzero rs1 field or immediate). */
static int csr_op(rru_hart *h, const rru_insn *d, int op, uint64_t src, int write)
{
    unsigned csr = (unsigned)d->imm;
    if (!csr_known(csr) || (write && csr_read_only(csr)))
        return rru_trap(h, d, RRU_CAUSE_ILLEGAL, d->raw);
    uint64_t old = 0;
    if (op != OP_W || d->rd != 32)
        old = csr_read(h, d, csr);
    if (write) {
        uint64_t nv = op == OP_W ? src : op == OP_S ? (old | src) : (old & ~src);
        csr_write(h, csr, nv);
    }
    X(RD) = old;
    return rru_next(h, d);
}

BODY(csrrw) { return csr_op(h, d, OP_W, X(RS1), 1); }
BODY(csrrs) { return csr_op(h, d, OP_S, X(RS1), RS1 != 0); }
BODY(csrrc) { return csr_op(h, d, OP_C, X(RS1), RS1 != 0); }
BODY(csrrwi) { return csr_op(h, d, OP_W, RS1, 1); }
BODY(csrrsi) { return csr_op(h, d, OP_S, RS1, RS1 != 0); }
BODY(csrrci) { return csr_op(h, d, OP_C, RS1, RS1 != 0); }

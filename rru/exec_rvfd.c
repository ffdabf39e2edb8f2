/* rru/exec_rvfd.c: bodies of the F and D extensions. (Arithmetic is not
 * implemented yet: those instructions are illegal for now.) */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d)
#define F(r) (h->ctx.f[(r)])
#define BOX32(v) (0xffffffff00000000ull | (uint32_t)(v))

BODY(flw)
{
    uint32_t v;
    int s = rru_load(h, d, X(RS1) + (uint64_t)IMM, 4, &v);
    if (s)
        return s;
    F(RD) = BOX32(v);
    return RRU_X_NEXT;
}

BODY(fld)
{
    uint64_t v;
    int s = rru_load(h, d, X(RS1) + (uint64_t)IMM, 8, &v);
    if (s)
        return s;
    F(RD) = v;
    return RRU_X_NEXT;
}

BODY(fsw)
{
    uint32_t v = (uint32_t)F(RS2);
    return rru_store(h, d, X(RS1) + (uint64_t)IMM, 4, &v);
}

BODY(fsd)
{
    uint64_t v = F(RS2);
    return rru_store(h, d, X(RS1) + (uint64_t)IMM, 8, &v);
}

BODY(fmv_x_w) { X(RD) = (uint64_t)(int64_t)(int32_t)(uint32_t)F(RS1); return RRU_X_NEXT; }
BODY(fmv_w_x) { F(RD) = BOX32(X(RS1)); return RRU_X_NEXT; }
BODY(fmv_x_d) { X(RD) = F(RS1); return RRU_X_NEXT; }
BODY(fmv_d_x) { F(RD) = X(RS1); return RRU_X_NEXT; }

#define TODO(name) BODY(name) { return rru_trap(h, RRU_CAUSE_ILLEGAL, d->raw); }
TODO(fmadd_s) TODO(fmsub_s) TODO(fnmsub_s) TODO(fnmadd_s)
TODO(fadd_s) TODO(fsub_s) TODO(fmul_s) TODO(fdiv_s) TODO(fsqrt_s)
TODO(fsgnj_s) TODO(fsgnjn_s) TODO(fsgnjx_s) TODO(fmin_s) TODO(fmax_s)
TODO(fcvt_w_s) TODO(fcvt_wu_s) TODO(fcvt_l_s) TODO(fcvt_lu_s)
TODO(fclass_s) TODO(feq_s) TODO(flt_s) TODO(fle_s)
TODO(fcvt_s_w) TODO(fcvt_s_wu) TODO(fcvt_s_l) TODO(fcvt_s_lu)
TODO(fmadd_d) TODO(fmsub_d) TODO(fnmsub_d) TODO(fnmadd_d)
TODO(fadd_d) TODO(fsub_d) TODO(fmul_d) TODO(fdiv_d) TODO(fsqrt_d)
TODO(fsgnj_d) TODO(fsgnjn_d) TODO(fsgnjx_d) TODO(fmin_d) TODO(fmax_d)
TODO(fcvt_s_d) TODO(fcvt_d_s) TODO(feq_d) TODO(flt_d) TODO(fle_d) TODO(fclass_d)
TODO(fcvt_w_d) TODO(fcvt_wu_d) TODO(fcvt_l_d) TODO(fcvt_lu_d)
TODO(fcvt_d_w) TODO(fcvt_d_wu) TODO(fcvt_d_l) TODO(fcvt_d_lu)

/* rru/exec_rva.c: bodies of the A extension: LR/SC with a reservation in
 * the context, AMOs as one exclusive access. Misaligned addresses trap
 * (SIGBUS); the SC verdict goes through the environment's sc callback. */
#include "rru/internal.h"

#define BODY(name) int rru_x_##name(rru_hart *h, const rru_insn *d, uint64_t fv)

/* The general paths (rru_access_slow) are out of line, each with its own
 * buffer, so that the bodies below pass the address of no local out of
 * line: their rru_next then stays a tail call (see rru_load_slow). */

static inline void lr_done(rru_hart *h, const rru_insn *d, uint64_t a, unsigned size,
                           uint64_t raw)
{
    h->ctx.resv_addr = a;
    h->ctx.resv_valid = size;
    X(RD) = size == 4 ? (uint64_t)(int64_t)(int32_t)raw : raw;
}

static __attribute__((noinline)) int lr_general(rru_hart *h, const rru_insn *d, uint64_t a,
                                                unsigned size)
{
    uint64_t v = 0;   /* little-endian host, as the guest */
    int s = rru_access_slow(h, d, a, size, RRU_ACC_LOAD, &v, NULL);
    if (s == 0)
        lr_done(h, d, a, size, v);
    return s;
}

static int lr(rru_hart *h, const rru_insn *d, unsigned size)
{
    uint64_t a = X(RS1);
    if (a & (size - 1))
        return rru_trap(h, d, RRU_CAUSE_LOAD_MISALIGNED, a);
    const uint8_t *p = rru_load_direct(h, a, size);
    if (p) {
        uint64_t v = 0;   /* little-endian host, as the guest */
        rru_copy_bytes(&v, p, size);
        lr_done(h, d, a, size, v);
    } else {
        int s = lr_general(h, d, a, size);
        if (s)
            return s;
    }
    return rru_next(h, d);
}

static __attribute__((noinline)) int sc_general(rru_hart *h, const rru_insn *d, uint64_t a,
                                                unsigned size, uint64_t v)
{
    return rru_access_slow(h, d, a, size, RRU_ACC_STORE, &v, NULL);   /* low bytes first */
}

static int sc(rru_hart *h, const rru_insn *d, unsigned size)
{
    uint64_t a = X(RS1);
    if (a & (size - 1))
        return rru_trap(h, d, RRU_CAUSE_STORE_MISALIGNED, a);
    int ok = h->ctx.resv_valid == size && h->ctx.resv_addr == a;
    if (h->env && h->env->sc) {
        h->cur_d = d;
        ok = h->env->sc(h->env_ctx, h, a, ok) != 0;
        h->cur_d = NULL;
    }
    h->ctx.resv_valid = 0;
    if (ok) {
        const uint64_t v = X(RS2);
        uint8_t *p = rru_store_direct(h, a, size);
        if (p) {
            rru_copy_bytes(p, &v, size);   /* low bytes first */
        } else {
            int s = sc_general(h, d, a, size, v);
            if (s)
                return s;
        }
    }
    X(RD) = ok ? 0 : 1;
    return rru_next(h, d);
}

BODY(lr_w) { return lr(h, d, 4); }
BODY(lr_d) { return lr(h, d, 8); }
BODY(sc_w) { return sc(h, d, 4); }
BODY(sc_d) { return sc(h, d, 8); }

enum { SWAP, ADD, XOR, AND, OR, MIN, MAX, MINU, MAXU };

static uint64_t amo_op(int op, uint64_t a, uint64_t b, int wide)
{
    int64_t sa = wide ? (int64_t)a : (int64_t)(int32_t)a;
    int64_t sb = wide ? (int64_t)b : (int64_t)(int32_t)b;
    uint64_t ua = wide ? a : (uint32_t)a, ub = wide ? b : (uint32_t)b;
    switch (op) {
    case SWAP: return b;
    case ADD: return a + b;
    case XOR: return a ^ b;
    case AND: return a & b;
    case OR: return a | b;
    case MIN: return sa < sb ? a : b;
    case MAX: return sa > sb ? a : b;
    case MINU: return ua < ub ? a : b;
    default: return ua > ub ? a : b;
    }
}

/* The read-modify-write of an AMO at host address P: rd gets the old value. */
static inline void amo_apply(rru_hart *h, const rru_insn *d, uint8_t *p, unsigned size, int op)
{
    uint64_t src = X(RS2), old;
    if (size == 4) {
        int32_t w;
        memcpy(&w, p, 4);
        old = (uint64_t)(int64_t)w;
        uint32_t nv = (uint32_t)amo_op(op, old, src, 0);
        memcpy(p, &nv, 4);
    } else {
        memcpy(&old, p, 8);
        uint64_t nv = amo_op(op, old, src, 1);
        memcpy(p, &nv, 8);
    }
    X(RD) = old;
}

static __attribute__((noinline)) int amo_general(rru_hart *h, const rru_insn *d, uint64_t a,
                                                 unsigned size, int op)
{
    uint8_t *p;
    int s = rru_access_slow(h, d, a, size, RRU_ACC_AMO, NULL, &p);
    if (s == 0)
        amo_apply(h, d, p, size, op);
    return s;
}

/* An AMO is one exclusive access: the direct path is a store's. */
static int amo(rru_hart *h, const rru_insn *d, unsigned size, int op)
{
    uint64_t a = X(RS1);
    if (a & (size - 1))
        return rru_trap(h, d, RRU_CAUSE_STORE_MISALIGNED, a);
    uint8_t *p = rru_store_direct(h, a, size);
    if (p) {
        amo_apply(h, d, p, size, op);
    } else {
        int s = amo_general(h, d, a, size, op);
        if (s)
            return s;
    }
    return rru_next(h, d);
}

#define AMO(name, size, op) BODY(name) { return amo(h, d, size, op); }
AMO(amoswap_w, 4, SWAP)
AMO(amoadd_w, 4, ADD)
AMO(amoxor_w, 4, XOR)
AMO(amoand_w, 4, AND)
AMO(amoor_w, 4, OR)
AMO(amomin_w, 4, MIN)
AMO(amomax_w, 4, MAX)
AMO(amominu_w, 4, MINU)
AMO(amomaxu_w, 4, MAXU)
AMO(amoswap_d, 8, SWAP)
AMO(amoadd_d, 8, ADD)
AMO(amoxor_d, 8, XOR)
AMO(amoand_d, 8, AND)
AMO(amoor_d, 8, OR)
AMO(amomin_d, 8, MIN)
AMO(amomax_d, 8, MAX)
AMO(amominu_d, 8, MINU)
AMO(amomaxu_d, 8, MAXU)

/* tests/test_rru_lockstep.c: seeded random instruction streams run in
 * lock-step on a standalone rru hart and on Unicorn (one instruction at a
 * time, uc_emu_start with count 1), comparing every integer register and
 * the pc after every instruction, and for F/D also every f register and
 * fcsr. One stream per extension (I, M, A, C, F, D, Zicsr).
 *
 * Unicorn 2.0.1 is an oracle, not gospel. Where it disagrees with the ISA
 * manual and qemu-riscv64 (7.2, checked by tests/test_rru_qemu.c), the
 * stream avoids or tolerates the case, and counts it:
 *   E1 Unicorn does not NaN-box single-precision results (upper half 0):
 *      such results are compared on their low 32 bits, then Unicorn's
 *      register is set to the boxed value.
 *   E2 Unicorn reads single-precision inputs without checking the box: a
 *      single-precision instruction whose source holds an unboxed value
 *      (left by a double operation) gets that source re-boxed in both first.
 *   E3 fmin/fmax with a signalling NaN operand: Unicorn returns the
 *      canonical NaN (IEEE 754-2008 minNum); the ISA since 2.2 returns the
 *      other operand. Compared on flags only.
 *   E4 Unicorn runs in machine mode: wfi and M-mode CSRs are legal there,
 *      and counters read differently; the CSR stream uses fflags, frm, fcsr.
 *   E5 An SC whose reserved word was changed by the same hart since the LR,
 *      or whose width differs from the LR's, is implementation-defined
 *      (Unicorn compares values; rru keeps the reservation across its own
 *      stores and requires the LR's width): such an SC is pointed at another
 *      address, so that both fail.
 *   E6 Fused multiply-add of 0 x inf with a quiet NaN addend: the manual
 *      requires the invalid flag; Unicorn does not raise it. The flags are
 *      resynchronized.
 *   E7 32-bit AMO min/max compare 32-bit values; Unicorn compares the whole
 *      rs2 register against the memory word extended the wrong way. Both
 *      operands are made non-negative 32-bit values first.
 * E1-E3, E6 and E7 are settled against qemu-riscv64 by test_rru_qemu.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "rru/hart.h"
#include "rru/internal.h"
#include "rru/mem.h"
#include "rru/softfp.h"
#include "tests/rru_enc.h"
#include "tests/testutil.h"

#define CHECK(cond, ...)                     \
    do {                                     \
        if (!(cond))                         \
            ck_abort_msg(__VA_ARGS__);       \
    } while (0)

#define LS_CODE 0x10000ull
#define LS_CODE_LEN 0x10000ull
#define LS_DATA 0x40000ull
#define LS_DATA_LEN 0x2000ull
#define STEPS 3000

enum { EXT_I, EXT_M, EXT_A, EXT_C, EXT_F, EXT_D, EXT_CSR, EXT_COUNT };
static const char *const ext_name[EXT_COUNT] = { "I", "M", "A", "C", "F", "D", "Zicsr" };

typedef struct ls {
    uc_engine *uc;
    rru_mem *mem;
    rru_hart *h;
    uint64_t seed, rng;
    unsigned e1, e2, e3, e5, e6, e7;
    uint64_t lr_value;   /* the word the last LR read */
    int xregs[32], fregs[32];
} ls;

static void uc_ok(uc_err e, const char *what)
{
    CHECK(e == UC_ERR_OK, "unicorn %s: %s", what, uc_strerror(e));
}

static uint64_t uc_get(ls *t, int reg)
{
    uint64_t v = 0;
    uc_ok(uc_reg_read(t->uc, reg, &v), "reg read");
    return v;
}

static void uc_set(ls *t, int reg, uint64_t v) { uc_ok(uc_reg_write(t->uc, reg, &v), "reg write"); }

static void set_x(ls *t, unsigned r, uint64_t v)
{
    if (r == 0)
        return;
    rru_hart_ctx(t->h)->x[r] = v;
    uc_set(t, UC_RISCV_REG_X0 + (int)r, v);
}

static void set_f(ls *t, unsigned r, uint64_t v)
{
    rru_hart_ctx(t->h)->f[r] = v;
    uc_set(t, UC_RISCV_REG_F0 + (int)r, v);
}

/* An interesting FP value: boxed single or double, edge cases often. */
static uint64_t fp_value(uint64_t *rng, int dbl)
{
    static const uint32_t s[] = { 0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00000,
                                  0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0x3f800000,
                                  0xbf800000, 0x4f000000, 0xcf000000, 0x3f000000, 0x4b7fffff };
    static const uint64_t d[] = { 0, 0x8000000000000000ull, 0x7ff0000000000000ull,
                                  0xfff0000000000000ull, 0x7ff8000000000000ull, 0x7ff4000000000000ull,
                                  1, 0x0010000000000000ull, 0x7fefffffffffffffull,
                                  0x3ff0000000000000ull, 0xbff0000000000000ull, 0x43e0000000000000ull,
                                  0xc3e0000000000000ull, 0x41dfffffffc00000ull, 0x3fe0000000000000ull };
    uint64_t r = tu_rand(rng);
    if (dbl) {
        switch (tu_below(rng, 4)) {
        case 0: return d[tu_below(rng, sizeof d / 8)];
        case 1: return (r & 0x800fffffffffffffull) | ((0x3f0ull + tu_below(rng, 0x20)) << 52);
        default: return r;
        }
    }
    uint32_t v;
    switch (tu_below(rng, 4)) {
    case 0: v = s[tu_below(rng, sizeof s / 4)]; break;
    case 1: v = (uint32_t)((r & 0x807fffff) | ((0x70 + tu_below(rng, 0x20)) << 23)); break;
    default: v = (uint32_t)r; break;
    }
    return 0xffffffff00000000ull | v;
}

static void ls_init(ls *t, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->seed = seed;
    t->rng = seed;
    uc_ok(uc_open(UC_ARCH_RISCV, UC_MODE_RISCV64, &t->uc), "open");
    uc_ok(uc_mem_map(t->uc, LS_CODE, LS_CODE_LEN, UC_PROT_ALL), "map code");
    uc_ok(uc_mem_map(t->uc, LS_DATA, LS_DATA_LEN, UC_PROT_ALL), "map data");
    uc_set(t, UC_RISCV_REG_MSTATUS, 0x6000);   /* FS = dirty: FP enabled */
    t->mem = rru_mem_new();
    rru_mem_map(t->mem, LS_CODE, LS_CODE_LEN, RRU_PROT_R | RRU_PROT_X);
    rru_mem_map(t->mem, LS_DATA, LS_DATA_LEN, RRU_PROT_R | RRU_PROT_W);
    t->h = rru_hart_new(t->mem, 0);
    rru_ctx c;
    rru_ctx_init(&c, LS_CODE);
    rru_hart_load(t->h, &c);
    for (unsigned r = 1; r < 32; r++)
        set_x(t, r, tu_rand(&t->rng) >> tu_below(&t->rng, 64));
    for (unsigned r = 0; r < 32; r++)
        set_f(t, r, fp_value(&t->rng, (int)tu_below(&t->rng, 2)));
    uint8_t data[LS_DATA_LEN];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)tu_rand(&t->rng);
    rru_mem_write(t->mem, LS_DATA, data, sizeof data);
    uc_ok(uc_mem_write(t->uc, LS_DATA, data, sizeof data), "data");
    unsigned frm = (unsigned)tu_below(&t->rng, 5);
    rru_hart_ctx(t->h)->frm = frm;
    uc_set(t, UC_RISCV_REG_FCSR, frm << 5);
}

static void ls_fini(ls *t)
{
    uc_close(t->uc);
    rru_hart_free(t->h);
    rru_mem_free(t->mem);
}

/* ---- instruction generation ---- */

static int row_in(const rru_insn_row *r, int ext)
{
    switch (ext) {
    case EXT_I:
        return strcmp(r->ext, "rvi") == 0 && strcmp(r->name, "ecall") != 0 &&
               strcmp(r->name, "ebreak") != 0;
    case EXT_M: return strcmp(r->ext, "rvm") == 0;
    case EXT_A: return strcmp(r->ext, "rva") == 0;
    case EXT_C: return strcmp(r->ext, "rvc") == 0;
    case EXT_F: return strcmp(r->ext, "rvfd") == 0 && (strstr(r->name, "_s") || !strcmp(r->name, "flw") ||
                                                       !strcmp(r->name, "fsw"));
    case EXT_D: return strcmp(r->ext, "rvfd") == 0 && (strstr(r->name, "_d") || !strcmp(r->name, "fld") ||
                                                       !strcmp(r->name, "fsd"));
    default: return strcmp(r->ext, "csr") == 0;
    }
}

static uint32_t gen_insn(ls *t, int ext)
{
    unsigned cand[200], n = 0;
    for (unsigned i = 0; i < rru_insn_nrows && n < 200; i++)
        if (row_in(&rru_insn_rows[i], ext))
            cand[n++] = i;
    const rru_insn_row *r = &rru_insn_rows[cand[tu_below(&t->rng, n)]];
    uint32_t bits = r->match | ((uint32_t)tu_rand(&t->rng) & ~r->mask);
    if (r->fmt < 0)
        bits &= 0xffff;
    if (ext == EXT_F || ext == EXT_D) {
        /* Mostly valid rounding modes; now and then 5, 6 or dynamic. */
        if ((r->mask & 0x7000) == 0) {
            unsigned rm = (unsigned)tu_below(&t->rng, 12);
            rm = rm < 5 ? rm : rm < 10 ? 7 : 5 + (rm & 1);
            bits = (bits & ~0x7000u) | rm << 12;
        }
    }
    if (ext == EXT_CSR) {
        static const unsigned csrs[] = { RRU_CSR_FFLAGS, RRU_CSR_FRM, RRU_CSR_FCSR };
        bits = (bits & 0x000fffff) | csrs[tu_below(&t->rng, 3)] << 20;
    }
    return bits;
}

/* ---- the step ---- */

static int is_single_dest(unsigned op)
{
    const char *n = rru_op_name(op);
    size_t l = strlen(n);
    if (op == RRU_OP_flw || op == RRU_OP_fmv_w_x || strncmp(n, "fcvt.s.", 7) == 0)
        return 1;
    if (n[0] != 'f' || strncmp(n, "fcvt.w", 6) == 0 || strncmp(n, "fcvt.l", 6) == 0 ||
        strncmp(n, "fmv.x", 5) == 0 || strncmp(n, "fclass", 6) == 0 || n[1] == 'e' || n[1] == 'l' ||
        op == RRU_OP_fsw || op == RRU_OP_fence || op == RRU_OP_fence_i)
        return 0;
    return l > 2 && n[l - 2] == '.' && n[l - 1] == 's';
}

static int reads_single(unsigned op)
{
    const char *n = rru_op_name(op);
    size_t l = strlen(n);
    if (n[0] != 'f' || op == RRU_OP_flw || op == RRU_OP_fsw || op == RRU_OP_fmv_w_x ||
        op == RRU_OP_fmv_x_w || strncmp(n, "fcvt.s.", 7) == 0 || op == RRU_OP_fence ||
        op == RRU_OP_fence_i)
        return op == RRU_OP_fcvt_d_s;
    return l > 2 && n[l - 2] == '.' && n[l - 1] == 's';
}

static uint64_t boxed(uint64_t v) { return (v >> 32) == 0xffffffffu ? v : 0xffffffff00000000ull | (uint32_t)v; }

/* Points the memory operand of D at a valid address, like a program would.
 * 0 if the instruction cannot be made to access the data region. */
static int fix_address(ls *t, const rru_insn *d, unsigned size, int atomic)
{
    if (d->rs1 == 0)
        return 0;
    uint64_t off = tu_below(&t->rng, LS_DATA_LEN - 16);
    off &= ~(uint64_t)(size - 1);   /* aligned (misaligned: test_rru_isa) */
    uint64_t addr = LS_DATA + off;
    if (atomic && tu_below(&t->rng, 2))
        addr = LS_DATA + 8 * tu_below(&t->rng, 4);   /* a few hot words for LR/SC */
    if (d->op == RRU_OP_sc_w || d->op == RRU_OP_sc_d) {
        rru_ctx *c = rru_hart_ctx(t->h);
        if (tu_below(&t->rng, 3) && c->resv_valid)
            addr = c->resv_addr;   /* often the reserved address */
        if (c->resv_valid && c->resv_addr == addr) {
            uint64_t now = 0;
            rru_mem_read(t->mem, addr, &now, size);
            uint64_t then = size == 4 ? (uint32_t)t->lr_value : t->lr_value;
            if (now != then || c->resv_valid != size) {   /* E5 */
                addr = (addr + 64) & ~(uint64_t)(size - 1);
                if (addr >= LS_DATA + LS_DATA_LEN)
                    addr = LS_DATA;
                t->e5++;
            }
        }
    }
    set_x(t, d->rs1, addr - (uint64_t)d->imm);
    return 1;
}

static unsigned mem_size(unsigned op, int *atomic)
{
    *atomic = op >= RRU_OP_lr_w && op <= RRU_OP_amomaxu_d;
    if (*atomic)
        return op >= RRU_OP_lr_d ? 8 : 4;
    switch (op) {
    case RRU_OP_lb: case RRU_OP_lbu: case RRU_OP_sb: return 1;
    case RRU_OP_lh: case RRU_OP_lhu: case RRU_OP_sh: return 2;
    case RRU_OP_lw: case RRU_OP_lwu: case RRU_OP_sw: case RRU_OP_flw: case RRU_OP_fsw: return 4;
    case RRU_OP_ld: case RRU_OP_sd: case RRU_OP_fld: case RRU_OP_fsd: return 8;
    default: return 0;
    }
}

static void describe(uint32_t bits, uint64_t pc, char *buf, size_t n)
{
    char dis[80];
    rru_disasm(bits, pc, dis, sizeof dis);
    snprintf(buf, n, "0x%08x %s", bits, dis);
}

/* Writes STEPS random instructions of EXT, one per 4-byte slot, into both
 * memories before anything runs: Unicorn 2.0.1 does not drop translated
 * blocks when uc_mem_write changes code, so code must never change. */
static void ls_program(ls *t, int ext)
{
    static uint32_t words[STEPS];
    for (unsigned k = 0; k < STEPS; k++) {
        for (;;) {
            uint32_t bits = gen_insn(t, ext);
            rru_insn d;
            rru_decode(bits, 0, &d);
            int atomic;
            if (d.op == RRU_OP_fence_i || d.op == RRU_OP_ecall || d.op == RRU_OP_ebreak)
                continue;
            if (mem_size(d.op, &atomic) && d.rs1 == 0)
                continue;   /* needs an address register */
            words[k] = d.len == 2 ? (bits & 0xffff) | 0x00010000u /* then c.nop */ : bits;
            break;
        }
    }
    rru_mem_write(t->mem, LS_CODE, words, sizeof words);
    uc_ok(uc_mem_write(t->uc, LS_CODE, words, sizeof words), "code");
}

/* Runs the instruction of slot K in both; fails on any difference. */
static void ls_step(ls *t, int ext, unsigned k)
{
    const uint64_t pc = LS_CODE + 4ull * k;
    uint32_t bits;
    rru_insn d;
    int size_atomic = 0;
    unsigned size;
    rru_mem_read(t->mem, pc, &bits, 4);
    rru_decode(bits, pc, &d);
    if (d.len == 2)
        bits &= 0xffff;
    size = mem_size(d.op, &size_atomic);
    if (size)
        fix_address(t, &d, size, size_atomic);
    /* E2: single-precision sources must hold boxed values. */
    if (reads_single(d.op)) {
        rru_ctx *c = rru_hart_ctx(t->h);
        unsigned srcs[3] = { d.rs1, d.rs2, d.rs3 };
        for (int i = 0; i < 3; i++) {
            if ((c->f[srcs[i]] >> 32) != 0xffffffffu) {
                set_f(t, srcs[i], boxed(c->f[srcs[i]]));
                t->e2++;
            }
        }
    }
    rru_ctx *c = rru_hart_ctx(t->h);
    c->pc = pc;
    uc_set(t, UC_RISCV_REG_PC, pc);
    if (d.op == RRU_OP_lr_w || d.op == RRU_OP_lr_d)
        rru_mem_read(t->mem, c->x[d.rs1], &t->lr_value, 8);
    /* E7: 32-bit AMO min/max on non-negative 32-bit values only. */
    if (d.op >= RRU_OP_amomin_w && d.op <= RRU_OP_amomaxu_w) {
        uint64_t a = c->x[d.rs1];
        uint32_t w;
        rru_mem_read(t->mem, a, &w, 4);
        if ((w >> 31) || c->x[d.rs2] > 0x7fffffffu) {
            w &= 0x7fffffffu;
            rru_mem_write(t->mem, a, &w, 4);
            uc_ok(uc_mem_write(t->uc, a, &w, 4), "E7");
            if (d.rs2 != d.rs1)
                set_x(t, d.rs2, c->x[d.rs2] & 0x7fffffffu);
            t->e7++;
        }
    }
    /* E6: 0 x inf + quiet NaN. */
    int imz_qnan = 0;
    if (d.op >= RRU_OP_fmadd_s && d.op <= RRU_OP_fnmadd_s) {
        unsigned ca = sf_class(0, (uint32_t)c->f[d.rs1]), cb = sf_class(0, (uint32_t)c->f[d.rs2]);
        unsigned cc = sf_class(0, (uint32_t)c->f[d.rs3]);
        imz_qnan = (((ca & 0x81) && (cb & 0x18)) || ((ca & 0x18) && (cb & 0x81))) && (cc & 0x200);
    } else if (d.op >= RRU_OP_fmadd_d && d.op <= RRU_OP_fnmadd_d) {
        unsigned ca = sf_class(1, c->f[d.rs1]), cb = sf_class(1, c->f[d.rs2]), cc = sf_class(1, c->f[d.rs3]);
        imz_qnan = (((ca & 0x81) && (cb & 0x18)) || ((ca & 0x18) && (cb & 0x81))) && (cc & 0x200);
    }
    const uint64_t in_f[3] = { c->f[d.rs1], c->f[d.rs2], c->f[d.rs3] };
    const uint64_t in_x1 = c->x[d.rs1];
    /* E3: fmin/fmax with a signalling NaN operand. */
    int minmax_snan = 0;
    if (d.op == RRU_OP_fmin_s || d.op == RRU_OP_fmax_s || d.op == RRU_OP_fmin_d ||
        d.op == RRU_OP_fmax_d) {
        int dbl = d.op == RRU_OP_fmin_d || d.op == RRU_OP_fmax_d;
        uint64_t a = dbl ? c->f[d.rs1] : (uint32_t)c->f[d.rs1];
        uint64_t b = dbl ? c->f[d.rs2] : (uint32_t)c->f[d.rs2];
        minmax_snan = ((sf_class(dbl, a) | sf_class(dbl, b)) & (1u << 8)) != 0;
    }
    rru_stop st;
    rru_stop_reason r = rru_hart_execute(t->h, 1, &st);
    uc_err ue = uc_emu_start(t->uc, pc, UINT64_MAX, 0, 1);

    char what[256];
    describe(bits, pc, what, sizeof what);
    {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, " [f%u=%llx f%u=%llx f%u=%llx x%u=%llx frm %u]", d.rs1,
                 (unsigned long long)in_f[0], d.rs2, (unsigned long long)in_f[1], d.rs3,
                 (unsigned long long)in_f[2], d.rs1, (unsigned long long)in_x1, c->frm);
    }
    /* A jump out of the mapped code: Unicorn executed it, then could not
     * fetch the target. */
    if (r == RRU_STOP_LIMIT && ue == UC_ERR_FETCH_UNMAPPED &&
        (c->pc < LS_CODE || c->pc >= LS_CODE + LS_CODE_LEN))
        ue = UC_ERR_OK;
    if (r != RRU_STOP_LIMIT || ue != UC_ERR_OK) {
        CHECK(r != RRU_STOP_LIMIT && ue != UC_ERR_OK,
              "seed %llu step %u %s: rru %s, unicorn %s", (unsigned long long)t->seed, k, what,
              rru_stop_name(r), uc_strerror(ue));
        /* Both trapped; resynchronize the pc (Unicorn may have moved it). */
        return;
    }
    CHECK(c->pc == uc_get(t, UC_RISCV_REG_PC), "seed %llu step %u %s: pc 0x%llx vs 0x%llx",
          (unsigned long long)t->seed, k, what, (unsigned long long)c->pc,
          (unsigned long long)uc_get(t, UC_RISCV_REG_PC));
    uint64_t ux[32];
    void *ptrs[32];
    for (int i = 0; i < 32; i++)
        ptrs[i] = &ux[i];
    uc_ok(uc_reg_read_batch(t->uc, t->xregs, ptrs, 32), "x batch");
    for (unsigned i = 1; i < 32; i++)
        CHECK(c->x[i] == ux[i], "seed %llu step %u %s: x%u = 0x%llx, unicorn 0x%llx",
              (unsigned long long)t->seed, k, what, i, (unsigned long long)c->x[i],
              (unsigned long long)ux[i]);
    if (ext == EXT_F || ext == EXT_D || ext == EXT_CSR) {
        uint64_t uf[32];
        for (int i = 0; i < 32; i++)
            ptrs[i] = &uf[i];
        uc_ok(uc_reg_read_batch(t->uc, t->fregs, ptrs, 32), "f batch");
        for (unsigned i = 0; i < 32; i++) {
            if (c->f[i] == uf[i])
                continue;
            if (i == d.rd && is_single_dest(d.op) && (uint32_t)c->f[i] == (uint32_t)uf[i] &&
                (c->f[i] >> 32) == 0xffffffffu && (uf[i] >> 32) == 0) {
                set_f(t, i, c->f[i]);   /* E1 */
                t->e1++;
                continue;
            }
            if (i == d.rd && minmax_snan &&
                ((uint32_t)uf[i] == 0x7fc00000u || uf[i] == 0x7ff8000000000000ull)) {
                set_f(t, i, c->f[i]);   /* E3: Unicorn gave the canonical NaN */
                t->e3++;
                continue;
            }
            CHECK(0, "seed %llu step %u %s: f%u = 0x%llx, unicorn 0x%llx",
                  (unsigned long long)t->seed, k, what, i, (unsigned long long)c->f[i],
                  (unsigned long long)uf[i]);
        }
        uint64_t fcsr = uc_get(t, UC_RISCV_REG_FCSR);
        if (imz_qnan && fcsr != ((c->frm << 5) | c->fflags) &&
            (fcsr | 0x10) == ((c->frm << 5) | c->fflags)) {
            uc_set(t, UC_RISCV_REG_FCSR, fcsr | 0x10);   /* E6 */
            fcsr |= 0x10;
            t->e6++;
        }
        CHECK(((c->frm << 5) | c->fflags) == fcsr, "seed %llu step %u %s: fcsr 0x%x, unicorn 0x%llx",
              (unsigned long long)t->seed, k, what, (c->frm << 5) | c->fflags, (unsigned long long)fcsr);
        /* Keep flags from saturating: clear them now and then in both. */
        if (tu_below(&t->rng, 4) == 0) {
            c->fflags = 0;
            uc_set(t, UC_RISCV_REG_FCSR, c->frm << 5);
        }
    }
    if (size) {
        /* Every access: the whole data region is equal. */
        static uint8_t a[LS_DATA_LEN], b[LS_DATA_LEN];
        rru_mem_read(t->mem, LS_DATA, a, LS_DATA_LEN);
        uc_ok(uc_mem_read(t->uc, LS_DATA, b, LS_DATA_LEN), "mem read");
        size_t at = 0;
        while (at < LS_DATA_LEN && a[at] == b[at])
            at++;
        CHECK(at == LS_DATA_LEN, "seed %llu step %u %s: memory differs at 0x%llx (%02x vs %02x)",
              (unsigned long long)t->seed, k, what, (unsigned long long)(LS_DATA + at),
              at < LS_DATA_LEN ? a[at] : 0, at < LS_DATA_LEN ? b[at] : 0);
    }
    /* Occasionally fresh register values (the stream overwrites them). */
    if (tu_below(&t->rng, 8) == 0)
        set_x(t, 1 + (unsigned)tu_below(&t->rng, 31), tu_rand(&t->rng) >> tu_below(&t->rng, 64));
    if ((ext == EXT_F || ext == EXT_D) && tu_below(&t->rng, 4) == 0)
        set_f(t, (unsigned)tu_below(&t->rng, 32), fp_value(&t->rng, ext == EXT_D ? (int)tu_below(&t->rng, 2) : 0));
}

/* Unicorn 2.0.1 leaks a little inside its translator; that is not ours to
 * report (LeakSanitizer reads this hook in the ASan build). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libunicorn.so\n"; }

START_TEST(rru_lockstep_matches_unicorn)
{
    const int ext = _i % EXT_COUNT;
    /* Under valgrind: Unicorn's own leaks and JIT make this meaningless. */
    if (tu_under_valgrind())
        return;
    ls *t = calloc(1, sizeof *t);
    ls_init(t, tu_seed(3000 + (uint64_t)_i));
    for (int i = 0; i < 32; i++) {
        t->xregs[i] = UC_RISCV_REG_X0 + i;
        t->fregs[i] = UC_RISCV_REG_F0 + i;
    }
    ls_program(t, ext);
    for (unsigned k = 0; k < STEPS; k++)
        ls_step(t, ext, k);
    if (ext == EXT_F)
        ck_assert_uint_gt(t->e1, 0);   /* the documented exception is real */
    if (getenv("RNR_LOCKSTEP_VERBOSE"))
        fprintf(stderr, "lockstep %s seed %llu: E1 %u E2 %u E3 %u E5 %u E6 %u E7 %u\n", ext_name[ext],
                (unsigned long long)t->seed, t->e1, t->e2, t->e3, t->e5, t->e6, t->e7);
    ls_fini(t);
    free(t);
}
END_TEST

TU_SUITE(rru_lockstep)
{
    Suite *s = suite_create("rru_lockstep");
    TCase *tc = tu_tcase(s, "unicorn", 120);
    /* One stream per extension (more: RNR_TEST_SEED=N for other streams). */
    tcase_add_loop_test(tc, rru_lockstep_matches_unicorn, 0, EXT_COUNT);
    return s;
}

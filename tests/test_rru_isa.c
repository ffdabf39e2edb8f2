/* tests/test_rru_isa.c: the instruction set of rru/: the table never
 * overlaps, and each instruction class (integer, M, A, C, CSR, memory,
 * control flow, traps) behaves as the ISA manual says, on hand-encoded
 * programs run by a standalone hart. Exact instruction counting (ECALL,
 * limits) is checked here too, because replay depends on it. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "rru/hart.h"
#include "rru/internal.h"
#include "rru/mem.h"
#include "tests/rru_enc.h"
#include "tests/testutil.h"

typedef struct th {
    rru_mem *m;
    rru_hart *h;
} th;

static th th_new(const uint32_t *code, size_t n)
{
    th t;
    t.m = test_mem(code, n);
    t.h = rru_hart_new(t.m, 0);
    ck_assert_ptr_nonnull(t.h);
    rru_ctx c;
    rru_ctx_init(&c, TEST_CODE);
    c.x[SP] = TEST_DATA + TEST_DATA_LEN - 256;
    rru_hart_load(t.h, &c);
    return t;
}

static void th_free(th *t)
{
    rru_hart_free(t->h);
    rru_mem_free(t->m);
}

static rru_ctx *ctx(th *t) { return rru_hart_ctx(t->h); }

/* ---- the table ---- */

/* Index of the first pair of overlapping rows (i < j), or -1. Two rows
 * overlap when some instruction word matches both. */
static long first_overlap(const rru_insn_row *rows, unsigned n, unsigned *pi, unsigned *pj)
{
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = i + 1; j < n; j++) {
            int c16i = rows[i].fmt < 0, c16j = rows[j].fmt < 0;
            if (c16i != c16j)
                continue;   /* 16- and 32-bit encodings differ in bits 1:0 */
            uint32_t common = rows[i].mask & rows[j].mask;
            if (((rows[i].match ^ rows[j].match) & common) == 0) {
                *pi = i;
                *pj = j;
                return (long)i;
            }
        }
    }
    return -1;
}

START_TEST(rru_isa_rows_never_overlap)
{
    unsigned i = 0, j = 0;
    long r = first_overlap(rru_insn_rows, rru_insn_nrows, &i, &j);
    ck_assert_msg(r < 0, "rows %s and %s overlap", rru_insn_rows[i].name, rru_insn_rows[j].name);
    /* The check can fail: a table with c.ebreak next to c.jalr must be caught. */
    const rru_insn_row bad[] = {
        { "c_jalr", 0x9002, 0xf003, -1, 0, "rvc" },
        { "c_ebreak", 0x9002, 0xffff, -1, 0, "rvc" },
        { "add", 0x33, 0xfe00707f, 0, 0, "rvi" },
    };
    ck_assert_int_eq(first_overlap(bad, 3, &i, &j), 0);
    ck_assert_uint_eq(j, 1);
    /* Every row has its match inside its mask and the right length bits. */
    for (unsigned k = 0; k < rru_insn_nrows; k++) {
        const rru_insn_row *row = &rru_insn_rows[k];
        ck_assert_msg((row->match & ~row->mask) == 0, "%s: match outside mask", row->name);
        if (row->fmt >= 0)
            ck_assert_msg((row->match & 3) == 3 && (row->mask & 0x7f) == 0x7f, "%s", row->name);
        else
            ck_assert_msg((row->match & 3) != 3 && (row->mask & 0xe003) == 0xe003, "%s", row->name);
    }
}
END_TEST

START_TEST(rru_isa_every_row_decodes_to_itself)
{
    for (unsigned k = 0; k < rru_insn_nrows; k++) {
        const rru_insn_row *row = &rru_insn_rows[k];
        if (row->fmt < 0)
            continue;
        rru_insn d;
        /* The match pattern with random don't-care bits. */
        uint64_t rng = 77 + k;
        for (int rep = 0; rep < 20; rep++) {
            uint32_t bits = row->match | ((uint32_t)tu_rand(&rng) & ~row->mask);
            ck_assert_int_eq(rru_decode(bits, 0x1000, &d), 4);
            ck_assert_msg(d.op == (unsigned)row->op, "0x%08x decodes to %s, not %s", bits,
                          rru_op_name(d.op), row->name);
        }
    }
    char buf[80];
    ck_assert_int_eq(rru_disasm(0x00b50533, 0, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "add a0, a0, a1");
    ck_assert_int_eq(rru_disasm(0x4515, 0, buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "addi a0, zero, 5");
    ck_assert_int_eq(rru_disasm(0xffffffff, 0, buf, sizeof buf), 0);
}
END_TEST

/* ---- integer ALU and M, table-driven ---- */

typedef struct alu_case {
    const char *what;
    uint32_t insn;      /* rd = a0, rs1 = a1, rs2 = a2 */
    uint64_t a1, a2, want;
} alu_case;

#define R_(f3, f7) enc_r(0x33, f3, f7, A0, A1, A2)
#define RW_(f3, f7) enc_r(0x3b, f3, f7, A0, A1, A2)
#define I_(f3, imm) enc_i(0x13, f3, A0, A1, imm)
#define IW_(f3, imm) enc_i(0x1b, f3, A0, A1, imm)
#define M1 0xffffffffffffffffull
#define MIN64 0x8000000000000000ull

static const alu_case alu_cases[] = {
    { "add wraps", R_(0, 0), M1, 2, 1 },
    { "sub", R_(0, 0x20), 5, 7, (uint64_t)-2 },
    { "sll masks to 6 bits", R_(1, 0), 1, 64 + 63, MIN64 },
    { "slt signed", R_(2, 0), M1, 0, 1 },
    { "sltu unsigned", R_(3, 0), M1, 0, 0 },
    { "xor", R_(4, 0), 0xf0f0, 0xff00, 0x0ff0 },
    { "srl", R_(5, 0), MIN64, 63, 1 },
    { "sra", R_(5, 0x20), MIN64, 63, M1 },
    { "or", R_(6, 0), 0xf0, 0x0f, 0xff },
    { "and", R_(7, 0), 0xf0, 0x3c, 0x30 },
    { "addi negative", I_(0, -5), 3, 0, (uint64_t)-2 },
    { "slti", I_(2, -1), (uint64_t)-2, 0, 1 },
    { "sltiu -1 is max", I_(3, -1), 5, 0, 1 },
    { "xori -1 is not", I_(4, -1), 0x1234, 0, ~0x1234ull },
    { "ori", I_(6, 0x7f0), 0xf, 0, 0x7ff },
    { "andi sign-extends", I_(7, -16), 0x1234567, 0, 0x1234560 },
    { "slli 63", I_(1, 63), 1, 0, MIN64 },
    { "srli 63", I_(5, 63), MIN64, 0, 1 },
    { "srai 63", I_(5, 0x400 | 63), MIN64, 0, M1 },
    { "addw sign-extends", RW_(0, 0), 0x7fffffff, 1, 0xffffffff80000000ull },
    { "subw", RW_(0, 0x20), 0, 1, M1 },
    { "sllw masks to 5 bits", RW_(1, 0), 1, 32 + 31, 0xffffffff80000000ull },
    { "srlw zero-fills 32 bits", RW_(5, 0), 0xffffffff80000000ull, 31, 1 },
    { "sraw", RW_(5, 0x20), 0x80000000, 31, M1 },
    { "addiw", IW_(0, 1), 0x7fffffff, 0, 0xffffffff80000000ull },
    { "slliw", IW_(1, 31), 1, 0, 0xffffffff80000000ull },
    { "srliw", IW_(5, 4), 0xffffffffffffff00ull, 0, 0x0ffffff0 },
    { "sraiw", IW_(5, 0x400 | 4), 0x80000000, 0, 0xfffffffff8000000ull },
    { "lui negative", enc_u(0x37, A0, 0x80000), 0, 0, 0xffffffff80000000ull },
    { "mul", R_(0, 1), (uint64_t)-3, 7, (uint64_t)-21 },
    { "mulh -1*-1", R_(1, 1), M1, M1, 0 },
    { "mulh min*min", R_(1, 1), MIN64, MIN64, 0x4000000000000000ull },
    { "mulhsu -1*max", R_(2, 1), M1, M1, M1 },
    { "mulhu max*max", R_(3, 1), M1, M1, M1 - 1 },
    { "div rounds to zero", R_(4, 1), (uint64_t)-7, 2, (uint64_t)-3 },
    { "div by zero", R_(4, 1), 5, 0, M1 },
    { "div overflow", R_(4, 1), MIN64, M1, MIN64 },
    { "divu by zero", R_(5, 1), 5, 0, M1 },
    { "rem sign of dividend", R_(6, 1), (uint64_t)-7, 2, M1 },
    { "rem by zero", R_(6, 1), (uint64_t)-7, 0, (uint64_t)-7 },
    { "rem overflow", R_(6, 1), MIN64, M1, 0 },
    { "remu by zero", R_(7, 1), 9, 0, 9 },
    { "mulw", RW_(0, 1), 0x10000, 0x10000, 0 },
    { "mulw sign-extends", RW_(0, 1), 0x40000000, 2, 0xffffffff80000000ull },
    { "divw overflow", RW_(4, 1), 0x80000000, M1, 0xffffffff80000000ull },
    { "divw by zero", RW_(4, 1), 1, 0, M1 },
    { "divuw by zero", RW_(5, 1), 1, 0, M1 },
    { "divuw", RW_(5, 1), 0xffffffff, 2, 0x7fffffff },
    { "remw overflow", RW_(6, 1), 0x80000000, M1, 0 },
    { "remuw by zero", RW_(7, 1), 0x80000000, 0, 0xffffffff80000000ull },
};

START_TEST(rru_isa_integer_and_m_results)
{
    const alu_case *c = &alu_cases[_i];
    uint32_t code[] = { c->insn, I_ECALL };
    th t = th_new(code, 2);
    ctx(&t)->x[A1] = c->a1;
    ctx(&t)->x[A2] = c->a2;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 10, &st), RRU_STOP_ECALL);
    ck_assert_msg(ctx(&t)->x[A0] == c->want, "%s: a0 = 0x%llx, want 0x%llx", c->what,
                  (unsigned long long)ctx(&t)->x[A0], (unsigned long long)c->want);
    th_free(&t);
}
END_TEST

START_TEST(rru_isa_x0_stays_zero)
{
    uint32_t code[] = { I_ADDI(ZERO, ZERO, 5), I_LUI(ZERO, 1), I_LD(ZERO, SP, 0),
                        I_ADD(A0, ZERO, ZERO), I_JAL(ZERO, 4), I_ECALL };
    th t = th_new(code, 6);
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(ctx(&t)->x[0], 0);
    ck_assert_uint_eq(ctx(&t)->x[A0], 0);
    ck_assert_uint_eq(st.insns, 6);
    th_free(&t);
}
END_TEST

/* ---- memory ---- */

START_TEST(rru_isa_loads_extend_and_stores_write_their_width)
{
    uint32_t code[] = {
        I_SD(A1, A0, 0),
        enc_i(0x03, 0, A2, A0, 7),    /* lb a2, 7(a0)  */
        enc_i(0x03, 4, A3, A0, 7),    /* lbu a3, 7(a0) */
        enc_i(0x03, 1, A4, A0, 6),    /* lh a4, 6(a0)  */
        enc_i(0x03, 5, A5, A0, 6),    /* lhu a5, 6(a0) */
        enc_i(0x03, 2, A6, A0, 4),    /* lw a6, 4(a0)  */
        enc_i(0x03, 6, A7, A0, 4),    /* lwu a7, 4(a0) */
        enc_s(0x23, 0, A0, ZERO, 8),  /* sb zero, 8(a0): only one byte */
        enc_s(0x23, 1, A0, A1, 16),   /* sh a1, 16(a0) */
        I_ECALL,
    };
    th t = th_new(code, sizeof code / 4);
    uint64_t fill = 0x1111111111111111ull;
    rru_mem_write(t.m, TEST_DATA + 8, &fill, 8);
    rru_mem_write(t.m, TEST_DATA + 16, &fill, 8);
    ctx(&t)->x[A0] = TEST_DATA;
    ctx(&t)->x[A1] = 0x8182838485868788ull;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    rru_ctx *c = ctx(&t);
    ck_assert_uint_eq(c->x[A2], 0xffffffffffffff81ull);
    ck_assert_uint_eq(c->x[A3], 0x81);
    ck_assert_uint_eq(c->x[A4], 0xffffffffffff8182ull);
    ck_assert_uint_eq(c->x[A5], 0x8182);
    ck_assert_uint_eq(c->x[A6], 0xffffffff81828384ull);
    ck_assert_uint_eq(c->x[A7], 0x81828384);
    uint64_t v;
    rru_mem_read(t.m, TEST_DATA + 8, &v, 8);
    ck_assert_uint_eq(v, 0x1111111111111100ull);
    rru_mem_read(t.m, TEST_DATA + 16, &v, 8);
    ck_assert_uint_eq(v, 0x1111111111118788ull);
    th_free(&t);
}
END_TEST

START_TEST(rru_isa_misaligned_access_straddles_pages)
{
    /* ld/sd across the page boundary inside the data region. */
    uint32_t code[] = { I_SD(A1, A0, 0), I_LD(A2, A0, 0), I_LW(A3, A0, 2), I_ECALL };
    th t = th_new(code, 4);
    ctx(&t)->x[A0] = TEST_DATA + RRU_PAGE_SIZE - 3;
    ctx(&t)->x[A1] = 0x0102030405060708ull;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(ctx(&t)->x[A2], 0x0102030405060708ull);
    ck_assert_uint_eq(ctx(&t)->x[A3], 0x03040506);
    uint8_t b[8];
    rru_mem_read(t.m, TEST_DATA + RRU_PAGE_SIZE - 3, b, 8);
    ck_assert_uint_eq(b[0], 0x08);
    ck_assert_uint_eq(b[7], 0x01);
    th_free(&t);
}
END_TEST

START_TEST(rru_isa_bad_accesses_stop_with_sigsegv)
{
    struct { uint32_t insn; uint64_t addr; uint32_t cause; uint64_t tval; } cases[] = {
        { I_LD(A2, A0, 0), 0x7000000, 13, 0x7000000 },                 /* unmapped load */
        { I_SD(A1, A0, 0), TEST_CODE + 64, 15, TEST_CODE + 64 },       /* store to R-X */
        { I_SD(A1, A0, 0), TEST_DATA + TEST_DATA_LEN - 4, 15, TEST_DATA + TEST_DATA_LEN },
        { I_LD(A2, A0, 0), 1ull << 63, 13, 1ull << 63 },              /* beyond 48 bits */
        { I_AMOADD_W(A2, A0, A1), TEST_CODE + 64, 15, TEST_CODE + 64 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint32_t code[] = { I_ADDI(A3, ZERO, 1), cases[k].insn, I_ADDI(A3, ZERO, 2), I_ECALL };
        th t = th_new(code, 4);
        ctx(&t)->x[A0] = cases[k].addr;
        ctx(&t)->x[A1] = 0x55;
        ctx(&t)->x[A2] = 0x77;
        rru_stop st;
        ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_FAULT);
        ck_assert_int_eq(st.signal, SIGSEGV);
        ck_assert_uint_eq(st.cause, cases[k].cause);
        ck_assert_uint_eq(st.tval, cases[k].tval);
        ck_assert_uint_eq(st.pc, TEST_CODE + 4);
        ck_assert_uint_eq(ctx(&t)->pc, TEST_CODE + 4);
        ck_assert_uint_eq(st.insns, 1);                 /* the fault did not retire */
        ck_assert_uint_eq(ctx(&t)->x[A2], 0x77);        /* rd untouched */
        ck_assert_uint_eq(ctx(&t)->instret, 1);
        th_free(&t);
    }
    /* A straddling store whose second page is bad writes nothing. */
    uint32_t code[] = { I_SD(A1, A0, 0), I_ECALL };
    th t = th_new(code, 2);
    rru_mem_protect(t.m, TEST_DATA + RRU_PAGE_SIZE, RRU_PAGE_SIZE, RRU_PROT_R);
    ctx(&t)->x[A0] = TEST_DATA + RRU_PAGE_SIZE - 4;
    ctx(&t)->x[A1] = M1;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_FAULT);
    ck_assert_uint_eq(st.tval, TEST_DATA + RRU_PAGE_SIZE);
    uint32_t w;
    rru_mem_read(t.m, TEST_DATA + RRU_PAGE_SIZE - 4, &w, 4);
    ck_assert_uint_eq(w, 0);
    th_free(&t);
}
END_TEST

/* ---- control flow ---- */

START_TEST(rru_isa_jumps_link_and_branches_compare)
{
    uint32_t code[] = {
        /* 0 */ I_JAL(RA, 12),                     /* -> 12, ra = 4 */
        /* 4 */ I_ADDI(A0, ZERO, 99),
        /* 8 */ I_ECALL,
        /* 12 */ enc_i(0x67, 0, T0, RA, 5),       /* jalr t0, 5(ra): target 9 & ~1 = 8 */
    };
    th t = th_new(code, 4);
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(ctx(&t)->x[RA], TEST_CODE + 4);
    ck_assert_uint_eq(ctx(&t)->x[T0], TEST_CODE + 16);
    ck_assert_uint_eq(ctx(&t)->x[A0], 0);          /* skipped */
    ck_assert_uint_eq(st.insns, 3);
    th_free(&t);

    /* Each branch: taken (skips the addi) or not. */
    struct { uint32_t f3; uint64_t a, b; int taken; } br[] = {
        { 0, 5, 5, 1 }, { 0, 5, 6, 0 }, { 1, 5, 6, 1 }, { 1, 5, 5, 0 },
        { 4, M1, 0, 1 }, { 4, 0, M1, 0 }, { 5, 0, M1, 1 }, { 5, 3, 3, 1 }, { 5, M1, 0, 0 },
        { 6, 0, M1, 1 }, { 6, M1, 0, 0 }, { 7, M1, 0, 1 }, { 7, 0, 1, 0 },
    };
    for (size_t k = 0; k < sizeof br / sizeof br[0]; k++) {
        uint32_t c2[] = { enc_b(br[k].f3, A1, A2, 8), I_ADDI(A0, ZERO, 1), I_ECALL };
        th u = th_new(c2, 3);
        ctx(&u)->x[A1] = br[k].a;
        ctx(&u)->x[A2] = br[k].b;
        ck_assert_int_eq(rru_hart_execute(u.h, 100, &st), RRU_STOP_ECALL);
        ck_assert_msg(ctx(&u)->x[A0] == (uint64_t)!br[k].taken, "branch case %zu", k);
        th_free(&u);
    }
}
END_TEST

/* ---- compressed ---- */

START_TEST(rru_isa_compressed_expand_to_their_base_instructions)
{
    static const uint16_t prog[] = {
        0x4515,   /* c.li a0, 5 */
        0x157d,   /* c.addi a0, -1        a0 = 4 */
        0x85aa,   /* c.mv a1, a0          a1 = 4 */
        0x952e,   /* c.add a0, a1         a0 = 8 */
        0x8d0d,   /* c.sub a0, a1         a0 = 4 */
        0x050e,   /* c.slli a0, 3         a0 = 32 */
        0x8105,   /* c.srli a0, 1         a0 = 16 */
        0x891d,   /* c.andi a0, 7         a0 = 0 */
        0x2505,   /* c.addiw a0, 1        a0 = 1 */
        0x9d2d,   /* c.addw a0, a1        a0 = 5 */
        0x717d,   /* c.addi16sp sp, -16 */
        0xc22a,   /* c.swsp a0, 4(sp) */
        0x4512,   /* c.lwsp a0, 4(sp)     a0 = 5 */
        0x0808,   /* c.addi4spn a0, sp, 16: a0 = sp + 16 */
        0xa011,   /* c.j +4 */
        0x0001,   /* c.nop (skipped) */
        0x6505,   /* c.lui a0, 1          a0 = 0x1000 */
        0xc119,   /* c.beqz a0, +6 (not taken) */
        0x757d,   /* c.lui a0, -1  a0 = 0xfffffffffffff000 */
        0x8505,   /* c.srai a0, 1  a0 = 0xfffffffffffff800 */
        0x0073, 0x0000,   /* ecall */
    };
    rru_mem *m = test_mem(NULL, 0);
    rru_mem_write(m, TEST_CODE, prog, sizeof prog);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    rru_ctx_init(&c, TEST_CODE);
    uint64_t sp0 = TEST_DATA + 0x1000;
    c.x[SP] = sp0;
    rru_hart_load(h, &c);
    rru_stop st;
    /* Step by step to check intermediate values. */
    struct { unsigned n; unsigned reg; uint64_t want; } steps[] = {
        { 1, A0, 5 }, { 1, A0, 4 }, { 1, A1, 4 }, { 1, A0, 8 }, { 1, A0, 4 }, { 1, A0, 32 },
        { 1, A0, 16 }, { 1, A0, 0 }, { 1, A0, 1 }, { 1, A0, 5 }, { 1, SP, sp0 - 16 },
        { 2, A0, 5 }, { 1, A0, sp0 }, { 1, A0, sp0 }, { 1, A0, 0x1000 }, { 1, A0, 0x1000 },
        { 1, A0, 0xfffffffffffff000ull }, { 1, A0, 0xfffffffffffff800ull },
    };
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        ck_assert_int_eq(rru_hart_execute(h, steps[k].n, &st), RRU_STOP_LIMIT);
        ck_assert_msg(rru_hart_ctx(h)->x[steps[k].reg] == steps[k].want, "step %zu: 0x%llx", k,
                      (unsigned long long)rru_hart_ctx(h)->x[steps[k].reg]);
    }
    ck_assert_int_eq(rru_hart_execute(h, 10, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(rru_hart_ctx(h)->instret, 20);
    rru_hart_free(h);
    rru_mem_free(m);
}
END_TEST

START_TEST(rru_isa_compressed_links_pc_plus_2_and_reserved_are_illegal)
{
    /* c.jalr a1 at TEST_CODE links TEST_CODE + 2. */
    uint16_t prog[] = { 0x9582, 0x0001, 0x0073, 0x0000 };
    rru_mem *m = test_mem(NULL, 0);
    rru_mem_write(m, TEST_CODE, prog, sizeof prog);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    rru_ctx_init(&c, TEST_CODE);
    c.x[A1] = TEST_CODE + 4;
    rru_hart_load(h, &c);
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(h, 10, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(rru_hart_ctx(h)->x[RA], TEST_CODE + 2);
    ck_assert_uint_eq(st.insns, 2);
    rru_hart_free(h);
    rru_mem_free(m);

    /* Reserved encodings: all zero, c.addi4spn 0, c.lui imm 0, c.addi16sp 0,
     * c.lwsp/c.ldsp rd 0, c.jr x0, c.addiw x0, reserved c.subw-space ops. */
    const uint16_t bad[] = { 0x0000, 0x0004, 0x6501, 0x6101, 0x4002, 0x6002, 0x8002,
                             0x2001, 0x9c41, 0x9c61, 0x8000 };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        rru_insn d;
        ck_assert_int_eq(rru_decode(bad[k], 0, &d), 2);
        ck_assert_msg(d.op == RRU_OP_illegal, "0x%04x decodes to %s", bad[k], rru_op_name(d.op));
    }
}
END_TEST

/* ---- atomics ---- */

START_TEST(rru_isa_lr_sc_and_amos)
{
    uint32_t code[] = {
        I_LR_W(A2, A0),           /* a2 = mem[a0] (sign-extended) */
        I_SC_W(A3, A0, A1),       /* succeeds: a3 = 0 */
        I_SC_W(A4, A0, A1),       /* no reservation: a4 = 1 */
        I_LR_D(A5, A0),
        I_SC_D(A6, T0, A1),       /* another address: fails */
        I_AMOADD_D(A7, T1, A1),   /* a7 = old (5), mem = 5 + a1 */
        enc_r(0x2f, 2, 0x40, S0, T2, A1),   /* amomin.w: signed */
        enc_r(0x2f, 2, 0x70, S1, T2, A1),   /* amomaxu.w: unsigned */
        I_ECALL,
    };
    th t = th_new(code, sizeof code / 4);
    uint32_t w = 0x80000001;
    rru_mem_write(t.m, TEST_DATA, &w, 4);
    uint64_t five = 5;
    rru_mem_write(t.m, TEST_DATA + 64, &five, 8);
    uint32_t neg = 0xfffffff0;   /* -16 */
    rru_mem_write(t.m, TEST_DATA + 128, &neg, 4);
    rru_ctx *c = ctx(&t);
    c->x[A0] = TEST_DATA;
    c->x[A1] = 0x7;
    c->x[T0] = TEST_DATA + 8;
    c->x[T1] = TEST_DATA + 64;
    c->x[T2] = TEST_DATA + 128;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(c->x[A2], 0xffffffff80000001ull);
    ck_assert_uint_eq(c->x[A3], 0);
    ck_assert_uint_eq(c->x[A4], 1);
    ck_assert_uint_eq(c->x[A6], 1);
    ck_assert_uint_eq(c->x[A7], 5);
    ck_assert_uint_eq(c->x[S0], 0xfffffffffffffff0ull);
    ck_assert_uint_eq(c->x[S1], 0xfffffffffffffff0ull);   /* sign-extended old value */
    rru_mem_read(t.m, TEST_DATA, &w, 4);
    ck_assert_uint_eq(w, 7);
    uint64_t v;
    rru_mem_read(t.m, TEST_DATA + 64, &v, 8);
    ck_assert_uint_eq(v, 12);
    /* after amomin.w: min(-16, 7) = -16; after amomaxu.w: max(0xfffffff0, 7) */
    rru_mem_read(t.m, TEST_DATA + 128, &w, 4);
    ck_assert_uint_eq(w, 0xfffffff0);
    ck_assert_uint_eq(c->resv_valid, 0);
    th_free(&t);
}
END_TEST

static int sc_calls;
static uint64_t sc_instret;
static int sc_fail_hook(void *env, rru_hart *h, uint64_t addr, int ok)
{
    (void)env; (void)addr; (void)ok;
    sc_calls++;
    sc_instret = rru_hart_instret(h);
    return 0;
}

START_TEST(rru_isa_sc_verdict_comes_from_the_environment)
{
    uint32_t code[] = { I_LR_W(A2, A0), I_SC_W(A3, A0, A1), I_ECALL };
    th t = th_new(code, 3);
    static const rru_env_ops ops = { .sc = sc_fail_hook };
    rru_hart_set_env(t.h, &ops, NULL);
    ctx(&t)->x[A0] = TEST_DATA;
    ctx(&t)->x[A1] = 9;
    sc_calls = 0;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    ck_assert_int_eq(sc_calls, 1);
    ck_assert_uint_eq(sc_instret, 1);   /* the LR before it */
    ck_assert_uint_eq(ctx(&t)->x[A3], 1);
    uint32_t w;
    rru_mem_read(t.m, TEST_DATA, &w, 4);
    ck_assert_uint_eq(w, 0);   /* a failed SC writes nothing */
    th_free(&t);
}
END_TEST

START_TEST(rru_isa_misaligned_atomics_stop_with_sigbus)
{
    uint32_t insns[] = { I_LR_W(A2, A0), I_SC_D(A2, A0, A1), I_AMOADD_W(A2, A0, A1) };
    uint32_t causes[] = { 4, 6, 6 };
    for (int k = 0; k < 3; k++) {
        uint32_t code[] = { insns[k], I_ECALL };
        th t = th_new(code, 2);
        ctx(&t)->x[A0] = TEST_DATA + 2;
        rru_stop st;
        ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_MISALIGNED);
        ck_assert_int_eq(st.signal, SIGBUS);
        ck_assert_uint_eq(st.cause, causes[k]);
        ck_assert_uint_eq(st.tval, TEST_DATA + 2);
        th_free(&t);
    }
}
END_TEST

/* The host stack at each read of the time CSR (its hook runs inside the
 * body chain, so its frame sits just below whatever the chain nested). */
static uintptr_t chain_frames[512];
static unsigned chain_nframes;
static uint64_t frame_hook(void *env, rru_hart *h, unsigned csr, uint64_t value)
{
    (void)env; (void)h;
    if (csr == RRU_CSR_TIME && chain_nframes < 512)
        chain_frames[chain_nframes++] = (uintptr_t)__builtin_frame_address(0);
    return value;
}

/* Every body ends in a tail call into the next one, also when its access
 * takes the general path: one that called the next body instead would
 * nest the rest of the chain in its frame, one frame per such access,
 * until the chain returns (slower, and a long chain could overflow the
 * host stack). A loop whose iterations each take the general path in a
 * plain load and store (line-crossing), an AMO, an LR and an SC (pages
 * that share a TLB entry, so each access misses it), run as one chain,
 * must leave the host stack where it was. */
START_TEST(rru_isa_general_accesses_do_not_nest_the_chain)
{
    const uint64_t far = TEST_DATA + (uint64_t)RRU_TLB_N * RRU_PAGE_SIZE;   /* same TLB entry */
    uint32_t code[] = {
        I_AMOADD_D(A2, A0, A1),        /* page of a0: TLB miss (a4's page holds the entry) */
        I_LR_D(A3, A4),                /* a4's page: miss */
        I_LD(A5, A0, 60),              /* crosses a line: general path; a0's page again */
        I_SC_D(A7, A4, A6),            /* miss */
        I_SD(A6, A4, 60),              /* crosses a line */
        I_CSRRS(S1, RRU_CSR_TIME, ZERO),
        I_ADDI(T0, T0, -1),
        I_BNE(T0, ZERO, -28),
        I_ECALL,
    };
    th t = th_new(code, sizeof code / 4);
    ck_assert_int_eq(rru_mem_map(t.m, far, RRU_PAGE_SIZE, RRU_PROT_R | RRU_PROT_W), 0);
    static const rru_env_ops ops = { .csr_read = frame_hook };
    rru_hart_set_env(t.h, &ops, NULL);
    rru_ctx *c = ctx(&t);
    c->x[A0] = TEST_DATA;
    c->x[A1] = 1;
    c->x[A4] = far;
    c->x[A6] = 7;
    c->x[T0] = 300;
    chain_nframes = 0;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100000, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(chain_nframes, 300);
    uint64_t sum;
    rru_mem_read(t.m, TEST_DATA, &sum, 8);
    ck_assert_uint_eq(sum, 300);                          /* every AMO happened */
    ck_assert_uint_eq(c->x[A7], 0);                       /* and the SCs succeeded */
#ifdef RNR_SIBCALLS
    /* After the first iterations (decoding, linking) the chain runs on. A
     * build without sibling calls (-O0, -O1: debug, sanitizers) nests every
     * body, so only the release build promises this. */
    for (unsigned i = 10; i < chain_nframes; i++)
        ck_assert_msg(chain_frames[i] == chain_frames[10],
                      "iteration %u: host stack moved by %ld bytes since iteration 10", i,
                      (long)(chain_frames[10] - chain_frames[i]));
#endif
    th_free(&t);
}
END_TEST

/* ---- CSRs ---- */

static unsigned csr_reads;
static uint64_t csr_hook(void *env, rru_hart *h, unsigned csr, uint64_t value)
{
    (void)env; (void)h;
    csr_reads++;
    return csr == RRU_CSR_TIME ? 4242 : value;
}

START_TEST(rru_isa_csrs_fcsr_fields_and_counters)
{
    uint32_t code[] = {
        I_ADDI(A1, ZERO, 0xff),
        I_CSRRW(ZERO, RRU_CSR_FCSR, A1),       /* frm = 7, fflags = 31; rd = x0: no read */
        I_CSRRS(A2, RRU_CSR_FRM, ZERO),        /* a2 = 7 */
        I_CSRRS(A3, RRU_CSR_FFLAGS, ZERO),     /* a3 = 31 */
        enc_i(0x73, 7, A4, 1, RRU_CSR_FFLAGS), /* csrrci a4, fflags, 1 -> a4 = 31, fflags = 30 */
        enc_i(0x73, 5, ZERO, 2, RRU_CSR_FRM),  /* csrrwi zero, frm, 2 */
        I_CSRRS(A5, RRU_CSR_FCSR, ZERO),       /* a5 = 2 << 5 | 30 */
        I_CSRRS(A6, RRU_CSR_INSTRET, ZERO),    /* a6 = 7 (seven before it) */
        I_CSRRS(A7, RRU_CSR_TIME, ZERO),       /* from the hook */
        I_CSRRS(S0, RRU_CSR_CYCLE, ZERO),
        I_ECALL,
    };
    th t = th_new(code, sizeof code / 4);
    static const rru_env_ops ops = { .csr_read = csr_hook };
    rru_hart_set_env(t.h, &ops, NULL);
    csr_reads = 0;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ECALL);
    rru_ctx *c = ctx(&t);
    ck_assert_uint_eq(c->x[A2], 7);
    ck_assert_uint_eq(c->x[A3], 31);
    ck_assert_uint_eq(c->x[A4], 31);
    ck_assert_uint_eq(c->x[A5], (2 << 5) | 30);
    ck_assert_uint_eq(c->x[A6], 7);
    ck_assert_uint_eq(c->x[A7], 4242);
    ck_assert_uint_eq(c->x[S0], 9);   /* standalone clock: one cycle per instruction */
    ck_assert_uint_eq(csr_reads, 3);  /* only counters go through the hook */
    th_free(&t);

    /* Writes to counters, unknown CSRs, and privileged ones are illegal. */
    uint32_t bad[] = { I_CSRRW(A0, RRU_CSR_CYCLE, A1), I_CSRRS(A0, RRU_CSR_TIME, A1),
                       I_CSRRS(A0, 0x300, ZERO) /* mstatus */, I_CSRRS(A0, 0xc03, ZERO),
                       0x10500073 /* wfi */, 0x30200073 /* mret */ };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint32_t c2[] = { bad[k], I_ECALL };
        th u = th_new(c2, 2);
        ctx(&u)->x[A1] = 1;
        ck_assert_int_eq(rru_hart_execute(u.h, 100, &st), RRU_STOP_ILLEGAL);
        ck_assert_int_eq(st.signal, SIGILL);
        ck_assert_uint_eq(st.tval, bad[k]);
        ck_assert_uint_eq(st.insns, 0);
        th_free(&u);
    }
}
END_TEST

/* ---- counting, stops ---- */

START_TEST(rru_hart_ecall_retires_before_the_stop)
{
    uint32_t code[] = { I_ADDI(A0, ZERO, 1), I_ADDI(A0, A0, 1), I_ECALL, I_ADDI(A0, A0, 1),
                        I_EBREAK };
    th t = th_new(code, 5);
    rru_stop st;
    /* Exactly 3 instructions, the third being the ECALL: ECALL wins. */
    ck_assert_int_eq(rru_hart_execute(t.h, 3, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(st.insns, 3);
    ck_assert_uint_eq(st.pc, TEST_CODE + 8);
    ck_assert_uint_eq(ctx(&t)->pc, TEST_CODE + 12);
    ck_assert_uint_eq(ctx(&t)->instret, 3);
    ck_assert_int_eq(st.signal, 0);
    /* EBREAK does not retire. */
    ck_assert_int_eq(rru_hart_execute(t.h, 10, &st), RRU_STOP_EBREAK);
    ck_assert_int_eq(st.signal, SIGTRAP);
    ck_assert_uint_eq(st.insns, 1);
    ck_assert_uint_eq(ctx(&t)->instret, 4);
    ck_assert_uint_eq(ctx(&t)->pc, TEST_CODE + 16);
    th_free(&t);

    /* Two instructions before the ECALL: LIMIT with pc at the ECALL. */
    th u = th_new(code, 5);
    ck_assert_int_eq(rru_hart_execute(u.h, 2, &st), RRU_STOP_LIMIT);
    ck_assert_uint_eq(ctx(&u)->pc, TEST_CODE + 8);
    ck_assert_int_eq(rru_hart_execute(u.h, 1, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(st.insns, 1);
    ck_assert_int_eq(rru_hart_execute(u.h, 0, &st), RRU_STOP_LIMIT);
    ck_assert_uint_eq(st.insns, 0);
    th_free(&u);
}
END_TEST

/* A loop: a0 counts down from 1000, a1 accumulates a mixed hash. */
static const uint32_t loop_code[] = {
    /* 0 */ I_ADDI(A0, ZERO, 1000),
    /* 4 */ enc_r(0x33, 0, 1, A1, A1, A0),     /* mul a1, a1, a0 */
    /* 8 */ I_ADDI(A1, A1, 7),
    /* 12 */ I_SD(A1, SP, 0),
    /* 16 */ I_LD(A2, SP, 0),
    /* 20 */ I_ADD(A1, A1, A2),
    /* 24 */ I_ADDI(A0, A0, -1),
    /* 28 */ I_BNE(A0, ZERO, -24),
    /* 32 */ I_ECALL,
};

START_TEST(rru_hart_executes_exactly_n_instructions)
{
    /* A single run, then the same program in random slices: same state,
     * and every slice retires exactly what it was asked. */
    th ref = th_new(loop_code, sizeof loop_code / 4);
    rru_stop st;
    rru_stop_reason r0 = rru_hart_execute(ref.h, UINT64_MAX, &st);
    ck_assert_msg(r0 == RRU_STOP_ECALL, "%s at 0x%llx (0x%llx)", rru_stop_name(r0),
                  (unsigned long long)st.pc, (unsigned long long)st.tval);
    const uint64_t total = st.insns;
    ck_assert_uint_eq(total, 1 + 1000 * 7 + 1);
    uint64_t seed = tu_seed(11 + (uint64_t)_i), rng = seed;
    th t = th_new(loop_code, sizeof loop_code / 4);
    uint64_t sum = 0;
    for (;;) {
        uint64_t n = 1 + tu_below(&rng, 40);
        rru_stop_reason r = rru_hart_execute(t.h, n, &st);
        sum += st.insns;
        if (r == RRU_STOP_ECALL)
            break;
        ck_assert_int_eq(r, RRU_STOP_LIMIT);
        ck_assert_msg(st.insns == n, "seed %llu: asked %llu, got %llu", (unsigned long long)seed,
                      (unsigned long long)n, (unsigned long long)st.insns);
        /* Interleave a save/load cycle like a replayer does. */
        rru_ctx tmp;
        rru_hart_save(t.h, &tmp);
        rru_hart_load(t.h, &tmp);
    }
    ck_assert_uint_eq(sum, total);
    ck_assert_int_eq(memcmp(ctx(&t)->x, ctx(&ref)->x, sizeof ctx(&t)->x[0] * 32), 0);
    ck_assert_uint_eq(ctx(&t)->pc, ctx(&ref)->pc);
    ck_assert_uint_eq(ctx(&t)->instret, total);
    th_free(&t);
    th_free(&ref);
}
END_TEST

/* ---- forwarding ---- */

/* Random straight-line code in which each instruction often reads the rd
 * of the one before it: the decoder then gives it a forwarding variant of
 * its body (rru_forward). A hart that runs it whole must end in the state
 * of one that runs it one instruction at a time (each instruction is then
 * the first of its block, which is never forwarded). */
enum { FW_BASE = S1 };
static const unsigned fw_regs[] = {T0, T1, T2, S0, A0, A1, A2, A3, A4, A5};

static unsigned fw_reg(uint64_t *rng, unsigned prev_rd, unsigned bias)
{
    if (prev_rd && tu_below(rng, bias) == 0)
        return prev_rd;
    if (tu_below(rng, 16) == 0)
        return ZERO;
    return fw_regs[tu_below(rng, sizeof fw_regs / sizeof fw_regs[0])];
}

/* Appends one instruction (or a short group) to code; returns the rd the
 * next instruction may read (0: none worth reading). */
static unsigned fw_emit(uint64_t *rng, uint32_t *code, size_t *n, unsigned prev)
{
    static const uint8_t rr[][3] = {   /* opcode, funct3, funct7 */
        {0x33, 0, 0}, {0x33, 0, 0x20}, {0x33, 1, 0}, {0x33, 2, 0}, {0x33, 3, 0}, {0x33, 4, 0},
        {0x33, 5, 0}, {0x33, 5, 0x20}, {0x33, 6, 0}, {0x33, 7, 0}, {0x3b, 0, 0}, {0x3b, 0, 0x20},
        {0x3b, 1, 0}, {0x3b, 5, 0}, {0x3b, 5, 0x20}, {0x33, 0, 1}, {0x33, 1, 1}, {0x33, 2, 1},
        {0x33, 3, 1}, {0x33, 4, 1}, {0x33, 5, 1}, {0x33, 6, 1}, {0x33, 7, 1}, {0x3b, 0, 1},
        {0x3b, 4, 1}, {0x3b, 5, 1}, {0x3b, 6, 1}, {0x3b, 7, 1},
    };
    unsigned rd = fw_reg(rng, 0, 1), rs1 = fw_reg(rng, prev, 2), rs2 = fw_reg(rng, prev, 3);
    int32_t imm = (int32_t)tu_below(rng, 4096) - 2048;
    switch (tu_below(rng, 10)) {
    case 0: case 1: case 2: {
        const uint8_t *o = rr[tu_below(rng, sizeof rr / sizeof rr[0])];
        code[(*n)++] = enc_r(o[0], o[1], o[2], rd, rs1, rs2);
        return rd;
    }
    case 3: case 4: {   /* register-immediate, shifts included */
        static const uint8_t f3[] = {0, 2, 3, 4, 6, 7, 1, 5};
        unsigned f = f3[tu_below(rng, 8)], w = tu_below(rng, 3) == 0;
        if (f == 1 || f == 5)   /* shifts; 0x400 makes srli srai */
            imm = (int32_t)tu_below(rng, w ? 32 : 64) | (f == 5 && tu_below(rng, 2) ? 0x400 : 0);
        else if (w)
            f = 0;   /* addiw: the only other W immediate op */
        code[(*n)++] = enc_i(w ? 0x1b : 0x13, f, rd, rs1, imm);
        return rd;
    }
    case 5:   /* lui, auipc */
        code[(*n)++] = enc_u(tu_below(rng, 2) ? 0x37 : 0x17, rd, tu_below(rng, 1u << 20));
        return rd;
    case 6: {   /* a load through a base the previous instruction made */
        static const uint8_t f3[] = {0, 1, 2, 3, 4, 5, 6};
        unsigned t = fw_reg(rng, 0, 1);
        if (t == ZERO)
            t = T0;
        code[(*n)++] = I_ADDI(t, FW_BASE, (int32_t)tu_below(rng, 512) - 256);
        code[(*n)++] = enc_i(0x03, f3[tu_below(rng, 7)], rd, t, (int32_t)tu_below(rng, 64) - 32);
        return rd;
    }
    case 7: {   /* a store: base or value from the previous instruction */
        unsigned t = fw_reg(rng, 0, 1);
        if (t == ZERO)
            t = T0;
        unsigned base = FW_BASE;
        if (tu_below(rng, 2)) {
            code[(*n)++] = I_ADDI(t, FW_BASE, (int32_t)tu_below(rng, 512) - 256);
            base = t;
        }
        code[(*n)++] = enc_s(0x23, tu_below(rng, 4), base, rs2, (int32_t)tu_below(rng, 64) - 32);
        /* rd of an S format is immediate bits: the next may read that
         * register, and gets x[those bits] as they stand. */
        return (code[*n - 1] >> 7) & 31;
    }
    case 8: {   /* a branch on the previous result, over one instruction */
        static const uint8_t f3[] = {0, 1, 4, 5, 6, 7};
        code[(*n)++] = enc_b(f3[tu_below(rng, 6)], rs1, rs2, 8);
        code[(*n)++] = I_ADDI(rd, rs1, 1);
        return rd;
    }
    default:   /* fmv.d.x: an FP rd, whose number the next may read as an x */
        code[(*n)++] = 0xf2000053u | rd << 7 | rs1 << 15;
        return rd;
    }
}

START_TEST(rru_hart_forwarding_matches_one_at_a_time)
{
    uint64_t seed = tu_seed(61 + (uint64_t)_i), rng = seed;
    uint32_t code[2100];
    size_t n = 0;
    unsigned prev = 0;
    while (n < 2000)
        prev = fw_emit(&rng, code, &n, prev);
    code[n++] = I_ECALL;
    th whole = th_new(code, n), step = th_new(code, n);
    for (unsigned i = 1; i < 32; i++)
        ctx(&whole)->x[i] = tu_rand(&rng) >> tu_below(&rng, 64);
    ctx(&whole)->x[FW_BASE] = TEST_DATA + TEST_DATA_LEN / 2;
    rru_hart_load(step.h, ctx(&whole));
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(whole.h, UINT64_MAX, &st), RRU_STOP_ECALL);
    const uint64_t total = st.insns;
    uint64_t sum = 0;
    for (;;) {
        rru_stop_reason r = rru_hart_execute(step.h, 1, &st);
        sum += st.insns;
        if (r == RRU_STOP_ECALL)
            break;
        ck_assert_int_eq(r, RRU_STOP_LIMIT);
    }
    ck_assert_uint_eq(sum, total);
    for (unsigned i = 0; i < 32; i++) {
        ck_assert_msg(ctx(&whole)->x[i] == ctx(&step)->x[i], "seed %llu: x%u 0x%llx, want 0x%llx",
                      (unsigned long long)seed, i, (unsigned long long)ctx(&whole)->x[i],
                      (unsigned long long)ctx(&step)->x[i]);
        ck_assert_uint_eq(ctx(&whole)->f[i], ctx(&step)->f[i]);
    }
    ck_assert_uint_eq(ctx(&whole)->pc, ctx(&step)->pc);
    static uint8_t a[TEST_DATA_LEN], b[TEST_DATA_LEN];
    rru_mem_read(whole.m, TEST_DATA, a, sizeof a);
    rru_mem_read(step.m, TEST_DATA, b, sizeof b);
    ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
    th_free(&whole);
    th_free(&step);
}
END_TEST

START_TEST(rru_decoder_forwards_the_previous_rd)
{
    /* add a0, a1, a2; xor a3, a0, a4: the xor takes rs1 from the add. */
    rru_insn p, d, plain;
    rru_decode(I_ADD(A0, A1, A2), TEST_CODE, &p);
    rru_decode(enc_r(0x33, 4, 0, A3, A0, A4), TEST_CODE + 4, &d);
    plain = d;
    rru_forward(&d, &p);
    ck_assert(d.fn != plain.fn);
    /* xor a3, a4, a5 reads nothing of the add: the plain body. */
    rru_decode(enc_r(0x33, 4, 0, A3, A4, A5), TEST_CODE + 4, &d);
    plain = d;
    rru_forward(&d, &p);
    ck_assert(d.fn == plain.fn);
}
END_TEST

typedef struct worker {
    rru_mem *m;
    unsigned id;
    rru_ctx ctx;
    uint64_t insns;
} worker;

/* A replay worker: its own hart, the shared memory, chunks of 97. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    rru_hart *h = rru_hart_new(w->m, w->id);
    for (;;) {
        rru_stop st;
        rru_hart_load(h, &w->ctx);
        rru_stop_reason r = rru_hart_execute(h, 97, &st);
        rru_hart_save(h, &w->ctx);
        w->insns += st.insns;
        if (r != RRU_STOP_LIMIT)
            break;
    }
    rru_hart_free(h);
    return NULL;
}

START_TEST(rru_harts_run_concurrently_on_shared_memory)
{
    /* Four host threads, one hart each, the same code pages, private
     * stacks: each ends exactly like a lone run. */
    th ref = th_new(loop_code, sizeof loop_code / 4);
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(ref.h, UINT64_MAX, &st), RRU_STOP_ECALL);
    rru_mem *m = test_mem(loop_code, sizeof loop_code / 4);
    worker w[4];
    pthread_t tid[4];
    for (unsigned i = 0; i < 4; i++) {
        w[i].m = m;
        w[i].id = i;
        w[i].insns = 0;
        rru_ctx_init(&w[i].ctx, TEST_CODE);
        w[i].ctx.x[SP] = TEST_DATA + 0x1000 * (i + 1);
        ck_assert_int_eq(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        ck_assert_uint_eq(w[i].insns, st.insns);
        ck_assert_uint_eq(w[i].ctx.x[A1], ctx(&ref)->x[A1]);
        ck_assert_uint_eq(w[i].ctx.pc, ctx(&ref)->pc);
    }
    rru_mem_free(m);
    th_free(&ref);
}
END_TEST

START_TEST(rru_hart_illegal_and_fetch_faults_stop_cleanly)
{
    uint32_t insns[] = { 0x00000000u, 0xffffffffu, 0x0000007fu, 0x12345677u };
    for (size_t k = 0; k < sizeof insns / sizeof insns[0]; k++) {
        uint32_t code[] = { I_ADDI(A0, ZERO, 1), insns[k], I_ECALL };
        th t = th_new(code, 3);
        rru_stop st;
        ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_ILLEGAL);
        ck_assert_uint_eq(st.pc, TEST_CODE + 4);
        ck_assert_uint_eq(st.insns, 1);
        ck_assert_int_eq(st.signal, SIGILL);
        th_free(&t);
    }
    /* Jumping to a data page (no X) or unmapped memory: SIGSEGV, cause 12. */
    uint64_t targets[] = { TEST_DATA, 0x9000000 };
    for (size_t k = 0; k < 2; k++) {
        uint32_t code[] = { enc_i(0x67, 0, ZERO, A0, 0) };
        th t = th_new(code, 1);
        ctx(&t)->x[A0] = targets[k];
        rru_stop st;
        ck_assert_int_eq(rru_hart_execute(t.h, 100, &st), RRU_STOP_FAULT);
        ck_assert_uint_eq(st.cause, 12);
        ck_assert_uint_eq(st.tval, targets[k]);
        ck_assert_uint_eq(st.insns, 1);
        th_free(&t);
    }
    /* A 32-bit instruction straddling into an unmapped page. */
    rru_mem *m = test_mem(NULL, 0);
    uint16_t half = 0x0513;   /* low half of addi a0, ... */
    rru_mem_write(m, TEST_CODE + TEST_CODE_LEN - 2, &half, 2);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    rru_ctx_init(&c, TEST_CODE + TEST_CODE_LEN - 2);
    rru_hart_load(h, &c);
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(h, 10, &st), RRU_STOP_FAULT);
    ck_assert_uint_eq(st.tval, TEST_CODE + TEST_CODE_LEN);
    rru_hart_free(h);
    rru_mem_free(m);
}
END_TEST

START_TEST(rru_hart_sees_new_code_after_fence_i_and_host_writes)
{
    /* RWX page: the program overwrites the instruction at +16 and runs it
     * twice: before the store the old code, after fence.i the new one. */
    rru_mem *m = rru_mem_new();
    rru_mem_map(m, TEST_CODE, RRU_PAGE_SIZE, RRU_PROT_R | RRU_PROT_W | RRU_PROT_X);
    uint32_t code[] = {
        /* 0 */ I_JAL(RA, 16),               /* call +16 (old: a0 += 1) */
        /* 4 */ I_SW(A1, T0, 0),             /* patch +16 with a0 += 100 */
        /* 8 */ I_FENCE_I,
        /* 12 */ I_JAL(RA, 4),               /* call +16 again */
        /* 16 */ I_ADDI(A0, A0, 1),
        /* 20 */ enc_i(0x67, 0, ZERO, RA, 0), /* ret */
    };
    rru_mem_write(m, TEST_CODE, code, sizeof code);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    rru_ctx_init(&c, TEST_CODE);
    c.x[T0] = TEST_CODE + 16;
    c.x[A1] = I_ADDI(A0, A0, 100);
    rru_hart_load(h, &c);
    rru_stop st;
    /* jal, addi, ret; then sw, fence.i, jal, addi (new code), ret */
    ck_assert_int_eq(rru_hart_execute(h, 3, &st), RRU_STOP_LIMIT);
    ck_assert_uint_eq(rru_hart_ctx(h)->x[A0], 1);
    ck_assert_int_eq(rru_hart_execute(h, 5, &st), RRU_STOP_LIMIT);
    ck_assert_uint_eq(rru_hart_ctx(h)->x[A0], 101);
    /* A host write (like riscv_flush_icache after a loader write) too. */
    uint32_t patch = I_ADDI(A0, A0, 1000);
    rru_mem_write(m, TEST_CODE + 16, &patch, 4);
    rru_hart_ctx(h)->pc = TEST_CODE + 16;
    ck_assert_int_eq(rru_hart_execute(h, 1, &st), RRU_STOP_LIMIT);
    ck_assert_uint_eq(rru_hart_ctx(h)->x[A0], 1101);
    rru_hart_free(h);
    rru_mem_free(m);
}
END_TEST

START_TEST(rru_hart_unmap_is_seen_by_the_next_execute)
{
    uint32_t code[] = { I_LD(A1, A0, 0), I_ECALL };
    th t = th_new(code, 2);
    ctx(&t)->x[A0] = TEST_DATA;
    rru_stop st;
    ck_assert_int_eq(rru_hart_execute(t.h, 10, &st), RRU_STOP_ECALL);
    rru_mem_unmap(t.m, TEST_DATA, RRU_PAGE_SIZE);
    ctx(&t)->pc = TEST_CODE;
    ck_assert_int_eq(rru_hart_execute(t.h, 10, &st), RRU_STOP_FAULT);
    rru_mem_map(t.m, TEST_DATA, RRU_PAGE_SIZE, RRU_PROT_R);
    uint64_t v = 77;
    rru_mem_write(t.m, TEST_DATA, &v, 8);
    ck_assert_int_eq(rru_hart_execute(t.h, 10, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(ctx(&t)->x[A1], 77);
    /* Code unmapped under the hart: a fetch fault, not stale blocks. */
    rru_mem_unmap(t.m, TEST_CODE, TEST_CODE_LEN);
    ctx(&t)->pc = TEST_CODE;
    ck_assert_int_eq(rru_hart_execute(t.h, 10, &st), RRU_STOP_FAULT);
    ck_assert_uint_eq(st.cause, 12);
    th_free(&t);
}
END_TEST

/* rru_ctx_hash (the CHECK record's register hash, so a format fact) is
 * the loop form its comment gives, written here as the reference: random
 * contexts agree, and flipping any one bit of any hashed field changes
 * the hash. */
static uint64_t ref_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t ref_ctx_hash(const rru_ctx *c)
{
    static const uint64_t k[4] = { 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full,
                                   0x165667b19e3779f9ull, 0xd6e8feb86659fd93ull };
    uint64_t h[4] = { 1, 2, 3, 4 };
    for (int r = 1; r < 32; r++) {
        uint64_t v = (h[r & 3] ^ c->x[r]) * k[r & 3];
        h[r & 3] = v << 29 | v >> 35;
    }
    for (int r = 0; r < 32; r++) {
        uint64_t v = (h[(r + 1) & 3] ^ c->f[r]) * k[(r + 2) & 3];
        h[(r + 1) & 3] = v << 31 | v >> 33;
    }
    return ref_mix(ref_mix(h[0] ^ ref_mix(h[1])) ^ ref_mix(h[2] + h[3]) ^
                   ((uint64_t)c->fflags << 32 | c->frm));
}

START_TEST(rru_isa_ctx_hash_is_the_documented_lanes)
{
    uint64_t seed = tu_seed(0xc7a5), rng = seed;
    rru_ctx c;
    for (int n = 0; n < 200; n++) {
        rru_ctx_init(&c, tu_rand(&rng));
        for (int r = 1; r < 32; r++)
            c.x[r] = tu_below(&rng, 4) ? tu_rand(&rng) : tu_below(&rng, 16);
        for (int r = 0; r < 32; r++)
            c.f[r] = tu_rand(&rng);
        c.fflags = (uint32_t)tu_below(&rng, 32);
        c.frm = (uint32_t)tu_below(&rng, 8);
        const uint64_t h = rru_ctx_hash(&c);
        ck_assert_msg(h == ref_ctx_hash(&c), "seed %#llx: context %d hashes to %016llx, want %016llx",
                      (unsigned long long)seed, n, (unsigned long long)h,
                      (unsigned long long)ref_ctx_hash(&c));
        /* one flipped bit of x1..x31, f0..f31, fflags or frm */
        unsigned w = (unsigned)tu_below(&rng, 65), b = (unsigned)tu_below(&rng, w == 64 ? 3 : 64);
        if (w < 31)
            c.x[1 + w] ^= 1ull << b;
        else if (w < 63)
            c.f[w - 31] ^= 1ull << b;
        else if (w == 63)
            c.fflags ^= 1u << (b % 5);
        else
            c.frm ^= 1u << b;
        ck_assert_msg(rru_ctx_hash(&c) != h && rru_ctx_hash(&c) == ref_ctx_hash(&c),
                      "seed %#llx: flipping bit %u of word %u", (unsigned long long)seed, b, w);
    }
}
END_TEST

TU_SUITE(rru_isa)
{
    Suite *s = suite_create("rru_isa");
    TCase *tc = tu_tcase(s, "table", 30);
    tcase_add_test(tc, rru_isa_rows_never_overlap);
    tcase_add_test(tc, rru_isa_every_row_decodes_to_itself);
    tc = tu_tcase(s, "classes", 30);
    tcase_add_loop_test(tc, rru_isa_integer_and_m_results, 0,
                        (int)(sizeof alu_cases / sizeof alu_cases[0]));
    tcase_add_test(tc, rru_isa_x0_stays_zero);
    tcase_add_test(tc, rru_isa_ctx_hash_is_the_documented_lanes);
    tcase_add_test(tc, rru_isa_loads_extend_and_stores_write_their_width);
    tcase_add_test(tc, rru_isa_misaligned_access_straddles_pages);
    tcase_add_test(tc, rru_isa_bad_accesses_stop_with_sigsegv);
    tcase_add_test(tc, rru_isa_jumps_link_and_branches_compare);
    tcase_add_test(tc, rru_isa_compressed_expand_to_their_base_instructions);
    tcase_add_test(tc, rru_isa_compressed_links_pc_plus_2_and_reserved_are_illegal);
    tcase_add_test(tc, rru_isa_lr_sc_and_amos);
    tcase_add_test(tc, rru_isa_sc_verdict_comes_from_the_environment);
    tcase_add_test(tc, rru_isa_misaligned_atomics_stop_with_sigbus);
    tcase_add_test(tc, rru_isa_general_accesses_do_not_nest_the_chain);
    tcase_add_test(tc, rru_isa_csrs_fcsr_fields_and_counters);
    tc = tu_tcase(s, "execution", 30);
    tcase_add_test(tc, rru_hart_ecall_retires_before_the_stop);
    tcase_add_loop_test(tc, rru_hart_executes_exactly_n_instructions, 0, 4);
    tcase_add_test(tc, rru_hart_illegal_and_fetch_faults_stop_cleanly);
    tcase_add_test(tc, rru_hart_sees_new_code_after_fence_i_and_host_writes);
    tcase_add_test(tc, rru_hart_unmap_is_seen_by_the_next_execute);
    tcase_add_test(tc, rru_harts_run_concurrently_on_shared_memory);
    tcase_add_loop_test(tc, rru_hart_forwarding_matches_one_at_a_time, 0, 8);
    tcase_add_test(tc, rru_decoder_forwards_the_previous_rd);
    return s;
}
